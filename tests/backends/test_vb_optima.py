"""VB keeps every optimum its starts reach and says when there are several."""

import numpy as np
import pytest

import bayesvm
from bayesvm.drivers import run_ascent
from bayesvm.models import MixedSVM
from bayesvm.vb.cavi import initial_state, make_cavi_step
from bayesvm.vb.optima import distinct_optima, optima_problem

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
    optima = distinct_optima(model, [converged, early, converged])
    assert len(optima) == 2  # the converged ascent is one optimum however often reached
    problem = optima_problem(model, optima, starts=3)
    assert problem.startswith("VB reached 2 optima from 3 starts")
    assert "does not rank optima by posterior mass" in problem


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
