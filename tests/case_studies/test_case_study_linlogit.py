"""``bayesvm reproduce linlogit``: Drugowitsch (2019) examples 2.6 and 3.6."""

import re
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

from bayesvm.case_studies import linlogit
from bayesvm.case_studies.linlogit import (
    EXAMPLES,
    FIGURE_FILES,
    QUICK_PROTOCOL,
    TABLES,
    LeastSquares,
    LogisticMaximumLikelihood,
    run,
    run_example,
)
from bayesvm.case_studies.runner import ResumeMismatchError

from conftest import FAMILY_LEVEL


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("linlogit")
    return out_dir, run(out_dir, quick=True, progressbar=False)


def scores_of(tables, example):
    scores = tables["scores"]
    rows = scores[scores["example"] == example]
    return rows.pivot_table(index="method", columns="metric", values="value")


def test_quick_run_writes_tables_figures_and_report(quick_run):
    out_dir, tables = quick_run
    for name in TABLES:
        on_disk = pd.read_csv(out_dir / f"linlogit_{name}.csv", dtype={"example": str})
        assert len(on_disk) == len(tables[name]) > 0, name
    for file_name in FIGURE_FILES.values():
        assert (out_dir / file_name).stat().st_size > 10_000, file_name
    report = (out_dir / "report.md").read_text()
    assert all(f"## {example}:" in report for example in EXAMPLES)
    # No example key read back as a number ("3.30" -> 3.3) starts a table row.
    assert not re.search(r"^\| 3\.3 \|", report, re.MULTILINE)
    assert "The paper's draw:" in report
    assert set(tables["timings"]["method"]) >= {"VB", "Gibbs", "NUTS", "ML", "VB-ARD"}


def test_bayesian_methods_agree_and_cover_the_truth(quick_run):
    """2.6.1: VB is the exact-in-form posterior of a well-determined problem, so VB, Gibbs and
    NUTS means agree (and ML's) to a small fraction of a posterior sd, and every 95 % interval
    covers the true coefficient (w = 1, 2, 3, 5 from 100 points).

    The quick run's means and interval ends are Monte Carlo estimates but ML's (VB's from 1000
    independent draws of q; Gibbs's and NUTS's from chains whose smallest bulk ESS the timings
    table gives): each comparison allows their Monte Carlo errors, z-tests at ``FAMILY_LEVEL``
    Bonferroni-corrected over the 44 comparisons. VB's mean-field and ML's unshrunk means are
    allowed a bias of 0.1 posterior sd besides (VB and ML differ by 0.07 sd at most here).
    """
    _, tables = quick_run
    rows = tables["coefficients"][tables["coefficients"]["example"] == "2.6.1"]
    means, lower, upper = (
        rows.pivot(index="index", columns="method", values=column)
        for column in ("mean", "lower", "upper")
    )
    truth = rows.pivot(index="index", columns="method", values="truth")["ML"]
    sd = (upper["NUTS"] - lower["NUTS"]) / (2 * 1.96)
    timings = tables["timings"][tables["timings"]["example"] == "2.6.1"]
    ess = timings.set_index("method")["ess_bulk_min"].to_dict()
    ess.update(VB=QUICK_PROTOCOL.vb_draws, ML=np.inf)
    critical = stats.norm.isf(FAMILY_LEVEL / 2 / (3 * 4 + 4 * 4 * 2))
    for method, bias in (("VB", 0.1), ("Gibbs", 0.0), ("ML", 0.1)):
        error = sd * np.sqrt(1.0 / ess[method] + 1.0 / ess["NUTS"])
        assert np.all(np.abs(means[method] - means["NUTS"]) < bias * sd + critical * error), method
    for method in ("VB", "Gibbs", "NUTS", "ML"):
        # a sample 2.5 % or 97.5 % quantile has Monte Carlo error sqrt(p (1 - p) / ESS) over
        # the density there, a normal's: phi(1.96) / sd
        error = np.sqrt(0.025 * 0.975 / ess[method]) * sd / stats.norm.pdf(1.96)
        covered = (lower[method] - critical * error <= truth) & (
            truth <= upper[method] + critical * error
        )
        assert covered.all(), method


def test_the_papers_conclusions_hold_on_our_draw(quick_run):
    _, tables = quick_run
    # 2.6.2: Bayesian shrinkage predicts better than least squares, which over-fits.
    linear = scores_of(tables, "2.6.2")
    assert linear.loc["VB", "test_mse"] < linear.loc["ML", "test_mse"]
    assert linear.loc["ML", "train_mse"] < linear.loc["VB", "train_mse"]
    # 2.6.4 and 3.6.3: the bound peaks at the true polynomial order (2).
    selection = tables["selection"]
    for example in ("2.6.4", "3.6.3"):
        rows = selection[selection["example"] == example]
        assert rows.loc[rows["bound"].idxmax(), "order"] == rows["true_order"].iloc[0] == 2
    # 3.6.2: ARD beats the shared and the fixed priors out of sample; the fixed N(0, I/D)
    # prior shrinks the informative weights hardest.
    logit = scores_of(tables, "3.6.2")
    assert logit.loc["VB-ARD", "test_01"] < logit.loc["VB", "test_01"]
    assert logit.loc["VB-ARD", "test_01"] < logit.loc["VB (fixed prior)", "test_01"]
    coefficients = tables["coefficients"]
    informative = coefficients[(coefficients["example"] == "3.6.2") & (coefficients["truth"] != 0)]
    size = informative.assign(size=informative["mean"].abs()).groupby("method")["size"].mean()
    assert size["VB (fixed prior)"] < size["VB"] < size["VB-ARD"]
    # On 2000 test points the true P(y = 1 | x) has the smallest log-loss.
    log_loss = logit["test_log_loss"]
    assert log_loss.idxmin() == linlogit.TRUE_MODEL


def test_examples_are_seeded_on_their_own_and_resume_keeps_them(quick_run, monkeypatch):
    out_dir, tables = quick_run
    again = run_example("3.6.1", methods=("vb", "ml"), protocol=QUICK_PROTOCOL, seed=2019)
    first = tables["coefficients"]
    first = first[(first["example"] == "3.6.1") & ~first["method"].str.startswith("NUTS")]
    pd.testing.assert_frame_equal(
        again["coefficients"].reset_index(drop=True), first.reset_index(drop=True)
    )

    def fail(*args, **kwargs):
        raise AssertionError("a finished example was run again")

    monkeypatch.setattr(linlogit, "run_example", fail)
    resumed = run(out_dir, quick=True, resume=True, progressbar=False)
    for name in TABLES:
        pd.testing.assert_frame_equal(resumed[name], tables[name], check_dtype=False)


def test_logistic_examples_record_whether_a_method_predicted_one_class(quick_run):
    _, tables = quick_run
    scores = tables["scores"]
    flags = scores[scores["metric"] == "test_single_class"]
    assert set(flags["example"]) == {"3.6.1", "3.6.2", "3.6.3"}
    assert set(flags["value"]) <= {0.0, 1.0}
    assert (flags.loc[flags["method"].str.startswith("VB"), "value"] == 0).all()


def test_report_names_a_method_that_predicted_one_class(quick_run, tmp_path, monkeypatch):
    out_dir, _ = quick_run
    shutil.copytree(out_dir / "examples", tmp_path / "examples")
    shutil.copy(out_dir / "examples.settings.json", tmp_path)
    scores_path = tmp_path / "examples" / "3.6.1" / "scores.csv"
    scores = pd.read_csv(scores_path)
    constant = (scores["method"] == "ML") & (scores["metric"] == "test_single_class")
    scores.loc[constant, "value"] = 1.0
    scores.to_csv(scores_path, index=False)
    monkeypatch.setattr(linlogit, "run_example", pytest.fail)
    run(tmp_path, quick=True, resume=True, progressbar=False)
    report = (tmp_path / "report.md").read_text()
    section = report[report.index("## 3.6.1") : report.index("## 3.6.2")]
    assert "ML predicted a single class for every test point" in section
    assert report.count("predicted a single class") == 1


def test_resume_refuses_examples_run_with_other_settings(quick_run, monkeypatch):
    out_dir, _ = quick_run
    monkeypatch.setattr(linlogit, "run_example", pytest.fail)
    before = {path: path.read_bytes() for path in out_dir.rglob("*.csv")}
    with pytest.raises(ResumeMismatchError, match=r"methods: \['vb', 'gibbs', 'nuts', 'ml'\] "):
        run(out_dir, quick=True, resume=True, methods=("vb", "ml"), progressbar=False)
    with pytest.raises(ResumeMismatchError, match="quick: True before, False now"):
        run(out_dir, resume=True, progressbar=False)
    assert {path: path.read_bytes() for path in out_dir.rglob("*.csv")} == before


def test_a_fresh_run_deletes_the_examples_of_an_earlier_one(quick_run, tmp_path, monkeypatch):
    """Otherwise an interrupted fresh run would leave examples of the earlier settings for a
    later resume to keep."""
    out_dir, tables = quick_run
    shutil.copytree(out_dir / "examples", tmp_path / "examples")

    def first_example_only(example, **options):
        if example != EXAMPLES[0]:
            raise KeyboardInterrupt
        return {name: table[table["example"] == example] for name, table in tables.items()}

    monkeypatch.setattr(linlogit, "run_example", first_example_only)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, quick=True, methods=("vb", "ml"), progressbar=False)
    finished = sorted(path.parent.name for path in tmp_path.rglob("scores.csv"))
    assert finished == [EXAMPLES[0]]
    with pytest.raises(ResumeMismatchError, match="methods"):
        run(tmp_path, quick=True, resume=True, progressbar=False)


def test_least_squares_intervals_match_scipys_regression():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(30)
    y = 1.0 - 2.0 * x + rng.standard_normal(30)
    fit = LeastSquares.fit(np.column_stack([np.ones(30), x]), y)
    reference = stats.linregress(x, y)
    half = stats.t.ppf(0.975, 28) * np.array([reference.intercept_stderr, reference.stderr])
    mean, lower, upper = fit.coefficient_intervals(0.95)
    np.testing.assert_allclose(mean, [reference.intercept, reference.slope], rtol=1e-10)
    np.testing.assert_allclose(upper - mean, half, rtol=1e-10)
    np.testing.assert_allclose(mean - lower, half, rtol=1e-10)
    # More coefficients than observations: the minimum-norm fit, no interval.
    wide = LeastSquares.fit(rng.standard_normal((5, 8)), rng.standard_normal(5))
    assert np.all(np.isnan(wide.coefficient_intervals(0.95)[1]))


def test_logistic_maximum_likelihood_is_the_likelihood_maximum():
    """The gradient of the log-likelihood vanishes at the estimate, and the Wald sds are the
    inverse information's diagonal."""
    rng = np.random.default_rng(1)
    X = np.column_stack([np.ones(200), rng.standard_normal((200, 2))])
    y = np.where(rng.random(200) < expit(X @ [0.3, 1.0, -0.5]), 1, -1)
    fit = LogisticMaximumLikelihood.fit(X, y)
    gradient = X.T @ ((y > 0) - expit(X @ fit.w))
    assert np.abs(gradient).max() < 1e-3
    p = expit(X @ fit.w)
    information = X.T @ ((p * (1 - p))[:, None] * X)
    np.testing.assert_allclose(fit.sd, np.sqrt(np.diag(np.linalg.inv(information))), rtol=1e-8)
