"""The speed targets' table: every target measured, compared with its goal."""

import importlib.util

import numpy as np
import pytest

from bayesvm.bench import targets as bench_targets
from bayesvm.bench.targets import GOALS, QUICK_RESULT, Goal, import_seconds, run_target_bench

LABELS = [
    "penalized VB / LIBLINEAR seconds, 2,000 x 10",
    "penalized VB's means from a fit to a relative 1e-14, in q's sds, 2,000 x 10",
    "Gibbs / nutpie smallest bulk ESS per second, 50 x 3",
    "Gibbs / nutpie smallest bulk ESS per second, 100 x 5",
    "Gibbs / nutpie smallest bulk ESS per second, toenail",
    "logistic VB / vb_logit_fit.m seconds, N = 200, D = 10",
    "logistic VB / vb_logit_fit.m seconds, N = 200, D = 50",
    "import bayesvm seconds, median of 1",
]


def test_goal_compares_the_measured_value_with_its_bound():
    assert Goal("<=", 5.0).holds(5.0) and not Goal("<=", 5.0).holds(5.1)
    assert Goal(">", 1.0).holds(1.5) and not Goal(">", 1.0).holds(1.0)
    assert Goal("<", 0.5).holds(0.4) and not Goal("<", 0.5).holds(0.5)
    assert str(GOALS["vb_vs_liblinear"]) == "<= 2"


def _check_results(table):
    """Quick sizes: each target measured, and only the import (whose goal holds at any size)
    judged against its goal.
    """
    assert list(table["target"]) == LABELS
    assert list(table["goal"]) == ["<= 2", "<= 0.05", *["> 1"] * 3, *["<= 1"] * 2, "< 0.5"]
    measured = table[table["result"] != "not measured"]
    assert (measured["measured"] > 0).all()
    for _, row in measured.iterrows():
        if not row["target"].startswith("import"):
            assert row["result"] == QUICK_RESULT, row
            continue
        bound = float(row["goal"].split()[1])
        holds = {"<=": row["measured"] <= bound, "<": row["measured"] < bound}.get(
            row["goal"].split()[0], row["measured"] > bound
        )
        assert row["result"] == ("pass" if holds else "fail")


def test_quick_targets_without_nutpie_say_those_are_not_measured(monkeypatch):
    monkeypatch.setattr(bench_targets, "missing_package", lambda method: "nutpie")
    table = run_target_bench(quick=True)
    _check_results(table)
    nutpie = table["target"].str.startswith("Gibbs")
    assert (table.loc[nutpie, "result"] == "not measured").all()
    assert table.loc[nutpie, "measured"].isna().all()
    assert table.loc[nutpie, "detail"].str.contains("nutpie is not installed").all()
    assert (table.loc[~nutpie, "result"] != "not measured").all()
    logit = table.loc[5, "detail"]
    assert logit.startswith("VB ") and "vb_logit_fit.m " in logit


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("nutpie") is None, reason="nutpie is optional")
def test_quick_targets_measure_gibbs_against_nutpie():
    table = run_target_bench(quick=True)
    _check_results(table)
    assert (table["result"] != "not measured").all()


def test_import_seconds_times_a_fresh_interpreter():
    """``import bayesvm``, then the models and the methods (SciPy's import alone takes more
    than ``import bayesvm``).
    """
    ((seconds, first_fit),) = import_seconds(1)
    assert np.isfinite(seconds) and 0 < seconds < first_fit
