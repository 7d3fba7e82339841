"""MissingDataSVM with the hinge likelihood normalised over the labels
(:mod:`bayesvm.blocks.normalized_hinge`): its Metropolis-Hastings corrected Gibbs, NUTS, and
what it refuses.
"""

import warnings

import numpy as np
import pytest
from scipy.stats import norm

import bayesvm
from bayesvm.blocks.normalized_hinge import log_normalizer, quadratic_tilt
from bayesvm.models import MissingDataSVM
from bayesvm.samplers.gibbs import make_gibbs_kernel

from conftest import FAMILY_LEVEL, assert_samplers_agree, simulate_logistic

#: Metropolis-Hastings steps of the invariance tests, and draws of their importance samplers.
CHAIN_LENGTH, IMPORTANCE_DRAWS = 8000, 200_000
#: Draws of the missing cells' importance sampler (one draw of every row's cells each).
CELL_DRAWS = 20_000


def correlated_data(n_samples, seed):
    """Two correlated predictors and labels from a logistic model."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, 2)) @ np.array([[1.0, 0.5], [0.0, 0.8]])
    p = 1.0 / (1.0 + np.exp(-(0.3 + X @ np.array([1.0, -0.7]))))
    return X, np.where(rng.random(n_samples) < p, 1, -1)


def with_missing(X, fraction, seed):
    """``X`` with cells set to NaN completely at random."""
    return np.where(np.random.default_rng(seed).random(X.shape) < fraction, np.nan, X)


def normalized_model(n_samples=30, seed=3):
    X, y = correlated_data(n_samples, seed=seed)
    D = with_missing(X, 0.3, seed=seed)
    D[0] = np.nan
    return MissingDataSVM.from_arrays(D, y, likelihood="normalized")


def settled_state(model, sweeps=100, seed=0):
    """The blocks' statistics after ``sweeps`` Gibbs sweeps."""
    init, step, _ = make_gibbs_kernel(model.blocks)
    rng = np.random.default_rng(seed)
    stats = init(rng)
    for _ in range(sweeps):
        stats, _ = step(stats, rng)
    return stats


def batch_means_error(chain: np.ndarray, batches: int = 40) -> np.ndarray:
    """Monte Carlo standard error of a chain's mean (per column) by batch means."""
    means = chain[: len(chain) // batches * batches].reshape(batches, -1, *chain.shape[1:])
    return means.mean(axis=1).std(axis=0, ddof=1) / np.sqrt(batches)


def importance_mean(draws: np.ndarray, log_weights: np.ndarray):
    """Self-normalised importance estimate of the mean of each column of ``draws`` (``(draws,
    k)``) and its standard error; ``log_weights`` one per draw, or one per draw and column.
    """
    log_weights = np.broadcast_to(log_weights.reshape(len(draws), -1), draws.shape)
    weights = np.exp(log_weights - log_weights.max(axis=0))
    weights = weights / weights.sum(axis=0)
    mean = (weights * draws).sum(axis=0)
    error = np.sqrt((weights**2 * (draws - mean) ** 2).sum(axis=0))
    return mean, error


def assert_means_agree(chain, reference, reference_error):
    error = np.hypot(batch_means_error(chain), reference_error)
    z = (chain.mean(axis=0) - reference) / error
    critical = norm.isf(FAMILY_LEVEL / 2 / z.size)
    assert np.all(np.abs(z) < critical), z


# -- the likelihood --------------------------------------------------------------------------
def test_the_likelihood_sums_to_one_over_the_labels():
    f = np.linspace(-4.0, 4.0, 81)
    hinge = lambda y: -2.0 * np.maximum(0.0, 1.0 - y * f)  # noqa: E731
    total = np.exp(hinge(1) - log_normalizer(f)) + np.exp(hinge(-1) - log_normalizer(f))
    np.testing.assert_allclose(total, 1.0, rtol=1e-12)
    np.testing.assert_allclose(log_normalizer(np.array([0.0, 1e6])), [np.log(2) - 2, 0.0])


def test_the_quadratic_tilt_is_the_second_order_expansion_of_log_z():
    f = np.array([-2.5, -1.2, -0.7, -0.2, 0.0, 0.3, 0.95, 1.5, 3.0])
    step = 1e-5
    slope = (log_normalizer(f + step) - log_normalizer(f - step)) / (2 * step)
    curvature = (
        log_normalizer(f + step) - 2 * log_normalizer(f) + log_normalizer(f - step)
    ) / step**2
    h, b = quadratic_tilt(f)
    np.testing.assert_allclose(h, curvature, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(h * f - b, slope, rtol=1e-6, atol=1e-9)


# -- each Metropolis-Hastings step leaves its conditional invariant ---------------------------
def test_the_coefficient_steps_leave_the_normalised_conditional_invariant():
    """Given the other blocks, ``theta``'s conditional is ``q / prod_i Z(f_i)`` (``q`` the
    hinge-augmented Gaussian): the chain of the block's steps has the mean that importance
    sampling from ``q`` gives.
    """
    model = normalized_model()
    block = model.blocks[0]
    stats = settled_state(model)
    laplace, tilt, current = block.conditional(stats)
    gaussian, q_mean = block.block.conditional(stats)  # the hinge-augmented Gaussian q
    rng = np.random.default_rng(1)
    draws = rng.multivariate_normal(q_mean, gaussian.covariance(), size=IMPORTANCE_DRAWS)
    f = gaussian.design.predictor(draws)
    reference, reference_error = importance_mean(draws, -log_normalizer(f).sum(axis=1))
    chain, accepted = [], []
    for _ in range(CHAIN_LENGTH):
        current, info = block.sample_step((laplace, tilt, current), rng)
        chain.append(current.mean)
        accepted.append(info["accept_rate_coefficients"])
    assert_means_agree(np.array(chain), reference, reference_error)
    assert np.mean(accepted) > 0.5


def test_a_coefficient_chain_started_far_out_comes_in():
    """The t proposal's heavy tails: from coefficients ten times the conditional's mode
    (where a Gaussian proposal's weights are astronomically large), the first steps accept.
    """
    model = normalized_model()
    block = model.blocks[0]
    stats = settled_state(model)
    laplace, tilt, _ = block.conditional(stats)
    current = block.block.at(10.0 * laplace.mean)
    rng = np.random.default_rng(3)
    accepted = [block.sample_step((laplace, tilt, current), rng)[1] for _ in range(20)]
    assert np.mean([info["accept_rate_coefficients"] for info in accepted]) > 0.5


def test_the_cell_steps_leave_each_rows_normalised_conditional_invariant():
    """Given the other blocks, row ``i``'s cells have the conditional ``q_i / Z(f_i)``."""
    model = normalized_model()
    block = model.blocks[1]
    stats = settled_state(model)
    conditional, current = block.conditional(stats)
    theta = conditional.theta.mean
    rng = np.random.default_rng(2)
    # Every row's cells from q, CELL_DRAWS times; each cell weighted by its row's 1 / Z.
    designs = np.array([block.block.sample(conditional, rng).design for _ in range(CELL_DRAWS)])
    f = theta[0] + designs @ theta[1:]
    rows, columns = np.nonzero(block.block.mask)
    reference, reference_error = importance_mean(
        designs[:, rows, columns], -log_normalizer(f[:, rows])
    )
    chain, rates = [], []
    for _ in range(CHAIN_LENGTH // 2):
        current, info = block.sample_step((conditional, current), rng)
        chain.append(current.design[rows, columns])
        rates.append(info["accept_rate_x_mis"])
    assert_means_agree(np.array(chain), reference, reference_error)
    assert 0.27 < np.mean(rates) <= 1.0


# -- the whole sampler against NUTS ----------------------------------------------------------
@pytest.mark.slow  # minutes: 4 x 4500 Gibbs sweeps and 4 x 1500 NUTS iterations
def test_gibbs_and_nuts_agree_within_monte_carlo_error():
    """beta, u, sigma2_u, x_mis, mu_x and Sigma_x; a row with both predictors missing."""
    X, y = correlated_data(50, seed=5)
    D = with_missing(X, 0.2, seed=5)
    D[0] = np.nan
    assert_samplers_agree(MissingDataSVM.from_arrays(D, y, likelihood="normalized"))


def test_gibbs_reports_the_acceptance_of_each_step():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # short chains
        fit = bayesvm.fit(normalized_model(), "gibbs", chains=1, draws=200, tune=100)
    stats = fit.idata.sample_stats
    assert set(np.unique(stats["accept_rate_coefficients"])) <= {0.0, 1.0}
    assert 0.5 < float(stats["accept_rate_coefficients"].mean()) <= 1.0
    assert np.all((stats["accept_rate_x_mis"] > 0.0) & (stats["accept_rate_x_mis"] <= 1.0))


# -- methods, input checks and files ---------------------------------------------------------
def test_vb_and_em_are_refused_naming_the_methods_that_can():
    model = normalized_model()
    assert bayesvm.methods(model) == ["gibbs", "nuts"]
    for method in ("vb", "em"):
        with pytest.raises(ValueError, match=r"cannot fit.*\['gibbs', 'nuts'\]"):
            bayesvm.fit(model, method)


@pytest.mark.parametrize("likelihood", ["logistic", "Hinge", None])
def test_an_unknown_likelihood_is_refused_with_the_choices(likelihood):
    X, y = simulate_logistic(20, 2, seed=1)
    with pytest.raises(ValueError, match=r"likelihood must be one of \('hinge', 'normalized'\)"):
        MissingDataSVM.from_arrays(X, y, likelihood=likelihood)


def test_the_likelihood_survives_saving_and_loading(tmp_path):
    model = normalized_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # short chains
        fit = bayesvm.fit(model, "gibbs", chains=1, draws=50, tune=20)
    fit.to_netcdf(tmp_path / "fit.nc")
    loaded = bayesvm.load(tmp_path / "fit.nc")
    assert loaded.model.likelihood == "normalized"
    assert bayesvm.methods(loaded.model) == ["gibbs", "nuts"]
    D_new = model.Z[:5]
    np.testing.assert_array_equal(loaded.predict_proba(D_new), fit.predict_proba(D_new))
