"""Bundled real data sets (see ``PROVENANCE.md`` beside this module) and their loaders."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_heart", "data_path"]


def data_path(name: str):
    """Path of a bundled file, e.g. ``data_path("heart.csv")``."""
    return resources.files("bayesvm.data").joinpath(name)


def load_heart() -> pd.DataFrame:
    """Rätsch's ``heart`` benchmark (Statlog heart disease): 270 rows, features ``x1..x13``
    (already normalised by the benchmark authors) and label ``y`` in {-1, +1}.
    """
    with data_path("heart.csv").open() as handle:
        return pd.read_csv(handle)
