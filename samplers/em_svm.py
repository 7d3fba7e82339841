"""EM-SVM and ECME-SVM: the posterior mode of the linear Bayesian SVM (Polson-Scott 2011, s. 3).

Every model of :mod:`bayesvm.models` writes ``f = X beta + Z u``; here ``theta = (beta, u)``,
``C = [X, Z]`` and ``a_i = y_i c_i``, so that observation ``i`` has residual
``r_i = 1 - a_i^T theta``. The iteration increases the log pseudo-posterior (up to a constant)

    ``F(theta) = -2 sum_i max(0, r_i) - sum_j P_j theta_j^2 / 2 - sum_j L_j |theta_j|``

with ``P = 1 / sigma2_beta`` for ``beta`` and ``1 / v_j`` (ridge) for ``u``, or
``L_j = 1 / (nu c_j)`` (lasso). Its maximiser is the SVM solution: for the ridge with penalty
``alpha`` it minimises ``sum_i (1 - y_i f_i)_+ + alpha ||u||^2`` (LIBSVM with
``C = 1 / (2 alpha)``, up to the vague ``N(0, 1e8)`` prior on the intercept).

EM-SVM (section 3.1)
    E-step: ``1/lambda_i = |r_i|^-1`` (eq. 14) and, for the lasso, ``1/omega_j = nu c_j / |u_j|``
    (Corollary 4 with alpha = 1; ``omega_j = 1`` for the ridge). M-step: the weighted least
    squares ``(diag(prior precision) + A^T Lambda^-1 A) theta = A^T (1 + lambda^-1)``, prior
    precision ``1 / sigma2_beta``, ``1 / v_j`` (ridge) or ``(1/omega_j) / (nu^2 c_j^2)``
    (lasso), solved by Cholesky. It is a minorise-maximise step (``|r| <= r^2 / (2 |r_g|) +
    |r_g| / 2``, equality at ``r_g``), so ``F`` never decreases.

Stability (section 3.2)
    Support vectors get infinite weight. Observations with ``r_i = 0`` (to round-off) form the
    set ``S`` and enter the restricted least squares of eq. (15) as equality constraints
    ``a_i^T theta = 1`` with Lagrange multipliers: the KKT system is solved with the Cholesky
    factor of ``B_-s`` and the small Schur complement ``A_s B_-s^-1 A_s^T``, factored with
    pivoting (LAPACK ``dpstrf``) so that only linearly independent support vectors are kept
    (at most ``p + m``, as the paper notes); a dependent one stays at ``r_i = 0`` through the
    others. Observations with ``0 < |r_i| < SV_TOL`` are tried as constraints too and fall back
    to their (finite) EM weight if their multiplier is invalid or ``F`` would decrease.
    Likewise a lasso weight that reaches 0 (``|u_j|`` below ``ZERO_TOL`` of the largest) has
    ``1/omega_j = inf``: it is held at exactly 0 and its column dropped (0 is a fixed point).

Active-set rule (added here; plain EM keeps a support vector, or a zero, forever)
    With ``mu_i`` the coefficient of ``a_i`` in the stationarity condition
    ``D theta = sum_i mu_i a_i``, the hinge requires ``mu_i = 2 h_i`` with ``h_i`` in its
    subgradient, ``[0, 1]`` at ``r_i = 0``; a zero lasso weight requires the gradient ``g_j``
    of the rest to lie in ``[-1, 1] / (nu c_j)``. When a constrained item violates its range by
    more than ``RELEASE_TOL``, the worst offender is released: its term is replaced by its
    exact linear piece (``0`` if ``mu_i < 0``, ``-2 r_i`` if ``mu_i > 2``;
    ``-sign(g_j) u_j / (nu c_j)``) and the step is solved again. The constrained value
    function is concave in the constraint level with slope ``mu_i - kappa``, so the new
    maximiser lies on the side where that piece is exact and ``F`` still increases
    (Nocedal-Wright Thm. 16.5). One release per step. Zero lasso weights are released in the
    EM step (multipliers of the EM surrogate); support vectors in the Newton step below, whose
    multipliers are exact (the EM surrogate's are not until EM has converged, and releasing on
    them made EM and the Newton step undo each other).

Newton step (added here, after each EM step)
    EM converges linearly, and very slowly when fewer than ``p + m`` points are on the margin
    (the weights ``1/|r_i|`` of points off the margin curve the surrogate where ``F`` is
    flat), or when a support vector's multiplier is near 0 or 2 (its residual shrinks by
    ``|mu_i - 1|`` per iteration). On the current sign pattern ``F`` is a concave quadratic:
    ``-2 sum_{r_i > 0} r_i`` plus the prior, with ``S`` held at ``r_i = 0``. Its maximiser
    (KKT system, LDL^T by LAPACK ``dsysv``) gives the exact multipliers for the release rule,
    and the step to it is taken through an exact line search of the concave, piecewise
    quadratic ``F`` (it stops at a kink, where a point joins ``S`` at the next E-step). Once
    the pattern is right the step lands on the exact mode, so the ridge converges in finitely
    many iterations. For the lasso the nonzero weights keep their EM curvature in this step,
    and the step is also tried with the weights that EM is shrinking towards 0 (below
    ``ZERO_TOL``) set to 0; the better of the two is taken.

Monotonicity
    Every update maximises ``F`` or a minorant that touches it at the current point, or is
    checked against ``F``: a new snap that would lower ``F`` is undone (plain EM weights), a
    degenerate step (dependent support vectors) falls back to an exact line search, and the
    Newton step is kept only if it raises ``F``. The objective therefore never decreases
    beyond floating-point round-off.

ECME-SVM (section 3.3)
    E-step and CM-step as above with the current scale; then the CME step maximises the
    observed-data pseudo-posterior over the scale given the new coefficients:

    * lasso, ``t = 1/nu ~ Gamma(a, b)``: ``t | u ~ Gamma(a + m, b + sum_j |u_j| / c_j)`` and the
      CME step takes its mode ``t = (a + m - 1) / (b + sum_j |u_j| / c_j)``. The formula printed
      in section 3.3, ``(b + sum |u_j / c_j|) / (m + a - 1)``, is the reciprocal of this mode
      (a typo: it is neither the mode of ``t`` nor that of ``nu``);
    * ridge, ``s2 = nu^2 ~ IG(a, b)``: ``s2 | u ~ IG(a + m/2, b + sum_j (u_j / c_j)^2 / 2)`` and
      the CME step takes its mode ``(b + sum_j (u_j / c_j)^2 / 2) / (a + m/2 + 1)``.

    So the result is the joint mode of ``(theta, t)`` (lasso) or ``(theta, s2)`` (ridge): the
    objective adds ``log p(u | scale) + log p(scale)`` in that parameterisation, and it is
    monotone (Liu-Rubin 1994).

Start: ``theta ~ N(0, I)`` (Polson-Scott section 5; 0 is a fixed point for the lasso).
Stop: when ``F`` rises by less than ``tol * 2 n`` in an iteration (``2 n = |F(0)|``, the hinge
part at ``theta = 0``), so ``tol`` is relative to the objective's scale. The default 1e-15 is
round-off level: the ridge EM stops at its exact fixed point, and ECME (linear in the scale)
at about ``sqrt(machine epsilon)`` in the parameters, the resolution of an objective-based stop.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack

from bayesvm.drivers import run_ascent
from bayesvm.linalg import cholesky_lower, cholesky_solve
from bayesvm.models.linear_predictor import LinearPredictorSVM
from bayesvm.models.penalties import FixedGaussian, Laplace, LearnedGaussian
from bayesvm.registry import register
from bayesvm.results import Fit, build_idata

__all__ = ["EMState", "make_em_step", "initial_state", "fit_em", "fit_ecme"]

# |r_i| below this: observation i is tried as a support vector (constraint r_i = 0).
SV_TOL = 1e-6
# |u_j| / c_j below this times the largest: u_j is tried as exactly 0 (lasso).
ZERO_TOL = 1e-4
# A multiplier outside its valid range by more than this is released.
RELEASE_TOL = 1e-9
# Relative pivot below which a support vector is linearly dependent on the others.
PIVOT_TOL = 1e-10
# Residuals below this (relative to the size of a_i^T theta) are exactly 0 up to round-off.
EXACT_TOL = 1e-11
# |r_i| below this counts as on the margin in the reported statistics.
MARGIN_TOL = 1e-8


class EMState(NamedTuple):
    """Current mode estimate."""

    theta: np.ndarray  # (beta, u)
    scale: float  # s2 (learned ridge), nu (learned lasso), else nan
    support: np.ndarray  # indices of the support vectors held as constraints
    n_released: int  # active-set releases so far


def _supports_em(model) -> bool:
    if not isinstance(model, LinearPredictorSVM):
        return False
    penalty = model.penalty
    return isinstance(penalty, FixedGaussian) or (
        isinstance(penalty, Laplace) and penalty.nu is not None
    )


def _supports_ecme(model) -> bool:
    if not isinstance(model, LinearPredictorSVM):
        return False
    penalty = model.penalty
    return isinstance(penalty, LearnedGaussian) or (
        isinstance(penalty, Laplace) and penalty.nu is None
    )


class _Plan(NamedTuple):
    """Which observations and coefficients are constrained, weighted or released."""

    support: np.ndarray  # bool (n,): constraint r_i = 0
    zero: np.ndarray  # bool (k,): theta_j held at 0 (lasso only)
    coef: int  # released coefficient (-1: none)
    sign: float  # its linear piece: -sign * u_j / (nu c_j)


class _Solution(NamedTuple):
    theta: np.ndarray
    support: np.ndarray  # indices kept as independent constraints
    mu: np.ndarray  # their multipliers
    zero: np.ndarray  # indices held at 0
    gradient: np.ndarray  # gradient of the rest of the surrogate at those coefficients


def make_em_step(model):
    """Build the EM (fixed scale) or ECME (learned scale) iteration for ``model``.

    Returns ``(objective, step, cme)``: ``objective(theta, scale)`` is the log
    pseudo-posterior that ``step(state) -> (state, objective)`` increases, and ``cme(theta)``
    the mode of the scale given ``theta`` (learned scale only).
    """
    C, y = model.design, model.y
    A = y[:, None] * C  # rows a_i = y_i c_i
    abs_A = np.abs(A)
    n, p, m = model.n_samples, model.n_fixed, model.n_effects
    k = p + m
    penalty = model.penalty
    lasso = isinstance(penalty, Laplace)
    learned = _supports_ecme(model)
    inv_sigma2_beta = 1.0 / model.sigma2_beta
    cols = np.arange(k)
    if isinstance(penalty, FixedGaussian):
        u_precision = 1.0 / np.asarray(penalty.variance, dtype=float)
    else:
        c = np.asarray(penalty.scale, dtype=float)
        inv_c2 = 1.0 / c**2

    def gaussian_precision(scale: float) -> np.ndarray:
        """``P``: precision of the Gaussian parts of the prior (0 for lasso weights)."""
        precision = np.full(k, inv_sigma2_beta)
        if isinstance(penalty, FixedGaussian):
            precision[p:] = u_precision
        elif isinstance(penalty, LearnedGaussian):
            precision[p:] = inv_c2 / scale
        else:
            precision[p:] = 0.0
        return precision

    def l1_weight(scale: float) -> np.ndarray:
        """``L``: weights of ``|theta_j|`` in ``-log p(theta)``, ``1 / (nu c_j)`` (lasso)."""
        weight = np.zeros(k)
        if lasso:
            nu = penalty.nu if penalty.nu is not None else scale
            weight[p:] = 1.0 / (nu * c)
        return weight

    def objective(theta: np.ndarray, scale: float) -> float:
        """Log pseudo-posterior of ``(theta, scale)`` up to a constant."""
        value = (
            -2.0 * float(np.sum(np.maximum(0.0, 1.0 - A @ theta)))
            - 0.5 * float(np.sum(gaussian_precision(scale) * theta**2))
            - float(np.sum(l1_weight(scale) * np.abs(theta)))
        )
        if isinstance(penalty, LearnedGaussian):
            # log N(u | 0, s2 c^2) + log IG(s2 | a, b): the s2 terms (the u term is above)
            value -= (0.5 * m + penalty.shape + 1.0) * np.log(scale) + penalty.rate / scale
        elif lasso and penalty.nu is None:
            # log Laplace(u | 0, c / t) + log Gamma(t | a, b), t = 1 / nu: the t terms
            value -= (m + penalty.shape - 1.0) * np.log(scale) + penalty.rate / scale
        return value

    def cme(theta: np.ndarray) -> float:
        """Mode of the scale given ``u`` (section 3.3; see the module docstring)."""
        u = theta[p:]
        if isinstance(penalty, LearnedGaussian):
            rate = penalty.rate + 0.5 * float(np.sum(u**2 * inv_c2))
            return rate / (penalty.shape + 0.5 * m + 1.0)  # s2
        rate = penalty.rate + float(np.sum(np.abs(u) / c))
        return rate / (penalty.shape + m - 1.0)  # nu = 1 / mode of t

    def em_curvature(theta: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """``L_j / |theta_j|``: the EM curvature of ``L_j |theta_j|`` (inf at 0, 0 if no L)."""
        curvature = np.zeros(k)
        on = weight > 0.0
        with np.errstate(divide="ignore"):
            curvature[on] = weight[on] / np.abs(theta[on])
        return curvature

    def line_search(theta: np.ndarray, target: np.ndarray, scale: float) -> np.ndarray:
        """The best point of ``F`` on the segment from ``theta`` to ``target`` (exact)."""
        direction = target - theta
        t = _concave_line_search(
            A @ direction,
            1.0 - A @ theta,
            theta,
            direction,
            gaussian_precision(scale),
            l1_weight(scale),
        )
        candidate = theta + t * direction
        return candidate if objective(candidate, scale) >= objective(theta, scale) else theta

    def restricted_least_squares(weights, precision, linear, plan: _Plan) -> _Solution:
        """The M-step with the support vectors as constraints: eq. (15)."""
        free = cols[~plan.zero]
        quad = ~plan.support
        A_q = A[quad][:, free]
        w = weights[quad]
        B = A_q.T @ (w[:, None] * A_q)
        B[np.diag_indices(free.size)] += precision[free]
        factor = cholesky_lower(B)
        theta_f = cholesky_solve(factor, A_q.T @ (1.0 + w) + linear[free])
        support = np.flatnonzero(plan.support)
        mu = np.empty(0)
        if support.size:
            A_s = A[support][:, free]
            M = cholesky_solve(factor, np.ascontiguousarray(A_s.T))  # B_-s^-1 A_s^T
            schur = A_s @ M
            schur = 0.5 * (schur + schur.T)
            tol = PIVOT_TOL * max(float(np.max(np.diag(schur))), np.finfo(float).tiny)
            _, pivots, rank, _ = lapack.dpstrf(schur, lower=1, tol=tol)
            keep = np.sort(pivots[:rank] - 1)  # linearly independent support vectors
            support, A_s, M = support[keep], A_s[keep], M[:, keep]
            schur_factor = cholesky_lower(np.ascontiguousarray(schur[np.ix_(keep, keep)]))
            mu = cholesky_solve(schur_factor, 1.0 - A_s @ theta_f)
            theta_f = theta_f + M @ mu
        theta = np.zeros(k)
        theta[free] = theta_f
        zero = np.flatnonzero(plan.zero)
        gradient = np.empty(0)
        if zero.size:
            coefficient = np.zeros(n)
            coefficient[quad] = 1.0 + w * (1.0 - A[quad] @ theta)
            coefficient[support] = mu
            gradient = A[:, zero].T @ coefficient
        return _Solution(theta, support, mu, zero, gradient)

    def em_step(theta: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray, int]:
        """E-step and stabilised M-step; returns ``(theta, support, released)``."""
        r = 1.0 - A @ theta
        exact_r = np.abs(r) <= EXACT_TOL * (1.0 + abs_A @ np.abs(theta))
        new_r = (np.abs(r) <= SV_TOL) & ~exact_r
        exact_z = np.zeros(k, dtype=bool)
        new_z = np.zeros(k, dtype=bool)
        threshold = l1_weight(scale)
        if lasso:
            size = np.abs(theta[p:]) / c
            exact_z[p:] = size == 0.0
            new_z[p:] = (size <= ZERO_TOL * float(size.max())) & ~exact_z[p:]
        with np.errstate(divide="ignore"):
            weights = 1.0 / np.abs(r)  # eq. (14); inf only on constrained points
        # lasso: (1/omega_j) / (nu^2 c_j^2) with 1/omega_j = nu c_j / |u_j| (Corollary 4)
        em_precision = gaussian_precision(scale) + em_curvature(theta, threshold)

        def solve(plan: _Plan) -> _Solution:
            precision, linear = em_precision, np.zeros(k)
            if plan.coef >= 0:
                precision = em_precision.copy()
                precision[plan.coef] = 0.0
                linear[plan.coef] = -plan.sign * threshold[plan.coef]
            return restricted_least_squares(weights, precision, linear, plan)

        def attempt(support: np.ndarray, zero: np.ndarray) -> tuple[_Solution, int]:
            plan = _Plan(support.copy(), zero.copy(), -1, 0.0)
            while True:
                sol = solve(plan)
                sv_bad = np.maximum(-sol.mu, sol.mu - 2.0) > RELEASE_TOL
                bound = threshold[sol.zero]
                z_violation = (np.abs(sol.gradient) - bound) / np.where(bound > 0, bound, 1.0)
                # New snaps that are dependent or have invalid multipliers keep their finite
                # EM weights (an exact minorisation).
                drop_r = plan.support & new_r
                drop_r[sol.support[~sv_bad]] = False
                drop_z = sol.zero[(z_violation > RELEASE_TOL) & new_z[sol.zero]]
                if not drop_r.any() and not drop_z.size:
                    break
                plan.support[drop_r] = False
                plan.zero[drop_z] = False
            if not z_violation.size or z_violation.max() <= RELEASE_TOL:
                return sol, 0
            i = int(np.argmax(z_violation))  # release the worst zero lasso weight
            zero = plan.zero.copy()
            zero[sol.zero[i]] = False
            plan = _Plan(plan.support, zero, int(sol.zero[i]), float(np.sign(sol.gradient[i])))
            try:
                return solve(plan), 1
            except np.linalg.LinAlgError:  # no curvature left for u_j: keep it at 0 this time
                return sol, 0

        before = objective(theta, scale)
        sol, released = attempt(exact_r | new_r, exact_z | new_z)
        if objective(sol.theta, scale) < before and (new_r.any() or new_z.any()):
            # A new snap did not pay off: EM weights for every item not exactly at 0.
            sol, released = attempt(exact_r, exact_z)
        theta_new = sol.theta
        if objective(theta_new, scale) < before:  # degenerate cases only
            theta_new = line_search(theta, theta_new, scale)
        return theta_new, sol.support, released

    def newton_step(theta: np.ndarray, scale: float, support: np.ndarray) -> tuple:
        """Maximise ``F`` on the current sign pattern (see the module docstring)."""
        r = 1.0 - A @ theta
        exact = np.abs(r) <= EXACT_TOL * (1.0 + abs_A @ np.abs(theta))
        positive = (r > 0.0) & ~exact
        weight = l1_weight(scale)
        precision = gaussian_precision(scale) + em_curvature(theta, weight)
        gradient = 2.0 * A[positive].sum(axis=0)

        def target_for(free: np.ndarray) -> tuple[np.ndarray | None, int]:
            def solve(rows: np.ndarray, rhs: np.ndarray):
                # [[D, A_s^T], [A_s, 0]] (theta, -mu) = (rhs, 1), solved by LDL^T
                size = free.size + rows.size
                kkt = np.zeros((size, size))
                kkt[np.diag_indices(free.size)] = precision[free]
                kkt[free.size :, : free.size] = A[rows][:, free]
                kkt[: free.size, free.size :] = A[rows][:, free].T
                rhs = np.concatenate([rhs, np.ones(rows.size)])
                _, _, solution, info = lapack.dsysv(kkt, rhs)
                return solution[: free.size], -solution[free.size :], info

            target_f, mu, info = solve(support, gradient[free])
            released = 0
            violation = np.maximum(-mu, mu - 2.0)
            if info == 0 and violation.size and violation.max() > RELEASE_TOL:
                i = int(np.argmax(violation))  # release the worst support vector
                kappa = 0.0 if mu[i] < 0.0 else 2.0
                rhs = gradient[free] + kappa * A[support[i], free]
                target_f, _, info = solve(np.delete(support, i), rhs)
                released = 1
            if info != 0 or not np.all(np.isfinite(target_f)):
                return None, 0
            target = np.zeros(k)
            target[free] = target_f
            return target, released

        best, best_value, best_released = theta, objective(theta, scale), 0
        free = (weight == 0.0) | (theta != 0.0)
        tries = [free]
        if lasso:
            # also try the lasso weights that EM is shrinking towards 0 at exactly 0
            size = np.abs(theta) * weight
            tries.append(free & ~((weight > 0.0) & (size <= ZERO_TOL * float(size.max()))))
        for index, free_mask in enumerate(tries):
            if index and np.array_equal(free_mask, tries[0]):
                continue
            target, released = target_for(cols[free_mask])
            if target is None:
                continue
            candidate = line_search(theta, target, scale)
            value = objective(candidate, scale)
            if value > best_value:
                best, best_value, best_released = candidate, value, released
        return best, best_released

    def step(state: EMState) -> tuple[EMState, float]:
        theta, support, released = em_step(state.theta, state.scale)
        theta, released_newton = newton_step(theta, state.scale, support)
        scale = cme(theta) if learned else state.scale
        released += released_newton
        new_state = EMState(theta, scale, support, state.n_released + released)
        return new_state, objective(theta, scale)

    return objective, step, cme


def _concave_line_search(slope, r, theta, d, precision, l1) -> float:
    """Maximise the concave ``phi(t) = F(theta + t d)`` over ``t`` in ``[0, 1]`` exactly.

    ``phi(t) = -2 sum_i (r_i - t s_i)_+ - sum_j P_j (theta_j + t d_j)^2 / 2
    - sum_j L_j |theta_j + t d_j|`` is piecewise quadratic; its derivative is affine between
    the kinks ``r_i / s_i`` and ``-theta_j / d_j`` and non-increasing, so a bisection over the
    sorted kinks finds the piece where it changes sign.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        kinks = np.concatenate([r / slope, -theta / d])
    kinks = kinks[np.isfinite(kinks) & (kinks > 0.0) & (kinks < 1.0)]
    knots = np.unique(np.concatenate([[0.0, 1.0], kinks]))
    curvature = float(np.sum(precision * d**2))
    linear_d = float(np.sum(precision * theta * d))

    def intercept(lo: float, hi: float) -> float:
        """``c`` with ``phi'(t) = c - t * curvature`` on ``(lo, hi)``."""
        mid = 0.5 * (lo + hi)
        hinge = 2.0 * float(np.sum(slope[r - mid * slope > 0.0]))
        return hinge - linear_d - float(np.sum(l1 * np.sign(theta + mid * d) * d))

    def right_derivative(piece: int) -> float:
        return intercept(knots[piece], knots[piece + 1]) - knots[piece] * curvature

    if right_derivative(0) <= 0.0:
        return 0.0
    lo, hi = 0, knots.size - 2  # the last piece whose right derivative at its start is > 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if right_derivative(mid) > 0.0:
            lo = mid
        else:
            hi = mid - 1
    end = knots[lo + 1]
    if curvature > 0.0:
        end = min(end, intercept(knots[lo], end) / curvature)
    return float(max(end, knots[lo]))


def initial_state(model, rng: np.random.Generator) -> EMState:
    """Polson-Scott section 5: ``theta ~ N(0, I)`` (0 is a fixed point of the lasso)."""
    theta = rng.standard_normal(model.n_fixed + model.n_effects)
    return EMState(theta, float("nan"), np.empty(0, dtype=int), 0)


def _fit(model, method: str, *, tol: float, max_iter: int, seed) -> Fit:
    objective, step, cme = make_em_step(model)
    state = initial_state(model, np.random.default_rng(seed))
    if _supports_ecme(model):
        state = state._replace(scale=cme(state.theta))
    # ``tol`` is relative to |F(0)| = 2n, the hinge part of the objective at theta = 0.
    result = run_ascent(state, step, tol=tol * 2.0 * model.n_samples, max_iter=max_iter)
    state = result.state
    p = model.n_fixed
    theta = state.theta
    posterior = {"beta": theta[None, None, :p], "u": theta[None, None, p:]}
    penalty = model.penalty
    if isinstance(penalty, LearnedGaussian):
        posterior.update(penalty.report_draws(np.array([[state.scale]])))
    elif isinstance(penalty, Laplace) and penalty.nu is None:
        posterior["nu"] = np.array([[state.scale]])
    residual = 1.0 - model.y * (model.design @ theta)
    sample_stats = {
        "lp": np.array([[result.trace[-1]]]),
        # LIBSVM's count: on the margin or violating it (generically the points with
        # positive dual coefficient)
        "n_support_vectors": np.array([[int(np.sum(residual >= -MARGIN_TOL))]]),
        "n_margin": np.array([[int(np.sum(np.abs(residual) <= MARGIN_TOL))]]),
        "n_zero": np.array([[int(np.sum(theta[p:] == 0.0))]]),
        "n_released": np.array([[state.n_released]]),
    }
    idata = build_idata(model, posterior, sample_stats=sample_stats)
    return Fit(
        model,
        idata,
        method,
        "point",
        n_iter=result.trace.size,
        converged=result.converged,
        problems=result.problems,
        objective_trace=result.trace,
    )


@register("em", _supports_em)
def fit_em(model, *, tol: float = 1e-15, max_iter: int = 5000, seed=None) -> Fit:
    """Posterior mode by EM-SVM (Polson-Scott sections 3.1-3.2) for a fixed penalty.

    EM with the restricted least squares of section 3.2, an active-set rule and a Newton step
    (see the module docstring); for the ridge the mode is LIBSVM's solution with
    ``C = 1 / (2 alpha)``.

    Parameters
    ----------
    tol : float
        Stop when the log pseudo-posterior increases by less than ``tol * 2 n`` (``2 n`` is
        its value's size at ``theta = 0``, where every hinge is 1).
    max_iter : int
        Most iterations.
    seed : int or numpy.random.Generator, optional
        Start ``theta ~ N(0, I)``.

    Returns
    -------
    Fit
        ``kind="point"``: the mode as one chain of one draw, the log pseudo-posterior after
        every iteration in ``objective_trace``, and in ``sample_stats`` its final value
        ``lp``, ``n_support_vectors`` (on or inside the margin, LIBSVM's count), ``n_margin``
        (on it), ``n_zero`` (lasso weights exactly 0) and ``n_released`` (active-set releases).
    """
    return _fit(model, "em", tol=tol, max_iter=max_iter, seed=seed)


@register("ecme", _supports_ecme)
def fit_ecme(model, *, tol: float = 1e-15, max_iter: int = 5000, seed=None) -> Fit:
    """Joint mode of the coefficients and the scale by ECME-SVM (Polson-Scott section 3.3).

    The scale is reported as the model's hyper-parameter (``nu``, or ``sigma2_u`` for
    :class:`~bayesvm.models.MixedSVM`); the rest is as in :func:`fit_em`.

    Parameters
    ----------
    tol : float
        Stop when the log pseudo-posterior increases by less than ``tol * 2 n``.
    max_iter : int
        Most iterations.
    seed : int or numpy.random.Generator, optional
        Start ``theta ~ N(0, I)``.
    """
    return _fit(model, "ecme", tol=tol, max_iter=max_iter, seed=seed)
