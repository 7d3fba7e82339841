import arviz as az
import numpy as np
import pytest

import bayesvm
from bayesvm.drivers import BoundDecreasedError, Progress, run_ascent, run_mcmc
from bayesvm.interrupts import interrupts_end_fits
from bayesvm.models import GPSVM, LinearSVM
from bayesvm.samplers.diagnostics import mcmc_converged
from bayesvm.samplers.gibbs import make_gibbs_kernel

from conftest import simulate_logistic


def _counting_kernel(interrupt_at=None):
    calls = {"n": 0}

    def init(rng):
        return 0.0

    def step(state, rng):
        calls["n"] += 1
        if calls["n"] == interrupt_at:
            raise KeyboardInterrupt
        return state + 1.0, {}

    def record(state):
        return {"x": state, "pair": np.array([state, -state])}

    return init, step, record


def test_mcmc_records_draws_after_tuning_per_chain():
    init, step, record = _counting_kernel()
    result = run_mcmc(
        init,
        step,
        record,
        rng=np.random.default_rng(0),
        chains=3,
        tune=5,
        draws=4,
        progressbar=False,
    )
    assert result.samples["x"].shape == (3, 4)
    assert result.samples["pair"].shape == (3, 4, 2)
    np.testing.assert_array_equal(result.samples["x"][1], [6, 7, 8, 9])
    assert not result.interrupted


def test_interrupt_keeps_the_finished_chains():
    init, step, record = _counting_kernel(interrupt_at=2 * 9 + 3)  # during chain 3
    with pytest.warns(UserWarning, match="keeping 2 chain"):
        result = run_mcmc(
            init,
            step,
            record,
            rng=np.random.default_rng(0),
            chains=3,
            tune=5,
            draws=4,
            progressbar=False,
        )
    assert result.interrupted and result.samples["x"].shape == (2, 4)


def test_interrupt_in_the_first_chain_keeps_its_draws_so_far():
    init, step, record = _counting_kernel(interrupt_at=8)  # 5 tuning + 2 draws done
    with pytest.warns(UserWarning, match="keeping 1 chain"):
        result = run_mcmc(
            init,
            step,
            record,
            rng=np.random.default_rng(0),
            chains=2,
            tune=5,
            draws=10,
            progressbar=False,
        )
    np.testing.assert_array_equal(result.samples["x"], [[6, 7]])


def test_ascent_stops_when_the_increase_is_below_tol():
    result = run_ascent(0, lambda k: (k + 1, -(0.5 ** (k + 1))), tol=1e-3, max_iter=100)
    assert result.converged and np.all(np.diff(result.trace) > 0)
    assert np.diff(result.trace)[-1] < 1e-3 <= np.diff(result.trace)[-2]


def test_ascent_raises_when_the_objective_decreases():
    with pytest.raises(BoundDecreasedError, match="decreased"):
        run_ascent(0, lambda k: (k + 1, [0.0, 1.0, 0.5][k]), tol=1e-12, max_iter=3)


def test_ascent_reports_non_convergence():
    result = run_ascent(0, lambda k: (k + 1, float(k)), tol=1e-3, max_iter=5)
    assert not result.converged and result.trace.size == 5
    assert result.problems == [
        "stopped at max_iter=5 with the objective still rising by 1 per iteration (tol=0.001): "
        "raise max_iter"
    ]


def test_ascent_stopped_after_one_iteration_says_so_without_a_nan():
    result = run_ascent(0, lambda k: (k + 1, float(k)), tol=1e-3, max_iter=1)
    assert result.problems == [
        "stopped at max_iter=1 after one iteration, before any change of the objective could "
        "be measured (tol=0.001): raise max_iter"
    ]


def test_a_progress_bar_writes_nothing_where_no_terminal_shows_it(capsys):
    """Off a terminal (a log, a pipe, a test's capture) a bar would leave a blank line on
    standard output; it is drawn on standard error, and there only on a terminal.
    """
    with Progress(True, "sampling", 10, delay=0.0) as progress:
        progress.update(5, "half")
    assert capsys.readouterr() == ("", "")
    init, step, record = _counting_kernel()
    run_mcmc(init, step, record, rng=np.random.default_rng(0), chains=1, tune=0, draws=300)
    assert capsys.readouterr() == ("", "")


def test_a_single_chain_is_judged_by_its_halves():
    rng = np.random.default_rng(0)
    iid = rng.standard_normal((1, 1000, 3))
    switching = iid + np.where(np.arange(1000) < 500, 0.0, 3.0)[None, :, None]  # two modes
    for draws, expected in [(iid, True), (switching, False)]:
        idata = az.from_dict(posterior={"w": draws, "tau": np.exp(draws[..., 0])})
        assert mcmc_converged(idata) is expected


def test_nuts_chain_starts_leave_infinite_values_to_pymc():
    """Over one group, VB's ``q(sigma2_u)`` has shape 1 and an infinite mean: the first chain's
    start leaves ``sigma2_u`` where PyMC starts it, and every value given is finite.
    """
    from bayesvm.estimator import MODELS
    from bayesvm.samplers.nuts import chain_starts

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = np.where(X[:, 0] + rng.normal(size=12) > 0, 1, -1)
    model = MODELS["random_intercept"].build(
        X, y, groups=np.zeros(12, dtype=int), sigma2_beta=100.0
    )
    starts = chain_starts(model, model.to_pymc(), 2, rng)
    assert "sigma2_u_log__" not in starts[0] and "beta" in starts[0]
    assert all(np.all(np.isfinite(value)) for start in starts for value in start.values())


def test_an_interrupted_svi_fit_keeps_its_steps_so_far_unless_told_to_end(monkeypatch):
    model = GPSVM.from_arrays(*simulate_logistic(30, 2, seed=3), inducing=6)
    minibatches = GPSVM.minibatches

    def stopped_at_the_eighth(self, batch_size, rng):
        for index, batch in enumerate(minibatches(self, batch_size, rng)):
            if index == 7:
                raise KeyboardInterrupt
            yield batch

    monkeypatch.setattr(GPSVM, "minibatches", stopped_at_the_eighth)
    with pytest.warns(UserWarning, match="interrupted after 7 steps"):
        fit = bayesvm.fit(model, "svi", progressbar=False, draws=50)
    assert "interrupted after 7 steps, before converging" in fit.problems
    with interrupts_end_fits(), pytest.raises(KeyboardInterrupt):
        bayesvm.fit(model, "svi", progressbar=False, draws=50)


def test_a_gibbs_sweep_returns_a_new_state_and_its_info_goes_to_the_sample_stats():
    model = LinearSVM.from_arrays(*simulate_logistic(20, 2, seed=4), alpha=1.0)
    init, step, record = make_gibbs_kernel(model.blocks)
    rng = np.random.default_rng(0)
    start = init(rng)
    given = dict(start)
    state, info = step(start, rng)
    assert start.keys() == given.keys() and all(start[name] is given[name] for name in given)
    assert state is not start and any(state[name] is not start[name] for name in start)
    result = run_mcmc(
        init,
        lambda state, rng: (step(state, rng)[0], {"sweep_info": 1.0}),
        record,
        rng=rng,
        chains=1,
        tune=0,
        draws=3,
        progressbar=False,
    )
    assert "sweep_info" in result.stats and "sweep_info" not in result.samples
