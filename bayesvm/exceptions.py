"""Warnings that tell a user when a result should not be trusted.

Each is its own class so that a user can filter or escalate exactly one of them, e.g.
``warnings.simplefilter("error", bayesvm.ConvergenceWarning)`` in a pipeline that must not
go on with an unconverged fit.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bayesvm._convergence_warning import ConvergenceWarning

__all__ = [
    "ConvergenceWarning",
    "IdentifiabilityWarning",
    "UnseenGroupWarning",
    "NumericalBreakdownError",
    "warn_user",
]

# The folders that install as bayesvm and its subpackages (pyproject's package-dir).
_PACKAGE_DIRS = tuple(
    str(Path(__file__).resolve().parent.parent / folder) + "/"
    for folder in ("bayesvm", "models", "vb", "samplers", "case_studies", "data")
)


def warn_user(message: str, category: type[Warning]) -> None:
    """Issue a warning attributed to the first caller outside bayesvm (the user's line)."""
    frame, level = sys._getframe(1), 2  # level 1 is this function
    while frame is not None and _inside_package(frame.f_code):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def _inside_package(code) -> bool:
    # Dataclasses generate __init__ from a string: such frames belong to the model class.
    generated = code.co_filename == "<string>" and code.co_name == "__init__"
    return generated or code.co_filename.startswith(_PACKAGE_DIRS)


def __getattr__(name: str):
    """:class:`ConvergenceWarning` on first use (PEP 562): its scikit-learn base class costs
    0.3 s to import, as long as the rest of ``import bayesvm``.
    """
    if name == "ConvergenceWarning":
        from bayesvm._convergence_warning import ConvergenceWarning  # imported here: sklearn

        return ConvergenceWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class IdentifiabilityWarning(UserWarning):
    """The design leaves some parameters determined by the prior alone.

    Issued when a model is built (constant or collinear columns, more coefficients than
    observations, separable classes under a learned penalty, a random intercept per single
    observation): the posterior of those parameters is the prior's, so samplers wander and
    mean-field VB can look confident about a direction the data do not inform.
    """


class UnseenGroupWarning(UserWarning):
    """Prediction rows whose group was not in the training data (random intercept 0)."""


class NumericalBreakdownError(FloatingPointError):
    """A fit reached values that floating point cannot represent: a precision matrix
    singular to working precision, or a non-finite objective.

    On data that identify the model this does not happen; where it does, the chain or the
    ascent has run off to where the prior alone holds it (a learned penalty on separable
    classes, say), and :func:`bayesvm.fit` says which problem of the design allows that.
    """
