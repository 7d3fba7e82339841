"""Pointwise log likelihoods: PSIS leave-one-out against exact leave-one-out, and
:func:`bayesvm.compare_models`."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

import bayesvm
from bayesvm._arviz import arviz as az
from bayesvm.model_comparison import FLAT_ROW_SPREAD
from bayesvm.models import LinearRegression, LinearSVM, SpikeSlabSVM

from conftest import simulate_logistic

X_CLASSES, Y_CLASSES = simulate_logistic(60, 3, seed=21)


def regression_data(n_samples: int, seed: int):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n_samples), rng.standard_normal((n_samples, 2))])
    return X, X @ [0.5, 1.0, -0.7] + 0.8 * rng.standard_normal(n_samples)


def gibbs(model, **lengths):
    options = {"chains": 2, "draws": 1000, "tune": 200, "progressbar": False, **lengths}
    return bayesvm.fit(model, "gibbs", seed=3, **options)


def test_regression_log_likelihood_is_the_normal_density_at_each_draw():
    X, y = regression_data(25, seed=1)
    fit = gibbs(LinearRegression.from_arrays(X, y), draws=100)
    w, tau = fit.draws(["w", "tau"])
    expected = norm.logpdf(y, w @ X.T, 1.0 / np.sqrt(tau)[:, None])
    values = fit.idata.log_likelihood["y"].to_numpy().reshape(expected.shape)
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def exact_leave_one_out(X, y) -> np.ndarray:
    """``log p(y_i | y_-i)`` for each row, each by Gibbs on the other rows: the log of the
    mean over draws of ``N(y_i | w^T x_i, 1/tau)``.
    """
    scores = []
    for i in range(len(y)):
        rest = np.arange(len(y)) != i
        fit = gibbs(LinearRegression.from_arrays(X[rest], y[rest]), chains=1, draws=2000)
        w, tau = fit.draws(["w", "tau"])
        log_density = norm.logpdf(y[i], w @ X[i], 1.0 / np.sqrt(tau))
        scores.append(logsumexp(log_density) - np.log(log_density.size))
    return np.array(scores)


def test_psis_loo_of_gibbs_is_exact_leave_one_out_within_its_standard_error():
    """The Gaussian linear regression with its default priors: PSIS-LOO of one Gibbs fit
    (Vehtari, Gelman & Gabry 2017) against the sum of ``log p(y_i | y_-i)`` from refitting on
    each ``n - 1`` rows, within PSIS-LOO's standard error (the issue's criterion; measured:
    0.015 apart against a standard error of 3.4, each row within 0.02); every Pareto k-hat is
    good.
    """
    X, y = regression_data(20, seed=2)
    loo = az.loo(gibbs(LinearRegression.from_arrays(X, y), chains=4).idata, pointwise=True)
    assert float(loo.pareto_k.max()) < 0.7
    assert abs(loo.elpd_loo - exact_leave_one_out(X, y).sum()) < loo.se


@pytest.fixture(scope="module")
def classifier_fits():
    """Gibbs fits of three models of the same labels."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # short chains
        return {
            "ridge": gibbs(LinearSVM.from_arrays(X_CLASSES, Y_CLASSES)),
            "lasso": gibbs(LinearSVM.from_arrays(X_CLASSES, Y_CLASSES, prior="lasso")),
            "spike-slab": gibbs(SpikeSlabSVM.gaussian_slab(X_CLASSES, Y_CLASSES)),
        }


@pytest.mark.parametrize("ic", ["loo", "waic"])
def test_compare_models_ranks_the_fits_as_arviz_does(classifier_fits, ic):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ArviZ's WAIC variance warning
        table = bayesvm.compare_models(classifier_fits, ic=ic)
        expected = az.compare({name: fit.idata for name, fit in classifier_fits.items()}, ic=ic)
    assert set(table.index) == set(classifier_fits)
    assert list(table.index) == list(expected.index)
    # LOO scores each flat row (log likelihood spread at most FLAT_ROW_SPREAD) by raw
    # importance sampling where ArviZ smooths: each such row moves by at most its spread.
    flat_spread = {name: flat_rows_spread(fit) for name, fit in classifier_fits.items()}
    bound = pd.Series(flat_spread)[table.index] if ic == "loo" else 0.0
    assert np.all(np.abs(table[f"elpd_{ic}"] - expected[f"elpd_{ic}"]) <= bound + 1e-9)
    assert table["rank"].tolist() == [0, 1, 2]


def flat_rows_spread(fit) -> float:
    """The summed spread across draws of the log likelihood's flat rows."""
    log_likelihood = fit.idata.log_likelihood["y"].stack(sample=("chain", "draw")).to_numpy()
    spread = np.ptp(log_likelihood, axis=1)
    return float(spread[spread <= FLAT_ROW_SPREAD].sum())


def test_compare_models_refuses_point_estimates_other_labels_and_a_single_fit(
    classifier_fits,
):
    ridge = classifier_fits["ridge"]
    mode = bayesvm.fit(LinearSVM.from_arrays(X_CLASSES, Y_CLASSES, alpha=0.5), "em", seed=0)
    with pytest.raises(ValueError, match=r"no pointwise log likelihood in the fits \['em'\]"):
        bayesvm.compare_models({"ridge": ridge, "em": mode})
    flipped = LinearSVM.from_arrays(X_CLASSES, -Y_CLASSES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        other = gibbs(flipped, draws=100)
    with pytest.raises(ValueError, match=r"the fits \['flipped'\] are to other labels"):
        bayesvm.compare_models({"ridge": ridge, "flipped": other})
    with pytest.raises(ValueError, match="at least two fits"):
        bayesvm.compare_models({"ridge": ridge})
    with pytest.raises(ValueError, match="ic must be"):
        bayesvm.compare_models(classifier_fits, ic="aic")


def test_loo_scores_rows_predicted_with_certainty_by_their_constant_log_likelihood():
    """Ten rows far out on their own side (x = 40 y): the SVM predicts their labels with
    probability 1 up to round-off in every draw, ArviZ 0.23's PSIS returns NaN for them (and so
    an ``elpd_loo`` of NaN); :func:`bayesvm.loo` gives each such row its in-sample log
    density, which every weighting of so flat a row leaves within ``FLAT_ROW_SPREAD``, and
    k-hat 0, and keeps ArviZ's values for the other rows; ``compare_models`` ranks on it.
    """
    rng = np.random.default_rng(0)
    y = np.where(rng.random(40) < 0.5, -1, 1)
    X = rng.standard_normal((40, 2)) + [0.5, 0.0] * y[:, None]
    X[:10, 0] = 40.0 * y[:10]
    model = LinearSVM.from_arrays(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # short chains
        fits = {"gibbs": gibbs(model, draws=200, tune=200), "vb": bayesvm.fit(model, "vb")}
    log_likelihood = fits["gibbs"].idata.log_likelihood["y"].stack(sample=("chain", "draw"))
    flat = np.ptp(log_likelihood.to_numpy(), axis=1) <= FLAT_ROW_SPREAD
    in_sample = logsumexp(log_likelihood.to_numpy(), axis=1) - np.log(log_likelihood.shape[1])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Estimated shape parameter of Pareto")
        arviz_loo = az.loo(fits["gibbs"].idata, pointwise=True)
        loo = bayesvm.loo(fits["gibbs"])
        table = bayesvm.compare_models(fits)
    assert flat[:10].all()
    assert np.isfinite(loo.elpd_loo) and np.isfinite(table["elpd_loo"]).all()
    np.testing.assert_array_less(np.abs(loo.loo_i[flat] - in_sample[flat]), FLAT_ROW_SPREAD)
    np.testing.assert_allclose(loo.pareto_k[flat], 0.0, atol=1e-12)
    np.testing.assert_allclose(loo.loo_i[~flat], arviz_loo.loo_i[~flat], rtol=1e-12)
    np.testing.assert_allclose(loo.elpd_loo, loo.loo_i.sum(), rtol=1e-12)
