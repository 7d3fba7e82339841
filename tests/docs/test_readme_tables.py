"""The README's methods table is what ``bayesvm.methods`` says of each model it names."""

import json
import re
from pathlib import Path

import numpy as np

import bayesvm
from bayesvm.models import (
    GPSVM,
    KernelGKM,
    LinearRegression,
    LinearSVM,
    LogisticRegression,
    MissingDataSVM,
    MixedSVM,
    SpikeSlabSVM,
)

from conftest import simulate_logistic

README = Path(__file__).resolve().parents[2] / "README.md"
X, Y = simulate_logistic(30, 3, seed=5)
MISSING = np.where(np.random.default_rng(5).random(X.shape) < 0.1, np.nan, X)
#: Each row's models, by the row's first cell (every variant a row names).
ROWS = {
    "`LinearSVM`, ridge, fixed penalty": [LinearSVM.from_arrays(X, Y, alpha=1.0)],
    "`LinearSVM`, lasso, learned penalty": [LinearSVM.from_arrays(X, Y, prior="lasso")],
    "`MixedSVM.penalized` (penalty inferred)": [MixedSVM.penalized(X, Y)],
    "`MixedSVM.random_intercept`": [MixedSVM.random_intercept(X, Y, groups=np.arange(30) % 3)],
    "`SpikeSlabSVM` (Laplace-zero, Gaussian slab)": [
        SpikeSlabSVM.laplace_zero(X, Y),
        SpikeSlabSVM.gaussian_slab(X, Y),
    ],
    "`MissingDataSVM`": [MissingDataSVM.from_arrays(MISSING, Y)],
    "`KernelGKM`": [KernelGKM.from_arrays(X, Y)],
    "`GPSVM`": [GPSVM.from_arrays(X, Y, inducing=5)],
    "`LinearRegression`": [LinearRegression.from_arrays(X, X @ [1.0, 0.5, 0.0])],
    "`LogisticRegression`": [LogisticRegression.from_arrays(X, Y)],
}


def methods_table() -> dict[str, set[str]]:
    """The README's table: each row's methods marked "yes"."""
    lines = [line for line in README.read_text().splitlines() if line.startswith("| ")]
    # rows of another table have another number of cells
    header = next(line for line in lines if line.startswith("| model | vb"))
    methods = [cell.strip() for cell in header.strip("|").split("|")][1:]
    table = {}
    for line in lines[lines.index(header) + 1 :]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(methods) + 1 or re.fullmatch(r"-+", cells[0]):
            continue
        marks = zip(methods, cells[1:], strict=True)
        table[cells[0]] = {method for method, cell in marks if cell == "yes"}
    return table


def test_the_methods_table_names_every_row_here():
    assert sorted(methods_table()) == sorted(ROWS)


def test_each_row_of_the_methods_table_is_what_methods_gives():
    for row, methods in methods_table().items():
        for model in ROWS[row]:
            assert set(bayesvm.methods(model)) == methods, (row, type(model).__name__)


#: The records of the studies' full runs (``run.json`` of each, ``bayesvm.case_studies.study``).
STUDY_RECORDS = README.parent / "docs" / "results" / "studies.json"


def wall_time(seconds: float) -> str:
    """A full run's wall time as the README gives it: minutes below an hour, else hours."""
    return f"{seconds / 60:.1f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"


def study_table() -> dict[str, dict[str, str]]:
    """The README's table of full runs: each row's cells by column, keyed by the study."""
    lines = [line for line in README.read_text().splitlines() if line.startswith("| ")]
    header = next(line for line in lines if line.startswith("| study | full run"))
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    rows = {}
    for line in lines[lines.index(header) + 1 :]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(columns):
            break
        if not re.fullmatch(r"-+", cells[0]):
            rows[re.match(r"`(\w+)`", cells[0]).group(1)] = dict(zip(columns, cells, strict=True))
    return rows


def test_the_full_run_times_are_those_of_the_run_records():
    records = json.loads(STUDY_RECORDS.read_text())
    table = study_table()
    assert sorted(table) == sorted(records)
    for study, record in records.items():
        assert record["study"] == study and record["full"] and not record["resumed"]
        measured = table[study]["how we know"] == "measured"
        assert measured and table[study]["full run"] == wall_time(record["wall_s"]), study
