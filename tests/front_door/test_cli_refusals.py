"""The command line refuses, in one line and before any work, what would lose data or end in a
traceback; and it says each thing once.
"""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm import cli
from bayesvm.files import LOCK_FILE_NAME, locked_folder
from bayesvm.models import LinearSVM

LONG_NAME = "x" * 300  # longer than any file system's names (255 bytes)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A CSV of 60 rows, and a VB and a Gibbs fit of it saved by ``bayesvm fit``."""
    folder = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] + rng.standard_normal(60) > 0, 1, -1)
    path = folder / "data.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(path, index=False)
    common = ["fit", str(path), "--target", "y", "--model", "penalized"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main([*common, "--method", "vb", "--out", str(folder / "vb.nc")]) == 0
        gibbs = ["--method", "gibbs", "--draws", "50", "--tune", "50", "--chains", "1"]
        assert cli.main([*common, *gibbs, "--out", str(folder / "gibbs.nc")]) == 0
        linear = ["fit", str(path), "--target", "y", "--model", "linear", "--method", "vb"]
        assert cli.main([*linear, "--out", str(folder / "linear.nc")]) == 0
    return path, folder / "vb.nc", folder / "gibbs.nc", folder / "linear.nc"


def one_line_error(capsys, argv) -> str:
    """Run the command line; check that it exits with status 2 and one line on stderr and
    nothing on stdout, and return that line.
    """
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    return captured.err


@pytest.fixture
def no_fitting(monkeypatch):
    """Any fit or saved-fit read fails the test: the refusal must come before any work."""
    monkeypatch.setattr(cli.bayesvm, "fit", pytest.fail)
    monkeypatch.setattr(cli.bayesvm, "load", pytest.fail)


def test_an_output_that_is_the_input_is_refused_before_any_work(data, capsys, no_fitting):
    csv_path, vb, gibbs, _ = data
    before = csv_path.read_bytes()
    error = one_line_error(capsys, ["fit", str(csv_path), "--target", "y", "--out", str(csv_path)])
    assert f"--out {csv_path} is the input file" in error
    assert csv_path.read_bytes() == before
    linked = csv_path.with_name("linked.csv")  # another name for the same file
    linked.unlink(missing_ok=True)
    os.link(csv_path, linked)
    error = one_line_error(capsys, ["fit", str(linked), "--target", "y", "--out", str(csv_path)])
    assert "is the input file" in error
    error = one_line_error(capsys, ["compare", str(vb), str(gibbs), "--plot", str(vb)])
    assert f"--plot {vb} is the input file" in error


@pytest.mark.parametrize("plot", ["forest.xyz", "forest"])
def test_a_plot_matplotlib_cannot_write_is_refused_before_any_work(
    data, tmp_path, capsys, no_fitting, plot
):
    _, vb, gibbs, _ = data
    problem = "matplotlib writes no .xyz images" if plot.endswith(".xyz") else "has no suffix"
    error = one_line_error(capsys, ["compare", str(vb), str(gibbs), "--plot", str(tmp_path / plot)])
    assert problem in error and ".png" in error and ".pdf" in error
    error = one_line_error(capsys, ["bench", "--model", "peers", "--plot", str(tmp_path / plot)])
    assert problem in error
    assert list(tmp_path.iterdir()) == []


def unmakeable_outputs(tmp_path) -> list[Path]:
    """Outputs no system can make: a name of 300 characters, as a file and as a folder, and,
    on Linux, a folder inside the ``/proc`` pseudo-file system.
    """
    outputs = [tmp_path / LONG_NAME, tmp_path / LONG_NAME / "x.nc", tmp_path / "a" / LONG_NAME]
    if sys.platform.startswith("linux") and Path("/proc/self").exists():
        outputs.append(Path("/proc") / f"bayesvm-{os.getpid()}" / "x.nc")
    return outputs


def test_outputs_that_cannot_be_made_are_refused_in_one_line(data, tmp_path, capsys, no_fitting):
    csv_path, vb, _, _ = data
    for out in unmakeable_outputs(tmp_path):
        nc = out if out.suffix else out.with_name(out.name + ".nc")
        fit_error = one_line_error(
            capsys, ["fit", str(csv_path), "--target", "y", "--out", str(nc)]
        )
        assert fit_error.startswith(f"bayesvm fit: error: --out {nc}"), fit_error
        png = out.with_suffix(".png")
        error = one_line_error(capsys, ["compare", str(vb), "--plot", str(png)])
        assert error.startswith(f"bayesvm compare: error: --plot {png}"), error
        argv = ["reproduce", "toenail", "--quick", "--out", str(out)]
        error = one_line_error(capsys, argv)
        assert error.startswith(f"bayesvm reproduce: error: --out {out}"), error
    assert "File name too long" in one_line_error(
        capsys, ["reproduce", "toenail", "--out", str(tmp_path / LONG_NAME)]
    )
    assert list(tmp_path.iterdir()) == []  # no folder was left behind


def test_a_repeated_header_name_is_refused_not_renamed(tmp_path, capsys):
    path = tmp_path / "data.csv"
    path.write_text("y,x1,x1,x2\n1,2,3,4\n-1,3,4,5\n1,5,6,7\n")
    error = one_line_error(
        capsys, ["fit", str(path), "--target", "y", "--out", str(tmp_path / "f")]
    )
    assert "the header names the columns ['x1'] more than once" in error


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "toenail", "--methods", "vb,vb"],
        ["fit", "data.csv", "--target", "y", "--features", "a,b,a"],
        ["bench", "--threads", "1,1"],
    ],
)
def test_a_name_given_twice_is_refused(capsys, argv):
    assert "given more than once" in one_line_error(capsys, argv)


def test_a_fit_that_should_not_be_trusted_says_so_once(data, tmp_path, capsys):
    csv_path = data[0]
    argv = ["fit", str(csv_path), "--target", "y", "--model", "penalized", "--method", "gibbs"]
    gibbs = ["--draws", "20", "--tune", "0", "--chains", "2", "--out", str(tmp_path / "g.nc")]
    assert cli.main([*argv, *gibbs]) == 0
    captured = capsys.readouterr()
    said = (captured.out + captured.err).count("bulk ESS")
    assert said == 1 and "not to be trusted: bulk ESS" in captured.out


def test_compare_warns_when_the_fits_are_of_different_models(data, capsys):
    _, vb, gibbs, linear = data
    assert cli.main(["compare", str(vb), str(gibbs)]) == 0
    assert capsys.readouterr().err == ""  # one model, one data set
    assert cli.main(["compare", str(vb), str(linear), "--var-names", "u"]) == 0
    error = capsys.readouterr().err
    assert error.startswith("bayesvm: warning: the fits compared are of different models")
    assert "vb: MixedSVM on 60 rows; linear: LinearSVM on 60 rows" in error


def test_compare_in_python_warns_for_other_data_or_hyperparameters():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 2))
    y = np.where(X[:, 0] + rng.standard_normal(50) > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        fits = {
            "a": bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=1.0), "vb"),
            "b": bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=1.0), "em"),
            "other alpha": bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=2.0), "vb"),
            "other rows": bayesvm.fit(LinearSVM.from_arrays(X[:40], y[:40], alpha=1.0), "vb"),
        }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bayesvm.compare({"a": fits["a"], "b": fits["b"]})
    for other in ("other alpha", "other rows"):
        with pytest.warns(UserWarning, match="different models or data"):
            bayesvm.compare({"a": fits["a"], other: fits[other]})


def test_a_locked_folder_is_refused_before_the_study_is_imported(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli.importlib, "import_module", pytest.fail)
    with locked_folder(tmp_path):  # held by this process, which runs
        error = one_line_error(capsys, ["reproduce", "toenail", "--out", str(tmp_path)])
    assert f"{tmp_path} is in use by process {os.getpid()}" in error
    (tmp_path / "toenail.settings.json").write_text(json.dumps({"study": "toenail"}))
    error = one_line_error(capsys, ["reproduce", "toenail", "--out", str(tmp_path)])
    assert "holds the results of an earlier run (toenail.settings.json)" in error
    assert not (tmp_path / LOCK_FILE_NAME).exists()


def test_ctrl_c_while_numba_compiles_is_not_lost():
    """LLVM calls back into Python while Numba compiles; a ``KeyboardInterrupt`` raised in such
    a callback would be printed as "Exception ignored" and lost, the compilation going on.
    """
    code = (
        "import os, signal, threading\n"
        "from bayesvm.blocks.probit_newton import compiled_probit\n"
        "threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
        "try:\n"
        "    compiled_probit()\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "interrupted\n", result
    assert "Exception ignored" not in result.stderr and "Traceback" not in result.stderr


def test_ctrl_c_during_a_fit_says_nothing_was_written(data, tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.bayesvm, "fit", interrupted)
    out = tmp_path / "fit.nc"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fit", str(data[0]), "--target", "y", "--out", str(out)])
    assert exit_info.value.code == cli.INTERRUPTED == 130
    assert capsys.readouterr() == (
        "",
        f"bayesvm fit: interrupted before writing {out} (written whole or not at all)\n",
    )
    assert not out.exists()


def test_an_output_that_is_no_regular_file_is_refused(data, tmp_path, capsys, no_fitting):
    """Writing renames a new file onto the target: a device or a pipe would be replaced by it
    (``--out /dev/null`` as root replaced the device).
    """
    pipe = tmp_path / "pipe.nc"
    os.mkfifo(pipe)
    error = one_line_error(capsys, ["fit", str(data[0]), "--target", "y", "--out", str(pipe)])
    assert "is not a regular file" in error
    from bayesvm.files import write_text

    with pytest.raises(OSError, match="is not a regular file"):
        write_text(pipe, "text")
    assert pipe.is_fifo()


def test_a_path_longer_than_the_system_takes_is_refused(data, tmp_path, capsys, no_fitting):
    deep = tmp_path.joinpath(*["d" * 250] * 20, "fit.nc")  # each name fits, the whole does not
    error = one_line_error(capsys, ["fit", str(data[0]), "--target", "y", "--out", str(deep)])
    assert "File name too long" in error and "bytes in all" in error
    error = one_line_error(capsys, ["reproduce", "toenail", "--out", str(deep.parent)])
    assert "File name too long" in error


def test_a_repeated_header_is_found_after_blank_lines(tmp_path, capsys):
    path = tmp_path / "data.csv"
    path.write_text("\n\ny,x1,x1\n1,2,3\n-1,3,4\n1,5,6\n")
    argv = ["fit", str(path), "--target", "y", "--out", str(tmp_path / "fit.nc")]
    assert "names the columns ['x1'] more than once" in one_line_error(capsys, argv)


def test_ctrl_c_ends_the_fit_of_the_command_line_instead_of_writing_its_draws_so_far(
    data, tmp_path, capsys, monkeypatch
):
    from bayesvm.interrupts import keeps_on_interrupt

    seen = []

    def fit(*args, **kwargs):
        seen.append(keeps_on_interrupt())
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.bayesvm, "fit", fit)
    with pytest.raises(SystemExit):
        cli.main(["fit", str(data[0]), "--target", "y", "--out", str(tmp_path / "fit.nc")])
    assert seen == [False]
