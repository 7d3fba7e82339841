"""PyTensor's BLAS: chosen from what the linker can see, never a flag that cannot link.

Each test controls what is visible: a temporary directory of libraries built here (a tiny
``libopenblas.so.0`` whose ``ddot_`` is all PyTensor's link check calls), and for whole runs the
``BAYESVM_BLAS_DIRS`` variable, so that the results do not depend on this machine's BLAS.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from bayesvm._blas import BLAS_DIRS_VARIABLE, choose_blas, search_dirs

DDOT = """
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy)
{
    double sum = 0.0;
    for (int i = 0; i < *n; i++) sum += x[i * *incx] * y[i * *incy];
    return sum;
}
"""
WRONG_DDOT = """
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy)
{
    return 0.0;
}
"""


@pytest.fixture(scope="module")
def c_compiler():
    import pytensor

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or not pytensor.config.cxx:
        pytest.skip("no C compiler: PyTensor compiles no C code, so it links to no BLAS")
    return compiler


def build_library(compiler, path, source=DDOT):
    """Compile ``source`` into the shared library ``path`` (its soname is its file name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    source_file = path.parent.parent / f"{path.name}.c"
    source_file.write_text(source)
    command = [compiler, "-shared", "-fPIC", f"-Wl,-soname,{path.name}", "-o", path, source_file]
    subprocess.run(command, check=True)
    return path


def test_runtime_only_openblas_is_linked_by_its_file_name(c_compiler, tmp_path):
    lib = tmp_path / "lib"
    library = build_library(c_compiler, lib / "libopenblas.so.0")
    choice = choose_blas([lib])
    assert choice.ldflags == f"-Wl,-L{lib} -l:libopenblas.so.0 -Wl,-rpath,{lib}"
    assert choice.library == str(library)
    assert choice.rejected == ()


def test_dangling_development_symlink_gives_no_flag(tmp_path):
    (tmp_path / "libopenblas.so").symlink_to(tmp_path / "libopenblas.so.0")
    choice = choose_blas([tmp_path])
    assert (choice.ldflags, choice.library, choice.rejected) == ("", None, ())


def test_no_blas_at_all_gives_empty_flags_and_says_so(tmp_path):
    choice = choose_blas([tmp_path])
    assert (choice.ldflags, choice.library, choice.origin) == ("", None, "bayesvm")
    assert choice.describe().startswith("none found: NUTS uses NumPy's C API")


def test_a_library_failing_the_link_check_is_rejected(c_compiler, tmp_path):
    library = build_library(c_compiler, tmp_path / "lib" / "libopenblas.so.0", WRONG_DDOT)
    choice = choose_blas([tmp_path / "lib"])
    assert (choice.ldflags, choice.rejected) == ("", (str(library),))


def test_blas_alternative_counts_only_when_optimised_and_after_openblas(c_compiler, tmp_path):
    lib = tmp_path / "lib"
    optimised = build_library(c_compiler, lib / "openblas-pthread" / "libblas.so.3")
    reference = build_library(c_compiler, tmp_path / "reference" / "blas" / "libblas.so.3")
    (lib / "libblas.so.3").symlink_to(optimised)
    (tmp_path / "reference" / "libblas.so.3").symlink_to(reference)

    assert choose_blas([tmp_path / "reference"]).ldflags == ""
    assert choose_blas([lib]).library == str(lib / "libblas.so.3")
    openblas = build_library(c_compiler, tmp_path / "later" / "libopenblas.so.0")
    assert choose_blas([lib, tmp_path / "later"]).library == str(openblas)


def test_blas_dirs_variable_replaces_the_searched_directories(monkeypatch, tmp_path):
    monkeypatch.setenv(BLAS_DIRS_VARIABLE, os.pathsep.join([str(tmp_path), "/opt/blas"]))
    assert [str(path) for path in search_dirs()] == [str(tmp_path), "/opt/blas"]
    monkeypatch.setenv(BLAS_DIRS_VARIABLE, "")
    assert search_dirs() == []


def run_python(code: str, tmp_path, **environment) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with no BLAS setting of the user's."""
    rc_file = tmp_path / "pytensorrc"
    rc_file.touch()
    env = {key: value for key, value in os.environ.items() if key != "PYTENSOR_FLAGS"}
    env.update(PYTENSORRC=str(rc_file), MPLBACKEND="Agg", **environment)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )


def test_a_blas_setting_of_the_user_is_kept(tmp_path):
    code = """
        import json
        import pytensor
        from bayesvm._blas import pytensor_blas
        choice = pytensor_blas()
        print(json.dumps([choice.origin, choice.ldflags, pytensor.config.blas__ldflags]))
    """
    flags = {"PYTENSOR_FLAGS": "blas__ldflags=-lmyblas"}
    printed = run_python(code, tmp_path, **flags).stdout
    assert json.loads(printed) == ["user", "-lmyblas", "-lmyblas"]

    code = "import pytensor\npytensor.config.blas__ldflags = '-lmine'\n" + textwrap.dedent(code)
    assert json.loads(run_python(code, tmp_path).stdout) == ["preset", "-lmine", "-lmine"]


def test_nuts_runs_without_any_system_blas_and_info_says_so(tmp_path):
    empty = tmp_path / "no_libraries"
    empty.mkdir()
    code = """
        import numpy as np
        import bayesvm
        from bayesvm import cli
        from bayesvm.models import LinearSVM

        rng = np.random.default_rng(0)
        X = rng.standard_normal((40, 2))
        y = np.where(X[:, 0] + rng.standard_normal(40) > 0, 1, -1)
        model = LinearSVM.from_arrays(X, y, alpha=0.5)
        fit = bayesvm.fit(model, method="nuts", draws=50, tune=50, chains=1, progressbar=False)
        print("draws:", fit.idata.posterior.sizes["draw"])
        cli.main(["info"])
    """
    result = run_python(code, tmp_path, **{BLAS_DIRS_VARIABLE: str(empty)})
    assert "draws: 50" in result.stdout
    assert "BLAS of PyTensor (NUTS): none found: NUTS uses NumPy's C API" in result.stdout
    assert "could not link to a BLAS" not in result.stderr
