"""The tutorials' structure (docs/tutorials/*.md): each is a MyST notebook that jupytext reads,
with the kernel the build executes, whose first code cell reads the quick-mode switch, and
which the tutorials' table of contents lists. Executing them is the docs build's job (CI).
"""

import pathlib
import re

import pytest

jupytext = pytest.importorskip("jupytext", reason="needs the docs extra")

TUTORIALS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "tutorials"
PAGES = sorted(path for path in TUTORIALS.glob("*.md") if path.name != "index.md")
QUICK_CELL = 'import os\n\nQUICK = os.environ.get("BAYESVM_DOCS_QUICK") == "1"'


def test_there_are_tutorials():
    assert {"hinge_to_bayes", "four_methods", "own_model"} <= {path.stem for path in PAGES}


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.stem)
def test_tutorial_is_a_myst_notebook_whose_first_cell_reads_the_quick_switch(path):
    notebook = jupytext.read(path)
    assert notebook.metadata["jupytext"]["text_representation"]["format_name"] == "myst"
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert len(code) >= 2
    assert code[0].source.strip().startswith(QUICK_CELL)  # then the sizes it chooses


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.stem)
def test_tutorial_is_listed_in_the_table_of_contents(path):
    index = (TUTORIALS / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}\n(.*?)```", index, re.DOTALL).group(1)
    assert path.stem in toctree.split()
