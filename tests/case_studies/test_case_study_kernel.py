import numpy as np
import pandas as pd
import pytest

from bayesvm import cli
from bayesvm.case_studies import kernel
from bayesvm.case_studies.kernel import (
    COMPARED,
    DATASETS,
    OUTPUT_FILES,
    PAPER_PROTOCOL,
    QUICK_PROTOCOL,
    fit_rbf_svm,
    kmax_table,
    mean_sd,
    partition,
    sampler_table,
    split_rows,
    svm_grid,
    table_5,
    timing_table,
)
from bayesvm.case_studies.runner import ResumeMismatchError, run_tasks, split_tasks
from bayesvm.data import load_benchmark


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("kernel")
    assert cli.main(["reproduce", "kernel", "--quick", "--out", str(out_dir)]) == 0
    return out_dir, pd.read_csv(out_dir / "kernel.csv")


def test_quick_run_writes_every_output(quick_run):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        assert (out_dir / name).stat().st_size > 0, name
    assert list(results.columns) == [
        "dataset",
        "split",
        "method",
        "error",
        "seconds",
        "k_max",
        "n_active",
        "accept_rate",
        "tuned",
        "converged",
        "warnings",
        "n_train",
        "n_test",
        "partition",
    ]
    n_splits = QUICK_PROTOCOL.n_splits
    assert results["dataset"].tolist() == [
        name for name in DATASETS for _ in range(n_splits * len(COMPARED))
    ]
    assert results["method"].tolist() == list(COMPARED) * (len(DATASETS) * n_splits)
    assert (results["n_train"] == QUICK_PROTOCOL.n_train).all()
    assert (results["n_test"] == QUICK_PROTOCOL.n_test).all()
    assert (results["seconds"] > 0).all() and results["error"].between(0, 100).all()
    # twonorm has one bundled realisation: its second partition is drawn.
    drawn = results.loc[results["partition"] == "drawn", ["dataset", "split"]].drop_duplicates()
    assert drawn.to_dict("records") == [{"dataset": "twonorm", "split": 1}]
    by_method = results.set_index("method")
    rj = by_method.loc["rj"]
    assert (rj["k_max"] == QUICK_PROTOCOL.k_max).all()
    assert rj["n_active"].between(1, QUICK_PROTOCOL.k_max).all()
    assert rj["accept_rate"].between(0, 1).all()
    assert (by_method.loc["gibbs", "n_active"] == QUICK_PROTOCOL.n_train).all()
    # Far better than chance (50% or, for waveform, the 33% of the minority class) even on
    # 60 training rows and 200 sweeps.
    assert (rj["error"] < 20).all()
    traces = pd.read_csv(out_dir / "kernel_trace.csv")
    assert list(traces.columns) == ["dataset", "sweep", "n_active"]
    assert len(traces) == len(DATASETS) * QUICK_PROTOCOL.trace_sweeps
    assert traces.groupby("dataset")["sweep"].agg(["min", "max"]).values.tolist() == [
        [1, QUICK_PROTOCOL.trace_sweeps]
    ] * len(DATASETS)
    assert traces["n_active"].between(0, QUICK_PROTOCOL.k_max).all()  # no vector is a model too
    kmax = pd.read_csv(out_dir / "kernel_kmax.csv")
    assert kmax[["k_max", "split"]].values.tolist() == [
        [k_max, split] for k_max in QUICK_PROTOCOL.kmax_values for split in range(n_splits)
    ]
    assert (kmax["n_active"] <= kmax["k_max"]).all()
    report = (out_dir / "report.md").read_text()
    assert report.startswith("# Rätsch benchmarks: Bayesian generalized kernel models")
    assert "| ringnorm | 2 | 2.03 (0.19) | 1.97 (0.29) | 1.51 (0.10) |" in report
    assert "| waveform | 2 | 9.98 (0.43) | 10.13 (0.47) | 9.80 (0.31) |" in report
    assert "Pentium 4" in report and "(kernel_trace.png)" in report
    assert "| k_max | partitions | err | time (s) | mean active vectors |" in report
    assert "| 700 | 4.72 (0.28) | 11,700 |" in report


def test_paper_protocol_is_section_4():
    protocol = PAPER_PROTOCOL
    assert (protocol.n_splits, protocol.sweeps, protocol.tune, protocol.thin) == (
        20,
        10_000,
        5000,
        5,
    )
    assert protocol.draws == 1000 and protocol.k_max == 400 and protocol.trace_sweeps == 6000
    assert (protocol.n_train, protocol.n_test) == (None, None)
    assert kernel.PRIOR == {"a_eta": 1.0, "b_eta": 0.1, "a_g": 4.0, "b_g": 0.1}


def test_bundled_partitions_come_first_then_drawn_ones():
    X, y, bundled = load_benchmark("ringnorm")
    X_train, y_train, X_test, y_test, source = partition("ringnorm", 3, PAPER_PROTOCOL, seed=1)
    assert source == "bundled"
    np.testing.assert_array_equal(X_train, X[bundled[3][0]])
    np.testing.assert_array_equal(y_test, y[bundled[3][1]])
    drawn = partition("ringnorm", len(bundled), PAPER_PROTOCOL, seed=1)
    assert drawn[-1] == "drawn"
    assert drawn[0].shape == (400, 20) and drawn[2].shape == (7000, 20)
    # A partition: every row once, in the training or the test part.
    rows = np.concatenate([drawn[0], drawn[2]])
    assert np.unique(rows, axis=0).shape[0] == np.unique(X, axis=0).shape[0] == len(X)
    again = partition("ringnorm", len(bundled), PAPER_PROTOCOL, seed=1)
    np.testing.assert_array_equal(drawn[0], again[0])
    other_seed = partition("ringnorm", len(bundled), PAPER_PROTOCOL, seed=2)
    next_split = partition("ringnorm", len(bundled) + 1, PAPER_PROTOCOL, seed=1)
    assert not np.array_equal(drawn[0], other_seed[0])
    assert not np.array_equal(drawn[0], next_split[0])


def test_quick_partitions_subsample_both_parts():
    X, y, bundled = load_benchmark("waveform")
    X_train, y_train, X_test, y_test, _ = partition("waveform", 0, QUICK_PROTOCOL, seed=0)
    assert X_train.shape == (60, 21) and X_test.shape == (600, 21)
    train_rows = {tuple(row) for row in X[bundled[0][0]]}
    assert all(tuple(row) in train_rows for row in X_train)
    assert not any(tuple(row) in train_rows for row in X_test)


def test_svm_grid_is_powers_of_two():
    grid = svm_grid(range(-5, 16, 2), range(-15, 4, 2))
    assert grid["C"].tolist() == [2.0**k for k in range(-5, 16, 2)]
    assert grid["gamma"][0] == 2.0**-15 and grid["gamma"][-1] == 8.0
    assert (len(grid["C"]), len(grid["gamma"])) == (11, 10)
    with pytest.raises(ValueError, match="at least one"):
        svm_grid([], [0])


def test_svm_cross_validation_picks_the_kernel_width_that_separates():
    # Two rings: a kernel of width ~1 separates them; gamma = 2^-20 makes the kernel constant.
    rng = np.random.default_rng(0)
    angle = rng.uniform(0, 2 * np.pi, 200)
    radius = np.where(np.arange(200) < 100, 1.0, 3.0) + rng.normal(0, 0.1, 200)
    X = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    y = np.where(np.arange(200) < 100, 1, -1)
    search = fit_rbf_svm(X, y, log2_C=[0], log2_gamma=[-20, 0], folds=5, seed=1)
    assert search.best_params_ == {"C": 1.0, "gamma": 1.0}
    assert search.best_score_ > 0.95
    again = fit_rbf_svm(X, y, log2_C=[0], log2_gamma=[-20, 0], folds=5, seed=1)
    np.testing.assert_array_equal(
        search.cv_results_["mean_test_score"], again.cv_results_["mean_test_score"]
    )


def test_mean_sd_formats_as_the_paper():
    assert mean_sd([1.0, 2.0, 3.0]) == "2.00 (1.00)"
    assert mean_sd([1.514]) == "1.51"
    assert mean_sd([np.nan]) == ""


def _results() -> pd.DataFrame:
    rows = []
    for dataset, offset in (("ringnorm", 0.0), ("waveform", 8.0)):
        for split in range(2):
            for method, error, seconds in (("rj", 1.0, 10.0), ("gibbs", 2.0, 30.0)):
                rows.append(
                    {
                        "dataset": dataset,
                        "split": split,
                        "method": method,
                        "error": error + offset + split,
                        "seconds": seconds + split,
                        "k_max": 400 if method == "rj" else np.nan,
                        "n_active": 100.0 + split if method == "rj" else 400.0,
                        "accept_rate": 0.2 if method == "rj" else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def test_table_5_puts_ours_beside_the_paper():
    table = table_5(_results())
    assert list(table.columns) == [
        "data set",
        "partitions",
        "SVM (paper)",
        "IVM (paper)",
        "FBGKM (paper)",
        "FBGKM",
        "BGKM (Gibbs)",
    ]
    assert table.iloc[0].tolist() == [
        "ringnorm",
        2,
        "2.03 (0.19)",
        "1.97 (0.29)",
        "1.51 (0.10)",
        "1.50 (0.71)",
        "2.50 (0.71)",
    ]
    assert table.iloc[1]["FBGKM"] == "9.50 (0.71)"


def test_sampler_table_gives_error_and_time_per_method():
    table = sampler_table(_results())
    assert list(table.columns) == [
        "data set",
        "BGKM (Gibbs) err",
        "BGKM (Gibbs) time (s)",
        "BGKM (Gibbs) fits",
        "FBGKM err",
        "FBGKM time (s)",
        "FBGKM fits",
    ]
    assert table.iloc[0]["BGKM (Gibbs) time (s)"] == 30.5
    assert table.iloc[1]["FBGKM err"] == "9.50 (0.71)"


def test_kmax_table_joins_the_comparison_fbgkm():
    kmax = pd.DataFrame(
        {
            "k_max": [50, 50],
            "split": [0, 1],
            "error": [3.0, 5.0],
            "seconds": [2.0, 4.0],
            "n_active": [40.0, 44.0],
            "accept_rate": [0.5, 0.3],
        }
    )
    table = kmax_table(kmax, _results(), "ringnorm")
    assert table["k_max"].tolist() == [50, 400]
    assert table["partitions"].tolist() == [2, 2]
    assert table["err"].tolist() == ["4.00 (1.41)", "1.50 (0.71)"]
    assert table["time (s)"].tolist() == [3.0, 10.5]
    assert table["mean active vectors"].tolist() == [42.0, 100.5]
    assert table["acceptance rate"].tolist() == pytest.approx([0.4, 0.2])


def test_timing_table_divides_by_the_papers_nearest_times():
    table = timing_table(_results())
    assert table["method"].tolist() == ["FBGKM", "BGKM (Gibbs)"]
    assert table["ringnorm s"].tolist() == [10.5, 30.5]
    assert table["ours / paper"].tolist() == pytest.approx([10.5 / 2804.0, 30.5 / 4674.0])


# Rows from worker processes equal the serial run's, shown on real fits in test_runner.py; a
# pool of this study's own (a few seconds of process start-up) is in the slow suite.
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_workers_do_not_change_results(quick_run, workers):
    _, sequential = quick_run
    tasks = split_tasks(
        split_rows,
        2,
        datasets=("twonorm",),
        seed=kernel.DEFAULT_SEED,
        methods=("svm", "gpc"),
        protocol=QUICK_PROTOCOL,
    )
    one = run_tasks(tasks, workers=workers, progressbar=False)
    columns = ["dataset", "split", "method", "error", "tuned"]
    # Each method has its own seed stream: alone they score as among all methods.
    expected = sequential.loc[
        sequential["method"].isin(["svm", "gpc"]) & (sequential["dataset"] == "twonorm"),
        columns,
    ]
    pd.testing.assert_frame_equal(one[columns], expected.reset_index(drop=True))


def test_cli_refuses_unknown_benchmarks_and_benchmarks_elsewhere(tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main(["reproduce", "kernel", "--benchmarks", "banana", "--out", str(tmp_path)])
    assert raised.value.code == 2
    assert "unknown benchmarks ['banana']" in capsys.readouterr().err
    with pytest.raises(SystemExit) as raised:
        cli.main(["reproduce", "cardiac", "--benchmarks", "ringnorm", "--out", str(tmp_path)])
    assert raised.value.code == 2
    assert "takes no --benchmarks" in capsys.readouterr().err


def test_one_benchmark_and_some_methods(tmp_path):
    results = kernel.run(
        tmp_path,
        quick=True,
        methods=("svm",),
        n_datasets=1,
        benchmarks=("waveform",),
        progressbar=False,
    )
    assert results[["dataset", "split", "method"]].values.tolist() == [["waveform", 0, "svm"]]
    assert not (tmp_path / "kernel_trace.csv").exists()
    report = (tmp_path / "report.md").read_text()
    assert "| waveform | 1 |" in report and "FBGKM against BGKM" not in report


def test_resume_refuses_other_settings_before_fitting_anything(tmp_path):
    options = {"quick": True, "n_datasets": 1, "benchmarks": ("twonorm",), "progressbar": False}
    kernel.run(tmp_path, methods=("svm", "kmax"), **options)
    stored = tmp_path / "kernel_kmax.settings.json"
    stored.write_text(stored.read_text().replace('"seed": 2010', '"seed": 7'))
    written = (tmp_path / "kernel.csv").stat().st_mtime_ns
    with pytest.raises(ResumeMismatchError, match="seed: 7 before, 2010 now"):
        kernel.run(tmp_path, methods=("svm", "kmax"), resume=True, **options)
    assert (tmp_path / "kernel.csv").stat().st_mtime_ns == written
