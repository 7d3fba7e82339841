"""The tutorials' structure (docs/tutorials/*.md): each is a MyST notebook that jupytext reads,
with the kernel the build executes, whose first code cell reads the quick-mode switch, and
which the tutorials' table of contents lists. The user guide's pages (docs/guide/*.md) with
code are such notebooks too, and those without are plain Markdown with no Python to leave
unexecuted; the guide's table of contents lists every page. Executing them is the docs build's
job (CI).
"""

import pathlib
import re

import pytest

jupytext = pytest.importorskip("jupytext", reason="needs the docs extra")

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
TUTORIALS = DOCS / "tutorials"
PAGES = sorted(path for path in TUTORIALS.glob("*.md") if path.name != "index.md")
GUIDE = DOCS / "guide"
GUIDE_PAGES = sorted(path for path in GUIDE.glob("*.md") if path.name != "index.md")
# Guide pages whose code runs: those with a code cell (the others hold no Python at all).
GUIDE_NOTEBOOKS = [path for path in GUIDE_PAGES if "```{code-cell}" in path.read_text()]
QUICK_CELL = 'import os\n\nQUICK = os.environ.get("BAYESVM_DOCS_QUICK") == "1"'


def test_there_are_tutorials():
    assert {"hinge_to_bayes", "four_methods", "own_model"} <= {path.stem for path in PAGES}


def toctree_entries(index: pathlib.Path) -> list[str]:
    """The entries of the first toctree of the MyST page ``index``."""
    toctree = re.search(r"```\{toctree\}\n(.*?)```", index.read_text(), re.DOTALL).group(1)
    return [line.strip() for line in toctree.splitlines() if line.strip() and ":" not in line]


@pytest.mark.parametrize("path", PAGES + GUIDE_NOTEBOOKS, ids=lambda path: path.stem)
def test_tutorial_is_a_myst_notebook_whose_first_cell_reads_the_quick_switch(path):
    notebook = jupytext.read(path)
    assert notebook.metadata["jupytext"]["text_representation"]["format_name"] == "myst"
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert len(code) >= 2
    assert code[0].source.strip().startswith(QUICK_CELL)  # then the sizes it chooses


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.stem)
def test_tutorial_is_listed_in_the_table_of_contents(path):
    assert path.stem in toctree_entries(TUTORIALS / "index.md")


def test_the_guide_has_its_pages_and_is_in_the_site_contents():
    assert {"models", "formulas", "checks", "saving", "adding_a_model"} <= {
        path.stem for path in GUIDE_NOTEBOOKS
    }
    assert {"performance", "case_studies", "command_line"} <= {path.stem for path in GUIDE_PAGES}
    entries = toctree_entries(DOCS / "index.md")
    assert entries.index("tutorials/index") < entries.index("guide/index") < entries.index("api")


@pytest.mark.parametrize("path", GUIDE_PAGES, ids=lambda path: path.stem)
def test_guide_page_is_listed_in_the_guides_table_of_contents(path):
    assert path.stem in toctree_entries(GUIDE / "index.md")


@pytest.mark.parametrize("path", GUIDE_PAGES, ids=lambda path: path.stem)
def test_guide_page_runs_all_its_python(path):
    """Python on a guide page is a code cell the build executes, never a static block; a page
    without code cells is plain Markdown (no notebook header, no kernel to start)."""
    text = path.read_text()
    assert not re.search(r"^```(python|py|ipython3?)\s*$", text, re.MULTILINE)
    if path not in GUIDE_NOTEBOOKS:
        assert not text.startswith("---")
