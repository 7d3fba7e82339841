"""Bayesian linear regression with a normal-inverse-gamma prior (Drugowitsch 2019, section 2).

``y_n ~ N(w^T x_n, 1/tau)``, ``w | tau, alpha ~ N(0, (tau A)^-1)``, ``tau ~ Gam(a0, b0)``
(eq. 1-3) and either a shared ``alpha ~ Gam(c0, d0)`` (eq. 4, ``A = alpha I``) or, with ARD,
one ``alpha_i ~ Gam(c0, d0)`` per coefficient (eq. 24-25). Defaults ``a0 = 1e-2``,
``b0 = 1e-4``, ``c0 = 1e-2``, ``d0 = 1e-4`` (section 2.5, ``vb_linear_fit.m``). Gamma
distributions are shape/rate. A fixed ``alpha`` collapses the hyperprior: the posterior of
``(w, tau)`` is then the exact conjugate normal-inverse-gamma one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesvm.blocks import FixedPrecision, NormalGammaCoefficients
from bayesvm.models.feature_model import FeatureModel
from bayesvm.models.links import central_tails, draw_responses, gaussian_log_likelihood
from bayesvm.models.predictive import ResponsePredictions
from bayesvm.models.validation import check_positive_finite, design_and_names, real_response

__all__ = ["LinearRegression"]


@dataclass(frozen=True, eq=False)
class LinearRegression(ResponsePredictions, FeatureModel):
    """Linear regression with (optionally ARD) shrinkage hyperprior.

    Build it with :meth:`from_arrays`. Posterior variables: ``w`` (dim ``feature``), ``tau``
    (noise precision) and, unless ``alpha`` is fixed, ``alpha`` (scalar, or per feature with
    ARD). Fitted by VB (``vb_linear_fit.m`` / ``vb_linear_fit_ard.m``), exact blocked Gibbs
    and NUTS, all from the blocks of :meth:`build_blocks`.
    """

    ard: bool
    a0: float = 1e-2
    b0: float = 1e-4
    c0: float = 1e-2
    d0: float = 1e-4
    alpha: float | None = None

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        *,
        ard: bool = False,
        a0: float = 1e-2,
        b0: float = 1e-4,
        c0: float = 1e-2,
        d0: float = 1e-4,
        alpha: float | None = None,
        feature_names=None,
    ) -> LinearRegression:
        """Validate the data and build the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs ``x_n`` (add a column of ones for an intercept, as the paper does).
        y : array-like of shape (n_samples,)
            Real-valued outputs.
        ard : bool
            One shrinkage ``alpha_i`` per coefficient (section 2.4).
        a0, b0, c0, d0 : float
            ``tau ~ Gam(a0, b0)``, ``alpha ~ Gam(c0, d0)`` (section 2.5 defaults).
        alpha : float, optional
            Fix the shrinkage instead of learning it (the hyperprior collapsed).
        feature_names : sequence of str, optional
            Coordinates of ``w``; default ``x0, x1, ...``.
        """
        X, names = design_and_names(X, feature_names)
        n_samples, n_features = X.shape
        if n_samples < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={n_samples}")
        y = real_response(y, n_samples)
        if ard and alpha is not None:
            raise ValueError("a fixed alpha and ARD exclude each other")
        check_positive_finite(a0=a0, b0=b0, c0=c0, d0=d0, alpha=alpha)
        return cls(
            X=X,
            y=y,
            feature_names=names,
            ard=bool(ard),
            a0=float(a0),
            b0=float(b0),
            c0=float(c0),
            d0=float(d0),
            alpha=None if alpha is None else float(alpha),
        )

    #: Fit.coefficient_means and coefficient_draws: the weights of the linear predictor.
    coefficient_var_names = ("w",)

    def build_blocks(self) -> list:
        """``(w, tau)`` (:class:`~bayesvm.blocks.NormalGammaCoefficients`), then the prior
        precision ``alpha``: fixed, or ``Gam(c0, d0)`` shared or per weight (ARD). VB starts
        ``E(alpha)`` at its prior mean (the paper's start) and at 1 and keeps the larger bound
        (the bound can have a second maximum with every weight shrunk to zero).
        """
        D = self.n_features
        segment = slice(0, D)
        if self.alpha is not None:
            prior = FixedPrecision("alpha", np.full(D, self.alpha), "w_tau", segment)
        else:
            prior = self.shrinkage_block("w_tau", self.c0, self.d0, ("cn", "dn", "E_a"))
        w_tau = NormalGammaCoefficients(
            self.X, self.y, prior, a0=self.a0, b0=self.b0, coefficient_names=self.feature_names
        )
        return [w_tau, prior]

    # -- predictions ------------------------------------------------------------------------
    def predict(self, fit, X_new) -> np.ndarray:
        """Posterior predictive mean of ``y``: ``w_N^T x`` for VB, the draws' mean otherwise."""
        return fit.decision_function(X_new)

    def predictive(self, fit, X_new) -> tuple[np.ndarray, np.ndarray, float]:
        """Student-t predictive density of ``y`` at new inputs (eq. 23), for a VB fit.

        Returns
        -------
        mean, precision : ndarray of shape (n,)
            ``w_N^T x`` and ``(1 + x^T V_N x)^-1 a_N / b_N``.
        dof : float
            ``2 a_N``.
        """
        if not fit.is_variational:
            raise ValueError(
                f"the closed-form predictive needs the VB posterior; this fit is "
                f"{fit.method!r} (predictive_interval works for every method)"
            )
        X_new = self.design_for(X_new)
        q = fit.idata["variational"]
        V = q["V"].to_numpy()
        an, bn = float(q["an"]), float(q["bn"])
        spread = 1.0 + np.sum((X_new @ V) * X_new, axis=1)
        return X_new @ q["w_mean"].to_numpy(), an / bn / spread, 2.0 * an

    def predictive_interval(self, fit, X_new, prob: float = 0.95, seed=0) -> tuple[np.ndarray, ...]:
        """Central ``prob`` interval of the posterior predictive of ``y``, for every method.

        VB: quantiles of the Student-t of :meth:`predictive`. Samplers: quantiles of
        ``y = w^T x + e``, ``e ~ N(0, 1/tau)``, one ``e`` per posterior draw (seeded by
        ``seed``).

        Returns
        -------
        lower, upper : ndarray of shape (n,)
        """
        from scipy.stats import t as student_t

        tails = central_tails(prob)
        if fit.is_variational:
            mean, precision, dof = self.predictive(fit, X_new)
            lower, upper = (mean + student_t.ppf(q, dof) / np.sqrt(precision) for q in tails)
            return lower, upper
        y = self._response_draws(fit, self.design_for(X_new), np.random.default_rng(seed))
        lower, upper = np.quantile(y, tails, axis=0)
        return lower, upper

    def replicate(self, fit, rng: np.random.Generator) -> np.ndarray:
        """``y`` replicated at the training rows: ``w^T x_i + e_i``, ``e_i ~ N(0, 1/tau)``, for
        each posterior draw of ``(w, tau)`` (VB: the draws from ``q``); ``(draws, n)``.
        """
        return self._response_draws(fit, self.X, rng)

    def training_log_likelihood(self, fit) -> np.ndarray:
        """``log N(y_i | w^T x_i, 1/tau)`` for each posterior draw of ``(w, tau)`` (VB: the
        draws from ``q``): ``(draws, n)``.
        """
        w, tau = fit.draws(["w", "tau"])
        return gaussian_log_likelihood(self.y - w @ self.X.T, tau)

    @staticmethod
    def _response_draws(fit, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``y = w^T x + e``, ``e ~ N(0, 1/tau)`` at the rows of ``X``, one row of draws per
        posterior draw of ``(w, tau)``: ``(draws, rows)``.
        """
        w, tau = fit.draws(["w", "tau"])
        return draw_responses(w @ X.T, tau, rng)
