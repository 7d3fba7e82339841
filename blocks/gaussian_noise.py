"""The Gaussian likelihood ``y_i ~ N(f_i, 1 / tau)`` and its noise precision ``tau``.

Zhang, Dai, Wang & Jordan (2010) section 2.1: "in the regression problem, ``p(y | mu)`` is
usually normal and ``tau`` is the identity"; section 3.1 writes the response as ``u 1 + K_gamma
beta_gamma + eps``, ``eps ~ N(0, sigma^2 I)``, where the probit fixes ``sigma^2 = 1``. Here the
response is observed and ``tau = 1 / sigma^2`` is learned under ``tau ~ Ga(shape, rate)``, or
fixed. Given ``tau`` the likelihood is Gaussian in ``f`` with the weights ``tau`` and the
response ``tau y``, which is what the coefficient block reads (as from the probit's ``s`` with
unit weights); the coefficients' conditional is Zhang et al.'s eq. (9) with ``I`` replaced by
``tau I``. Given ``f``, ``tau`` is conjugate:

    ``tau | f ~ Ga(shape + n / 2, rate + sum_i (y_i - f_i)^2 / 2)``,

for Gibbs at the value of ``f`` and, for mean-field VB, with ``E[(y_i - f_i)^2] = (y_i - E
f_i)^2 + Var f_i`` (Bishop 2006 section 10.1.3; Drugowitsch 2019 eq. 9-10 without the weights'
share). The block owns the data factor and ``tau``'s prior.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import digamma, gammaln

from bayesvm.blocks.base import Block

__all__ = ["GaussianNoise", "NoiseStats"]

LOG_2PI = float(np.log(2.0 * np.pi))


class NoiseStats(NamedTuple):
    """What the block shows the coefficient block (as :class:`~bayesvm.blocks.hinge.
    LikelihoodStats`): the weights ``tau 1`` and the response ``tau y`` (``E tau`` under
    ``q``), and its own value.
    """

    weights: np.ndarray
    response: np.ndarray
    value: float  # tau, or E tau (VB)
    log_value: float  # log tau, or E log tau (VB)


class GaussianNoise(Block):
    """``y ~ N(f, I / tau)`` with ``tau ~ Ga(shape, rate)`` (shape/rate), or ``tau`` fixed.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        The observed responses.
    coefficients : str
        Name of the coefficient block whose ``f_mean`` / ``f_var`` the block reads.
    shape, rate : float
        The Gamma prior of ``tau``.
    precision : float, optional
        A known ``tau`` instead (the block then has no variables).
    """

    name = "gaussian"

    def __init__(
        self,
        y: np.ndarray,
        coefficients: str = "theta",
        *,
        shape: float,
        rate: float,
        precision: float | None = None,
    ):
        self.y = np.asarray(y, dtype=float)
        self.coefficients = coefficients
        self.shape, self.rate = float(shape), float(rate)
        self.precision = None if precision is None else float(precision)
        self.learned = precision is None
        self.var_names = ("tau",) if self.learned else ()
        self.supports = {"tau": "positive"} if self.learned else {}
        n_samples = self.y.shape[0]
        self.shape_q = self.shape + 0.5 * n_samples
        # The bound's terms free of q (see bound_term).
        self.bound_constant = (
            -0.5 * n_samples * LOG_2PI
            + self.shape * np.log(self.rate)
            - gammaln(self.shape)
            + gammaln(self.shape_q)
        )

    def _at(self, tau: float, log_tau: float) -> NoiseStats:
        weights = np.full(self.y.shape[0], tau)
        return NoiseStats(weights, tau * self.y, float(tau), float(log_tau))

    def at(self, tau: float) -> NoiseStats:
        """Statistics at the value ``tau``."""
        return self._at(tau, np.log(tau))

    def _squared_error(self, stats) -> float:
        """``sum_i E[(y_i - f_i)^2]`` at the coefficient block's statistics."""
        coefficients = stats[self.coefficients]
        residual = self.y - coefficients.f_mean
        return float(np.sum(residual**2 + coefficients.f_var))

    # -- conditional ------------------------------------------------------------------------
    def conditional(self, stats) -> float | None:
        """The rate ``rate + sum_i E[(y_i - f_i)^2] / 2`` of ``tau``'s Gamma (shape ``shape +
        n / 2``); None where ``tau`` is fixed.
        """
        if not self.learned:
            return None
        return self.rate + 0.5 * self._squared_error(stats)

    # -- Gibbs ------------------------------------------------------------------------------
    def sample(self, rate, rng) -> NoiseStats:
        """``tau ~ Ga(shape + n / 2, rate)``, or the fixed ``tau``."""
        if not self.learned:
            return self.at(self.precision)
        return self.at(rng.gamma(self.shape_q, 1.0 / rate))

    def record(self, stats: NoiseStats) -> dict[str, np.ndarray]:
        """``tau`` (learned only)."""
        return {"tau": stats.value} if self.learned else {}

    # -- VB ---------------------------------------------------------------------------------
    def initial_stats(self, stats, start=None) -> NoiseStats:
        """``E tau = 1 / Var(y)``, the noise precision where ``f`` explains nothing (or the
        fixed ``tau``).
        """
        if not self.learned:
            return self.at(self.precision)
        return self.at(1.0 / max(float(np.var(self.y)), np.finfo(float).tiny))

    def expected_stats(self, rate) -> NoiseStats:
        """``E tau = (shape + n / 2) / rate``, ``E log tau = psi(shape + n / 2) - log rate``."""
        if not self.learned:
            return self.at(self.precision)
        return self._at(self.shape_q / rate, digamma(self.shape_q) - np.log(rate))

    def bound_term(self, rate, stats) -> float:
        """``E log N(y | f, I / tau) + E log Ga(tau | shape, rate) - E log q(tau)``.

        With ``q(tau) = Ga(A_q, B_q)``, ``A_q = A + n / 2``, the ``E log tau`` terms cancel and
        the sum is ``-n log(2 pi) / 2 + A log B - log Gamma(A) + log Gamma(A_q) - A_q log B_q +
        E tau (B_q - B - S / 2)``, ``S = sum_i E[(y_i - f_i)^2]`` at the coefficients' current
        ``q``. A fixed ``tau``: ``n (log tau - log 2 pi) / 2 - tau S / 2``.
        """
        squared_error = self._squared_error(stats)
        if not self.learned:
            tau = self.precision
            return 0.5 * self.y.shape[0] * (np.log(tau) - LOG_2PI) - 0.5 * tau * squared_error
        tau_mean = self.shape_q / rate
        return float(
            self.bound_constant
            - self.shape_q * np.log(rate)
            + tau_mean * (rate - self.rate - 0.5 * squared_error)
        )

    def draw_q(self, rate, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``tau`` from ``q`` (learned only)."""
        if not self.learned:
            return {}
        return {"tau": rng.gamma(self.shape_q, 1.0 / rate, size=size)}

    def q_log_density(self, rate, draws) -> np.ndarray | float:
        """``log Ga(tau | shape + n / 2, rate)`` at the draws (0 where ``tau`` is fixed)."""
        if not self.learned:
            return 0.0
        tau = np.asarray(draws["tau"], dtype=float)
        a = self.shape_q
        return a * np.log(rate) - gammaln(a) + (a - 1.0) * np.log(tau) - rate * tau

    def q_moments(self, rate) -> dict:
        """``tau``'s mean ``A_q / B_q`` and sd ``sqrt(A_q) / B_q``."""
        if not self.learned:
            return {}
        return {"tau": (self.shape_q / rate, np.sqrt(self.shape_q) / rate)}

    def variational(self, rate) -> dict:
        """``q(tau)``'s shape and rate."""
        if not self.learned:
            return {}
        return {"tau_shape": ((), self.shape_q), "tau_rate": ((), rate)}

    # -- the model's density -----------------------------------------------------------------
    def point_stats(self, point, stats) -> NoiseStats:
        """Statistics at ``tau`` (or the fixed ``tau``)."""
        return self.at(float(point["tau"]) if self.learned else self.precision)

    def log_density(self, stats) -> float:
        """``log N(y | f, I / tau) + log Ga(tau | shape, rate)`` up to a constant (the prior
        only where ``tau`` is learned).
        """
        tau, log_tau = stats[self.name].value, stats[self.name].log_value
        residual = self.y - stats[self.coefficients].f_mean
        log_likelihood = 0.5 * self.y.shape[0] * log_tau - 0.5 * tau * float(residual @ residual)
        if not self.learned:
            return log_likelihood
        return log_likelihood + (self.shape - 1.0) * log_tau - self.rate * tau

    def simulate_response(self, stats, rng: np.random.Generator) -> np.ndarray:
        """Responses drawn given ``f`` and ``tau`` in ``stats``: ``y_i ~ N(f_i, 1 / tau)``."""
        f = stats[self.coefficients].f_mean
        return f + rng.standard_normal(f.shape) / np.sqrt(stats[self.name].value)

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``tau ~ Gamma(shape, rate)`` (unless fixed) and ``y ~ N(f, 1 / tau)``."""
        import pymc as pm

        if self.learned:
            tau = pm.Gamma("tau", alpha=self.shape, beta=self.rate)
            variables["tau"] = tau
            noise_sd = 1.0 / pm.math.sqrt(tau)
        else:
            noise_sd = 1.0 / np.sqrt(self.precision)
        pm.Normal("y", variables["f"], sigma=noise_sd, observed=self.y)
