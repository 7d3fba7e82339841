"""Every method returns InferenceData with identical posterior names, dims and coords."""

import warnings

import arviz as az
import numpy as np
import pytest
from scipy.special import expit

import bayesvm
from bayesvm.models import (
    LinearRegression,
    LinearSVM,
    LogisticRegression,
    MissingDataSVM,
    MixedSVM,
)

from conftest import NUTS_LAYOUT_ONLY, simulate_logistic

X, Y = simulate_logistic(50, 3, seed=12)
MISSING = np.random.default_rng(12).random(X.shape) < 0.1
FAST = {
    "vb": {},
    "gibbs": {"draws": 200, "tune": 100, "chains": 2, "progressbar": False},
    "nuts": NUTS_LAYOUT_ONLY,
    "em": {},
    "ecme": {},
}
MODELS = {
    "ridge-fixed": LinearSVM.from_arrays(X, Y, alpha=0.5),
    "ridge-learned": LinearSVM.from_arrays(X, Y),
    "lasso-fixed": LinearSVM.from_arrays(X, Y, prior="lasso", alpha=0.5),
    "lasso-learned": LinearSVM.from_arrays(X, Y, prior="lasso"),
    "mixed-penalized": MixedSVM.penalized(X, Y),
    "missing-data": MissingDataSVM.from_arrays(np.where(MISSING, np.nan, X), Y),
}


def assert_pointwise_log_likelihood(fit, n_samples):
    """A sampler's or VB's fit holds ``log_likelihood["y"]`` over ``(chain, draw, obs_id)``,
    finite, which ``az.loo`` reads; a point estimate holds none.
    """
    if fit.kind == "point":
        assert "log_likelihood" not in fit.idata.groups()
        return
    values = fit.idata.log_likelihood["y"]
    assert values.dims == ("chain", "draw", "obs_id") and values.sizes["obs_id"] == n_samples
    assert np.all(np.isfinite(values.to_numpy()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short chains: high Pareto k
        assert np.isfinite(az.loo(fit.idata).elpd_loo)


def _signature(idata):
    post = idata.posterior
    return {
        name: (
            post[name].dims[2:],
            {d: list(post[name][d].to_numpy()) for d in post[name].dims[2:]},
        )
        for name in post.data_vars
    }


@pytest.mark.parametrize("name", list(MODELS))
def test_all_methods_share_names_dims_and_coords(name):
    model = MODELS[name]
    fits = {
        method: bayesvm.fit(model, method=method, seed=0, **FAST[method])
        for method in bayesvm.methods(model)
    }
    assert {"gibbs", "nuts"} <= set(fits)
    reference = _signature(fits["nuts"].idata)
    assert set(reference) == set(model.var_names)
    for method, fit in fits.items():
        assert _signature(fit.idata) == reference, method
        assert {"posterior", "observed_data", "constant_data"} <= set(fit.idata.groups())
        assert fit.runtime_s > 0 and fit.method == method
        proba = fit.predict_proba(X[:5])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert set(fit.predict(X)) <= set(model.classes)
        assert_pointwise_log_likelihood(fit, len(Y))


def test_decision_function_is_the_posterior_mean_of_the_linear_predictor():
    model = MODELS["mixed-penalized"]
    fit = bayesvm.fit(
        model, method="gibbs", seed=0, draws=300, tune=100, chains=1, progressbar=False
    )
    post = fit.idata.posterior
    f_draws = post["beta"].to_numpy()[0, :, 0][:, None] + post["u"].to_numpy()[0] @ X[:4].T
    np.testing.assert_allclose(fit.decision_function(X[:4]), f_draws.mean(axis=0))


def test_string_labels_round_trip():
    labels = np.where(Y > 0, "sick", "healthy")
    fit = bayesvm.fit(MixedSVM.penalized(X, labels))
    assert set(fit.predict(X)) <= {"sick", "healthy"}
    agreement = np.mean((fit.predict(X) == "sick") == (Y > 0))
    assert agreement > 0.6


Y_REAL = X @ [1.0, -2.0, 0.5] + np.random.default_rng(5).standard_normal(len(Y))
# The logistic ARD model's NUTS builds long trajectories while it tunes, which FAST_COMPILE's
# Python code runs slowly (22 s against 10 s compiled): its NUTS is compiled.
COMPILED_NUTS = {**FAST["nuts"], "compile_kwargs": {}}
REGRESSIONS = {
    "linear": LinearRegression.from_arrays(X, Y_REAL),
    "logistic-ard": LogisticRegression.from_arrays(X, Y, ard=True),
    "logistic-fixed-prior": LogisticRegression.from_arrays(X, Y, hyperprior=False),
}


@pytest.mark.parametrize("name", list(REGRESSIONS))
def test_regressions_share_the_fit_interface_across_methods(name):
    """Drugowitsch's models: the same posterior names for every method, ``coefficient_means``
    is ``(w,)``, ``decision_function`` is ``X E[w]``, and a logistic fit's ``predict_proba``
    averages ``sigma(w^T x)`` over ``max_draws`` draws (VB: the closed form of eq. 65-68)."""
    model = REGRESSIONS[name]
    options = {**FAST, "nuts": COMPILED_NUTS} if name == "logistic-ard" else FAST
    fits = {
        method: bayesvm.fit(model, method=method, seed=0, **options[method])
        for method in bayesvm.methods(model)
    }
    assert set(fits) == ({"vb", "gibbs", "nuts"} if name == "linear" else {"vb", "nuts"})
    reference = _signature(fits["nuts"].idata)
    assert set(reference) == set(model.var_names)
    for method, fit in fits.items():
        assert _signature(fit.idata) == reference, method
        (w,) = fit.coefficient_means()
        if fit.is_variational:
            np.testing.assert_array_equal(w, fit.idata["variational"]["w_mean"])
        else:
            np.testing.assert_allclose(w, fit.idata.posterior["w"].mean(("chain", "draw")))
        np.testing.assert_allclose(fit.decision_function(X[:5]), X[:5] @ w)
        assert_pointwise_log_likelihood(fit, len(Y))
        if name == "linear":
            np.testing.assert_allclose(fit.predict(X[:5]), X[:5] @ w)
            continue
        proba = fit.predict_proba(X[:5], max_draws=7)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        if not fit.is_variational:
            draws = fit.idata.posterior["w"].to_numpy().reshape(-1, 3)
            kept = draws[np.linspace(0, len(draws) - 1, 7).astype(int)]
            np.testing.assert_allclose(proba[:, 1], expit(X[:5] @ kept.T).mean(axis=1))
        positive = fit.predict_proba(X[:5])[:, 1] > 0.5
        np.testing.assert_array_equal(fit.predict(X[:5]), np.where(positive, 1, -1))
