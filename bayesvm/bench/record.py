"""A benchmark's tables kept in a file (``bayesvm bench --save``), and read back.

The measured tables of the README and the guides are such files' tables, rendered as
``bayesvm bench`` prints them (:func:`~bayesvm.case_studies.reporting.markdown_table`): a
page marks each with ``<!-- results: docs/results/NAME.json -->`` (or ``.json#TABLE`` for one
of several) on the line above it, and ``tests/docs/test_result_tables.py`` checks the page
against the file. ``python -m bayesvm.bench.record PAGE ...`` rewrites each marked table of the
pages from its file (:func:`with_result_tables`) after a new run. A file also says what was
run, where, on what load and when. A case study's table is the CSV its
full run wrote (``bayesvm reproduce``), committed under ``docs/results/`` beside the run's
``run.json`` record in ``docs/results/studies.json``.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bayesvm.bench.options import Tables
from bayesvm.bench.timing import load_average
from bayesvm.case_studies.reporting import machine_description, markdown_table
from bayesvm.files import write_text
from bayesvm.version import __version__

__all__ = ["save_tables", "load_tables", "MarkedTable", "marked_tables", "with_result_tables"]

#: The line above a measured table: its result file, and the file's table where it has several.
MARKER = re.compile(r"<!-- results: (\S+?)(?:#(.+?))? -->")


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
    """The tables of a file :func:`save_tables` wrote, or of a CSV a case study wrote (one
    table, named by the file's stem).
    """
    path = Path(path)
    if path.suffix == ".csv":
        return {path.stem: pd.read_csv(path)}
    record = json.loads(path.read_text())
    tables = {}
    for name, table in record["tables"].items():
        frame = pd.DataFrame(table["data"], columns=table["columns"])
        tables[name] = frame.where(frame.notna(), np.nan)  # JSON's null: a blank cell
    return tables


@dataclass(frozen=True)
class MarkedTable:
    """A measured table of a page: its result ``file`` (relative to the repository), the
    file's table ``name`` (None: its only one), the page's ``table`` as written, and the
    ``lines`` it takes on the page (a range).
    """

    file: str
    name: str | None
    table: str
    lines: range

    def expected(self, root) -> str:
        """The table as its file renders it (:func:`load_tables`, then ``markdown_table``)."""
        tables = load_tables(Path(root) / self.file)
        if self.name is not None:
            return markdown_table(tables[self.name])
        if len(tables) != 1:
            raise ValueError(f"{self.file} holds {sorted(tables)}: name one ({self.file}#NAME)")
        return markdown_table(*tables.values())


def marked_tables(text: str) -> list[MarkedTable]:
    """Every table of a page's ``text`` marked by :data:`MARKER` on the line above it."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines):
        match = MARKER.fullmatch(line.strip())
        if match is None:
            continue
        end = number + 1
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        table = "\n".join(lines[number + 1 : end])
        found.append(MarkedTable(*match.groups(), table, range(number + 1, end)))
    return found


def with_result_tables(text: str, root) -> str:
    """``text`` with each marked table replaced by its result file's (``root``: the
    repository the files' paths start from).
    """
    lines = text.splitlines(keepends=True)
    for marked in reversed(marked_tables(text)):
        lines[marked.lines.start : marked.lines.stop] = [marked.expected(root) + "\n"]
    return "".join(lines)


def main(pages: list[str]) -> None:
    """Rewrite each marked table of ``pages`` from its file, the repository being the
    working directory.
    """
    for page in map(Path, pages):
        text = page.read_text()
        rendered = with_result_tables(text, Path.cwd())
        if rendered != text:
            write_text(page, rendered)
            print(f"rewrote {page}")


if __name__ == "__main__":
    main(sys.argv[1:])
