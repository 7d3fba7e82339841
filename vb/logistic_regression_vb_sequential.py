"""Variational Bayes for logistic regression without the hyperprior, updating one ``xi_n`` at a
time (Drugowitsch 2019, section 3.5.1, ``vb_logit_fit_iter.m``).

The prior is fixed, ``w ~ N(0, D^-1 I)`` (eq. 81), so ``Q(w) = N(w_N, V_N)`` with
``V_N^-1 = D I + 2 sum_n lambda(xi_n) x_n x_n^T`` and ``w_N = V_N t``, ``t = sum_n y_n x_n / 2``.
One sweep visits the observations in order. For observation ``j`` let ``C`` be the covariance
without its term, ``a = x_j^T C x_j`` and ``u = x_j^T C t``. By Sherman-Morrison (eq. 85-87) the
bound depends on ``xi_j`` only through

    ``L_j(xi) = -lambda u^2 / k - ln(k) / 2 + ln sigma(xi) - xi/2 + lambda xi^2``,
    ``k = 1 + 2 lambda(xi) a``   (eq. 91 up to terms free of ``xi_j``),

which the fixed point ``xi^2 = x_j^T (V_j + w_j w_j^T) x_j = a / k + (u / k)^2`` climbs (eq. 63
for a single point), so ``xi_j`` is optimised with scalars; then ``V_N`` and ``w_N`` take a rank-one
update (eq. 82-85). The first sweep starts from the prior and lets each observation enter the
posterior as it is visited: it is exactly the single pass of ``vb_logit_fit_iter.m`` (eq.
82-90). Later sweeps revisit each ``xi_j`` with the others fixed, which is coordinate ascent on
the bound ``L~(Q, xi)`` over all data; ``max_iter=1`` stops after the paper's pass. After every
sweep ``V_N`` is recomputed from its precision by Cholesky (so rank-one round-off never
accumulates) and the bound is evaluated exactly:

    ``L~ = w_N^T t / 2 + ln|V_N| / 2 + D ln(D) / 2 + sum_n (ln sigma(xi_n) - xi_n/2
    + lambda(xi_n) xi_n^2)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import blas
from scipy.special import log_expit

from bayesvm.drivers import run_ascent
from bayesvm.linalg import cholesky_lower, cholesky_solve, log_det_from_cholesky, weighted_gram
from bayesvm.models.logistic_regression import LogisticRegression
from bayesvm.registry import register
from bayesvm.results import Fit
from bayesvm.vb.logistic_regression_vb import logit_vb_result

__all__ = ["SequentialLogitState", "make_sequential_sweep", "fit_logit_vb_sequential"]

# The scalar fixed point for one xi_j is iterated to this relative precision (cheap: no
# matrix work), or at most this many times.
XI_TOL = 1e-10
XI_MAX_ITER = 500


class SequentialLogitState(NamedTuple):
    """``Q(w)`` and the bound parameters after a sweep (names as ``vb_logit_fit_iter.m``)."""

    w: np.ndarray
    V: np.ndarray
    invV: np.ndarray
    logdetV: float
    xi: np.ndarray
    lam: np.ndarray  # lambda(xi_n); 0 for observations not yet in the posterior
    entered: bool  # every observation is in the posterior (after the first sweep)


def _lambda(xi: float) -> float:
    """Scalar ``lambda(xi)`` (eq. 45), the hot inner loop's version of
    :func:`~bayesvm.vb.logistic_regression_vb.jaakkola_lambda`.
    """
    return 0.125 if xi < 1e-6 else math.tanh(xi / 2.0) / (4.0 * xi)


def optimal_xi(a: float, u: float, lam: float) -> tuple[float, float]:
    """Maximise ``L_j(xi)`` (module docstring) by its fixed point, starting from ``lam``."""
    xi = math.inf
    for _ in range(XI_MAX_ITER):
        k = 1.0 + 2.0 * lam * a
        xi_new = math.sqrt(a / k + (u / k) ** 2)
        lam = _lambda(xi_new)
        if abs(xi_new - xi) <= XI_TOL * xi_new:
            break
        xi = xi_new
    return xi_new, lam


def initial_state(model: LogisticRegression) -> SequentialLogitState:
    """The prior ``N(0, D^-1 I)``, no observation in the posterior yet (eq. 81)."""
    D, N = model.n_features, model.n_samples
    return SequentialLogitState(
        w=np.zeros(D),
        V=np.eye(D) / D,
        invV=np.eye(D) * D,
        logdetV=-D * math.log(D),
        xi=np.zeros(N),
        lam=np.zeros(N),
        entered=False,
    )


def make_sequential_sweep(model: LogisticRegression):
    """One sweep over the observations, each ``xi_j`` updated in turn (section 3.5.1)."""
    X, y = model.X, model.y
    D = model.n_features
    t = X.T @ y / 2.0
    prior_log_det = D * math.log(D)  # -ln|V_0|

    def sweep(state: SequentialLogitState) -> tuple[SequentialLogitState, float]:
        V = np.array(state.V, order="F")  # only its upper triangle is kept up to date
        w = state.w.copy()
        lam, xi = state.lam.copy(), state.xi.copy()
        entering = 0.0 if state.entered else 1.0
        for j in range(model.n_samples):
            x, y_j = X[j], y[j]
            s = blas.dsymv(1.0, V, x)  # V x
            v, m = float(x @ s), float(x @ w)
            # Without observation j's own term (eq. 85 backwards): C x = s / k_old.
            k_old = 1.0 - 2.0 * lam[j] * v
            a = v / k_old
            u = (m + entering * y_j * v / 2.0) / k_old
            xi[j], lam_j = optimal_xi(a, u, lam[j] if state.entered else 0.125)
            delta = lam_j - lam[j]
            g = 2.0 * delta / (1.0 + 2.0 * delta * v)
            # w_j = V_j (V_{j-1}^-1 w_{j-1} + y_j x_j / 2) (eq. 84) and V_j (eq. 85).
            w += s * (entering * y_j / 2.0 - g * (m + entering * y_j * v / 2.0))
            V = blas.dsyr(-g, s, a=V, overwrite_a=1)
            lam[j] = lam_j
        invV = weighted_gram(X, 2.0 * lam)
        invV[np.diag_indices(D)] += D
        factor = cholesky_lower(invV)
        V = cholesky_solve(factor, np.eye(D))
        w = cholesky_solve(factor, t)
        logdetV = -log_det_from_cholesky(factor)
        bound = (
            0.5 * w @ t
            + 0.5 * (logdetV + prior_log_det)
            + np.sum(log_expit(xi) - xi / 2.0 + lam * xi**2)
        )
        return SequentialLogitState(w, V, invV, logdetV, xi, lam, entered=True), bound

    return sweep


def _supports(model) -> bool:
    return isinstance(model, LogisticRegression) and not model.hyperprior


@register("vb", _supports)
def fit_logit_vb_sequential(
    model: LogisticRegression,
    *,
    tol: float = 1e-5,
    max_iter: int = 500,
    draws: int = 1000,
    seed=None,
) -> Fit:
    """Fit the model without hyperprior by VB with sequential ``xi`` updates.

    Parameters
    ----------
    tol : float
        Stop when a sweep changes the bound by less than this fraction (section 3.5: 0.001 %).
    max_iter : int
        Most sweeps over the data (section 3.5: 500); ``1`` is the single pass of
        ``vb_logit_fit_iter.m``.
    draws : int
        Draws from ``Q(w)`` stored as the posterior (one chain).
    seed : int or numpy.random.Generator, optional
        For the draws only.
    """
    result = run_ascent(
        initial_state(model),
        make_sequential_sweep(model),
        tol=tol,
        max_iter=max_iter,
        relative=True,
    )
    return logit_vb_result(model, result.state, result, draws=draws, seed=seed)
