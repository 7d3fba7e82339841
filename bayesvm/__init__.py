"""bayesvm: Bayesian support vector machines, specified once and fitted by every method.

>>> import bayesvm
>>> from bayesvm.models import LinearSVM
>>> fit = bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=0.5), method="vb")  # doctest: +SKIP

``import bayesvm`` loads NumPy, SciPy and bayesvm's own code only: ArviZ (with xarray, pandas
and matplotlib), scikit-learn, PyMC, dask and formulae are imported by the first call that
needs them.
"""

import importlib
from typing import TYPE_CHECKING

from bayesvm import (  # noqa: F401  (register the backends)
    samplers,
    vb,
)
from bayesvm.calibration import brier_scores, calibration_table, plot_calibration
from bayesvm.compare import compare, plot_compare
from bayesvm.exceptions import (
    IdentifiabilityWarning,
    NumericalBreakdownError,
    UnseenGroupWarning,
)
from bayesvm.formula import from_formula
from bayesvm.model_comparison import compare_models, loo
from bayesvm.persistence import load
from bayesvm.registry import fit, methods
from bayesvm.results import Fit
from bayesvm.system_info import info
from bayesvm.version import __version__ as __version__

if TYPE_CHECKING:
    from bayesvm.estimator import BayesianRegressor, BayesianSVC
    from bayesvm.exceptions import ConvergenceWarning

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

# Public names whose classes derive from scikit-learn's (0.3 s to import): the module that
# defines each is imported on the name's first use (PEP 562).
_FROM_SKLEARN = {
    "BayesianSVC": "bayesvm.estimator",
    "BayesianRegressor": "bayesvm.estimator",
    "ConvergenceWarning": "bayesvm.exceptions",
}
# Subpackages that ``import bayesvm`` does not load (the data loaders import pandas, 0.1 s):
# ``bayesvm.data.load_heart()`` imports them on first use (PEP 562).
_SUBPACKAGES = ("data", "case_studies")


def __getattr__(name: str):
    if name in _FROM_SKLEARN:
        return getattr(importlib.import_module(_FROM_SKLEARN[name]), name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_FROM_SKLEARN, *_SUBPACKAGES])
