"""Drugowitsch's regression weights and noise precision ``(w, tau)`` as one block.

Given the prior precisions ``A`` of the weights (``alpha I``, eq. 3; ``diag(alpha_i)`` with ARD,
eq. 24; or a fixed ``alpha``), the prior ``w | tau ~ N(0, (tau A)^-1)``, ``tau ~ Gam(a0, b0)``
is normal-gamma and conjugate to ``y_n ~ N(w^T x_n, 1/tau)`` (eq. 1-2), so the complete
conditional of ``(w, tau)`` is

    ``tau ~ Gam(a_N, b_N)``,  ``w | tau ~ N(w_N, V_N / tau)``,
    ``V_N^-1 = A + X^T X``,  ``w_N = V_N X^T y``,  ``a_N = a0 + N/2``,
    ``b_N = b0 + (y^T y - w_N^T V_N^-1 w_N) / 2``.

* Gibbs: the exact joint draw of ``(w, tau)`` given ``alpha``'s value, ``tau`` first (eq.
  7-10 / 27-30 with ``A`` in place of ``E(A)``);
* VB: ``Q(w, tau)`` is this conditional with ``A`` replaced by ``E(A)``: eq. 7-10 (shared
  ``alpha``), eq. 27-30 (ARD).

The data enter only through ``X^T X``, ``X^T y`` and ``y^T y`` (eq. 34-35), computed once.
The block shows the prior block the statistics of :class:`~bayesvm.blocks.CoefficientStats`
that a prior reads: ``square = E[tau w_i^2] = a_N / b_N w_Ni^2 + (V_N)_ii`` (``tau w_i^2`` at a
value) and ``log_scale = E log tau = psi(a_N) - log b_N`` (``log tau``), so that
:class:`~bayesvm.blocks.GammaPrecision`'s conditional is ``alpha``'s, eq. 11-13 / 31-32.
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

import numpy as np
from scipy.special import digamma, gammaln

from bayesvm.blocks.base import Block
from bayesvm.blocks.coefficients import LOG_2PI, whitened_log_density
from bayesvm.linalg import (
    cholesky_lower,
    cholesky_solve,
    inverse_diagonal,
    log_det_from_cholesky,
    triangular_solve,
)

__all__ = ["NormalGammaCoefficients", "NormalGammaConditional", "NormalGammaStats"]


class NormalGammaStats(NamedTuple):
    """What the block shows the prior block (the fields a prior reads of
    :class:`~bayesvm.blocks.CoefficientStats`), and its value.
    """

    mean: np.ndarray  # E[w] (the value for Gibbs)
    square: np.ndarray  # E[tau w_i^2]
    log_scale: float  # E log tau
    scale: float  # E[tau] (the value for Gibbs)


class NormalGammaConditional:
    """``tau ~ Gam(a_N, b_N)``, ``w | tau ~ N(w_N, V_N / tau)``, ``V_N^-1`` held by its lower
    Cholesky factor.
    """

    def __init__(self, factor, precision, mean, rate, prior_precision):
        self.factor = factor  # of V_N^-1
        self.precision = precision  # V_N^-1
        self.mean = mean  # w_N
        self.rate = rate  # b_N
        self.prior_precision = prior_precision  # dg(A) the conditional was formed with

    @cached_property
    def coefficient_variance(self) -> np.ndarray:
        """``dg(V_N)``."""
        return inverse_diagonal(self.factor)

    def covariance(self) -> np.ndarray:
        """``V_N`` (for storage and draws, not for the iterations)."""
        return cholesky_solve(self.factor, np.eye(self.factor.shape[0]))


class NormalGammaCoefficients(Block):
    """``(w, tau)`` of Drugowitsch's linear regression (section 2).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Inputs ``x_n``.
    y : ndarray of shape (n_samples,)
        Outputs.
    prior : FixedPrecision or GammaPrecision
        The block of the prior precisions ``A`` of ``w`` (given ``tau``): its ``precision``
        statistic enters ``V_N^-1``.
    a0, b0 : float
        ``tau ~ Gam(a0, b0)``.
    coefficient_names : list of str
        Coordinates of ``w``.
    dim : str
        Dimension of ``w``.
    """

    name = "w_tau"
    var_names = ("w", "tau")
    supports = {"tau": "positive"}

    def __init__(
        self, X, y, prior: Block, *, a0: float, b0: float, coefficient_names, dim="feature"
    ):
        self.X, self.y = X, y
        self.prior = prior
        self.a0, self.b0 = float(a0), float(b0)
        self.coefficient_names = list(coefficient_names)
        self.dim = dim
        self.dims = {"w": [dim]}
        self.gram, self.Xty, self.yty = X.T @ X, X.T @ y, float(y @ y)  # eq. 34-35
        n_samples, self.size = X.shape
        self.shape = self.a0 + n_samples / 2.0  # a_N, eq. 9
        # The terms of bound_term free of Q.
        self.bound_constant = (
            -0.5 * n_samples * LOG_2PI
            + self.a0 * np.log(self.b0)
            - gammaln(self.a0)
            + gammaln(self.shape)
            + self.shape
            + 0.5 * self.size * (1.0 + LOG_2PI)
        )

    # -- conditional ------------------------------------------------------------------------
    def conditional(self, stats) -> NormalGammaConditional:
        """``V_N^-1 = A + X^T X``, ``w_N = V_N X^T y``, ``b_N`` (eq. 7-10 / 27-30)."""
        prior_precision = stats[self.prior.name].precision
        precision = self.gram.copy()
        precision.flat[:: self.size + 1] += prior_precision  # the diagonal
        factor = cholesky_lower(precision)
        mean = cholesky_solve(factor, self.Xty)
        rate = self.b0 + 0.5 * (self.yty - mean @ precision @ mean)
        return NormalGammaConditional(factor, precision, mean, rate, prior_precision)

    @staticmethod
    def _at(w: np.ndarray, tau: float) -> NormalGammaStats:
        return NormalGammaStats(w, tau * w**2, float(np.log(tau)), tau)

    # -- Gibbs ------------------------------------------------------------------------------
    def initial_value(self, stats, rng) -> NormalGammaStats:
        """A dispersed start, ``w ~ N(0, I)`` and ``tau = 1``: only the prior's first draw
        reads it, the first sweep draws ``(w, tau)`` afresh.
        """
        return self._at(rng.standard_normal(self.size), 1.0)

    def sample(self, params: NormalGammaConditional, rng) -> NormalGammaStats:
        """``tau ~ Gam(a_N, b_N)``, then ``w ~ N(w_N, V_N / tau)`` through the factor."""
        tau = rng.gamma(self.shape, 1.0 / params.rate)
        noise = triangular_solve(params.factor, rng.standard_normal(self.size), transpose=True)
        return self._at(params.mean + noise / np.sqrt(tau), tau)

    def record(self, stats: NormalGammaStats) -> dict[str, np.ndarray]:
        """``w`` and ``tau``."""
        return {"w": stats.mean, "tau": stats.scale}

    # -- VB ---------------------------------------------------------------------------------
    def expected_stats(self, params: NormalGammaConditional) -> NormalGammaStats:
        """``E[tau w_i^2] = a_N / b_N w_Ni^2 + (V_N)_ii`` and ``E log tau``."""
        tau_mean = self.shape / params.rate
        return NormalGammaStats(
            params.mean,
            tau_mean * params.mean**2 + params.coefficient_variance,
            float(digamma(self.shape) - np.log(params.rate)),
            tau_mean,
        )

    def bound_term(self, params: NormalGammaConditional, stats) -> float:
        """``E log p(y | w, tau) + E log p(tau) - E log Q(w, tau)``.

        With ``E[tau (y_n - w^T x_n)^2] = a_N / b_N (y_n - w_N^T x_n)^2 + x_n^T V_N x_n`` and
        ``tr(X^T X V_N) = D - sum_i A_ii (V_N)_ii``, the ``E log tau`` terms of the three
        factors sum to ``-a_N log b_N - (D/2) E log tau``; the prior block's
        ``E log p(w | tau, alpha)`` adds ``(D/2) E log tau`` back, so that the total is
        Drugowitsch's eq. 22 (33 with ARD).
        """
        tau_mean = self.shape / params.rate
        w = params.mean
        residual = self.yty - 2.0 * w @ self.Xty + w @ self.gram @ w  # sum_n (y_n - w^T x_n)^2
        trace = self.size - params.prior_precision @ params.coefficient_variance
        log_tau_mean = digamma(self.shape) - np.log(params.rate)
        return float(
            self.bound_constant
            - 0.5 * (tau_mean * residual + trace)
            - self.b0 * tau_mean
            - self.shape * np.log(params.rate)
            - 0.5 * self.size * log_tau_mean
            - 0.5 * log_det_from_cholesky(params.factor)
        )

    def draw_q(self, params: NormalGammaConditional, rng, size: int) -> dict[str, np.ndarray]:
        """``tau ~ Gam(a_N, b_N)``, then ``w = w_N + V_N^1/2 z / sqrt(tau)``."""
        tau = rng.gamma(self.shape, 1.0 / params.rate, size=size)
        root = cholesky_lower(params.covariance())
        noise = rng.standard_normal((size, self.size)) @ root.T
        return {"w": params.mean + noise / np.sqrt(tau)[:, None], "tau": tau}

    def q_log_density(self, params: NormalGammaConditional, draws) -> np.ndarray:
        """``log Gam(tau | a_N, b_N) + log N(w | w_N, V_N / tau)`` (eq. 7-10) at the draws."""
        w, tau = np.asarray(draws["w"]), np.asarray(draws["tau"], dtype=float)
        log_tau = np.log(tau)
        a, b = self.shape, params.rate
        log_gamma = a * np.log(b) - gammaln(a) + (a - 1.0) * log_tau - b * tau
        whitened = np.sqrt(tau)[:, None] * ((w - params.mean) @ params.factor)
        log_det = self.size * log_tau + log_det_from_cholesky(params.factor)
        return log_gamma + whitened_log_density(whitened, log_det)

    def q_moments(self, params: NormalGammaConditional) -> dict:
        """``tau ~ Gam(a_N, b_N)``: mean ``a_N / b_N``, sd ``sqrt(a_N) / b_N``; ``w`` is a
        multivariate t with ``2 a_N`` degrees of freedom: mean ``w_N``, covariance ``V_N b_N /
        (a_N - 1)`` (infinite for ``a_N <= 1``).
        """
        a, b = self.shape, params.rate
        variance = np.diag(params.covariance()) * (b / (a - 1.0) if a > 1.0 else np.inf)
        return {"w": (params.mean, np.sqrt(variance)), "tau": (a / b, np.sqrt(a) / b)}

    def variational(self, params: NormalGammaConditional) -> dict:
        """``Q(w, tau)``'s parameters as ``vb_linear_fit.m`` returns them: ``w_mean`` (``w_N``),
        ``V``, ``invV``, ``logdetV``, ``an``, ``bn``.
        """
        dims = [self.dim, f"{self.dim}_"]
        return {
            "w_mean": ([self.dim], params.mean),
            "V": (dims, params.covariance()),
            "invV": (dims, params.precision),
            "logdetV": ((), -log_det_from_cholesky(params.factor)),
            "an": ((), self.shape),
            "bn": ((), params.rate),
        }

    def variational_coords(self) -> dict:
        """Coordinates of the covariance's second dimension."""
        return {f"{self.dim}_": self.coefficient_names}

    # -- the model's density -----------------------------------------------------------------
    def point_stats(self, point, stats) -> NormalGammaStats:
        """Statistics at ``(w, tau)``."""
        return self._at(np.asarray(point["w"]), float(point["tau"]))

    def log_density(self, stats) -> float:
        """``log N(y | X w, 1/tau) + log Gam(tau | a0, b0)`` (eq. 1-2), up to a constant;
        the prior block owns ``w``'s factor.
        """
        values = stats[self.name]
        w, tau = values.mean, values.scale
        residual = self.yty - 2.0 * w @ self.Xty + w @ self.gram @ w
        return float((self.shape - 1.0) * values.log_scale - self.b0 * tau - 0.5 * tau * residual)

    def simulate_response(self, stats, rng: np.random.Generator) -> np.ndarray:
        """Outputs drawn given ``(w, tau)`` in ``stats``: ``y_n ~ N(w^T x_n, 1/tau)`` (eq. 1)."""
        values = stats[self.name]
        noise = rng.standard_normal(self.X.shape[0]) / np.sqrt(values.scale)
        return self.X @ values.mean + noise

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``tau ~ Gam(a0, b0)``, ``w`` with the prior block's prior scaled by
        ``tau^-1/2`` and ``y ~ N(X w, 1/tau)`` (eq. 1-4, 24-25).
        """
        import pymc as pm

        tau = pm.Gamma("tau", alpha=self.a0, beta=self.b0)
        noise_sd = 1.0 / pm.math.sqrt(tau)
        w = self.prior.declare_segment("w", self.dim, variables, noncentered, scale=noise_sd)
        variables["w"], variables["tau"] = w, tau
        pm.Normal("y", pm.math.dot(self.X, w), sigma=noise_sd, observed=self.y)
