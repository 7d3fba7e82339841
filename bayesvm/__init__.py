"""bayesvm: Bayesian support vector machines, specified once and fitted by every method.

>>> import bayesvm
>>> from bayesvm.models import LinearSVM
>>> fit = bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=0.5), method="vb")  # doctest: +SKIP

``import bayesvm`` loads NumPy and the package's front door only: each public name's module is
imported on its first use, and ArviZ (with xarray, pandas and matplotlib), scikit-learn, PyMC,
dask and formulae by the first call that needs them.
"""

import importlib
from typing import TYPE_CHECKING

from bayesvm.version import __version__ as __version__

if TYPE_CHECKING:
    from bayesvm.calibration import brier_scores, calibration_table, plot_calibration
    from bayesvm.estimator import BayesianRegressor, BayesianSVC
    from bayesvm.exceptions import (
        ConvergenceWarning,
        IdentifiabilityWarning,
        NumericalBreakdownError,
        UnseenGroupWarning,
    )
    from bayesvm.formula import from_formula
    from bayesvm.method_comparison import compare, plot_compare
    from bayesvm.model_comparison import compare_models, loo
    from bayesvm.persistence import load
    from bayesvm.registry import fit, methods
    from bayesvm.results import Fit
    from bayesvm.system_info import info

__all__ = [
    "fit",
    "methods",
    "from_formula",
    "Fit",
    "load",
    "compare",
    "plot_compare",
    "compare_models",
    "loo",
    "calibration_table",
    "brier_scores",
    "plot_calibration",
    "BayesianSVC",
    "BayesianRegressor",
    "ConvergenceWarning",
    "IdentifiabilityWarning",
    "UnseenGroupWarning",
    "NumericalBreakdownError",
    "info",
]

# Each public name's module, imported on the name's first use (PEP 562): ``import bayesvm``
# itself loads no SciPy (0.35 s, most of it SciPy's array-API layer) and none of bayesvm's
# models, so that the command line and a script that only asks the version start at once.
# The first ``bayesvm.fit`` or ``bayesvm.methods`` loads the inference methods (the registry).
_MODULES = {
    "fit": "bayesvm.registry",
    "methods": "bayesvm.registry",
    "from_formula": "bayesvm.formula",
    "Fit": "bayesvm.results",
    "load": "bayesvm.persistence",
    "compare": "bayesvm.method_comparison",
    "plot_compare": "bayesvm.method_comparison",
    "compare_models": "bayesvm.model_comparison",
    "loo": "bayesvm.model_comparison",
    "calibration_table": "bayesvm.calibration",
    "brier_scores": "bayesvm.calibration",
    "plot_calibration": "bayesvm.calibration",
    "BayesianSVC": "bayesvm.estimator",
    "BayesianRegressor": "bayesvm.estimator",
    "ConvergenceWarning": "bayesvm.exceptions",
    "IdentifiabilityWarning": "bayesvm.exceptions",
    "UnseenGroupWarning": "bayesvm.exceptions",
    "NumericalBreakdownError": "bayesvm.exceptions",
    "info": "bayesvm.system_info",
}
# Subpackages, also imported on first use (``bayesvm.data.load_heart()``).
_SUBPACKAGES = ("data", "case_studies", "models", "samplers", "vb", "blocks")


def __getattr__(name: str):
    if name in _MODULES:
        value = getattr(importlib.import_module(_MODULES[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULES, *_SUBPACKAGES})
