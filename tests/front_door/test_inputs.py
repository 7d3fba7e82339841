"""Bad input gets a clear error before any work; every method takes the same options."""

import warnings

import numpy as np
import pytest
import scipy.sparse

import bayesvm
from bayesvm.models import LinearSVM, MixedSVM, SpikeSlabSVM
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
