"""Newton's method for the mode of a probit posterior with few coefficients, compiled.

The reversible jump of :mod:`bayesvm.blocks.laplace_jump` fits the Laplace approximation of
``p(theta | gamma', y, g, eta)`` for each proposed set: on ringnorm (about 5 vectors), some 10
fits a sweep of about 5 Newton steps each, every step one log likelihood, gradient and
Hessian on 400 rows and a Cholesky factorisation of a matrix of 6 x 6. In NumPy such a step
is a score of calls of a few microseconds each whatever their size; here the whole fit is one
loop compiled with Numba (a dependency of PyTensor, so always installed), its ``log Phi`` that
of SciPy's ufunc (:mod:`bayesvm.compiled_special`). It takes the steps of
:func:`~bayesvm.blocks.laplace_jump.probit_laplace` below :data:`~bayesvm.blocks.laplace_jump.
MANY_COLUMNS` columns (a Hessian at every step), so the mode and factor are those of the NumPy
loop to round-off; it is used below :data:`~bayesvm.blocks.laplace_jump.COMPILED_COLUMNS`,
beyond which its Hessian, without BLAS, costs more than NumPy's calls.

Numba is imported, and the loops compiled (about 5 s), at the first fit of a process.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from bayesvm.compiled_special import real_function
from bayesvm.interrupts import interrupts_held

__all__ = ["compiled_probit", "CONVERGED", "NOT_POSITIVE_DEFINITE", "NOT_CONVERGED"]

#: The statuses of :func:`compiled_probit`'s Newton loop.
CONVERGED, NOT_POSITIVE_DEFINITE, NOT_CONVERGED = 0, 1, 2


@cache
def compiled_probit():
    """``(newton, log_likelihood)``, compiled at the first call (about 5 s).

    ``log_likelihood(design, y, theta)`` is ``sum_i log Phi(y_i c_i^T theta)``.

    ``newton(design, precision, y, starts, tolerance, max_iter) -> (theta, factor, status)`` is
    Newton's method for the mode of ``sum_i log Phi(y_i
    c_i^T theta) - theta^T R theta / 2`` (``design`` C-ordered, ``n x k``; ``R`` the prior
    precision, ``k x k``), started from whichever of 0 and the rows of ``starts`` the objective
    prefers, each step along ``H^-1 grad`` halved until it raises the objective by a quarter
    of the decrement's promise (Armijo). It stops where the decrement ``grad^T H^-1 grad`` is
    below ``tolerance`` or no step longer than ``1e-12`` of Newton's raises the objective
    (:data:`CONVERGED`), where ``H`` has no Cholesky factor (:data:`NOT_POSITIVE_DEFINITE`) or
    after ``max_iter`` steps (:data:`NOT_CONVERGED`). ``factor`` is the lower Cholesky factor
    of ``H = C^T W C + R`` at ``theta``, ``W`` the probit's curvature clipped to ``[0, 1]``
    (:func:`~bayesvm.blocks.laplace_jump.probit_laplace`).
    """
    import numba

    log_ndtr = real_function("log_ndtr")
    half_log_2pi = 0.5 * math.log(2.0 * math.pi)
    log_half = math.log(0.5)

    @numba.njit
    def row_times(design, i, theta):
        """``c_i^T theta``, the ``i``-th row of the design times ``theta``."""
        fitted = 0.0
        for c in range(design.shape[1]):
            fitted += design[i, c] * theta[c]
        return fitted

    @numba.njit
    def log_likelihood(design, y, theta):
        total = 0.0
        for i in range(design.shape[0]):
            total += log_ndtr(y[i] * row_times(design, i, theta), 1)
        return total

    @numba.njit
    def evaluate(design, precision, y, theta, z, log_cdf):
        """The objective at ``theta``; ``z = y * (C theta)`` and ``log Phi(z)`` in place."""
        n, k = design.shape
        total = 0.0
        for i in range(n):
            z[i] = y[i] * row_times(design, i, theta)
            log_cdf[i] = log_ndtr(z[i], 1)
            total += log_cdf[i]
        quadratic = 0.0
        for a in range(k):
            for b in range(k):
                quadratic += theta[a] * precision[a, b] * theta[b]
        return total - 0.5 * quadratic

    @numba.njit
    def factorise(matrix, factor):
        """The lower Cholesky factor of ``matrix`` (its lower triangle) into ``factor``; False
        where a pivot is not positive.
        """
        k = matrix.shape[0]
        for j in range(k):
            pivot = matrix[j, j]
            for m in range(j):
                pivot -= factor[j, m] * factor[j, m]
            if not pivot > 0.0:
                return False
            factor[j, j] = math.sqrt(pivot)
            for i in range(j + 1, k):
                entry = matrix[i, j]
                for m in range(j):
                    entry -= factor[i, m] * factor[j, m]
                factor[i, j] = entry / factor[j, j]
        return True

    @numba.njit
    def solve(factor, right, solution):
        """``(L L^T)^-1 right`` into ``solution``."""
        k = factor.shape[0]
        for i in range(k):
            entry = right[i]
            for m in range(i):
                entry -= factor[i, m] * solution[m]
            solution[i] = entry / factor[i, i]
        for i in range(k - 1, -1, -1):
            entry = solution[i]
            for m in range(i + 1, k):
                entry -= factor[m, i] * solution[m]
            solution[i] = entry / factor[i, i]

    @numba.njit
    def newton(design, precision, y, starts, tolerance, max_iter):
        n, k = design.shape
        theta, z, log_cdf = np.zeros(k), np.zeros(n), np.full(n, log_half)
        objective = n * log_half
        trial, trial_z, trial_cdf = np.empty(k), np.empty(n), np.empty(n)
        for s in range(starts.shape[0]):
            value = evaluate(design, precision, y, starts[s], trial_z, trial_cdf)
            if value > objective:
                theta[:], objective = starts[s], value
                z, trial_z = trial_z, z
                log_cdf, trial_cdf = trial_cdf, log_cdf
        hessian, factor = np.empty((k, k)), np.zeros((k, k))
        gradient, step = np.empty(k), np.empty(k)
        for _ in range(max_iter):
            hessian[:, :] = precision
            for a in range(k):
                gradient[a] = 0.0
                for b in range(k):
                    gradient[a] -= precision[a, b] * theta[b]
            for i in range(n):
                mills = math.exp(-0.5 * z[i] * z[i] - half_log_2pi - log_cdf[i])
                weight = min(max(mills * (mills + z[i]), 0.0), 1.0)
                residual = y[i] * mills  # y_i = +-1: the same products as y_i c_ia mills
                for a in range(k):
                    gradient[a] += design[i, a] * residual
                    weighted = weight * design[i, a]
                    for b in range(a + 1):
                        hessian[a, b] += weighted * design[i, b]
            if not factorise(hessian, factor):
                return theta, factor, NOT_POSITIVE_DEFINITE
            solve(factor, gradient, step)
            decrement = 0.0
            for a in range(k):
                decrement += gradient[a] * step[a]
            if decrement < tolerance:
                return theta, factor, CONVERGED
            length, found = 1.0, False
            while length >= 1e-12:
                for a in range(k):
                    trial[a] = theta[a] + length * step[a]
                value = evaluate(design, precision, y, trial, trial_z, trial_cdf)
                if value > objective and value >= objective + 0.25 * length * decrement:
                    found = True
                    break
                length *= 0.5
            if not found:  # no step raises the objective: the mode to working precision
                return theta, factor, CONVERGED
            theta[:], objective = trial, value
            z, trial_z = trial_z, z
            log_cdf, trial_cdf = trial_cdf, log_cdf
        return theta, factor, NOT_CONVERGED

    one = np.ones((1, 1))  # compiled here, for the C-ordered float arrays of every call
    with interrupts_held():  # Ctrl-C in Numba's compilation would be lost
        newton(one, one, one[0], one, 1.0, 1)
        log_likelihood(one, one[0], one[0])
    return newton, log_likelihood
