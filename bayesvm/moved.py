"""Aliases of modules that moved, kept for one release (the CHANGELOG lists them).

An alias module holds ``__getattr__ = moved_to(__name__, "new.module")``: any name taken from
it comes from the new module, with a ``FutureWarning`` that names both (PEP 562) and the
release that drops the alias, the one after the move's.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable

__all__ = ["moved_to"]


def moved_to(old: str, new: str, moved_in: str = "0.2.0") -> Callable[[str], object]:
    """The module ``__getattr__`` of the alias ``old`` of the module ``new``, which moved in
    release ``moved_in``.
    """
    major, minor, *_ = moved_in.split(".")
    goes_in = f"{major}.{int(minor) + 1}.0"

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        warnings.warn(
            f"{old} moved to {new} in bayesvm {moved_in}; the old path goes in {goes_in}",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new), name)

    return __getattr__
