"""Shared machinery of the case studies: run independent tasks, stream rows to CSV.

A case study is a list of :class:`Task` objects (one per data set, split, ...), each a
picklable function and its keyword arguments returning result rows. :func:`run_tasks` runs
them in this process, in ``workers`` local processes or on a Dask distributed cluster, shows
a progress bar over tasks, appends each finished task's rows to a CSV (an interrupted run
keeps what finished, and ``resume=True`` picks up from there) and returns all rows as a data
frame in task order. Every task carries its own seed (:func:`task_seed`), so results depend
neither on where the tasks run nor on the order in which they finish.

The settings the rows depend on (methods, protocol sizes, seed, ...) are written beside the
results (:func:`write_settings`); ``resume`` refuses results written with other settings
(:func:`check_resume_settings`), so that one CSV never mixes rows of two experiments.

Every case study's ``run(out_dir, ...)`` holds ``out_dir`` while it runs
(:mod:`bayesvm.case_studies.study`): no other run may use it. Each file is written whole or not
at all (:mod:`bayesvm.files`).
"""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
import os
import signal
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import forkserver, resource_tracker
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from threadpoolctl import threadpool_limits

import bayesvm
from bayesvm.blocks.holmes_held import compiled_sweep
from bayesvm.blocks.probit_newton import compiled_probit
from bayesvm.files import SETTINGS_SUFFIX, write_csv, write_text
from bayesvm.interrupts import (
    interrupts_blocked,
    interrupts_end_fits,
    interrupts_held,
    unblock_interrupts,
)
from bayesvm.registry import backends

__all__ = [
    "Task",
    "task_seed",
    "check_methods",
    "choose_protocol",
    "split_tasks",
    "run_tasks",
    "ResumeMismatchError",
    "RunInterrupted",
    "settings_path",
    "study_settings",
    "write_settings",
    "check_resume_settings",
    "trust_notes",
    "TRUST_WARNINGS",
]

#: The warnings that say a fit should not be trusted (or how its predictions were made).
TRUST_WARNINGS = (
    bayesvm.ConvergenceWarning,
    bayesvm.IdentifiabilityWarning,
    bayesvm.UnseenGroupWarning,
)

_VERSION_KEY = "bayesvm_version"  # in a settings file
_NOT_RECORDED = object()  # a setting that one of two runs compared does not have


@dataclass(frozen=True)
class Task:
    """One independent unit of a case study.

    Attributes
    ----------
    key : dict
        Identifies the task (e.g. ``{"n": 200, "d": 10, "replicate": 3}``); its items are
        prepended to every row the task returns, and ``resume`` finds the finished tasks in
        the CSV by these columns.
    function : callable
        Module-level (hence picklable) ``function(**kwargs) -> list[dict]``, one dict per row.
    kwargs : dict
        Keyword arguments of ``function``, including the task's seed.
    cost : float
        Its expected time relative to the others of its run: :func:`run_tasks` starts the
        costliest first, so that the run does not end with one long task on one worker while
        the others idle. It changes neither the rows nor their order.
    """

    key: dict
    function: Callable[..., list[dict]]
    kwargs: dict = field(default_factory=dict)
    cost: float = 1.0

    def run(self) -> list[dict]:
        """Call the function and prepend the key to each of its rows. Ctrl-C ends the task
        (:func:`~bayesvm.interrupts.interrupts_end_fits`): a fit cut short is no result.
        """
        with interrupts_end_fits():
            rows = self.function(**self.kwargs)
        return [{**self.key, **row} for row in rows]


def task_seed(seed: int, *key: int) -> np.random.SeedSequence:
    """Seed one task from the study's ``seed`` and the task's integer ``key``."""
    return np.random.SeedSequence([seed, *key])


def check_methods(methods, allowed: Sequence[str]) -> tuple[str, ...]:
    """``methods`` as a tuple, after checking that it is a non-empty subset of ``allowed``."""
    methods = tuple(methods)
    if not methods or not set(methods) <= set(allowed):
        raise ValueError(f"methods must be a non-empty subset of {tuple(allowed)}; got {methods}")
    return methods


def choose_protocol(paper, quick_protocol, *, quick: bool, n_datasets: int | None, field: str):
    """The protocol of a run: the paper's, or the quick one, with ``n_datasets`` in ``field``
    (the number of splits or data sets) when given.
    """
    protocol = quick_protocol if quick else paper
    if n_datasets is None:
        return protocol
    if n_datasets < 1:
        raise ValueError(f"n_datasets must be at least 1; got {n_datasets}")
    return replace(protocol, **{field: n_datasets})


def split_tasks(
    function: Callable, n_splits: int, *, datasets: Sequence[str] | None = None, **kwargs
) -> list[Task]:
    """One task per random split, ``function(split=..., **kwargs)``, keyed by its number; with
    ``datasets``, one per data set and split, ``function(dataset=..., split=..., **kwargs)``,
    keyed by both (data set by data set).
    """
    if datasets is None:
        return [
            Task(key={"split": split}, function=function, kwargs={"split": split, **kwargs})
            for split in range(n_splits)
        ]
    return [
        Task(key=key, function=function, kwargs={**key, **kwargs})
        for key in (
            {"dataset": name, "split": split} for name in datasets for split in range(n_splits)
        )
    ]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_tasks`; the finished tasks' rows are in its CSV.

    Attributes
    ----------
    csv_path : pathlib.Path or None
        The CSV holding the rows of every finished task (None: the run wrote none).
    finished, total : int
        Tasks finished (those kept from a resumed run included), and tasks in all.
    """

    def __reduce__(self):
        return type(self), (self.csv_path, self.finished, self.total)

    def __init__(self, csv_path, finished: int, total: int):
        self.csv_path = None if csv_path is None else Path(csv_path)
        self.finished, self.total = finished, total
        kept = f"; their rows are in {self.csv_path}" if self.csv_path is not None else ""
        super().__init__(f"interrupted with {finished} of {total} tasks finished{kept}")


class ResumeMismatchError(ValueError):
    """``resume`` refused: the results to resume were written with other settings.

    Attributes
    ----------
    results_path : pathlib.Path
        The results (CSV file or folder) that were to be resumed.
    differences : dict of str to tuple
        Each differing setting: ``(value of the stored run, value asked for now)``.
    """

    def __init__(self, results_path, differences: Mapping[str, tuple]):
        self.results_path = Path(results_path)
        self.differences = dict(differences)
        listed = "; ".join(
            f"{name}: {_shown(stored)} before, {_shown(asked)} now"
            for name, (stored, asked) in self.differences.items()
        )
        super().__init__(
            f"cannot resume {self.results_path}: it was written with other settings ({listed}). "
            "Resume with the options of the run that wrote it, or start afresh and write over "
            "its results with --replace (replace=True in Python)."
        )


def settings_path(results_path) -> Path:
    """Where the settings of ``results_path`` are kept: ``toenail.csv`` ->
    ``toenail.settings.json``, a folder ``examples`` -> ``examples.settings.json`` beside it.
    """
    path = Path(results_path)
    return path.with_name(f"{path.stem}{SETTINGS_SUFFIX}")


def study_settings(study: str, *, methods, quick: bool, seed: int, protocol) -> dict:
    """What a case study's results depend on: its name, ``methods``, ``quick``, ``seed`` and
    every field of its ``protocol`` dataclass (sizes of the experiment).
    """
    return {"study": study, "methods": methods, "quick": quick, "seed": seed, **asdict(protocol)}


def write_settings(results_path, settings: Mapping) -> None:
    """Write ``settings`` and the bayesvm version as JSON beside ``results_path``.

    Parameters
    ----------
    results_path : path-like
        The CSV file (or folder) of results the settings describe.
    settings : mapping
        What the results depend on: study, methods, protocol sizes, seed, ...; values that
        JSON can hold (tuples become lists; NumPy numbers and arrays are converted).
    """
    write_text(settings_path(results_path), json.dumps(_stored_form(settings), indent=2) + "\n")


def check_resume_settings(results_path, settings: Mapping) -> None:
    """Check that ``results_path`` was written with ``settings`` before resuming it.

    Parameters
    ----------
    results_path : path-like
        The results about to be resumed.
    settings : mapping
        The settings of the run resuming them, as given to :func:`write_settings`.

    Raises
    ------
    ResumeMismatchError
        When any setting differs from the stored ones.

    Warns
    -----
    UserWarning
        When no settings are stored (results of an older bayesvm) and so none could be
        checked, or when the stored results come from another bayesvm version.
    """
    path = settings_path(results_path)
    if not path.exists():
        warnings.warn(
            f"resuming {results_path} without checking its settings: {path.name} is missing "
            "(results of an older bayesvm); resume only with the options of the run that "
            "wrote them",
            stacklevel=2,
        )
        return
    stored = json.loads(path.read_text(encoding="utf-8"))
    asked = _stored_form(settings)
    stored_version, asked_version = stored.pop(_VERSION_KEY, None), asked.pop(_VERSION_KEY)
    differences = {
        name: (stored.get(name, _NOT_RECORDED), asked.get(name, _NOT_RECORDED))
        for name in dict.fromkeys([*asked, *stored])
        if stored.get(name, _NOT_RECORDED) != asked.get(name, _NOT_RECORDED)
    }
    if differences:
        raise ResumeMismatchError(results_path, differences)
    if stored_version != asked_version:
        warnings.warn(
            f"resuming {results_path}, written by bayesvm {stored_version}, with bayesvm "
            f"{asked_version}: its rows come from two versions",
            stacklevel=2,
        )


def _stored_form(settings: Mapping) -> dict:
    """``settings`` with the bayesvm version, as JSON gives them back."""
    text = json.dumps({**settings, _VERSION_KEY: bayesvm.__version__}, default=_builtin)
    return json.loads(text)


def _builtin(value):
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"setting of type {type(value).__name__} cannot be stored as JSON")


def _shown(value) -> str:
    return "(not recorded)" if value is _NOT_RECORDED else repr(value)


@contextmanager
def trust_notes() -> Iterator[list[str]]:
    """Collect the :data:`TRUST_WARNINGS` of a task's fits into a list instead of printing them.

    A case study fits hundreds of data sets, in several processes: each fit's warnings belong
    in its result row (a ``warnings`` column beside ``converged``) and in the report's count,
    not in a stream of the same lines across the progress bar. Other warnings pass through.
    """
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield notes
    for warning in caught:
        if issubclass(warning.category, TRUST_WARNINGS):
            notes.append(f"{warning.category.__name__}: {warning.message}")
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )


def run_tasks(
    tasks: Sequence[Task],
    *,
    csv_path=None,
    settings: Mapping | None = None,
    workers: int = 1,
    scheduler=None,
    resume: bool = False,
    description: str = "tasks",
    progressbar: bool = True,
) -> pd.DataFrame:
    """Run ``tasks`` and return their rows as one data frame, in task order.

    Parameters
    ----------
    tasks : sequence of Task
        Their keys must be distinct and share the same columns.
    csv_path : path-like, optional
        Rows are appended here as each task finishes, so an interrupted run (Ctrl-C, a
        crash) leaves the rows of every finished task; at the end the file is rewritten in
        task order, so it depends neither on ``workers`` nor on ``scheduler``. Each rewrite
        replaces the file at once (:func:`bayesvm.files.atomic_path`).
    settings : mapping, optional
        What the rows depend on (see :func:`write_settings`), written beside ``csv_path``
        before any task runs; ``resume`` then refuses a CSV written with other settings.
        Without it any settings file of an older run there is removed.
    workers : int
        1 runs the tasks in this process; more runs them in that many local processes,
        forked from a ``forkserver`` that has imported the tasks' modules, each with
        single-threaded BLAS so that workers do not oversubscribe the cores. As with any
        ``forkserver`` or ``spawn`` pool, a script calling this must guard its entry point
        with ``if __name__ == "__main__":``.
    scheduler : str, dask.distributed.Client or cluster, optional
        Run the tasks on a Dask distributed cluster instead: a scheduler address such as
        ``"tcp://10.0.0.5:8786"``, a cluster object (e.g. ``LocalCluster``) or a connected
        ``Client``. Tasks go through the client's ``concurrent.futures`` executor; every
        worker must have ``bayesvm`` installed. Dask's nanny starts workers with
        single-threaded BLAS (``OMP_NUM_THREADS=1`` ...), so give each worker one thread per
        core. Needs the ``distributed`` extra (``pip install "bayesvm[distributed]"``);
        ``workers`` must then be 1.
    resume : bool
        Keep the rows of the tasks already in ``csv_path`` (matched by their key columns)
        and run only the others; rows of keys not among ``tasks`` are dropped. The kept
        rows are used as they are, so the settings must be those of the interrupted run:
        :class:`ResumeMismatchError` otherwise (see :func:`check_resume_settings`). A last
        line cut short by a crash is dropped together with the task of the line before it,
        which is then run again. Without ``resume`` the CSV starts afresh.
    description : str
        Label of the progress bar.
    progressbar : bool
        Show a progress bar over tasks.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1; got {workers}")
    if scheduler is not None and workers != 1:
        raise ValueError("give either workers (local processes) or scheduler (a Dask cluster)")
    if resume and csv_path is None:
        raise ValueError("resume needs csv_path, the CSV of the interrupted run")
    rows_of_task: list[list[dict] | None] = [None] * len(tasks)
    if resume:
        finished = _finished_rows(tasks, csv_path)
        if finished and settings is not None:
            check_resume_settings(csv_path, settings)
        for index, rows in finished.items():
            rows_of_task[index] = rows
    if csv_path is not None:
        if settings is not None:
            write_settings(csv_path, settings)
        else:
            settings_path(csv_path).unlink(missing_ok=True)
    sink = _CsvSink(csv_path, [row for rows in rows_of_task if rows for row in rows])
    pending = [index for index, rows in enumerate(rows_of_task) if rows is None]
    pending.sort(key=lambda index: -tasks[index].cost)  # stable: in task order within a cost
    try:
        with _task_progress(progressbar) as progress:
            bar = progress.add_task(
                description, total=len(tasks), completed=len(tasks) - len(pending)
            )

            def record(index: int, rows: list[dict]) -> None:
                rows_of_task[index] = rows
                sink.write(rows)
                progress.advance(bar)

            if scheduler is not None:
                _run_on_cluster(scheduler, tasks, pending, record)
            elif workers == 1:
                _import_fit_modules()
                for index in pending:
                    record(index, tasks[index].run())
            else:
                _run_in_processes(tasks, pending, workers, record)
    except KeyboardInterrupt:
        finished = sum(rows is not None for rows in rows_of_task)
        raise RunInterrupted(csv_path, finished, len(tasks)) from None
    frame = pd.DataFrame([row for rows in rows_of_task for row in rows])
    if csv_path is not None:
        write_csv(frame, csv_path, index=False)
    return frame


def _finished_rows(tasks: Sequence[Task], csv_path) -> dict[int, list[dict]]:
    """Rows of the finished tasks in ``csv_path`` by task index; {} if there is no file."""
    path = Path(csv_path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    complete = text.endswith("\n")
    if not complete:  # the last write was cut short: drop its partial line
        text = text[: text.rfind("\n") + 1]
    if not text.strip():
        return {}
    # Keys are matched as CSV text (csv writes str(value)); the other columns are parsed.
    key_columns = list(tasks[0].key) if tasks else []
    as_text = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    values = pd.read_csv(io.StringIO(text))
    missing = set(key_columns) - set(values.columns)
    if missing:
        raise ValueError(f"cannot resume from {path}: it lacks the key columns {sorted(missing)}")
    row_keys = list(as_text[key_columns].itertuples(index=False, name=None))
    records = values.to_dict("records")
    if not complete and row_keys:
        # A task's rows are written together, so the last task's rows end the file.
        start_of_last = row_keys.index(row_keys[-1])
        row_keys, records = row_keys[:start_of_last], records[:start_of_last]
    index_of = {tuple(str(value) for value in task.key.values()): i for i, task in enumerate(tasks)}
    finished: dict[int, list[dict]] = {}
    for key, row in zip(row_keys, records, strict=True):
        if key in index_of:
            task = tasks[index_of[key]]
            finished.setdefault(index_of[key], []).append({**row, **task.key})
    return finished


def _run_in_processes(
    tasks, pending: list[int], workers: int, record: Callable[[int, list[dict]], None]
) -> None:
    context = multiprocessing.get_context("forkserver")
    # The fork server imports the tasks' modules once; each worker forks from it ready to go.
    context.set_forkserver_preload(sorted({task.function.__module__ for task in tasks}))
    _start_forkserver_deaf_to_ctrl_c()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_prepare_worker)
    try:
        _run_on_executor(pool, tasks, pending, record)
    except KeyboardInterrupt:
        _end_workers(pool)
        raise
    finally:
        # On an error or Ctrl-C drop the tasks not yet started instead of waiting for them.
        pool.shutdown(wait=True, cancel_futures=True)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's workers at once (SIGTERM) and wait for them, after Ctrl-C.

    A worker that Ctrl-C met still starting (it ignores SIGINT until it is ready,
    :func:`_start_forkserver_deaf_to_ctrl_c`) would otherwise outlive the main process and
    fail, with a traceback, to read what the main process sent it. ``_processes`` holds the
    executor's workers by pid (Python 3.14 adds ``terminate_workers`` for this).
    """
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join()


def _start_forkserver_deaf_to_ctrl_c() -> None:
    """Start the fork server (if it is not running) with SIGINT blocked
    (:func:`~bayesvm.interrupts.interrupts_blocked`): it ignores Ctrl-C once it has imported
    the tasks' modules, and the workers it forks keep SIGINT blocked until their own handler
    ends them quietly (:func:`_prepare_worker`). Otherwise Ctrl-C while the server imports
    prints its traceback. The resource tracker, which unblocks SIGINT after starting, is
    started first.
    """
    resource_tracker.ensure_running()
    with interrupts_blocked():
        forkserver.ensure_running()


def _run_on_cluster(
    scheduler, tasks, pending: list[int], record: Callable[[int, list[dict]], None]
) -> None:
    try:
        from distributed import Client
    except ImportError as error:
        raise ImportError(
            "scheduler= runs tasks on a Dask cluster and needs dask.distributed: "
            'pip install "bayesvm[distributed]"'
        ) from error
    # set_as_default=False: the tasks go to this client's executor alone, and a client that
    # fails to connect leaves no Dask-wide scheduler behind for the rest of the process.
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler, set_as_default=False)
    # pure=False: every task is computed, whatever Dask's hashing of its arguments says.
    executor = client.get_executor(pure=False)
    try:
        _run_on_executor(executor, tasks, pending, record)
    finally:
        executor.shutdown(wait=False)  # cancels what has not finished (error or Ctrl-C)
        if client is not scheduler:
            client.close()


def _run_on_executor(
    executor: Executor, tasks, pending: list[int], record: Callable[[int, list[dict]], None]
) -> None:
    """Submit the ``pending`` tasks to a ``concurrent.futures`` executor and record each as
    it finishes. Ctrl-C is held while they are submitted (:func:`~bayesvm.interrupts.
    interrupts_held`): a process pool starts its workers then, each one whole or not at all.
    """
    with interrupts_held():
        futures = {executor.submit(tasks[index].run): index for index in pending}
    for future in as_completed(futures):
        record(futures[future], future.result())


def _prepare_worker() -> None:
    """A worker process's start: Ctrl-C, blocked until now, ends it at once and quietly (the
    main process, which Ctrl-C reaches as well, reports what was kept: a traceback from each
    worker, cut in an import or a compilation, would bury that line), :func:`_exit_with_parent`,
    single-threaded BLAS, and :func:`_import_fit_modules`.
    """
    signal.signal(signal.SIGINT, lambda *_: os._exit(128 + signal.SIGINT))
    unblock_interrupts()
    _exit_with_parent()
    threadpool_limits(limits=1)
    _import_fit_modules()


def _exit_with_parent() -> None:
    """End this worker as soon as the run's main process ends. A run stopped by a signal to
    its main process alone (``kill PID``, a batch system's time limit, the out-of-memory
    killer) left its workers computing tasks whose rows nobody would write, until they had
    run out of tasks (Ctrl-C reaches the whole process group, workers included). The
    ``forkserver`` that forked the workers outlives the main process while they run, so the
    worker watches the main process itself: ``multiprocessing``'s sentinel of the process that
    started it, a pipe whose end the main process holds.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _import_fit_modules() -> None:
    """Import what the first fit in a process would (the inference methods, and ArviZ with
    xarray and matplotlib for its result, about a second) and compile Holmes-Held's loop and
    the probit's Newton loop (about 6 s), so that no task's timing holds that one-time cost: in
    a quick run it made VB's mean time per fit 0.43 s against MCMC's 0.13 s, the first of three
    VB fits taking 1.1 s.
    """
    backends()
    compiled_sweep()
    compiled_probit()
    from bayesvm._arviz import arviz  # noqa: F401


def _task_progress(enabled: bool) -> Progress:
    """The bar over a run's tasks, on standard error where it is a terminal or a notebook
    (standard output keeps the results; a log gets no bar).
    """
    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not (enabled and (console.is_terminal or console.is_jupyter)),
    )


class _CsvSink:
    """Appends rows to a CSV as they arrive; no-op without a path.

    The file starts with ``initial`` rows (those kept by ``resume``), or empty, and replaces
    any old file at once, so that a crash then loses none of the kept rows. The header comes
    from the first rows; each task's rows go out in one write. Rows with columns the header
    lacks (kept rows of an older version) rewrite the file with the header widened.
    """

    def __init__(self, path, initial: list[dict]):
        self.path = None if path is None else Path(path)
        self.rows: list[dict] = []
        self.columns: list[str] = []
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._rewrite(initial)

    def write(self, rows: list[dict]) -> None:
        if self.path is None or not rows:
            return
        if set(_columns(rows)) - set(self.columns):
            self._rewrite(rows)
        else:
            self.rows += rows
            with self.path.open("a", encoding="utf-8", newline="") as handle:
                handle.write(self._csv_text(rows, header=False))

    def _rewrite(self, rows: list[dict]) -> None:
        self.rows += rows
        self.columns = _columns(self.rows)
        write_text(self.path, self._csv_text(self.rows, header=True), newline="")

    def _csv_text(self, rows: list[dict], header: bool) -> str:
        if not rows:
            return ""
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self.columns)
        if header:
            writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue()


def _columns(rows: list[dict]) -> list[str]:
    """The keys of ``rows`` in order of first appearance."""
    return list(dict.fromkeys(key for row in rows for key in row))
