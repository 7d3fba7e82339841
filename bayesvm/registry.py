"""Which backend fits which model: ``fit()`` dispatch and ``methods()``."""

from __future__ import annotations

import importlib
import inspect
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import bayesvm.exceptions as exceptions
from bayesvm.catalogue import METHODS, Option
from bayesvm.exceptions import warn_user
from bayesvm.linalg import available_memory, blas_threads_for
from bayesvm.results import add_log_likelihood, add_posterior_predictive

__all__ = [
    "register",
    "block_driver",
    "methods",
    "fit",
    "check_fit",
    "check_options",
    "check_model",
    "backends",
    "backend_for",
    "DEFAULT_SEED",
]


@dataclass(frozen=True)
class Backend:
    """A fitting method for the models it ``supports``; ``work(model, options)``, where
    given, is the flops of one of its iterations (default the model's
    ``flops_per_iteration``), which sets the BLAS threads.
    """

    method: str
    supports: Callable[[object], bool]
    run: Callable[..., object]
    work: Callable[[object, dict], float] | None = None


_BACKENDS: list[Backend] = []


def register(
    method: str,
    supports: Callable[[object], bool],
    work: Callable[[object, dict], float] | None = None,
):
    """Decorator registering ``run(model, **options) -> Fit`` as ``method`` for ``supports``
    (``work``: :class:`Backend`'s).
    """

    def decorator(run):
        _BACKENDS.append(Backend(method, supports, run, work))
        return run

    return decorator


def block_driver(driver: str, learned: bool | None = None) -> Callable[[object], bool]:
    """``supports`` of a driver over blocks: the models whose blocks support ``driver``
    (:func:`~bayesvm.blocks.block_drivers`, from the blocks' protocols) and, when ``learned``
    is given, that have (or have no) learned block (EM's ECME variant).
    """

    def supports(model) -> bool:
        if driver not in getattr(model, "drivers", ()):
            return False
        return learned is None or model.learned == learned

    return supports


#: The packages whose modules register the backends (:func:`register`), imported by name on the
#: first look-up, as a plugin registry reads its entry points: they sit a floor above the
#: registry (``docs/guide/layout.md``), and ``import bayesvm`` loads none of them.
BACKEND_PACKAGES = ("bayesvm.samplers", "bayesvm.vb")


def backends() -> list[Backend]:
    """Every registered backend, once :data:`BACKEND_PACKAGES` are imported (what a process's
    first fit imports).
    """
    for package in BACKEND_PACKAGES:
        importlib.import_module(package)
    return _BACKENDS


def methods(model) -> list[str]:
    """The methods that can fit ``model``, e.g. ``["vb", "gibbs", "nuts"]``; ``TypeError`` if
    ``model`` is not a model (:func:`check_model`).
    """
    check_model(model)
    return [backend.method for backend in backends() if _supported(backend, model)]


def check_model(model) -> None:
    """Raise ``TypeError`` unless ``model`` is a model of :mod:`bayesvm.models` (or one
    composed from blocks, a :class:`~bayesvm.models.block_model.BlockModel`) or one that a
    backend added with :func:`register` supports, saying how to build one from data given in
    its place.
    """
    from bayesvm.models.block_model import BlockModel  # imported here: the models load SciPy

    if isinstance(model, BlockModel) or any(_supported(b, model) for b in backends()):
        return
    kind = type(model)
    given = (
        repr(model)
        if model is None or isinstance(model, str | numbers.Number)
        else f"a {kind.__module__}.{kind.__qualname__}"
    )
    hint = ""
    if hasattr(model, "shape") or hasattr(model, "columns"):
        hint = (
            ": build a model from the data first, e.g. bayesvm.models.MixedSVM.penalized(X, y) "
            "or bayesvm.from_formula(...), or fit bayesvm.BayesianSVC() to (X, y)"
        )
    raise TypeError(
        f"expected a model of bayesvm.models (e.g. MixedSVM.penalized(X, y)); got {given}{hint}"
    )


#: ``threads`` of :func:`fit`.
THREADS = Option("count", "BLAS threads", low=1)

#: The seed of a fit given none: the same call gives the same numbers.
DEFAULT_SEED = 0


def fit(model, method: str = "vb", *, seed=DEFAULT_SEED, threads: int | None = None, **options):
    """Fit ``model`` by ``method`` and return a :class:`~bayesvm.Fit`.

    Options are checked before any work: a misspelt or unsupported option, or a value out
    of range (``draws=0``, ``chains=0``, ``tune=-1``, ...), raises at once.

    Parameters
    ----------
    model : a model from :mod:`bayesvm.models`
    method : str
        One of :func:`methods` ``(model)``: "vb", "gibbs", "em", "ecme", "nuts".
    seed : int, numpy.random.SeedSequence, numpy.random.Generator or None
        Every random number of the fit (starts, draws, chains' spawned streams, draws from
        VB's ``q``, the replicated data) comes from it. The default, :data:`DEFAULT_SEED`
        (0), makes the same call give the same numbers, on any machine and in any process;
        give other seeds for independent runs, or None for fresh entropy from the system.
    threads : int, optional
        BLAS threads for the fit, at most the cores this process may use. By default one,
        or every usable core where an iteration's work is large enough for more to pay off
        (:func:`bayesvm.linalg.automatic_threads`): chosen from the problem and the cores,
        never from the machine's load. Sums split between threads round differently, so a
        fit given another number of threads can differ in the last digits (a sampler's
        chain, in its later draws).
    **options
        Passed to the backend (``chains``, ``draws``, ``tune``, ``tol``,
        ``max_iter``, ``progressbar``, ...); see each backend's docstring.

    Returns
    -------
    Fit
        Its ``idata`` holds, besides the posterior, ``posterior_predictive["y"]``: ``y``
        replicated at the training rows from each posterior draw (at most
        :data:`~bayesvm.results.PREDICTIVE_MAX_DRAWS` of them; seeded by ``seed``), drawn after
        ``runtime_s`` is taken (:func:`~bayesvm.results.add_posterior_predictive`); and,
        except for a point estimate, ``log_likelihood["y"]``, the pointwise log likelihood
        that ``arviz.loo``, ``arviz.waic`` and ``arviz.compare`` read
        (:func:`~bayesvm.results.add_log_likelihood`).

    Warns
    -----
    ConvergenceWarning
        When the fit should not be trusted (``fit.problems`` says why; ``fit.converged`` is
        then False).
    """
    start = time.perf_counter()  # building the model's blocks (in backend_for) counts
    backend = check_fit(model, method, seed=seed, threads=threads, **options)
    options["seed"] = seed
    work = model.flops_per_iteration if backend.work is None else backend.work(model, options)
    with blas_threads_for(work, threads):
        try:
            result = backend.run(model, **options)
        except (np.linalg.LinAlgError, FloatingPointError) as error:
            raise _breakdown(model, method, error) from error
    result.runtime_s = time.perf_counter() - start
    result.idata.attrs["runtime_s"] = result.runtime_s
    if isinstance(seed, numbers.Integral):  # what makes the same call give the same numbers
        result.idata.attrs["seed"] = int(seed)
    add_posterior_predictive(result, seed)
    add_log_likelihood(result)
    if result.problems:
        warn_user(
            f"the {method} fit of {type(model).__name__} should not be trusted: "
            + "; ".join(result.problems),
            exceptions.ConvergenceWarning,  # scikit-learn's subclass: imported on first use
        )
    return result


def check_fit(model, method: str = "vb", *, seed=DEFAULT_SEED, threads=None, **options):
    """Every check :func:`fit` makes before any work, with its arguments: the method and its
    options (names, values in range, ``draws`` that fit in memory). Raises ``ValueError`` (or
    ``TypeError``) naming what is wrong; returns the backend that would fit ``model``.
    """
    backend = backend_for(model, method)
    options["seed"] = seed
    check_options(backend, options)
    if threads is not None:
        THREADS.check("threads", threads)
    _check_memory(model, backend.run, options)
    return backend


def _breakdown(model, method: str, error: Exception) -> exceptions.NumericalBreakdownError:
    """The error of a fit that broke down numerically, with what the data leave undetermined
    (:meth:`identifiability_problems`), which is what lets a fit run off that far.
    """
    message = f"the {method} fit of {type(model).__name__} broke down numerically: {error}"
    problems = model.identifiability_problems()
    if problems:
        message += ". The data do not identify the model: " + "; ".join(problems)
    return exceptions.NumericalBreakdownError(message)


def _supported(backend: Backend, model) -> bool:
    """Whether ``backend`` supports ``model``, False where its test cannot read the object
    (``supports`` is written for models, which have the attributes it looks at).
    """
    try:
        return bool(backend.supports(model))
    except (AttributeError, TypeError):
        return False


def backend_for(model, method: str) -> Backend:
    """The backend that fits ``model`` by ``method``; ``ValueError`` naming the methods that
    can where it is not one of them (a driver asks for another method's backend here, as
    NUTS's starts ask for VB's, rather than importing it).
    """
    check_model(model)
    for backend in backends():
        if backend.method == method and _supported(backend, model):
            return backend
    known = sorted({backend.method for backend in _BACKENDS})
    if method not in known:
        raise ValueError(f"unknown method {method!r}; known methods: {known}")
    raise ValueError(
        f"method {method!r} cannot fit this {_describe(model)}; methods that can: {methods(model)}"
    )


def check_options(backend: Backend, options: dict) -> None:
    """Raise ``ValueError`` unless ``backend`` takes every option and each value is one its
    method's options take (:data:`bayesvm.catalogue.METHODS`; a backend registered under
    another name has its names checked only).
    """
    run = backend.run
    parameters = inspect.signature(run).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    accepted = [
        name
        for name, p in list(parameters.items())[1:]
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    unknown = [name for name in options if name not in accepted]
    if unknown and not takes_any:
        raise ValueError(
            f"{run.__name__} takes no option {', '.join(map(repr, unknown))}; it takes: "
            f"{', '.join(accepted)}"
        )
    kind = METHODS.get(backend.method)
    declared = {} if kind is None else kind.options
    for name, value in options.items():
        if name in declared:
            declared[name].check(name, value)


def _check_memory(model, run: Callable, options: dict) -> None:
    """Refuse ``draws`` (times ``chains``, the option or ``run``'s default) whose posterior
    would not fit in the memory available, before any work: the draws are kept as float64,
    every posterior variable at every kept draw.
    """
    if "draws" not in options:
        return
    chains = options.get("chains")
    if chains is None:
        parameter = inspect.signature(run).parameters.get("chains")
        chains = 1 if parameter is None or parameter.default is None else parameter.default
    values = sum(
        int(np.prod([len(model.coords[dim]) for dim in model.dims.get(name, [])]))
        for name in model.var_names
    )
    needed = 8.0 * options["draws"] * chains * values
    available = available_memory()
    if available is not None and needed > available:
        raise ValueError(
            f"draws={options['draws']} x {chains} chain(s) x {values} posterior values per draw "
            f"need {needed / 2**30:.3g} GiB as float64; {available / 2**30:.3g} GiB of memory "
            "is available: draw fewer (thin= keeps every thin-th sweep of the samplers)"
        )


def _describe(model) -> str:
    prior = getattr(model, "prior", None)
    penalty = type(getattr(model, "penalty", None)).__name__
    return f"{type(model).__name__}" + (f" (prior={prior!r}, penalty {penalty})" if prior else "")
