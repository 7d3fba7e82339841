"""Figures of ``bayesvm reproduce spam`` (:mod:`bayesvm.case_studies.spam`).

* :func:`inclusion_figure`: inclusion probability of each feature as a bar, shaded by the
  probability that its weight is positive, one panel per fit (Luts-Ormerod 2014 Figure 3,
  Polson-Scott 2011 Figure 3); darker means a more likely positive association with spam.
* :func:`lasso_path_figure`: lasso coefficients and the number of non-zero coefficients
  against ``nu``, ECME's estimate marked (Polson-Scott Figure 1).
* :func:`sample_paths_figure`: MCMC sample paths with ECME's estimates as horizontal lines
  (Polson-Scott Figure 4).
* :func:`ber_figure`: balanced error rates of the held-out comparison as boxplots.

Figures are :class:`matplotlib.figure.Figure` objects built without pyplot: save them with
``figure.savefig(path)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from string import ascii_lowercase

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from bayesvm.case_studies.reporting import ber_boxplot

__all__ = [
    "MAX_PATH_POINTS",
    "inclusion_figure",
    "lasso_path_figure",
    "sample_paths_figure",
    "ber_figure",
]

#: Most draws drawn per sample path (evenly spaced): more only blacken the panel.
MAX_PATH_POINTS = 5000
#: Bars from white (weight surely negative) to black (surely positive), as in both papers.
_SHADES = colormaps["Greys"]


def inclusion_figure(
    probabilities: Mapping[str, pd.Series],
    shading: Mapping[str, pd.Series],
    *,
    shading_label: str,
    title: str,
) -> Figure:
    """Bars of inclusion probabilities, one panel per fit, shaded by ``shading``.

    Parameters
    ----------
    probabilities : mapping of str to pandas.Series
        Inclusion probability of each feature (index: feature names, in the order of the
        bars) by the fit's label, one panel each, labelled (a), (b), ...
    shading : mapping of str to pandas.Series
        For each fit, the probability that each feature's weight is positive: 0 white, 1
        black.
    shading_label : str
        Label of the colour bar, e.g. ``"P(v_k > 0 | y)"``.
    title : str
    """
    figure = Figure(figsize=(14.0, 1.6 + 2.4 * len(probabilities)))
    axes = figure.subplots(len(probabilities), 1, sharex=True, squeeze=False)[:, 0]
    for index, (ax, (label, values)) in enumerate(zip(axes, probabilities.items(), strict=True)):
        positions = np.arange(values.size)
        shades = shading[label].reindex(values.index).to_numpy()
        ax.bar(positions, values.to_numpy(), color=_SHADES(shades), edgecolor="black", lw=0.5)
        ax.set_ylim(0.0, 1.0)
        ax.set_xlim(-0.7, values.size - 0.3)
        ax.set_ylabel("inclusion probability")
        ax.set_title(f"({ascii_lowercase[index]}) {label}", fontsize=10, loc="left")
    axes[-1].set_xticks(np.arange(values.size), list(values.index), rotation=90, fontsize=7)
    figure.suptitle(f"Spam data: {title}", fontsize=11)
    figure.tight_layout()
    bar = figure.colorbar(
        ScalarMappable(Normalize(0.0, 1.0), _SHADES), ax=list(axes), fraction=0.02, pad=0.01
    )
    bar.set_label(shading_label)
    return figure


def lasso_path_figure(
    path: pd.DataFrame, features: Sequence[str], *, paper_nu: float | None = None
) -> Figure:
    """Polson-Scott's Figure 1: (a) the lasso coefficients of ``features`` and (b) the number
    of non-zero coefficients against ``nu`` (log scale).

    Parameters
    ----------
    path : pandas.DataFrame
        :func:`~bayesvm.case_studies.spam.lasso_path`: the ECME row (whose ``nu`` is marked by
        a vertical line) and the EM rows over the grid.
    features : sequence of str
        Columns of ``path`` whose coefficients panel (a) shows.
    paper_nu : float, optional
        The paper's ECME estimate, marked by a dashed line.
    """
    ecme = path[path["method"] == "ecme"].iloc[0]
    grid = path[path["method"] == "em"].sort_values("nu")
    figure = Figure(figsize=(13.0, 4.6))
    coefficients_ax, count_ax = figure.subplots(1, 2, width_ratios=[1.6, 1.0])
    for feature in features:
        coefficients_ax.plot(grid["nu"], grid[feature], lw=1.0, label=feature)
    coefficients_ax.axhline(0.0, color="black", lw=0.5)
    coefficients_ax.set_ylabel("standardised coefficient")
    coefficients_ax.set_title(f"(a) the first {len(features)} coefficients", fontsize=10)
    coefficients_ax.legend(fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    count_ax.plot(grid["nu"], grid["n_nonzero"], marker="o", ms=3, color="black")
    count_ax.set_ylabel("non-zero coefficients")
    count_ax.set_title("(b) model size", fontsize=10)
    for ax in (coefficients_ax, count_ax):
        ax.set_xscale("log")
        ax.set_xlabel("nu")
        ax.axvline(ecme["nu"], color="tab:red", ls=":")
        if paper_nu is not None:
            ax.axvline(paper_nu, color="grey", ls="--", lw=0.8)
    count_ax.text(
        0.02,
        0.98,
        f"dotted: ECME's nu = {ecme['nu']:.3g}"
        + ("" if paper_nu is None else f"\ndashed: Polson-Scott's {paper_nu:g}"),
        transform=count_ax.transAxes,
        va="top",
        fontsize=8,
    )
    figure.suptitle("Spam data: lasso modes by EM (Polson-Scott 2011, Figure 1)", fontsize=11)
    figure.tight_layout()
    return figure


def sample_paths_figure(
    paths: pd.DataFrame, ecme: pd.Series, inclusion: pd.Series, *, title: str
) -> Figure:
    """Polson-Scott's Figure 4: the sample path of each column of ``paths``, at most
    :data:`MAX_PATH_POINTS` draws evenly spaced, with ECME's estimate as a horizontal line.

    Parameters
    ----------
    paths : pandas.DataFrame
        Draws (rows, in order) of each feature's weight (columns).
    ecme : pandas.Series
        ECME's estimate of each feature's weight.
    inclusion : pandas.Series
        The chain's inclusion probability of each feature, shown in the panels' titles.
    title : str
        The model, in the figure's title.
    """
    n_columns = 2
    n_rows = -(-paths.shape[1] // n_columns)
    figure = Figure(figsize=(11.0, 0.8 + 2.6 * n_rows))
    axes = figure.subplots(n_rows, n_columns, squeeze=False).ravel()
    shown = np.unique(np.linspace(0, len(paths) - 1, min(MAX_PATH_POINTS, len(paths))).astype(int))
    for index, feature in enumerate(paths.columns):
        ax = axes[index]
        ax.plot(shown + 1, paths[feature].to_numpy()[shown], lw=0.4, color="black")
        ax.axhline(ecme[feature], color="tab:red", lw=1.2)
        ax.set_title(
            f"({ascii_lowercase[index]}) {feature}: inclusion probability {inclusion[feature]:.2f}",
            fontsize=9,
        )
        ax.set_xlabel("draw")
    for ax in axes[paths.shape[1] :]:
        ax.set_visible(False)
    figure.suptitle(
        f"Spam data: sample paths, {title}; red: ECME (Polson-Scott 2011, Figure 4)", fontsize=11
    )
    figure.tight_layout()
    return figure


def ber_figure(results: pd.DataFrame, labels: Mapping[str, str]) -> Figure:
    """Boxplots of the held-out balanced error rates by method (in the order of ``labels``)."""
    figure = Figure(figsize=(1.5 + 1.5 * len(labels), 4.0))
    ax = figure.subplots()
    ber_boxplot(ax, results, labels)
    ax.set_ylabel("balanced error rate")
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title("Spam data: held-out splits", fontsize=11)
    figure.tight_layout()
    return figure
