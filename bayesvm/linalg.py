"""Small dense linear algebra on LAPACK directly (no checks, no copies): the hot loops of the
VB, Gibbs and EM backends factor a precision matrix every iteration and never invert it.
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import cache

import numpy as np
from scipy.linalg import blas, lapack
from threadpoolctl import ThreadpoolController

__all__ = [
    "cholesky_lower",
    "cholesky_solve",
    "triangular_solve",
    "log_det_from_cholesky",
    "weighted_gram",
    "inverse_factor",
    "inverse_diagonal",
    "blas_threads_for",
]

# Below this many coefficients a multi-threaded BLAS spends more on thread hand-offs than it
# saves (a VB fit at n = 200, d = 10 ran 5x slower on 2 busy cores with threads on).
SMALL_SYSTEM = 200


@cache
def _controller() -> ThreadpoolController:
    # Inspecting the loaded BLAS libraries takes milliseconds: do it once, not per fit.
    return ThreadpoolController()


def blas_threads_for(n_coefficients: int):
    """Context in which the hot loop runs: single-threaded BLAS for small systems."""
    if n_coefficients < SMALL_SYSTEM:
        return _controller().limit(limits=1, user_api="blas")
    return nullcontext()


def cholesky_lower(precision: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor ``L`` of a symmetric positive-definite matrix (``P = L L^T``)."""
    factor, info = lapack.dpotrf(precision, lower=1, clean=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"matrix is not positive definite (LAPACK dpotrf info={info})")
    return factor


def cholesky_solve(factor: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``P x = rhs`` given the lower Cholesky factor of ``P``."""
    solution, _ = lapack.dpotrs(factor, rhs, lower=1)
    return solution


def triangular_solve(factor: np.ndarray, rhs: np.ndarray, transpose: bool = False) -> np.ndarray:
    """Solve ``L x = rhs`` (or ``L^T x = rhs`` with ``transpose``) for lower-triangular ``L``."""
    solution, _ = lapack.dtrtrs(factor, rhs, lower=1, trans=int(transpose))
    return solution


def log_det_from_cholesky(factor: np.ndarray) -> float:
    """``log |P|`` from the lower Cholesky factor of ``P``."""
    return 2.0 * float(np.sum(np.log(np.diag(factor))))


def inverse_factor(factor: np.ndarray) -> np.ndarray:
    """``L^-1`` for a lower Cholesky factor ``L`` of ``P``, so that ``P^-1 = L^-T L^-1``
    (``D^3 / 3`` flops, a sixth of solving for the whole ``P^-1``).
    """
    inverse, info = lapack.dtrtri(factor, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"singular Cholesky factor (LAPACK dtrtri info={info})")
    return inverse


def inverse_diagonal(factor: np.ndarray) -> np.ndarray:
    """``dg(P^-1)`` from the lower Cholesky factor of ``P``: squared column norms of ``L^-1``."""
    inverse = inverse_factor(factor)
    return np.einsum("ij,ij->j", inverse, inverse)


def weighted_gram(X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``X^T diag(weights) X`` for ``weights >= 0`` by a symmetric rank-k update (BLAS
    ``dsyrk``: half the flops of a matrix product), symmetrised.
    """
    gram = blas.dsyrk(1.0, np.sqrt(weights)[:, None] * X, trans=1, lower=1)
    return np.tril(gram) + np.tril(gram, -1).T
