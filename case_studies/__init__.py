"""Reproductions of the papers' experiments, one module each (with its parts beside it, e.g.
``gpsvm_baselines``), on a shared study skeleton (``study``) and task runner (``runner``).

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
