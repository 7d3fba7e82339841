"""SQUAREM acceleration of CAVI and the heat of several starts: same fixed points, fewer sweeps."""

from typing import NamedTuple

import numpy as np
import pytest

import bayesvm
from bayesvm.drivers import run_ascent, run_ascent_from
from bayesvm.models import LinearRegression, LinearSVM, LogisticRegression, MixedSVM
from bayesvm.vb.squarem import Squarem, StatsVector
from bayesvm.vb.state import VBState

from conftest import assert_never_decreases, simulate_logistic


class Point(NamedTuple):
    value: np.ndarray
    count: int = 0


def linear_sweep(matrix, offset):
    """``x -> M x + c``, a contraction with fixed point ``(I - M)^-1 c``, as a CAVI sweep: the
    bound is minus the squared distance to the fixed point (it rises along the iteration).
    """
    fixed = np.linalg.solve(np.eye(len(offset)) - matrix, offset)

    def sweep(state):
        x = state[1]["x"].value
        new = matrix @ x + offset
        return VBState({}, {"x": Point(new, state[1]["x"].count + 1)}), -float(
            np.sum((new - fixed) ** 2)
        )

    return sweep, fixed


def test_stats_vector_round_trip_keeps_other_fields():
    stats = {"a": Point(np.arange(3.0), 7), "b": Point(np.array([[1.0, 2.0]]))}
    vector = StatsVector(stats)
    flat = vector.flatten(stats)
    np.testing.assert_array_equal(flat, [0.0, 1.0, 2.0, 1.0, 2.0])
    back = vector.unflatten(flat + 1.0, stats)
    np.testing.assert_array_equal(back["b"].value, [[2.0, 3.0]])
    assert back["a"].count == 7


def test_squarem_solves_a_slow_linear_iteration_in_few_sweeps():
    """Plain iteration of a contraction with rate 0.99 needs thousands of sweeps; squared
    extrapolation is exact for a scalar linear map (Varadhan & Roland 2008, section 3)."""
    sweep, fixed = linear_sweep(np.array([[0.99]]), np.array([1.0]))
    start = VBState({}, {"x": Point(np.zeros(1))})
    plain = run_ascent(start, sweep, tol=1e-12, max_iter=10_000)
    accelerated = Squarem(sweep)
    result = run_ascent(start, accelerated, tol=1e-12, max_iter=10_000)
    np.testing.assert_allclose(result.state[1]["x"].value, fixed, rtol=1e-6)
    assert plain.trace.size > 1000
    assert accelerated.sweeps < 20
    assert_never_decreases(result.trace)


def test_squarem_keeps_the_plain_sweeps_when_the_extrapolation_is_invalid():
    """A sweep that cannot take the extrapolated state (here: any x above 5 raises, as a
    precision that is not positive definite would) leaves the cycle at its second sweep."""
    sweep, fixed = linear_sweep(np.array([[0.9]]), np.array([0.5]))

    def fragile(state):
        if state[1]["x"].value[0] > 5.0:
            raise np.linalg.LinAlgError("not positive definite")
        return sweep(state)

    cycle = Squarem(fragile)
    state = VBState({}, {"x": Point(np.array([4.0]))})
    for _ in range(30):
        state, bound = cycle(state)
    np.testing.assert_allclose(state[1]["x"].value, fixed, rtol=1e-8)


MODELS = {
    "mixed-penalized": lambda X, y: MixedSVM.penalized(X, y),
    "ridge-learned": lambda X, y: LinearSVM.from_arrays(X, y),
    "lasso-fixed": lambda X, y: LinearSVM.from_arrays(X, y, prior="lasso", alpha=0.5),
    "logistic-ard": lambda X, y: LogisticRegression.from_arrays(X, y, ard=True),
    "regression-ard": lambda X, y: LinearRegression.from_arrays(
        X, X @ np.arange(X.shape[1]) + y, ard=True
    ),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_accelerated_vb_reaches_the_plain_fixed_point(name):
    X, y = simulate_logistic(300, 8, seed=11)
    model = MODELS[name](X, y)
    options = {"tol": 1e-13, "max_iter": 50_000, "draws": 10}
    plain = bayesvm.fit(model, method="vb", accelerate=False, **options)
    fast = bayesvm.fit(model, method="vb", **options)
    assert plain.converged and fast.converged
    assert fast.lower_bound == pytest.approx(plain.lower_bound, rel=1e-9, abs=1e-8)
    q_plain, q_fast = plain.idata.variational, fast.idata.variational
    for variable in q_plain.data_vars:
        if variable.endswith("_q_mean"):  # q's exact moments: measured by its own sd
            sd = q_plain[variable.replace("_q_mean", "_q_sd")].to_numpy()
            finite = np.isfinite(sd) & (sd > 0)
            change = np.abs(q_fast[variable].to_numpy() - q_plain[variable].to_numpy())
            assert np.all(change[finite] / sd[finite] < 1e-4), variable
        elif variable.endswith("_mean"):
            variance = variable.replace("_mean", "_variance")
            sd = np.sqrt(q_plain[variance] if variance in q_plain else np.diag(q_plain["V"]))
            assert float(np.max(np.abs(q_fast[variable] - q_plain[variable]) / sd)) < 1e-4
        if variable.endswith("_variance"):
            np.testing.assert_allclose(q_fast[variable], q_plain[variable], rtol=1e-4)


def test_svm_vb_takes_under_half_the_sweeps_with_squarem():
    X, y = simulate_logistic(2000, 20, seed=12)
    model = MixedSVM.penalized(X, y)
    plain = bayesvm.fit(model, method="vb", accelerate=False, draws=10)
    fast = bayesvm.fit(model, method="vb", draws=10)
    assert 2 * int(fast.idata.variational["sweeps"]) < int(plain.idata.variational["sweeps"])


def test_heat_continues_the_leader_alone():
    """Two starts of ``-(k - target)^2``-style ascents: after the heat only the leader runs,
    and its trace continues the heat's."""
    calls = {"low": 0, "high": 0}

    def make_step():
        def step(state):
            name, k = state
            calls[name] += 1
            ceiling = 10.0 if name == "high" else 5.0
            return (name, k + 1), ceiling - 0.5**k

        return step

    result = run_ascent_from([("low", 0), ("high", 0)], make_step, tol=1e-6, max_iter=100, heat=3)
    assert result.state[0] == "high"
    assert calls["low"] == 3
    assert result.trace.size == calls["high"]
    assert result.converged


def test_infinite_entries_do_not_stop_the_extrapolation():
    """A precision of ``inf`` (a coefficient held at 0) rides along unextrapolated."""
    sweep, fixed = linear_sweep(np.array([[0.99]]), np.array([1.0]))

    def with_infinity(state):
        (params, stats), bound = sweep(VBState({}, {"x": Point(state[1]["x"].value[:1])}))
        return VBState(params, {"x": Point(np.append(stats["x"].value, np.inf))}), bound

    accelerated = Squarem(with_infinity)
    start = VBState({}, {"x": Point(np.array([0.0, np.inf]))})
    result = run_ascent(start, accelerated, tol=1e-12, max_iter=10_000)
    np.testing.assert_allclose(result.state[1]["x"].value, [fixed[0], np.inf], rtol=1e-6)
    assert accelerated.sweeps < 20
