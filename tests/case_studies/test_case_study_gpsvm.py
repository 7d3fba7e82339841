from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from bayesvm import cli
from bayesvm.case_studies import gpsvm
from bayesvm.case_studies.gpsvm import (
    COMPARED,
    DATASETS,
    OUTPUT_FILES,
    PAPER_PROTOCOL,
    QUICK_PROTOCOL,
    bigdata_table,
    brier_score,
    cv_folds,
    inducing_count,
    inducing_table,
    mlii_summary,
    pooled_rows,
    simulated_susy,
    table_1,
    timing_table,
    write_simulated_susy,
)
from bayesvm.case_studies.runner import ResumeMismatchError


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("gpsvm")
    assert cli.main(["reproduce", "gpsvm", "--quick", "--seed", "5", "--out", str(out_dir)]) == 0
    return out_dir, pd.read_csv(out_dir / "gpsvm.csv")


def test_quick_run_writes_every_output(quick_run):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        assert (out_dir / name).stat().st_size > 0, name
    n_folds = QUICK_PROTOCOL.n_folds
    # Every method runs on every fold at the quick size (100 rows: under every size limit).
    assert results["dataset"].tolist() == [
        name for name in DATASETS for _ in range(n_folds * len(COMPARED))
    ]
    assert results["method"].tolist() == list(COMPARED) * (len(DATASETS) * n_folds)
    assert ((results["n_train"] + results["n_test"]) == QUICK_PROTOCOL.n_rows).all()
    assert results["error"].between(0, 1).all() and results["brier"].between(0, 1).all()
    assert (results["seconds"] > 0).all()
    # Far better than chance: the minority class is at least 30% of each data set.
    assert results.groupby("method")["error"].mean().lt(0.3).all()
    kernels = pd.read_csv(out_dir / "gpsvm_lengthscale.csv").set_index("dataset")
    assert kernels.loc["waveform", "lengthscale"] == 5.0
    assert kernels.loc["waveform", "source"] == "paper"
    assert (kernels["variance"] == 1.0).all() and (kernels["mlii_lengthscale"] > 0).all()
    for name in ("breast_cancer", "heart", "banana"):
        row = results[(results["dataset"] == name)].iloc[0]
        assert row["lengthscale"] == kernels.loc[name, "mlii_lengthscale"]
    inducing = pd.read_csv(out_dir / "gpsvm_inducing.csv")
    assert sorted(set(inducing["inducing"])) == list(QUICK_PROTOCOL.inducing_counts)
    report = (out_dir / "report.md").read_text()
    for title in ("Table 1", "Figure 1", "Figure 2", "Figure 3", "section 5.2"):
        assert title in report


def test_quick_run_big_data_is_stored_and_scored(quick_run):
    out_dir, _ = quick_run
    bigdata = pd.read_csv(out_dir / "gpsvm_bigdata.csv").iloc[0]
    assert bigdata["n_train"] == QUICK_PROTOCOL.bigdata_rows
    assert bigdata["features"] == 18 and bigdata["inducing"] == 64
    # Better than chance, below the Bayes-optimal AUC of the simulation.
    assert 0.6 < bigdata["auc"] < bigdata["bayes_auc"]
    assert 0 < bigdata["memory_at_start_mb"] <= bigdata["peak_memory_mb"]
    assert bigdata["rows_per_second"] > 0
    import dask.array as da

    train = da.from_npy_stack(out_dir / "gpsvm_bigdata_data" / "train")
    assert train.shape == (QUICK_PROTOCOL.bigdata_rows, 19)
    assert train.chunks[0] == (QUICK_PROTOCOL.bigdata_chunk,) * 5


def test_resume_keeps_finished_rows_refits_the_rest_and_refuses_other_settings(quick_run, tmp_path):
    out_dir, original = quick_run
    for path in out_dir.iterdir():
        if path.is_file():
            (tmp_path / path.name).write_bytes(path.read_bytes())
    # A finished task, marked in its row, is kept as it is; the last task, dropped from the
    # CSV as if interrupted, is fitted again and gives the same numbers (same seed).
    interrupted = original.copy()
    interrupted.loc[0, "error"] = 0.999
    last = (interrupted["dataset"] == "waveform") & (interrupted["split"] == 1)
    interrupted[~last].to_csv(tmp_path / "gpsvm.csv", index=False)
    resumed = gpsvm.run(tmp_path, quick=True, resume=True, seed=5, progressbar=False)
    assert resumed.loc[0, "error"] == 0.999
    assert "Resumed: the rows kept" in (tmp_path / "report.md").read_text()
    columns = ["dataset", "split", "method", "error", "brier"]
    pd.testing.assert_frame_equal(
        resumed.loc[last, columns].reset_index(drop=True),
        original.loc[last, columns].reset_index(drop=True),
    )
    with pytest.raises(ResumeMismatchError, match="seed"):
        gpsvm.run(tmp_path, quick=True, resume=True, seed=6, progressbar=False)


def test_big_data_run_reuses_its_data_on_disk(tmp_path):
    protocol = replace(
        QUICK_PROTOCOL, bigdata_rows=3000, bigdata_test_rows=500, bigdata_chunk=1000,
        bigdata_mlii_rows=300, bigdata_inducing=8, mlii_max_iter=50,
    )  # fmt: skip
    options = {"out_dir": str(tmp_path), "seed": 1, "protocol": protocol, "fresh_process": False}
    (first,) = gpsvm.bigdata_rows(**options)
    (again,) = gpsvm.bigdata_rows(**options)
    assert first["write_seconds"] > 0 and again["write_seconds"] == 0
    assert again["auc"] == first["auc"]


def test_simulated_stack_is_the_same_whatever_is_computed_when(tmp_path):
    import dask.array as da

    options = {"n_rows": 2500, "n_features": 12, "chunk": 1000, "seed": 3, "part": 0}
    write_simulated_susy(tmp_path / "a", **options)
    write_simulated_susy(tmp_path / "b", **options)
    a, b = (da.from_npy_stack(tmp_path / name) for name in "ab")
    assert a.chunks[0] == (1000, 1000, 500) and a.dtype == np.float32
    np.testing.assert_array_equal(a.compute(), b.compute())
    assert set(np.unique(a[:, -1].compute())) == {-1.0, 1.0}


def test_simulated_problem_has_its_stated_bayes_optimal_scores():
    from sklearn.metrics import roc_auc_score

    X, y, probability = simulated_susy(200_000, 18, np.random.default_rng(0))
    assert X.shape == (200_000, 18) and X.dtype == np.float32
    # Stated in the docstring: Bayes-optimal AUC about 0.88, Brier score about 0.14.
    assert roc_auc_score(y, probability) == pytest.approx(0.88, abs=0.01)
    assert brier_score(y, probability) == pytest.approx(0.14, abs=0.01)
    with pytest.raises(ValueError, match="at least 10"):
        simulated_susy(5, 9, np.random.default_rng(0))


def test_pooled_rows_drop_duplicates_to_the_papers_n():
    X, y = pooled_rows("breast_cancer", PAPER_PROTOCOL, seed=0)
    assert X.shape == (263, 9) and y.size == 263  # Table 1's n
    assert np.unique(np.column_stack([X, y]), axis=0).shape[0] == 263
    assert pooled_rows("heart", PAPER_PROTOCOL, seed=0)[1].size == 270
    X_quick, _ = pooled_rows("banana", QUICK_PROTOCOL, seed=0)
    assert X_quick.shape == (QUICK_PROTOCOL.n_rows, 2)


def test_cv_folds_partition_the_rows_with_both_classes_in_each():
    y = np.repeat([-1, 1], [60, 40])
    folds = cv_folds(y, 10, seed=1)
    tests = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tests), np.arange(100))
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and (y[test] == 1).sum() == 4


def test_brier_score_codes_the_labels_zero_one():
    assert brier_score([1, -1], [1.0, 0.0]) == 0.0
    assert brier_score([1, -1], [0.0, 1.0]) == 1.0
    assert brier_score([1, -1, 1, -1], [0.5] * 4) == 0.25


def test_inducing_points_are_a_fifth_of_the_rows_or_fixed():
    assert inducing_count("heart", 243, PAPER_PROTOCOL) == 49
    assert inducing_count("waveform", 4500, PAPER_PROTOCOL) == 100
    assert inducing_count("banana", 4770, PAPER_PROTOCOL) == 100
    assert inducing_count("waveform", 50, PAPER_PROTOCOL) == 50  # never more than the rows
    assert inducing_count("heart", 2, PAPER_PROTOCOL) == 1


def _fold_results():
    rows = []
    for split, (svi_error, svm_error) in enumerate([(0.1, 0.2), (0.3, 0.2)]):
        common = {"dataset": "heart", "split": split, "n_train": 243, "n_test": 27}
        rows += [
            {**common, "method": "svi", "error": svi_error, "brier": 0.1, "seconds": 1.0},
            {**common, "method": "svm", "error": svm_error, "brier": 0.2, "seconds": 0.02},
        ]
    return pd.DataFrame(rows)


def test_table_1_puts_ours_beside_the_paper_and_marks_skipped_methods():
    table = table_1(_fold_results(), methods=["svi", "ecm", "svm"]).set_index("measure")
    assert list(table.columns) == [
        "data set", "n", "n (paper)", "S-BSVM", "S-BSVM (paper)", "ECM", "ECM (paper)",
        "SVM + Platt", "SVM + Platt (paper)",
    ]  # fmt: skip
    assert table.loc["Error", "S-BSVM"] == "0.20 ± 0.14"
    assert table.loc["Error", "SVM + Platt"] == "0.20 ± 0.00"
    assert table.loc["Error", "S-BSVM (paper)"] == "0.16 ± 0.06"
    assert table.loc["Time [s]", "S-BSVM"] == "1" and table.loc["Time [s]", "ECM"] == "skipped"
    assert table.loc["Time [s]", "ECM (paper)"] == "2.2"
    assert (table["n"] == 270).all() and (table["n (paper)"] == 270).all()


def test_timing_table_gives_ratios_to_the_papers_seconds():
    table = timing_table(_fold_results()).set_index("method")
    assert table.loc["S-BSVM", "heart s"] == 1.0
    assert table.loc["S-BSVM", "heart ours / paper"] == pytest.approx(1.0 / 0.34)
    assert table.loc["SVM + Platt", "heart ours / paper"] == pytest.approx(0.02 / 0.04)


def test_mlii_summary_finds_the_grid_optimum_and_the_mlii_point():
    mlii = pd.DataFrame(
        {
            "lengthscale": [1.0, 1.0, 3.0, 3.0, 10.0, 10.0],
            "error": [0.3, 0.3, 0.1, 0.2, 0.2, 0.2],
            "brier": [0.2, 0.2, 0.15, 0.15, 0.1, 0.1],
            "seconds": [1.0] * 6,
        }
    )
    kernel = pd.Series({"mlii_lengthscale": 2.5, "mlii_seconds": 0.5})
    summary = mlii_summary(mlii, kernel).set_index("choice")
    assert summary["lengthscale"].tolist() == [3.0, 10.0, 2.5]
    # At 2.5, log(2.5) / log(3) of the way from 1 to 3 on the log scale.
    share = np.log(2.5) / np.log(3.0)
    at_learned = [0.3 + share * (0.15 - 0.3), 0.2 + share * (0.15 - 0.2)]
    assert summary["error"].tolist() == pytest.approx([0.15, 0.2, at_learned[0]])
    assert summary["brier"].tolist() == pytest.approx([0.15, 0.1, at_learned[1]])
    assert summary["seconds"].tolist() == [6.0, 6.0, 0.5]


def test_inducing_table_summarises_each_count_and_selection():
    inducing = pd.DataFrame(
        {
            "inducing": [8, 8, 16, 16] * 2,
            "inducing_method": ["kmeans"] * 4 + ["random"] * 4,
            "error": [0.1, 0.3, 0.1, 0.1, 0.4, 0.4, 0.2, 0.2],
            "brier": [0.1] * 8,
            "seconds": [1.0, 3.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0],
            "select_seconds": [0.1] * 8,
        }
    )
    table = inducing_table(inducing)
    assert table[["selection", "inducing points"]].values.tolist() == [
        ["kmeans", 8], ["kmeans", 16], ["random", 8], ["random", 16],
    ]  # fmt: skip
    assert table["error"].tolist() == ["0.20 ± 0.14", "0.10 ± 0.00", "0.40 ± 0.00", "0.20 ± 0.00"]
    assert table["fit s"].tolist() == [2.0, 2.0, 1.0, 2.0]


def test_bigdata_table_scales_our_rate_to_five_million_rows():
    bigdata = pd.DataFrame(
        [
            {"auc": 0.8, "brier": 0.2, "bayes_auc": 0.88, "bayes_brier": 0.14,
             "n_train": 50_000, "seconds": 10.0, "rows_per_second": 5000.0,
             "peak_memory_mb": 300.0}
        ]
    )  # fmt: skip
    table = bigdata_table(bigdata).set_index("run")
    assert table.loc["ours (simulated)", "s for 5M rows"] == 1000.0
    assert table.loc["ours (simulated)", "ours / paper (5M)"] == pytest.approx(1000.0 / 600.0)
    assert table.loc["paper (SUSY)", "AUC"] == 0.84


def test_cli_refuses_benchmarks_outside_the_study(tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main(["reproduce", "gpsvm", "--benchmarks", "twonorm", "--out", str(tmp_path)])
    assert raised.value.code == 2
    assert "unknown benchmarks ['twonorm'] for gpsvm" in capsys.readouterr().err
