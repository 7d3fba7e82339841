"""The skeleton every case study shares: its options, checked once, and the run flow.

A study module declares a :class:`Study` (its name, methods, the paper's and the quick
protocol, its default seed, what ``n_datasets`` and ``benchmarks`` choose) and an
``execute(run: StudyRun) -> (results, report)`` function that runs its tasks, writes its
files and returns its results and the text of its report. :meth:`Study.entry_point` makes of
them the module's ``run``, the same function for every study:

1. check the options (:meth:`Study.prepare`), before anything is written: an option the
   study does not take raises :class:`OptionNotTakenError`, unknown methods or benchmarks
   :class:`ValueError`;
2. lock ``out_dir`` (:func:`bayesvm.files.locked_folder`) for the whole run, and refuse it
   if it holds an earlier run's results, unless the run resumes or replaces them
   (:meth:`StudyRun.prepare_folder`);
3. ``execute``: tasks run by :meth:`StudyRun.run_tasks` (:func:`~bayesvm.case_studies.runner.
   run_tasks` with the run's options and settings, so that ``resume`` keeps finished tasks
   and refuses results written with other settings; :meth:`StudyRun.check_resume` refuses
   before fitting anything where a study writes several CSVs);
4. write ``report.md``, whose run line (:meth:`StudyRun.run_line`) says where and how long
   the run took, and return the results.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

import pandas as pd

from bayesvm.case_studies.reporting import machine_description, run_description
from bayesvm.case_studies.runner import (
    Task,
    check_methods,
    check_resume_settings,
    choose_protocol,
    run_tasks,
    study_settings,
)
from bayesvm.files import (
    REPORT_NAME,
    EarlierResultsError,
    earlier_run_files,
    locked_folder,
    write_text,
)
from bayesvm.interrupts import interrupts_end_fits
from bayesvm.version import __version__

__all__ = [
    "OptionNotTakenError",
    "RunOptions",
    "Study",
    "StudyRun",
    "keyed_task",
    "RUN_RECORD_NAME",
]

#: The file of a run's record (:meth:`StudyRun.record`), written beside ``report.md``; the
#: records of full runs are what ``docs/results/studies.json`` holds and the README quotes.
RUN_RECORD_NAME = "run.json"

_RUN_DOC = """{summary}

Parameters
----------
out_dir : path-like
    Created if needed, and locked while the run uses it. {outputs} Each CSV of results has
    its ``.settings.json`` beside it (what its rows depend on, checked by ``resume``), and
    ``report.md`` sums the run up.
quick : bool
    Run ``QUICK_PROTOCOL`` (a CI smoke test) instead of ``PAPER_PROTOCOL``.
workers : int
    Local processes running tasks in parallel (1: in this process).
scheduler : str or dask.distributed.Client, optional
    Run the tasks on this Dask cluster instead (see
    :func:`~bayesvm.case_studies.runner.run_tasks`).{scheduler}
resume : bool
    Keep the tasks an interrupted run finished and run only the others. Raises
    :class:`~bayesvm.case_studies.runner.ResumeMismatchError` before fitting anything if
    that run had other settings (``quick``, ``methods``, ``n_datasets``, ``seed``, ...).
replace : bool
    Start afresh in an ``out_dir`` that holds an earlier run's results, writing over them.
    Without ``resume`` or ``replace`` such a folder is refused before any work
    (:class:`~bayesvm.files.EarlierResultsError`), so that no finished result is lost.
methods : sequence of str, optional
    A subset of ``METHODS`` {methods}; default {default_methods}.
n_datasets : int, optional
    {n_datasets}
benchmarks : sequence of str, optional
    {benchmarks}
seed : int, optional
    Every data set, split and fit is seeded from ``seed`` (default {seed}) and its own key:
    same seed, same results, whatever ``workers`` or ``scheduler``.
progressbar : bool
    Show a progress bar over the tasks.
protocol : Protocol, optional
    Sizes of the experiment, in place of the one ``quick`` chooses.

Returns
-------
{returns}

Raises
------
OptionNotTakenError
    For an option this study does not take.
bayesvm.files.EarlierResultsError
    When ``out_dir`` holds an earlier run's results and neither ``resume`` nor ``replace``
    is given.
"""


class OptionNotTakenError(ValueError):
    """A study was given an option it does not take (e.g. ``n_datasets`` for a study that
    has no data sets to count).

    Attributes
    ----------
    study : str
    options : list of str
        The names of the options, as ``run`` takes them.
    """

    def __init__(self, study: str, options: Sequence[str]):
        self.study, self.options = study, list(options)
        super().__init__(f"{study} takes no {', '.join(self.options)}")


@dataclass(frozen=True)
class RunOptions:
    """The options every study's ``run`` takes after ``out_dir``, with their defaults (the
    shared docstring of ``run`` says what each does).
    """

    quick: bool = False
    workers: int = 1
    scheduler: object = None
    resume: bool = False
    replace: bool = False
    methods: Sequence[str] | None = None
    n_datasets: int | None = None
    benchmarks: Sequence[str] | None = None
    seed: int | None = None
    progressbar: bool = True
    protocol: object = None


_RUN_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter("out_dir", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *(
            inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=option.default)
            for option in fields(RunOptions)
        ),
    ]
)


@dataclass(frozen=True)
class Study:
    """What a case study declares; :meth:`entry_point` makes its ``run`` of it.

    Attributes
    ----------
    name : str
        The name of ``bayesvm reproduce NAME``, of its settings and of its first CSV.
    methods : tuple of str
        Everything ``methods`` may name.
    paper_protocol, quick_protocol : dataclass
        The sizes of the paper's experiment and of its smoke test.
    seed : int
        The default seed.
    default_methods : tuple of str, optional
        The methods run by default (all of ``methods`` when None).
    n_datasets_field : str, optional
        The protocol field that ``n_datasets`` sets, with ``n_datasets_text`` saying what it
        counts; None: the study takes no ``n_datasets``.
    benchmarks : tuple of str, optional
        The data sets ``benchmarks`` may name (all by default); None: the study takes no
        ``benchmarks``. Those chosen are part of the settings.
    distributed : bool
        Whether the study takes a Dask ``scheduler``.
    """

    name: str
    methods: tuple[str, ...]
    paper_protocol: object
    quick_protocol: object
    seed: int
    default_methods: tuple[str, ...] | None = None
    n_datasets_field: str | None = None
    n_datasets_text: str = ""
    benchmarks: tuple[str, ...] | None = None
    distributed: bool = True

    @classmethod
    def over_splits(cls, name: str, methods, paper_protocol, quick_protocol, seed: int, **more):
        """A study over random training/test splits: ``n_datasets`` sets the protocol's
        ``n_splits``.
        """
        return cls(
            name,
            methods,
            paper_protocol,
            quick_protocol,
            seed,
            n_datasets_field="n_splits",
            n_datasets_text="Number of splits",
            **more,
        )

    def prepare(self, out_dir, options: RunOptions) -> StudyRun:
        """Check the ``options`` of a run into ``out_dir`` and settle its methods, protocol,
        seed and settings; nothing is written.
        """
        if options.resume and options.replace:
            raise ValueError("give either resume (go on with a run) or replace (start afresh)")
        quick, methods, n_datasets = options.quick, options.methods, options.n_datasets
        benchmarks, scheduler, seed = options.benchmarks, options.scheduler, options.seed
        given = {"n_datasets": n_datasets, "benchmarks": benchmarks, "scheduler": scheduler}
        takes = {
            "n_datasets": self.n_datasets_field is not None,
            "benchmarks": self.benchmarks is not None,
            "scheduler": self.distributed,
        }
        refused = [name for name, value in given.items() if value is not None and not takes[name]]
        if refused:
            raise OptionNotTakenError(self.name, refused)
        methods = check_methods(
            self.default_methods or self.methods if methods is None else methods, self.methods
        )
        if benchmarks is not None:
            benchmarks = tuple(benchmarks)
            if not benchmarks or not set(benchmarks) <= set(self.benchmarks):
                raise ValueError(
                    f"benchmarks must be a non-empty subset of {self.benchmarks}; got {benchmarks}"
                )
        protocol = choose_protocol(
            options.protocol or self.paper_protocol,
            options.protocol or self.quick_protocol,
            quick=quick,
            n_datasets=n_datasets,
            field=self.n_datasets_field,
        )
        seed = self.seed if seed is None else seed
        settings = study_settings(
            self.name, methods=methods, quick=quick, seed=seed, protocol=protocol
        )
        if self.benchmarks is not None:
            benchmarks = benchmarks or self.benchmarks
            settings["datasets"] = benchmarks
        return StudyRun(
            study=self,
            out_dir=Path(out_dir),
            quick=quick,
            workers=options.workers,
            scheduler=scheduler,
            resume=options.resume,
            replace=options.replace,
            methods=methods,
            benchmarks=benchmarks,
            seed=seed,
            progressbar=options.progressbar,
            protocol=protocol,
            settings=settings,
        )

    def entry_point(
        self,
        execute: Callable[[StudyRun], tuple[object, str]],
        *,
        summary: str,
        outputs: str,
        returns: str,
        methods_text: str = "",
        scheduler_text: str = "",
    ) -> Callable:
        """The study's ``run(out_dir, **options)``, the options those of :class:`RunOptions`:
        :meth:`prepare`, lock ``out_dir``, ``execute``, write ``report.md`` and return the
        results.

        The docstring is the shared one with the study's ``summary`` (its first line),
        ``outputs`` (the files it writes), ``returns``, and notes on its methods and on
        where its tasks run with a scheduler.
        """

        def run(out_dir, **options):
            prepared = self.prepare(out_dir, RunOptions(**options))
            with locked_folder(prepared.out_dir), interrupts_end_fits():
                prepared.prepare_folder()
                results, report = execute(prepared)
                write_text(prepared.out_dir / REPORT_NAME, report)
                record = json.dumps(prepared.record(), indent=1, default=str)
                write_text(prepared.out_dir / RUN_RECORD_NAME, record + "\n")
            return results

        run.__module__ = execute.__module__
        run.__signature__ = _RUN_SIGNATURE
        run.__doc__ = _RUN_DOC.format(
            summary=summary,
            outputs=outputs,
            scheduler=f" {scheduler_text}" if scheduler_text else "",
            methods=methods_text,
            default_methods=f"{self.default_methods}" if self.default_methods else "all",
            n_datasets=(
                f"{self.n_datasets_text}; default that of the protocol "
                f"({getattr(self.paper_protocol, self.n_datasets_field)}, or "
                f"{getattr(self.quick_protocol, self.n_datasets_field)} when ``quick``)."
                if self.n_datasets_field
                else "Not taken by this study."
            ),
            benchmarks=(
                f"Data sets to run, a subset of ``DATASETS`` (default: all of {self.benchmarks})."
                if self.benchmarks
                else "Not taken by this study."
            ),
            seed=self.seed,
            returns=returns,
        )
        return run


def keyed_task(key: dict, function: Callable, **kwargs) -> Task:
    """A task keyed by ``key``, whose items are also passed to ``function``."""
    return Task(key=key, function=function, kwargs={**key, **kwargs})


@dataclass(frozen=True)
class StudyRun:
    """One run of a study, its options checked: what the study's ``execute`` reads.

    Attributes are the options of ``run`` as settled by :meth:`Study.prepare` (``methods``
    a tuple, ``seed`` and ``protocol`` chosen, ``benchmarks`` the chosen data sets or None),
    and ``settings``: what the results depend on (:func:`~bayesvm.case_studies.runner.
    study_settings`, with ``datasets`` for a study with benchmarks).
    """

    study: Study
    out_dir: Path
    quick: bool
    workers: int
    scheduler: object
    resume: bool
    replace: bool
    methods: tuple[str, ...]
    benchmarks: tuple[str, ...] | None
    seed: int
    progressbar: bool
    protocol: object
    settings: dict
    start: float = field(default_factory=time.perf_counter)

    def run_tasks(self, tasks: Sequence[Task], csv_name: str, description: str) -> pd.DataFrame:
        """:func:`~bayesvm.case_studies.runner.run_tasks` of ``tasks`` into
        ``out_dir / csv_name`` with this run's workers, scheduler, resume, settings and
        progress bar.
        """
        return run_tasks(
            tasks,
            csv_path=self.out_dir / csv_name,
            settings=self.settings,
            workers=self.workers,
            scheduler=self.scheduler,
            resume=self.resume,
            description=description,
            progressbar=self.progressbar,
        )

    def prepare_folder(self) -> None:
        """Refuse to start afresh, unless asked to ``replace`` them, where ``out_dir`` holds an
        earlier run's results (:func:`~bayesvm.files.earlier_run_files`). Replacing them
        removes the earlier report at once (the other files are written over as the run goes),
        so that a replacement cut short leaves no report of the run it replaced.
        """
        earlier = earlier_run_files(self.out_dir)
        if earlier and not (self.resume or self.replace):
            raise EarlierResultsError(self.out_dir, earlier)
        if self.replace:
            (self.out_dir / REPORT_NAME).unlink(missing_ok=True)

    def check_resume(self, *names: str) -> None:
        """When resuming, refuse before fitting anything if any of the results ``names`` in
        ``out_dir`` that hold rows were written with other settings.
        """
        if not self.resume:
            return
        for name in names:
            path = self.out_dir / name
            if path.exists() and (path.is_dir() or path.stat().st_size):
                check_resume_settings(path, self.settings)

    @property
    def full(self) -> bool:
        """Whether this is the study's full run: the paper's protocol, with every method and
        data set the study runs by default.
        """
        study = self.study
        return (
            not self.quick
            and self.protocol == study.paper_protocol
            and set(self.methods) == set(study.default_methods or study.methods)
            and (study.benchmarks is None or set(self.benchmarks) == set(study.benchmarks))
        )

    def record(self) -> dict:
        """What the run was and how long it took (``run.json``): the study, whether it was the
        full run, its wall time so far, where it ran, the version and the settings its
        results depend on.
        """
        return {
            "study": self.study.name,
            "full": self.full,
            "wall_s": round(time.perf_counter() - self.start, 1),
            "workers": self.workers,
            "scheduler": None if self.scheduler is None else str(self.scheduler),
            "resumed": self.resume,
            "machine": machine_description(),
            "bayesvm": __version__,
            "settings": self.settings,
        }

    def run_line(self) -> str:
        """Where the run took place and its wall time so far, for the report."""
        wall_s = time.perf_counter() - self.start
        line = run_description(workers=self.workers, scheduler=self.scheduler, wall_s=wall_s)
        if self.resume:
            line += (
                " Resumed: the rows kept from the interrupted run were timed there, and the "
                "wall time counts this run only."
            )
        return line
