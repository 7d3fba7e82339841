import shutil

import numpy as np
import pandas as pd
import pytest

from bayesvm import cli
from bayesvm.case_studies import toenail
from bayesvm.case_studies.preprocessing import standardize
from bayesvm.case_studies.runner import Task, run_tasks
from bayesvm.case_studies.toenail import (
    DEFAULT_METHODS,
    OUTPUT_FILES,
    QUICK_PROTOCOL,
    fixed_effects,
    run,
    split_rows,
)
from bayesvm.data import load_toenail

from conftest import assert_rows_converged_but_k_hat


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("toenail")
    return out_dir, run(out_dir, quick=True, progressbar=False)


def test_quick_run_writes_every_output(quick_run):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        assert (out_dir / name).stat().st_size > 0, name
    on_disk = pd.read_csv(out_dir / "toenail.csv")
    assert list(on_disk.columns) == [
        "split",
        "method",
        "ber",
        "seconds",
        "single_class",
        "converged",
        "warnings",
    ]
    assert_rows_converged_but_k_hat(on_disk[on_disk["method"] == "vb"])
    assert on_disk.loc[on_disk["method"] == "svm", "converged"].isna().all()
    assert on_disk["split"].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert on_disk["method"].tolist() == list(DEFAULT_METHODS) * 3
    assert on_disk["ber"].between(0, 1).all() and (on_disk["seconds"] > 0).all()
    pd.testing.assert_frame_equal(on_disk.fillna(""), results.fillna(""), check_dtype=False)
    # The random intercept helps: VB and Gibbs beat an SVM on the fixed effects alone.
    mean_ber = results.groupby("method")["ber"].mean()
    assert mean_ber["vb"] < 0.3 and mean_ber["gibbs"] < 0.3 and mean_ber["svm"] > 0.4
    # The default SVM, without the random intercept, classes every test visit negative.
    single_class = results.groupby("method")["single_class"].sum()
    assert single_class.to_dict() == {"svm": 3, "vb": 0, "gibbs": 0}
    forest = pd.read_csv(out_dir / "toenail_forest.csv")
    assert {"parameter", "method", "mean", "hdi_lower", "hdi_upper"} <= set(forest.columns)
    assert set(forest["method"]) == {"VB", "MCMC (Gibbs)", "NUTS"}
    assert set(forest["parameter"]) == {
        "beta[intercept]",
        "beta[time]",
        "beta[terbinafine]",
        "beta[time:terbinafine]",
        "sigma2_u",
    }
    # NUTS, started from VB, is in Gibbs's mode, not in the spurious one with sigma2_u ~ 0:
    # beyond the samplers' Monte Carlo errors (4 of the forest's MCSEs; VB's mean is exact).
    sigma2_u = forest[forest["parameter"] == "sigma2_u"].set_index("method")
    mean, mcse = sigma2_u["mean"], sigma2_u["mcse_mean"].fillna(0.0)
    assert (mean - 4 * mcse > 1).all(), (mean, mcse)
    gap = mean["NUTS"] - 0.5 * mean["MCMC (Gibbs)"]
    assert gap > 4 * np.hypot(mcse["NUTS"], 0.5 * mcse["MCMC (Gibbs)"]), (mean, mcse)
    report = (out_dir / "report.md").read_text()
    assert "| Default SVM | 3,669 |" in report and "| VB | 172 |" in report
    assert "logical cores" in report and "`time`" in report
    assert "| method | splits | mean | median | sd | single-class splits |" in report
    assert "| Default SVM | 3 | 0.5 | 0.5 | 0 | 3 |" in report and "| VB | 3 |" in report
    assert (
        "Default SVM predicted a single class on 3 of 3 splits: its BER of 0.5 there is that "
        "of a constant classifier." in report
    )
    assert "VB predicted" not in report and "MCMC (Gibbs) predicted" not in report


def test_predictors_are_standardised_with_the_training_part_only():
    data = load_toenail()
    raw = fixed_effects(data)
    assert raw.shape == (1908, 3)
    np.testing.assert_array_equal(raw[:, 2], raw[:, 0] * raw[:, 1])
    train, test = standardize(raw[:1000], raw[1000:])
    np.testing.assert_allclose(train.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(train.std(axis=0), 1)
    np.testing.assert_allclose(test, (raw[1000:] - raw[:1000].mean(0)) / raw[:1000].std(0))


# Rows from worker processes equal the serial run's, shown on real fits in test_runner.py; a
# pool of this study's own (a few seconds of process start-up) is in the slow suite.
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_workers_do_not_change_results(quick_run, workers):
    _, sequential = quick_run
    tasks = toenail_tasks(n_splits=2, methods=("vb",))
    one = run_tasks(tasks, workers=workers, progressbar=False)
    columns = ["split", "method", "ber"]
    # Each method has its own seed stream: VB alone scores as VB among the three methods.
    expected = sequential.loc[(sequential["split"] < 2) & (sequential["method"] == "vb")]
    pd.testing.assert_frame_equal(one[columns], expected[columns].reset_index(drop=True))


def toenail_tasks(n_splits: int, methods):
    return [
        Task(
            key={"split": split},
            function=split_rows,
            kwargs={
                "split": split,
                "seed": toenail.DEFAULT_SEED,
                "methods": methods,
                "protocol": QUICK_PROTOCOL,
            },
        )
        for split in range(n_splits)
    ]


def test_cli_resume_skips_finished_splits(quick_run, tmp_path, monkeypatch):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        shutil.copy(out_dir / name, tmp_path / name)
    # An interrupted run: split 2 missing, split 0 marked to show it is kept as it is.
    interrupted = results[results["split"] < 2].copy()
    interrupted.loc[interrupted["split"] == 0, "seconds"] = 12345.0
    interrupted.to_csv(tmp_path / "toenail.csv", index=False)
    ran = []

    def recording_split_rows(**kwargs):
        ran.append(kwargs["split"])
        return split_rows(**kwargs)

    monkeypatch.setattr(toenail, "split_rows", recording_split_rows)
    monkeypatch.setattr(toenail, "full_data_fits", pytest.fail)  # forest outputs kept too
    assert cli.main(["reproduce", "toenail", "--quick", "--resume", "--out", str(tmp_path)]) == 0
    assert ran == [2]
    on_disk = pd.read_csv(tmp_path / "toenail.csv")
    columns = ["split", "method", "ber"]
    pd.testing.assert_frame_equal(on_disk[columns], results[columns])
    assert (on_disk.loc[on_disk["split"] == 0, "seconds"] == 12345.0).all()
    # The fake 12345 s of split 0 weigh in the mean seconds per split.
    assert "| Default SVM | 3,669 | 4,11" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    ("options", "difference"),
    [
        (["--quick", "--methods", "vb"], "methods: ['svm', 'vb', 'gibbs'] before, ['vb'] now"),
        (["--quick", "--datasets", "2"], "n_splits: 3 before, 2 now"),
        ([], "quick: True before, False now; n_splits: 3 before, 100 now"),
    ],
)
def test_cli_resume_refuses_a_run_with_other_settings(
    quick_run, tmp_path, monkeypatch, capsys, options, difference
):
    out_dir, _ = quick_run
    for name in OUTPUT_FILES:
        shutil.copy(out_dir / name, tmp_path / name)
    monkeypatch.setattr(toenail, "split_rows", pytest.fail)
    monkeypatch.setattr(toenail, "full_data_fits", pytest.fail)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["reproduce", "toenail", *options, "--resume", "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith(f"bayesvm reproduce: error: cannot resume {tmp_path / 'toenail.csv'}")
    assert difference in error and error.count("\n") == 1
    for name in OUTPUT_FILES:
        assert (tmp_path / name).read_bytes() == (out_dir / name).read_bytes(), name


def test_cli_passes_scheduler_and_resume_only_when_given(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(toenail, "run", lambda **kwargs: calls.append(kwargs))
    out = ["--out", str(tmp_path)]
    cli.main(["reproduce", "toenail", "--scheduler", "tcp://10.0.0.5:8786", "--resume", *out])
    cli.main(["reproduce", "toenail", *out])
    assert calls == [
        {
            "out_dir": tmp_path,
            "quick": False,
            "workers": 1,
            "scheduler": "tcp://10.0.0.5:8786",
            "resume": True,
        },
        {"out_dir": tmp_path, "quick": False, "workers": 1},
    ]
