import shutil

import numpy as np
import pandas as pd
import pytest

from bayesvm import cli
from bayesvm.case_studies import cardiac
from bayesvm.case_studies.cardiac import (
    FEATURES,
    METHODS,
    OUTPUT_FILES,
    PAPER_PROTOCOL,
    QUICK_PROTOCOL,
    draw_split,
    outcome,
    paired_table,
    predictors,
    split_rows,
    training_rows,
)
from bayesvm.case_studies.preprocessing import standardize
from bayesvm.case_studies.runner import run_tasks, split_tasks
from bayesvm.data import load_cardiac

from conftest import assert_rows_converged_but_k_hat


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("cardiac")
    assert cli.main(["reproduce", "cardiac", "--quick", "--out", str(out_dir)]) == 0
    return out_dir, pd.read_csv(out_dir / "cardiac.csv")


def test_quick_run_writes_every_output(quick_run):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        assert (out_dir / name).stat().st_size > 0, name
    assert list(results.columns) == [
        "split",
        "method",
        "ber",
        "seconds",
        "n_train",
        "single_class",
        "converged",
        "warnings",
    ]
    assert results["split"].tolist() == [0] * len(METHODS) + [1] * len(METHODS)
    assert results["method"].tolist() == list(METHODS) * 2
    assert (results["seconds"] > 0).all() and not results["single_class"].any()
    # Every VB fit converges (q's k-hat aside); the short quick chains are flagged, as they
    # should be.
    assert_rows_converged_but_k_hat(results[results["method"] == "vb"])
    converged = results.set_index("method")["converged"]
    assert converged["svm"].isna().all()
    assert converged["gibbs"].notna().all()
    # Complete cases only for the paper's default SVM; every training row for the others.
    n_train = results.groupby("method")["n_train"].unique()
    assert n_train.to_dict().pop("svm").tolist() == [1382]
    assert all(rows.tolist() == [2628] for method, rows in n_train.items() if method != "svm")
    # Four predictors carry signal: every method is far better than chance. Training on the
    # incomplete rows too, VB and Gibbs beat the complete-case SVM on both splits here (on 79
    # and 73 of the paper protocol's 100 splits).
    assert results["ber"].between(0.2, 0.4).all()
    ber = results.pivot(index="split", columns="method", values="ber")
    assert (ber["vb"] < ber["svm"]).all() and (ber["gibbs"] < ber["svm"]).all()
    report = (out_dir / "report.md").read_text()
    assert report.startswith("# Cardiac catheterization data: missing cholesterol")
    assert (
        "| method | splits | mean | median | sd | training rows | single-class splits |" in report
    )
    assert "| Default SVM (complete cases) | 3,109 |" in report and "| VB | 1,028 |" in report
    assert "| MCMC (Gibbs) | 1,719 |" in report
    assert "| method | splits | mean difference | sd of difference | lower | higher |" in report
    assert "(876), drawn from the 2258 with cholesterol observed" in report
    assert "(2628: 1382 complete, 1246 with cholesterol missing)" in report
    assert "logical cores" in report and "(cardiac_ber.png)" in report


def test_splits_test_only_rows_with_cholesterol_observed():
    data = load_cardiac()
    observed = data["choleste"].notna().to_numpy()
    n_test = PAPER_PROTOCOL.n_test(len(data))
    assert n_test == 876
    tests = []
    for seed in range(5):
        train, test = draw_split(observed, n_test, np.random.default_rng(seed))
        assert test.size == 876 and train.size == 2628
        assert observed[test].all()
        assert np.intersect1d(train, test).size == 0
        np.testing.assert_array_equal(np.union1d(train, test), np.arange(len(data)))
        # Every incomplete row trains; 1382 of the 2258 complete rows do too.
        assert (~observed[train]).sum() == 1246 and observed[train].sum() == 1382
        tests.append(test)
    assert not np.array_equal(tests[0], tests[1])
    with pytest.raises(ValueError, match="n_test must be between 1 and 2257"):
        draw_split(observed, 2258, np.random.default_rng(0))


def test_predictors_log_the_duration_plus_one_day_and_keep_missing_cholesterol():
    data = load_cardiac()
    D = predictors(data)
    assert D.shape == (3504, len(FEATURES))
    np.testing.assert_array_equal(D[:, 0], data["age"])
    np.testing.assert_array_equal(D[:, 1], data["sex"])
    # cad.dur is 0 for 123 patients: log(1 + 0) = 0, not -inf.
    assert np.isfinite(D[:, :3]).all()
    zero_days = (data["cad.dur"] == 0).to_numpy()
    assert zero_days.sum() == 123 and (D[zero_days, 2] == 0.0).all()
    np.testing.assert_allclose(np.expm1(D[:, 2]), data["cad.dur"])
    missing = np.isnan(D[:, 3])
    np.testing.assert_array_equal(missing, data["choleste"].isna())
    np.testing.assert_allclose(np.exp(D[~missing, 3]), data["choleste"].dropna())
    y = outcome(data)
    assert (y == 1).sum() == 2334 and (y == -1).sum() == 1170


def test_standardize_leaves_missing_cells_out_of_the_moments():
    train = np.array([[1.0, 10.0], [3.0, np.nan], [5.0, 20.0]])
    test = np.array([[3.0, 15.0]])
    scaled_train, scaled_test = standardize(train, test)
    assert np.isnan(scaled_train[1, 1]) and not np.isnan(np.delete(scaled_train, 1, 0)).any()
    np.testing.assert_allclose(scaled_train[[0, 2], 1], [-1.0, 1.0])
    np.testing.assert_allclose(scaled_test, [[0.0, 0.0]])


def test_training_rows_leave_no_missing_cell():
    data = load_cardiac()
    (D,) = standardize(predictors(data))
    y = outcome(data)
    missing = np.isnan(D[:, 3])
    D_complete, y_complete = training_rows("svm", D, y, np.random.default_rng(0))
    np.testing.assert_array_equal(D_complete, D[~missing])
    np.testing.assert_array_equal(y_complete, y[~missing])
    for method in ("svm_mean", "svm_iterative"):
        imputed, y_imputed = training_rows(method, D, y, np.random.default_rng(0))
        assert not np.isnan(imputed).any() and y_imputed is y
        np.testing.assert_array_equal(imputed[~missing], D[~missing])
        np.testing.assert_array_equal(imputed[missing, :3], D[missing, :3])
        if method == "svm_mean":  # the observed mean, 0 after standardising
            np.testing.assert_allclose(imputed[missing, 3], 0.0, atol=1e-12)
        else:  # regressed on the other predictors: it varies between patients
            assert imputed[missing, 3].std() > 0.01
    with pytest.raises(ValueError, match="method must be a default SVM's"):
        training_rows("median", D, y, np.random.default_rng(0))


def test_paired_table_compares_splits_against_the_reference():
    results = pd.DataFrame(
        {
            "split": [0, 0, 1, 1, 2, 2],
            "method": ["svm", "svm_mean"] * 3,
            "ber": [0.3, 0.25, 0.3, 0.35, 0.3, 0.3],
        }
    )
    labels = {"svm": "Complete", "svm_mean": "Mean"}
    (row,) = paired_table(results, labels, "svm").to_dict("records")
    assert row["method"] == "Mean" and row["splits"] == 3
    assert row["mean difference"] == pytest.approx(0.0)
    assert row["sd of difference"] == pytest.approx(0.05)
    assert (row["lower"], row["higher"]) == (1, 1)


# Rows from worker processes equal the serial run's, shown on real fits in test_runner.py; a
# pool of this study's own (a few seconds of process start-up) is in the slow suite.
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_workers_do_not_change_results(quick_run, workers):
    _, sequential = quick_run
    tasks = split_tasks(
        split_rows,
        2,
        seed=cardiac.DEFAULT_SEED,
        methods=("svm", "vb"),
        protocol=QUICK_PROTOCOL,
    )
    one = run_tasks(tasks, workers=workers, progressbar=False)
    columns = ["split", "method", "ber", "n_train"]
    # Each method has its own seed stream: alone they score as among all methods.
    expected = sequential.loc[sequential["method"].isin(["svm", "vb"]), columns]
    pd.testing.assert_frame_equal(one[columns], expected.reset_index(drop=True))


def test_cli_resume_skips_finished_splits(tmp_path, monkeypatch):
    """With the LIBSVM baseline alone: each Bayesian method's own seed stream makes its rows
    those of any run (``test_workers_do_not_change_results``).
    """
    out_dir, resumed = tmp_path / "whole", tmp_path / "resumed"
    argv = ["reproduce", "cardiac", "--quick", "--methods", "svm"]
    assert cli.main([*argv, "--out", str(out_dir)]) == 0
    results = pd.read_csv(out_dir / "cardiac.csv")
    shutil.copytree(out_dir, resumed)
    interrupted = results[results["split"] < 1].copy()
    interrupted.loc[:, "seconds"] = 12345.0  # kept as it is
    interrupted.to_csv(resumed / "cardiac.csv", index=False)
    ran = []

    def recording_split_rows(**kwargs):
        ran.append(kwargs["split"])
        return split_rows(**kwargs)

    monkeypatch.setattr(cardiac, "split_rows", recording_split_rows)
    assert cli.main([*argv, "--resume", "--out", str(resumed)]) == 0
    assert ran == [1]
    on_disk = pd.read_csv(resumed / "cardiac.csv")
    columns = ["split", "method", "ber", "n_train"]
    pd.testing.assert_frame_equal(on_disk[columns], results[columns])
    assert (on_disk.loc[on_disk["split"] == 0, "seconds"] == 12345.0).all()


def test_cli_resume_refuses_other_settings_before_fitting(quick_run, tmp_path, monkeypatch, capsys):
    out_dir, _ = quick_run
    for name in OUTPUT_FILES:
        shutil.copy(out_dir / name, tmp_path / name)
    monkeypatch.setattr(cardiac, "split_rows", pytest.fail)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(
            [
                "reproduce",
                "cardiac",
                "--quick",
                "--methods",
                "svm",
                "--resume",
                "--out",
                str(tmp_path),
            ]
        )
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("bayesvm reproduce: error: cannot resume")
    assert f"methods: {list(METHODS)} before, ['svm'] now" in error
    for name in OUTPUT_FILES:
        assert (tmp_path / name).read_bytes() == (out_dir / name).read_bytes(), name


def test_cli_knows_the_cardiac_methods(monkeypatch, tmp_path, capsys):
    calls = []
    monkeypatch.setattr(cardiac, "run", lambda **kwargs: calls.append(kwargs))
    out = ["--out", str(tmp_path)]
    cli.main(["reproduce", "cardiac", "--methods", "vb,gibbs", "--workers", "2", *out])
    assert calls == [
        {"out_dir": tmp_path, "quick": False, "workers": 2, "methods": ["vb", "gibbs"]}
    ]
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "cardiac", "--methods", "svm_median", *out])
    assert "unknown methods ['svm_median'] for cardiac" in capsys.readouterr().err
