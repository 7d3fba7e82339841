"""Every fit holds ``posterior_predictive["y"]``: y replicated from each posterior draw."""

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy.stats import norm

import bayesvm
from bayesvm import results
from bayesvm._arviz import arviz as az
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

from conftest import simulate_logistic

X, Y = simulate_logistic(40, 3, seed=8)
GROUPS = np.arange(40) % 4
MISSING = np.random.default_rng(8).random(X.shape) < 0.1
SHORT = {"chains": 2, "draws": 150, "tune": 100, "progressbar": False}
# (model, method, options): one fit of each kind of model's predictive
CASES = {
    "mixed-random-intercept-gibbs": (
        lambda: MixedSVM.random_intercept(X, Y, groups=GROUPS),
        "gibbs",
    ),
    "spike-slab-vb": (lambda: SpikeSlabSVM.laplace_zero(X, Y), "vb"),
    "missing-data-gibbs": (
        lambda: MissingDataSVM.from_arrays(np.where(MISSING, np.nan, X), Y),
        "gibbs",
    ),
    "kernel-probit-vb": (lambda: KernelGKM.from_arrays(X, Y), "vb"),
    "kernel-hinge-gibbs": (lambda: KernelGKM.from_arrays(X, Y, likelihood="hinge"), "gibbs"),
    "gp-full-gibbs": (lambda: GPSVM.from_arrays(X, Y, lengthscale=1.5), "gibbs"),
    "gp-sparse-vb": (lambda: GPSVM.from_arrays(X, Y, lengthscale=1.5, inducing=8), "vb"),
    "gp-sparse-svi": (lambda: GPSVM.from_arrays(X, Y, lengthscale=1.5, inducing=8), "svi"),
    "logistic-vb": (lambda: LogisticRegression.from_arrays(X, Y), "vb"),
    "ridge-em": (lambda: LinearSVM.from_arrays(X, Y, alpha=0.5), "em"),
}


def fit_case(name, seed=0):
    make, method = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # short chains
        return bayesvm.fit(make(), method, seed=seed, **(SHORT if method == "gibbs" else {}))


def assert_replicates_are_labels_of_the_posterior(fit):
    replicated = fit.idata.posterior_predictive["y"]
    posterior = fit.idata.posterior
    assert replicated.dims == ("chain", "draw", "obs_id")
    assert replicated.sizes["chain"] == posterior.sizes["chain"]
    assert replicated.sizes["draw"] == posterior.sizes["draw"]
    np.testing.assert_array_equal(
        replicated["obs_id"], fit.idata.observed_data["obs_id"].to_numpy()
    )
    assert replicated.dtype == np.int8
    assert set(np.unique(replicated)) <= {-1, 1}
    assert set(np.unique(fit.idata.observed_data["y"])) == {-1.0, 1.0}


def assert_share_of_positives_matches(fit, probabilities):
    """Each row's count of +1 among its replicates is the sum of its per-draw probabilities
    ``(draws, n)`` within Bernstein's bound for independent Bernoulli draws, ``P(|S - E S| >=
    t) <= 2 exp(-t^2 / 2 / (V + t / 3))`` with ``V = sum_s p_s (1 - p_s)``: exact for any
    ``p`` (a normal approximation fails for rare labels), each row at family-wise level 1e-3.
    """
    replicated = fit.idata.posterior_predictive["y"].to_numpy().reshape(probabilities.shape)
    count = (replicated == 1).sum(axis=0)
    variance = np.sum(probabilities * (1.0 - probabilities), axis=0)
    log_level = np.log(2.0 / (1e-3 / probabilities.shape[1]))
    bound = log_level / 3.0 + np.sqrt((log_level / 3.0) ** 2 + 2.0 * variance * log_level)
    error = np.abs(count - probabilities.sum(axis=0))
    assert np.all(error < bound), np.max(error / bound)


@pytest.mark.parametrize("method", ["vb", "gibbs", "nuts"])
def test_replicates_have_the_posterior_shape_and_the_observed_coding(svm_fits_by_method, method):
    _, _, fits = svm_fits_by_method
    assert_replicates_are_labels_of_the_posterior(fits[method])


@pytest.mark.parametrize("method", ["vb", "gibbs", "nuts"])
def test_share_of_positives_matches_predict_proba(svm_fits_by_method, method):
    X_train, _, fits = svm_fits_by_method
    fit = fits[method]
    probabilities = fit.model.training_probabilities(fit)
    n_draws = probabilities.shape[0]
    assert n_draws == fit.idata.posterior.sizes["chain"] * fit.idata.posterior.sizes["draw"]
    # the per-draw probabilities at the training rows average to predict_proba there
    np.testing.assert_allclose(
        probabilities.mean(axis=0), fit.predict_proba(X_train, max_draws=n_draws)[:, 1], rtol=1e-12
    )
    assert_share_of_positives_matches(fit, probabilities)


@pytest.mark.parametrize("method", ["vb", "gibbs", "nuts"])
@pytest.mark.parametrize("kind", ["cumulative", "scatter", "kde"])
def test_plot_ppc_runs(svm_fits_by_method, method, kind):
    _, _, fits = svm_fits_by_method
    axes = az.plot_ppc(fits[method].idata, kind=kind, num_pp_samples=20, random_seed=0)
    assert np.ravel(axes)[0].get_lines()
    plt.close("all")


def assert_log_likelihood_scores_each_label(fit, probabilities):
    """``log_likelihood["y"]`` is the log of each observed label's probability per draw
    (``probabilities``: of +1, ``(draws, n)``); a point estimate has none.
    """
    if fit.kind == "point":
        assert "log_likelihood" not in fit.idata.groups()
        return
    log_likelihood = fit.idata.log_likelihood["y"]
    assert log_likelihood.dims == ("chain", "draw", "obs_id")
    observed = fit.idata.observed_data["y"].to_numpy()
    expected = np.where(observed > 0, probabilities, 1.0 - probabilities)
    values = log_likelihood.to_numpy().reshape(probabilities.shape)
    np.testing.assert_allclose(np.exp(values), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_every_classifier_replicates_and_scores_labels_by_its_predictive(name):
    fit = fit_case(name)
    probabilities = fit.model.training_probabilities(fit)
    assert_replicates_are_labels_of_the_posterior(fit)
    assert_share_of_positives_matches(fit, probabilities)
    assert_log_likelihood_scores_each_label(fit, probabilities)


@pytest.mark.parametrize(
    "name", ["kernel-hinge-gibbs", "gp-full-gibbs", "mixed-random-intercept-gibbs"]
)
def test_training_probabilities_are_predict_proba_at_the_training_rows(name):
    fit = fit_case(name)
    probabilities = fit.model.training_probabilities(fit)
    kwargs = {"groups": GROUPS} if name.startswith("mixed") else {}
    proba = fit.predict_proba(X, max_draws=probabilities.shape[0], **kwargs)[:, 1]
    # the full GP's predict_proba sees f at a training point through the jittered kernel
    # factor: a conditional variance of ~1e-6 where the training path has exactly 0
    np.testing.assert_allclose(probabilities.mean(axis=0), proba, rtol=0, atol=1e-6)


def test_missing_cells_enter_each_draw_at_their_imputed_values():
    fit = fit_case("missing-data-gibbs")
    model = fit.model
    theta = fit.coefficient_draws()
    (cells,) = fit.draws(["x_mis"])
    completed = np.repeat(np.where(MISSING, np.nan, X)[None], theta.shape[0], axis=0)
    completed[:, MISSING] = cells
    expected = theta[:, :1] + np.einsum("sij,sj->si", completed, theta[:, 1:])
    np.testing.assert_allclose(model.training_predictor(fit), expected, rtol=1e-12, atol=1e-12)


def test_same_seed_same_replicates_and_a_stream_of_their_own():
    first, second, other = (fit_case("spike-slab-vb", seed) for seed in (3, 3, 4))
    np.testing.assert_array_equal(
        first.idata.posterior_predictive["y"], second.idata.posterior_predictive["y"]
    )
    assert not np.array_equal(
        first.idata.posterior_predictive["y"], other.idata.posterior_predictive["y"]
    )
    fit_rng, predictive = np.random.default_rng(3), results.predictive_rng(3)
    assert not np.array_equal(fit_rng.random(10), predictive.random(10))
    generator = np.random.default_rng(7)
    np.testing.assert_array_equal(
        results.predictive_rng(generator).random(5),
        results.predictive_rng(np.random.default_rng(7)).random(5),
    )


def test_long_chains_are_thinned_by_one_stride(monkeypatch):
    monkeypatch.setattr(results, "PREDICTIVE_MAX_DRAWS", 100)
    fit = fit_case("kernel-hinge-gibbs")  # 2 chains of 150 draws: stride 3
    replicated = fit.idata.posterior_predictive["y"]
    assert replicated.sizes == {"chain": 2, "draw": 50, "obs_id": X.shape[0]}
    np.testing.assert_array_equal(replicated["draw"], np.arange(0, 150, 3))
    thinned = fit.idata.posterior.isel(draw=slice(None, None, 3))
    view = bayesvm.Fit(
        fit.model, az.InferenceData(posterior=thinned), "gibbs", "mcmc", n_iter=1, converged=True
    )
    assert_share_of_positives_matches(fit, fit.model.training_probabilities(view))


def test_many_rows_bound_the_values_stored(monkeypatch):
    monkeypatch.setattr(results, "PREDICTIVE_MAX_VALUES", 40 * 10)
    fit = fit_case("logistic-vb")  # 1000 draws from q of 40 rows: 10 kept
    assert fit.idata.posterior_predictive["y"].sizes == {"chain": 1, "draw": 10, "obs_id": 40}


def test_regression_replicates_are_gaussian_around_each_draw():
    y_real = X @ [1.0, -2.0, 0.5] + np.random.default_rng(2).standard_normal(X.shape[0])
    fit = bayesvm.fit(LinearRegression.from_arrays(X, y_real), "vb", seed=0)
    replicated = fit.idata.posterior_predictive["y"]
    assert replicated.dims == ("chain", "draw", "obs_id") and replicated.dtype == np.float64
    w, tau = fit.draws(["w", "tau"])
    values = replicated.to_numpy().reshape(tau.size, -1)
    sd = np.sqrt(np.sum(1.0 / tau)) / tau.size
    z = (values.mean(axis=0) - (w @ X.T).mean(axis=0)) / sd
    assert np.all(np.abs(z) < norm.isf(1e-3 / 2 / X.shape[0]))
    axes = az.plot_ppc(fit.idata, num_pp_samples=20, random_seed=0)
    assert np.ravel(axes)[0].get_lines()
    plt.close("all")


def test_the_replicates_survive_a_round_trip_through_netcdf(svm_fits_by_method, tmp_path):
    _, _, fits = svm_fits_by_method
    fit = fits["gibbs"]
    loaded = bayesvm.load(fit.to_netcdf(tmp_path / "fit.nc"))
    replicated = loaded.idata.posterior_predictive["y"]
    assert replicated.dtype == np.int8
    np.testing.assert_array_equal(replicated, fit.idata.posterior_predictive["y"])
