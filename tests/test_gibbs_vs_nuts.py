"""The hand-written Gibbs samplers target the same posterior as NUTS on ``model.to_pymc()``.

For every scalar parameter the posterior mean and sd from the two samplers must agree within
a z-test on their Monte Carlo standard errors, Bonferroni-corrected over all comparisons of a
model at family-wise level 1%. Learned scales (heavy-tailed under the IG(0.01, 0.01) prior,
whose variance may not exist) are compared on the log scale.
"""

import arviz as az
import numpy as np
import pytest
from scipy.stats import norm

import bayesvm
from bayesvm.models import LinearSVM, MixedSVM

from conftest import simulate_logistic

FAMILY_LEVEL = 0.01
ESS_FLOOR = 400
RHAT_MAX = 1.01

X, Y = simulate_logistic(60, 3, seed=3)
MODELS = {
    "ridge-fixed": LinearSVM.from_arrays(X, Y, alpha=0.5),
    "mixed-penalized": MixedSVM.penalized(X, Y),
    "lasso-learned-std": LinearSVM.from_arrays(X, Y, prior="lasso", feature_scale="std"),
    "lasso-fixed": LinearSVM.from_arrays(X, Y, prior="lasso", nu=0.5),
}


def _comparable(idata):
    posterior = idata.posterior.copy()
    for name in ("sigma2_u", "nu"):
        if name in posterior:
            posterior[f"log_{name}"] = np.log(posterior[name])
            posterior = posterior.drop_vars(name)
    return az.InferenceData(posterior=posterior)


def _moments(idata):
    data = _comparable(idata)
    stats = az.summary(data, kind="all", round_to="none")
    stats["mcse_sd"] = az.summary(data, kind="diagnostics", round_to="none")["mcse_sd"]
    return stats


@pytest.mark.parametrize("name", list(MODELS))
def test_gibbs_and_nuts_agree_within_monte_carlo_error(name):
    _assert_agreement(MODELS[name])


@pytest.mark.slow
@pytest.mark.parametrize("n_samples", [200, 500])
def test_agreement_at_the_paper_size(n_samples):
    """Luts-Ormerod section 4.2's problem with d = 10 (several minutes)."""
    X_paper, y_paper = simulate_logistic(n_samples, 10, seed=n_samples)
    _assert_agreement(MixedSVM.penalized(X_paper, y_paper))


def _assert_agreement(model):
    gibbs = bayesvm.fit(
        model, method="gibbs", seed=1, chains=4, draws=5000, tune=1000, progressbar=False
    )
    nuts = bayesvm.fit(
        model, method="nuts", seed=1, chains=4, draws=2000, tune=1000, progressbar=False
    )
    assert int(nuts.idata.sample_stats["diverging"].sum()) == 0
    g, n = _moments(gibbs.idata), _moments(nuts.idata).loc[_moments(gibbs.idata).index]
    z_mean = (g["mean"] - n["mean"]) / np.hypot(g["mcse_mean"], n["mcse_mean"])
    z_sd = (g["sd"] - n["sd"]) / np.hypot(g["mcse_sd"], n["mcse_sd"])
    critical = norm.isf(FAMILY_LEVEL / 2 / (2 * len(g)))
    assert np.all(np.abs(z_mean) < critical), z_mean
    assert np.all(np.abs(z_sd) < critical), z_sd
    for stats in (g, n):
        assert stats["ess_bulk"].min() > ESS_FLOOR
        assert stats["r_hat"].max() < RHAT_MAX
    assert gibbs.converged and nuts.converged
