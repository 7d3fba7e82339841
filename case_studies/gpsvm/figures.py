"""Figures of ``bayesvm reproduce gpsvm`` (:mod:`bayesvm.case_studies.gpsvm`).

* :func:`runtime_figure`: held-out error against training time (Wenzel et al. 2017,
  Figure 1);
* :func:`mlii_figure`: validation error and Brier score against the lengthscale, with the
  ML-II lengthscale (Figure 2);
* :func:`inducing_figure`: error and time against the number of inducing points, k-means
  against random selection (Figure 3).

Figures are :class:`matplotlib.figure.Figure` objects built without pyplot: save them with
``figure.savefig(path)``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from matplotlib.figure import Figure

__all__ = ["runtime_figure", "mlii_figure", "inducing_figure"]


def runtime_figure(runtime: pd.DataFrame, labels: Mapping[str, str]) -> Figure:
    """Figure 1: held-out error against training seconds (log scale), one line per method,
    one point per budget.

    Parameters
    ----------
    runtime : pandas.DataFrame
        Columns ``method``, ``budget``, ``seconds`` and ``error``.
    labels : mapping of str to str
        Display name of each method.
    """
    figure = Figure(figsize=(5.5, 3.8))
    ax = figure.subplots()
    for method, of_method in runtime.groupby("method", sort=False):
        of_method = of_method.sort_values("budget")
        ax.plot(of_method["seconds"], of_method["error"], marker="o", label=labels[method])
    ax.set_xscale("log")
    ax.set_xlabel("training time [s]")
    ax.set_ylabel("held-out error")
    ax.legend(frameon=False)
    ax.set_title("Waveform: error against training time (Wenzel et al. 2017, Figure 1)", fontsize=9)
    figure.tight_layout()
    return figure


def mlii_figure(
    mlii: pd.DataFrame, learned_lengthscale: float, at_learned: Mapping[str, float], dataset: str
) -> Figure:
    """Figure 2: mean validation error and Brier score over the folds against the lengthscale
    (log scale), the ML-II lengthscale marked by a red circle on each curve.

    Parameters
    ----------
    mlii : pandas.DataFrame
        Columns ``lengthscale``, ``error`` and ``brier``, one row per lengthscale and fold.
    learned_lengthscale : float
        The lengthscale ML-II found.
    at_learned : mapping of str to float
        The curves' ``error`` and ``brier`` there (where the circles go).
    dataset : str
        Name of the data set, for the title.
    """
    means = mlii.groupby("lengthscale")[["error", "brier"]].mean()
    figure = Figure(figsize=(8.0, 3.4))
    axes = figure.subplots(1, 2)
    for ax, (column, label) in zip(
        axes, [("error", "validation error"), ("brier", "validation Brier score")], strict=True
    ):
        ax.plot(means.index, means[column], color="black", linewidth=1.0)
        ax.plot(
            [learned_lengthscale],
            [at_learned[column]],
            marker="o",
            markersize=10,
            markerfacecolor="none",
            color="red",
            linestyle="none",
            label=f"ML-II: {learned_lengthscale:.3g}",
        )
        ax.set_xscale("log")
        ax.set_xlabel("lengthscale")
        ax.set_ylabel(label)
        ax.legend(frameon=False)
    figure.suptitle(
        f"{dataset}: validation loss against the lengthscale (Wenzel et al. 2017, Figure 2)",
        fontsize=10,
    )
    figure.tight_layout()
    return figure


def inducing_figure(inducing: pd.DataFrame) -> Figure:
    """Figure 3: mean error and mean fit seconds (± one sd over the folds) against the number
    of inducing points, one line per selection method.

    Parameters
    ----------
    inducing : pandas.DataFrame
        Columns ``inducing``, ``inducing_method``, ``error`` and ``seconds``, one row per
        number, method and fold.
    """
    figure = Figure(figsize=(8.0, 3.4))
    axes = figure.subplots(1, 2)
    for selection, of_method in inducing.groupby("inducing_method", sort=False):
        stats = of_method.groupby("inducing")[["error", "seconds"]].agg(["mean", "std"])
        for ax, column in zip(axes, ["error", "seconds"], strict=True):
            ax.errorbar(
                stats.index,
                stats[(column, "mean")],
                yerr=stats[(column, "std")].fillna(0.0),
                marker="o",
                capsize=3,
                label=selection,
            )
    for ax, label in zip(axes, ["error", "training time [s]"], strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("inducing points")
        ax.set_ylabel(label)
        ax.legend(frameon=False)
    figure.suptitle(
        "Waveform: inducing points by k-means or at random (Wenzel et al. 2017, Figure 3)",
        fontsize=10,
    )
    figure.tight_layout()
    return figure
