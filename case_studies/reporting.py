"""Pieces of the case studies' markdown reports and figures."""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from bayesvm.case_studies.default_svm import COARSE_ALPHAS, FINE_DECADES, FINE_POINTS
from bayesvm.exceptions import NumericalBreakdownError
from bayesvm.linalg import usable_cores

__all__ = [
    "PAPER_MACHINE",
    "markdown_table",
    "machine_description",
    "run_description",
    "default_svm_description",
    "paper_timing_table",
    "ber_boxplot",
    "single_class_counts",
    "single_class_note",
    "unconverged_note",
    "breakdown_note",
    "present_labels",
    "split_ber_table",
    "split_notes",
]

#: Where Luts-Ormerod (2014) timed their experiments (section 4).
PAPER_MACHINE = "Intel Core i7-2760QM @ 2.40 GHz, 8 GB RAM"


def markdown_table(frame: pd.DataFrame, float_format: str | None = None) -> str:
    """Render ``frame`` as a GitHub markdown table (index dropped).

    Floats are written by ``float_format`` (e.g. ``"{:.2f}"``); by default with 3
    significant digits, and from 1000 up as whole numbers with thousands separators
    (``3,669`` rather than ``3.67e+03``). NaN is left blank.
    """

    def cell(value) -> str:
        if not isinstance(value, float | np.floating):
            return str(value)
        if np.isnan(value):
            return ""
        if float_format is not None:
            return float_format.format(value)
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"

    header = "| " + " | ".join(str(column) for column in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(cell(value) for value in row) + " |" for row in frame.itertuples(False)
    ]
    return "\n".join([header, rule, *body])


def machine_description() -> str:
    """CPU model (when the OS says), logical cores, cores this process may use, and Python."""
    usable = usable_cores()
    return (
        f"{_cpu_model()}; {os.cpu_count()} logical cores ({usable} usable by this process); "
        f"Python {platform.python_version()} on {platform.system()}"
    )


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def run_description(*, workers: int, scheduler, wall_s: float) -> str:
    """One line on where and how long a case study ran (for the report)."""
    where = f"Workers: {workers}." if scheduler is None else f"Dask scheduler: {scheduler}."
    return f"Machine: {machine_description()}. {where} Wall time of the whole run: {wall_s:.1f} s."


def default_svm_description(n_holdouts: int, coarse_alphas=COARSE_ALPHAS) -> str:
    """How the default SVM of Luts-Ormerod section 4.1 was tuned, in one sentence."""
    return (
        f"Default SVM: alpha on a coarse grid {coarse_alphas[0]:g} to {coarse_alphas[-1]:g} "
        f"by decades, then {FINE_POINTS} log-spaced points within {FINE_DECADES:g} decade "
        f"either side of the best, each scored by its mean error over {n_holdouts} random "
        "3/4-1/4 splits of the training data."
    )


def paper_timing_table(
    ours: pd.Series, paper: Mapping[str, float], labels: Mapping[str, str]
) -> pd.DataFrame:
    """Our mean seconds per fit beside the paper's, with speed-ups and ratios to VB.

    Parameters
    ----------
    ours : pandas.Series
        Mean seconds per fit indexed by method.
    paper : mapping of str to float
        The paper's published mean seconds by method (must include ``"vb"``).
    labels : mapping of str to str
        Display name of each method, in the order of the rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``paper s``, ``ours s``, ``speed-up (paper / ours)``,
        ``paper: x VB time``, ``ours: x VB time``; NaN where a time is missing.
    """
    methods = list(labels)
    ours = ours.reindex(methods)
    published = pd.Series(paper, dtype=float).reindex(methods)
    return pd.DataFrame(
        {
            "method": [labels[method] for method in methods],
            "paper s": published.to_numpy(),
            "ours s": ours.to_numpy(),
            "speed-up (paper / ours)": (published / ours).to_numpy(),
            "paper: x VB time": (published / paper["vb"]).to_numpy(),
            "ours: x VB time": (ours / ours.get("vb", np.nan)).to_numpy(),
        }
    )


def ber_boxplot(ax, results: pd.DataFrame, labels: Mapping[str, str]) -> None:
    """Boxplots of the ``ber`` column of ``results`` by ``method`` (in the order of
    ``labels``) on the matplotlib axes ``ax``, like the papers' figures; fits with no BER
    (:func:`breakdown_note`) left out.
    """
    ax.boxplot(
        [results.loc[results["method"] == method, "ber"].dropna() for method in labels],
        tick_labels=list(labels.values()),
    )


def single_class_counts(results: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """Number of fits that predicted a single class on their test set, by the ``by`` columns.

    Counts the true values of the ``single_class`` column (see
    :func:`~bayesvm.case_studies.metrics.predicts_single_class`); NaN for groups none of whose
    rows recorded it (rows of an older bayesvm, kept by ``resume``).
    """
    flags = _flags(results, "single_class")
    return flags.groupby([results[column] for column in by], sort=False).sum(min_count=1)


def single_class_note(results: pd.DataFrame, labels: Mapping[str, str], unit: str) -> str:
    """A sentence for each method of ``labels`` that predicted a single class on some test
    sets, e.g. "Default SVM predicted a single class on 3 of 3 splits: its BER of 0.5 there is
    that of a constant classifier."; "" when none did.

    Parameters
    ----------
    results : pandas.DataFrame
        Columns ``method`` and ``single_class``, one row per fit.
    labels : mapping of str to str
        Display name of each method.
    unit : str
        What a row's test set is, plural (``"splits"``, ``"data sets"``).
    """
    return _note_per_method(
        _flags(results, "single_class"),
        results,
        labels,
        "{label} predicted a single class on {count} of {total} " + unit + ": its BER of 0.5 "
        "there is that of a constant classifier.",
    )


def unconverged_note(results: pd.DataFrame, labels: Mapping[str, str], unit: str) -> str:
    """One sentence on the methods of ``labels`` whose fits failed their convergence checks on
    some test sets (``converged`` False in ``results``; :attr:`bayesvm.Fit.problems`), e.g.
    "VB did not pass its checks on 3 of 100 splits, MCMC on 4 of 100 (...)."; "" when every
    fit passed.
    """
    flagged = _flagged(1.0 - _flags(results, "converged"), results, labels)
    if not flagged:
        return ""
    (label, count, total), *others = flagged
    parts = [f"{label} did not pass its checks on {count} of {total} {unit}"]
    parts += [f"{label} on {count} of {total}" for label, count, total in others]
    return (
        ", ".join(parts) + " (samplers: R-hat, effective sample size or divergences; VB: the "
        "objective's convergence or the Pareto k-hat of q; the `warnings` column of the CSV "
        "says which): treat " + ("its" if len(parts) == 1 else "their") + " numbers there "
        "with care."
    )


def breakdown_note(results: pd.DataFrame, labels: Mapping[str, str], unit: str) -> str:
    """One sentence on the methods of ``labels`` whose fits broke down numerically on some
    ``unit`` (a :class:`~bayesvm.NumericalBreakdownError` in the ``warnings`` column), e.g.
    "Fits that broke down numerically, with no BER (...): MCMC on 1 of 200 data sets."; ""
    when none did.
    """
    # the studies record a breakdown as "NumericalBreakdownError: ..." in the warnings
    broke = results["warnings"].astype(str).str.contains(NumericalBreakdownError.__name__)
    flagged = _flagged(broke.astype(float), results, labels)
    if not flagged:
        return ""
    parts = [f"{label} on {count} of {total}" for label, count, total in flagged]
    return (
        "Fits that broke down numerically, with no BER (left out of the means and plots; the "
        f"`warnings` column of the CSV gives the error): {', '.join(parts)} {unit}."
    )


def present_labels(results: pd.DataFrame, labels: Mapping[str, str]) -> dict[str, str]:
    """The items of ``labels`` (display names by method, in order) whose method has rows in
    ``results``.
    """
    present = set(results["method"])
    return {method: label for method, label in labels.items() if method in present}


def split_ber_table(
    results: pd.DataFrame, labels: Mapping[str, str], columns: Mapping[str, pd.Series] = {}
) -> pd.DataFrame:
    """Balanced error rate over the splits by method (in the order of ``labels``): ``method``,
    ``splits``, ``mean``, ``median``, ``sd``, the ``columns`` given (each a Series by method)
    and ``single-class splits`` (:func:`single_class_counts`).
    """
    ber = results.groupby("method")["ber"].agg(
        splits="size", mean="mean", median="median", sd="std"
    )
    for name, values in columns.items():
        ber[name] = values
    ber["single-class splits"] = single_class_counts(results, ["method"])
    return ber.reindex(list(labels)).rename(index=labels).rename_axis("method").reset_index()


def split_notes(results: pd.DataFrame, labels: Mapping[str, str]) -> list[str]:
    """:func:`single_class_note` and :func:`unconverged_note` over splits, those not empty."""
    notes = [
        single_class_note(results, labels, "splits"),
        unconverged_note(results, labels, "splits"),
    ]
    return [note for note in notes if note]


def _note_per_method(flags: pd.Series, results, labels: Mapping[str, str], sentence: str) -> str:
    """``sentence`` (with ``{label}``, ``{count}``, ``{total}``) for each method of ``labels``
    with a flagged row, counting the rows that recorded the flag; "" when none is flagged.
    """
    return " ".join(
        sentence.format(label=label, count=count, total=total)
        for label, count, total in _flagged(flags, results, labels)
    )


def _flagged(flags: pd.Series, results, labels: Mapping[str, str]) -> list[tuple[str, str, int]]:
    """``(label, flagged rows, rows that recorded the flag)`` of each method of ``labels`` with
    a flagged row.
    """
    found = []
    for method, label in labels.items():
        recorded = flags[results["method"] == method].dropna()
        if recorded.sum() > 0:
            found.append((label, f"{recorded.sum():.0f}", recorded.size))
    return found


def _flags(results: pd.DataFrame, column: str) -> pd.Series:
    """``column`` as 1.0 / 0.0, NaN where not recorded (rows of an older bayesvm, or a
    method without such a flag).
    """
    if column not in results:
        return pd.Series(np.nan, index=results.index)
    return results[column].map({True: 1.0, False: 0.0, "True": 1.0, "False": 0.0})
