import shutil

import numpy as np
import pandas as pd
import pytest

from bayesvm import cli
from bayesvm.case_studies import simulated
from bayesvm.case_studies.default_svm import COARSE_ALPHAS, fit_default_svm
from bayesvm.case_studies.metrics import balanced_error_rate, predicts_single_class
from bayesvm.case_studies.simulated import METHODS, OUTPUT_FILES, run, simulate_dataset
from bayesvm.exceptions import NumericalBreakdownError

from conftest import assert_rows_converged_but_k_hat


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("simulated")
    return out_dir, run(out_dir, quick=True, progressbar=False)


def test_quick_run_writes_every_output(quick_run):
    out_dir, results = quick_run
    for name in OUTPUT_FILES:
        assert (out_dir / name).stat().st_size > 0, name
    on_disk = pd.read_csv(out_dir / "simulated.csv")
    assert list(on_disk.columns) == [
        "n",
        "d",
        "replicate",
        "method",
        "ber",
        "seconds",
        "alpha",
        "single_class",
        "converged",
        "warnings",
    ]
    assert len(on_disk) == 3 * len(METHODS)
    assert_rows_converged_but_k_hat(on_disk[on_disk["method"] == "vb"])
    assert set(on_disk["method"]) == set(METHODS)
    assert on_disk["ber"].between(0, 1).all()
    assert (on_disk["seconds"] > 0).all()
    assert on_disk["alpha"].notna().to_numpy().tolist() == [m == "svm" for m in on_disk["method"]]
    pd.testing.assert_frame_equal(on_disk.fillna(""), results.fillna(""), check_dtype=False)
    assert results.loc[results["method"] == "vb", "ber"].mean() < 0.5
    assert not results.loc[results["method"] == "vb", "single_class"].any()
    timing = pd.read_csv(out_dir / "timing.csv")
    assert len(timing) == len(METHODS) and (timing["fits"] == 3).all()
    report = (out_dir / "report.md").read_text()
    assert "571.75" not in report  # paper numbers are rounded like ours
    assert "| Default SVM | 572 |" in report and "logical cores" in report
    assert "| MCMC | single-class fits |" in report


# Rows from worker processes equal the serial run's, shown on real fits in test_runner.py; a
# pool of this study's own (a few seconds of process start-up) is in the slow suite.
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_workers_do_not_change_results(quick_run, workers, tmp_path):
    _, sequential = quick_run
    # Two data sets: each replicate is seeded on its own, so they match the first two of three.
    parallel = run(tmp_path, quick=True, workers=workers, n_datasets=2, progressbar=False)
    columns = ["n", "d", "replicate", "method", "ber", "alpha"]
    expected = sequential.loc[sequential["replicate"] < 2, columns]
    pd.testing.assert_frame_equal(parallel[columns], expected)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "simulated.csv")[columns], expected)


def constant_svm_rows(*, n, d, replicate, seed, methods, protocol):
    """Hand-made rows: the SVM predicts one class on data sets 0 and 1, VB never; Gibbs
    fails its convergence checks on data set 2.
    """
    single = {"svm": replicate < 2, "vb": False, "gibbs": False}
    converged = {"svm": None, "vb": True, "gibbs": replicate != 2}
    return [
        {
            "method": method,
            "ber": 0.5 if single[method] else 0.2,
            "seconds": 1.0,
            "alpha": np.nan,
            "single_class": single[method],
            "converged": converged[method],
            "warnings": "" if converged[method] is not False else "ConvergenceWarning: ...",
        }
        for method in methods
    ]


def test_report_names_methods_that_predicted_a_single_class(tmp_path, monkeypatch):
    monkeypatch.setattr(simulated, "replicate_rows", constant_svm_rows)
    run(tmp_path, quick=True, methods=("svm", "vb"), progressbar=False)
    report = (tmp_path / "report.md").read_text()
    assert "| n | d | Default SVM | VB | single-class fits |" in report
    assert "| 100 | 10 | 0.400 (0.500) | 0.200 (0.200) | Default SVM: 2 |" in report
    assert (
        "Default SVM predicted a single class on 2 of 3 data sets: its BER of 0.5 there is "
        "that of a constant classifier." in report
    )
    assert "VB predicted" not in report
    assert "did not pass" not in report


def test_report_counts_fits_that_failed_their_convergence_checks(tmp_path, monkeypatch):
    monkeypatch.setattr(simulated, "replicate_rows", constant_svm_rows)
    run(tmp_path, quick=True, methods=("vb", "gibbs"), progressbar=False)
    report = (tmp_path / "report.md").read_text()
    assert "MCMC did not pass its checks on 1 of 3 data sets" in report
    assert "VB did not pass" not in report


def test_a_fit_that_breaks_down_leaves_a_row_without_ber(tmp_path, monkeypatch):
    def breaks_down(model, method, **options):
        raise NumericalBreakdownError(f"the {method} fit broke down numerically")

    monkeypatch.setattr(simulated.bayesvm, "fit", breaks_down)
    protocol = simulated.QUICK_PROTOCOL
    rows = simulated.replicate_rows(
        n=100, d=10, replicate=0, seed=0, methods=("svm", "vb"), protocol=protocol
    )
    svm, vb = rows
    assert np.isfinite(svm["ber"]) and svm["warnings"] == ""
    assert np.isnan(vb["ber"]) and np.isnan(vb["seconds"]) and vb["converged"] is False
    assert vb["warnings"] == "NumericalBreakdownError: the vb fit broke down numerically"
    run(tmp_path, quick=True, methods=("vb",), progressbar=False)
    report = (tmp_path / "report.md").read_text()
    assert "broke down numerically, with no BER" in report and "VB on 3 of 3 data sets." in report
    timing = pd.read_csv(tmp_path / "timing.csv")
    assert timing["fits"].tolist() == [0]


def test_cli_resume_refuses_other_methods(quick_run, tmp_path, monkeypatch, capsys):
    out_dir, _ = quick_run
    for name in OUTPUT_FILES:
        shutil.copy(out_dir / name, tmp_path / name)
    monkeypatch.setattr(simulated, "replicate_rows", pytest.fail)
    argv = ["reproduce", "simulated", "--quick", "--resume", "--methods", "vb"]
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*argv, "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "methods: ['svm', 'vb', 'gibbs'] before, ['vb'] now" in capsys.readouterr().err
    for name in OUTPUT_FILES:
        assert (tmp_path / name).read_bytes() == (out_dir / name).read_bytes(), name


def test_predicts_single_class():
    assert predicts_single_class([1, 1, 1]) and predicts_single_class(np.array(["no"]))
    assert not predicts_single_class([1, -1, 1]) and not predicts_single_class([])


def test_balanced_error_rate_by_hand():
    y_true = np.array([1, 1, 1, 1, -1, -1])
    y_pred = np.array([1, 1, 1, -1, -1, 1])
    # class +1: 1 of 4 wrong; class -1: 1 of 2 wrong; BER = (1/4 + 1/2) / 2 = 0.375
    assert balanced_error_rate(y_true, y_pred) == pytest.approx(0.375)
    assert balanced_error_rate(["a", "b"], ["a", "b"]) == 0.0
    assert balanced_error_rate([0, 0, 0, 1], [0, 0, 0, 0]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="same length"):
        balanced_error_rate([1, -1], [1])


def test_default_svm_chooses_alpha_inside_its_grids():
    D, y, D_test, y_test = simulate_dataset(80, 5, 500, np.random.default_rng(7))
    fitted = fit_default_svm(D, y, n_holdouts=4, seed=1)
    assert COARSE_ALPHAS.min() / 10 <= fitted.alpha <= COARSE_ALPHAS.max() * 10
    # The best value, the largest alpha among ties, on both grids.
    ties = fitted.fine_alphas[fitted.fine_errors == fitted.fine_errors.min()]
    assert fitted.alpha == ties.max()
    best_coarse = fitted.coarse_alphas[fitted.coarse_errors == fitted.coarse_errors.min()].max()
    assert np.isclose(np.sqrt(fitted.fine_alphas[0] * fitted.fine_alphas[-1]), best_coarse)
    assert (
        fitted.fine_errors.min()
        == fitted.fine_errors[np.argmax(fitted.fine_alphas == fitted.alpha)]
    )
    assert balanced_error_rate(y_test, fitted.predict(D_test)) < 0.4
    again = fit_default_svm(D, y, n_holdouts=4, seed=1)
    assert again.alpha == fitted.alpha
