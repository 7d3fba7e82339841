"""Bad input gets a clear error before any work; every method takes the same options."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse

import bayesvm
from bayesvm.models import (
    GPSVM,
    KernelGKM,
    LinearRegression,
    LinearSVM,
    MissingDataSVM,
    MixedSVM,
    SpikeSlabSVM,
)
from bayesvm.registry import DEFAULT_SEED

RNG = np.random.default_rng(11)
X = RNG.normal(size=(60, 3))
Y = np.where(X[:, 0] + 0.5 * RNG.normal(size=60) > 0, 1, -1)


def test_a_sparse_matrix_is_refused_with_the_way_out():
    with pytest.raises(ValueError, match=r"scipy.sparse matrix of shape \(60, 3\).*toarray"):
        LinearSVM.from_arrays(scipy.sparse.csr_matrix(X), Y, alpha=0.5)
    fit = bayesvm.fit(LinearSVM.from_arrays(X, Y, alpha=0.5), "vb")
    with pytest.raises(ValueError, match="scipy.sparse"):
        fit.predict(scipy.sparse.csr_array(X))


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (np.array(["spam", "ham", np.nan] * 20, dtype=object), "missing labels.*rows 2, 5, 8"),
        (np.array(["spam", None] * 30, dtype=object), "missing labels"),
        (np.where(np.arange(60) == 7, np.nan, 1.0), r"NaN or infinite values \(rows 7\)"),
    ],
)
def test_missing_labels_are_found_by_row(labels, message):
    with pytest.raises(ValueError, match=message):
        LinearSVM.from_arrays(X, labels, alpha=0.5)


def test_draws_that_cannot_fit_in_memory_are_refused_before_any_work():
    model = MixedSVM.penalized(X, Y)
    for method in ("vb", "gibbs", "nuts"):
        with pytest.raises(ValueError, match=r"draws=1000000000000 x .* GiB"):
            bayesvm.fit(model, method, draws=10**12)


def test_a_chain_that_breaks_down_says_what_the_data_leave_open():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.IdentifiabilityWarning)
        model = MixedSVM.penalized(X[:2], [1, -1])
    with pytest.raises(bayesvm.NumericalBreakdownError, match="broke down.*separable"):
        bayesvm.fit(model, "gibbs", chains=1, draws=2000, tune=0, progressbar=False)


def test_a_linear_predictor_that_overflows_is_a_breakdown_not_a_numpy_error():
    """Where ``(1 - y f)^2`` overflows, the hinge's inverse-Gaussian draw would fail inside
    NumPy ("mean <= 0"); the block says the fit broke down instead.
    """
    hinge = {block.name: block for block in MixedSVM.penalized(X, Y).blocks}["hinge"]
    chi = np.full(X.shape[0], 4.0)
    chi[3] = np.inf
    with pytest.raises(FloatingPointError, match="ran off.*1 of 60 rows"):
        hinge.sample(chi, np.random.default_rng(0))


def test_the_old_argument_orders_still_work_with_a_warning():
    groups = np.arange(60) % 6
    new = MixedSVM.random_intercept(X, Y, groups=groups)
    with pytest.warns(FutureWarning, match=r"random_intercept\(X, y, groups=groups\)"):
        old = MixedSVM.random_intercept(X, groups, Y)
    assert np.array_equal(old.group_index, new.group_index)
    assert np.array_equal(old.y, new.y)
    Z = X[:, 1:]
    with pytest.warns(FutureWarning, match=r"from_arrays\(X, y, Z=Z\)"):
        old = MixedSVM.from_arrays(X[:, :1], Z, Y)
    assert np.array_equal(old.Z, MixedSVM.from_arrays(X[:, :1], Y, Z=Z).Z)
    with pytest.raises(TypeError, match="needs groups="):
        MixedSVM.random_intercept(X, Y)


@pytest.mark.parametrize(
    ("build", "method"),
    [
        (lambda: LinearSVM.from_arrays(X, Y, alpha=0.5), "vb"),
        (lambda: LinearSVM.from_arrays(X, Y, alpha=0.5), "em"),
        (lambda: MixedSVM.penalized(X, Y), "ecme"),
        (lambda: MixedSVM.penalized(X, Y), "gibbs"),
        (lambda: SpikeSlabSVM.gaussian_slab(X, Y), "rj"),
    ],
)
def test_every_method_takes_progressbar(build, method):
    options = {"draws": 20, "tune": 10, "chains": 1} if method in ("gibbs", "rj") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        fit = bayesvm.fit(build(), method, progressbar=False, **options)
    assert fit.method == method


@pytest.mark.parametrize("method", ["vb", "gibbs"])
def test_the_same_call_gives_the_same_numbers(method):
    model = MixedSVM.penalized(X, Y)
    options = {"draws": 200, "tune": 100, "chains": 2, "progressbar": False}
    options = options if method == "gibbs" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        first, second = (bayesvm.fit(model, method, **options) for _ in range(2))
        other = bayesvm.fit(model, method, seed=DEFAULT_SEED + 1, **options)
    assert first.summary().equals(second.summary())
    for group in ("posterior", "posterior_predictive"):
        assert first.idata[group].equals(second.idata[group])
        assert not first.idata[group].equals(other.idata[group])


@pytest.mark.parametrize("given", [None, X, "penalized"])
def test_fit_and_methods_say_what_a_model_is_when_given_something_else(given):
    for call in (bayesvm.fit, bayesvm.methods):
        with pytest.raises(TypeError, match="expected a model of bayesvm.models"):
            call(given)
    with pytest.raises(TypeError, match="build a model from the data first"):
        bayesvm.fit(X)


def test_missing_data_svm_with_more_features_than_its_prior_and_rows_allow_is_refused():
    """``Sigma_x``'s conditional is an inverse Wishart with ``nu + n`` degrees of freedom,
    proper only above ``d - 1``: at ``d = n + 4`` (``nu = 3``) VB and Gibbs would fail inside
    SciPy and NumPy.
    """
    rng = np.random.default_rng(2)
    n = 20
    labels = np.arange(n) % 2
    D = rng.normal(size=(n, n + 4))
    D[0, 0] = np.nan
    refused = r"nu \+ n_samples > n_features - 1.*nu = 3, n_samples = 20"
    with pytest.raises(ValueError, match=refused):
        MissingDataSVM.from_arrays(D, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.IdentifiabilityWarning)
        model = MissingDataSVM.from_arrays(D[:, :-1], labels)  # nu + n = 23 > 22: proper
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        fit = bayesvm.fit(model, "vb")
    assert np.isfinite(fit.idata.posterior["Sigma_x"]).all()


@pytest.mark.parametrize(
    "build",
    [
        lambda X, y: MixedSVM.penalized(X, y),
        lambda X, y: GPSVM.from_arrays(X, y),
        lambda X, y: KernelGKM.from_arrays(X, y),
        lambda X, y: MissingDataSVM.from_arrays(X, y),
    ],
)
def test_values_too_large_to_square_are_refused_naming_the_column(build):
    frame = pd.DataFrame(X, columns=["age", "dose", "weight"])
    frame.loc[4, "dose"] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning before the error
        with pytest.raises(ValueError, match=r"1e\+300 at row 4, column 'dose'.*rescale"):
            build(frame, Y)
    with pytest.raises(ValueError, match="too large"):
        LinearRegression.from_arrays(X, np.where(np.arange(60) == 2, -1e200, 1.0))


@pytest.mark.parametrize("dtype", ["Float64", "double[pyarrow]"])
def test_pandas_missing_values_are_missing_values(dtype):
    if dtype.endswith("[pyarrow]"):
        pytest.importorskip("pyarrow")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    nan = frame.copy()
    nan.loc[7, "b"] = np.nan
    nullable = nan.astype(dtype)
    assert nullable.loc[7, "b"] is pd.NA
    imputed, reference = (MissingDataSVM.from_arrays(D, Y) for D in (nullable, nan))
    np.testing.assert_array_equal(imputed.missing, reference.missing)
    np.testing.assert_array_equal(np.nan_to_num(imputed.Z), np.nan_to_num(reference.Z))
    framed = MissingDataSVM.from_frame(nullable.assign(y=Y), "y")
    np.testing.assert_array_equal(framed.missing, reference.missing)
    with pytest.raises(ValueError, match=r"missing \(NaN, None, pd.NA\).*row 7, column 'b'"):
        MixedSVM.penalized(nullable, Y)


def test_sample_weight_is_refused_with_the_way_to_weigh_rows():
    from sklearn.model_selection import cross_val_score

    weights = np.ones(60)
    with pytest.raises(TypeError, match="takes no sample_weight.*repeat them"):
        bayesvm.BayesianSVC().fit(X, Y, sample_weight=weights)
    with pytest.raises(TypeError, match="takes no sample_weight"):
        bayesvm.BayesianRegressor().fit(X, X[:, 0], sample_weight=weights)
    with pytest.raises(TypeError, match="takes no verbose: it takes X, y and groups"):
        bayesvm.BayesianSVC().fit(X, Y, verbose=True)
    with pytest.raises(TypeError, match="takes no sample_weight"):
        cross_val_score(
            bayesvm.BayesianSVC(),
            X,
            Y,
            cv=2,
            params={"sample_weight": weights},
            error_score="raise",
        )


def test_a_model_a_registered_backend_supports_is_a_model(monkeypatch):
    """:func:`bayesvm.registry.register` adds a method for models of any class."""
    from bayesvm import registry

    class Tabulated:
        pass

    backend = registry.Backend("table", lambda model: isinstance(model, Tabulated), None)
    monkeypatch.setattr(registry, "_BACKENDS", [*registry.backends(), backend])
    assert bayesvm.methods(Tabulated()) == ["table"]
    with pytest.raises(TypeError, match="expected a model"):
        bayesvm.methods(object())
