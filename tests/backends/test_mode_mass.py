"""The masses of modes by importance sampling, and the chains of the mode that holds it."""

import re

import numpy as np
import pytest
import xarray as xr
from scipy.special import gammaln, multigammaln
from scipy.stats import invwishart

from bayesvm._arviz import arviz as az
from bayesvm.checks.mode_mass import mode_masses
from bayesvm.samplers.diagnostics import mcmc_checks


class Density:
    """The interface the mass estimate reads of a model: its variables, their supports and
    an unnormalised density.
    """

    def __init__(self, log_density, supports=None, names=("x",)):
        self.mass_log_density = log_density
        self.supports = supports or {}
        self.mass_var_names = names


def posterior(**draws):
    """``draws`` of shape (chain, draw, ...) as a posterior."""
    data = {
        name: (["chain", "draw", *[f"{name}_{k}" for k in range(value.ndim - 2)]], value)
        for name, value in draws.items()
    }
    return xr.Dataset(data)


def two_modes(point):
    x = float(point["x"])
    return np.logaddexp(np.log(0.9) - 0.5 * x**2, np.log(0.1 / 0.5) - 0.5 * ((x - 8.0) / 0.5) ** 2)


def test_the_log_mass_ratio_of_two_modes_is_recovered_within_its_monte_carlo_error():
    rng = np.random.default_rng(0)
    draws = np.concatenate([rng.normal(0.0, 1.0, (2, 500)), rng.normal(8.0, 0.5, (1, 500))])
    labels = np.repeat([[0], [0], [1]], 500, axis=1)
    masses = mode_masses(Density(two_modes), posterior(x=draws), labels, rng)
    assert masses.reliable
    ratio_error = np.hypot(*(masses.standard_error))  # se of log Z is se(Z) / Z, Z near 1 here
    assert abs(masses.log_mass[0] - masses.log_mass[1] - np.log(9.0)) < 4 * ratio_error + 1e-3
    assert masses.describe().startswith("mode 1 holds 9")


def test_positive_and_covariance_coordinates_integrate_known_normalisers():
    rng = np.random.default_rng(1)
    shape, rate, d, dof = 3.0, 2.0, 3, 7.0
    scale = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.5]])

    def log_density(point):
        s, sigma = point["s"], point["sigma"]
        _, log_det = np.linalg.slogdet(sigma)
        return (
            (shape - 1.0) * np.log(s)
            - rate * s
            - 0.5 * (dof + d + 1.0) * log_det
            - 0.5 * np.trace(scale @ np.linalg.inv(sigma))
        )

    draws = {
        "s": rng.gamma(shape, 1.0 / rate, (1, 3000)),
        "sigma": invwishart(dof, scale).rvs(3000, random_state=rng)[None],
    }
    model = Density(log_density, {"s": "positive", "sigma": "covariance"}, ("s", "sigma"))
    masses = mode_masses(model, posterior(**draws), np.zeros((1, 3000), int), rng)
    known = (
        gammaln(shape)
        - shape * np.log(rate)
        + 0.5 * dof * d * np.log(2.0)
        + multigammaln(0.5 * dof, d)
        - 0.5 * dof * np.linalg.slogdet(scale)[1]
    )
    assert masses.reliable
    assert abs(masses.log_mass[0] - known) < 4 * masses.standard_error[0] + 1e-3


def test_binary_variables_leave_the_masses_unestimated():
    model = Density(two_modes, {"gamma": "binary"}, ("x", "gamma"))
    draws = posterior(x=np.zeros((2, 50)), gamma=np.zeros((2, 50)))
    assert "binary" in mode_masses(model, draws, np.zeros((2, 50), int), None)


def test_the_chains_of_the_mode_that_holds_the_mass_are_kept_and_the_rest_named():
    rng = np.random.default_rng(2)

    def lopsided(point):  # the second mode holds e^-30 of the mass
        x = float(point["x"])
        return np.logaddexp(-0.5 * x**2, -30.0 - 0.5 * (x - 20.0) ** 2)

    draws = np.concatenate([rng.normal(0.0, 1.0, (2, 1000)), rng.normal(20.0, 1.0, (1, 1000))])
    idata, problems = mcmc_checks(az.from_dict(posterior={"x": draws}), Density(lopsided))
    assert problems == []
    assert list(idata.posterior["chain"].to_numpy()) == [0, 1]
    assert "all but e^-30.0 of the posterior mass" in idata.attrs["modes"]
    assert "the draws kept are those of chain(s) 0, 1, in mode 1" in idata.attrs["modes"]


@pytest.mark.parametrize("weight", [0.3, 0.5])
def test_modes_of_comparable_mass_stay_a_problem_with_their_shares(weight):
    rng = np.random.default_rng(3)

    def balanced(point):
        x = float(point["x"])
        return np.logaddexp(np.log(1 - weight) - 0.5 * x**2, np.log(weight) - 0.5 * (x - 8.0) ** 2)

    draws = np.concatenate([rng.normal(0.0, 1.0, (2, 1000)), rng.normal(8.0, 1.0, (2, 1000))])
    idata, problems = mcmc_checks(az.from_dict(posterior={"x": draws}), Density(balanced))
    assert idata.posterior.sizes["chain"] == 4
    assert "chains found 2 modes" in problems[0]
    share = float(re.search(r"mode 1 holds ([0-9.]+)% of the posterior mass", problems[0])[1])
    assert abs(share / 100 - (1 - weight)) < 0.02  # Monte Carlo error about 0.005
