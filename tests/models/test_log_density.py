"""One density: ``model.log_density`` (from the blocks) equals ``to_pymc()``'s up to a constant.

For every model variant, PyMC's log probability of its own free variables (untransformed, no
Jacobian of PyMC's transforms) at random points, minus the blocks' density of the canonical
variables there and the change of variables between them (``pymc_log_jacobian``), is one
constant. This is the deterministic proof that NUTS on ``to_pymc()`` and the hand-written
backends target the same posterior.
"""

import numpy as np
import pytest

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

N_POINTS = 12
#: Spread allowed of the difference over the points: round-off of sums of O(100) terms.
SPREAD = 1e-6


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
    x = np.random.default_rng(8).uniform(-3.0, 3.0, 12)
    y = np.sin(2.0 * x) + 0.3 * np.random.default_rng(9).normal(size=12)
    return KernelGKM.from_arrays(x[:, None], y, likelihood="gaussian", **kwargs)


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
    "kernel-probit": lambda: KernelGKM.from_arrays(*_classification(12, 2)),
    "kernel-hinge": lambda: KernelGKM.from_arrays(*_classification(12, 2), likelihood="hinge"),
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


def pymc_points(pymc_model, rng, n_points):
    """Random points of PyMC's free variables in their unconstrained spaces (indicators 0/1),
    with the values of every variable there, untransformed and deterministic, by name.
    """
    start = pymc_model.initial_point()
    outputs = pymc_model.unobserved_value_vars
    values_at = pymc_model.compile_fn(
        outputs, inputs=pymc_model.value_vars, point_fn=False, mode="FAST_COMPILE"
    )
    discrete = {var.name for var in pymc_model.discrete_value_vars}
    points = []
    for _ in range(n_points):
        point = {
            name: (
                rng.integers(0, 2, size=np.shape(value))
                if name in discrete
                else start[name] + rng.normal(size=np.shape(value))
            )
            for name, value in start.items()
        }
        values = values_at(*(point[var.name] for var in pymc_model.value_vars))
        points.append((point, dict(zip([out.name for out in outputs], values, strict=True))))
    return points


@pytest.mark.parametrize("variant", VARIANTS)
def test_log_density_is_the_pymc_density_up_to_a_constant(variant):
    model = VARIANTS[variant]()
    pymc_model = model.to_pymc()
    pymc_logp = pymc_model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    differences = [
        model.log_density(values) + model.pymc_log_jacobian(values) - pymc_logp(point)
        for point, values in pymc_points(pymc_model, np.random.default_rng(1), N_POINTS)
    ]
    assert np.all(np.isfinite(differences))
    assert np.ptp(differences) <= SPREAD * max(1.0, np.max(np.abs(differences)))


def test_a_point_without_a_variable_is_refused_by_name():
    model = VARIANTS["ridge-learned"]()
    with pytest.raises(ValueError, match="lacks nu"):
        model.log_density({"beta": np.zeros(1), "u": np.zeros(3)})


def test_a_point_of_the_wrong_shape_is_refused():
    model = VARIANTS["ridge-learned"]()
    with pytest.raises(ValueError, match="u has shape"):
        model.log_density({"beta": np.zeros(1), "u": np.zeros(2), "nu": 1.0})
