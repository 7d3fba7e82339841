"""What every model composed of blocks derives from them: variables, PyMC model, methods
(what a fit predicts is :mod:`bayesvm.models.predictive`'s).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import ExitStack
from functools import cached_property

import numpy as np

from bayesvm.blocks import PointBlock, block_drivers
from bayesvm.models.batches import MinibatchModel
from bayesvm.models.validation import prediction_inputs

__all__ = ["BlockModel"]


#: Bytes of the linear predictors :meth:`BlockModel.log_densities` computes at once.
BATCH_BYTES = 32 << 20


class BlockModel(ABC):
    """A model stated once as its blocks (:mod:`bayesvm.blocks`); every backend reads them.

    A subclass builds :meth:`build_blocks` (the first block is the coefficient block, the
    others in the order Gibbs and VB visit them) and sets its papers' stopping rules in
    ``vb_settings`` and chain lengths in ``gibbs_settings``.
    """

    #: VB stopping rule: bound increase below ``tol`` (relative to the bound's size when
    #: ``relative``), at most ``max_iter`` iterations. Luts-Ormerod (section 4) stop at an
    #: absolute 1e-10, which tightens with n (the bound grows with it): 1e-10 relative is the
    #: same rule for a bound of size 1.
    vb_settings = {"tol": 1e-10, "max_iter": 10_000, "relative": True}
    #: Gibbs chain length per chain: kept ``draws`` after ``tune`` burn-in.
    gibbs_settings = {"draws": 5000, "tune": 5000}
    #: Stochastic VI's rows per minibatch (``batch_size``), set by a model whose blocks
    #: support ``"svi"`` (:mod:`bayesvm.vb.svi`).
    svi_settings: dict = {}
    #: The :attr:`hyperparameters` that ``learn_hyperparameters=True`` of stochastic VI learns
    #: by ML-II (none unless the model has hyperparameters to learn).
    default_learned: tuple[str, ...] = ()

    @abstractmethod
    def build_blocks(self) -> list:
        """The model's blocks in visiting order (defined by each model)."""

    @cached_property
    def blocks(self) -> list:
        """The model's blocks, built once."""
        return self.build_blocks()

    def row_subset(self, rows: np.ndarray) -> BlockModel | None:
        """The same model of the given rows alone, or None where it cannot be restricted to
        rows; VB on many rows then starts from a fit to a subsample
        (:func:`bayesvm.vb.cavi.fit_vb`).
        """
        return None

    # -- stochastic VI (a model that streams minibatches: batches.MinibatchModel) -----------
    def report_blocks(self) -> list:
        """The blocks whose ``q`` a stochastic VI fit reports (a
        :class:`~bayesvm.blocks.NaturalGradientBlock`'s ``q`` does not depend on the rows):
        the model's blocks.
        """
        return self.blocks

    @property
    def hyperparameters(self) -> dict[str, float]:
        """Hyperparameters ML-II can learn, by name, at their values (none here)."""
        return {}

    def with_hyperparameters(self, **values: float) -> BlockModel:
        """The same model at other :attr:`hyperparameters` (ML-II's result)."""
        raise ValueError(f"{type(self).__name__} has no hyperparameters to learn")

    def transfer_natural(self, natural: dict, blocks, model: BlockModel) -> dict:
        """The natural parameters ``natural`` of the global blocks (``blocks``, this model's)
        as the same ``q`` in ``model``'s parameterisation (this model at other
        :attr:`hyperparameters`): unchanged here.
        """
        return natural

    # -- NUTS -------------------------------------------------------------------------------
    @property
    def pymc_specified(self) -> bool:
        """Whether :meth:`to_pymc` states the model, so that NUTS can fit it (every model
        here; not one whose variational bound is no model's posterior).
        """
        return True

    def identifiability_problems(self) -> list[str]:
        """What the data cannot determine, in words (none unless the model checks)."""
        return []

    def prediction_inputs(self, X_new, options: dict) -> tuple[object, dict]:
        """``(X_new, options)`` as the prediction methods take them: data frames become arrays
        (:func:`~bayesvm.models.validation.prediction_inputs`: through the formula of a model
        built by :func:`bayesvm.from_formula`, else by column name, :meth:`input_columns`).
        """
        return prediction_inputs(self, X_new, options)

    def input_columns(self) -> dict[str, list]:
        """The training columns each prediction argument takes by name from a data frame
        (:func:`~bayesvm.models.validation.table_inputs`): ``X_new``'s are the features the
        model was built on.
        """
        return {"X_new": list(self.feature_names)}

    @property
    def coefficients(self):
        """The coefficient block (the first)."""
        return self.blocks[0]

    @property
    def coefficient_var_names(self) -> tuple[str, ...]:
        """The variables of the linear predictor, in the order of its design's columns (what
        :meth:`~bayesvm.Fit.coefficient_means` returns): the coefficient block's.
        """
        return self.coefficients.var_names

    @property
    def drivers(self) -> list[str]:
        """The drivers the blocks support (:func:`~bayesvm.blocks.block_drivers`), without
        ``"svi"`` where the model does not stream minibatches.
        """
        drivers = block_drivers(self.blocks)
        if isinstance(self, MinibatchModel):
            return drivers
        return [driver for driver in drivers if driver != "svi"]

    @property
    def learned(self) -> bool:
        """Whether a block is a hyperparameter with its own prior (EM over it is ECME)."""
        return any(block.learned for block in self.blocks)

    @property
    def var_names(self) -> tuple[str, ...]:
        """Canonical posterior variables, identical for every backend."""
        return tuple(name for block in self.blocks for name in block.var_names)

    @property
    def dims(self) -> dict[str, list[str]]:
        """Dimensions of each posterior variable (scalars omitted)."""
        return {name: dims for block in self.blocks for name, dims in block.dims.items()}

    # -- the model's density ----------------------------------------------------------------
    def log_density(self, point) -> float:
        """The log joint density of the posterior's variables and the data at ``point``, up to
        a constant: one draw of the canonical variables by name (:attr:`var_names`, as
        ``idata.posterior`` holds them; a mapping, or an ``xarray.Dataset`` of one draw),
        augmentation variables integrated out, with respect to Lebesgue measure on the
        continuous variables as reported (a standard deviation, not its square) and counting
        measure on indicators.

        It is the sum of the blocks' :meth:`~bayesvm.blocks.Block.log_density` and
        :meth:`~bayesvm.blocks.Block.log_jacobian` at their statistics at ``point``
        (:meth:`~bayesvm.blocks.PointBlock.point_stats`), the factors EM maximises; :meth:`to_pymc`
        states the same density in PyMC's variables (shown equal up to a constant for every
        model by the test suite, with :meth:`pymc_log_jacobian`).
        """
        return self._log_density_of(self.point_values(point))

    def _log_density_of(self, values: dict[str, np.ndarray]) -> float:
        """:meth:`log_density` at values :meth:`point_values` has checked."""
        stats = self._stats_of(values)
        return float(
            sum(block.log_density(stats) + block.log_jacobian(stats) for block in self.blocks)
        )

    def log_densities(self, draws: dict[str, np.ndarray]) -> np.ndarray:
        """:meth:`log_density` of each draw of ``draws`` (name to an array whose first axis is
        the draw), in blocks of draws whose linear predictors take one matrix product each
        (:meth:`~bayesvm.blocks.Block.batched`), as many draws at a time as keep one linear
        predictor per draw within :data:`BATCH_BYTES`.
        """
        size = next(iter(draws.values())).shape[0]
        values = [
            self.point_values({name: value[s] for name, value in draws.items()})
            for s in range(size)
        ]
        per_block = max(1, BATCH_BYTES // (8 * self.n_samples))
        log_p = np.empty(size)
        for start in range(0, size, per_block):
            block_values = values[start : start + per_block]
            with ExitStack() as stack:
                for block in self.blocks:
                    stack.enter_context(block.batched(block_values))
                for s, point in enumerate(block_values, start):
                    log_p[s] = self._log_density_of(point)
        return log_p

    def stats_at(self, point, rng: np.random.Generator | None = None) -> dict:
        """Every block's statistics at the canonical values ``point``
        (:meth:`~bayesvm.blocks.PointBlock.point_stats`), in visiting order; an augmentation has
        none (None), or with ``rng`` a dispersed value given the others (a start of VB).
        """
        return self._stats_of(self.point_values(point), rng)

    def _stats_of(self, values: dict, rng: np.random.Generator | None = None) -> dict:
        """:meth:`stats_at` at values :meth:`point_values` has checked."""
        stats: dict = {}
        for block, at_point in self._point_blocks:
            stats[block.name] = block.point_stats(values, stats) if at_point else None
            if stats[block.name] is None and rng is not None:
                stats[block.name] = block.initial_value(stats, rng)
        return stats

    @cached_property
    def _point_blocks(self) -> list[tuple]:
        """Each block and whether it has statistics at a point (a
        :class:`~bayesvm.blocks.PointBlock`; the others are augmentations), checked once.
        """
        return [(block, isinstance(block, PointBlock)) for block in self.blocks]

    @property
    def supports(self) -> dict[str, str]:
        """Where each variable not free on the real line lives, by name (the blocks'
        :attr:`~bayesvm.blocks.Block.supports`).
        """
        return {name: kind for block in self.blocks for name, kind in block.supports.items()}

    @property
    def mass_var_names(self) -> tuple[str, ...]:
        """The variables :meth:`mass_log_density` is a density of (all but those derived from
        others), over which the masses of modes are estimated
        (:mod:`bayesvm.checks.mode_mass`).
        """
        supports = self.supports
        return tuple(name for name in self.var_names if supports.get(name) != "derived")

    def mass_log_density(self, point) -> float:
        """The density the masses of modes are estimated with: :meth:`log_density` here; a
        model that can integrate some variables out analytically leaves them out of
        :attr:`mass_var_names` and integrates them here.
        """
        return self.log_density(point)

    def vb_start_models(self) -> list:
        """Smaller models whose VB optimum gives VB a further default start
        (:func:`~bayesvm.vb.cavi.fit_vb`), each as ``(model, to_point)``, ``to_point`` mapping
        the smaller model's ``q`` means (name to array) to a point of this one; none here.
        """
        return []

    def point_values(self, point) -> dict[str, np.ndarray]:
        """``point``'s canonical variables as float arrays of their posterior shapes; a
        ``ValueError`` names any that is missing or has the wrong shape.
        """
        shapes = self._posterior_shapes
        missing = [name for name in shapes if name not in point]
        if missing:
            raise ValueError(
                f"the point lacks {', '.join(missing)} (variables: {', '.join(self.var_names)})"
            )
        values = {}
        for name, shape in shapes.items():
            value = np.asarray(point[name], dtype=float)
            if value.shape != shape:
                raise ValueError(f"{name} has shape {value.shape}; the model's is {shape}")
            values[name] = value
        return values

    @cached_property
    def _posterior_shapes(self) -> dict[str, tuple[int, ...]]:
        """Each canonical variable's shape in one draw, in :attr:`var_names`' order (read once:
        :meth:`point_values` runs for every draw a fit weighs).
        """
        coords, dims = self.coords, self.dims
        return {
            name: tuple(len(coords[dim]) for dim in dims.get(name, [])) for name in self.var_names
        }

    def pymc_log_jacobian(self, values) -> float:
        """``log`` of :meth:`to_pymc`'s density over :meth:`log_density`'s at PyMC's values
        (each free variable untransformed and each deterministic, by name), up to a constant:
        the sum of the blocks' :meth:`~bayesvm.blocks.Block.pymc_log_jacobian`.
        """
        return float(sum(block.pymc_log_jacobian(values) for block in self.pymc_blocks()))

    def pymc_values(self, point) -> dict[str, np.ndarray]:
        """The values of :meth:`to_pymc`'s variables at the canonical values ``point``, as
        far as the blocks map them (:meth:`~bayesvm.blocks.Block.pymc_values`).
        """
        values: dict = {}
        for block in self.pymc_blocks():
            values.update(block.pymc_values(point))
        return values

    def to_pymc(self, noncentered: bool = False):
        """The model as a PyMC specification, assembled from its blocks' statements.

        ``noncentered`` writes a learned Gaussian segment as ``sd * z`` with ``z ~ N(0, I)``,
        the parameterisation NUTS needs when the data say little about each coefficient
        (few rows per group of a random intercept).
        """
        from bayesvm._arviz import pymc as pm  # imported here: PyMC and ArviZ cost 1 s at startup

        with pm.Model(coords=self.coords) as model:
            variables: dict = {}
            for block in self.pymc_blocks():
                block.to_pymc(variables, noncentered)
        return model

    def pymc_blocks(self) -> list:
        """The blocks in the order their PyMC statements are declared (each may read what
        the ones before it declared): the blocks' order.
        """
        return self.blocks
