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


def readme_table(header_start: str) -> list[dict[str, str]]:
    """The README's table whose header begins ``header_start``: each row's cells by column
    (the table ends at the first line that is not a row).
    """
    lines = README.read_text().splitlines()
    header = next(number for number, line in enumerate(lines) if line.startswith(header_start))
    columns = [cell.strip() for cell in lines[header].strip("|").split("|")]
    rows = []
    for line in lines[header + 2 :]:  # after the header and its rule
        if not line.startswith("| "):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows.append(dict(zip(columns, cells, strict=True)))
    return rows


def methods_table() -> dict[str, set[str]]:
    """The README's methods table: each row's methods marked "yes"."""
    return {
        row["model"]: {method for method, cell in row.items() if cell == "yes"}
        for row in readme_table("| model | vb")
    }


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
    rows = readme_table("| study | full run")
    return {re.match(r"`(\w+)`", row["study"]).group(1): row for row in rows}


def test_the_full_run_times_are_those_of_the_run_records():
    records = json.loads(STUDY_RECORDS.read_text())
    table = study_table()
    assert sorted(table) == sorted(records)
    for study, record in records.items():
        assert record["study"] == study and record["full"] and not record["resumed"]
        measured = table[study]["how we know"] == "measured"
        assert measured and table[study]["full run"] == wall_time(record["wall_s"]), study
