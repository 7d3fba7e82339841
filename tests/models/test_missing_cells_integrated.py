"""The missing cells integrated out of the hinge in closed form, as the masses of modes use."""

import numpy as np
from scipy.special import logsumexp

from bayesvm.models import MissingDataSVM

from conftest import simulate_logistic


def test_the_closed_form_equals_quadrature_over_the_cells():
    X, y = simulate_logistic(30, 3, seed=5)
    X = X.copy()
    X[4, 2] = np.nan  # one missing cell, so that the integral is one-dimensional
    model = MissingDataSVM.from_arrays(X, y)
    assert model.mass_var_names == ("beta", "u", "mu_x", "Sigma_x", "sigma2_u")
    rng = np.random.default_rng(0)
    grid = np.linspace(-15.0, 15.0, 3001)
    for _ in range(3):
        factor = rng.normal(size=(3, 3))
        point = {
            "beta": rng.normal(size=1),
            "u": rng.normal(size=3),
            "sigma2_u": np.exp(rng.normal()),
            "mu_x": 0.3 * rng.normal(size=3),
            "Sigma_x": factor @ factor.T + np.eye(3),
        }
        log_densities = [model.log_density({**point, "x_mis": np.array([x])}) for x in grid]
        quadrature = logsumexp(log_densities) + np.log(grid[1] - grid[0])
        # the integrand is smooth but for the hinge's kink: a Riemann sum on 0.01 is exact to
        # well below 1e-4 here
        assert abs(model.mass_log_density(point) - quadrature) < 1e-4


def test_the_normalized_likelihood_keeps_its_cells_among_the_variables():
    X, y = simulate_logistic(30, 3, seed=5)
    X = X.copy()
    X[4, 2] = np.nan
    model = MissingDataSVM.from_arrays(X, y, likelihood="normalized")
    assert "x_mis" in model.mass_var_names
