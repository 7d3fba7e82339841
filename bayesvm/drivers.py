"""The drivers every backend runs on (BlackJAX/NumPyro style: kernels are pure steps).

* :func:`run_ascent` iterates a VB or EM ``step(state) -> (state, info)`` (``info`` the
  objective, or holding it), records the objective trace and the steps' infos, stops when its
  increase falls below ``tol`` and raises if it decreases.
* :func:`run_stochastic_ascent` iterates a stochastic VI ``step(state, t) -> (state,
  estimate)``, averages the noisy estimates of the objective between checks and stops when
  ``q``'s mean settles.
* :func:`run_mcmc` runs chains of a Gibbs ``step(state, rng) -> (state, info)``, records draws
  and the steps' diagnostics ``info`` after ``tune`` warm-up iterations, shows progress, and
  keeps the draws made so far when interrupted (Ctrl-C).

All keep what they have on Ctrl-C, and so does NUTS, except inside
:func:`bayesvm.interrupts.interrupts_end_fits`, where Ctrl-C ends the fit with
``KeyboardInterrupt``: a case study's task must stop, not go on with a fit cut short.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bayesvm.exceptions import NumericalBreakdownError
from bayesvm.interrupts import keeps_on_interrupt

__all__ = [
    "BoundDecreasedError",
    "run_ascent",
    "run_ascent_from",
    "run_stochastic_ascent",
    "run_mcmc",
    "AscentResult",
    "StochasticResult",
    "McmcResult",
    "Progress",
]

# A decrease of the objective larger than this (relative) is a bug, not round-off.
ROUNDOFF = 1e-9


class BoundDecreasedError(RuntimeError):
    """The objective of a monotone algorithm decreased: a bug, never expected."""


@dataclass
class AscentResult:
    """State and objective trace of a monotone iterative fit.

    ``problems`` says, in words, why the fit has not converged (empty when it has); ``infos``
    holds each iteration's info of this run (not of the ``history`` it continues).
    """

    state: object
    trace: np.ndarray
    converged: bool
    problems: list[str] = field(default_factory=list)
    interrupted: bool = False
    infos: list = field(default_factory=list)


def run_ascent(
    state,
    step: Callable,
    *,
    tol: float,
    max_iter: int,
    relative: bool = False,
    history: Sequence[float] = (),
    progressbar: bool = False,
    description: str = "ascent",
    objective_of: Callable = float,
) -> AscentResult:
    """Iterate ``step`` until the objective increases by less than ``tol``.

    Parameters
    ----------
    state : initial state
    step : callable
        ``step(state) -> (state, info)``: the objective, or diagnostics holding it
        (``objective_of``).
    tol : float
        Increase below which the fit has converged: absolute (Luts-Ormerod section 4: 1e-10),
        or relative to the objective's size when ``relative`` (Drugowitsch section 2.5:
        0.001 %).
    max_iter : int
        Most iterations (``history`` included); the result says ``converged=False`` if it is
        reached.
    history : sequence of float
        The objective trace of an ascent this one continues (:func:`run_ascent_from`); the
        result's trace includes it.
    progressbar : bool
        Show the iterations and the objective (:class:`Progress`: only after a second).
    description : str
        Label of the progress bar.
    objective_of : callable
        ``objective_of(info) -> float``: the objective in a step's info (default: the info is
        the objective).
    """
    trace: list[float] = [float(value) for value in history]
    infos: list = []
    converged = False
    with Progress(progressbar, description, None) as progress, Interruption() as stop:
        while len(trace) < max_iter:
            state, info = step(state)
            objective = float(objective_of(info))
            if not np.isfinite(objective):
                raise NumericalBreakdownError(f"objective is {objective} at iteration {len(trace)}")
            if trace and objective < trace[-1] - ROUNDOFF * (1.0 + abs(trace[-1])):
                raise BoundDecreasedError(
                    f"objective decreased from {trace[-1]!r} to {objective!r} at iteration "
                    f"{len(trace)}"
                )
            trace.append(objective)
            infos.append(info)
            progress.update(len(trace), f"objective {objective:.10g}")
            scale = abs(trace[-2]) if relative and len(trace) > 1 else 1.0
            if len(trace) > 1 and trace[-1] - trace[-2] < tol * scale:
                converged = True
                break
    interrupted = stop.happened
    if interrupted:
        warnings.warn(f"interrupted after {len(trace)} iterations", stacklevel=2)
    if not trace:
        raise RuntimeError("no iteration completed")
    problems = []
    if interrupted:
        problems.append(f"interrupted after {len(trace)} iterations, before converging")
    elif not converged:
        rising = "after one iteration, before any change of the objective could be measured"
        if len(trace) > 1:
            rising = f"with the objective still rising by {trace[-1] - trace[-2]:.3g} per iteration"
        problems.append(
            f"stopped at max_iter={max_iter} {rising} (tol={tol:g}"
            f"{', relative' if relative else ''}): raise max_iter"
        )
    return AscentResult(state, np.asarray(trace), converged, problems, interrupted, infos)


# Iterations every start of :func:`run_ascent_from` runs before the leader alone goes on.
HEAT_ITERATIONS = 3


def run_ascent_from(
    states, make_step: Callable, *, max_iter: int, heat: int | None = None, **options
) -> AscentResult:
    """:func:`run_ascent` from each initial state; the leader after a heat goes on alone.

    The VB bound of a model with a shrinkage hyperprior can have several local maxima: from
    a strong initial shrinkage the updates may settle where every weight is shrunk to zero
    although a larger bound lies elsewhere. The bound is the objective, so every start runs
    ``heat`` iterations and the one with the largest bound then continues to convergence:
    the second start guards against the bad maximum at the price of a few iterations, not of
    a second ascent.

    Parameters
    ----------
    states : sequence
        Initial states.
    make_step : callable
        ``make_step() -> step``: a fresh step for each start (a step may keep state of its
        own, e.g. SQUAREM's step bound).
    max_iter : int
        Most iterations of the ascent that is kept, heat included.
    heat : int, optional
        Iterations of every start before the leader is chosen (ignored for one start);
        default :data:`HEAT_ITERATIONS`.
    **options
        ``tol`` and ``relative`` of :func:`run_ascent`.
    """
    if len(states) == 1:
        return run_ascent(states[0], make_step(), max_iter=max_iter, **options)
    steps, heats = [], []
    first = min(HEAT_ITERATIONS if heat is None else heat, max_iter)
    for state in states:
        steps.append(make_step())
        heats.append(run_ascent(state, steps[-1], max_iter=first, **options))
        if heats[-1].interrupted:
            return heats[-1]
    leader = max(range(len(heats)), key=lambda index: heats[index].trace[-1])
    result = heats[leader]
    if result.converged or result.interrupted or first == max_iter:
        return result
    return run_ascent(
        result.state, steps[leader], max_iter=max_iter, history=result.trace, **options
    )


#: Sweeps between two updates of a sampler's progress bar.
PROGRESS_EVERY = 250


@dataclass
class StochasticResult:
    """State of a stochastic ascent and its objective's estimates, averaged over each period
    between checks (``trace``); ``steps`` counts the steps completed.
    """

    state: object
    trace: np.ndarray
    steps: int
    converged: bool
    interrupted: bool = False


def run_stochastic_ascent(
    state,
    step: Callable,
    *,
    location: Callable,
    tol: float,
    max_iter: int,
    check_every: int,
    progressbar: bool = False,
    description: str = "svi",
) -> StochasticResult:
    """Iterate a stochastic ascent ``step(state, t) -> (state, estimate)`` (``t`` = 1, 2, ...;
    ``estimate`` a noisy estimate of the objective, which need not rise) for at most
    ``max_iter`` steps.

    Every ``check_every`` steps (and at the last) the estimates since the last check are
    averaged into the trace, and ``location(state)`` (a vector: ``q``'s mean) is compared with
    its value at the check before: the ascent has converged when it moved by at most ``tol``
    relative to its norm (Hoffman et al. 2013 stop on such a change).
    """
    trace: list[float] = []
    period: list[float] = []
    previous = None
    steps, converged = 0, False
    with Progress(progressbar, description, max_iter) as progress, Interruption() as stop:
        for t in range(1, max_iter + 1):
            state, estimate = step(state, t)
            steps = t
            period.append(estimate)
            if t % check_every and t != max_iter:
                continue
            trace.append(float(np.mean(period)))
            period = []
            progress.update(t, f"bound ~ {trace[-1]:.6g}")
            current = location(state)
            if previous is not None:
                change = np.linalg.norm(current - previous)
                if change <= tol * max(np.linalg.norm(current), 1e-12):
                    converged = True
                    break
            previous = current
    if stop.happened:
        warnings.warn(f"interrupted after {steps} steps", stacklevel=2)
    return StochasticResult(state, np.asarray(trace), steps, converged, stop.happened)


@dataclass
class McmcResult:
    """Draws of each recorded variable (``samples``) and of each sweep's diagnostics
    (``stats``, from the steps' info), with shape ``(chain, draw, *shape)``.
    """

    samples: dict[str, np.ndarray]
    n_iter: int
    interrupted: bool
    stats: dict[str, np.ndarray] = field(default_factory=dict)


def run_mcmc(
    init: Callable,
    step: Callable,
    record: Callable,
    *,
    rng: np.random.Generator,
    chains: int,
    tune: int,
    draws: int,
    thin: int = 1,
    progressbar: bool = True,
    description: str = "sampling",
) -> McmcResult:
    """Run ``chains`` chains of ``tune + draws * thin`` iterations, keeping every ``thin``-th
    of the last ``draws * thin``.

    Parameters
    ----------
    init : callable
        ``init(rng) -> state``; each chain starts from its own random state.
    step : callable
        ``step(state, rng) -> (state, info)``, one full sweep of the sampler, returning a new
        state (the one given is left as it was); ``info``, a dict, holds the sweep's
        diagnostics (e.g. ``accept_rate``), kept apart from the recorded variables
        (``McmcResult.stats``: the fit's ``sample_stats``).
    record : callable
        ``record(state) -> dict[str, ndarray]``, the variables to keep.
    rng : numpy.random.Generator
        Spawned into one independent stream per chain.
    """
    if chains < 1 or draws < 1 or tune < 0 or thin < 1:
        raise ValueError(
            f"need chains >= 1, draws >= 1, tune >= 0, thin >= 1; got {chains}, {draws}, {tune}, "
            f"{thin}"
        )
    sweeps = tune + draws * thin
    samples: dict[str, np.ndarray] = {}
    stats: dict[str, np.ndarray] = {}
    kept_chains, kept_draws = 0, draws
    done = 0
    with Progress(progressbar, description, chains * sweeps) as progress, Interruption() as stop:
        for chain, chain_rng in enumerate(rng.spawn(chains)):
            state = init(chain_rng)
            kept_draws = 0
            for iteration in range(sweeps):
                try:
                    state, info = step(state, chain_rng)
                except (np.linalg.LinAlgError, FloatingPointError) as error:
                    raise NumericalBreakdownError(
                        f"chain {chain} broke down at sweep {iteration + 1}: {error}"
                    ) from error
                if iteration >= tune and (iteration - tune + 1) % thin == 0:
                    for kept, values in ((samples, record(state)), (stats, info)):
                        _keep(kept, values, (chain, kept_draws), (chains, draws))
                    kept_draws += 1
                done += 1
                if done % PROGRESS_EVERY == 0:
                    progress.update(done)
            kept_chains = chain + 1
    interrupted = stop.happened
    if interrupted:
        if kept_chains == 0 and kept_draws > 0:
            kept_chains = 1
        else:
            kept_draws = draws
        warnings.warn(
            f"interrupted: keeping {kept_chains} chain(s) of {kept_draws} draws", stacklevel=2
        )
    if kept_chains == 0:
        raise KeyboardInterrupt("interrupted before any draw was kept")
    samples, stats = (
        {name: value[:kept_chains, :kept_draws] for name, value in kept.items()}
        for kept in (samples, stats)
    )
    return McmcResult(samples=samples, n_iter=sweeps, interrupted=interrupted, stats=stats)


def _keep(kept: dict, values: dict, at: tuple[int, int], size: tuple[int, int]) -> None:
    """Store ``values`` at ``at`` (chain, draw) of the arrays ``kept``, made on first sight."""
    for name, value in values.items():
        if name not in kept:
            kept[name] = np.empty((*size, *np.shape(value)))
        kept[name][at] = value


class Interruption:
    """Where a driver's loop stops on Ctrl-C: ``with Interruption() as stop:`` ends the block
    on a ``KeyboardInterrupt`` and sets ``stop.happened`` where fits keep what they have
    (:func:`~bayesvm.interrupts.keeps_on_interrupt`), and lets it go on elsewhere (inside a
    case study's task). The one place the drivers catch Ctrl-C.
    """

    def __init__(self):
        self.happened = False

    def __enter__(self) -> Interruption:
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if kind is None or not issubclass(kind, KeyboardInterrupt) or not keeps_on_interrupt():
            return False
        self.happened = True
        return True


class Progress:
    """A rich progress bar over ``total`` steps (None: not known ahead) with a status text.

    It appears only once the work has run for ``delay`` seconds, so that a fit of a few
    milliseconds prints nothing, and never when not ``enabled``; it disappears when done. It
    is drawn on standard error, and only where that is a terminal or a notebook: a log file
    or a pipe gets no bar (nor the blank line a hidden bar leaves), and standard output keeps
    the results alone.
    """

    def __init__(self, enabled: bool, description: str, total: int | None, delay: float = 1.0):
        self.enabled, self.description, self.total, self.delay = enabled, description, total, delay
        self.bar = None
        self.started = time.perf_counter()

    def __enter__(self):
        self.started = time.perf_counter()
        return self

    def update(self, completed: int, status: str = "") -> None:
        """Show ``completed`` steps and ``status`` (once ``delay`` has passed)."""
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.started < self.delay:
                return
            # imported here: rich costs 50 ms, and most fits end before a bar is drawn
            from rich.console import Console
            from rich.progress import Progress as RichProgress
            from rich.progress import TextColumn

            console = Console(stderr=True)
            if not (console.is_terminal or console.is_jupyter):
                self.enabled = False
                return
            self.bar = RichProgress(
                *RichProgress.get_default_columns(), TextColumn("{task.fields[status]}"),
                transient=True, console=console,
            )  # fmt: skip
            self.bar.start()
            self.task = self.bar.add_task(self.description, total=self.total, status="")
        self.bar.update(self.task, completed=completed, status=status)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
        return False
