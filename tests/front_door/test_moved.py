"""A module's old path, kept for one release after it moved, gives the new module's names and
warns naming both paths and the release that drops the old one.
"""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "samplers": "bayesvm.samplers",
    "vb": "bayesvm.vb",
    "models": "bayesvm.models",
    "case_studies": "bayesvm.case_studies",
}
ALIASES = {
    f"{PACKAGES[path.parent.name]}.{path.stem}": re.search(r'moved_to\(__name__, "([\w.]+)"', text)[
        1
    ]
    for folder in PACKAGES
    for path in sorted((ROOT / folder).glob("*.py"))
    if "moved_to(__name__" in (text := path.read_text())
}


def test_the_aliases_are_found():
    assert ALIASES["bayesvm.vb.pareto"] == "bayesvm.checks.pareto"
    assert ALIASES["bayesvm.samplers.slice"] == "bayesvm.blocks.slice"
    assert ALIASES["bayesvm.case_studies.gpsvm_protocol"] == "bayesvm.case_studies.gpsvm.protocol"


@pytest.mark.parametrize(("old", "new"), sorted(ALIASES.items()))
def test_an_old_path_gives_the_new_modules_names_and_warns(old, new):
    moved = importlib.import_module(new)
    name = next(name for name in vars(moved) if not name.startswith("_"))
    with pytest.warns(FutureWarning, match=rf"{old} moved to {new} in bayesvm 0\.\d\.0; the old"):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(moved, name)
