"""bayesvm: Bayesian support vector machines, specified once and fitted by every method.

>>> import bayesvm
>>> from bayesvm.models import LinearSVM
>>> fit = bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=0.5), method="vb")  # doctest: +SKIP
"""

from bayesvm import (  # noqa: F401  (register the backends)
    _arviz,  # noqa: F401  (import ArviZ without its banner, before anything else does)
    samplers,
    vb,
)
from bayesvm.compare import compare, plot_compare
from bayesvm.estimator import BayesianSVC
from bayesvm.exceptions import ConvergenceWarning, IdentifiabilityWarning, UnseenGroupWarning
from bayesvm.persistence import load
from bayesvm.registry import fit, methods
from bayesvm.results import Fit
from bayesvm.system_info import info

__all__ = [
    "fit",
    "methods",
    "Fit",
    "load",
    "compare",
    "plot_compare",
    "BayesianSVC",
    "ConvergenceWarning",
    "IdentifiabilityWarning",
    "UnseenGroupWarning",
    "info",
]
__version__ = "0.1.0"
