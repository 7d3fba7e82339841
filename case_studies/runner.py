"""Shared machinery of the case studies: run independent tasks, stream rows to CSV.

A case study is a list of :class:`Task` objects (one per data set, split, ...), each a
picklable function and its keyword arguments returning result rows. :func:`run_tasks` runs
them in this process or in ``workers`` local processes, shows a progress bar over tasks,
appends each finished task's rows to a CSV (an interrupted run keeps what finished) and
returns all rows as a data frame in task order. Every task carries its own seed
(:func:`task_seed`), so results do not depend on the number of workers or on the order in
which tasks finish.
"""

from __future__ import annotations

import csv
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from threadpoolctl import threadpool_limits

__all__ = ["Task", "task_seed", "run_tasks"]


@dataclass(frozen=True)
class Task:
    """One independent unit of a case study.

    Attributes
    ----------
    key : dict
        Identifies the task (e.g. ``{"n": 200, "d": 10, "replicate": 3}``); its items are
        prepended to every row the task returns.
    function : callable
        Module-level (hence picklable) ``function(**kwargs) -> list[dict]``, one dict per row.
    kwargs : dict
        Keyword arguments of ``function``, including the task's seed.
    """

    key: dict
    function: Callable[..., list[dict]]
    kwargs: dict = field(default_factory=dict)

    def run(self) -> list[dict]:
        """Call the function and prepend the key to each of its rows."""
        return [{**self.key, **row} for row in self.function(**self.kwargs)]


def task_seed(seed: int, *key: int) -> np.random.SeedSequence:
    """Seed one task from the study's ``seed`` and the task's integer ``key``."""
    return np.random.SeedSequence([seed, *key])


def run_tasks(
    tasks: Sequence[Task],
    *,
    csv_path=None,
    workers: int = 1,
    description: str = "tasks",
    progressbar: bool = True,
) -> pd.DataFrame:
    """Run ``tasks`` and return their rows as one data frame, in task order.

    Parameters
    ----------
    tasks : sequence of Task
    csv_path : path-like, optional
        Rows are appended here as each task finishes (the file is started afresh); at the end
        the file is rewritten in task order, so it does not depend on ``workers``.
    workers : int
        1 runs the tasks in this process; more runs them in that many local processes,
        forked from a ``forkserver`` that has imported the tasks' modules, each with
        single-threaded BLAS so that workers do not oversubscribe the cores. As with any
        ``forkserver`` or ``spawn`` pool, a script calling this must guard its entry point
        with ``if __name__ == "__main__":``.
    description : str
        Label of the progress bar.
    progressbar : bool
        Show a progress bar over tasks.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1; got {workers}")
    rows_of_task: list[list[dict]] = [[] for _ in tasks]
    sink = _CsvSink(csv_path)
    with _task_progress(progressbar) as progress:
        bar = progress.add_task(description, total=len(tasks))

        def record(index: int, rows: list[dict]) -> None:
            rows_of_task[index] = rows
            sink.write(rows)
            progress.advance(bar)

        if workers == 1:
            for index, task in enumerate(tasks):
                record(index, task.run())
        else:
            _run_in_processes(tasks, workers, record)
    frame = pd.DataFrame([row for rows in rows_of_task for row in rows])
    if csv_path is not None:
        frame.to_csv(csv_path, index=False)
    return frame


def _run_in_processes(tasks, workers: int, record: Callable[[int, list[dict]], None]) -> None:
    context = multiprocessing.get_context("forkserver")
    # The fork server imports the tasks' modules once; each worker forks from it ready to go.
    context.set_forkserver_preload(sorted({task.function.__module__ for task in tasks}))
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_single_threaded_blas
    )
    try:
        _run_on_executor(pool, tasks, record)
    finally:
        # On an error or Ctrl-C drop the tasks not yet started instead of waiting for them.
        pool.shutdown(wait=True, cancel_futures=True)


def _run_on_executor(executor: Executor, tasks, record: Callable[[int, list[dict]], None]):
    """Submit every task to a ``concurrent.futures`` executor and record each as it finishes.

    Any executor works, e.g. a Dask ``Client.get_executor()`` for a cluster.
    """
    futures = {executor.submit(task.run): index for index, task in enumerate(tasks)}
    for future in as_completed(futures):
        record(futures[future], future.result())


def _single_threaded_blas() -> None:
    threadpool_limits(limits=1)


def _task_progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        disable=not enabled,
    )


class _CsvSink:
    """Appends rows to a CSV as they arrive, header from the first rows; no-op without a path."""

    def __init__(self, path):
        self.path = None if path is None else Path(path)
        self.columns: list[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.unlink(missing_ok=True)

    def write(self, rows: list[dict]) -> None:
        if self.path is None or not rows:
            return
        with self.path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns or list(rows[0]))
            if self.columns is None:
                self.columns = list(writer.fieldnames)
                writer.writeheader()
            writer.writerows(rows)
