"""Every model variant, small: what the tests of the whole set of models build
(``tests/models/test_log_density.py``, ``tests/backends/test_seeded_fits.py``).
"""

import numpy as np

from bayesvm.models import (
    GPSVM,
    KernelGKM,
    LinearRegression,
    LinearSVM,
    LogisticRegression,
    MissingDataSVM,
    MixedSVM,
    SpikeSlabSVM,
)

from conftest import simulate_logistic


def _classification(n=40, d=3, seed=3):
    return simulate_logistic(n, d, seed=seed)


def _missing():
    X, y = _classification(40, 3, seed=5)
    X = X.copy()
    X[np.random.default_rng(5).random(X.shape) < 0.15] = np.nan
    return MissingDataSVM.from_arrays(X, y)


def _missing_normalized():
    model = _missing()
    return MissingDataSVM.from_arrays(model.Z, model.y, likelihood="normalized")


def _regression(**kwargs):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    return LinearRegression.from_arrays(X, X @ [1.0, -0.5, 0.0] + rng.normal(size=30), **kwargs)


def _kernel_regression(**kwargs):
    """Twelve points on a line, with a lengthscale of 0.5: the default (their mean distance, 1.8)
    makes a Gram matrix of condition number 3.5e14, whose coefficients then carry round-off of 1e-5
    of their scale from one CPU's instruction set to another's; 0.5 makes it 8e4.
    """
    x = np.random.default_rng(8).uniform(-3.0, 3.0, 12)
    y = np.sin(2.0 * x) + 0.3 * np.random.default_rng(9).normal(size=12)
    return KernelGKM.from_arrays(x[:, None], y, likelihood="gaussian", lengthscale=0.5, **kwargs)


def _kernel_classification(**kwargs):
    """Twelve points in the plane, with a lengthscale of 1: the default (their mean distance,
    2.05) makes a Gram matrix of condition number 3e5, through which the reversible-jump
    sampler's draws carry round-off of 5e-8 of their scale from one CPU's instruction set to
    another's; 1 makes it 4e3.
    """
    return KernelGKM.from_arrays(*_classification(12, 2), lengthscale=1.0, **kwargs)


def _random_intercept():
    X, y = _classification(40, 2, seed=6)
    return MixedSVM.random_intercept(X, y, groups=np.arange(40) % 5)


def _general_mixed():
    X, y = _classification(40, 2, seed=7)
    Z = np.random.default_rng(7).normal(size=(40, 3))
    return MixedSVM.from_arrays(np.column_stack([np.ones(40), X]), y, Z=Z)


VARIANTS = {
    "ridge-fixed": lambda: LinearSVM.from_arrays(*_classification(), alpha=1.0),
    "ridge-learned": lambda: LinearSVM.from_arrays(*_classification()),
    "ridge-learned-std": lambda: LinearSVM.from_arrays(*_classification(), feature_scale="std"),
    "lasso-fixed": lambda: LinearSVM.from_arrays(*_classification(), prior="lasso", nu=0.5),
    "lasso-learned": lambda: LinearSVM.from_arrays(*_classification(), prior="lasso"),
    "mixed-penalized": lambda: MixedSVM.penalized(*_classification()),
    "mixed-random-intercept": _random_intercept,
    "mixed-general": _general_mixed,
    "spike-slab-laplace-zero": lambda: SpikeSlabSVM.laplace_zero(*_classification(), rho=0.3),
    "spike-slab-gaussian": lambda: SpikeSlabSVM.gaussian_slab(*_classification(), nu=2.0),
    "missing-data": _missing,
    "missing-data-normalized": _missing_normalized,
    "kernel-probit": _kernel_classification,
    "kernel-hinge": lambda: _kernel_classification(likelihood="hinge"),
    "kernel-gaussian": _kernel_regression,
    "kernel-gaussian-fixed-tau": lambda: _kernel_regression(tau=4.0),
    "gp-full": lambda: GPSVM.from_arrays(*_classification(15, 2)),
    "linear-regression-shared": _regression,
    "linear-regression-ard": lambda: _regression(ard=True),
    "linear-regression-fixed": lambda: _regression(alpha=2.0),
    "logistic-shared": lambda: LogisticRegression.from_arrays(*_classification()),
    "logistic-ard": lambda: LogisticRegression.from_arrays(*_classification(), ard=True),
    "logistic-fixed": lambda: LogisticRegression.from_arrays(*_classification(), hyperprior=False),
}
