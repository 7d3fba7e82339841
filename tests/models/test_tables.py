"""Data frames in, names kept; prediction from a data frame selects its columns by name."""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm.models import (
    GPSVM,
    KernelGKM,
    LinearRegression,
    LinearSVM,
    LogisticRegression,
    MissingDataSVM,
    MixedSVM,
    SpikeSlabSVM,
)

COLUMNS = ["age", "cholesterol", "pressure"]
RNG = np.random.default_rng(3)
X = RNG.normal(size=(80, 3))
Y = np.where(X @ [1.0, -1.0, 0.5] + 0.5 * RNG.normal(size=80) > 0, 1, -1)
FRAME = pd.DataFrame(X, columns=COLUMNS)
GROUPS = np.arange(80) % 8

# Each model built from the frame, and the dimension its columns label.
BUILDERS = {
    "linear": (lambda table: LinearSVM.from_arrays(table, Y, alpha=0.5), "effect"),
    "penalized": (lambda table: MixedSVM.penalized(table, Y), "effect"),
    "random_intercept": (
        lambda table: MixedSVM.random_intercept(table, Y, groups=GROUPS),
        "fixed",
    ),
    "laplace_zero": (lambda table: SpikeSlabSVM.laplace_zero(table, Y), "effect"),
    "gaussian_slab": (lambda table: SpikeSlabSVM.gaussian_slab(table, Y), "effect"),
    "missing": (lambda table: MissingDataSVM.from_arrays(table, Y), "effect"),
    "regression": (lambda table: LinearRegression.from_arrays(table, X[:, 0]), "feature"),
    "logistic": (lambda table: LogisticRegression.from_arrays(table, Y), "feature"),
}


def _fit(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.IdentifiabilityWarning)
        return bayesvm.fit(build(FRAME), "vb")


@pytest.mark.parametrize("name", BUILDERS)
def test_the_column_names_label_the_coefficients(name):
    build, dim = BUILDERS[name]
    fit = _fit(build)
    labels = [str(label) for label in fit.idata.posterior[dim].to_numpy()]
    assert labels[-3:] == COLUMNS
    rows = list(fit.summary().index)
    assert any(COLUMNS[1] in row for row in rows)


@pytest.mark.parametrize("name", BUILDERS)
def test_prediction_from_a_frame_selects_its_columns_by_name(name):
    build, _ = BUILDERS[name]
    fit = _fit(build)
    options = {"groups": GROUPS} if name == "random_intercept" else {}
    from_array = fit.predict(X, **options)
    reordered = FRAME[COLUMNS[::-1]]
    if name == "regression":  # predictions are numbers, equal up to the BLAS's round-off
        assert np.allclose(fit.predict(reordered), from_array, rtol=1e-12, atol=1e-12)
    else:
        assert np.array_equal(fit.predict(reordered, **options), from_array)
    assert np.allclose(
        fit.decision_function(reordered, **options),
        fit.decision_function(X, **options),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("name", BUILDERS)
def test_missing_or_unknown_columns_are_named(name):
    build, _ = BUILDERS[name]
    fit = _fit(build)
    options = {"groups": GROUPS} if name == "random_intercept" else {}
    with pytest.raises(ValueError, match=r"missing \['pressure'\].*not in the model \['bp'\]"):
        fit.predict(FRAME.rename(columns={"pressure": "bp"}), **options)
    with pytest.raises(ValueError, match=r"missing \['pressure'\]"):
        fit.predict(FRAME[COLUMNS[:2]], **options)


def test_the_kernel_models_keep_the_names_and_select_by_them():
    for model in (KernelGKM.from_arrays(FRAME[:40], Y[:40]), GPSVM.from_arrays(FRAME, Y)):
        assert model.feature_names == COLUMNS
        fit = bayesvm.fit(model, "vb")
        reordered = FRAME[COLUMNS[::-1]][:10]
        assert np.allclose(fit.predict_proba(reordered), fit.predict_proba(X[:10]), atol=1e-12)
        with pytest.raises(ValueError, match="not in the model"):
            fit.predict(FRAME.assign(extra=1.0)[:10])


def test_an_array_is_checked_for_its_width():
    fit = _fit(BUILDERS["linear"][0])
    with pytest.raises(ValueError, match="X has 2 features; the model was built with 3"):
        fit.predict(X[:, :2])


def test_a_model_built_from_an_array_says_so_when_given_a_frame():
    fit = bayesvm.fit(LinearSVM.from_arrays(X, Y, alpha=0.5), "vb")
    with pytest.raises(ValueError, match="built from an array"):
        fit.predict(FRAME)
    renamed = FRAME.set_axis(["x0", "x1", "x2"], axis=1)
    assert np.array_equal(fit.predict(renamed), fit.predict(X))


def test_the_general_mixed_model_names_both_designs_and_selects_both():
    fixed = pd.DataFrame({"one": np.ones(80), "dose": X[:, 0]})
    effects = pd.DataFrame(X[:, 1:], columns=["site_a", "site_b"])
    fit = bayesvm.fit(MixedSVM.from_arrays(fixed, Y, Z=effects), "vb")
    assert list(fit.idata.posterior["fixed"].to_numpy()) == ["one", "dose"]
    assert list(fit.idata.posterior["effect"].to_numpy()) == ["site_a", "site_b"]
    expected = fit.decision_function(fixed.to_numpy(), Z_new=effects.to_numpy())
    swapped = fit.decision_function(fixed[["dose", "one"]], Z_new=effects[["site_b", "site_a"]])
    assert np.allclose(swapped, expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"columns of Z_new.*missing \['site_b'\]"):
        fit.decision_function(fixed, Z_new=effects[["site_a"]])


def test_inclusion_probabilities_are_named_by_column():
    fit = _fit(BUILDERS["laplace_zero"][0])
    assert list(fit.inclusion_probabilities().index) == COLUMNS


def test_names_survive_saving_and_loading(tmp_path):
    fit = _fit(BUILDERS["penalized"][0])
    fit.to_netcdf(tmp_path / "fit.nc")
    loaded = bayesvm.load(tmp_path / "fit.nc")
    assert np.array_equal(loaded.predict(FRAME[COLUMNS[::-1]]), fit.predict(X))


def test_integer_column_labels_count_as_no_names():
    model = LinearSVM.from_arrays(pd.DataFrame(X), Y, alpha=0.5)
    assert model.effect_names == ["x0", "x1", "x2"]


def test_non_numeric_columns_are_named():
    with pytest.raises(ValueError, match=r"columns that are not: \['smoker'\]"):
        LinearSVM.from_arrays(FRAME.assign(smoker="yes"), Y, alpha=0.5)
