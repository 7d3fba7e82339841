"""The exact M-step of EM-SVM: the stabilised, accelerated step (Polson-Scott 2011, s. 3.1-3.2).

With ``a_i = y_i c_i`` the rows of the design times the labels, observation ``i`` has residual
``r_i = 1 - a_i^T theta``. Given the prior's quadratic precisions ``P_j`` and L1 weights
``L_j`` at the current values of the other blocks (``penalty`` of the prior blocks:
``P = 1 / sigma2_beta`` for ``beta``, ``1 / v_j`` for a ridge, ``L_j = 1 / (nu c_j)`` for a
lasso), one step increases

    ``F(theta) = -2 sum_i max(0, r_i) - sum_j P_j theta_j^2 / 2 - sum_j L_j |theta_j|``,

the log pseudo-posterior in ``theta`` with the hinge's ``a`` and the Laplace's ``omega``
integrated out. The step is the EM step of the blocks (E-step weights ``1 / |r_i|`` and
``1/omega_j = nu c_j / |u_j|``, weighted least squares M-step) made exact where the blocks'
weights are infinite, followed by a Newton step:

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
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack

from bayesvm.linalg import cholesky_lower, cholesky_solve

__all__ = ["make_hinge_mode_step", "hinge_objective"]

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


def hinge_objective(A, theta, quadratic, l1) -> float:
    """``F(theta)`` of the module docstring, for rows ``A = diag(y) C``."""
    return (
        -2.0 * float(np.sum(np.maximum(0.0, 1.0 - A @ theta)))
        - 0.5 * float(np.sum(quadratic * theta**2))
        - float(np.sum(l1 * np.abs(theta)))
    )


class _Plan(NamedTuple):
    """Which observations and coefficients are constrained, weighted or released."""

    support: np.ndarray  # bool (n,): constraint r_i = 0
    zero: np.ndarray  # bool (k,): theta_j held at 0 (lasso only)
    coef: int  # released coefficient (-1: none)
    sign: float  # its linear piece: -sign * L_j u_j


class _Solution(NamedTuple):
    theta: np.ndarray
    support: np.ndarray  # indices kept as independent constraints
    mu: np.ndarray  # their multipliers
    zero: np.ndarray  # indices held at 0
    gradient: np.ndarray  # gradient of the rest of the surrogate at those coefficients


def make_hinge_mode_step(A: np.ndarray):
    """Build the exact M-step for the hinge with rows ``A = diag(y) C``.

    Returns ``step(theta, quadratic, l1) -> (theta, n_released)``: the EM step with the
    stabilisation, active-set rule and Newton step of the module docstring, from ``theta``,
    for the prior's quadratic precisions ``quadratic`` and L1 weights ``l1`` (``P`` and ``L``);
    ``n_released`` counts the active-set releases (0 or 1 per rule).
    """
    abs_A = np.abs(A)
    n, k = A.shape
    cols = np.arange(k)

    def em_curvature(theta: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """``L_j / |theta_j|``: the EM curvature of ``L_j |theta_j|`` (inf at 0, 0 if no L)."""
        curvature = np.zeros(k)
        on = weight > 0.0
        with np.errstate(divide="ignore"):
            curvature[on] = weight[on] / np.abs(theta[on])
        return curvature

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

    def step(theta: np.ndarray, quadratic: np.ndarray, l1: np.ndarray) -> tuple[np.ndarray, int]:
        penalised = l1 > 0.0
        lasso = bool(penalised.any())

        def objective(value: np.ndarray) -> float:
            return hinge_objective(A, value, quadratic, l1)

        def line_search(start: np.ndarray, target: np.ndarray) -> np.ndarray:
            """The best point of ``F`` on the segment from ``start`` to ``target`` (exact)."""
            direction = target - start
            t = _concave_line_search(
                A @ direction, 1.0 - A @ start, start, direction, quadratic, l1
            )
            candidate = start + t * direction
            return candidate if objective(candidate) >= objective(start) else start

        def em_step(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
            """E-step and stabilised M-step; returns ``(theta, support, released)``."""
            r = 1.0 - A @ theta
            exact_r = np.abs(r) <= EXACT_TOL * (1.0 + abs_A @ np.abs(theta))
            new_r = (np.abs(r) <= SV_TOL) & ~exact_r
            exact_z = np.zeros(k, dtype=bool)
            new_z = np.zeros(k, dtype=bool)
            if lasso:
                size = np.abs(theta[penalised]) * l1[penalised]
                exact_z[penalised] = size == 0.0
                new_z[penalised] = (size <= ZERO_TOL * float(size.max())) & ~exact_z[penalised]
            with np.errstate(divide="ignore"):
                weights = 1.0 / np.abs(r)  # eq. (14); inf only on constrained points
            # lasso: (1/omega_j) / (nu^2 c_j^2) with 1/omega_j = nu c_j / |u_j| (Corollary 4)
            em_precision = quadratic + em_curvature(theta, l1)

            def solve(plan: _Plan) -> _Solution:
                precision, linear = em_precision, np.zeros(k)
                if plan.coef >= 0:
                    precision = em_precision.copy()
                    precision[plan.coef] = 0.0
                    linear[plan.coef] = -plan.sign * l1[plan.coef]
                return restricted_least_squares(weights, precision, linear, plan)

            def attempt(support: np.ndarray, zero: np.ndarray) -> tuple[_Solution, int]:
                plan = _Plan(support.copy(), zero.copy(), -1, 0.0)
                while True:
                    sol = solve(plan)
                    sv_bad = np.maximum(-sol.mu, sol.mu - 2.0) > RELEASE_TOL
                    bound = l1[sol.zero]
                    z_violation = (np.abs(sol.gradient) - bound) / np.where(bound > 0, bound, 1.0)
                    # New snaps that are dependent or have invalid multipliers keep their
                    # finite EM weights (an exact minorisation).
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
                except np.linalg.LinAlgError:  # no curvature left for u_j: keep it at 0 now
                    return sol, 0

            before = objective(theta)
            sol, released = attempt(exact_r | new_r, exact_z | new_z)
            if objective(sol.theta) < before and (new_r.any() or new_z.any()):
                # A new snap did not pay off: EM weights for every item not exactly at 0.
                sol, released = attempt(exact_r, exact_z)
            theta_new = sol.theta
            if objective(theta_new) < before:  # degenerate cases only
                theta_new = line_search(theta, theta_new)
            return theta_new, sol.support, released

        def newton_step(theta: np.ndarray, support: np.ndarray) -> tuple[np.ndarray, int]:
            """Maximise ``F`` on the current sign pattern (see the module docstring)."""
            r = 1.0 - A @ theta
            exact = np.abs(r) <= EXACT_TOL * (1.0 + abs_A @ np.abs(theta))
            positive = (r > 0.0) & ~exact
            precision = quadratic + em_curvature(theta, l1)
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

            best, best_value, best_released = theta, objective(theta), 0
            free = (l1 == 0.0) | (theta != 0.0)
            tries = [free]
            if lasso:
                # also try the lasso weights that EM is shrinking towards 0 at exactly 0
                size = np.abs(theta) * l1
                tries.append(free & ~(penalised & (size <= ZERO_TOL * float(size.max()))))
            for index, free_mask in enumerate(tries):
                if index and np.array_equal(free_mask, tries[0]):
                    continue
                target, released = target_for(cols[free_mask])
                if target is None:
                    continue
                candidate = line_search(theta, target)
                value = objective(candidate)
                if value > best_value:
                    best, best_value, best_released = candidate, value, released
            return best, best_released

        theta, support, released = em_step(theta)
        theta, released_newton = newton_step(theta, support)
        return theta, released + released_newton

    return step


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
