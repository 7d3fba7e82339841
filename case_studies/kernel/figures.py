"""Figures of ``bayesvm reproduce kernel`` (:mod:`bayesvm.case_studies.kernel`).

* :func:`trace_figure`: the number of active vectors of FBGKM over the sweeps of one chain,
  one panel per data set (Zhang et al. 2010, Figure 1).

Figures are :class:`matplotlib.figure.Figure` objects built without pyplot: save them with
``figure.savefig(path)``.
"""

from __future__ import annotations

from string import ascii_lowercase

import pandas as pd
from matplotlib.figure import Figure

__all__ = ["trace_figure"]


def trace_figure(traces: pd.DataFrame, k_max: int) -> Figure:
    """Figure 1: ``n_gamma`` against the sweep, one panel per data set.

    Parameters
    ----------
    traces : pandas.DataFrame
        Columns ``dataset``, ``sweep`` and ``n_active``, one row per sweep of each chain.
    k_max : int
        The chains' largest number of active vectors, drawn as a dashed line.
    """
    names = list(dict.fromkeys(traces["dataset"]))
    figure = Figure(figsize=(4.0 * len(names), 3.2))
    axes = figure.subplots(1, len(names), squeeze=False)[0]
    for letter, name, ax in zip(ascii_lowercase, names, axes, strict=False):
        trace = traces[traces["dataset"] == name]
        ax.plot(trace["sweep"], trace["n_active"], linewidth=0.6, color="black")
        ax.axhline(k_max, linestyle="--", linewidth=0.8, color="grey")
        ax.set_title(f"({letter}) {name}", fontsize=10)
        ax.set_xlabel("sweep")
        ax.set_ylim(bottom=0)
    axes[0].set_ylabel("active vectors n_gamma")
    figure.suptitle("FBGKM: active vectors over the sweeps (Zhang et al. 2010, Figure 1)")
    figure.tight_layout()
    return figure
