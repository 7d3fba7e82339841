"""Which backend fits which model: ``fit()`` dispatch and ``methods()``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bayesvm.linalg import SMALL_SYSTEM, blas_threads_for

__all__ = ["register", "methods", "fit"]


@dataclass(frozen=True)
class Backend:
    """A fitting method for the models it ``supports``."""

    method: str
    supports: Callable[[object], bool]
    run: Callable[..., object]


_BACKENDS: list[Backend] = []


def register(method: str, supports: Callable[[object], bool]):
    """Decorator registering ``run(model, **options) -> Fit`` as ``method`` for ``supports``."""

    def decorator(run):
        _BACKENDS.append(Backend(method, supports, run))
        return run

    return decorator


def methods(model) -> list[str]:
    """The methods that can fit ``model``, e.g. ``["vb", "gibbs", "nuts"]``."""
    return [backend.method for backend in _BACKENDS if backend.supports(model)]


def fit(model, method: str = "vb", **options):
    """Fit ``model`` by ``method`` and return a :class:`~bayesvm.Fit`.

    Parameters
    ----------
    model : a model from :mod:`bayesvm.models`
    method : str
        One of :func:`methods` ``(model)``: "vb", "gibbs", "em", "ecme", "nuts".
    **options
        Passed to the backend (``seed``, ``chains``, ``draws``, ``tune``, ``tol``,
        ``max_iter``, ``progressbar``, ...); see each backend's docstring.
    """
    for backend in _BACKENDS:
        if backend.method == method and backend.supports(model):
            start = time.perf_counter()
            with blas_threads_for(getattr(model, "factored_size", SMALL_SYSTEM)):
                result = backend.run(model, **options)
            result.runtime_s = time.perf_counter() - start
            result.idata.attrs["runtime_s"] = result.runtime_s
            return result
    known = sorted({backend.method for backend in _BACKENDS})
    if method not in known:
        raise ValueError(f"unknown method {method!r}; known methods: {known}")
    raise ValueError(
        f"method {method!r} cannot fit this {_describe(model)}; methods that can: {methods(model)}"
    )


def _describe(model) -> str:
    prior = getattr(model, "prior", None)
    penalty = type(getattr(model, "penalty", None)).__name__
    return f"{type(model).__name__}" + (f" (prior={prior!r}, penalty {penalty})" if prior else "")
