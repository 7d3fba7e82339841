import os
import warnings

os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import bayesvm  # noqa: E402,F401  (links PyTensor to BLAS before any test imports PyMC)


def simulate_logistic(n_samples: int, n_features: int, seed: int, intercept: float = 0.3):
    """Luts-Ormerod section 4.2 style data: y = +-1 with P(y=1) = expit(intercept + x^T w)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    w = rng.standard_normal(n_features)
    p = 1.0 / (1.0 + np.exp(-(intercept + X @ w)))
    y = np.where(rng.random(n_samples) < p, 1, -1)
    return X, y


def separable(n_samples: int, n_features: int, seed: int):
    """Two classes split by a hyperplane with a gap: linearly separable."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    score = X[:, 0] + 0.5 * X[:, 1 % n_features]
    keep = np.abs(score) > 0.5
    return X[keep], np.where(score[keep] > 0, 1, -1)


@pytest.fixture
def small_data():
    return simulate_logistic(60, 3, seed=3)
