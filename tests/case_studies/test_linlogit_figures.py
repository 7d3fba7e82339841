import io

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from bayesvm.case_studies.linlogit.figures import (
    METHOD_STYLES,
    coefficient_panel,
    curve_panel,
    hyperplane_panel,
    linlogit_figures,
    method_styles,
    prediction_panel,
    selection_panel,
)

#: "ML" has intervals and one huge estimate, "VB" has intervals, "Laplace" (a label without
#: a known style) has none.
METHODS = ("ML", "VB", "Laplace")
WITH_INTERVALS = ("ML", "VB")
HUGE = 1e6
FILE_NAMES = {
    "2.6.1": "figure_2_6_1.png",
    "2.6.2": "figure_1_linear_highdim.png",
    "2.6.3": "figure_2_linear_sparse.png",
    "2.6.4": "figure_3_linear_modelsel.png",
    "3.6.1": "figure_4_logit_coefficients.png",
    "3.6.2": "figure_5_logit_highdim.png",
    "3.6.3": "figure_6_logit_modelsel.png",
}
TRUE_ORDER, BEST_ORDER = 2, 3


def estimates(rng, example, truth, x=None):
    """Rows of every method for one example; ML's first estimate is huge."""
    rows = []
    for method in METHODS:
        mean = truth + 0.1 * rng.standard_normal(truth.size)
        if method == "ML":
            mean[0] = HUGE
        half_width = 0.2 if method in WITH_INTERVALS else np.nan
        rows.append(
            pd.DataFrame(
                {
                    "example": example,
                    "method": method,
                    "index": np.arange(truth.size),
                    "x": np.nan if x is None else x,
                    "truth": truth,
                    "mean": mean,
                    "lower": mean - half_width,
                    "upper": mean + half_width,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def make_tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    coefficients, predictions = [], []
    for example in ("2.6.1", "2.6.2", "2.6.3", "3.6.1", "3.6.2"):
        truth = np.array([1.0, -2.0, 3.0]) if example == "3.6.1" else rng.standard_normal(5)
        coefficients.append(estimates(rng, example, truth).drop(columns="x"))
    for example in ("2.6.2", "2.6.3"):
        predictions.append(estimates(rng, example, rng.standard_normal(6)))
    probabilities = estimates(rng, "3.6.2", rng.uniform(size=8))
    probabilities["mean"] = probabilities["mean"].clip(0.0, 1.0)
    predictions.append(probabilities)
    grid = np.linspace(-5.0, 5.0, 30)
    predictions.append(estimates(rng, "2.6.4", 0.5 * grid**2, x=grid))
    predictions.append(estimates(rng, "3.6.3", 1.0 / (1.0 + np.exp(-grid)), x=grid))
    orders = np.arange(10)
    selection = pd.concat(
        pd.DataFrame(
            {
                "example": example,
                "order": orders,
                "true_order": TRUE_ORDER,
                "bound": -((orders - BEST_ORDER) ** 2.0),
                "train_loss": 1.0 / (1.0 + orders),
                "test_loss": 1.0 / (1.0 + orders) + 0.01 * orders,
            }
        )
        for example in ("2.6.4", "3.6.3")
    )
    x, x2 = rng.uniform(-2.5, 2.5, 20), rng.uniform(-2.5, 2.5, 20)
    points = pd.concat(
        [
            pd.DataFrame({"example": "3.6.1", "x": x, "x2": x2, "y": np.sign(x2 - x)}),
            pd.DataFrame({"example": "2.6.4", "x": x, "x2": np.nan, "y": 0.5 * x**2}),
            pd.DataFrame({"example": "3.6.3", "x": x, "x2": np.nan, "y": np.sign(x)}),
        ]
    )
    return {
        "coefficients": pd.concat(coefficients, ignore_index=True),
        "predictions": pd.concat(predictions, ignore_index=True),
        "selection": selection,
        "points": points,
    }


@pytest.fixture(scope="module")
def tables():
    return make_tables()


@pytest.fixture
def ax():
    return Figure().subplots()


def rows_of(table, example):
    return table[table["example"] == example]


def legend_texts(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


def test_one_figure_per_example_with_its_panels(tables):
    figures = linlogit_figures(tables)
    assert list(figures) == list(FILE_NAMES.values())
    for example, name in FILE_NAMES.items():
        figure = figures[name]
        titles = [ax.get_title(loc="left") for ax in figure.axes if ax.get_title(loc="left")]
        assert titles == ([] if example == "2.6.1" else ["A", "B"]), name
        assert figure.get_suptitle().startswith(f"Drugowitsch {example}:")
        figure.savefig(io.BytesIO(), format="png", dpi=40)
    # The selection panels carry a twin axis for the losses.
    assert len(figures["figure_3_linear_modelsel.png"].axes) == 3
    assert len(figures["figure_2_6_1.png"].axes) == 1
    assert "5-dimensional" in figures["figure_1_linear_highdim.png"].get_suptitle()


def test_missing_examples_give_no_figure(tables):
    kept = {"2.6.2", "3.6.3"}
    subset = {name: table[table["example"].isin(kept)] for name, table in tables.items()}
    figures = linlogit_figures(subset)
    assert set(figures) == {FILE_NAMES[example] for example in kept}
    assert linlogit_figures({}) == {}


def test_an_example_without_a_table_it_needs_is_an_error(tables):
    without_points = {name: table for name, table in tables.items() if name != "points"}
    with pytest.raises(ValueError, match="points"):
        linlogit_figures(without_points)


def test_methods_keep_their_style_and_unknown_labels_get_one():
    styles = method_styles(["VB", "Laplace", "ML", "VB"])
    assert list(styles) == ["VB", "Laplace", "ML"]
    assert styles["ML"] == METHOD_STYLES["ML"] and styles["VB"] == METHOD_STYLES["VB"]
    assert styles["Laplace"] == method_styles(["Laplace"])["Laplace"]
    assert styles["Laplace"].color.startswith("C")
    assert len(set(METHOD_STYLES.values())) == len(METHOD_STYLES)


def test_coefficient_panel_legend_intervals_and_clipped_limits(tables, ax):
    rows = rows_of(tables["coefficients"], "2.6.2")
    coefficient_panel(ax, rows)
    assert legend_texts(ax) == list(METHODS)
    bars = [item for item in ax.collections if isinstance(item, LineCollection)]
    colours = {to_hex(bar.get_color()[0]) for bar in bars}
    assert colours == {to_hex(METHOD_STYLES[method].color) for method in WITH_INTERVALS}
    assert all(len(bar.get_segments()) == 5 for bar in bars)
    low, high = ax.get_ylim()
    assert low <= rows["truth"].min() and rows["truth"].max() <= high
    assert high < HUGE / 100
    # Methods are shifted sideways so that their intervals do not overlap.
    first_points = {line.get_label(): line.get_xdata()[0] for line in ax.lines[:3]}
    assert len(set(first_points.values())) == 3


def test_prediction_panel_of_probabilities_spans_zero_to_one(tables, ax):
    rows = rows_of(tables["predictions"], "3.6.2")
    prediction_panel(ax, rows, "true", "predicted", probabilities=True)
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim() == (0.0, 1.0)
    assert ax.get_xlabel() == "true" and ax.get_ylabel() == "predicted"
    assert legend_texts(ax) == list(METHODS)


def test_selection_panel_marks_the_largest_bound_and_the_true_order(tables, ax):
    loss_ax = selection_panel(ax, rows_of(tables["selection"], "3.6.3"), "0-1 loss")
    lines = {line.get_label(): line for line in ax.lines}
    best = lines[f"largest bound (k = {BEST_ORDER})"]
    assert list(best.get_xdata()) == [BEST_ORDER]
    assert list(lines["true order"].get_xdata()) == [TRUE_ORDER, TRUE_ORDER]
    assert lines["true order"].get_linestyle() == "--"
    assert [line.get_linestyle() for line in loss_ax.lines] == ["-", "--"]
    assert loss_ax.get_ylabel() == "0-1 loss"


def test_hyperplane_panel_draws_one_line_per_method_and_the_truth(tables, ax):
    coefficients = rows_of(tables["coefficients"], "3.6.1")
    points = rows_of(tables["points"], "3.6.1")
    hyperplane_panel(ax, coefficients, points)
    drawn = [line.get_label() for line in ax.lines if line.get_linestyle() != "None"]
    assert drawn == ["truth", *METHODS]
    truth_line = ax.lines[2]
    # The true line 1 - 2 x + 3 x2 = 0 across the data.
    x, x2 = truth_line.get_xydata().T
    np.testing.assert_allclose(1.0 - 2.0 * x + 3.0 * x2, 0.0, atol=1e-12)
    assert x.min() == pytest.approx(points["x"].min()) and x.max() == pytest.approx(
        points["x"].max()
    )
    assert {"y = +1", "y = -1"} <= set(legend_texts(ax))


def test_curve_panel_shades_bands_only_where_intervals_exist(tables, ax):
    rows = rows_of(tables["predictions"], "3.6.3")
    points = rows_of(tables["points"], "3.6.3")
    curve_panel(ax, rows, points, "P(y = 1 | x)")
    bands = [item for item in ax.collections if isinstance(item, PolyCollection)]
    assert len(bands) == len(WITH_INTERVALS)
    lines = {line.get_label(): line for line in ax.lines}
    assert {"truth", *METHODS} <= set(lines)
    positive, negative = lines["y = +1"].get_ydata(), lines["y = -1"].get_ydata()
    assert np.all((positive > 0.9) & (positive <= 1.0))
    assert np.all((negative >= 0.0) & (negative < 0.1))
    assert lines["y = +1"].get_marker() != lines["y = -1"].get_marker()
