"""ML-II: the variational bound's gradient in the kernel's hyperparameters (Wenzel et al. 4.3).

With ``q(u) = N(mu, S)`` and the weights ``w_i = E[1/lambda_i] = alpha_i^-1/2`` held fixed, the
parts of the bound (8) that depend on the hyperparameters ``h`` (over a minibatch counted ``c =
n / |S|`` times) are

    ``J(h) = c sum_i [y_i a_i - w_i ((1 - y_i a_i)^2 + b_i + k_ii - c_i) / 2]
    - KL(q(u) || N(0, K_mm))``

with ``kappa = K_nm K_mm^-1``, ``a = kappa mu``, ``b_i = kappa_i S kappa_i^T`` and ``c_i = kappa_i
K_mi`` (so ``k_ii - c_i = K~_ii``). Writing ``E = dK_nm``, ``F = dK_mm``, ``e = dk_ii``, ``A =
K_mm^-1``, ``nu = A mu``, ``g_i = c y_i (w_i (1 - y_i a_i) + 1)`` and ``B = A S kappa^T W``:

    ``dJ = <E, g nu^T - c B^T + c W kappa> + <F, -(kappa^T g) nu^T + c (B kappa)^T
    - c kappa^T W kappa / 2 - (A - A S A - nu nu^T) / 2> - c <e, w> / 2``

(``dkappa = (E - kappa F) A``; ``dKL = tr(F (A - A S A - nu nu^T)) / 2``). The hyperparameters
are moved on the log scale (:func:`bayesvm.vb.svi.fit_svi`).
"""

from __future__ import annotations

import numpy as np

from bayesvm.linalg import cholesky_lower, cholesky_solve, log_det_from_cholesky
from bayesvm.models.kernels import rbf_log_derivatives

__all__ = ["hyperparameter_objective"]


def hyperparameter_objective(
    locations, X, y, weights, scale: float, mean, covariance, lengthscale, variance, jitter
) -> tuple[float, np.ndarray]:
    """``J(h)`` and its gradient in ``(log lengthscale, log variance)`` (module docstring).

    Parameters
    ----------
    locations : ndarray (m, d)
        ``Z``.
    X, y : ndarray (s, d), (s,)
        The rows (a minibatch or the whole set) and their labels.
    weights : ndarray (s,)
        ``w_i = E[1/lambda_i]``.
    scale : float
        ``c``: how many times each row counts.
    mean, covariance : ndarray (m,), (m, m)
        ``q(u)``'s.
    lengthscale, variance : float
        The RBF kernel's; ``K_mm`` has ``jitter * variance`` added to its diagonal.
    """
    K_mm, dK_mm_l, dK_mm_v = rbf_log_derivatives(locations, locations, lengthscale, variance)
    jitter = jitter * variance
    K_mm.flat[:: K_mm.shape[0] + 1] += jitter
    dK_mm_v.flat[:: K_mm.shape[0] + 1] += jitter
    K_nm, dK_nm_l, dK_nm_v = rbf_log_derivatives(X, locations, lengthscale, variance)
    factor = cholesky_lower(K_mm)
    A = cholesky_solve(factor, np.eye(K_mm.shape[0]))
    kappa = K_nm @ A
    nu = A @ mean
    a = K_nm @ nu
    kappa_S = kappa @ covariance
    b = np.einsum("ij,ij->i", kappa_S, kappa)
    c_ = np.einsum("ij,ij->i", kappa, K_nm)
    residual = (1.0 - y * a) ** 2 + b + variance - c_
    kl = 0.5 * (
        float(np.trace(A @ covariance))
        + float(mean @ nu)
        - mean.size
        + log_det_from_cholesky(factor)
        - log_det_from_cholesky(cholesky_lower(covariance))
    )
    objective = scale * float(np.sum(y * a - 0.5 * weights * residual)) - kl
    g = scale * y * (weights * (1.0 - y * a) + 1.0)
    B = A @ kappa_S.T * weights  # A S kappa^T W
    weighted_kappa = weights[:, None] * kappa
    G_E = np.outer(g, nu) - scale * B.T + scale * weighted_kappa
    G_F = (
        -np.outer(kappa.T @ g, nu)
        + scale * (B @ kappa).T
        - 0.5 * scale * kappa.T @ weighted_kappa
        - 0.5 * (A - A @ covariance @ A - np.outer(nu, nu))
    )
    G_e = -0.5 * scale * weights
    gradient = np.array(
        [
            np.sum(dK_nm_l * G_E) + np.sum(dK_mm_l * G_F),  # dk_ii / dlog l = 0
            np.sum(dK_nm_v * G_E) + np.sum(dK_mm_v * G_F) + variance * np.sum(G_e),
        ]
    )
    return objective, gradient
