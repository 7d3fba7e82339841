"""Reproductions of the papers' experiments on a shared study skeleton (``study``) and task
runner (``runner``): a study of one module is that module (``toenail``, ``simulated``,
``cardiac``); a study of several is a room of its own, its entry point the package and its
parts inside (``gpsvm.protocol``, ``gpsvm.baselines``, ``gpsvm.big_data``, ``gpsvm.report``,
``gpsvm.figures``; ``linlogit.baselines``, ``linlogit.figures``; ``spam.figures``,
``kernel.figures``).

Import absolutely, e.g. ``from bayesvm.case_studies.simulated import run``.
"""

from bayesvm.case_studies.default_svm import DefaultSVM, fit_default_svm
from bayesvm.case_studies.metrics import balanced_error_rate, predicts_single_class
from bayesvm.case_studies.runner import ResumeMismatchError, Task, run_tasks, task_seed

__all__ = [
    "DefaultSVM",
    "fit_default_svm",
    "balanced_error_rate",
    "predicts_single_class",
    "Task",
    "run_tasks",
    "task_seed",
    "ResumeMismatchError",
]
