"""Exact Gibbs sampler for Drugowitsch's linear regression (conjugate blocks).

Given ``alpha``, the prior of ``(w, tau)`` is normal-inverse-gamma and conjugate (eq. 3, 24),
so ``(w, tau) | alpha, y`` is drawn jointly and exactly: ``tau ~ Gam(a0 + N/2, b0 +
(y^T y - w_N^T V_N^-1 w_N) / 2)`` and ``w | tau ~ N(w_N, V_N / tau)`` with
``V_N^-1 = A + X^T X``, ``w_N = V_N X^T y`` (the updates of eq. 7-10 with ``A`` in place of
``E(A)``). Then ``alpha | w, tau ~ Gam(c0 + D/2, d0 + tau w^T w / 2)``, or per coefficient
``alpha_i ~ Gam(c0 + 1/2, d0 + tau w_i^2 / 2)`` with ARD (eq. 11-13, 31-32 without the
expectations). With ``alpha`` fixed the draws are independent draws from the exact posterior.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayesvm.drivers import run_mcmc
from bayesvm.linalg import cholesky_lower, cholesky_solve, triangular_solve
from bayesvm.models.linear_regression import LinearRegression
from bayesvm.registry import register
from bayesvm.results import Fit
from bayesvm.samplers.diagnostics import mcmc_fit

__all__ = ["LinearGibbsState", "make_linear_gibbs_kernel", "fit_linear_gibbs"]


class LinearGibbsState(NamedTuple):
    """Current values of the blocks."""

    w: np.ndarray
    tau: float
    alpha: np.ndarray  # shape (D,): equal entries without ARD


def make_linear_gibbs_kernel(model: LinearRegression):
    """Return ``(init, step)``; the sufficient statistics are computed once."""
    XtX, Xty, yty = model.sufficient_statistics
    N, D = model.n_samples, model.n_features
    shape_tau = model.a0 + N / 2.0
    shape_alpha = model.c0 + (0.5 if model.ard else D / 2.0)

    def draw_alpha(w: np.ndarray, tau: float, rng) -> np.ndarray:
        if model.alpha is not None:
            return np.full(D, model.alpha)
        if model.ard:
            return rng.gamma(shape_alpha, 1.0 / (model.d0 + 0.5 * tau * w**2))
        return np.full(D, rng.gamma(shape_alpha, 1.0 / (model.d0 + 0.5 * tau * (w @ w))))

    def init(rng) -> LinearGibbsState:
        """Start from ``alpha`` at its prior mean (fixed alpha: that value)."""
        alpha = model.alpha if model.alpha is not None else model.c0 / model.d0
        return LinearGibbsState(np.zeros(D), 1.0, np.full(D, alpha))

    def step(state: LinearGibbsState, rng) -> LinearGibbsState:
        precision = XtX.copy()
        precision[np.diag_indices(D)] += state.alpha
        factor = cholesky_lower(precision)
        w_mean = cholesky_solve(factor, Xty)
        rate = model.b0 + 0.5 * (yty - w_mean @ Xty)
        tau = rng.gamma(shape_tau, 1.0 / rate)
        w = w_mean + triangular_solve(factor, rng.standard_normal(D), transpose=True) / np.sqrt(tau)
        return LinearGibbsState(w, tau, draw_alpha(w, tau, rng))

    return init, step


def _supports(model) -> bool:
    return isinstance(model, LinearRegression)


@register("gibbs", _supports)
def fit_linear_gibbs(
    model: LinearRegression,
    *,
    draws: int = 2000,
    tune: int = 500,
    chains: int = 4,
    seed=None,
    progressbar: bool = True,
) -> Fit:
    """Fit by exact blocked Gibbs sampling.

    Parameters
    ----------
    draws, tune, chains : int
        Kept draws and warm-up per chain, and the number of chains.
    seed : int or numpy.random.Generator, optional
    progressbar : bool
    """
    init, step = make_linear_gibbs_kernel(model)

    def record(state: LinearGibbsState) -> dict[str, np.ndarray]:
        values = {"w": state.w, "tau": state.tau}
        if model.alpha is None:
            values["alpha"] = state.alpha if model.ard else state.alpha[0]
        return values

    result = run_mcmc(
        init,
        step,
        record,
        rng=np.random.default_rng(seed),
        chains=chains,
        tune=tune,
        draws=draws,
        progressbar=progressbar,
        description="Gibbs",
    )
    return mcmc_fit(model, result, "gibbs")
