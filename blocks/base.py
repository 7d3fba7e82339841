"""What a block is: a group of variables with a conditionally conjugate complete conditional.

A model is an ordered list of blocks (``docs/guide/design.md``). Each block's complete
conditional is an exponential family whose parameters are (multi)linear in the other blocks'
*statistics*, so one conditional, written once, serves every driver (Blei, Kucukelbir &
McAuliffe 2017, section 4.3; Hoffman, Blei, Wang & Paisley 2013, section 2):

* Gibbs (:mod:`bayesvm.samplers.gibbs`): ``sample(conditional(stats), rng)`` with the other
  blocks' statistics taken at their current values;
* mean-field VB / CAVI (:mod:`bayesvm.vb.cavi`): ``q(block) = conditional(stats)`` with the
  other blocks' statistics taken as expectations under ``q``, ``expected_stats(q)``;
* EM / ECME (:mod:`bayesvm.samplers.em`): ``expected_stats`` of the conditional for the
  *latent* blocks (E-step), ``mode(conditional(stats))`` for the others (M- and CM-steps); a
  likelihood block may offer an exact M-step for the coefficients instead
  (``accelerated_m_step``), given the prior blocks' ``penalty``.

Which of these methods a block has says which drivers can use it: each driver family's
methods are a protocol of :mod:`bayesvm.blocks.capabilities`, which derives a model's
drivers from its blocks. This base holds only what every block shares and the defaults of
optional hooks (no moves, nothing recorded, no factor owned).

Statistics are what a block shows the others: a value's (Gibbs, EM) or an expectation's (VB)
of the same named quantities, so the conditional cannot tell which driver calls it.

Each factor of the joint density is *owned* by exactly one block: a prior block owns the
prior of the variables it governs and its own hyperprior, a likelihood block owns the data
factor. A block's term of the variational bound is the expectation of its factors plus its
entropy, so the bound is the sum of the blocks' terms; EM's objective is the sum of their
log densities with the latent blocks integrated out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext

import numpy as np

__all__ = ["Block", "Stats", "dispersed_start"]

Stats = Mapping[str, object]
"""The statistics of every block visited so far, by block name."""


class Block:
    """One group of variables of a model and its complete conditional.

    Attributes
    ----------
    name : str
        Key of the block's statistics in the drivers' state.
    latent : bool
        An augmentation variable that EM integrates out (its E-step takes expectations)
        rather than maximises over.
    learned : bool
        A hyperparameter with a prior of its own: EM over a model with such a block is
        Polson-Scott's ECME (its CM-step maximises over it).
    var_names : tuple of str
        Posterior variables the block reports (``record`` / ``draw_q`` keys).
    dims : dict
        Dimensions of each reported variable (scalars omitted).
    """

    name: str = ""
    latent: bool = False
    learned: bool = False
    var_names: tuple[str, ...] = ()
    dims: dict = {}
    #: Where each reported variable lives, for those not free on the real line: ``"positive"``,
    #: ``"covariance"`` (symmetric positive definite), ``"binary"`` (0/1) or ``"derived"`` (a
    #: function of the others, e.g. ``u = gamma v``). The model's mode masses
    #: (:mod:`bayesvm.checks.mode_mass`) integrate over the others in unconstrained
    #: coordinates.
    supports: dict = {}
    #: A prior block whose scale the coefficient block's Gibbs sweep also redraws in the
    #: ancillary parameterisation (:class:`~bayesvm.blocks.interweaving.ScaleInterweaving`).
    interweave: bool = False

    # -- Gibbs (a GibbsBlock: ``conditional``, ``sample``) -----------------------------------
    def initial_value(self, stats: Stats, rng: np.random.Generator):
        """Statistics of a dispersed starting value of a
        :class:`~bayesvm.blocks.capabilities.GibbsBlock` (default: a draw from its
        conditional).
        """
        return self.sample(self.conditional(stats), rng)

    def sample_step(self, params, rng: np.random.Generator):
        """``(statistics, info)`` of the Gibbs sweep's update of the block: :meth:`sample`'s
        draw and no info, unless the update is a Metropolis-Hastings step whose ``info``
        reports its acceptance (kept in ``sample_stats`` like a jump step's).
        """
        return self.sample(params, rng), {}

    def record(self, stats) -> dict[str, np.ndarray]:
        """The reported posterior variables at a value (Gibbs draws, EM mode)."""
        return {}

    def sample_stats(self, stats) -> dict[str, float]:
        """Statistics of a sampler's state kept per draw (``sample_stats``), e.g. a model size."""
        return {}

    def gibbs_moves(self, blocks: Mapping[str, Block]) -> list:
        """Further updates a Gibbs sweep makes right after this block's draw (none here).

        A move has ``update(stats, rng) -> dict``, the statistics it changes by block name,
        leaves the posterior invariant, and names in ``stale`` the block whose value it has
        integrated out and left behind (None if none): the sweep must visit that block next.
        ``blocks`` are the model's blocks by name.
        """
        return []

    # -- reversible jump (a JumpBlock: ``jump_step``) ----------------------------------------
    def jump_moves(self, blocks: Mapping[str, Block]) -> list:
        """Further moves a reversible-jump sweep makes right after a
        :class:`~bayesvm.blocks.capabilities.JumpBlock`'s ``jump_step`` (none
        here), each with ``step(stats, rng) -> (statistics it changes by block name, info)``
        and leaving the posterior invariant; ``blocks`` are the model's blocks by name.
        """
        return []

    # -- VB (a MeanFieldBlock: ``conditional``, ``expected_stats``; a VBStartBlock:
    # ``initial_stats``; a QDensityBlock: ``q_log_density``) --------------------------------
    #: Alternative starting points of the ascent (VB keeps the one with the larger bound).
    starts: tuple = (None,)

    def subsample_stats(self, params, stats: Stats, fraction: float):
        """Statistics on all rows from ``q = params`` fitted to a subsample of them (a
        ``fraction`` of the rows), given the other blocks' statistics so transferred (those
        before this block): the start of VB on all rows (:func:`bayesvm.vb.cavi.fit_vb`).

        ``q``'s expectations, which is right for a block whose ``q`` does not grow with the
        rows (a hyperparameter); a block with a variable per row or a design overrides it.
        """
        return self.expected_stats(params)

    def bound_term(self, params, stats: Stats) -> float:
        """Expectation of the factors the block owns plus its entropy (0 if it owns none)."""
        return 0.0

    def draw_q(self, params, rng: np.random.Generator, size: int) -> dict[str, np.ndarray]:
        """``size`` draws of the reported variables from ``q``."""
        return {}

    def q_moments(self, params) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Exact mean and sd of each reported variable under ``q = params``, where ``q``'s
        family gives them in closed form (an sd is infinite where the variance does not
        exist); variables left out are summarised from :meth:`draw_q`'s draws.
        """
        return {}

    def variational(self, params) -> dict[str, tuple[list[str], object]]:
        """``q``'s parameters for the ``variational`` group, as ``name: (dims, value)``."""
        return {}

    def variational_coords(self) -> dict:
        """Coordinates of dimensions :meth:`variational` adds beyond the model's."""
        return {}

    # -- EM (a ModeBlock: ``conditional``, ``mode``; a PenaltyBlock, an ExactMStepBlock) ----
    def log_density(self, stats: Stats) -> float:
        """Log of the factors the block owns at the current values (latent blocks: with
        themselves integrated out), up to a constant. EM's objective is the sum; with
        :meth:`log_jacobian` it is also the model's density
        (:meth:`~bayesvm.models.BlockModel.log_density`).
        """
        return 0.0

    def mode_stats(self, stats: Stats) -> dict[str, int]:
        """Counts that describe a mode, reported in EM's ``sample_stats``."""
        return {}

    # -- the model's density (a PointBlock: ``point_stats``) --------------------------------
    def batched(self, points: Sequence[Mapping[str, np.ndarray]]) -> AbstractContextManager:
        """A context in which :meth:`point_stats` at each of ``points`` may reuse work done for
        all of them at once (:meth:`bayesvm.models.BlockModel.log_densities`): none here.
        """
        return nullcontext()

    def log_jacobian(self, stats: Stats) -> float:
        """``log |dm / dr|`` from the reported variables ``r`` to the parameterisation ``m`` in
        which :meth:`log_density` is written (the one EM's CM-step maximises over), at the
        current values: 0 where they coincide. ``log_density + log_jacobian`` is the density
        of the reported variables.
        """
        return 0.0

    def pymc_log_jacobian(self, values: Mapping[str, np.ndarray]) -> float:
        """``log`` of the density of the block's variables in :meth:`to_pymc` over the density
        of its reported variables, up to a constant, at PyMC's ``values`` (each free
        variable, untransformed, and each deterministic, by name): the change of variables'
        Jacobian and the density of any variable PyMC adds. 0 where PyMC declares the
        reported variables themselves, or a constant map of them.
        """
        return 0.0

    def pymc_values(self, point: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The values of the block's variables in :meth:`to_pymc` at the canonical values
        ``point`` (a start for NUTS): its reported variables, by default; PyMC ignores those
        it computes rather than declares (a start the block cannot map is PyMC's own).
        """
        return {name: point[name] for name in self.var_names if name in point}

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """Declare the block's statements in the current PyMC model, reading and adding to
        ``variables`` (blocks that PyMC integrates out, such as augmentations, declare
        nothing).
        """


def dispersed_start(blocks, rng: np.random.Generator) -> dict:
    """Every block's statistics at a dispersed starting value, in visiting order
    (:meth:`Block.initial_value`): the start of a Gibbs chain, of a NUTS chain
    (:func:`bayesvm.samplers.nuts.chain_starts`) and of VB's dispersed ascents.
    """
    stats: dict = {}
    for block in blocks:
        stats[block.name] = block.initial_value(stats, rng)
    return stats
