"""The RBF kernel and its derivatives in its hyperparameters.

``k(x, x') = variance * exp(-||x - x'||^2 / lengthscale^2)``: Zhang et al. (2010) section 4, and
Wenzel et al. (2017) footnote 5 with the square that its ``||x_1 - x_2||`` lost (their
figures' length-scale 5.0 on 21-dimensional waveform only makes sense with it).
scikit-learn's ``RBF(length_scale=l)`` is ``exp(-d^2 / (2 l^2))``: ``l = lengthscale / sqrt(2)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rbf_kernel", "rbf_log_derivatives", "mean_distance", "sklearn_length_scale"]


def rbf_kernel(
    A: np.ndarray, B: np.ndarray, lengthscale: float, variance: float = 1.0
) -> np.ndarray:
    """``k(a, b)`` between the rows of ``A`` and ``B``: shape ``(len(A), len(B))``."""
    from scipy.spatial.distance import cdist  # imported here: scipy.spatial costs 0.02 s at startup

    return variance * np.exp(-cdist(A, B, "sqeuclidean") / lengthscale**2)


def rbf_log_derivatives(
    A: np.ndarray, B: np.ndarray, lengthscale: float, variance: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``k`` and its derivatives in ``log lengthscale`` and ``log variance``:
    ``dk / dlog l = k * 2 d^2 / l^2`` and ``dk / dlog variance = k``.
    """
    from scipy.spatial.distance import cdist  # imported here: scipy.spatial costs 0.02 s at startup

    scaled = cdist(A, B, "sqeuclidean") / lengthscale**2
    kernel = variance * np.exp(-scaled)
    return kernel, 2.0 * scaled * kernel, kernel


def mean_distance(X: np.ndarray, max_rows: int = 2000, seed: int = 0) -> float:
    """The mean Euclidean distance between the rows of ``X`` (Zhang et al. section 4's
    ``theta``), over a random ``max_rows`` of them when there are more.
    """
    from scipy.spatial.distance import pdist  # imported here: scipy.spatial costs 0.02 s at startup

    if X.shape[0] > max_rows:
        X = X[np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False)]
    return float(np.mean(pdist(X)))


def sklearn_length_scale(lengthscale: float) -> float:
    """The ``length_scale`` of scikit-learn's ``RBF`` for the same kernel."""
    return lengthscale / np.sqrt(2.0)
