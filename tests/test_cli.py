import os
import subprocess
import sys
import types

import matplotlib
import numpy as np
import pandas as pd
import pytest

from bayesvm import cli

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
    assert "lower bound" in printed and "runtime" in printed
    assert out.exists()


def test_compare_prints_a_table_and_plots(fitted, tmp_path, capsys):
    plot = tmp_path / "forest.png"
    argv = ["compare", *map(str, fitted), "--names", "VB,Gibbs", "--plot", str(plot)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "VB" in printed and "Gibbs" in printed and "ess_bulk" in printed
    assert "sigma2_u" in printed
    assert plot.stat().st_size > 0


def test_bench_quick_prints_markdown(capsys):
    assert cli.main(["bench", "--quick", "--sizes", "50x3", "--methods", "vb,gibbs"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("| n_samples | n_features | method")
    assert len(lines) == 4 and "gibbs" in lines[3]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "nope"], "target column 'nope' not in the data"),
        (["--target", "a", "--features", "b,c"], "binary"),
        (["--target", "label", "--features", "a,zzz"], "zzz"),
        (["--target", "label", "--chains", "2"], "takes no --chains"),
        (["--target", "label", "--model", "penalized", "--alpha", "1"], "linear model only"),
        (["--target", "label", "--method", "bogus"], "cannot fit this model"),
    ],
)
def test_bad_input_exits_with_status_2_and_a_message(csv_path, tmp_path, capsys, extra, message):
    argv = ["fit", str(csv_path), *extra, "--out", str(tmp_path / "x.nc")]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


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
