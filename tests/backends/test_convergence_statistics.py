"""The vectorised convergence statistics are ArviZ 0.23's R-hat, bulk ESS and tail ESS.

Each statistic of every parameter equals what ``arviz.rhat(method="rank")`` and
``arviz.ess(method="bulk" | "tail")`` compute one parameter at a time, to a relative 1e-8
(the two differ only in the order of floating-point sums), with NaN where ArviZ gives NaN.
"""

import numpy as np
import pytest

from bayesvm._arviz import quiet_arviz_log
from bayesvm.checks import convergence


def autoregressive(rng, shape, phi):
    """AR(1) draws x_t = phi x_(t-1) + e_t along axis 1, started at stationarity."""
    noise = rng.normal(size=shape)
    draws = np.empty(shape)
    draws[:, 0] = noise[:, 0] / np.sqrt(1 - phi**2)
    for t in range(1, shape[1]):
        draws[:, t] = phi * draws[:, t - 1] + noise[:, t]
    return draws


def one_chain_halves(draws):
    """A single chain's halves as two chains, as the checks compare them."""
    half = draws.shape[1] // 2
    return draws[0, : 2 * half].reshape(2, half, *draws.shape[2:])


def stuck_within_chains(rng):
    """Parameters that never move within a chain but differ between chains."""
    levels = rng.normal(size=(3, 1, 4))
    return np.repeat(levels, 40, axis=1)


def with_nan(rng):
    draws = rng.normal(size=(2, 30, 3))
    draws[1, 7, 0] = np.nan
    return draws


DRAWS = {
    "one parameter": lambda rng: rng.normal(size=(4, 200)),
    "a 7 x 3 parameter": lambda rng: rng.normal(size=(2, 60, 7, 3)),
    "one chain": lambda rng: rng.normal(size=(1, 300, 4)),
    "one chain's halves": lambda rng: one_chain_halves(rng.normal(size=(1, 301, 4))),
    "two chains": lambda rng: rng.normal(size=(2, 150, 5)) + np.array([[[0.0]], [[0.3]]]),
    "four chains": lambda rng: rng.normal(size=(4, 101, 5)),
    "4 draws": lambda rng: rng.normal(size=(3, 4, 5)),
    "7 draws": lambda rng: rng.normal(size=(2, 7, 5)),
    "10 draws": lambda rng: rng.normal(size=(2, 10, 5)),
    "3 draws, too short": lambda rng: rng.normal(size=(2, 3, 5)),
    "constant": lambda rng: np.full((2, 50, 3), 0.7),
    "stuck within chains": stuck_within_chains,
    "bool": lambda rng: rng.random((3, 80, 4)) < [0.02, 0.1, 0.5, 0.97],
    "int": lambda rng: rng.poisson([0.1, 1.0, 5.0], size=(2, 90, 3)),
    "heavy tails": lambda rng: rng.standard_cauchy(size=(4, 120, 5)),
    "AR(1), phi = 0.99": lambda rng: autoregressive(rng, (4, 400, 3), phi=0.99),
    "a NaN draw": with_nan,
}

STATISTICS = {
    "rhat": (convergence.rank_normalized_rhat, lambda az, data: az.rhat(data, method="rank")),
    "bulk ESS": (convergence.bulk_ess, lambda az, data: az.ess(data, method="bulk")),
    "tail ESS": (convergence.tail_ess, lambda az, data: az.ess(data, method="tail")),
}


def arviz_statistic(statistic, draws):
    """ArviZ's statistic of each parameter of ``draws``, computed one parameter at a time."""
    from bayesvm._arviz import arviz as az

    data = az.convert_to_dataset({"x": draws})
    with quiet_arviz_log(), np.errstate(divide="ignore", invalid="ignore"):
        return statistic(az, data)["x"].to_numpy()


@pytest.mark.parametrize("statistic", STATISTICS)
@pytest.mark.parametrize("case", DRAWS)
def test_statistics_are_arvizs(case, statistic):
    draws = DRAWS[case](np.random.default_rng(20260127))
    vectorised, arviz = STATISTICS[statistic]
    expected = arviz_statistic(arviz, draws)
    np.testing.assert_allclose(vectorised(draws), expected, rtol=1e-8, atol=0)


def test_parameters_taken_in_blocks_give_the_same_statistics(monkeypatch):
    draws = autoregressive(np.random.default_rng(7), (4, 100, 30), phi=0.6)
    all_at_once = {name: function(draws) for name, (function, _) in STATISTICS.items()}
    monkeypatch.setattr(convergence, "BLOCK_DRAWS", 2 * 4 * 100 + 1)
    for name, (function, _) in STATISTICS.items():
        np.testing.assert_array_equal(function(draws), all_at_once[name])
