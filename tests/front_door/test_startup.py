"""``import bayesvm`` loads no heavy dependency; the public names still resolve, and the
first use of ArviZ or PyMC still prints no ArviZ banner.
"""

import os
import subprocess
import sys
import warnings

import pytest
import sklearn.exceptions

import bayesvm
from bayesvm import estimator, exceptions, models

# Imported by the first call that needs them, never by ``import bayesvm``.
HEAVY_MODULES = (
    "arviz",
    "matplotlib",
    "pymc",
    "pytensor",
    "dask",
    "sklearn",
    "xarray",
    "pandas",
    "rich",
    "formulae",
    "scipy",
    "bayesvm.models",
    "bayesvm.samplers",
)

BANNER = "ArviZ is undergoing a major refactor"


def run_python(code: str, **environment) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (warnings shown once each) and return the result."""
    return subprocess.run(
        [sys.executable, "-W", "default", "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg", **environment},
        check=True,
    )


def test_import_bayesvm_loads_no_heavy_module():
    result = run_python(
        f"import bayesvm, sys; print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    assert result.stdout.strip() == "[]"


def test_the_command_lines_help_loads_no_heavy_module():
    """``bayesvm --help`` answers at once: each command imports what it runs."""
    result = run_python(
        "import contextlib, io, sys\n"
        "from bayesvm import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    cli.main(['--help'])\n"
        f"print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    assert result.stdout.strip() == "[]", result.stderr


@pytest.mark.parametrize("first", ["bayesvm.checks.pareto", "bayesvm.samplers.nuts"])
def test_each_backend_package_imports_first(first):
    """``import bayesvm`` no longer loads the inference methods in a fixed order, so each of
    their packages, and the checks they share, must import first in a fresh interpreter.
    """
    assert run_python(f"import {first}").returncode == 0


def test_every_public_name_resolves():
    for name in bayesvm.__all__:
        assert getattr(bayesvm, name) is not None, name
    for name in models.__all__:
        assert getattr(models, name) is not None, name
    namespace: dict = {}
    exec("from bayesvm import *", namespace)
    assert set(bayesvm.__all__) <= set(namespace)
    assert {"BayesianSVC", "ConvergenceWarning"} <= set(dir(bayesvm))
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        bayesvm.missing  # noqa: B018


def test_lazy_names_are_the_classes_of_their_modules():
    assert bayesvm.BayesianSVC is estimator.BayesianSVC
    assert bayesvm.ConvergenceWarning is exceptions.ConvergenceWarning
    assert issubclass(bayesvm.ConvergenceWarning, sklearn.exceptions.ConvergenceWarning)
    assert repr(bayesvm.ConvergenceWarning) == "<class 'bayesvm.exceptions.ConvergenceWarning'>"
    with warnings.catch_warnings():
        warnings.simplefilter("error", bayesvm.ConvergenceWarning)
        with pytest.raises(sklearn.exceptions.ConvergenceWarning):
            exceptions.warn_user("not converged", bayesvm.ConvergenceWarning)


@pytest.mark.skipif(sys.platform != "linux", reason="ArviZ's cache folder is set by XDG there")
@pytest.mark.parametrize(
    "first_use",
    [
        "bayesvm.fit(model, method='vb').summary()",
        "model.to_pymc()",
    ],
    ids=["fit", "pymc"],
)
def test_first_use_of_arviz_prints_no_banner(first_use, tmp_path):
    """ArviZ warns on its first import of the day (it keeps the date in its cache folder);
    a fresh cache folder makes the import the day's first.
    """
    code = (
        "import numpy as np\n"
        "import bayesvm\n"
        "from bayesvm.models import LinearSVM\n"
        "X = np.random.default_rng(0).standard_normal((40, 2))\n"
        "model = LinearSVM.from_arrays(X, np.where(X[:, 0] > 0, 1, -1), alpha=0.5)\n"
        f"{first_use}\n"
        "import sys\n"
        "assert 'arviz' in sys.modules\n"
    )
    result = run_python(code, XDG_CACHE_HOME=str(tmp_path))
    assert BANNER not in result.stderr
