"""Link functions of the models: class probabilities from the hinge pseudo-likelihood
normalised over the two labels (Polson-Scott section 2), their logarithms, and labels drawn
from them; the Gaussian likelihood of the regressions and responses drawn from it.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = [
    "normalized_pseudo_likelihood",
    "log_normalized_pseudo_likelihood",
    "log_sigmoid",
    "class_probabilities",
    "draw_labels",
    "gaussian_log_likelihood",
    "draw_responses",
    "central_tails",
]

LOG_2PI = float(np.log(2.0 * np.pi))


def _pseudo_log_odds(f: np.ndarray) -> np.ndarray:
    """``log L(+1) - log L(-1)`` with ``L(y) = exp(-2 (1 - y f)_+)``."""
    return 2.0 * np.maximum(0.0, 1.0 + f) - 2.0 * np.maximum(0.0, 1.0 - f)


def normalized_pseudo_likelihood(f: np.ndarray) -> np.ndarray:
    """``p(y = +1 | f)`` from the hinge pseudo-likelihood normalised over the two labels.

    ``L(+1) / (L(+1) + L(-1))`` with ``L(y) = exp(-2 (1 - y f)_+)`` (Polson-Scott section 2,
    remark after eq. 3): 1/2 at ``f = 0``, ``1 / (1 + e^-4)`` on the margin ``f = 1`` and
    ``1 / (1 + e^(-2 (1 + f)))`` beyond it.
    """
    return expit(_pseudo_log_odds(f))  # 0 or 1, without overflow, where |f| is huge


def log_normalized_pseudo_likelihood(f: np.ndarray, labels) -> np.ndarray:
    """``log p(y = labels | f)`` under :func:`normalized_pseudo_likelihood`, exact where the
    probability underflows (``labels``: -1/+1, broadcast against ``f``).

    """
    return log_sigmoid(labels * _pseudo_log_odds(f))


def log_sigmoid(z: np.ndarray) -> np.ndarray:
    """``log(1 / (1 + exp(-z))) = min(z, 0) - log(1 + exp(-|z|))``: SciPy's ``log_expit`` to
    round-off, in a third of its time on a fit's millions of pointwise values.
    """
    return np.minimum(z, 0.0) - np.log1p(np.exp(-np.abs(z)))


def class_probabilities(f: np.ndarray) -> np.ndarray:
    """``[p(-1), p(+1)]`` per column of the draws ``f`` (``(draws, n)``), averaged over draws:
    shape ``(n, 2)``. Each class's probability is averaged on its own (``p(-1 | f)`` is
    ``p(+1 | -f)``), so that a probability near 0 is not lost to the cancellation in ``1 - p``.
    """
    return np.column_stack(
        [
            normalized_pseudo_likelihood(-f).mean(axis=0),
            normalized_pseudo_likelihood(f).mean(axis=0),
        ]
    )


def draw_labels(positive_probability: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Labels coded -1/+1 (``int8``), each +1 with its probability in ``positive_probability``."""
    positive = rng.random(positive_probability.shape) < positive_probability
    return np.where(positive, 1, -1).astype(np.int8)


def gaussian_log_likelihood(residual: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``log N(y_i | f_i, 1 / tau)`` for residuals ``y - f`` of shape ``(draws, n)`` and one
    noise precision ``tau`` per draw (shape ``(draws,)``).
    """
    tau = np.asarray(tau, dtype=float)[:, None]
    return 0.5 * (np.log(tau) - LOG_2PI - tau * residual**2)


def draw_responses(mean: np.ndarray, tau: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``y = f + e``, ``e ~ N(0, 1 / tau)``, for means ``f`` of shape ``(draws, n)`` and one
    noise precision ``tau`` per draw.
    """
    noise_sd = 1.0 / np.sqrt(np.asarray(tau, dtype=float))
    return mean + noise_sd[:, None] * rng.standard_normal(mean.shape[::-1]).T


def central_tails(prob: float) -> list[float]:
    """The quantile levels ``[(1 - prob) / 2, (1 + prob) / 2]`` of a central ``prob``
    interval; ``ValueError`` unless ``0 < prob < 1``.
    """
    if not 0.0 < prob < 1.0:
        raise ValueError(f"prob must be in (0, 1); got {prob}")
    return [(1.0 - prob) / 2.0, (1.0 + prob) / 2.0]
