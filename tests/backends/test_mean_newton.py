"""Newton steps in the coefficients' mean after each CAVI sweep (:mod:`bayesvm.vb.mean_newton`):
the bound they climb, CAVI's optimum reached in fewer sweeps, and the papers' algorithm kept
without acceleration."""

from __future__ import annotations

import numpy as np
import pytest

import bayesvm
from bayesvm.blocks.coefficients import CoefficientStats
from bayesvm.blocks.hinge import CHI_FLOOR
from bayesvm.drivers import run_ascent
from bayesvm.models import MixedSVM
from bayesvm.vb.cavi import initial_state, make_cavi_step
from bayesvm.vb.optima import q_moments
from bayesvm.vb.squarem import Squarem

from conftest import assert_never_decreases


def _hinge_and_stats(f_mean, f_var):
    model = MixedSVM.penalized(np.arange(8.0)[:, None], [1, -1, 1, 1, -1, -1, 1, -1])
    hinge = model.blocks[1]
    return hinge, {"theta": CoefficientStats(None, None, f_mean, f_var)}


def test_mean_field_expectation_is_the_bound_at_the_optimal_q_of_a():
    f_mean = np.array([0.3, -1.7, 2.5, 0.999, -0.2, -1.0, 4.0, -1.0 + 2e-6])
    f_var = np.array([0.5, 0.02, 1.3, 1e-3, 2.0, 1e-12, 0.1, 1e-12])  # rows 5, 7: chi floored
    hinge, stats = _hinge_and_stats(f_mean, f_var)
    terms = hinge.mean_field_expectation(f_mean, f_var)
    bound = hinge.bound_term(hinge.conditional(stats), stats)
    np.testing.assert_allclose(terms.value, bound, rtol=1e-13)
    h = 1e-7  # within the floored rows' region, |1 - y f| < 1e-5
    for i in range(f_mean.size):
        step = np.zeros_like(f_mean)
        step[i] = h
        up, down = (hinge.mean_field_expectation(f_mean + s, f_var) for s in (step, -step))
        np.testing.assert_allclose(terms.slope[i], (up.value - down.value) / (2 * h), atol=1e-6)
        second = (up.slope[i] - down.slope[i]) / (2 * h)
        np.testing.assert_allclose(terms.curvature[i], -second, rtol=1e-6)
    chi = (1 - hinge.y * f_mean) ** 2 + f_var
    assert np.all(chi[[5, 7]] < CHI_FLOOR)  # the floored rows were tested
    assert np.all(chi[[0, 1, 2, 3, 4, 6]] > CHI_FLOOR)


def _papers_start(model):
    return initial_state(model.blocks, [block.starts[0] for block in model.blocks])


def _cavi_optimum(model, tol):
    """Plain CAVI with SQUAREM from the papers' start: the result and its sweeps."""
    step = Squarem(make_cavi_step(model.blocks))
    result = run_ascent(_papers_start(model), step, tol=tol, max_iter=20_000, relative=True)
    return result, step.sweeps


@pytest.fixture(scope="module")
def spam_model():
    data = bayesvm.data.load_spam()
    X = data.drop(columns="type").to_numpy(float)
    return MixedSVM.penalized((X - X.mean(0)) / X.std(0), np.where(data["type"] == "spam", 1, -1))


@pytest.mark.parametrize("name", ["heart", "spam"])
def test_newton_steps_reach_cavi_optimum_in_fewer_sweeps(name, heart_model, spam_model):
    model = heart_model if name == "heart" else spam_model
    fit = bayesvm.fit(model, "vb", starts=1, progressbar=False)
    assert_never_decreases(fit.lower_bound_trace)
    reference, _ = _cavi_optimum(model, tol=1e-15)
    _, cavi_sweeps = _cavi_optimum(model, tol=model.vb_settings["tol"])
    means, sds = q_moments(model, reference.state[0])
    for var, mean in means.items():
        error = np.abs(fit.idata.variational[f"{var}_q_mean"].to_numpy() - mean)
        assert np.max(error / sds[var]) < 1e-3, var
    # heart: 13 sweeps against 31; spam: 16 against 157
    assert int(fit.idata.variational["sweeps"]) < 0.5 * cavi_sweeps


def test_without_acceleration_vb_is_the_papers_coordinate_ascent(heart_model):
    fit = bayesvm.fit(heart_model, "vb", accelerate=False, starts=1, progressbar=False)
    step = make_cavi_step(heart_model.blocks)
    papers = run_ascent(_papers_start(heart_model), step, **heart_model.vb_settings)
    np.testing.assert_allclose(fit.lower_bound_trace, papers.trace, rtol=1e-12)
