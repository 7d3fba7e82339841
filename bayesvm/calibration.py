"""Are a classifier's probabilities calibrated? Reliability diagrams and the Brier score.

A fit is calibrated when, among the points it gives ``p(y = +1) ~ p``, a share ``p`` are
positive. :func:`calibration_table` sorts the points into ``n_bins`` equal-width bins of the
predicted probability (:meth:`Fit.predict_proba <bayesvm.Fit.predict_proba>`) and sets each
bin's mean prediction against the observed frequency of the positive class (``classes[1]``);
:func:`plot_calibration` draws these reliability diagrams of several fits on one axes, with
the diagonal of perfect calibration. :func:`brier_scores` is each fit's
``mean((p_i - 1[y_i = +1])^2)`` (Brier 1950): 0 for certain and right, 1/4 for always 1/2.

matplotlib and pandas are imported by the first call that needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from bayesvm.results import Fit

if TYPE_CHECKING:
    import matplotlib.axes
    import pandas as pd

__all__ = [
    "brier_scores",
    "calibration_bins",
    "calibration_table",
    "plot_calibration",
    "TABLE_COLUMNS",
]

#: Columns of :func:`calibration_table` (one row per fit and bin).
TABLE_COLUMNS = ["lower", "upper", "count", "mean_predicted", "observed_frequency"]
#: Marker area (points^2) of the bin holding every point; others in proportion to their count.
LARGEST_MARKER = 300.0


def calibration_bins(
    probabilities: np.ndarray, positive: np.ndarray, n_bins: int = 10
) -> dict[str, np.ndarray]:
    """Reliability-diagram numbers of one set of predictions.

    Parameters
    ----------
    probabilities : ndarray of shape (n,)
        Predicted ``p(y = +1)``, in [0, 1].
    positive : ndarray of bool, shape (n,)
        Whether each point is in the positive class.
    n_bins : int
        Equal-width bins over [0, 1]; bin ``k`` holds ``k / n_bins <= p < (k + 1) / n_bins``
        (the last also ``p = 1``).

    Returns
    -------
    dict of ndarray, each of shape (n_bins,)
        :data:`TABLE_COLUMNS`: the bin edges, how many points each holds, their mean
        prediction and the share of them that are positive (NaN for an empty bin).
    """
    probabilities = np.asarray(probabilities, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = np.minimum((probabilities * n_bins).astype(int), n_bins - 1)
    count = np.bincount(index, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_predicted = np.bincount(index, probabilities, n_bins) / count
        observed_frequency = np.bincount(index, positive, n_bins) / count
    return {
        "lower": edges[:-1],
        "upper": edges[1:],
        "count": count,
        "mean_predicted": mean_predicted,
        "observed_frequency": observed_frequency,
    }


def calibration_table(
    fits: Mapping[str, Fit] | Fit, X, y, *, n_bins: int = 10, groups=None
) -> pd.DataFrame:
    """Reliability-diagram numbers of each fit on the data ``(X, y)``.

    Parameters
    ----------
    fits : Fit or mapping of label to Fit
        Classifier fits (as :func:`bayesvm.compare` takes them); a single fit is labelled by
        its method.
    X : array-like of shape (n, n_features)
        Inputs, as :meth:`Fit.predict_proba <bayesvm.Fit.predict_proba>` takes them.
    y : array-like of shape (n,)
        Labels in the fits' original coding (``model.classes``).
    n_bins : int
        Equal-width bins of the predicted probability (:func:`calibration_bins`).
    groups : array-like, optional
        Group of each row, for a model with random intercepts (passed to ``predict_proba``).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(fit, bin)``; columns :data:`TABLE_COLUMNS`.
    """
    import pandas as pd  # imported here: pandas costs 0.1 s at startup

    frames = {
        label: pd.DataFrame(calibration_bins(p, positive, n_bins)).rename_axis("bin")
        for label, (p, positive) in _predictions(fits, X, y, groups).items()
    }
    return pd.concat(frames, names=["fit"])


def brier_scores(fits: Mapping[str, Fit] | Fit, X, y, *, groups=None) -> pd.Series:
    """Each fit's Brier score ``mean((p_i - 1[y_i = +1])^2)`` on ``(X, y)`` (Brier 1950), with
    ``p_i`` its predicted ``p(y = +1)``; arguments as :func:`calibration_table`.
    """
    import pandas as pd  # imported here: pandas costs 0.1 s at startup

    scores = {
        label: float(np.mean((p - positive) ** 2))
        for label, (p, positive) in _predictions(fits, X, y, groups).items()
    }
    return pd.Series(scores, name="brier_score").rename_axis("fit")


def plot_calibration(
    fits: Mapping[str, Fit] | Fit,
    X,
    y,
    *,
    n_bins: int = 10,
    ax: matplotlib.axes.Axes | None = None,
    groups=None,
) -> matplotlib.axes.Axes:
    """Reliability diagrams of several fits side by side on one axes.

    One curve per fit: each non-empty bin's mean predicted ``p(y = +1)`` against the observed
    frequency of the positive class, the marker's area in proportion to the bin's count; the
    diagonal is perfect calibration. The legend gives each fit's Brier score
    (:func:`brier_scores`). Arguments as :func:`calibration_table`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure's).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt  # imported here: matplotlib costs 0.3 s at startup

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5.0))
    predictions = _predictions(fits, X, y, groups)
    ax.plot([0.0, 1.0], [0.0, 1.0], color="0.6", linestyle="--", label="perfectly calibrated")
    for label, (p, positive) in predictions.items():
        bins = calibration_bins(p, positive, n_bins)
        seen = bins["count"] > 0
        brier = np.mean((p - positive) ** 2)
        (line,) = ax.plot(
            bins["mean_predicted"][seen],
            bins["observed_frequency"][seen],
            label=f"{label} (Brier {brier:.3f})",
        )
        ax.scatter(
            bins["mean_predicted"][seen],
            bins["observed_frequency"][seen],
            s=LARGEST_MARKER * bins["count"][seen] / p.size,
            color=line.get_color(),
            alpha=0.7,
        )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("mean predicted probability of the positive class")
    ax.set_ylabel("observed frequency of the positive class")
    ax.set_title(f"Reliability diagram ({n_bins} bins; marker area: points in the bin)")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def _predictions(
    fits: Mapping[str, Fit] | Fit, X, y, groups
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each fit's ``p(y = +1)`` at ``X`` and whether each ``y`` is its positive class."""
    if isinstance(fits, Fit):
        fits = {fits.method: fits}
    if not fits:
        raise ValueError("no fits given")
    y = np.asarray(y)
    if y.shape[0] != np.shape(X)[0]:
        raise ValueError(f"X has {np.shape(X)[0]} rows and y {y.shape[0]}")
    kwargs = {} if groups is None else {"groups": groups}
    predictions = {}
    for label, fit in fits.items():
        classes = getattr(fit.model, "classes", None)
        if classes is None:
            raise ValueError(f"fit {label!r} is a regression: it has no class probabilities")
        unknown = sorted(set(np.unique(y).tolist()) - set(classes.tolist()), key=str)
        if unknown:
            raise ValueError(
                f"y holds labels {unknown} that fit {label!r} does not know "
                f"(its classes: {list(classes)})"
            )
        predictions[label] = (fit.predict_proba(X, **kwargs)[:, 1], y == classes[1])
    return predictions
