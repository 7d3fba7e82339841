import os
import warnings

os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")

import arviz as az  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.stats import chisquare, norm  # noqa: E402

import bayesvm  # noqa: E402


def simulate_logistic(n_samples: int, n_features: int, seed: int, intercept: float = 0.3):
    """Luts-Ormerod section 4.2 style data: y = +-1 with P(y=1) = expit(intercept + x^T w)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    w = rng.standard_normal(n_features)
    p = 1.0 / (1.0 + np.exp(-(intercept + X @ w)))
    y = np.where(rng.random(n_samples) < p, 1, -1)
    return X, y


def separable(n_samples: int, n_features: int, seed: int):
    """Two classes split by a hyperplane with a gap: linearly separable."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    score = X[:, 0] + 0.5 * X[:, 1 % n_features]
    keep = np.abs(score) > 0.5
    return X[keep], np.where(score[keep] > 0, 1, -1)


def goodness_of_fit(states: np.ndarray, probabilities: np.ndarray) -> float:
    """Chi-square p-value of independent draws of model indices against ``probabilities``;
    models expected fewer than 5 times are pooled into one cell.
    """
    observed = np.bincount(states, minlength=probabilities.shape[0])
    expected = probabilities * states.shape[0]
    rare = expected < 5.0
    observed = np.r_[observed[~rare], observed[rare].sum()]
    expected = np.r_[expected[~rare], expected[rare].sum()]
    if expected[-1] == 0.0:
        observed, expected = observed[:-1], expected[:-1]
    return float(chisquare(observed, expected).pvalue)


@pytest.fixture
def small_data():
    return simulate_logistic(60, 3, seed=3)


FAMILY_LEVEL = 0.01
ESS_FLOOR = 400
RHAT_MAX = 1.01


def _comparable(idata, var_names=None):
    posterior = idata.posterior if var_names is None else idata.posterior[list(var_names)]
    posterior = posterior.copy()
    for name in ("sigma2_u", "nu", "alpha", "tau", "g", "eta"):
        if name in posterior:
            posterior[f"log_{name}"] = np.log(posterior[name])
            posterior = posterior.drop_vars(name)
    return az.InferenceData(posterior=posterior)


def _moments(idata, var_names=None):
    data = _comparable(idata, var_names)
    stats = az.summary(data, kind="all", round_to="none")
    stats["mcse_sd"] = az.summary(data, kind="diagnostics", round_to="none")["mcse_sd"]
    return stats


def assert_fits_agree(first, second, var_names=None, statistics=("mean", "sd")):
    """Two MCMC fits agree on every scalar's posterior ``statistics`` (mean, sd).

    Each pair must pass a z-test on their Monte Carlo standard errors, Bonferroni-corrected over
    all comparisons at family-wise level 1%; ESS and R-hat floors for both, no divergent
    transition and no convergence problem. Learned scales and precisions (heavy-tailed under
    vague IG / Gamma priors, so their variance may not exist) are compared on the log scale. A
    scalar that never changed in either fit (an inclusion indicator always on) has no Monte
    Carlo error: its value must be the same in both.
    """
    a = _moments(first.idata, var_names)
    b = _moments(second.idata, var_names).loc[a.index]
    constant = (a["sd"] == 0.0) & (b["sd"] == 0.0)
    np.testing.assert_array_equal(a.loc[constant, "mean"], b.loc[constant, "mean"])
    a, b = a[~constant], b[~constant]
    critical = norm.isf(FAMILY_LEVEL / 2 / (len(statistics) * len(a)))
    for statistic in statistics:
        error = np.hypot(a[f"mcse_{statistic}"], b[f"mcse_{statistic}"])
        z = (a[statistic] - b[statistic]) / error
        assert np.all(np.abs(z) < critical), (statistic, z)
    for stats in (a, b):
        assert stats["ess_bulk"].min() > ESS_FLOOR
        assert stats["r_hat"].max() < RHAT_MAX
    for fit in (first, second):
        if "sample_stats" in fit.idata.groups() and "diverging" in fit.idata.sample_stats:
            assert int(fit.idata.sample_stats["diverging"].sum()) == 0
        assert fit.converged, fit.problems


def assert_samplers_agree(model, nuts_options=None):
    """Gibbs and NUTS agree on every scalar's posterior mean and sd (:func:`assert_fits_agree`)."""
    gibbs = bayesvm.fit(
        model, method="gibbs", seed=1, chains=4, draws=5000, tune=1000, progressbar=False
    )
    nuts = bayesvm.fit(
        model,
        method="nuts",
        seed=1,
        chains=4,
        draws=2000,
        tune=1000,
        progressbar=False,
        **(nuts_options or {}),
    )
    assert_fits_agree(gibbs, nuts)


@pytest.fixture(scope="session")
def svm_fits_by_method():
    """A fixed-penalty LinearSVM on 60 points fitted by VB, Gibbs and NUTS (short chains)."""
    import warnings

    from bayesvm.models import LinearSVM

    X, y = simulate_logistic(60, 3, seed=3)
    model = LinearSVM.from_arrays(X, y, alpha=0.5)
    options = {
        "vb": {},
        "gibbs": {"chains": 2, "draws": 300, "tune": 100, "progressbar": False},
        "nuts": {"chains": 1, "draws": 200, "tune": 200, "progressbar": False},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # short chains
        fits = {method: bayesvm.fit(model, method, seed=5, **kw) for method, kw in options.items()}
    return X, y, fits
