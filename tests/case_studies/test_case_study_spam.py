import shutil

import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm import cli
from bayesvm.case_studies import spam
from bayesvm.case_studies.preprocessing import standardize
from bayesvm.case_studies.runner import Task, run_tasks
from bayesvm.case_studies.spam import (
    FULL_DATA_FILES,
    METHODS,
    OUTPUT_FILES,
    QUICK_PROTOCOL,
    agreement_table,
    paper_names,
    path_variables,
    positive_probability,
    run,
    selection_table,
    spam_data,
    spike_slab_plan,
    split_rows,
)
from bayesvm.data import load_spam
from bayesvm.models import SpikeSlabSVM


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("spam")
    return out_dir, run(out_dir, quick=True, progressbar=False)


def test_quick_run_writes_every_output(quick_run):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        assert (out_dir / name).stat().st_size > 0, name
    on_disk = pd.read_csv(out_dir / "spam.csv")
    assert list(on_disk.columns) == [
        "split",
        "method",
        "ber",
        "seconds",
        "n_selected",
        "single_class",
        "converged",
        "warnings",
    ]
    assert on_disk["split"].tolist() == [0] * 5 + [1] * 5
    assert on_disk["method"].tolist() == list(METHODS) * 2
    assert on_disk["ber"].between(0, 1).all() and (on_disk["seconds"] > 0).all()
    pd.testing.assert_frame_equal(on_disk.fillna(""), results.fillna(""), check_dtype=False)
    # Every method beats chance by far, even on a quarter of 500 e-mails.
    assert results.groupby("method")["ber"].mean().max() < 0.2
    used = results.set_index(["split", "method"])["n_selected"]
    assert (used.xs("svm", level="method") == 57).all()
    assert (used.xs("ridge_vb", level="method") == 57).all()
    assert (used.xs("sparse_vb", level="method") < 57).all()


def test_quick_run_full_data_outputs(quick_run):
    out_dir, _ = quick_run
    plans = spike_slab_plan(QUICK_PROTOCOL)
    inclusion = pd.read_csv(out_dir / "spam_inclusion.csv")
    assert list(inclusion.columns) == [
        "fit",
        "feature",
        "inclusion_probability",
        "positive_probability",
        "u_mean",
    ]
    assert inclusion["fit"].unique().tolist() == ["vb", "gibbs", "rj", "slab_0.01", "slab_0.5"]
    assert (inclusion.groupby("fit").size() == 57).all()
    probabilities = inclusion[["inclusion_probability", "positive_probability"]]
    assert probabilities.stack().between(0, 1).all()
    # Pr(u_j > 0) needs gamma_j = 1: never above the inclusion probability (Polson-Scott).
    slab = inclusion[inclusion["fit"].str.startswith("slab")]
    assert (slab["positive_probability"] <= slab["inclusion_probability"]).all()
    fits = pd.read_csv(out_dir / "spam_fits.csv")
    assert fits["fit"].tolist() == [plan.name for plan in plans]
    assert fits["n_iter"].tolist()[1:] == [400] * 4 and fits["seconds"].gt(0).all()
    path = pd.read_csv(out_dir / "spam_lasso_path.csv")
    assert path["method"].tolist() == ["ecme"] + ["em"] * len(QUICK_PROTOCOL.lasso_nus)
    assert path["nu"].tolist()[1:] == list(QUICK_PROTOCOL.lasso_nus)
    assert list(path.columns[7:]) == inclusion["feature"].unique().tolist()
    # The lasso keeps more features as nu (the prior's scale) grows.
    assert path["n_nonzero"].iloc[1:].is_monotonic_increasing
    np.testing.assert_array_equal(path["n_nonzero"], (path.iloc[:, 7:] != 0).sum(axis=1))


def test_quick_report_has_the_tables(quick_run):
    out_dir, _ = quick_run
    report = (out_dir / "report.md").read_text()
    assert report.startswith("# Spam data: variable selection")
    assert "| VB | 4,560 |" in report and "| MCMC (Gibbs) | 36,000 |" in report
    assert "| Reversible jump |  |" in report
    assert (
        "| fits | max abs difference | feature | mean abs difference | correlation | "
        "selected by one only |" in report
    )
    assert "| VB vs MCMC (Gibbs) |" in report and "| MCMC (Gibbs) vs Reversible jump |" in report
    assert "| fit | selected (> 0.5) | almost certain (> 0.99) |" in report
    assert "ECME estimates nu = " in report and "Polson-Scott: 1.353" in report
    assert "| method | splits | mean | median | sd | features used (mean) |" in report
    for name in OUTPUT_FILES:
        if name.endswith(".png"):
            assert f"({name})" in report, name
    assert "logical cores" in report and "500 random e-mails" in report


def test_paper_names_follow_polson_scott_table_1():
    names = paper_names(load_spam().columns[:-1])
    assert len(set(names)) == 57
    assert names[:4] == ["word_freq_make", "word_freq_address", "word_freq_all", "word_freq_3d"]
    assert sum(name.startswith("word_freq_") for name in names) == 48
    assert names[48:54] == [f"char_freq_{c}" for c in ";([!$#"]
    assert names[54:] == ["CRL_average", "CRL_longest", "CRL_total"]
    assert {"word_freq_000", "word_freq_1999", "word_freq_george", "word_freq_cs"} <= set(names)


def test_spam_data_codes_spam_positive_and_subsamples_reproducibly():
    D, y, names = spam_data()
    assert D.shape == (4601, 57) and len(names) == 57
    assert (y == 1).sum() == 1813 and (y == -1).sum() == 2788
    small, small_y, _ = spam_data(100, seed=5)
    again, _, _ = spam_data(100, seed=5)
    np.testing.assert_array_equal(small, again)
    assert small.shape == (100, 57) and set(np.unique(small_y)) == {-1, 1}
    assert not np.array_equal(small, spam_data(100, seed=6)[0])


def test_standardize_centres_a_constant_column_instead_of_dividing_by_zero():
    train = np.array([[1.0, 0.0], [3.0, 0.0], [5.0, 0.0]])
    test = np.array([[3.0, 2.0]])
    scaled_train, scaled_test = standardize(train, test)
    np.testing.assert_allclose(scaled_train[:, 0], [-1.2247448713915890, 0.0, 1.2247448713915890])
    np.testing.assert_array_equal(scaled_train[:, 1], 0.0)
    np.testing.assert_allclose(scaled_test, [[0.0, 2.0]])


def test_agreement_and_selection_tables():
    inclusion = pd.DataFrame(
        {"A": [1.0, 0.9, 0.0, 0.2], "B": [1.0, 0.3, 0.1, 0.6]}, index=["w", "x", "y", "z"]
    )
    (row,) = agreement_table(inclusion).to_dict("records")
    assert row["fits"] == "A vs B" and row["feature"] == "x"
    assert row["max abs difference"] == pytest.approx(0.6)
    assert row["mean abs difference"] == pytest.approx((0.0 + 0.6 + 0.1 + 0.4) / 4)
    assert row["correlation"] == pytest.approx(np.corrcoef(inclusion["A"], inclusion["B"])[0, 1])
    assert row["selected by one only"] == 2  # x and z
    selection = selection_table(inclusion)
    assert selection.to_dict("list") == {
        "fit": ["A", "B"],
        "selected (> 0.5)": [2, 2],
        "almost certain (> 0.99)": [1, 1],
    }


def test_path_variables_take_the_surest_then_the_least_sure():
    inclusion = pd.Series([0.2, 1.0, 0.55, 1.0, 0.99, 0.4], index=list("abcdef"))
    assert path_variables(inclusion) == ["b", "d", "c", "f"]


def test_positive_probability_of_vb_is_q_in_closed_form():
    D, y, names = spam_data(500, seed=1)
    (D,) = standardize(D)
    fitted = bayesvm.fit(SpikeSlabSVM.laplace_zero(D, y, feature_names=names), "vb", seed=0)
    q = fitted.idata["variational"]
    v = positive_probability(fitted, "v")
    assert v.index.tolist() == names
    # q's mean over 1000 draws of v agrees with the closed form within Monte Carlo error.
    from_draws = (fitted.idata.posterior["v"] > 0).mean(("chain", "draw")).to_numpy()
    np.testing.assert_allclose(v, from_draws, atol=4 * 0.5 / np.sqrt(1000))
    u = positive_probability(fitted, "u")
    np.testing.assert_allclose(u, v * q["gamma_probability"].to_numpy())
    with pytest.raises(ValueError, match="'v' or 'u'"):
        positive_probability(fitted, "gamma")


# Rows from worker processes equal the serial run's, shown on real fits in test_runner.py; a
# pool of this study's own (a few seconds of process start-up) is in the slow suite.
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_workers_do_not_change_results(quick_run, workers):
    _, sequential = quick_run
    tasks = [
        Task(
            key={"split": split},
            function=split_rows,
            kwargs={
                "split": split,
                "seed": spam.DEFAULT_SEED,
                "methods": ("lasso_ecme",),
                "protocol": QUICK_PROTOCOL,
            },
        )
        for split in range(2)
    ]
    one = run_tasks(tasks, workers=workers, progressbar=False)
    columns = ["split", "method", "ber", "n_selected"]
    # Each method has its own seed stream: ECME alone scores as ECME among all methods.
    expected = sequential.loc[sequential["method"] == "lasso_ecme", columns]
    pd.testing.assert_frame_equal(one[columns], expected.reset_index(drop=True))


def test_cli_resume_skips_finished_splits_and_full_data_fits(quick_run, tmp_path, monkeypatch):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        shutil.copy(out_dir / name, tmp_path / name)
    interrupted = results[results["split"] < 1].copy()
    interrupted.loc[:, "seconds"] = 12345.0  # kept as it is
    interrupted.to_csv(tmp_path / "spam.csv", index=False)
    ran = []

    def recording_split_rows(**kwargs):
        ran.append(kwargs["split"])
        return split_rows(**kwargs)

    monkeypatch.setattr(spam, "split_rows", recording_split_rows)
    monkeypatch.setattr(spam, "_full_data_results", pytest.fail)
    assert cli.main(["reproduce", "spam", "--quick", "--resume", "--out", str(tmp_path)]) == 0
    assert ran == [1]
    on_disk = pd.read_csv(tmp_path / "spam.csv")
    columns = ["split", "method", "ber"]
    pd.testing.assert_frame_equal(on_disk[columns], results[columns])
    assert (on_disk.loc[on_disk["split"] == 0, "seconds"] == 12345.0).all()
    for name in FULL_DATA_FILES:
        assert (tmp_path / name).read_bytes() == (out_dir / name).read_bytes(), name


def test_cli_resume_refuses_other_settings_before_fitting(quick_run, tmp_path, monkeypatch, capsys):
    out_dir, _ = quick_run
    for name in OUTPUT_FILES:
        shutil.copy(out_dir / name, tmp_path / name)
    monkeypatch.setattr(spam, "split_rows", pytest.fail)
    monkeypatch.setattr(spam, "_full_data_results", pytest.fail)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(
            ["reproduce", "spam", "--quick", "--datasets", "3", "--resume", "--out", str(tmp_path)]
        )
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("bayesvm reproduce: error: cannot resume")
    assert "n_splits: 2 before, 3 now" in error


def test_cli_knows_the_spam_methods(monkeypatch, tmp_path, capsys):
    calls = []
    monkeypatch.setattr(spam, "run", lambda **kwargs: calls.append(kwargs))
    out = ["--out", str(tmp_path)]
    cli.main(["reproduce", "spam", "--methods", "sparse_vb,lasso_ecme", "--workers", "2", *out])
    assert calls == [
        {"out_dir": tmp_path, "quick": False, "workers": 2, "methods": ["sparse_vb", "lasso_ecme"]}
    ]
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "spam", "--methods", "vb", *out])
    assert "unknown methods ['vb'] for spam" in capsys.readouterr().err
