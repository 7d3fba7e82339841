"""A benchmark's tables kept in a file (``bayesvm bench --save``), and read back.

The measured tables of the README and the guides are such files' tables, rendered as
``bayesvm bench`` prints them (:func:`~bayesvm.case_studies.reporting.markdown_table`): a
page marks each with ``<!-- results: docs/results/NAME.json -->`` (or ``.json#TABLE`` for one
of several), and ``tests/docs/test_result_tables.py`` checks the page against the file. A file
also says what was run, where, on what load and when.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np
import pandas as pd

from bayesvm.bench.options import Tables
from bayesvm.bench.timing import load_average
from bayesvm.case_studies.reporting import machine_description
from bayesvm.files import write_text
from bayesvm.version import __version__

__all__ = ["save_tables", "load_tables"]


def save_tables(path, tables: Tables, command: str) -> None:
    """Write ``tables`` to ``path`` (JSON, whole or not at all) with the ``command`` that
    measured them, the machine, its load average now, the version and the date.
    """
    record = {
        "command": command,
        "machine": machine_description(),
        "load_average": round(load_average(), 2),
        "bayesvm": __version__,
        "date": datetime.date.today().isoformat(),
        "tables": {
            name: json.loads(table.to_json(orient="split", index=False))
            for name, table in tables.items()
        },
    }
    write_text(path, json.dumps(record, indent=1) + "\n")


def load_tables(path) -> Tables:
    """The tables of a file :func:`save_tables` wrote."""
    record = json.loads(Path(path).read_text())
    tables = {}
    for name, table in record["tables"].items():
        frame = pd.DataFrame(table["data"], columns=table["columns"])
        tables[name] = frame.where(frame.notna(), np.nan)  # JSON's null: a blank cell
    return tables
