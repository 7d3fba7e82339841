"""Each measured table of the README and the guides is its result file's, as the command that
measured it printed it (``bayesvm bench --save``, :mod:`bayesvm.bench.record`).

A page marks such a table with ``<!-- results: docs/results/NAME.json -->`` on the line above
it (``NAME.json#TABLE`` for one of a file's several tables).
"""

import re
from pathlib import Path

import pytest

from bayesvm.bench.record import load_tables
from bayesvm.case_studies.reporting import markdown_table

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
MARKER = re.compile(r"<!-- results: (\S+?)(?:#(.+?))? -->")


def marked_tables() -> list[tuple[str, str, str | None, str]]:
    """``(page, file, table name, the page's table)`` for each marker of every page."""
    found = []
    for page in PAGES:
        if "_build" in page.parts or "generated" in page.parts:
            continue
        lines = page.read_text().splitlines()
        for number, line in enumerate(lines):
            match = MARKER.fullmatch(line.strip())
            if match is None:
                continue
            table = []
            for following in lines[number + 1 :]:
                if not following.startswith("|"):
                    break
                table.append(following)
            found.append((page.relative_to(ROOT).as_posix(), *match.groups(), "\n".join(table)))
    return found


MARKED = marked_tables()


def test_the_guides_mark_their_measured_tables():
    assert {page for page, *_ in MARKED} >= {"docs/guide/performance.md"}


@pytest.mark.parametrize(("page", "file", "name", "table"), MARKED)
def test_a_marked_table_is_its_result_files(page, file, name, table):
    tables = load_tables(ROOT / file)
    if name is None:
        assert len(tables) == 1, f"{file} holds {sorted(tables)}: name one ({page})"
        (expected,) = tables.values()
    else:
        expected = tables[name]
    assert table == markdown_table(expected), page
