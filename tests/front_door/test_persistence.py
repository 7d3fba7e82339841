"""A fit written by ``Fit.to_netcdf`` and read by ``bayesvm.load`` behaves like the original;
files cut short, of another program or of a newer bayesvm are refused."""

import os
import re
from dataclasses import dataclass, fields, is_dataclass

import arviz as az
import h5py
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesvm
from bayesvm.fit_file import FORMAT_VERSION, model_from_dataset, model_to_dataset
from bayesvm.models import (
    FixedGaussian,
    Laplace,
    LearnedGaussian,
    LinearRegression,
    LinearSVM,
    LogisticRegression,
    MissingDataSVM,
    MixedSVM,
)

from conftest import NUTS_LAYOUT_ONLY, simulate_logistic

X, Y = simulate_logistic(60, 3, seed=3)
X_NEW = np.random.default_rng(1).standard_normal((15, 3))
D_MISSING = np.where(np.random.default_rng(4).random(X.shape) < 0.15, np.nan, X)
D_NEW_MISSING = np.where(np.random.default_rng(5).random(X_NEW.shape) < 0.3, np.nan, X_NEW)
Y_REAL = X @ [1.0, -2.0, 0.5] + np.random.default_rng(2).standard_normal(60)
INT_GROUPS = np.arange(60) % 6 * 10
STR_GROUPS = np.array([f"clinic-{g}" for g in INT_GROUPS])
MCMC = {"draws": 100, "tune": 100, "chains": 1, "progressbar": False}

# (model, method, fit options, keyword arguments of the predictions)
CASES = {
    "ridge-alpha-vb": (lambda: LinearSVM.from_arrays(X, Y, alpha=0.5), "vb", {}, {}),
    "ridge-alpha-em": (lambda: LinearSVM.from_arrays(X, Y, alpha=0.5), "em", {}, {}),
    "ridge-alpha-gibbs": (lambda: LinearSVM.from_arrays(X, Y, alpha=0.5), "gibbs", MCMC, {}),
    "ridge-alpha-nuts": (
        lambda: LinearSVM.from_arrays(X, Y, alpha=0.5),
        "nuts",
        NUTS_LAYOUT_ONLY,
        {},
    ),
    "ridge-nu-vb": (lambda: LinearSVM.from_arrays(X, Y), "vb", {}, {}),
    "ridge-nu-ecme": (lambda: LinearSVM.from_arrays(X, Y), "ecme", {}, {}),
    "lasso-alpha-em": (lambda: LinearSVM.from_arrays(X, Y, prior="lasso", alpha=0.5), "em", {}, {}),
    "lasso-nu-gibbs": (lambda: LinearSVM.from_arrays(X, Y, prior="lasso"), "gibbs", MCMC, {}),
    "lasso-nu-ecme": (lambda: LinearSVM.from_arrays(X, Y, prior="lasso"), "ecme", {}, {}),
    "ridge-std-vb": (
        lambda: LinearSVM.from_arrays(X, Y, alpha=0.5, feature_scale="std"),
        "vb",
        {},
        {},
    ),
    "string-labels-vb": (
        lambda: LinearSVM.from_arrays(
            X, np.where(Y > 0, "spam", "ham"), alpha=0.5, positive_class="ham"
        ),
        "vb",
        {},
        {},
    ),
    "object-labels-frame-vb": (
        lambda: LinearSVM.from_frame(
            pd.DataFrame(X, columns=["age", "dose", "weight"]).assign(
                outcome=np.where(Y > 0, "cured", "ill").astype(object)
            ),
            "outcome",
            alpha=0.5,
        ),
        "vb",
        {},
        {},
    ),
    "bool-labels-em": (lambda: LinearSVM.from_arrays(X, Y > 0, alpha=0.5), "em", {}, {}),
    "penalized-vb": (lambda: MixedSVM.penalized(X, Y), "vb", {}, {}),
    "penalized-ecme": (lambda: MixedSVM.penalized(X, Y), "ecme", {}, {}),
    "int-groups-vb": (
        lambda: MixedSVM.random_intercept(X[:, :2], Y, groups=INT_GROUPS),
        "vb",
        {},
        {"groups": np.append(INT_GROUPS[:14], 999)},
    ),
    "int-groups-gibbs": (
        lambda: MixedSVM.random_intercept(X[:, :2], Y, groups=INT_GROUPS),
        "gibbs",
        MCMC,
        {"groups": np.append(INT_GROUPS[:14], 999)},
    ),
    "str-groups-ecme": (
        lambda: MixedSVM.random_intercept(X[:, :2], Y, groups=STR_GROUPS),
        "ecme",
        {},
        {"groups": np.append(STR_GROUPS[:14], "unseen")},
    ),
    "general-vb": (
        lambda: MixedSVM.from_arrays(np.ones((60, 1)), Y, Z=X),
        "vb",
        {},
        {"Z_new": X_NEW},
    ),
    "missing-vb": (lambda: MissingDataSVM.from_arrays(D_MISSING, Y), "vb", {}, {}),
    "missing-gibbs": (lambda: MissingDataSVM.from_arrays(D_MISSING, Y), "gibbs", MCMC, {}),
    "regression-vb": (lambda: LinearRegression.from_arrays(X, Y_REAL), "vb", {}, {}),
    "regression-ard-vb": (lambda: LinearRegression.from_arrays(X, Y_REAL, ard=True), "vb", {}, {}),
    "regression-alpha-gibbs": (
        lambda: LinearRegression.from_arrays(X, Y_REAL, alpha=1.0),
        "gibbs",
        MCMC,
        {},
    ),
    "regression-alpha-vb": (
        lambda: LinearRegression.from_arrays(X, Y_REAL, alpha=1.0),
        "vb",
        {},
        {},
    ),
    "logistic-vb": (lambda: LogisticRegression.from_arrays(X, Y), "vb", {}, {}),
    "logistic-ard-vb": (lambda: LogisticRegression.from_arrays(X, Y, ard=True), "vb", {}, {}),
    "logistic-fixed-prior-vb": (
        lambda: LogisticRegression.from_arrays(X, Y, hyperprior=False),
        "vb",
        {},
        {},
    ),
}


def save_and_load(case: str, directory):
    """``(original, loaded, prediction keyword arguments, file)`` for one of :data:`CASES`."""
    make_model, method, options, predict_kwargs = CASES[case]
    original = bayesvm.fit(make_model(), method=method, seed=0, **options)
    path = directory / f"{case}.nc"
    original.to_netcdf(path)
    return original, bayesvm.load(path), predict_kwargs, path


@pytest.fixture(scope="module", params=list(CASES))
def round_trip(request, tmp_path_factory):
    return save_and_load(request.param, tmp_path_factory.mktemp("fits"))


def predictions(fit, kwargs) -> dict[str, np.ndarray]:
    """Every prediction the fit's model offers at ``X_NEW``."""
    X_new = X_NEW[:, : fit.model.X.shape[1] - 1] if "groups" in kwargs else X_NEW
    if isinstance(fit.model, LinearRegression):
        result = {"predict": fit.predict(X_new), "decision_function": fit.decision_function(X_new)}
        result.update(zip(["lower", "upper"], fit.predictive_interval(X_new), strict=True))
        if fit.kind == "variational":
            result.update(zip(["mean", "precision", "dof"], fit.predictive(X_new), strict=True))
        return result
    if "Z_new" in kwargs:
        X_new = np.ones((X_NEW.shape[0], 1))
    if isinstance(fit.model, MissingDataSVM):
        X_new = D_NEW_MISSING
    result = {
        "predict": fit.predict(X_new, **kwargs),
        "predict_proba": fit.predict_proba(X_new, **kwargs),
        "decision_function": fit.decision_function(X_new, **kwargs),
    }
    return result


def assert_same_value(original, loaded, name):
    """Equal values of the same type; arrays of the same dtype, labels of the same types."""
    if is_dataclass(original):
        assert type(loaded) is type(original), name
        for field in fields(original):
            assert_same_value(getattr(original, field.name), getattr(loaded, field.name), name)
    elif isinstance(original, np.ndarray):
        assert isinstance(loaded, np.ndarray) and loaded.dtype == original.dtype, name
        np.testing.assert_array_equal(loaded, original, err_msg=name)
    elif isinstance(original, list | tuple):
        assert type(loaded) is type(original) and list(loaded) == list(original), name
        python_type = [type(np.asarray(label).item()) for label in original]
        assert [type(label) for label in loaded] == python_type, name
    else:
        assert type(loaded) is type(original) and loaded == original, name


def test_the_model_is_rebuilt_field_by_field(round_trip):
    original, loaded, _, _ = round_trip
    assert type(loaded) is type(original)
    assert_same_value(original.model, loaded.model, "model")


def test_predictions_are_identical(round_trip):
    original, loaded, kwargs, _ = round_trip
    expected, actual = predictions(original, kwargs), predictions(loaded, kwargs)
    assert actual.keys() == expected.keys()
    for name, values in expected.items():
        assert np.asarray(actual[name]).dtype == np.asarray(values).dtype, name
        np.testing.assert_array_equal(actual[name], values, err_msg=name)


def test_fit_attributes_are_restored(round_trip):
    original, loaded, _, _ = round_trip
    for name in ("method", "kind", "n_iter", "converged", "problems", "runtime_s", "lower_bound"):
        assert getattr(loaded, name) == getattr(original, name), name
    for name in ("lower_bound_trace", "objective_trace"):
        if getattr(original, name) is None:
            assert getattr(loaded, name) is None, name
        else:
            np.testing.assert_array_equal(getattr(loaded, name), getattr(original, name))
    assert original.runtime_s > 0
    assert (original.lower_bound_trace is not None) == (original.kind == "variational")
    assert (original.objective_trace is not None) == (original.kind == "point")


def test_the_reasons_not_to_trust_a_fit_survive(tmp_path):
    X, y = simulate_logistic(60, 3, seed=4)
    with pytest.warns(bayesvm.ConvergenceWarning):
        fit = bayesvm.fit(MixedSVM.penalized(X, y), method="vb", max_iter=2)
    fit.to_netcdf(tmp_path / "fit.nc")
    loaded = bayesvm.load(tmp_path / "fit.nc")
    assert not loaded.converged and loaded.problems == fit.problems
    assert any("max_iter=2" in problem for problem in fit.problems)


def test_inference_data_is_identical_and_left_unchanged(round_trip):
    original, loaded, _, _ = round_trip
    assert sorted(loaded.idata.groups()) == sorted(original.idata.groups())
    assert "model" not in original.idata.groups()
    for group in original.idata.groups():
        xr.testing.assert_identical(loaded.idata[group], original.idata[group])
    assert loaded.idata.attrs == original.idata.attrs


def test_summary_and_compare_match(round_trip):
    original, loaded, _, _ = round_trip
    pd.testing.assert_frame_equal(loaded.summary(), original.summary())
    table = bayesvm.compare({"a": original, "b": loaded})
    pd.testing.assert_frame_equal(
        table.xs("b", level="method"), table.xs("a", level="method"), check_names=False
    )


@pytest.mark.parametrize("method", ["vb", "gibbs"])
def test_summary_takes_arviz_kind(svm_fits_by_method, method):
    """``kind`` chooses ArviZ's columns, as in ``arviz.summary``, for every kind of fit."""
    fit = svm_fits_by_method[2][method]
    diagnostics = fit.summary(kind="diagnostics")
    assert "r_hat" in diagnostics.columns and "mean" not in diagnostics.columns
    stats = fit.summary(kind="stats")
    assert "mean" in stats.columns and "r_hat" not in stats.columns


def test_data_arrays_are_stored_once(round_trip):
    original, _, _, path = round_trip
    stored = xr.load_dataset(path, group="model", engine="h5netcdf")
    data = {
        name
        for group in ("constant_data", "observed_data")
        for name, values in original.idata[group].data_vars.items()
        if np.array_equal(values.to_numpy(), getattr(original.model, name, None))
    }
    assert data >= {"X", "y"}
    assert not data & set(stored.data_vars)


@pytest.mark.parametrize("case", [case for case in CASES if "groups" in CASES[case][3]])
def test_group_labels_keep_their_type_and_select_their_intercept(case, tmp_path):
    _, loaded, kwargs, _ = save_and_load(case, tmp_path)
    labels = kwargs["groups"]
    assert all(isinstance(name, type(labels[0].item())) for name in loaded.model.effect_names)
    X_new = X_NEW[:, :2]
    per_group = loaded.decision_function(X_new, groups=labels)
    population = loaded.decision_function(X_new)
    _, u = loaded.coefficient_means()
    index = [loaded.model.effect_names.index(label) for label in labels[:-1]]
    np.testing.assert_allclose(per_group[:-1], population[:-1] + u[index], rtol=1e-12)
    assert per_group[-1] == population[-1]  # an unseen label gets the population level


@pytest.mark.parametrize(
    "penalty",
    [
        FixedGaussian(variance=np.array(2.0)),
        Laplace(scale=np.array([1.0, 3.0]), nu=None, shape=0.5, rate=2),
        LearnedGaussian(scale=np.ones(2), shape=1.0, rate=1.0, report="nu"),
    ],
)
def test_penalties_round_trip_through_netcdf(penalty, tmp_path):
    model_to_dataset(penalty).to_netcdf(tmp_path / "penalty.nc", engine="h5netcdf")
    loaded = model_from_dataset(xr.load_dataset(tmp_path / "penalty.nc", engine="h5netcdf"))
    assert_same_value(penalty, loaded, "penalty")


def test_numpy_scalars_come_back_as_python_scalars():
    penalty = Laplace(
        scale=np.ones(2), nu=np.float64(0.25), shape=np.float32(0.5), rate=np.int64(2)
    )
    loaded = model_from_dataset(model_to_dataset(penalty))
    assert (loaded.nu, loaded.shape, loaded.rate) == (0.25, 0.5, 2)
    assert [type(v) for v in (loaded.nu, loaded.shape, loaded.rate)] == [float, float, int]


@pytest.fixture(scope="module")
def vb_fit():
    return bayesvm.fit(MixedSVM.random_intercept(X[:, :2], Y, groups=INT_GROUPS), method="vb")


def test_arviz_file_without_the_model_is_refused(vb_fit, tmp_path):
    path = tmp_path / "arviz-only.nc"
    vb_fit.idata.to_netcdf(str(path))
    with pytest.raises(ValueError, match=r"arviz-only\.nc has no 'model' group"):
        bayesvm.load(path)


@pytest.fixture(scope="module")
def saved(vb_fit, tmp_path_factory):
    """The file of ``vb_fit``."""
    path = tmp_path_factory.mktemp("saved") / "fit.nc"
    vb_fit.to_netcdf(path)
    return path


def test_the_file_records_its_format_and_the_bayesvm_that_wrote_it(saved):
    with h5py.File(saved, "r") as file:
        assert file.attrs["bayesvm_version"] == bayesvm.__version__
        assert file["model"].attrs["bayesvm_format"] == FORMAT_VERSION == 1
    assert "bayesvm_version" not in bayesvm.load(saved).idata.attrs


def not_a_fit(kind: str, saved, folder):
    """A file that ``bayesvm.load`` must refuse: a fit cut short, an empty file, an ArviZ file
    or a text file."""
    path = folder / f"{kind}.nc"
    if kind == "first half":
        data = saved.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "arviz":
        az.from_dict(posterior={"beta": np.zeros((2, 10, 3))}).to_netcdf(str(path))
    else:
        path.write_text("not a netCDF file\n")
    return path


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("first half", "is not a complete netCDF-4 file (it is cut short, damaged or of another"),
        ("empty", "is not a complete netCDF-4 file"),
        ("arviz", "has no 'model' group (it has ['posterior']): it is not a fit written by"),
        ("text", "is not a complete netCDF-4 file"),
    ],
)
def test_partial_and_foreign_files_are_refused_naming_the_file(saved, tmp_path, kind, message):
    path = not_a_fit(kind, saved, tmp_path)
    with pytest.raises(ValueError) as refused:
        bayesvm.load(path)
    assert str(refused.value).startswith(f"{path} {message}")
    assert "\n" not in str(refused.value)
    with pytest.raises(FileNotFoundError):
        bayesvm.load(tmp_path / "missing.nc")


def test_an_interrupted_save_leaves_the_old_file_and_no_temporary_file(
    vb_fit, saved, tmp_path, monkeypatch
):
    path = tmp_path / "fit.nc"
    path.write_bytes(saved.read_bytes())
    write = az.InferenceData.to_netcdf

    def killed_midway(idata, filename, *args, **kwargs):
        write(idata, filename, *args, **kwargs)
        os.truncate(filename, os.path.getsize(filename) // 2)
        raise KeyboardInterrupt

    monkeypatch.setattr(az.InferenceData, "to_netcdf", killed_midway)
    with pytest.raises(KeyboardInterrupt):
        vb_fit.to_netcdf(path)
    assert path.read_bytes() == saved.read_bytes()
    assert [file.name for file in tmp_path.iterdir()] == ["fit.nc"]


def test_files_of_older_versions_load(vb_fit, saved, tmp_path):
    path = tmp_path / "old.nc"
    path.write_bytes(saved.read_bytes())
    with h5py.File(path, "r+") as file:  # as bayesvm wrote format 1 before it kept its version
        del file.attrs["bayesvm_version"]
    loaded = bayesvm.load(path)
    inputs = {"X_new": X[:, :2], "groups": INT_GROUPS}
    np.testing.assert_array_equal(
        loaded.decision_function(**inputs), vb_fit.decision_function(**inputs)
    )


def test_a_file_of_a_newer_format_is_refused_naming_its_version(saved, tmp_path):
    path = tmp_path / "future.nc"
    path.write_bytes(saved.read_bytes())
    with h5py.File(path, "r+") as file:
        file.attrs["bayesvm_version"] = "9.0"
        file["model"].attrs["bayesvm_format"] = 99
    expected = (
        f"{path} was written by bayesvm 9.0 in file format 99, which this bayesvm "
        f"({bayesvm.__version__}) cannot read: it reads formats up to 1"
    )
    with pytest.raises(ValueError, match=re.escape(expected)):
        bayesvm.load(path)


def test_only_classes_of_bayesvm_models_are_rebuilt(vb_fit, tmp_path):
    path = tmp_path / "fit.nc"
    vb_fit.to_netcdf(path)
    with az.rc_context({"data.load": "eager"}):
        idata = az.from_netcdf(path)
    idata["model"].attrs["spec"] = idata["model"].attrs["spec"].replace("MixedSVM", "Popen")
    idata.to_netcdf(str(tmp_path / "tampered.nc"))
    with pytest.raises(
        ValueError, match=r"tampered\.nc: cannot rebuild the model: unknown model class 'Popen'"
    ):
        bayesvm.load(tmp_path / "tampered.nc")


def test_models_outside_bayesvm_and_unstorable_fields_are_refused_when_saving(vb_fit, tmp_path):
    @dataclass(frozen=True, eq=False)
    class CustomSVM(MixedSVM):
        pass

    model = vb_fit.model
    custom = CustomSVM(**{field.name: getattr(model, field.name) for field in fields(model)})
    with pytest.raises(TypeError, match="only the classes exported by bayesvm.models"):
        model_to_dataset(custom)
    for labels in (["a", 1], ["a", None]):
        with pytest.raises(TypeError, match="'variance': its elements must share one type"):
            model_to_dataset(FixedGaussian(variance=np.array(labels, dtype=object)))
    with pytest.raises(TypeError, match="field 'variance' of type dict"):
        model_to_dataset(FixedGaussian(variance={"a": 1.0}))
