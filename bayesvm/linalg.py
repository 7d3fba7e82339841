"""Small dense linear algebra on LAPACK directly (no checks, no copies): the hot loops of the
VB, Gibbs and EM backends factor a precision matrix every iteration and never invert it.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from scipy.linalg import blas, lapack
from threadpoolctl import ThreadpoolController

__all__ = [
    "cholesky_lower",
    "cholesky_solve",
    "triangular_solve",
    "log_det_from_cholesky",
    "weighted_gram",
    "quadratic_forms",
    "matrix_times",
    "transpose_times",
    "row_chunks",
    "inverse_factor",
    "inverse_diagonal",
    "log_cholesky",
    "from_log_cholesky",
    "blas_threads_for",
    "automatic_threads",
    "usable_cores",
    "available_memory",
    "MULTITHREAD_MIN_FLOPS",
]

# Work per iteration (floating-point operations) from which a fit uses every usable core's
# BLAS thread (:func:`automatic_threads`). Measured on 2 cores with default VB fits of
# ``MixedSVM.penalized`` at n = 1e5: at d = 100 (2e9 flops) two threads took 1.8-2.0 s against
# one thread's 2.4-2.5 s on an idle machine, but 5.4-6.0 s against 2.2-2.6 s with the other
# core busy (a BLAS thread that waits for a core stalls the others); at d = 300 (1.8e10) two
# threads took 5.3 s against 8.9 s, idle.
MULTITHREAD_MIN_FLOPS = 1e10

# Bytes of the row chunks that :func:`weighted_gram` and :func:`quadratic_forms` stream through
# (a few MiB: the chunk stays in cache between its scaling and its BLAS call).
CHUNK_BYTES = 4 << 20


# The thread pools as last inspected, and how many modules were imported then.
_POOLS: list = [-1, None]


def _controller() -> ThreadpoolController:
    """The loaded thread pools, inspected again only after new modules were imported.

    Inspecting takes about 2.5 ms, a quarter of a small VB fit, so it is not done per fit; but
    a module imported since (PyTensor's compiled C code, say) may have loaded another BLAS,
    such as the system OpenBLAS that NUTS links to, whose threads must be limited too.
    """
    if _POOLS[0] != len(sys.modules):
        _POOLS[:] = [len(sys.modules), ThreadpoolController()]
    return _POOLS[1]


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity), not the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (``MemAvailable`` of ``/proc/meminfo``,
    else the machine's free pages), or None where the system does not say.
    """
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def automatic_threads(flops_per_iteration: float) -> int:
    """BLAS threads for a fit whose iterations cost ``flops_per_iteration``: one below
    :data:`MULTITHREAD_MIN_FLOPS`, every usable core (:func:`usable_cores`) from it.

    The count follows the problem and the cores this process may use, never the machine's
    load: sums split between threads round differently, so draws would change with the load,
    and the same call must give the same numbers on an idle and a busy machine. Below the
    threshold one thread is about as fast as several on an idle machine and much faster on a
    busy one; on a busy machine give ``threads=1`` to a larger fit.
    """
    cores = usable_cores()
    if flops_per_iteration < MULTITHREAD_MIN_FLOPS or cores < 2:
        return 1
    return cores


def blas_threads_for(
    flops_per_iteration: float, threads: int | None = None, *, every_blas: bool = False
):
    """Context in which a fit runs, with its BLAS thread pools limited.

    NumPy's and SciPy's wheels each bring an OpenBLAS. Where an iteration alternates calls
    into both with threads in each, each pool's idle threads spin between its calls and take
    the cores from the other's (at n = 1e5, d = 100, ``C^T W C`` and ``dg(C Sigma C^T)`` took
    120 ms against 85 ms on one thread). So bayesvm's linear algebra runs in SciPy's BLAS alone
    (this module's functions, the designs' products included) and the threads go to that pool;
    every other BLAS gets one. Where SciPy's BLAS is not its own (one shared BLAS, e.g.
    conda's), they all get them.

    Parameters
    ----------
    flops_per_iteration : float
        The fit's work per iteration (a model's ``flops_per_iteration``).
    threads : int, optional
        Threads to use, capped by :func:`usable_cores`; default :func:`automatic_threads`.
    every_blas : bool
        Give every BLAS the threads: for a program that calls one BLAS alone (a peer timed
        beside bayesvm, such as a NumPy script or scikit-learn).
    """
    if threads is None:
        threads = automatic_threads(flops_per_iteration)
    threads = min(threads, usable_cores())
    controller = _controller()
    limits = {pool.filepath: 1 for pool in controller.lib_controllers}
    scipys = [path for path in limits if _is_scipys(path)]
    threaded = limits if every_blas or not scipys else scipys
    for path in threaded:
        limits[path] = threads
    return controller.limit(limits=limits, user_api="blas")


def _is_scipys(path: str) -> bool:
    """Whether the BLAS at ``path`` is the one SciPy's wheel brings (in ``scipy.libs`` or
    SciPy's own folder).
    """
    site = os.path.dirname(os.path.dirname(os.path.dirname(blas.__file__)))
    return os.path.relpath(path, site).split(os.sep)[0] in ("scipy", "scipy.libs")


def matrix_times(matrix_t: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``X theta`` for ``theta`` of shape ``(..., K)``, given ``X^T`` (``K x n``, Fortran
    order): shape ``(..., n)``, by SciPy's BLAS (:func:`blas_threads_for`).
    """
    theta = np.asarray(theta, dtype=float)
    if theta.ndim == 1:
        return blas.dgemv(1.0, matrix_t, theta, trans=1)
    rows = theta.reshape(-1, theta.shape[-1])
    product = blas.dgemm(1.0, matrix_t, rows, trans_a=1, trans_b=1).T
    return product.reshape(*theta.shape[:-1], matrix_t.shape[1])


def transpose_times(matrix_t: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``X^T v`` for ``v`` of shape ``(n,)``, given ``X^T`` (``K x n``, Fortran order), by
    SciPy's BLAS (:func:`blas_threads_for`).
    """
    return blas.dgemv(1.0, matrix_t, np.asarray(values, dtype=float))


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
    return 2.0 * float(np.log(np.diag(factor)).sum())


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


def row_chunks(n_rows: int, n_columns: int):
    """Slices of about :data:`CHUNK_BYTES` of an ``n_rows x n_columns`` matrix of doubles."""
    size = max(256, CHUNK_BYTES // (8 * max(n_columns, 1)))
    return [slice(start, min(start + size, n_rows)) for start in range(0, n_rows, size)]


def weighted_gram(matrix_t: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``X^T diag(weights) X`` for ``weights >= 0``, given ``X^T`` (``K x n``, Fortran order).

    A symmetric rank-k update (BLAS ``dsyrk``: half the flops of a matrix product) over row
    chunks of ``diag(weights)^1/2 X`` that stay in cache, so no ``n x K`` temporary is made.
    Measured at n = 1e5, K = 101 on one thread: 35 ms against 50-90 ms for
    ``X^T @ (weights[:, None] * X)``. Where most weights are 0 the other rows are gathered
    first, so that the work is theirs alone.
    """
    nonzero = np.flatnonzero(weights)
    if nonzero.size < weights.size // 2:  # most rows weigh nothing: gather the others
        matrix_t, weights = matrix_t[:, nonzero], weights[nonzero]
    k, n = matrix_t.shape
    root = np.sqrt(weights)
    gram = np.zeros((k, k), order="F")
    for rows in row_chunks(n, k):
        gram = blas.dsyrk(
            1.0, matrix_t[:, rows] * root[rows], beta=1.0, c=gram, lower=1, overwrite_c=1
        )
    # dsyrk wrote the lower triangle only: add the (zero) upper one's transpose and halve the
    # doubled diagonal, exact in floating point and a third of np.tril's time at K = 11 to 101
    gram += gram.T
    gram.reshape(-1, order="F")[:: k + 1] *= 0.5  # the diagonal, a view of the Fortran array
    return gram


def quadratic_forms(inverse: np.ndarray, matrix_t: np.ndarray) -> np.ndarray:
    """``dg(X P^-1 X^T)_i = ||L^-1 x_i||^2`` given ``L^-1`` (lower triangular, ``P = L L^T``)
    and ``X^T`` (``K x n``, Fortran order): a triangular product (BLAS ``dtrmm``, ``n K^2``
    flops) over column chunks, instead of a triangular solve against all of ``X^T``.
    """
    k, n = matrix_t.shape
    forms = np.empty(n)
    for rows in row_chunks(n, k):
        half = blas.dtrmm(1.0, inverse, matrix_t[:, rows], lower=1)
        forms[rows] = np.einsum("ij,ij->j", half, half)
    return forms


def log_cholesky(covariance: np.ndarray) -> np.ndarray:
    """Unconstrained coordinates of covariance matrices ``(..., d, d)``: the log of the
    diagonal of each lower Cholesky factor, then its part below the diagonal row by row
    (``np.tril_indices(d, -1)``), ``(..., d (d + 1) / 2)``.
    """
    factor = np.linalg.cholesky(covariance)
    rows, columns = np.tril_indices(factor.shape[-1], -1)
    log_diagonal = np.log(np.diagonal(factor, axis1=-2, axis2=-1))
    return np.concatenate([log_diagonal, factor[..., rows, columns]], axis=-1)


def from_log_cholesky(z: np.ndarray, d: int) -> tuple[np.ndarray, float]:
    """The covariance ``L L^T`` at :func:`log_cholesky`'s coordinates ``z`` and ``log |d
    Sigma / d z| = d log 2 + sum_j (d - j + 2) log L_jj``, ``j = 1..d`` (``L``'s entries, then
    ``dL_jj / d log L_jj = L_jj``).
    """
    rows, columns = np.tril_indices(d, -1)
    factor = np.diag(np.exp(z[:d]))
    factor[rows, columns] = z[d:]
    return factor @ factor.T, d * np.log(2.0) + float((d + 1.0 - np.arange(d)) @ z[:d])
