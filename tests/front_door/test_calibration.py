"""Reliability diagrams and Brier scores of classifier fits (:mod:`bayesvm.calibration`)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import bayesvm
from bayesvm.calibration import TABLE_COLUMNS, calibration_bins
from bayesvm.models import LinearRegression, MixedSVM

from conftest import simulate_logistic


def test_bins_of_a_hand_made_example():
    probabilities = np.array([0.05, 0.15, 0.12, 0.5, 0.95, 1.0, 0.25])
    positive = np.array([False, True, False, False, True, True, True])
    bins = calibration_bins(probabilities, positive, n_bins=4)
    np.testing.assert_allclose(bins["lower"], [0.0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(bins["upper"], [0.25, 0.5, 0.75, 1.0])
    # [0, .25): .05, .15, .12; [.25, .5): .25; [.5, .75): .5; [.75, 1]: .95 and 1
    np.testing.assert_array_equal(bins["count"], [3, 1, 1, 2])
    np.testing.assert_allclose(bins["mean_predicted"], [0.32 / 3, 0.25, 0.5, 0.975])
    np.testing.assert_allclose(bins["observed_frequency"], [1 / 3, 1.0, 0.0, 1.0])


def test_an_empty_bin_has_no_mean():
    bins = calibration_bins(np.array([0.1, 0.9]), np.array([False, True]), n_bins=3)
    np.testing.assert_array_equal(bins["count"], [1, 0, 1])
    assert np.isnan(bins["mean_predicted"][1]) and np.isnan(bins["observed_frequency"][1])


def test_table_bins_each_fit_predictions(svm_fits_by_method):
    X, y, fits = svm_fits_by_method
    table = bayesvm.calibration_table(fits, X, y, n_bins=5)
    assert list(table.columns) == TABLE_COLUMNS
    assert table.index.names == ["fit", "bin"]
    assert list(table.index.get_level_values("fit").unique()) == list(fits)
    for label, fit in fits.items():
        expected = calibration_bins(fit.predict_proba(X)[:, 1], y == fit.model.classes[1], 5)
        for column in TABLE_COLUMNS:
            np.testing.assert_array_equal(table.loc[label, column].to_numpy(), expected[column])
        assert table.loc[label, "count"].sum() == y.size


def test_brier_score_is_the_mean_squared_error_of_the_probability(svm_fits_by_method):
    X, y, fits = svm_fits_by_method
    scores = bayesvm.brier_scores(fits, X, y)
    for label, fit in fits.items():
        p = fit.predict_proba(X)[:, 1]
        assert scores[label] == pytest.approx(np.mean((p - (y == 1)) ** 2), rel=1e-12)


def test_labels_in_the_fit_coding_and_groups_for_random_intercepts():
    X, y = simulate_logistic(60, 2, seed=4)
    labels = np.where(y > 0, "sick", "healthy")
    groups = np.arange(60) % 5
    fit = bayesvm.fit(MixedSVM.random_intercept(X, labels, groups=groups), "vb", seed=0)
    table = bayesvm.calibration_table(fit, X, labels, groups=groups)
    positive = labels == fit.model.classes[1]
    p = fit.predict_proba(X, groups=groups)[:, 1]
    np.testing.assert_array_equal(
        table.loc["vb", "observed_frequency"], calibration_bins(p, positive)["observed_frequency"]
    )
    assert bayesvm.brier_scores(fit, X, labels, groups=groups)["vb"] == pytest.approx(
        np.mean((p - positive) ** 2)
    )


def test_plot_draws_one_curve_per_fit_with_its_brier_score(svm_fits_by_method):
    X, y, fits = svm_fits_by_method
    ax = bayesvm.plot_calibration(fits, X, y, n_bins=5)
    scores = bayesvm.brier_scores(fits, X, y)
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert legend == ["perfectly calibrated"] + [
        f"{label} (Brier {scores[label]:.3f})" for label in fits
    ]
    table = bayesvm.calibration_table(fits, X, y, n_bins=5)
    for line, label in zip(ax.get_lines()[1:], fits, strict=True):
        rows = table.loc[label].query("count > 0")
        np.testing.assert_allclose(line.get_xdata(), rows["mean_predicted"])
        np.testing.assert_allclose(line.get_ydata(), rows["observed_frequency"])
    plt.close("all")


@pytest.mark.parametrize("method", ["vb", "gibbs", "nuts"])
def test_plot_runs_on_a_single_fit_and_a_given_axes(svm_fits_by_method, method):
    X, y, fits = svm_fits_by_method
    _, ax = plt.subplots()
    assert bayesvm.plot_calibration(fits[method], X, y, ax=ax) is ax
    assert len(ax.get_lines()) == 2
    plt.close("all")


def test_refuses_a_regression_and_unknown_labels(svm_fits_by_method):
    X, y, fits = svm_fits_by_method
    regression = bayesvm.fit(LinearRegression.from_arrays(X, X[:, 0]), "vb")
    with pytest.raises(ValueError, match="regression"):
        bayesvm.calibration_table(regression, X, X[:, 0])
    with pytest.raises(ValueError, match=r"labels \[2\]"):
        bayesvm.brier_scores(fits["vb"], X, np.where(y > 0, 2, -1))
    with pytest.raises(ValueError, match="rows"):
        bayesvm.brier_scores(fits["vb"], X, y[:-1])
