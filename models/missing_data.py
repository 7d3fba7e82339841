"""Bayesian SVM with missing predictor values (Luts-Ormerod 2014, section 3.3).

The penalised SVM of section 3.1 example 1 (:meth:`MixedSVM.penalized
<bayesvm.models.MixedSVM.penalized>`): ``f_i = beta + d_i^T u``, ``beta ~ N(0, sigma2_beta)``,
``u | sigma2_u ~ N(0, sigma2_u I)``, ``sigma2_u ~ IG(A_u, B_u)``; and an imputation model for
the rows of ``D``: ``d_i ~ N(mu_x, Sigma_x)``, ``mu_x ~ N(0, sigma2_mu I)``, ``Sigma_x ~
IW(Psi, nu)``, with the paper's defaults ``sigma2_mu = 1e8``, ``Psi = 0.01 I``, ``nu = 3``. Values
are missing completely at random (the paper's assumption; at random given the observed
columns works the same way, the mechanism being ignorable).

The model is its blocks: the coefficients on the completed design
(:class:`~bayesvm.blocks.missing_cells.ImputedCoefficients`), the missing cells ``x_mis``
(:class:`~bayesvm.blocks.missing_cells.MissingCells`), the hinge augmentation, ``mu_x`` and
``Sigma_x`` (:mod:`bayesvm.blocks.imputation_model`) and the priors of ``beta`` and ``u``,
visited in the order of Algorithm 4. Methods: ``"vb"`` (Algorithm 4), ``"gibbs"`` (Appendix
C) and ``"nuts"`` (PyMC, the missing cells as free variables).

``likelihood="normalized"`` replaces the hinge pseudo-likelihood ``exp(-2 (1 - y_i f_i)_+)`` by
the proper ``p(y_i | f_i) = exp(-2 (1 - y_i f_i)_+) / Z(f_i)`` with ``Z(f) = exp(-2 (1 - f)_+)
+ exp(-2 (1 + f)_+)`` (:mod:`bayesvm.blocks.normalized_hinge`). The unnormalised hinge rewards
``|f|`` away from 0 in every row, by up to ``e^2 / 2``, whatever its label; where ``f`` depends
on imputed cells the imputation collects that reward and inflates the imputed columns'
coefficients (on the cardiac data a dominant second mode with the log-cholesterol coefficient
near 0.735, against 0.099 with the normalised likelihood and 0.098 on the complete cases).
Methods then: ``"gibbs"`` (the hinge's draws corrected by Metropolis-Hastings) and ``"nuts"``.

Prediction integrates the missing part of a new row out: given a posterior draw, ``d_M |
d_O ~ N(mu_M + Sigma_MO Sigma_OO^-1 (d_O - mu_O), Sigma_MM - Sigma_MO Sigma_OO^-1 Sigma_OM)``
(the new row's label is unknown, so its hinge factor does not enter), and ``f`` is averaged
over the draws (the paper predicts complete rows only, by ``sign(c_i^T mu_q(beta, u))``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bayesvm.blocks import HingeAugmentation
from bayesvm.blocks.design import DenseDesign
from bayesvm.blocks.imputation_model import ImputationCovariance, ImputationMean
from bayesvm.blocks.missing_cells import (
    ImputedCoefficients,
    MissingCells,
    imputation_conditionals,
    mean_filled,
    missing_patterns,
)
from bayesvm.blocks.normalized_hinge import NormalizedCells, NormalizedCoefficients, NormalizedHinge
from bayesvm.models.linear_predictor import LinearPredictorSVM, frame_to_arrays
from bayesvm.models.links import class_probabilities
from bayesvm.models.mixed_svm import MixedSVM
from bayesvm.models.penalties import LearnedGaussian
from bayesvm.models.validation import (
    as_design,
    check_positive_finite,
    design_and_names,
    encode_labels,
)

__all__ = ["MissingDataSVM", "LIKELIHOODS"]

#: The hinge pseudo-likelihood (Luts-Ormerod's) or the likelihood normalised over the labels.
LIKELIHOODS = ("hinge", "normalized")


@dataclass(frozen=True, eq=False)
class MissingDataSVM(LinearPredictorSVM):
    """Penalised linear Bayesian SVM whose predictors may be missing (NaN).

    Build it with :meth:`from_arrays` or :meth:`from_frame`. ``Z`` holds the predictors ``D``
    with NaN where missing; ``likelihood`` is one of :data:`LIKELIHOODS`.
    """

    sigma2_mu: float = 1e8
    psi: np.ndarray | None = None
    nu: float = 3.0
    likelihood: str = "hinge"

    def __post_init__(self):
        if self.likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {LIKELIHOODS}; got {self.likelihood!r}")
        super().__post_init__()

    @classmethod
    def from_arrays(
        cls,
        D,
        y,
        *,
        sigma2_beta: float = 1e8,
        A_u: float = 0.01,
        B_u: float = 0.01,
        sigma2_mu: float = 1e8,
        psi=None,
        nu: float = 3.0,
        likelihood: str = "hinge",
        feature_names=None,
        positive_class=None,
    ) -> MissingDataSVM:
        """Section 3.3's model on predictors ``D`` (NaN where missing) and labels ``y``.

        Parameters
        ----------
        D : array-like of shape (n_samples, n_features)
            Predictors, NaN where missing: any pattern, rows with every value missing
            included; each column needs at least one observed value.
        y : array-like of shape (n_samples,)
            Two classes (complete).
        sigma2_beta, A_u, B_u : float
            As :meth:`MixedSVM.penalized <bayesvm.models.MixedSVM.penalized>` (section 3.1).
        sigma2_mu : float
            Prior variance of each entry of ``mu_x``.
        psi : array-like of shape (n_features, n_features), optional
            Scale matrix of the inverse-Wishart prior on ``Sigma_x`` (default ``0.01 I``).
        nu : float
            Its degrees of freedom (``nu <= n_features - 1`` makes it improper, as the paper's
            ``nu = 3`` with 4 predictors: the posterior is still proper, as long as ``nu +
            n_samples > n_features - 1``, which is checked).
        likelihood : {"hinge", "normalized"}
            ``"hinge"``: the paper's pseudo-likelihood ``exp(-2 (1 - y f)_+)`` (methods VB,
            Gibbs, NUTS). ``"normalized"``: ``exp(-2 (1 - y f)_+) / Z(f)``, a proper
            likelihood of the labels (Gibbs with a Metropolis-Hastings correction, NUTS), which
            does not inflate the imputed columns' coefficients (module docstring).
        feature_names : sequence of str, optional
            Names of the columns of ``D`` (default: a data frame's column names, else
            ``x0, x1, ...``).
        positive_class : optional
            The label coded +1.
        """
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {LIKELIHOODS}; got {likelihood!r}")
        D, names = design_and_names(D, feature_names, name="D", missing=True)
        n_samples, n_features = D.shape
        if n_samples < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={n_samples}")
        empty = [names[j] for j in np.flatnonzero(np.isnan(D).all(axis=0))]
        if empty:
            raise ValueError(
                f"columns {empty} have no observed value: nothing identifies their imputation"
            )
        y_pm, classes = encode_labels(y, n_samples, positive_class)
        check_positive_finite(sigma2_beta=sigma2_beta, A_u=A_u, B_u=B_u, sigma2_mu=sigma2_mu, nu=nu)
        if nu + n_samples <= n_features - 1:
            raise ValueError(
                f"MissingDataSVM needs nu + n_samples > n_features - 1: Sigma_x's conditional is "
                f"an inverse Wishart with nu + n_samples degrees of freedom, proper only above "
                f"n_features - 1; got nu = {nu:g}, n_samples = {n_samples}, n_features = "
                f"{n_features}: give more rows, fewer features or nu > {n_features - 1 - n_samples}"
            )
        psi = 0.01 * np.eye(n_features) if psi is None else _check_scale_matrix(psi, n_features)
        return cls(
            X=np.ones((n_samples, 1)),
            Z=D,
            y=y_pm,
            classes=classes,
            fixed_names=["intercept"],
            effect_names=names,
            penalty=LearnedGaussian(scale=np.ones(n_features), shape=float(A_u), rate=float(B_u)),
            sigma2_beta=float(sigma2_beta),
            sigma2_mu=float(sigma2_mu),
            psi=psi,
            nu=float(nu),
            likelihood=likelihood,
        )

    @classmethod
    def from_frame(cls, df, target: str, features=None, **kwargs) -> MissingDataSVM:
        """:meth:`from_arrays` on a data frame's ``features`` (default: all but ``target``);
        missing values (NaN, None) in the features are imputed, the target must be complete.
        """
        D, y, names = frame_to_arrays(df, target, features)
        return cls.from_arrays(D, y, feature_names=names, **kwargs)

    # -- structure --------------------------------------------------------------------------
    @cached_property
    def missing(self) -> np.ndarray:
        """Where ``D`` is missing (``n_samples x n_features``, True if missing)."""
        return np.isnan(self.Z)

    @cached_property
    def cell_labels(self) -> list[str]:
        """Coordinate of ``x_mis``: ``"row:feature"`` for each missing cell, row by row."""
        rows, columns = np.nonzero(self.missing)
        return [
            f"{row}:{self.effect_names[column]}" for row, column in zip(rows, columns, strict=True)
        ]

    @property
    def coords(self) -> dict[str, list]:
        """Coordinates: ``fixed``, ``effect`` (and ``effect_``, ``Sigma_x``'s second
        dimension), ``missing_cell``.
        """
        return {
            "fixed": list(self.fixed_names),
            "effect": list(self.effect_names),
            "effect_": list(self.effect_names),
            "missing_cell": self.cell_labels,
        }

    @cached_property
    def design_operator(self) -> DenseDesign:
        """``[1, D]`` with each missing cell at its column's observed mean: the start of the
        imputation, and the design the identifiability checks look at.
        """
        return DenseDesign(self.X, mean_filled(self.Z))

    def coefficient_block(self, segments: list, names: list):
        """``(beta, u)`` on the design completed by ``x_mis`` (under the normalised
        likelihood, its Gibbs draws corrected by Metropolis-Hastings).
        """
        block = ImputedCoefficients(
            self.design_operator, "x_mis", segments, likelihood="hinge", coefficient_names=names
        )
        return block if self.likelihood == "hinge" else NormalizedCoefficients(block)

    def data_blocks(self) -> list:
        """The missing cells, the likelihood (the hinge's augmentation, reading the predictor
        from the cells), ``mu_x`` and ``Sigma_x``: Algorithm 4's order.
        """
        cells = MissingCells(self.X, self.Z, segment_names=("beta", self.weight_name))
        if self.likelihood == "hinge":
            likelihood = HingeAugmentation(self.y, coefficients="x_mis")
        else:
            cells, likelihood = NormalizedCells(cells), NormalizedHinge(self.y, "x_mis")
        dims = ["effect", "effect_"]
        return [
            cells,
            likelihood,
            ImputationMean(self.Z, self.sigma2_mu, dim="effect"),
            ImputationCovariance(self.Z, self.psi, self.nu, dims=dims),
        ]

    def constant_data(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """``X``, ``Z`` (the predictors, NaN where missing) and each missing cell's row and
        column.
        """
        rows, columns = np.nonzero(self.missing)
        return {
            **super().constant_data(),
            "missing_row": (["missing_cell"], rows),
            "missing_column": (["missing_cell"], np.asarray(self.effect_names)[columns]),
        }

    # -- the masses of modes ----------------------------------------------------------------
    @property
    def mass_var_names(self) -> tuple[str, ...]:
        """Under the hinge, every variable but the cells, which :meth:`mass_log_density`
        integrates out.
        """
        if self.likelihood != "hinge":
            return self.var_names
        return tuple(name for name in self.var_names if name != "x_mis")

    def mass_log_density(self, point) -> float:
        """Under the hinge, the model's density with the missing cells integrated out in
        closed form (:meth:`~bayesvm.blocks.missing_cells.MissingCells.integrated_hinge`): a
        density of the few global variables, over which the masses of modes are estimated.
        """
        if self.likelihood != "hinge":
            return self.log_density(point)
        cells, correction = self.blocks[1].integrated_hinge(point, self.y)
        return self.log_density({**point, "x_mis": cells}) + correction

    # -- VB's second start -------------------------------------------------------------------
    def vb_start_models(self) -> list:
        """The complete-case start: VB's fit of the penalised SVM (section 3.1) to the rows
        with every predictor observed, mapped to this model by :meth:`complete_case_point`.

        From the paper's start VB reaches one optimum; where the imputed cells couple to the
        weights there can be another (on the full cardiac data, the complete-case fit lies in
        the basin of a second mode, with the log-cholesterol weight near 0, that the paper's
        start never reaches), and VB then weighs them (:mod:`bayesvm.vb.optima`). None under
        the normalised likelihood (no VB), without missing cells, or with too few complete
        rows of both classes to fit.
        """
        complete = ~self.missing.any(axis=1)
        y = self.y[complete]
        too_few = complete.sum() < self.Z.shape[1] + 2 or np.unique(y).size < 2
        if self.likelihood != "hinge" or complete.all() or too_few:
            return []
        penalty = self.penalty
        smaller = MixedSVM.penalized(
            self.Z[complete],
            y,
            sigma2_beta=self.sigma2_beta,
            A_u=penalty.shape,
            B_u=penalty.rate,
            positive_class=1,
        )
        return [(smaller, self.complete_case_point)]

    def complete_case_point(self, means: dict) -> dict:
        """A point of this model from the complete-case fit's ``means`` of ``beta``, ``u``
        and ``sigma2_u``: ``mu_x`` and ``Sigma_x`` the complete rows' mean and covariance
        (plus ``psi``, so that it is positive definite), and each missing cell its conditional
        mean given its row's observed cells under them (regression imputation; ``y`` unused).
        """
        complete = self.Z[~self.missing.any(axis=1)]
        mean = complete.mean(axis=0)
        covariance = np.atleast_2d(np.cov(complete, rowvar=False)) + self.psi
        cells = np.empty(int(self.missing.sum()))
        patterns = missing_patterns(self.missing)
        for pattern, imputed, _ in imputation_conditionals(
            self.Z, patterns, mean[None], covariance[None]
        ):
            cells[pattern.cells] = imputed[0]
        point = {name: means[name] for name in ("beta", "u", "sigma2_u")}
        return {**point, "x_mis": cells, "mu_x": mean, "Sigma_x": covariance}

    # -- predictions ------------------------------------------------------------------------
    def _new_rows(self, D_new) -> np.ndarray:
        D_new = as_design(D_new, "D", missing=True)
        if D_new.shape[1] != self.n_effects:
            raise ValueError(
                f"D has {D_new.shape[1]} features; the model was built with {self.n_effects}"
            )
        return D_new

    def predictor(self, X_new, theta, **kwargs) -> np.ndarray:
        """``f = beta + d^T u`` at complete new rows for ``theta`` of shape ``(..., K)``."""
        D_new = self._new_rows(X_new)
        if np.isnan(D_new).any():
            raise ValueError(
                "rows with missing values need the imputation model's draws: use "
                "fit.decision_function / fit.predict_proba"
            )
        return DenseDesign(np.ones((D_new.shape[0], 1)), D_new).predictor(theta)

    def decision_function(self, fit, X_new, **kwargs) -> np.ndarray:
        """Posterior mean of ``f``: exact for complete rows (``q``'s mean for VB, as the
        paper), averaged over up to 1000 draws of the missing part's conditional given the
        observed part otherwise (module docstring).
        """
        D_new = self._new_rows(X_new)
        theta = np.concatenate(fit.coefficient_means())
        f = theta[0] + np.where(np.isnan(D_new), 0.0, D_new) @ theta[1:]
        incomplete = np.isnan(D_new).any(axis=1)
        if incomplete.any():
            mean, _ = self._predictor_draws(fit, D_new[incomplete], 1000)
            f[incomplete] = mean.mean(axis=0)
        return f

    def predict_proba(self, fit, X_new, max_draws: int = 1000, **kwargs) -> np.ndarray:
        """The normalised pseudo-likelihood averaged over up to ``max_draws`` posterior draws,
        each with the new row's missing part drawn from its conditional.
        """
        D_new = self._new_rows(X_new)
        mean, sd = self._predictor_draws(fit, D_new, max_draws)
        f = mean + sd * np.random.default_rng(0).standard_normal(mean.shape)
        return class_probabilities(f)

    def training_predictor(self, fit) -> np.ndarray:
        """``f = beta + d_i^T u`` at the training rows for each posterior draw, with each
        row's missing cells at that draw's ``x_mis``: ``(draws, n)``.

        The cells are the posterior's, which condition on ``y_i`` too; :meth:`predict_proba`
        treats rows as new ones and draws their missing part from the imputation model given
        the observed part alone.
        """
        theta = fit.coefficient_draws()
        (cells,) = fit.draws(["x_mis"])
        rows, columns = np.nonzero(self.missing)
        observed = DenseDesign(self.X, np.where(self.missing, 0.0, self.Z))
        f = observed.predictor(theta)
        u = theta[:, self.n_fixed :]
        np.add.at(f.T, rows, (cells * u[:, columns]).T)
        return f

    def _predictor_draws(self, fit, D_new, max_draws) -> tuple[np.ndarray, np.ndarray]:
        """Per draw and row, the mean and sd of ``f`` given the draw and the observed part:
        ``beta + d_O^T u_O + u_M^T m`` and ``(u_M^T S u_M)^1/2`` with ``m``, ``S`` the
        conditional mean and covariance of ``d_M``; shape ``(draws, rows)`` each.
        """
        theta = fit.coefficient_draws(max_draws)
        mu, sigma = fit.draws(["mu_x", "Sigma_x"], max_draws)
        beta, u = theta[:, 0], theta[:, 1:]
        observed = np.where(np.isnan(D_new), 0.0, D_new)
        mean = beta[:, None] + u @ observed.T
        sd = np.zeros_like(mean)
        patterns = missing_patterns(np.isnan(D_new))
        for pattern, conditional_mean, conditional_cov in imputation_conditionals(
            D_new, patterns, mu, sigma
        ):
            M, rows = pattern.missing, pattern.rows
            u_m = u[:, M]
            mean[:, rows] += np.einsum("sm,srm->sr", u_m, conditional_mean)
            variance = np.einsum("sm,smk,sk->s", u_m, conditional_cov, u_m)
            sd[:, rows] = np.sqrt(np.maximum(variance, 0.0))[:, None]
        return mean, sd


def _check_scale_matrix(psi, n_features: int) -> np.ndarray:
    psi = np.asarray(psi, dtype=float)
    if psi.shape != (n_features, n_features):
        raise ValueError(f"psi must be {n_features} x {n_features}; got shape {psi.shape}")
    if not np.allclose(psi, psi.T) or np.linalg.eigvalsh(psi).min() <= 0:
        raise ValueError("psi must be symmetric positive definite")
    return psi
