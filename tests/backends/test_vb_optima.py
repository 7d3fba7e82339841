"""VB keeps every optimum its starts reach and says when there are several."""

from types import SimpleNamespace

import numpy as np
import pytest

import bayesvm
from bayesvm.drivers import run_ascent
from bayesvm.models import MixedSVM
from bayesvm.vb.cavi import initial_state, make_cavi_step
from bayesvm.vb.optima import Optimum, distinct_optima, optima_problem, weigh_optima

from conftest import simulate_logistic


@pytest.fixture(scope="module")
def model():
    return MixedSVM.penalized(*simulate_logistic(120, 3, seed=11))


def test_dispersed_starts_of_a_one_mode_posterior_reach_the_fit_and_are_kept_once(model):
    fit = bayesvm.fit(model, "vb", starts=3, progressbar=False)
    assert fit.converged
    optima = fit.optima
    assert optima.sizes["optimum"] == 1
    np.testing.assert_allclose(optima["bound"], fit.lower_bound)
    np.testing.assert_allclose(
        optima["u"][0], fit.idata["variational"]["u_q_mean"], rtol=1e-12, atol=1e-15
    )


def test_the_dispersed_starts_are_seeded_so_the_same_call_gives_the_same_fit(model):
    first, second = (bayesvm.fit(model, "vb", starts=3, progressbar=False) for _ in range(2))
    np.testing.assert_array_equal(first.optima["bound"], second.optima["bound"])


def test_distinct_optima_are_listed_with_the_mean_that_separates_them(model):
    blocks = model.blocks
    start = initial_state(blocks)
    converged = run_ascent(start, make_cavi_step(blocks), tol=1e-12, max_iter=5000)
    early = run_ascent(start, make_cavi_step(blocks), tol=1e-12, max_iter=2)
    optima = distinct_optima(model, [(converged, 9), (early, 2), (converged, 9)])
    assert len(optima) == 2  # the converged ascent is one optimum however often reached
    problem = optima_problem(model, optima, starts=3)
    assert problem.startswith("VB reached 2 optima from 3 starts; this fit is the first start's")
    assert "does not rank optima by posterior mass" in problem


class _GaussianQ:
    """A block whose ``q`` is ``N(mean, sd^2)`` of one variable ``x``."""

    name = "x"

    def draw_q(self, params, rng, size):
        mean, sd = params
        return {"x": mean + sd * rng.standard_normal((size, 1))}


class _TwoModes:
    """What weighing reads of a model: a density with 0.9 of its mass near 0 (sd 1) and 0.1
    near 8 (sd 0.5).
    """

    blocks = [_GaussianQ()]
    mass_var_names = ("x",)
    supports: dict = {}
    dims = {"x": ["x_dim"]}
    coords = {"x_dim": ["x"]}

    @staticmethod
    def mass_log_density(point):
        x = float(point["x"][0])
        return np.logaddexp(
            np.log(0.9) - 0.5 * x**2, np.log(0.1 / 0.5) - 0.5 * ((x - 8.0) / 0.5) ** 2
        )


def _optimum(bound, mean, sd):
    ascent = SimpleNamespace(state=({"x": (mean, sd)}, None))
    return Optimum(bound, {"x": np.array([mean])}, {"x": np.array([sd])}, True, ascent)


def test_optima_are_ordered_by_their_mass_not_their_bound():
    """The light optimum has the larger bound; the heavy one's ``q`` is too narrow and off
    its mode (mean-field's failings), so the wider proposals must find its mass. The log mass
    ratio is log 9 within Monte Carlo error.
    """
    light, heavy = _optimum(-1.0, 8.0, 0.5), _optimum(-5.0, 0.6, 0.3)
    optima, masses = weigh_optima(_TwoModes(), [light, heavy], np.random.default_rng(0))
    assert [optimum.bound for optimum in optima] == [-5.0, -1.0]
    assert masses.reliable and all(optimum.khat < 0.7 for optimum in optima)
    ratio = optima[0].log_mass - optima[1].log_mass
    assert abs(ratio - np.log(9.0)) < 4 * np.hypot(*masses.standard_error) + 1e-3
    problem = optima_problem(_TwoModes(), optima, starts=2, masses=masses)
    assert "this fit is the optimum that holds the most posterior mass" in problem
    assert "optimum 1 holds 8" in problem or "optimum 1 holds 9" in problem


@pytest.mark.parametrize("starts", [0, 1.5, -1])
def test_a_bad_number_of_starts_is_refused(model, starts):
    with pytest.raises(ValueError, match="starts must be a positive integer or points"):
        bayesvm.fit(model, "vb", starts=starts, progressbar=False)


def test_dispersed_starts_are_refused_for_a_model_whose_blocks_cannot_start_vb_from_values():
    from bayesvm.models import KernelGKM

    model = KernelGKM.from_arrays(*simulate_logistic(20, 2, seed=1))
    with pytest.raises(ValueError, match="VB cannot start KernelGKM from values"):
        bayesvm.fit(model, "vb", starts=2, progressbar=False)


def test_an_ascent_from_a_given_point_reaches_the_optimum_of_its_basin(model):
    fit = bayesvm.fit(model, "vb", progressbar=False)
    point = {name: fit.idata.posterior[name].mean(("chain", "draw")) for name in model.var_names}
    point["u"] = point["u"] + 0.5  # a start away from the optimum, in its basin
    again = bayesvm.fit(model, "vb", starts=[point], progressbar=False)
    assert again.converged and again.optima.sizes["optimum"] == 1


def test_a_start_without_every_variable_is_refused_by_name(model):
    with pytest.raises(ValueError, match="lacks sigma2_u"):
        bayesvm.fit(model, "vb", starts=[{"beta": [0.0], "u": [0.0, 0.0, 0.0]}])
