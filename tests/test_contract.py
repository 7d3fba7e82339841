"""Every method returns InferenceData with identical posterior names, dims and coords."""

import numpy as np
import pytest

import bayesvm
from bayesvm.models import LinearSVM, MixedSVM

from conftest import simulate_logistic

X, Y = simulate_logistic(50, 3, seed=12)
FAST = {
    "vb": {},
    "gibbs": {"draws": 200, "tune": 100, "chains": 2, "progressbar": False},
    "nuts": {"draws": 100, "tune": 100, "chains": 1, "progressbar": False},
    "em": {},
    "ecme": {},
}
MODELS = {
    "ridge-fixed": LinearSVM.from_arrays(X, Y, alpha=0.5),
    "ridge-learned": LinearSVM.from_arrays(X, Y),
    "lasso-fixed": LinearSVM.from_arrays(X, Y, prior="lasso", alpha=0.5),
    "lasso-learned": LinearSVM.from_arrays(X, Y, prior="lasso"),
    "mixed-penalized": MixedSVM.penalized(X, Y),
}


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
