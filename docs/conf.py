"""Sphinx configuration of the bayesvm documentation (MyST-NB tutorials, numpydoc reference).

Build: ``docs/build`` (or ``sphinx-build -W -b html docs docs/_build/html``); every tutorial
is executed on each build. ``BAYESVM_DOCS_QUICK=1`` makes the tutorials run small versions.
"""

import os
from pathlib import Path

import bayesvm

project = "bayesvm"
author = "the bayesvm developers"
copyright = "the bayesvm developers"
release = bayesvm.__version__
version = release

extensions = [
    "myst_nb",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}

# -- API reference --------------------------------------------------------------------------
autosummary_generate = True
# `bayesvm.fit` and `bayesvm.Fit` would share a file name on case-insensitive file systems.
autosummary_filename_map = {"bayesvm.fit": "bayesvm.fit-function"}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
autodoc_default_options = {"member-order": "bysource"}
numpydoc_show_class_members = False  # the class template lists members with autodoc
numpydoc_xref_param_type = False

# -- Tutorials (MyST-NB) --------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
nb_execution_mode = "force"  # every build runs every tutorial: a broken one fails the build
nb_execution_raise_on_error = True
nb_execution_show_tb = True
# Seconds per cell: the full tutorials run NUTS at the papers' sizes.
nb_execution_timeout = 300 if os.environ.get("BAYESVM_DOCS_QUICK") == "1" else 1800
nb_merge_streams = True
# The kernels inherit this process's environment: a non-interactive MPLBACKEND (CI sets Agg
# for the tests) would keep every figure out of the pages, so they draw inline.
os.environ.pop("MPLBACKEND", None)

# -- HTML -------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bayesvm {release}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}


# -- The tutorials' table of contents ---------------------------------------------------------
def list_present_tutorials(app, docname, source):
    """Drop from the tutorials' toctree the entries whose file is absent, so that the list in
    ``tutorials/index.md`` can name every planned tutorial in teaching order.
    """
    if docname != "tutorials/index":
        return
    folder = Path(app.srcdir) / "tutorials"
    lines = source[0].splitlines(keepends=True)
    inside = False
    for i, line in enumerate(lines):
        entry = line.strip()
        if entry.startswith("```{toctree}"):
            inside = True
        elif inside and entry == "```":
            inside = False
        elif inside and entry and not entry.startswith(":"):
            if not (folder / f"{entry}.md").exists():
                lines[i] = ""
    source[0] = "".join(lines)


def skip_metadata_routing_setters(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_<method>_request`` setters: which ones a class
    has depends on its methods' keyword arguments, and their docstrings cite scikit-learn's own
    glossary, which this site lacks.
    """
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    """Register the toctree filter and the member filter."""
    app.connect("source-read", list_present_tutorials)
    app.connect("autodoc-skip-member", skip_metadata_routing_setters)
