"""One density: ``model.log_density`` (from the blocks) equals ``to_pymc()``'s up to a constant.

For every model variant, PyMC's log probability of its own free variables (untransformed, no
Jacobian of PyMC's transforms) at random points, minus the blocks' density of the canonical
variables there and the change of variables between them (``pymc_log_jacobian``), is one
constant. This is the deterministic proof that NUTS on ``to_pymc()`` and the hand-written
backends target the same posterior.
"""

import numpy as np
import pytest

from model_variants import VARIANTS

N_POINTS = 12
#: Spread allowed of the difference over the points: round-off of sums of O(100) terms.
SPREAD = 1e-6


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
