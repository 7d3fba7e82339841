"""Variational Bayes for logistic regression with the Jaakkola-Jordan bound (Drugowitsch 2019,
sections 3.2-3.5, ``vb_logit_fit.m`` / ``vb_logit_fit_ard.m``).

The sigmoid is bounded below by ``sigma(xi) exp((z - xi)/2 - lambda(xi)(z^2 - xi^2))`` with
``lambda(xi) = (sigma(xi) - 1/2) / (2 xi)`` (eq. 45). One iteration updates, each exactly
maximising the bound ``L~(Q, xi)`` (eq. 47) in its block:

* ``Q(w) = N(w_N, V_N)``: ``V_N^-1 = E(A) + 2 sum_n lambda(xi_n) x_n x_n^T``,
  ``w_N = V_N sum_n y_n x_n / 2`` (eq. 49-50 / 72-73);
* ``Q(alpha) = Gam(a_N, b_N)``: ``a_N = a0 + D/2``, ``b_N = b0 + E(w^T w)/2`` (eq. 52-55), or
  per coefficient ``a0 + 1/2``, ``b0 + E(w_i^2)/2`` (eq. 74-75);
* ``xi_n^2 = x_n^T (V_N + w_N w_N^T) x_n`` for all ``n`` at once (eq. 63, batch updates).

The bound is evaluated from its general expression (eq. 56-61 / 76-79) at the current
parameters, which is exact whatever the order of the updates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import xarray as xr
from scipy.linalg import blas
from scipy.special import digamma, gammaln, log_expit

from bayesvm.drivers import PRECISION_STARTS, AscentResult, run_ascent_from
from bayesvm.linalg import (
    cholesky_lower,
    cholesky_solve,
    inverse_factor,
    log_det_from_cholesky,
    weighted_gram,
)
from bayesvm.models.logistic_regression import LogisticRegression
from bayesvm.registry import register
from bayesvm.results import Fit, build_idata

__all__ = [
    "LogitVBState",
    "jaakkola_lambda",
    "make_logit_vb_step",
    "fit_logit_vb",
    "logit_vb_result",
]


def jaakkola_lambda(xi: np.ndarray) -> np.ndarray:
    """``lambda(xi) = tanh(xi / 2) / (4 xi)`` (eq. 45), with its limit 1/8 at ``xi = 0``."""
    xi = np.abs(xi)
    small = xi < 1e-6
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125, np.tanh(safe / 2.0) / (4.0 * safe))


class LogitVBState(NamedTuple):
    """Parameters after an iteration (names as ``vb_logit_fit.m`` returns them)."""

    w: np.ndarray
    factor: np.ndarray  # lower Cholesky factor of invV
    invV: np.ndarray
    logdetV: float
    bn: np.ndarray  # rate(s) of Q(alpha): shape (1,) or (D,) with ARD
    E_a: np.ndarray  # E(alpha) per coefficient, shape (D,)
    xi: np.ndarray

    @property
    def V(self) -> np.ndarray:
        """``V_N``, solved for once at the end: the iterations need only ``L^-1``."""
        return cholesky_solve(self.factor, np.eye(self.factor.shape[0]))


def make_logit_vb_step(model: LogisticRegression):
    """One batch iteration of section 3.2 (or 3.4 with ARD)."""
    X, y = model.X, model.y
    D = model.n_features
    half_Xty = X.T @ y / 2.0
    n_alpha = D if model.ard else 1
    multiplicity = D / n_alpha  # coefficients sharing each alpha
    an = model.a0 + multiplicity / 2.0
    alpha_constant = (
        n_alpha * (-gammaln(model.a0) + model.a0 * np.log(model.b0) + gammaln(an) + an) + 0.5 * D
    )

    def step(state: LogitVBState) -> tuple[LogitVBState, float]:
        lam = jaakkola_lambda(state.xi)
        invV = weighted_gram(X, 2.0 * lam)
        invV[np.diag_indices(D)] += state.E_a
        factor = cholesky_lower(invV)
        factor_inverse = inverse_factor(factor)  # V_N = L^-T L^-1
        w = cholesky_solve(factor, half_Xty)
        second_moment = w**2 + np.einsum("ij,ij->j", factor_inverse, factor_inverse)
        bn = model.b0 + 0.5 * (second_moment if model.ard else np.array([second_moment.sum()]))
        E_a = np.broadcast_to(an / bn, (D,)).copy()
        # xi_n^2 = x_n^T V_N x_n + (w_N^T x_n)^2 = |L^-1 x_n|^2 + (w_N^T x_n)^2 (eq. 63)
        projected = blas.dtrmm(1.0, factor_inverse, X, side=1, lower=1, trans_a=1)
        xi = np.sqrt(np.einsum("nd,nd->n", projected, projected) + (X @ w) ** 2)
        log_alpha_mean = digamma(an) - np.log(bn)
        logdetV = -log_det_from_cholesky(factor)
        bound = (
            w @ half_Xty
            + np.sum(log_expit(xi) - xi / 2.0)  # E ln h; the lambda terms cancel at the new xi
            + 0.5 * multiplicity * np.sum(log_alpha_mean)
            - 0.5 * np.sum(E_a * second_moment)  # E ln P(w | alpha) + D/2 ln 2 pi
            + np.sum((model.a0 - 1.0) * log_alpha_mean - model.b0 * an / bn)
            + 0.5 * logdetV  # - E ln Q(w) - D/2 ln 2 pi
            - np.sum((an - 1.0) * digamma(an) + np.log(bn))  # - E ln Q(alpha)
            + alpha_constant
        )
        return LogitVBState(w, factor, invV, logdetV, bn, E_a, xi), bound

    return step


def initial_state(model: LogisticRegression, precision: float | None = None) -> LogitVBState:
    """``E(alpha) = precision`` (default: its prior mean) and ``xi`` from
    ``Q(w) = N(0, I / E(alpha))``.
    """
    D = model.n_features
    E_a = np.full(D, model.a0 / model.b0 if precision is None else precision)
    xi = np.sqrt(np.sum(model.X**2, axis=1) / E_a[0])
    nan = np.full(1, np.nan)
    return LogitVBState(np.zeros(D), np.eye(D), np.eye(D), 0.0, nan, E_a, xi)


def _supports(model) -> bool:
    return isinstance(model, LogisticRegression) and model.hyperprior


@register("vb", _supports)
def fit_logit_vb(
    model: LogisticRegression,
    *,
    tol: float = 1e-5,
    max_iter: int = 500,
    draws: int = 1000,
    seed=None,
) -> Fit:
    """Fit by VB with batch ``xi`` updates.

    The ascent runs from ``E(alpha) = a0 / b0`` (the paper's start) and from ``E(alpha) = 1``
    and keeps the larger bound: from the first, weakly informative data can end in a local
    maximum with every weight shrunk to zero.

    Parameters
    ----------
    tol : float
        Stop when the bound changes by less than this fraction (section 3.5: 0.001 %).
    max_iter : int
        Most iterations (section 3.5: 500).
    draws : int
        Draws from ``Q`` stored as the posterior (one chain).
    seed : int or numpy.random.Generator, optional
        For the draws only.
    """
    result = run_ascent_from(
        [initial_state(model, precision) for precision in PRECISION_STARTS],
        make_logit_vb_step(model),
        tol=tol,
        max_iter=max_iter,
        relative=True,
    )
    state = result.state
    an = model.a0 + (0.5 if model.ard else model.n_features / 2.0)
    bn = state.bn if model.ard else state.bn[0]
    return logit_vb_result(model, state, result, draws=draws, seed=seed, alpha_shape_rate=(an, bn))


def logit_vb_result(
    model: LogisticRegression,
    state,
    result: AscentResult,
    *,
    draws: int,
    seed,
    alpha_shape_rate: tuple[float, np.ndarray] | None = None,
) -> Fit:
    """The fit: draws from ``Q``, and the paper's outputs in the ``variational`` group.

    ``state`` carries ``w``, ``V``, ``invV``, ``logdetV`` and ``xi``; ``alpha_shape_rate`` is
    ``(a_N, b_N)`` of ``Q(alpha)`` for a model with the hyperprior.
    """
    rng = np.random.default_rng(seed)
    V = state.V
    w = state.w + rng.standard_normal((draws, model.n_features)) @ cholesky_lower(V).T
    posterior = {"w": w[None]}
    variational = xr.Dataset(
        {
            "w_mean": (["feature"], state.w),
            "V": (["feature", "feature_"], V),
            "invV": (["feature", "feature_"], state.invV),
            "logdetV": ((), state.logdetV),
            "xi": (["obs_id"], state.xi),
            "lower_bound": (["iteration"], result.trace),
        },
        coords={
            "feature": model.feature_names,
            "feature_": model.feature_names,
            "obs_id": np.arange(model.n_samples),
        },
    )
    if alpha_shape_rate is not None:
        an, bn = alpha_shape_rate
        posterior["alpha"] = rng.gamma(an, 1.0 / bn, size=(1, draws, *np.shape(bn)))
        alpha_dims = model.dims["alpha"]
        variational["an"] = ((), an)
        variational["bn"] = (alpha_dims, bn)
        variational["E_a"] = (alpha_dims, an / bn)
    idata = build_idata(model, posterior, variational=variational)
    return Fit(
        model,
        idata,
        "vb",
        "variational",
        n_iter=result.trace.size,
        converged=result.converged,
        problems=result.problems,
        lower_bound_trace=result.trace,
    )
