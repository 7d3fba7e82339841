"""Closed-form variational Bayes for linear regression (Drugowitsch 2019, sections 2.2-2.5).

``Q(w, tau) Q(alpha)`` with ``Q(w, tau) = N(w | w_N, V_N / tau) Gam(tau | a_N, b_N)`` and
``Q(alpha) = Gam(c_N, d_N)`` (one ``d_Ni`` per coefficient with ARD). One iteration updates
``Q(w, tau)`` (eq. 7-10 / 27-30) and then ``Q(alpha)`` (eq. 12-15 / 31-32), and evaluates the
bound (eq. 22 / 33). With ``alpha`` fixed the first iteration gives the exact conjugate
posterior and the second confirms it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import xarray as xr
from scipy.special import gammaln

from bayesvm.drivers import PRECISION_STARTS, run_ascent_from
from bayesvm.linalg import (
    cholesky_lower,
    cholesky_solve,
    inverse_diagonal,
    log_det_from_cholesky,
)
from bayesvm.models.linear_regression import LinearRegression
from bayesvm.registry import register
from bayesvm.results import Fit, build_idata

__all__ = ["LinearVBState", "make_linear_vb_step", "fit_linear_vb"]


class LinearVBState(NamedTuple):
    """Parameters of ``Q`` after an iteration (names as ``vb_linear_fit.m`` returns them)."""

    w: np.ndarray
    factor: np.ndarray  # lower Cholesky factor of invV
    invV: np.ndarray
    logdetV: float
    an: float
    bn: float
    E_a: np.ndarray  # E(alpha): shape (D,), constant across features without ARD
    dn: np.ndarray  # rate(s) of Q(alpha)

    @property
    def V(self) -> np.ndarray:
        """``V_N``, solved for once at the end: the iterations need only its diagonal."""
        return cholesky_solve(self.factor, np.eye(self.factor.shape[0]))


def make_linear_vb_step(model: LinearRegression):
    """One iteration of the section 2.2 (or 2.4) updates, with the bound of eq. 22 (or 33)."""
    XtX, Xty, yty = model.sufficient_statistics
    N, D = model.n_samples, model.n_features
    a0, b0, c0, d0 = model.a0, model.b0, model.c0, model.d0
    an = a0 + N / 2.0  # eq. 9
    cn = c0 + (0.5 if model.ard else D / 2.0)  # eq. 12 / 31
    n_alpha = D if model.ard else 1
    constant = (
        -N / 2.0 * np.log(2 * np.pi) + D / 2.0 - gammaln(a0) + a0 * np.log(b0) + gammaln(an) + an
    )
    alpha_constant = n_alpha * (-gammaln(c0) + c0 * np.log(d0) + gammaln(cn))

    def step(state: LinearVBState) -> tuple[LinearVBState, float]:
        invV = XtX.copy()
        invV[np.diag_indices(D)] += state.E_a  # eq. 7 / 27
        factor = cholesky_lower(invV)
        V_diagonal = inverse_diagonal(factor)
        w = cholesky_solve(factor, Xty)  # eq. 8
        bn = b0 + 0.5 * (yty - w @ invV @ w)  # eq. 10
        if model.alpha is not None:
            E_a, dn = state.E_a, state.dn
        elif model.ard:
            dn = d0 + 0.5 * (w**2 * an / bn + V_diagonal)  # eq. 32
            E_a = cn / dn
        else:
            dn = np.array([d0 + 0.5 * (an / bn * (w @ w) + V_diagonal.sum())])  # eq. 13-14
            E_a = np.full(D, cn / dn[0])
        logdetV = -log_det_from_cholesky(factor)
        residual = yty - 2 * w @ Xty + w @ XtX @ w  # sum_n (y_n - w^T x_n)^2
        bound = (
            constant
            # tr(X^T X V) = tr((V^-1 - E(A)) V) = D - sum_i E(alpha_i) V_ii
            - 0.5 * (an / bn * residual + D - state.E_a @ V_diagonal)
            + 0.5 * logdetV
            - b0 * an / bn
            - an * np.log(bn)
        )
        if model.alpha is None:  # eq. 22 / 33, last line (Q(alpha) just updated)
            bound += alpha_constant - cn * np.sum(np.log(dn))
        else:  # eq. 18 with alpha known instead of averaged over Q(alpha)
            bound += 0.5 * D * np.log(model.alpha)
            bound -= 0.5 * model.alpha * (an / bn * (w @ w) + V_diagonal.sum())
        return LinearVBState(w, factor, invV, logdetV, an, bn, E_a, dn), bound

    return step


def initial_state(model: LinearRegression, precision: float | None = None) -> LinearVBState:
    """Start with ``E(alpha) = precision`` (default: its prior mean; the fixed ``alpha`` if
    the model has one).
    """
    D = model.n_features
    if model.alpha is not None:
        E_a = model.alpha
    else:
        E_a = model.c0 / model.d0 if precision is None else precision
    nan = float("nan")
    return LinearVBState(
        np.zeros(D), np.eye(D), np.eye(D), 0.0, nan, nan, np.full(D, E_a), np.full(1, nan)
    )


def _supports(model) -> bool:
    return isinstance(model, LinearRegression)


@register("vb", _supports)
def fit_linear_vb(
    model: LinearRegression, *, tol: float = 1e-5, max_iter: int = 500, draws: int = 1000, seed=None
) -> Fit:
    """Fit by VB (``vb_linear_fit.m`` / ``vb_linear_fit_ard.m``).

    With ``alpha`` learned the ascent runs from ``E(alpha) = c0 / d0`` (the paper's start) and
    from ``E(alpha) = 1`` and keeps the larger bound (the bound can have a second maximum
    with every weight shrunk to zero).

    Parameters
    ----------
    tol : float
        Stop when the bound changes by less than this fraction (section 2.5: 0.001 %).
    max_iter : int
        Most iterations (section 2.5: 500).
    draws : int
        Draws from ``Q`` stored as the posterior (one chain).
    seed : int or numpy.random.Generator, optional
        For the draws only.
    """
    precisions = PRECISION_STARTS if model.alpha is None else (None,)
    result = run_ascent_from(
        [initial_state(model, precision) for precision in precisions],
        make_linear_vb_step(model),
        tol=tol,
        max_iter=max_iter,
        relative=True,
    )
    state = result.state
    rng = np.random.default_rng(seed)
    tau = rng.gamma(state.an, 1.0 / state.bn, size=draws)
    V = state.V
    noise = rng.standard_normal((draws, model.n_features)) @ cholesky_lower(V).T
    w = state.w + noise / np.sqrt(tau)[:, None]
    posterior = {"w": w[None], "tau": tau[None]}
    variational = {
        "w_mean": (["feature"], state.w),
        "V": (["feature", "feature_"], V),
        "invV": (["feature", "feature_"], state.invV),
        "logdetV": ((), state.logdetV),
        "an": ((), state.an),
        "bn": ((), state.bn),
        "lower_bound": (["iteration"], result.trace),
    }
    if model.alpha is None:
        cn = model.c0 + (0.5 if model.ard else model.n_features / 2.0)
        dn = state.dn if model.ard else state.dn[0]
        alpha = rng.gamma(cn, 1.0 / dn, size=(draws, *np.shape(dn)))
        posterior["alpha"] = alpha[None]
        variational["E_a"] = (["feature"] if model.ard else [], cn / dn)
        variational["cn"] = ((), cn)
        variational["dn"] = (["feature"] if model.ard else [], dn)
    group = xr.Dataset(
        variational,
        coords={"feature": model.feature_names, "feature_": model.feature_names},
    )
    idata = build_idata(model, posterior, variational=group)
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
