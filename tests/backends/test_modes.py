"""Chains that disagree because they found different modes are named as such."""

import numpy as np
import pytest
import xarray as xr

from bayesvm.checks.modes import find_modes
from bayesvm.samplers.diagnostics import mcmc_problems


def posterior(x, v=None):
    """A posterior of a scalar ``x`` (chain, draw) and optionally a vector ``v``."""
    data = {"x": (["chain", "draw"], x)}
    if v is not None:
        data["v"] = (["chain", "draw", "k"], v)
    return xr.Dataset(data, coords={"chain": np.arange(x.shape[0]), "draw": np.arange(x.shape[1])})


def autoregressive(rng, chains, draws, rho, start):
    """Chains of an AR(1) with stationary N(0, 1), started at ``start``."""
    x = np.empty((chains, draws))
    x[:, 0] = start
    noise = rng.normal(size=(chains, draws)) * np.sqrt(1.0 - rho**2)
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def test_chains_in_two_basins_are_two_modes_with_their_shares_and_separating_parameter():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0.0, 1.0, (3, 1000)), rng.normal(8.0, 0.5, (1, 1000))])
    v = rng.normal(size=(4, 1000, 5))
    modes = find_modes(posterior(x, v))
    assert modes.count == 2
    np.testing.assert_allclose(modes.shares, [0.75, 0.25])
    np.testing.assert_allclose(modes.chain_shares[:, 0], [1, 1, 1, 0])
    label, means = modes.separating[0]
    assert label == "x" and len(modes.separating) == 1  # v does not separate them
    assert abs(means[0]) < 0.2 and abs(means[1] - 8.0) < 0.2


def test_a_chain_that_switches_between_modes_is_split_by_stretches():
    rng = np.random.default_rng(1)
    in_first = (np.arange(5000) // 700) % 2 == 0
    x = np.where(in_first, rng.normal(0.73, 0.03, 5000), rng.normal(0.01, 0.008, 5000))[None]
    modes = find_modes(posterior(x))
    assert modes.count == 2
    np.testing.assert_allclose(modes.shares[0], in_first.mean(), atol=0.01)
    assert "chain 0" in modes.describe()


@pytest.mark.parametrize(
    "draws",
    [
        lambda rng: autoregressive(rng, 4, 2000, 0.99, rng.normal(size=4) * 3.0),
        lambda rng: 1.0 / rng.gamma(0.5, 1.0, (4, 2000)),
        lambda rng: rng.standard_t(1, (4, 2000)),
    ],
    ids=["slow-chains", "inverse-gamma-tail", "cauchy-tail"],
)
def test_one_mode_is_not_split_however_slow_or_heavy_tailed(draws):
    assert find_modes(posterior(draws(np.random.default_rng(2)))) is None


def test_indicators_that_switch_are_mixing_not_modes():
    indicator = (np.arange(2000) // 300 % 2).astype(float)[None].repeat(2, axis=0)
    assert find_modes(posterior(indicator)) is None


def test_the_sampler_check_names_the_modes_instead_of_a_bare_r_hat():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(0.0, 1.0, (2, 1000)), rng.normal(8.0, 1.0, (2, 1000))])
    problems = mcmc_problems(_idata(x))
    assert any("chains found 2 modes" in problem for problem in problems)
    assert not any(problem.startswith("R-hat") for problem in problems)


def _idata(x):
    from bayesvm._arviz import arviz as az

    return az.from_dict(posterior={"x": x})
