"""Each measured table of the README and the guides is its result file's, as the command that
measured it printed it (``bayesvm bench --save``, :mod:`bayesvm.bench.record`).

A page marks such a table with ``<!-- results: docs/results/NAME.json -->`` on the line above
it (``NAME.json#TABLE`` for one of a file's several tables); ``python -m bayesvm.bench.record
PAGE`` rewrites the page's marked tables from their files.
"""

from pathlib import Path

import pytest

from bayesvm.bench.record import marked_tables, with_result_tables

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    page
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    if "_build" not in page.parts and "generated" not in page.parts
]
MARKED = [
    (page.relative_to(ROOT).as_posix(), marked)
    for page in PAGES
    for marked in marked_tables(page.read_text())
]


def test_the_guides_mark_their_measured_tables():
    pages = {page for page, _ in MARKED}
    assert pages >= {"docs/guide/performance.md", "docs/guide/checks.md", "docs/guide/models.md"}


@pytest.mark.parametrize(
    ("page", "marked"), MARKED, ids=lambda value: getattr(value, "file", value)
)
def test_a_marked_table_is_its_result_files(page, marked):
    assert marked.table == marked.expected(ROOT), page


def test_rewriting_a_page_from_its_files_changes_only_its_tables():
    text = (ROOT / "docs/guide/performance.md").read_text()
    (first, *_) = marked_tables(text)
    stale = text.replace(first.table, first.table.replace("|---|", "| --- |", 1))
    assert stale != text
    assert with_result_tables(stale, ROOT) == text
