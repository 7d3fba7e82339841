"""Figures of ``bayesvm reproduce linlogit``: Drugowitsch (2019), examples 2.6.1-3.6.3.

Drugowitsch's "Variational Bayesian inference for linear and logistic regression" (2019)
illustrates each model with worked examples; we re-create them and compare the paper's
variational Bayes (VB) with other methods (maximum likelihood, Gibbs sampling, NUTS). The
results arrive as long pandas tables (``coefficients``, ``predictions``, ``selection``,
``points``; see :func:`linlogit_figures`) and become one figure per example:

* ``figure_2_6_1.png`` (2.6.1, no figure in the paper): true vs estimated coefficients.
* ``figure_1_linear_highdim.png`` (2.6.2, Figure 1): A, true vs estimated coefficients
  (mean and 95% interval, methods shifted sideways so that the intervals do not overlap);
  B, true vs predicted test outputs with 95% predictive intervals.
* ``figure_2_linear_sparse.png`` (2.6.3, Figure 2): the same for 1000 inputs of which 100
  are informative; maximum likelihood is mostly outside the plotted range.
* ``figure_3_linear_modelsel.png`` (2.6.4, Figure 3): A, the variational bound over the
  polynomial order, the true order dashed, training and test mean squared error on a
  second axis (as Figure 6A; Figure 3A has the bound only); B, the noise-free polynomial,
  each method's predictive mean and 95% band over ``x``, and the 10 training points.
* ``figure_4_logit_coefficients.png`` (3.6.1, Figure 4): A, true vs estimated
  coefficients; B, the training points in the plane of the second and third inputs and
  the separating lines ``w1 + x2 w2 + x3 w3 = 0`` of the truth and of each method.
* ``figure_5_logit_highdim.png`` (3.6.2, Figure 5): A, true vs estimated coefficients;
  B, true vs predicted ``P(y = 1 | x)`` of the training observations, the quadrants where
  the predicted class is the less probable one shaded red.
* ``figure_6_logit_modelsel.png`` (3.6.3, Figure 6): A, the variational bound and training
  and test 0-1 loss over the polynomial order; B, the true and predicted ``P(y = 1 | x)``
  over ``x``, the training points drawn at 1 (``y = +1``) and 0 (``y = -1``), jittered.

Each method keeps one colour, marker and line style in every figure (:func:`method_styles`).
Figures are :class:`matplotlib.figure.Figure` objects built without pyplot: save them with
``figure.savefig(path)``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = [
    "MethodStyle",
    "METHOD_STYLES",
    "method_styles",
    "coefficient_panel",
    "prediction_panel",
    "selection_panel",
    "curve_panel",
    "hyperplane_panel",
    "linlogit_figures",
    "FIGURE_FILES",
]


class MethodStyle(NamedTuple):
    """How one method is drawn: colour, marker (points) and line style (curves)."""

    color: str
    marker: str
    linestyle: str


#: Styles of the usual method labels: the paper's colours (ML blue, VB red, VB with ARD
#: green, VB without hyper-prior purple); NUTS in a darker shade of the matching VB colour
#: with crosses, dotted; Gibbs in orange or brown with triangles.
METHOD_STYLES = {
    "ML": MethodStyle("tab:blue", "+", "-"),
    "VB": MethodStyle("tab:red", "o", "--"),
    "VB-ARD": MethodStyle("tab:green", "s", "--"),
    "VB (fixed prior)": MethodStyle("tab:purple", "D", "--"),
    "NUTS": MethodStyle("darkred", "x", ":"),
    "NUTS-ARD": MethodStyle("darkgreen", "x", ":"),
    "NUTS (fixed prior)": MethodStyle("indigo", "x", ":"),
    "Gibbs": MethodStyle("tab:orange", "^", "-."),
    "Gibbs-ARD": MethodStyle("tab:brown", "v", "-."),
}
_FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "P", "*")
#: Sideways shift between neighbouring methods in the true-vs-estimate panels, as a share
#: of the truth's range (the paper shifts its two methods by -0.01 and +0.01).
_OFFSET_SHARE = 0.005
#: Padding of clipped y-limits, as a share of the range they cover.
_PAD_SHARE = 0.1
#: Largest distance of the jittered binary training points from 0 and 1 (Figure 6B).
_JITTER = 0.04


def method_styles(methods: Iterable[str]) -> dict[str, MethodStyle]:
    """Style of each method label: :data:`METHOD_STYLES` where known.

    An unknown label gets a colour of the matplotlib cycle (``"C0"`` to ``"C9"``) and a
    marker, both picked from a checksum of the label, so that it is drawn alike in every
    figure whatever the other methods.

    Parameters
    ----------
    methods : iterable of str
        Method labels.

    Returns
    -------
    dict of str to MethodStyle
        Keyed by the distinct labels, in order of first appearance.
    """
    styles = {}
    for method in dict.fromkeys(methods):
        if method in METHOD_STYLES:
            styles[method] = METHOD_STYLES[method]
        else:
            checksum = zlib.crc32(method.encode())
            marker = _FALLBACK_MARKERS[checksum % len(_FALLBACK_MARKERS)]
            styles[method] = MethodStyle(f"C{checksum % 10}", marker, "-")
    return styles


def coefficient_panel(
    ax: Axes, rows: pd.DataFrame, *, styles: Mapping[str, MethodStyle] | None = None
) -> None:
    """True vs estimated coefficients of one example (Figures 1A, 2A, 4A and 5A).

    Each method's means are drawn with its marker and its 95% intervals as thin vertical
    bars where both ends are finite; methods are shifted sideways by 0.5% of the truth's
    range each so that their intervals do not overlap. The dashed black line is the
    identity. The y-limits cover the truth and the means of every method except maximum
    likelihood (labels starting with ``"ML"``), padded by 10%: maximum likelihood can be
    far off (2.6.3, "mostly outside of plotted range").

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    rows : pandas.DataFrame
        Rows of the ``coefficients`` table for one example: ``method``, ``truth``,
        ``mean``, ``lower``, ``upper``.
    styles : mapping of str to MethodStyle, optional
        Style of each method (default: :func:`method_styles` of the rows' methods).
    """
    _estimates_against_truth(ax, rows, styles)
    _clip_y(ax, rows["truth"], _non_ml_means(rows))
    ax.set_xlabel("true coefficient $w_i$")
    ax.set_ylabel("estimated coefficient")


def prediction_panel(
    ax: Axes,
    rows: pd.DataFrame,
    xlabel: str,
    ylabel: str,
    *,
    probabilities: bool = False,
    styles: Mapping[str, MethodStyle] | None = None,
) -> None:
    """True vs predicted outputs of one example (Figures 1B, 2B and 5B).

    Drawn as :func:`coefficient_panel` (means, 95% intervals where finite, sideways shifts,
    identity line, y-limits clipped to the truth and the non-ML means).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    rows : pandas.DataFrame
        Rows of the ``predictions`` table for one example: ``method``, ``truth``, ``mean``,
        ``lower``, ``upper``.
    xlabel, ylabel : str
        Axis labels.
    probabilities : bool
        The outputs are class probabilities (3.6.2): both axes span [0, 1] and the
        quadrants where the predicted class is the less probable one are shaded red, as in
        Figure 5B.
    styles : mapping of str to MethodStyle, optional
        Style of each method (default: :func:`method_styles` of the rows' methods).
    """
    _estimates_against_truth(ax, rows, styles)
    if probabilities:
        for left, bottom in ((0.0, 0.5), (0.5, 0.0)):
            ax.fill_between(
                [left, left + 0.5], bottom, bottom + 0.5, color="red", alpha=0.08, linewidth=0
            )
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
    else:
        _clip_y(ax, rows["truth"], _non_ml_means(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def selection_panel(ax: Axes, rows: pd.DataFrame, loss_label: str) -> Axes:
    """Variational bound and losses over the polynomial order (Figures 3A and 6A).

    The bound is the black curve on the left axis, the true order a dashed vertical line
    and the order with the largest bound a star. Training (solid) and test (dashed) loss
    are red curves on a twin right axis.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    rows : pandas.DataFrame
        Rows of the ``selection`` table for one example: ``order``, ``true_order``,
        ``bound``, ``train_loss``, ``test_loss``.
    loss_label : str
        Label of the right axis, e.g. ``"mean squared error"`` or ``"0-1 loss"``.

    Returns
    -------
    matplotlib.axes.Axes
        The twin axes of the losses.
    """
    rows = rows.sort_values("order")
    order = rows["order"].to_numpy()
    bound = rows["bound"].to_numpy(dtype=float)
    best = np.nanargmax(bound)
    true_order = rows["true_order"].iloc[0]
    ax.plot(order, bound, color="black", marker="o", markersize=3, label="variational bound")
    ax.axvline(true_order, color="black", linestyle="--", linewidth=0.8, label="true order")
    ax.plot(
        order[best],
        bound[best],
        linestyle="none",
        marker="*",
        markersize=12,
        color="gold",
        markeredgecolor="black",
        label=f"largest bound (k = {order[best]})",
    )
    ax.set_xticks(order)
    ax.set_xlabel("polynomial order $k$")
    ax.set_ylabel(r"variational bound $\mathcal{L}(Q)$")
    loss_ax = ax.twinx()
    loss_ax.plot(order, rows["train_loss"], color="tab:red", label="training loss")
    loss_ax.plot(order, rows["test_loss"], color="tab:red", linestyle="--", label="test loss")
    loss_ax.set_ylabel(loss_label, color="tab:red")
    loss_ax.tick_params(axis="y", colors="tab:red")
    handles, labels = ax.get_legend_handles_labels()
    loss_handles, loss_labels = loss_ax.get_legend_handles_labels()
    loss_ax.legend(handles + loss_handles, labels + loss_labels, fontsize="small")
    return loss_ax


def curve_panel(
    ax: Axes,
    rows: pd.DataFrame,
    points: pd.DataFrame,
    ylabel: str,
    *,
    styles: Mapping[str, MethodStyle] | None = None,
) -> None:
    """Truth and predictions over a 1-D input (Figures 3B and 6B).

    The truth is the black curve; each method's mean is a curve in its style, with its 95%
    band shaded where both ends are finite. Real-valued training outputs (2.6.4) are black
    crosses; binary ones (every ``y`` is -1 or +1, 3.6.3) are drawn at 1 (``y = +1``,
    ``+``) and 0 (``y = -1``, ``o``), moved towards 0.5 by up to 0.04 (fixed jitter) so
    that they do not hide each other. The y-limits cover the truth, the training points
    and the means of every method but maximum likelihood, padded by 10%.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    rows : pandas.DataFrame
        Rows of the ``predictions`` table for one example: ``method``, ``x``, ``truth``,
        ``mean``, ``lower``, ``upper``.
    points : pandas.DataFrame
        Rows of the ``points`` table for the same example: ``x``, ``y``.
    ylabel : str
        Label of the y-axis.
    styles : mapping of str to MethodStyle, optional
        Style of each method (default: :func:`method_styles` of the rows' methods).
    """
    styles = _styles_for(rows, styles)
    curves = {method: group.sort_values("x") for method, group in _by_method(rows)}
    first = next(iter(curves.values()))
    ax.plot(first["x"], first["truth"], color="black", linewidth=1.5, label="truth")
    for method, curve in curves.items():
        style = styles[method]
        x, lower, upper = (
            curve[column].to_numpy(dtype=float) for column in ("x", "lower", "upper")
        )
        finite = np.isfinite(lower) & np.isfinite(upper)
        if finite.any():
            ax.fill_between(
                x[finite], lower[finite], upper[finite], color=style.color, alpha=0.15, linewidth=0
            )
        ax.plot(x, curve["mean"], color=style.color, linestyle=style.linestyle, label=method)
    x, y = points["x"].to_numpy(dtype=float), points["y"].to_numpy(dtype=float)
    if np.isin(y, (-1.0, 1.0)).all():
        jitter = np.random.default_rng(0).uniform(0.0, _JITTER, y.size)
        heights = np.where(y > 0, 1.0 - jitter, jitter)
        _class_points(ax, x, heights, y)
    else:
        heights = y
        ax.plot(x, y, linestyle="none", marker="x", color="black", label="training data")
    _clip_y(ax, first["truth"], heights, _non_ml_means(rows))
    ax.set_xlabel("$x$")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")


def hyperplane_panel(
    ax: Axes,
    coefficients_rows: pd.DataFrame,
    points: pd.DataFrame,
    *,
    styles: Mapping[str, MethodStyle] | None = None,
) -> None:
    """Training points and separating lines of 3.6.1 (Figure 4B).

    The points are drawn in the plane of the second and third inputs, ``+`` for
    ``y = +1`` and ``o`` for ``y = -1``. For the truth (black) and each method's means,
    the line ``w1 + x2 w2 + x3 w3 = 0`` is drawn across the range of the data, to which the
    axes are limited (padded by 5%); a method whose ``w2`` and ``w3`` are both 0 has no
    line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    coefficients_rows : pandas.DataFrame
        Rows of the ``coefficients`` table for 3.6.1: ``method``, ``index`` (0, 1, 2),
        ``truth``, ``mean``.
    points : pandas.DataFrame
        Rows of the ``points`` table for 3.6.1: ``x`` (second input), ``x2`` (third input),
        ``y`` (-1 or +1).
    styles : mapping of str to MethodStyle, optional
        Style of each method (default: :func:`method_styles` of the rows' methods).
    """
    styles = _styles_for(coefficients_rows, styles)
    x, x2, y = (points[column].to_numpy(dtype=float) for column in ("x", "x2", "y"))
    box = ((x.min(), x.max()), (x2.min(), x2.max()))
    _class_points(ax, x, x2, y)
    weights = {
        method: group.sort_values("index") for method, group in _by_method(coefficients_rows)
    }
    first = next(iter(weights.values()))
    _separating_line(ax, first["truth"].to_numpy(), box, color="black", label="truth")
    for method, group in weights.items():
        style = styles[method]
        _separating_line(
            ax,
            group["mean"].to_numpy(),
            box,
            color=style.color,
            linestyle=style.linestyle,
            label=method,
        )
    for (low, high), set_limits in zip(box, (ax.set_xlim, ax.set_ylim), strict=True):
        pad = 0.05 * ((high - low) or 1.0)
        set_limits(low - pad, high + pad)
    ax.set_xlabel("$x_2$")
    ax.set_ylabel("$x_3$")
    ax.legend(fontsize="small")


class _FigureSpec(NamedTuple):
    """One figure: its file, suptitle (formatted with ``n_features`` and ``n_informative``
    of the coefficients), the tables its panels read and the panels.
    """

    file_name: str
    title: str
    tables: tuple[str, ...]
    panels: tuple[Callable[[Axes, dict[str, pd.DataFrame], dict[str, MethodStyle]], None], ...]


def _coefficients(ax, rows, styles):
    coefficient_panel(ax, rows["coefficients"], styles=styles)


def _output_predictions(ax, rows, styles):
    prediction_panel(ax, rows["predictions"], "true test output", "predicted output", styles=styles)


def _probability_predictions(ax, rows, styles):
    prediction_panel(
        ax,
        rows["predictions"],
        "true $P(y = 1 | x)$",
        "predicted $P(y = 1 | x)$",
        probabilities=True,
        styles=styles,
    )


def _squared_error_selection(ax, rows, styles):
    selection_panel(ax, rows["selection"], "mean squared error")


def _zero_one_selection(ax, rows, styles):
    selection_panel(ax, rows["selection"], "0-1 loss")


def _output_curves(ax, rows, styles):
    curve_panel(ax, rows["predictions"], rows["points"], "$y$", styles=styles)


def _probability_curves(ax, rows, styles):
    curve_panel(ax, rows["predictions"], rows["points"], "$P(y = 1 | x)$", styles=styles)


def _hyperplanes(ax, rows, styles):
    hyperplane_panel(ax, rows["coefficients"], rows["points"], styles=styles)


_TRUE_VS_ESTIMATES = ("coefficients", "predictions")
_MODEL_SELECTION = ("selection", "predictions", "points")
_FIGURES = {
    "2.6.1": _FigureSpec(
        "figure_2_6_1.png",
        "Drugowitsch 2.6.1: estimation of {n_features} regression coefficients",
        ("coefficients",),
        (_coefficients,),
    ),
    "2.6.2": _FigureSpec(
        "figure_1_linear_highdim.png",
        "Drugowitsch 2.6.2: {n_features}-dimensional linear regression (Figure 1)",
        _TRUE_VS_ESTIMATES,
        (_coefficients, _output_predictions),
    ),
    "2.6.3": _FigureSpec(
        "figure_2_linear_sparse.png",
        "Drugowitsch 2.6.3: {n_features}-dimensional linear regression, "
        "{n_informative} informative inputs (Figure 2)",
        _TRUE_VS_ESTIMATES,
        (_coefficients, _output_predictions),
    ),
    "2.6.4": _FigureSpec(
        "figure_3_linear_modelsel.png",
        "Drugowitsch 2.6.4: polynomial order by the variational bound (Figure 3)",
        _MODEL_SELECTION,
        (_squared_error_selection, _output_curves),
    ),
    "3.6.1": _FigureSpec(
        "figure_4_logit_coefficients.png",
        "Drugowitsch 3.6.1: logistic regression coefficients and separating lines (Figure 4)",
        ("coefficients", "points"),
        (_coefficients, _hyperplanes),
    ),
    "3.6.2": _FigureSpec(
        "figure_5_logit_highdim.png",
        "Drugowitsch 3.6.2: {n_features}-dimensional logistic regression, "
        "{n_informative} informative inputs (Figure 5)",
        _TRUE_VS_ESTIMATES,
        (_coefficients, _probability_predictions),
    ),
    "3.6.3": _FigureSpec(
        "figure_6_logit_modelsel.png",
        "Drugowitsch 3.6.3: polynomial order of logistic regression by the variational "
        "bound (Figure 6)",
        _MODEL_SELECTION,
        (_zero_one_selection, _probability_curves),
    ),
}


#: File name of each example's figure.
FIGURE_FILES = {example: spec.file_name for example, spec in _FIGURES.items()}


def linlogit_figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    """Draw the figure of every example present in ``tables``.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Long tables keyed ``"coefficients"``, ``"predictions"``, ``"selection"`` and
        ``"points"`` (absent keys count as empty), each with a column ``example``
        (``"2.6.1"`` to ``"3.6.3"``):

        * ``coefficients``: ``method, index, truth, mean, lower, upper``;
        * ``predictions``: ``method, index, x, truth, mean, lower, upper``;
        * ``selection``: ``order, true_order, bound, train_loss, test_loss``;
        * ``points``: ``x, x2, y``.

        ``lower`` and ``upper`` bound 95% intervals, NaN where a method has none.

    Returns
    -------
    dict of str to matplotlib.figure.Figure
        Keyed by file name (see the module docstring), in the order of the paper's examples,
        for the examples found in any table. Two-panel figures have panels titled "A" and
        "B" side by side; every figure has a suptitle naming the paper's example.

    Raises
    ------
    ValueError
        If an example is present but a table its figure needs has no rows for it.
    """
    present = {example for table in tables.values() for example in table["example"].unique()}
    labels = [
        method
        for name in ("coefficients", "predictions")
        if name in tables
        for method in tables[name]["method"]
    ]
    styles = method_styles(labels)
    figures = {}
    for example, spec in _FIGURES.items():
        if example in present:
            rows = {name: _example_rows(tables, name, example) for name in spec.tables}
            figures[spec.file_name] = _draw_figure(spec, rows, styles)
    return figures


def _draw_figure(
    spec: _FigureSpec, rows: dict[str, pd.DataFrame], styles: dict[str, MethodStyle]
) -> Figure:
    n_panels = len(spec.panels)
    figure = Figure(figsize=(5.5 * n_panels, 5.0), layout="constrained")
    axes = figure.subplots(1, n_panels, squeeze=False)[0]
    for letter, ax, draw in zip("AB", axes, spec.panels, strict=False):
        draw(ax, rows, styles)
        if n_panels > 1:
            ax.set_title(letter, loc="left", fontweight="bold")
    figure.suptitle(spec.title.format(**_dimensions(rows.get("coefficients"))))
    return figure


def _example_rows(tables: Mapping[str, pd.DataFrame], name: str, example: str) -> pd.DataFrame:
    table = tables.get(name)
    rows = None if table is None else table[table["example"] == example]
    if rows is None or rows.empty:
        raise ValueError(f"example {example} needs rows of the {name!r} table; it has none")
    return rows


def _dimensions(coefficients: pd.DataFrame | None) -> dict[str, int]:
    """``n_features`` and ``n_informative`` (non-zero true coefficients) for the titles."""
    if coefficients is None:
        return {}
    truth = coefficients.drop_duplicates("index")["truth"]
    return {"n_features": len(truth), "n_informative": int((truth != 0).sum())}


def _by_method(rows: pd.DataFrame):
    """``(method, rows)`` pairs in order of first appearance."""
    return rows.groupby("method", sort=False)


def _styles_for(
    rows: pd.DataFrame, styles: Mapping[str, MethodStyle] | None
) -> Mapping[str, MethodStyle]:
    return method_styles(rows["method"]) if styles is None else styles


def _estimates_against_truth(
    ax: Axes, rows: pd.DataFrame, styles: Mapping[str, MethodStyle] | None
) -> None:
    """Means (markers) and finite 95% intervals (thin bars) over the truth, each method
    shifted sideways; the identity line; a legend.
    """
    styles = _styles_for(rows, styles)
    groups = list(_by_method(rows))
    step = _OFFSET_SHARE * (np.ptp(rows["truth"].to_numpy(dtype=float)) or 1.0)
    markersize = 4.0 if max(len(group) for _, group in groups) <= 100 else 2.5
    for position, (method, group) in enumerate(groups):
        style = styles[method]
        x = group["truth"].to_numpy(dtype=float) + (position - (len(groups) - 1) / 2) * step
        lower, upper = group["lower"].to_numpy(dtype=float), group["upper"].to_numpy(dtype=float)
        finite = np.isfinite(lower) & np.isfinite(upper)
        if finite.any():
            ax.vlines(
                x[finite],
                lower[finite],
                upper[finite],
                colors=style.color,
                linewidth=0.4,
                alpha=0.5,
            )
        ax.plot(
            x,
            group["mean"],
            linestyle="none",
            marker=style.marker,
            markersize=markersize,
            color=style.color,
            label=method,
        )
    ax.axline((0.0, 0.0), slope=1.0, color="black", linestyle="--", linewidth=0.6)
    ax.legend(loc="upper left", fontsize="small", markerscale=1.5)


def _non_ml_means(rows: pd.DataFrame) -> pd.Series:
    """Means of every method but maximum likelihood (labels starting with ``"ML"``)."""
    return rows.loc[~rows["method"].str.startswith("ML"), "mean"]


def _clip_y(ax: Axes, *values) -> None:
    """Limit the y-axis to the finite ``values``, padded by 10% of their range."""
    finite = np.concatenate([np.asarray(value, dtype=float).ravel() for value in values])
    finite = finite[np.isfinite(finite)]
    if finite.size:
        low, high = finite.min(), finite.max()
        pad = _PAD_SHARE * ((high - low) or 1.0)
        ax.set_ylim(low - pad, high + pad)


def _class_points(ax: Axes, x: np.ndarray, height: np.ndarray, y: np.ndarray) -> None:
    """Training points of the two classes: ``+`` for ``y = +1``, open ``o`` for ``y = -1``."""
    for label, marker, members in (("y = +1", "+", y > 0), ("y = -1", "o", y < 0)):
        ax.plot(
            x[members],
            height[members],
            linestyle="none",
            marker=marker,
            markersize=5,
            color="black",
            markerfacecolor="none",
            label=label,
        )


def _separating_line(ax: Axes, weights: np.ndarray, box, **line) -> None:
    """The line ``w1 + x w2 + x2 w3 = 0`` across ``box = ((x_low, x_high), (x2_low,
    x2_high))``, solved for the coordinate it depends on most steeply.
    """
    intercept, slope_x, slope_x2 = weights[:3]
    if slope_x2 != 0 and abs(slope_x2) >= abs(slope_x):
        x = np.array(box[0])
        ax.plot(x, -(intercept + slope_x * x) / slope_x2, **line)
    elif slope_x != 0:
        x2 = np.array(box[1])
        ax.plot(-(intercept + slope_x2 * x2) / slope_x, x2, **line)
