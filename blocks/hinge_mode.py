"""The exact M-step of EM-SVM for a Gaussian prior: the stabilised, accelerated step
(Polson-Scott 2011, s. 3.1-3.2).

With ``a_i = y_i c_i`` the rows of the design times the labels, observation ``i`` has residual
``r_i = 1 - a_i^T theta``. The log pseudo-posterior in ``theta`` with the hinge's ``a`` (and a
lasso's ``omega``) integrated out is

    ``F(theta) = -2 sum_i max(0, r_i) - sum_j P_j theta_j^2 / 2 - sum_j L_j |theta_j|``

for the prior's quadratic precisions ``P_j`` and L1 weights ``L_j`` at the current values of
the other blocks (``penalty`` of the prior blocks: ``P = 1 / sigma2_beta`` for ``beta``,
``1 / v_j`` for a ridge, ``L_j = 1 / (nu c_j)`` for a lasso); :func:`hinge_objective` evaluates
it. The step here is for ``L = 0`` (a prior with an L1 part has its exact mode by the linear
program of :mod:`bayesvm.blocks.hinge_lp`). It is the EM step of the blocks (E-step weights
``1 / |r_i|``, weighted least squares M-step) made exact where the hinge's weights are
infinite, followed by a Newton step:

Stability (section 3.2)
    Support vectors get infinite weight (identical rows are merged into one, weighted by their
    count: :func:`make_hinge_mode_step`). Observations with ``r_i = 0`` (to round-off) form the
    set ``S`` and enter the restricted least squares of eq. (15) as equality constraints
    ``a_i^T theta = 1`` with Lagrange multipliers: the KKT system is solved with the Cholesky
    factor of ``B_-s`` and the small Schur complement ``A_s B_-s^-1 A_s^T``, whose pivoted
    factorisation (QR with column pivoting of ``L^-1 A_s^T``, LAPACK ``dgeqp3``, for ``B_-s =
    L L^T``) keeps only linearly independent support vectors (at most ``p + m``, as the paper
    notes); a dependent one stays at ``r_i = 0`` through the others. Observations with
    ``0 < |r_i| < SV_TOL`` are tried as constraints too and fall back to their (finite) EM
    weight if their multiplier is invalid or ``F`` would decrease.

Active-set rule (added here; plain EM keeps a support vector forever)
    With ``mu_i`` the coefficient of ``a_i`` in the stationarity condition
    ``D theta = sum_i mu_i a_i``, the hinge requires ``mu_i = 2 h_i`` with ``h_i`` in its
    subgradient, ``[0, 1]`` at ``r_i = 0``. When a support vector's multiplier leaves that range
    by more than ``RELEASE_TOL``, the worst offender is released: its term is replaced by its
    exact linear piece (``0`` if ``mu_i < 0``, ``-2 r_i`` if ``mu_i > 2``) and the step is
    solved again. The constrained value function is concave in the constraint level with slope
    ``mu_i - kappa``, so the new maximiser lies on the side where that piece is exact and ``F``
    still increases (Nocedal-Wright Thm. 16.5). One release per step, in the Newton step below,
    whose multipliers are exact (the EM surrogate's are not until EM has converged, and
    releasing on them made EM and the Newton step undo each other).

Newton step (added here, after each EM step)
    EM converges linearly, and very slowly when fewer than ``p + m`` points are on the margin
    (the weights ``1/|r_i|`` of points off the margin curve the surrogate where ``F`` is
    flat), or when a support vector's multiplier is near 0 or 2 (its residual shrinks by
    ``|mu_i - 1|`` per iteration). On the current sign pattern ``F`` is a concave quadratic:
    ``-2 sum_{r_i > 0} r_i`` plus the prior, with ``S`` held at ``r_i = 0``. Its maximiser
    (KKT system, LDL^T by LAPACK ``dsysv``) gives the exact multipliers for the release rule,
    and the step to it is taken through an exact line search of the concave, piecewise
    quadratic ``F`` (it stops at a kink, where a point joins ``S`` at the next E-step). Once
    the pattern is right the step lands on the exact mode, so EM converges in finitely many
    iterations.

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

from bayesvm.linalg import cholesky_lower, cholesky_solve, triangular_solve

__all__ = ["make_hinge_mode_step", "hinge_objective"]

# |r_i| below this: observation i is tried as a support vector (constraint r_i = 0).
SV_TOL = 1e-6
# A multiplier outside its valid range by more than this is released.
RELEASE_TOL = 1e-9
# Relative pivot below which a support vector is linearly dependent on the others.
PIVOT_TOL = 1e-10
# Residuals below this (relative to the size of a_i^T theta) are exactly 0 up to round-off.
EXACT_TOL = 1e-11


def hinge_objective(A, theta, quadratic, l1, counts=None) -> float:
    """``F(theta)`` of the module docstring, for rows ``A = diag(y) C`` (each ``counts``
    times; default once).
    """
    hinge = np.maximum(0.0, 1.0 - A @ theta)
    return (
        -2.0 * float(np.sum(hinge) if counts is None else counts @ hinge)
        - 0.5 * float(np.sum(quadratic * theta**2))
        - float(np.sum(l1 * np.abs(theta)))
    )


class _Solution(NamedTuple):
    theta: np.ndarray
    support: np.ndarray  # indices kept as independent constraints
    mu: np.ndarray  # their multipliers


def make_hinge_mode_step(A: np.ndarray):
    """Build the exact M-step for the hinge with rows ``A = diag(y) C``.

    Returns ``step(theta, quadratic) -> (theta, n_released)``: the EM step with the
    stabilisation, active-set rule and Newton step of the module docstring, from ``theta``,
    for the prior's quadratic precisions ``quadratic`` (``P``; ``L = 0``); ``n_released``
    counts the active-set releases (0 or 1).

    Identical rows are merged into one with their count ``c_i`` as its weight: ``F`` is
    ``-2 sum_i c_i max(0, r_i) - ...``, the EM weight ``c_i / |r_i|`` and the multiplier's
    range ``[0, 2 c_i]``. Kept apart, the copies on the margin would be dependent constraints
    of which one carries the multiplier of all, and the release rule would see it leave
    ``[0, 2]`` where the copies together are still within theirs.
    """
    A, counts = np.unique(A, axis=0, return_counts=True)
    counts = counts.astype(float)
    abs_A = np.abs(A)
    k = A.shape[1]

    def restricted_least_squares(weights, precision, constrained) -> _Solution:
        """The M-step with the support vectors ``constrained`` as constraints: eq. (15)."""
        quad = ~constrained
        A_q = A[quad]
        w = weights[quad]
        B = A_q.T @ (w[:, None] * A_q)
        B[np.diag_indices(k)] += precision
        factor = cholesky_lower(B)
        theta = cholesky_solve(factor, A_q.T @ (counts[quad] + w))
        support = np.flatnonzero(constrained)
        mu = np.empty(0)
        if support.size:
            # With B_-s = L L^T and G = L^-1 A_s^T, the Schur complement is G^T G: QR with
            # column pivoting of G keeps the support vectors that pivoted Cholesky of G^T G
            # would, in O(k^2 |S|) rather than O(|S|^2 k) (hundreds of points can sit on the
            # margin where rows repeat).
            G = triangular_solve(factor, np.ascontiguousarray(A[support].T))
            qr, pivots, _, _, _ = lapack.dgeqp3(G)
            pivot_sizes = np.diag(qr) ** 2  # each pivot column's squared residual, non-increasing
            tol = PIVOT_TOL * max(float(pivot_sizes[0]), np.finfo(float).tiny)
            keep = np.sort(pivots[: np.count_nonzero(pivot_sizes > tol)] - 1)
            support, G_s = support[keep], G[:, keep]
            schur_factor = cholesky_lower(G_s.T @ G_s)
            mu = cholesky_solve(schur_factor, 1.0 - A[support] @ theta)
            theta = theta + triangular_solve(factor, G_s @ mu, transpose=True)
        return _Solution(theta, support, mu)

    def step(theta: np.ndarray, quadratic: np.ndarray) -> tuple[np.ndarray, int]:
        no_l1 = np.zeros(k)

        def objective(value: np.ndarray) -> float:
            return hinge_objective(A, value, quadratic, no_l1, counts)

        def line_search(start: np.ndarray, target: np.ndarray) -> np.ndarray:
            """The best point of ``F`` on the segment from ``start`` to ``target`` (exact)."""
            direction = target - start
            t = _concave_line_search(
                A @ direction, 1.0 - A @ start, counts, start, direction, quadratic
            )
            candidate = start + t * direction
            return candidate if objective(candidate) >= objective(start) else start

        def em_step(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """E-step and stabilised M-step; returns ``(theta, support)``."""
            r = 1.0 - A @ theta
            exact = np.abs(r) <= EXACT_TOL * (1.0 + abs_A @ np.abs(theta))
            new = (np.abs(r) <= SV_TOL) & ~exact
            with np.errstate(divide="ignore"):
                weights = counts / np.abs(r)  # eq. (14); inf only on constrained points

            def attempt(constrained: np.ndarray) -> _Solution:
                constrained = constrained.copy()
                while True:
                    sol = restricted_least_squares(weights, quadratic, constrained)
                    invalid = np.maximum(-sol.mu, sol.mu - 2.0 * counts[sol.support]) > RELEASE_TOL
                    # New snaps that are dependent or have invalid multipliers keep their
                    # finite EM weights (an exact minorisation).
                    drop = constrained & new
                    drop[sol.support[~invalid]] = False
                    if not drop.any():
                        return sol
                    constrained[drop] = False

            before = objective(theta)
            sol = attempt(exact | new)
            if objective(sol.theta) < before and new.any():
                # A new snap did not pay off: EM weights for every point not exactly at 0.
                sol = attempt(exact)
            theta_new = sol.theta
            if objective(theta_new) < before:  # degenerate cases only
                theta_new = line_search(theta, theta_new)
            return theta_new, sol.support

        def newton_step(theta: np.ndarray, support: np.ndarray) -> tuple[np.ndarray, int]:
            """Maximise ``F`` on the current sign pattern (see the module docstring)."""
            r = 1.0 - A @ theta
            exact = np.abs(r) <= EXACT_TOL * (1.0 + abs_A @ np.abs(theta))
            positive = (r > 0.0) & ~exact
            gradient = 2.0 * counts[positive] @ A[positive]

            def solve(rows: np.ndarray, rhs: np.ndarray):
                # [[D, A_s^T], [A_s, 0]] (theta, -mu) = (rhs, 1), solved by LDL^T
                kkt = np.zeros((k + rows.size, k + rows.size))
                kkt[np.diag_indices(k)] = quadratic
                kkt[k:, :k] = A[rows]
                kkt[:k, k:] = A[rows].T
                _, _, solution, info = lapack.dsysv(kkt, np.concatenate([rhs, np.ones(rows.size)]))
                return solution[:k], -solution[k:], info

            target, mu, info = solve(support, gradient)
            released = 0
            violation = np.maximum(-mu, mu - 2.0 * counts[support])
            if info == 0 and violation.size and violation.max() > RELEASE_TOL:
                i = int(np.argmax(violation))  # release the worst support vector
                kappa = 0.0 if mu[i] < 0.0 else 2.0 * counts[support[i]]
                target, _, info = solve(np.delete(support, i), gradient + kappa * A[support[i]])
                released = 1
            if info != 0 or not np.all(np.isfinite(target)):
                return theta, 0
            candidate = line_search(theta, target)
            if objective(candidate) > objective(theta):
                return candidate, released
            return theta, 0

        theta, support = em_step(theta)
        return newton_step(theta, support)

    return step


def _concave_line_search(slope, r, counts, theta, d, precision) -> float:
    """Maximise the concave ``phi(t) = F(theta + t d)`` over ``t`` in ``[0, 1]`` exactly.

    ``phi(t) = -2 sum_i c_i (r_i - t s_i)_+ - sum_j P_j (theta_j + t d_j)^2 / 2`` is piecewise
    quadratic; its derivative is affine between the kinks ``r_i / s_i`` and non-increasing,
    so a bisection over the sorted kinks finds the piece where it changes sign.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        kinks = r / slope
    kinks = kinks[np.isfinite(kinks) & (kinks > 0.0) & (kinks < 1.0)]
    knots = np.unique(np.concatenate([[0.0, 1.0], kinks]))
    curvature = float(np.sum(precision * d**2))
    linear_d = float(np.sum(precision * theta * d))

    def intercept(lo: float, hi: float) -> float:
        """``c`` with ``phi'(t) = c - t * curvature`` on ``(lo, hi)``."""
        mid = 0.5 * (lo + hi)
        positive = r - mid * slope > 0.0
        return 2.0 * float(counts[positive] @ slope[positive]) - linear_d

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
