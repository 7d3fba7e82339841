"""The structure shared by the linear Bayesian SVMs: ``f = X beta + Z u``.

Luts-Ormerod (2014) eq. (5): the hinge pseudo-likelihood ``exp(-2 sum_i (1 - y_i f_i)_+)``
(their eq. 2 doubled, so that the Polson-Scott augmentation of section 2.3 applies),
unpenalised coefficients ``beta ~ N(0, sigma2_beta I)`` and penalised coefficients ``u``
with one of the priors in :mod:`bayesvm.models.penalties`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from bayesvm.blocks import FixedPrecision, GaussianCoefficients, HingeAugmentation, Segment
from bayesvm.blocks.design import DenseDesign, GroupedDesign
from bayesvm.models.block_model import BlockModel
from bayesvm.models.identification import design_problems, is_separable, warn_if_not_identified
from bayesvm.models.links import class_probabilities, log_normalized_pseudo_likelihood
from bayesvm.models.penalties import Penalty
from bayesvm.models.predictive import ClassPredictions

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LinearPredictorSVM", "frame_to_arrays"]


@dataclass(frozen=True, eq=False)
class LinearPredictorSVM(ClassPredictions, BlockModel):
    """A Bayesian SVM whose linear predictor is ``X beta + Z u``.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_fixed)
        Design of the unpenalised coefficients ``beta`` (an intercept column at least).
    Z : ndarray of shape (n_samples, n_effects) or None
        Design of the penalised coefficients ``u``; None for a random intercept, whose
        ``Z`` is the indicator matrix of ``group_index``.
    y : ndarray of shape (n_samples,)
        Labels coded -1/+1.
    classes : ndarray of shape (2,)
        Original labels; ``classes[1]`` is coded +1.
    fixed_names, effect_names : list of str
        Coordinates of the ``fixed`` and effect dimensions.
    penalty : FixedGaussian, LearnedGaussian or Laplace
        Prior on ``u``.
    sigma2_beta : float
        Prior variance of each ``beta_j`` (Luts-Ormerod section 3.1 default 1e8).
    effect_dim : str
        Name of the dimension of ``u``: ``"effect"``, or ``"group"`` for a random intercept.
    group_index : ndarray of int, optional
        Group of each observation (random intercept, Luts-Ormerod section 3.1 example 2).
    """

    X: np.ndarray
    Z: np.ndarray | None
    y: np.ndarray
    classes: np.ndarray
    fixed_names: list
    effect_names: list
    penalty: Penalty
    sigma2_beta: float = 1e8
    effect_dim: str = "effect"
    group_index: np.ndarray | None = None

    #: Whether :meth:`row_subset` applies: the SVMs whose blocks carry a subsample's VB fit
    #: over to all rows (:meth:`~bayesvm.blocks.Block.subsample_stats`) set it.
    subsample_start: ClassVar[bool] = False

    def __post_init__(self):
        warn_if_not_identified(self.identifiability_problems(), type(self).__name__)

    def row_subset(self, rows: np.ndarray) -> LinearPredictorSVM | None:
        """The model of ``rows`` alone (a dense design only: a random intercept's groups
        would lose rows). It is built without :meth:`identifiability_problems` (a separability
        check costs a tenth of a VB fit at 1e4 x 100): only its fit's values matter.
        """
        if not self.subsample_start or self.group_index is not None:
            return None
        values = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        values.update(X=self.X[rows], Z=None if self.Z is None else self.Z[rows], y=self.y[rows])
        part = object.__new__(type(self))
        part.__dict__.update(values)  # frozen: the fields are set as __init__ would
        return part

    def identifiability_problems(self) -> list[str]:
        """What the data cannot determine, in words (:mod:`.identification`).

        Dense designs: constant columns beyond one (the intercept), collinear columns, and,
        when the penalty is learned, separable classes. Random intercepts: constant or
        collinear fixed effects, and a majority of groups with a single observation.
        """
        if self.group_index is not None:
            problems = design_problems(self.X, self.fixed_names)
            sizes = np.bincount(self.group_index, minlength=self.n_effects)
            singletons = int(np.sum(sizes == 1))
            if singletons > self.n_effects / 2:
                problems.append(
                    f"{singletons} of {self.n_effects} groups have a single observation: their "
                    "random intercepts are identified by the prior alone and sigma2_u only "
                    "weakly, so samplers wander and VB looks more certain than it is"
                )
            return problems
        problems = design_problems(self.design, [*self.fixed_names, *self.effect_names])
        learned = [name for block in self.blocks[1:] for name in block.var_names]
        if learned and is_separable(self.design, self.y):
            rows = self.n_samples <= self.n_coefficients
            problems.append(
                "the classes are separable"
                + (f" (n_samples={self.n_samples} <= {self.n_coefficients} coefficients)" * rows)
                + ": the hinge loss is zero for arbitrarily large weights, so the learned "
                f"{', '.join(learned)} is identified by its prior alone; samplers wander and VB "
                "looks more certain than it is (a fixed penalty, e.g. LinearSVM alpha=..., "
                "gives the classical SVM)"
            )
        return problems

    @property
    def n_samples(self) -> int:
        """Number of training observations."""
        return self.y.shape[0]

    @property
    def n_fixed(self) -> int:
        """Number of unpenalised coefficients ``beta``."""
        return self.X.shape[1]

    @property
    def n_effects(self) -> int:
        """Number of penalised coefficients ``u``."""
        return len(self.effect_names)

    @property
    def n_coefficients(self) -> int:
        """Size of ``(beta, u)``: the dimension of every linear solve."""
        return self.n_fixed + self.n_effects

    @property
    def flops_per_iteration(self) -> float:
        """Work of one iteration of every backend (sets BLAS threading)."""
        return self.design_operator.flops_per_iteration

    @property
    def coords(self) -> dict[str, list]:
        """Coordinates of the posterior dimensions."""
        return {"fixed": list(self.fixed_names), self.effect_dim: list(self.effect_names)}

    def build_blocks(self) -> list:
        """``theta = (beta, u)``, the hinge augmentation, the vague prior on ``beta`` and the
        penalty's blocks (:mod:`bayesvm.models.penalties`), in the order of Luts-Ormerod's
        Algorithm 2 and Polson-Scott's MCMC-SVM.
        """
        p, k = self.n_fixed, self.n_coefficients
        beta_prior = FixedPrecision(
            "beta_prior", np.full(p, 1.0 / self.sigma2_beta), "theta", slice(0, p)
        )
        weights = self.weight_name
        u_prior, penalty_blocks = self.penalty.blocks("theta", slice(p, k), self.effect_dim)
        names = [f"beta[{name}]" for name in self.fixed_names]
        names += [f"{weights}[{name}]" for name in self.effect_names]
        segments = [
            Segment("beta", "fixed", slice(0, p), beta_prior),
            Segment(weights, self.effect_dim, slice(p, k), u_prior),
        ]
        theta = self.coefficient_block(segments, names)
        return [theta, *self.data_blocks(), beta_prior, *penalty_blocks]

    def data_blocks(self) -> list:
        """The blocks visited between the coefficients and their priors: the hinge
        augmentation (a model with more latent data adds its blocks here).
        """
        return [HingeAugmentation(self.y)]

    #: Variable of the penalised segment of the coefficient block.
    weight_name = "u"

    def coefficient_block(self, segments: list, names: list):
        """The block of ``(beta, u)``: Gaussian coefficients on the design."""
        return GaussianCoefficients(
            self.design_operator, segments, likelihood="hinge", coefficient_names=names
        )

    @cached_property
    def design_operator(self) -> DenseDesign | GroupedDesign:
        """The training design ``C = [X, Z]`` with its structure (:mod:`.design`)."""
        if self.group_index is not None:
            return GroupedDesign(self.X, self.group_index, self.n_effects)
        return DenseDesign(self.X, self.Z)

    @cached_property
    def design(self) -> np.ndarray:
        """The full design ``C = [X, Z]`` of Luts-Ormerod Algorithm 2, as a dense matrix."""
        return self.design_operator.dense()

    def input_columns(self) -> dict[str, list]:
        """``X_new``'s columns by name: the penalised features ``effect_names``."""
        return {"X_new": list(self.effect_names)}

    def predictor(self, X_new, theta, **kwargs) -> np.ndarray:
        """``f = X beta + Z u`` at new inputs for ``theta`` of shape ``(..., K)``; keyword
        arguments (e.g. ``groups=``) go to the model's ``design_for(X_new, **kwargs)``, the
        design of new inputs (a model whose design is not fixed by the inputs overrides this
        method instead: the missing-data model).
        """
        return self.design_for(X_new, **kwargs).predictor(theta)

    def predict(self, fit, X_new, **kwargs) -> np.ndarray:
        """Class labels by the sign of the posterior mean of ``f`` (Luts-Ormerod section 4)."""
        positive = fit.decision_function(X_new, **kwargs) > 0
        return np.where(positive, self.classes[1], self.classes[0])

    def predict_proba(self, fit, X_new, max_draws: int = 1000, **kwargs) -> np.ndarray:
        """The normalised pseudo-likelihood (:func:`~bayesvm.models.links.
        normalized_pseudo_likelihood`) averaged over up to ``max_draws`` posterior draws.
        """
        f = self.predictor(X_new, fit.coefficient_draws(max_draws), **kwargs)
        return class_probabilities(f)

    def training_predictor(self, fit) -> np.ndarray:
        """``f = C theta`` at the training rows for each posterior draw: ``(draws, n)``."""
        return self.design_operator.predictor(fit.coefficient_draws())

    def training_log_probability(self, fit, labels) -> np.ndarray:
        """``log p(y_i = labels_i | f_i)`` for each posterior draw of ``f`` at the training
        rows: the hinge pseudo-likelihood normalised over the two labels, ``L(y) / (L(+1) +
        L(-1))`` (Polson-Scott section 2, the normalised ``L~_i`` after eq. 3; the predictive
        class probability of Sollich 2001), as :meth:`predict_proba` averages it.
        """
        return log_normalized_pseudo_likelihood(self.training_predictor(fit), labels)

    def constant_data(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """Arrays stored in the ``constant_data`` group of every fit."""
        data = {"X": (["obs_id", "fixed"], self.X)}
        if self.group_index is not None:
            data["group_index"] = (["obs_id"], self.group_index)
        else:
            data["Z"] = (["obs_id", self.effect_dim], self.Z)
        return data


def frame_to_arrays(df: pd.DataFrame, target: str, features=None):
    """Split a data frame into ``(X, y, feature_names)`` for a model constructor."""
    import pandas as pd  # imported here: pandas costs 0.1 s at startup

    if target not in df.columns:
        raise ValueError(f"target column {target!r} not in the data (columns: {list(df.columns)})")
    features = [c for c in df.columns if c != target] if features is None else list(features)
    missing = [c for c in features if c not in df.columns]
    if missing:
        raise ValueError(f"feature columns not in the data: {missing}")
    non_numeric = [c for c in features if not pd.api.types.is_numeric_dtype(df[c])]
    if non_numeric:
        raise ValueError(f"feature columns must be numeric; not numeric: {non_numeric}")
    return df[features].to_numpy(dtype=float, na_value=np.nan), df[target].to_numpy(), features
