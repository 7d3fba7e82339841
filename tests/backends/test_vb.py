import numpy as np
import pytest
from scipy.special import gammaln, kv

import bayesvm
from bayesvm.models import LinearSVM, MixedSVM

from conftest import (
    assert_ascent_converged,
    assert_means_within,
    assert_never_decreases,
    separable,
    simulate_logistic,
)

DATASETS = [
    simulate_logistic(100, 5, seed=0),
    simulate_logistic(200, 10, seed=1),
    simulate_logistic(50, 20, seed=2),
    separable(80, 3, seed=3),
]
MODELS = {
    "ridge-fixed": lambda X, y: LinearSVM.from_arrays(X, y, alpha=0.5),
    "ridge-learned-std": lambda X, y: LinearSVM.from_arrays(X, y, feature_scale="std"),
    "mixed-penalized": lambda X, y: MixedSVM.penalized(X, y),
    "lasso-fixed-std": lambda X, y: LinearSVM.from_arrays(
        X, y, prior="lasso", alpha=0.5, feature_scale="std"
    ),
}


def _data_part(y, f_mean, chi):
    """Section 2.3's data terms of the bound, with the Bessel function from SciPy."""
    n = y.size
    return (
        -n
        + n * np.log(2)
        - n / 2 * np.log(2 * np.pi)
        + y @ f_mean
        + 0.25 * np.sum(np.log(chi))
        + np.sum(np.log(kv(0.5, np.sqrt(chi))))
    )


def _q(fit):
    group = fit.idata["variational"]
    mu = np.concatenate([group["beta_mean"].to_numpy(), group["u_mean"].to_numpy()])
    return mu, group["covariance"].to_numpy(), group["chi"].to_numpy()


@pytest.mark.parametrize("data", DATASETS, ids=["n100d5", "n200d10", "n50d20", "separable"])
@pytest.mark.parametrize("name", list(MODELS))
def test_lower_bound_never_decreases(data, name):
    fit = bayesvm.fit(MODELS[name](*data), method="vb")
    assert_ascent_converged(fit)
    assert_never_decreases(fit.lower_bound_trace)


def test_bound_equals_algorithm_2_formula():
    """Luts-Ormerod section 3.1: the simplified bound of Algorithm 2, evaluated independently."""
    X, y = simulate_logistic(120, 6, seed=4)
    model = MixedSVM.penalized(X, y)
    fit = bayesvm.fit(model, method="vb")
    mu, cov, chi = _q(fit)
    p, m = 1, 6
    A, B, s2b = 0.01, 0.01, 1e8
    B_q = float(fit.idata["variational"]["variance_rate"])
    expected = (
        (p + m) / 2
        - p / 2 * np.log(s2b)
        + 0.5 * np.linalg.slogdet(cov)[1]
        - (mu[:p] @ mu[:p] + np.trace(cov[:p, :p])) / (2 * s2b)
        + A * np.log(B)
        - gammaln(A)
        - (A + m / 2) * np.log(B_q)
        + gammaln(A + m / 2)
        + _data_part(model.y, model.design @ mu, chi)
    )
    np.testing.assert_allclose(fit.lower_bound, expected, rtol=1e-10)
    # and B_q is Algorithm 2 line 4 at the returned q
    np.testing.assert_allclose(B_q, B + 0.5 * (mu[p:] @ mu[p:] + np.trace(cov[p:, p:])))


def test_bound_equals_algorithm_1_formula():
    """Section 2.3's bound, with the intercept's precision 1/sigma2_beta beside 4 alpha."""
    X, y = simulate_logistic(90, 4, seed=5)
    alpha = 0.7
    model = LinearSVM.from_arrays(X, y, alpha=alpha)
    fit = bayesvm.fit(model, method="vb")
    mu, cov, chi = _q(fit)
    precision = np.array([1e-8] + [4 * alpha] * 4)
    expected = (
        5 / 2
        + 0.5 * np.sum(np.log(precision))
        + 0.5 * np.linalg.slogdet(cov)[1]
        - 0.5 * np.sum(precision * (mu**2 + np.diag(cov)))
        + _data_part(model.y, model.design @ mu, chi)
    )
    np.testing.assert_allclose(fit.lower_bound, expected, rtol=1e-10)


def test_fixed_point_satisfies_algorithm_1_updates():
    # The bound is stationary at the fixed point, so a bound change below tol = 1e-10 leaves
    # the parameters within about sqrt(1e-10) = 1e-5 of it: hence rtol 1e-4.
    X, y = simulate_logistic(100, 3, seed=6)
    model = LinearSVM.from_arrays(X, y, alpha=0.25)
    fit = bayesvm.fit(model, method="vb")
    mu, cov, chi = _q(fit)
    C = model.design
    w = 1 / np.sqrt(chi)
    precision = C.T @ (w[:, None] * C) + np.diag([1e-8, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(cov, np.linalg.inv(precision), rtol=1e-4)
    np.testing.assert_allclose(mu, cov @ C.T @ (model.y * (1 + w)), rtol=1e-4)


def test_identical_input_gives_identical_results():
    X, y = simulate_logistic(100, 5, seed=7)
    first = bayesvm.fit(MixedSVM.penalized(X, y), method="vb", seed=1)
    second = bayesvm.fit(MixedSVM.penalized(X.copy(), y.copy()), method="vb", seed=1)
    np.testing.assert_array_equal(first.lower_bound_trace, second.lower_bound_trace)
    for name in ("beta", "u", "sigma2_u"):
        np.testing.assert_array_equal(first.idata.posterior[name], second.idata.posterior[name])


@pytest.mark.parametrize("name", ["ridge-fixed", "mixed-penalized", "lasso-fixed-std"])
def test_vb_means_within_one_posterior_sd_of_gibbs(name):
    X, y = simulate_logistic(150, 4, seed=8)
    model = MODELS[name](X, y)
    vb = bayesvm.fit(model, method="vb")
    gibbs = bayesvm.fit(
        model, method="gibbs", seed=2, chains=2, draws=3000, tune=1000, progressbar=False
    )
    # VB's mean-field bias, up to a posterior sd, plus Gibbs's Monte Carlo error
    for var, vb_mean in zip(("beta", "u"), vb.coefficient_means(), strict=True):
        assert_means_within(vb_mean, gibbs, var, posterior_sds=1.0)


def test_vb_draws_follow_q():
    X, y = simulate_logistic(100, 3, seed=9)
    fit = bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=1.0), method="vb", draws=20000, seed=0)
    mu, cov, _ = _q(fit)
    draws = np.concatenate(
        [fit.idata.posterior["beta"].to_numpy()[0], fit.idata.posterior["u"].to_numpy()[0]], axis=1
    )
    se = np.sqrt(np.diag(cov) / draws.shape[0])
    assert np.all(np.abs(draws.mean(0) - mu) < 4 * se)
    np.testing.assert_allclose(
        np.cov(draws.T), cov, atol=4 * np.sqrt(2 / 20000) * np.diag(cov).max()
    )


@pytest.mark.parametrize("method", ["vb", "gibbs"])
def test_separable_data_does_not_break_vb_or_gibbs(method):
    X, y = separable(60, 2, seed=10)
    for model in (LinearSVM.from_arrays(X, y, alpha=0.01), MixedSVM.penalized(X, y)):
        fit = (
            bayesvm.fit(
                model, method=method, seed=0, draws=500, tune=500, chains=1, progressbar=False
            )
            if method == "gibbs"
            else bayesvm.fit(model)
        )
        assert all(np.all(np.isfinite(fit.idata.posterior[v])) for v in model.var_names)
        assert np.mean(fit.predict(X) == y) == 1.0


def test_lasso_vb_term_equals_a_monte_carlo_expectation_over_q():
    """The Laplace mixing block's bound term, ``E log N(u | 0, omega b^2) + E log Exp(omega |
    1/2) - E log q(omega)`` with ``q(omega) = GIG(1/2, 1, chi)``, estimated by sampling ``u``
    from a Gaussian ``q`` and ``omega`` from ``q(omega)`` (SciPy's ``geninvgauss``).
    """
    from scipy.stats import geninvgauss, norm

    from bayesvm.blocks import CoefficientStats
    from bayesvm.blocks.laplace import LaplaceMixing

    mean, variance, nu, c = np.array([0.7, -0.2]), np.array([0.3, 0.05]), 0.8, np.array([1.0, 2.0])
    block = LaplaceMixing("theta", slice(0, 2), c, "effect", nu=nu)
    stats = {"theta": CoefficientStats(mean, mean**2 + variance, np.zeros(1), 0.0)}
    params = block.conditional(stats)
    rng = np.random.default_rng(0)
    size = 400_000
    terms = []
    for j in range(2):
        chi = (mean[j] ** 2 + variance[j]) / (nu * c[j]) ** 2
        omega = np.sqrt(chi) * geninvgauss.rvs(0.5, np.sqrt(chi), size=size, random_state=rng)
        u = rng.normal(mean[j], np.sqrt(variance[j]), size=size)
        log_q = geninvgauss.logpdf(omega / np.sqrt(chi), 0.5, np.sqrt(chi)) - 0.5 * np.log(chi)
        terms.append(
            norm.logpdf(u, 0.0, np.sqrt(omega) * nu * c[j]) + np.log(0.5) - omega / 2 - log_q
        )
    total = np.sum(terms, axis=0)
    standard_error = total.std() / np.sqrt(size)
    assert abs(total.mean() - block.bound_term(params, stats)) < 4 * standard_error


def test_lasso_with_a_learned_scale_has_no_vb_and_the_error_lists_what_can_fit_it():
    X, y = simulate_logistic(40, 2, seed=11)
    model = LinearSVM.from_arrays(X, y, prior="lasso")
    assert "vb" not in bayesvm.methods(model)
    with pytest.raises(ValueError, match="methods that can"):
        bayesvm.fit(model, method="vb")
    with pytest.raises(ValueError, match="unknown method"):
        bayesvm.fit(model, method="laplace-approx")
