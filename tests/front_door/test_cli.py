import json
import os
import re
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path

import arviz as az
import matplotlib
import numpy as np
import pandas as pd
import pytest

from bayesvm import cli, command_line
from bayesvm.bench import targets as bench_targets
from bayesvm.case_studies import simulated
from bayesvm.case_studies.runner import ResumeMismatchError
from bayesvm.files import LOCK_FILE_NAME, FolderInUseError, locked_folder

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 3))
    label = np.where(X[:, 0] - X[:, 2] + rng.standard_normal(60) > 0, "yes", "no")
    path = tmp_path_factory.mktemp("data") / "data.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "label": label}).to_csv(
        path, index=False
    )
    return path


@pytest.fixture(scope="module")
def fitted(csv_path):
    """Fit the CSV by VB and by a short Gibbs run; the two netCDF files."""
    out = csv_path.parent
    common = ["fit", str(csv_path), "--target", "label", "--model", "penalized", "--seed", "1"]
    assert cli.main([*common, "--method", "vb", "--out", str(out / "vb.nc")]) == 0
    gibbs = ["--method", "gibbs", "--draws", "100", "--tune", "100", "--chains", "1"]
    assert cli.main([*common, *gibbs, "--out", str(out / "gibbs.nc")]) == 0
    return out / "vb.nc", out / "gibbs.nc"


def test_fit_writes_netcdf_and_prints_summary(csv_path, tmp_path, capsys):
    out = tmp_path / "fit.nc"
    argv = ["fit", str(csv_path), "--target", "label", "--features", "a,c", "--alpha", "0.5"]
    assert cli.main([*argv, "--method", "vb", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "u[a]" in printed and "u[c]" in printed and "u[b]" not in printed
    assert "lower bound" in printed and "runtime" in printed and "Pareto k-hat: " in printed
    # q's k-hat may be a reason not to trust the fit (bayesvm.checks.pareto); nothing else is
    reasons = [line for line in printed.splitlines() if "not to be trusted" in line]
    assert all("Pareto k-hat" in reason for reason in reasons)
    assert ("converged: True" in printed) == (not reasons)
    assert out.exists()


def test_fit_says_why_a_fit_is_not_to_be_trusted(csv_path, tmp_path, capsys):
    argv = ["fit", str(csv_path), "--target", "label", "--model", "penalized", "--method"]
    gibbs = ["gibbs", "--draws", "20", "--tune", "0", "--chains", "2", "--seed", "3"]
    assert cli.main([*argv, *gibbs, "--out", str(tmp_path / "fit.nc")]) == 0
    captured = capsys.readouterr()
    assert "converged: False" in captured.out
    assert "not to be trusted: bulk ESS" in captured.out
    # said once, with the summary: not repeated as a warning on stderr
    assert "should not be trusted" not in captured.err and "bulk ESS" not in captured.err


def test_compare_prints_a_table_and_plots(fitted, tmp_path, capsys):
    plot = tmp_path / "forest.png"
    argv = ["compare", *map(str, fitted), "--names", "VB,Gibbs", "--plot", str(plot)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "VB" in printed and "Gibbs" in printed and "ess_bulk" in printed
    assert "sigma2_u" in printed
    assert plot.stat().st_size > 0


def test_fit_spikeslab_by_reversible_jump_stores_the_inclusion_indicators(csv_path, tmp_path):
    out = tmp_path / "rj.nc"
    argv = ["fit", str(csv_path), "--target", "label", "--model", "spike_slab"]
    options = ["--prior", "gaussian-slab", "--inclusion", "0.3", "--nu", "5", "--method", "rj"]
    chains = ["--draws", "50", "--tune", "20", "--chains", "1", "--seed", "2"]
    assert cli.main([*argv, *options, *chains, "--out", str(out)]) == 0
    idata = az.from_netcdf(out)
    assert idata.posterior["gamma"].dims == ("chain", "draw", "effect")
    assert set(np.unique(idata.posterior["gamma"])) <= {0.0, 1.0}
    assert {"n_active", "accept_rate"} <= set(idata.sample_stats.data_vars)


def test_fit_kernel_by_reversible_jump_thins_and_counts_active_vectors(csv_path, tmp_path, capsys):
    out = tmp_path / "kernel.nc"
    argv = ["fit", str(csv_path), "--target", "label", "--model", "kernel", "--k-max", "20"]
    chains = ["--method", "rj", "--draws", "30", "--tune", "20", "--thin", "2", "--chains", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 80 sweeps: not converged, and said so
        assert cli.main([*argv, *chains, "--seed", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "beta, gamma: 60 training points" in printed and "not to be trusted" in printed
    idata = az.from_netcdf(out)
    assert idata.posterior["gamma"].dims == ("chain", "draw", "vector")
    assert idata.posterior.sizes["draw"] == 30
    assert float(idata.sample_stats["n_active"].max()) <= 20
    assert cli.main([*argv, "--likelihood", "hinge", "--out", str(tmp_path / "vb.nc")]) == 0
    with pytest.raises(SystemExit):
        cli.main(["fit", str(csv_path), "--target", "label", "--k-max", "3", "--out", "x.nc"])


def test_fit_missing_imputes_empty_cells_and_other_models_point_to_it(csv_path, tmp_path, capsys):
    frame = pd.read_csv(csv_path)
    frame.loc[[2, 5, 11], "b"] = np.nan
    path = tmp_path / "holes.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "missing.nc"
    assert (
        cli.main(["fit", str(path), "--target", "label", "--model", "missing", "--out", str(out)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "x_mis: 3 imputed cells" in printed and "x_mis[" not in printed
    assert az.from_netcdf(out).posterior["x_mis"].sizes["missing_cell"] == 3
    argv = ["fit", str(path), "--target", "label", "--model", "penalized", "--out", str(out)]
    with pytest.raises(SystemExit):
        cli.main(argv)
    assert "--model missing" in capsys.readouterr().err


def test_bench_spikeslab_times_the_model_search(capsys):
    argv = ["bench", "--model", "spike_slab", "--quick", "--rows", "120", "--methods", "gibbs,rj"]
    assert cli.main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("| method | seconds")
    assert "ess_n_active_per_s_ratio_gibbs" in lines[0]
    assert lines[2].startswith("| gibbs") and lines[3].startswith("| rj")


def test_bench_missing_times_vb_and_gibbs_on_a_cardiac_split(capsys):
    assert cli.main(["bench", "--model", "missing", "--quick", "--methods", "vb,gibbs"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("| method | n_train | missing_cells | seconds")
    assert lines[2].startswith("| vb | 2628 | 1246") and lines[3].startswith("| gibbs")


def test_bench_kernel_prints_each_table_under_its_name(capsys):
    assert cli.main(["bench", "--model", "kernel", "--quick", "--methods", "vb"]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line and not line.startswith("|")]
    assert headings == ["paper_run", "per_sweep", "exponent", "bgkm"]
    assert "| vb | 30 |" in out


def test_bench_gp_prints_each_table_under_its_name(capsys):
    assert cli.main(["bench", "--model", "gp", "--quick", "--methods", "vb"]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line and not line.startswith("|")]
    assert headings == ["waveform", "throughput", "full_gp"]
    assert "| svi | 2 | 200 |" in out and "| dask | 3000 |" in out


class Imported(Exception):
    """Raised in place of importing a benchmark, with its module's name."""


@pytest.mark.parametrize(
    ("former", "now", "module"),
    [("spikeslab", "spike_slab", "spikeslab"), ("gpsvm", "gp", "gpsvm")],
)
def test_bench_takes_a_former_model_name_and_says_its_new_one(
    capsys, monkeypatch, former, now, module
):
    def stop(name):
        raise Imported(name)

    monkeypatch.setattr(cli.importlib, "import_module", stop)
    with pytest.raises(Imported, match=f"bayesvm.bench.{module}"):
        cli.main(["bench", "--model", former, "--prior", "laplace-zero", "--quick"])
    error = capsys.readouterr().err
    assert f"warning: --model {former} is now {now}" in error
    assert "warning: --prior laplace-zero is now laplace_zero" in error


def test_bench_quick_prints_markdown(capsys):
    assert cli.main(["bench", "--quick", "--sizes", "50x3", "--methods", "vb,gibbs"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("| n_samples | n_features | method")
    assert len(lines) == 4 and "gibbs" in lines[3]


def test_bench_peers_prints_timings_and_slopes_and_writes_the_plot(tmp_path, capsys):
    plot = tmp_path / "figures" / "scaling.png"
    argv = ["bench", "--model", "peers", "--quick", "--sizes", "60x2,120x2"]
    assert cli.main([*argv, "--methods", "vb,liblinear", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line and not line.startswith("|")]
    assert headings == ["timings", "slopes", f"wrote {plot}"]
    assert "| 120 | 2 | liblinear | linear SVM |" in out
    assert plot.stat().st_size > 0


def test_bench_targets_prints_one_table_of_goals(monkeypatch, capsys):
    monkeypatch.setattr(bench_targets, "missing_package", lambda method: "nutpie")  # fast
    assert cli.main(["bench", "--model", "targets", "--quick"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "| target | measured | goal | result | detail | load_1min |"
    assert len(lines) == 2 + 8
    assert lines[2].startswith("| penalized VB / LIBLINEAR seconds, 2,000 x 10 |")
    assert "| <= 0.05 | not judged (quick sizes) |" in lines[3]
    assert "| > 1 | not measured |" in lines[4]


def test_bench_plot_is_for_the_peers_only(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "--quick", "--plot", str(tmp_path / "x.png")])
    assert exit_info.value.code == 2
    assert "--plot is for --model peers" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "nope"], "target column 'nope' not in the data"),
        (["--target", "a", "--features", "b,c"], "binary"),
        (["--target", "label", "--features", "a,zzz"], "zzz"),
        (["--target", "label", "--chains", "2"], "takes no --chains"),
        (["--target", "label", "--model", "penalized", "--alpha", "1"], "takes no --alpha"),
        (["--target", "label", "--model", "spike_slab", "--alpha", "1"], "takes no --alpha"),
        (["--target", "label", "--model", "spike_slab", "--prior", "ridge"], "laplace_zero or"),
        (["--target", "label", "--prior", "gaussian_slab"], "add --model spike_slab"),
        (
            ["--target", "label", "--model", "spike_slab", "--nu", "3"],
            "--model spike_slab --prior laplace_zero takes no --nu",
        ),
        (["--target", "label", "--method", "bogus"], "unknown method 'bogus'; the methods are"),
        (["--target", "label", "--method", "rj", "--model", "penalized"], "cannot fit this model"),
        (["--target", "label", "--model", "svn"], "unknown model 'svn'; the models are 'linear'"),
        (["--target", "label", "--groups", "a"], "--groups is for --model random_intercept"),
        (["--target", "label", "--model", "random_intercept"], "needs --groups COLUMN"),
        (["--target", "label", "--method", "vb", "--target-accept", "0.5"], "takes no --target"),
        (["--target", "label", "--method", "nuts", "--target-accept", "1.5"], "in (0, 1)"),
        (["--target", "label", "--method", "gibbs", "--draws", "1000000000000"], "GiB"),
    ],
)
def test_bad_input_exits_with_status_2_and_a_message(csv_path, tmp_path, capsys, extra, message):
    argv = ["fit", str(csv_path), *extra, "--out", str(tmp_path / "x.nc")]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error
    assert not (tmp_path / "x.nc").exists()


def test_missing_file_exits_with_status_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fit", str(tmp_path / "none.csv"), "--target", "y", "--out", "x.nc"])
    assert exit_info.value.code == 2
    assert "none.csv" in capsys.readouterr().err


def test_reproduce_dispatches_to_the_case_study_module(monkeypatch, tmp_path):
    calls = []
    module = types.ModuleType("fake_case_study")
    module.run = lambda **kwargs: calls.append(kwargs)
    monkeypatch.setitem(sys.modules, "fake_case_study", module)
    monkeypatch.setitem(cli.CASE_STUDIES, "simulated", "fake_case_study")
    argv = ["reproduce", "simulated", "--quick", "--workers", "3", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    assert calls == [{"out_dir": tmp_path, "quick": True, "workers": 3}]


def test_reproduce_rejects_options_and_methods_the_study_does_not_take(capsys, tmp_path):
    for extra, message in [
        (["--datasets", "3"], "reproduce linlogit takes no --datasets"),
        (["--scheduler", "tcp://host:1"], "takes no --scheduler"),
        (["--methods", "vb,svm"], "unknown methods ['svm'] for linlogit"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["reproduce", "linlogit", "--quick", "--out", str(tmp_path), *extra])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


def one_line_error(capsys, argv) -> str:
    """Run the command line, check that it exits with status 2 and one line on stderr, and
    return that line."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    return captured.err


def test_fit_creates_the_missing_folders_of_its_output(csv_path, tmp_path):
    out = tmp_path / "new" / "deeper" / "fit.nc"
    assert cli.main(["fit", str(csv_path), "--target", "label", "--out", str(out)]) == 0
    assert az.from_netcdf(out).posterior.sizes["draw"] > 0


@pytest.mark.parametrize("where", ["folder", "below a file", "not writable"])
def test_fit_refuses_an_output_it_cannot_write_before_fitting(
    csv_path, tmp_path, capsys, monkeypatch, where
):
    monkeypatch.setattr(cli.bayesvm, "fit", pytest.fail)
    out, message = {
        "folder": (tmp_path, "is a folder; give a file name in it"),
        "below a file": (csv_path / "sub" / "fit.nc", f"{csv_path} is a file, not a folder"),
        "not writable": (tmp_path / "fit.nc", f"cannot write in {tmp_path}"),
    }[where]
    if where == "not writable":  # (root may write anywhere, so the check is stood in for)
        monkeypatch.setattr(command_line.os, "access", lambda path, mode: False)
    error = one_line_error(capsys, ["fit", str(csv_path), "--target", "label", "--out", str(out)])
    assert error.startswith("bayesvm fit: error: --out ") and message in error


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fit", "d.csv", "--target", "y", "--draws", "0"], "--draws: expected a positive integer"),
        (["fit", "d.csv", "--target", "y", "--draws", "-1"], "--draws: expected a positive"),
        (["fit", "d.csv", "--target", "y", "--chains", "0"], "--chains: expected a positive"),
        (["fit", "d.csv", "--target", "y", "--tune", "-1"], "--tune: expected an integer >= 0"),
        (["fit", "d.csv", "--target", "y", "--seed", "-1"], "--seed: expected an integer >= 0"),
        (["fit", "d.csv", "--target", "y", "--draws", "x"], "--draws: expected a positive"),
        (["reproduce", "toenail", "--workers", "0"], "--workers: expected a positive integer"),
        (["reproduce", "simulated", "--datasets", "0"], "--datasets: expected a positive"),
        (["bench", "--repeats", "0"], "--repeats: expected a positive integer"),
        (["bench", "--sizes", "0x3"], "size '0x3' is not NxD with positive N and D"),
        (["compare", "a.nc", "--hdi-prob", "1.5"], "--hdi-prob: expected a probability"),
        (["compare", "a.nc", "--hdi-prob", "0"], "--hdi-prob: expected a probability"),
    ],
)
def test_bad_numbers_are_refused_in_one_line_before_any_work(tmp_path, capsys, argv, message):
    out = tmp_path / "out"
    extra = ["--out", str(out)] if argv[0] in ("fit", "reproduce") else []
    error = one_line_error(capsys, [*argv, *extra])
    assert error.startswith(f"bayesvm {argv[0]}: error: argument ") and message in error
    assert not out.exists()


def test_reproduce_refuses_bad_output_folders_and_option_mixes(csv_path, tmp_path, capsys):
    out = ["--out", str(csv_path / "results")]
    assert "is a file, not a folder" in one_line_error(capsys, ["reproduce", "toenail", *out])
    both = ["--workers", "2", "--scheduler", "tcp://host:1", "--out", str(tmp_path / "x")]
    assert "either --workers" in one_line_error(capsys, ["reproduce", "toenail", *both])
    assert not (tmp_path / "x").exists()


def test_reproduce_reports_a_refused_resume_in_one_line(monkeypatch, tmp_path, capsys):
    def refuse(**kwargs):
        raise ResumeMismatchError(tmp_path / "simulated.csv", {"methods": (["vb"], ["svm"])})

    module = types.ModuleType("fake_case_study")
    module.run, module.METHODS = refuse, ("vb", "svm")
    monkeypatch.setitem(sys.modules, "fake_case_study", module)
    monkeypatch.setitem(cli.CASE_STUDIES, "simulated", "fake_case_study")
    argv = ["reproduce", "simulated", "--resume", "--methods", "svm", "--out", str(tmp_path)]
    error = one_line_error(capsys, argv)
    assert error.startswith("bayesvm reproduce: error: cannot resume ")
    assert "methods: ['vb'] before, ['svm'] now" in error


def test_warnings_are_printed_in_one_line_and_their_display_restored(monkeypatch, tmp_path, capsys):
    module = types.ModuleType("fake_case_study")
    module.run = lambda **kwargs: warnings.warn("settings not checked", stacklevel=1)
    monkeypatch.setitem(sys.modules, "fake_case_study", module)
    monkeypatch.setitem(cli.CASE_STUDIES, "simulated", "fake_case_study")
    show_warning = warnings.showwarning
    assert cli.main(["reproduce", "simulated", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().err == "bayesvm: warning: settings not checked\n"
    assert warnings.showwarning is show_warning


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty: expected a CSV file with a header row"),
        ("a,b,y\n", "has a header but no rows"),
    ],
)
def test_fit_names_a_csv_without_rows(tmp_path, capsys, content, message):
    data = tmp_path / "data.csv"
    data.write_text(content)
    error = one_line_error(capsys, ["fit", str(data), "--target", "y", "--out", "x.nc"])
    assert f"{data} {message}" in error


def test_fit_names_a_target_of_one_class(csv_path, tmp_path, capsys):
    data = tmp_path / "one.csv"
    pd.read_csv(csv_path).assign(label="yes").to_csv(data, index=False)
    error = one_line_error(capsys, ["fit", str(data), "--target", "label", "--out", "x.nc"])
    assert "single class ('yes')" in error


def test_compare_refuses_partial_and_foreign_files_naming_them(fitted, tmp_path, capsys):
    half, empty, text, arviz_file = (tmp_path / f"{name}.nc" for name in ("half", "0", "txt", "az"))
    data = fitted[0].read_bytes()
    half.write_bytes(data[: len(data) // 2])  # a fit whose writing was cut short
    empty.write_bytes(b"")
    text.write_text("not netCDF")
    az.from_dict(posterior={"beta": np.zeros((2, 10, 3))}).to_netcdf(str(arviz_file))
    incomplete = (
        " is not a complete netCDF-4 file (it is cut short, damaged or of another format): "
    )
    for path, message in [
        (half, incomplete),
        (empty, incomplete),
        (text, incomplete),
        (arviz_file, " has no 'model' group (it has ['posterior']): it is not a fit written by "),
        (tmp_path / "none.nc", ": no such file\n"),
    ]:
        error = one_line_error(capsys, ["compare", str(fitted[0]), str(path)])
        assert error.startswith(f"bayesvm compare: error: {path}{message}")


def wait_for_lock(folder: Path, process: subprocess.Popen) -> dict:
    """The record of ``folder``'s lock, once ``process`` has taken it."""
    lock, deadline = folder / LOCK_FILE_NAME, time.monotonic() + 120
    while not (lock.exists() and lock.read_text()):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the lock was not taken"
        time.sleep(0.02)
    return json.loads(lock.read_text())


def test_reproduce_refuses_a_folder_another_run_uses_and_leaves_that_run_alone(tmp_path, capsys):
    out = tmp_path / "simulated"
    argv = ["reproduce", "simulated", "--quick", "--out", str(out)]
    first = subprocess.Popen(
        [str(Path(sys.executable).with_name("bayesvm")), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    try:
        holder = wait_for_lock(out, first)
        error = one_line_error(capsys, argv)  # this process is the second run
        with pytest.raises(FolderInUseError):  # the Python API is refused too
            simulated.run(out, quick=True, progressbar=False)
        _, stderr = first.communicate(timeout=600)
    finally:
        first.kill()
    command = re.escape(f"bayesvm reproduce simulated --quick --out {out}")
    assert holder["pid"] == first.pid
    assert re.fullmatch(
        rf"bayesvm reproduce: error: {re.escape(str(out))} is in use by process {first.pid} "
        rf"\({command}\), started \d\d:\d\d:\d\d; wait for it or choose another --out\n",
        error,
    )
    assert first.returncode == 0, stderr
    rows = pd.read_csv(out / "simulated.csv")
    assert rows["replicate"].tolist() == [0] * 3 + [1] * 3 + [2] * 3
    assert set(rows["method"]) == set(simulated.METHODS) and rows["ber"].between(0, 1).all()
    assert (out / "report.md").exists() and not (out / LOCK_FILE_NAME).exists()


def test_reproduce_takes_over_the_folder_of_a_killed_run_with_a_warning(
    monkeypatch, tmp_path, capsys
):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from bayesvm.files import locked_folder\n"
         "with locked_folder(sys.argv[1]):\n"
         "    time.sleep(600)\n", str(tmp_path)],
    )  # fmt: skip
    record = wait_for_lock(tmp_path, holder)
    holder.kill()  # kill -9: the lock stays behind
    holder.wait()
    held_by = []

    def run(out_dir, **kwargs):
        with locked_folder(out_dir):
            held_by.append(json.loads((Path(out_dir) / LOCK_FILE_NAME).read_text()))

    module = types.ModuleType("fake_case_study")
    module.run = run
    monkeypatch.setitem(sys.modules, "fake_case_study", module)
    monkeypatch.setitem(cli.CASE_STUDIES, "simulated", "fake_case_study")
    assert cli.main(["reproduce", "simulated", "--out", str(tmp_path)]) == 0
    warning = capsys.readouterr().err
    assert warning.startswith(f"bayesvm: warning: {tmp_path} was locked by process {holder.pid} (")
    assert (
        warning.endswith(", which no longer runs: taking it over\n")
        and record["command"] in warning
    )
    assert [held["pid"] for held in held_by] == [os.getpid()]
    assert not (tmp_path / LOCK_FILE_NAME).exists()


@pytest.mark.skipif(sys.platform != "linux", reason="ArviZ's cache folder is set by XDG there")
def test_import_and_help_print_no_arviz_banner(tmp_path):
    """ArviZ warns on its first import of the day (it keeps the date in its cache folder):
    importing arviz alone prints the banner, importing bayesvm does not, and leaves no
    filter behind."""

    def run(code: str, cache: str) -> str:
        environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / cache)}
        command = [sys.executable, "-W", "default", "-c", code]
        result = subprocess.run(command, capture_output=True, text=True, env=environment)
        return result.stderr

    assert "ArviZ is undergoing a major refactor" in run("import arviz", "first")
    stderr = run(
        "import warnings\n"
        "import bayesvm.cli\n"
        "assert not any(f[1] and 'ArviZ' in f[1].pattern for f in warnings.filters)\n"
        "bayesvm.cli.main(['--help'])\n",
        "second",
    )
    assert stderr == ""
