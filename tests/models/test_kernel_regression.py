"""KernelGKM with the Gaussian likelihood: kernel regression (Zhang et al. 2010 section 2.1).

* Reversible jump with ``g`` and ``eta`` fixed and the noise precision ``tau`` learned gives
  each active set, each vector's inclusion, the model size, ``E tau`` and the model-averaged
  ``E f`` at new points (``decision_function``, section 3.3) their exact posterior values,
  computed by enumerating the ``2^6`` active sets of a six-point problem and integrating
  ``tau`` out on a grid.
* With every vector active and ``g``, ``eta``, ``tau`` fixed the posterior of ``f`` is the
  Gaussian process regression one in closed form: Gibbs and NUTS agree with it within Monte
  Carlo error and VB's ``q`` is it (to round-off); with the precisions learned (slow), Gibbs
  and NUTS agree.
* VB's bound never decreases; the model's density equals ``to_pymc()``'s
  (tests/models/test_log_density.py); bad input is refused.
* On ``y = sin(2x) + 0.3 e`` (slow) reversible jump with the default settings predicts
  ``sin(2x)`` about as well as the Gaussian process with the true kernel and noise.

Comparisons of several statistics are z-tests on their Monte Carlo standard errors,
Bonferroni-corrected to :data:`conftest.FAMILY_LEVEL`. Every seed is fixed.
"""

from functools import cached_property

import arviz as az
import numpy as np
import pytest
from scipy.special import betaln, gammaln, logsumexp
from scipy.stats import norm

import bayesvm
from bayesvm.models import KernelGKM

from conftest import FAMILY_LEVEL, NUTS_CORES, assert_ascent_converged, assert_fits_agree
from gkm_exact import all_active_sets

#: ``g`` and ``eta`` of the exact comparisons (as tests/models/test_kernel_gkm.py).
G, ETA = 0.5, 1.0
#: ``tau ~ Ga(A_TAU / 2, B_TAU / 2) = Ga(2, 0.2)``: prior mean 10, the noise sd 0.3 of the data.
A_TAU, B_TAU = 4.0, 0.4
LENGTHSCALE = 0.7


def sine_data(n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``x ~ U(-3, 3)``, ``y = sin(2x) + 0.3 e``, ``e ~ N(0, 1)``."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3.0, 3.0, n_samples)
    return x[:, None], np.sin(2.0 * x) + 0.3 * rng.standard_normal(n_samples)


X6, Y6 = sine_data(6, seed=2)
TEST_POINTS = np.array([[-2.0], [0.3], [1.5]])


def prior_covariance(rows_a, rows_b, kernel, active) -> np.ndarray:
    """``Cov(f(a), f(b)) = 1 / eta + k_a,gamma' (g K_gamma,gamma)^-1 k_b,gamma`` under eq. (7)
    (the offset and the Silverman g-prior over the active vectors), for the points whose
    kernel rows against the training points are ``rows_a`` and ``rows_b``.
    """
    covariance = np.full((rows_a.shape[0], rows_b.shape[0]), 1.0 / ETA)
    if active.size:
        gram = G * kernel[np.ix_(active, active)]
        covariance += rows_a[:, active] @ np.linalg.solve(gram, rows_b[:, active].T)
    return covariance


class ExactKernelRegression:
    """``p(gamma | y)``, ``E[tau | y]`` and ``E[f* | y]`` by enumeration of the active sets.

    Given ``gamma`` and ``tau``, ``y ~ N(0, M_gamma + I / tau)`` with ``M_gamma`` the prior
    covariance of ``f`` (:func:`prior_covariance`), and ``E[f* | y, gamma, tau] = C*_gamma
    (M_gamma + I / tau)^-1 y``. ``tau`` is integrated out by the trapezoidal rule on a grid of
    ``log tau`` (``M_gamma = V diag(d) V'`` makes each density ``O(n)`` per grid point); the
    sums over ``gamma`` weight each set by eq. (10)'s prior.
    """

    #: ``log tau`` grid: the prior Ga(2, 0.2) puts 1e-9 of its mass below 1e-4 and above 300.
    LOG_TAU = np.linspace(np.log(1e-4), np.log(1e4), 4001)

    def __init__(self, model: KernelGKM):
        self.kernel, self.y = model.kernel_matrix, model.y
        self.n = self.y.shape[0]
        self.models = all_active_sets(self.n, self.n)
        tau = np.exp(self.LOG_TAU)
        shape, rate = A_TAU / 2, B_TAU / 2
        # log Ga(tau) + log tau: the density of log tau; and the trapezoid's weights
        self.log_prior_tau = (
            shape * np.log(rate) - gammaln(shape) + shape * self.LOG_TAU - rate * tau
        )
        step = np.diff(self.LOG_TAU)[0]
        self.log_weights = np.log(np.r_[0.5, np.ones(tau.size - 2), 0.5] * step)

    def _set(self, gamma):
        """``(log p(y | gamma), p(log tau | y, gamma) on the grid, V, d, V'y)``."""
        active = np.flatnonzero(gamma)
        d, V = np.linalg.eigh(prior_covariance(self.kernel, self.kernel, self.kernel, active))
        z = V.T @ self.y
        variance = d[None, :] + np.exp(-self.LOG_TAU)[:, None]  # eigenvalues of M + I / tau
        log_likelihood = -0.5 * np.sum(np.log(2 * np.pi * variance) + z**2 / variance, axis=1)
        log_joint = log_likelihood + self.log_prior_tau + self.log_weights
        log_evidence = logsumexp(log_joint)
        return log_evidence, np.exp(log_joint - log_evidence), V, variance, z

    @cached_property
    def sets(self) -> list:
        """:meth:`_set` of every active set."""
        return [self._set(gamma) for gamma in self.models]

    @cached_property
    def probabilities(self) -> np.ndarray:
        """``p(gamma | y)`` for each of :attr:`models`."""
        k = self.models.sum(axis=1)
        log_prior = betaln(k + 1.0, self.n - k + 1.0) - betaln(1.0, 1.0)
        log_posterior = log_prior + np.array([entry[0] for entry in self.sets])
        return np.exp(log_posterior - logsumexp(log_posterior))

    def tau_mean(self) -> float:
        """``E[tau | y]``."""
        tau = np.exp(self.LOG_TAU)
        per_set = np.array([entry[1] @ tau for entry in self.sets])
        return float(self.probabilities @ per_set)

    def f_mean(self, kernel_rows: np.ndarray) -> np.ndarray:
        """``E[f* | y]`` at new points, the model average of section 3.3."""
        mean = np.zeros(kernel_rows.shape[0])
        for p, gamma, (_, tau_weights, V, variance, z) in zip(
            self.probabilities, self.models, self.sets, strict=True
        ):
            cross = prior_covariance(kernel_rows, self.kernel, self.kernel, np.flatnonzero(gamma))
            solved = (tau_weights @ (z / variance)) @ V.T  # E over tau of (M + I/tau)^-1 y
            mean += p * (cross @ solved)
        return mean


def exact_model(**options) -> KernelGKM:
    return KernelGKM.from_arrays(
        X6,
        Y6,
        likelihood="gaussian",
        lengthscale=LENGTHSCALE,
        g=G,
        eta=ETA,
        a_tau=A_TAU,
        b_tau=B_TAU,
        **options,
    )


#: Expected visits below which a model's indicator is left out of the z-tests (its Monte Carlo
#: error is then far from normal), as tests/models/test_kernel_gkm.py.
MIN_EXPECTED = 50
#: Reversible-jump proposals per sweep: fewer than the default, any number leaves the posterior
#: invariant, and the test's cost is the proposals'.
TEST_MOVES = 4


@pytest.fixture(scope="module")
def rj_fit():
    return bayesvm.fit(
        exact_model(moves=TEST_MOVES),
        method="rj",
        draws=600,
        tune=100,
        thin=1,
        chains=2,
        seed=5,
        progressbar=False,
    )


def z_scores(draws: np.ndarray, exact_values: np.ndarray) -> np.ndarray:
    """``(Monte Carlo mean - exact) / MCSE`` of each column of ``draws`` (``(chain, draw,
    k)``), the MCSE from ArviZ's effective sample size.
    """
    errors = np.concatenate(
        [np.ravel(az.mcse(draws[..., j], method="mean")) for j in range(draws.shape[-1])]
    )
    return (draws.mean(axis=(0, 1)) - exact_values) / errors


def test_rj_matches_the_enumerated_posterior(rj_fit):
    """The frequent active sets' probabilities, each ``p(gamma_j = 1 | y)``, the model-size
    distribution, ``E[tau | y]`` and the model-averaged ``E[f* | y]`` at three new points."""
    reference = ExactKernelRegression(rj_fit.model)
    posterior = rj_fit.idata.posterior
    gamma = posterior["gamma"].to_numpy().astype(int)
    codes = gamma @ 2 ** np.arange(6)[::-1]
    model_codes = reference.models @ 2 ** np.arange(6)[::-1]
    total = codes.size
    frequent = np.flatnonzero(reference.probabilities * total >= MIN_EXPECTED)
    sizes = gamma.sum(axis=-1)
    size_probabilities = np.bincount(
        reference.models.sum(axis=1), weights=reference.probabilities, minlength=7
    )
    common_sizes = np.flatnonzero(size_probabilities * total >= MIN_EXPECTED)
    kernel_rows = rj_fit.model.kernel_between(TEST_POINTS)
    f = posterior["intercept"].to_numpy()[..., None] + posterior["beta"].to_numpy() @ kernel_rows.T
    np.testing.assert_allclose(
        rj_fit.decision_function(TEST_POINTS), f.mean(axis=(0, 1)), rtol=1e-10, atol=1e-12
    )
    draws = np.concatenate(
        [
            (codes[..., None] == model_codes[frequent]).astype(float),
            gamma.astype(float),
            (sizes[..., None] == common_sizes).astype(float),
            posterior["tau"].to_numpy()[..., None],
            f,
        ],
        axis=-1,
    )
    exact = np.concatenate(
        [
            reference.probabilities[frequent],
            reference.probabilities @ reference.models,
            size_probabilities[common_sizes],
            [reference.tau_mean()],
            reference.f_mean(kernel_rows),
        ]
    )
    assert frequent.size >= 3
    z = z_scores(draws, exact)
    assert np.all(np.abs(z) < norm.isf(FAMILY_LEVEL / 2 / z.size)), z


# -- every vector active: Gibbs, VB and NUTS ----------------------------------------------------
X20, Y20 = sine_data(20, seed=3)
#: Training points whose ``f`` is compared.
CHECKED = [0, 7, 14]
#: The noise precision of the data (sd 0.3), fixed for the closed-form comparison.
TAU = 1 / 0.09


def exact_f_moments(model: KernelGKM) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of ``f`` at the training points with every vector active and the
    precisions fixed: Gaussian process regression with the prior covariance ``1 / eta + K /
    g`` (``beta ~ N(0, K^-1 / g)``, section 2.2) and the noise variance ``1 / tau``.
    """
    prior = 1.0 / model.eta + model.kernel_matrix / model.g
    gain = np.linalg.solve(prior + np.eye(model.n_samples) / model.tau, prior).T
    return gain @ model.y, np.sqrt(np.diag(prior - gain @ prior))


def function_values(fit) -> np.ndarray:
    """Draws of ``f`` at the :data:`CHECKED` training points: ``(chain, draw, 3)``."""
    posterior = fit.idata.posterior
    rows = fit.model.kernel_matrix[CHECKED]
    return posterior["intercept"].to_numpy()[..., None] + posterior["beta"].to_numpy() @ rows.T


def with_function_values(fit):
    """Add :func:`function_values` to the posterior as ``f``."""
    fit.idata.posterior["f"] = (("chain", "draw", "checked_point"), function_values(fit))
    return fit


def fixed_precision_model() -> KernelGKM:
    """The twenty-point model with ``g``, ``eta`` and ``tau`` fixed."""
    return KernelGKM.from_arrays(
        X20, Y20, likelihood="gaussian", lengthscale=LENGTHSCALE, g=G, eta=ETA, tau=TAU
    )


def test_all_active_vb_is_the_closed_form():
    """``g``, ``eta`` and ``tau`` fixed: VB's ``q(u, b)``, mapped to ``f = u + Psi b`` at three
    training points, has the closed form's mean and sd (its only block is exact).
    """
    model = fixed_precision_model()
    mean, sd = exact_f_moments(model)
    q = bayesvm.fit(model, method="vb").idata["variational"]
    design = np.column_stack([np.ones(20), model.coefficients.eigenbasis[0]])[CHECKED]
    q_mean = design @ np.r_[q["intercept_mean"].to_numpy(), q["feature_weight_mean"].to_numpy()]
    q_sd = np.sqrt(np.sum((design @ q["covariance"].to_numpy()) * design, axis=1))
    np.testing.assert_allclose(q_mean, mean[CHECKED], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(q_sd, sd[CHECKED], rtol=1e-6)


#: Chain lengths of the comparison with the closed form (NUTS's compilation and sampling take
#: 25 s here, so it runs in the slow suite; its density is proven :meth:`to_pymc`'s by
#: tests/models/test_log_density.py in the default one).
SAMPLER_OPTIONS = {
    "gibbs": {"draws": 1000, "tune": 100, "thin": 1},
    "nuts": {"draws": 500, "tune": 300, "chains": 2, "cores": NUTS_CORES},
}


@pytest.mark.parametrize("method", ["gibbs", pytest.param("nuts", marks=pytest.mark.slow)])
def test_all_active_samplers_match_the_closed_form(method):
    """``g``, ``eta`` and ``tau`` fixed: the sampler's means and sds of ``f`` at three training
    points agree with the closed form within Monte Carlo error (z-tests, Bonferroni-corrected
    to ``FAMILY_LEVEL``), with ESS above 400 and R-hat below 1.01 (``f``'s; the weights
    ``beta`` in the directions of ``K``'s smallest eigenvalues are barely identified).
    """
    model = fixed_precision_model()
    mean, sd = exact_f_moments(model)
    fit = bayesvm.fit(model, method, seed=3, progressbar=False, **SAMPLER_OPTIONS[method])
    f = az.convert_to_dataset({"f": function_values(fit)})
    moments = az.summary(f, kind="all", round_to="none")
    mcse_sd = az.summary(f, kind="diagnostics", round_to="none")["mcse_sd"].to_numpy()
    z = np.r_[
        (moments["mean"].to_numpy() - mean[CHECKED]) / moments["mcse_mean"].to_numpy(),
        (moments["sd"].to_numpy() - sd[CHECKED]) / mcse_sd,
    ]
    assert np.all(np.abs(z) < norm.isf(FAMILY_LEVEL / 2 / z.size)), z
    assert moments["ess_bulk"].min() > 400 and moments["r_hat"].max() < 1.01


@pytest.mark.slow
def test_all_active_gibbs_and_nuts_agree_with_learned_precisions():
    """``g``, ``eta`` and ``tau`` learned under their priors: the means and sds of the
    intercept, ``f`` at three training points and the log precisions agree
    (:func:`conftest.assert_fits_agree`).
    """
    model = KernelGKM.from_arrays(X20, Y20, likelihood="gaussian", lengthscale=LENGTHSCALE)
    gibbs = bayesvm.fit(model, "gibbs", draws=10_000, tune=1000, thin=1, seed=3, progressbar=False)
    nuts = bayesvm.fit(
        model, "nuts", draws=4000, tune=1000, chains=4, seed=4, cores=NUTS_CORES, progressbar=False
    )
    var_names = ["intercept", "f", "g", "eta", "tau"]
    assert_fits_agree(with_function_values(gibbs), with_function_values(nuts), var_names)


#: A decrease of the bound larger than this share of its size is not round-off.
BOUND_ROUNDOFF = 1e-12


@pytest.mark.parametrize(
    "fixed", [{}, {"g": G, "eta": ETA}, {"tau": TAU}], ids=["learned", "fixed-g-eta", "fixed-tau"]
)
def test_vb_bound_never_decreases(fixed):
    """Every coordinate update raises the bound (up to round-off), ``tau`` learned or fixed."""
    model = KernelGKM.from_arrays(X20, Y20, likelihood="gaussian", lengthscale=LENGTHSCALE, **fixed)
    fit = bayesvm.fit(model, method="vb")
    trace = fit.lower_bound_trace
    assert_ascent_converged(fit)
    assert trace.size > 2 and np.all(np.isfinite(trace))
    assert np.all(np.diff(trace) >= -BOUND_ROUNDOFF * np.abs(trace[:-1])), np.diff(trace).min()


# -- against a Gaussian process -----------------------------------------------------------------
@pytest.mark.slow
def test_default_rj_predicts_as_well_as_the_true_gaussian_process():
    """``n = 200``, default settings but the lengthscale: the RMSE of ``decision_function``
    against ``sin(2x)`` at 500 new points is at most 1.1 times that of scikit-learn's Gaussian
    process regression with the same kernel (``exp(-d^2 / theta^2)`` is scikit-learn's RBF of
    length ``theta / sqrt(2)``) and the true noise variance 0.09, hyperparameters fixed.
    """
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel

    X, y = sine_data(200, seed=0)
    X_test = np.random.default_rng(1).uniform(-3.0, 3.0, (500, 1))
    truth = np.sin(2.0 * X_test[:, 0])
    gp = GaussianProcessRegressor(
        RBF(LENGTHSCALE / np.sqrt(2.0)) + WhiteKernel(0.09), optimizer=None
    ).fit(X, y)
    gp_rmse = np.sqrt(np.mean((gp.predict(X_test) - truth) ** 2))
    model = KernelGKM.from_arrays(X, y, likelihood="gaussian", lengthscale=LENGTHSCALE)
    fit = bayesvm.fit(model, "rj", progressbar=False)
    rmse = np.sqrt(np.mean((fit.decision_function(X_test) - truth) ** 2))
    assert rmse <= 1.1 * gp_rmse, (rmse, gp_rmse)


# -- input ------------------------------------------------------------------------------------
def test_regression_input_is_checked_and_predictions_are_numbers():
    with pytest.raises(ValueError, match="NaN or infinite"):
        KernelGKM.from_arrays(X6, np.r_[Y6[:-1], np.nan], likelihood="gaussian")
    with pytest.raises(ValueError, match="tau is the Gaussian likelihood's"):
        KernelGKM.from_arrays(X6, np.sign(Y6), tau=1.0)
    with pytest.raises(ValueError, match="a regression has none"):
        KernelGKM.from_arrays(X6, Y6, likelihood="gaussian", positive_class=1)
    with pytest.raises(ValueError, match="tau must be finite"):
        KernelGKM.from_arrays(X6, Y6, likelihood="gaussian", tau=-1.0)
    fit = bayesvm.fit(exact_model(), method="vb")
    np.testing.assert_array_equal(fit.predict(TEST_POINTS), fit.decision_function(TEST_POINTS))
    lower, upper = fit.predictive_interval(TEST_POINTS)
    assert np.all(lower < fit.predict(TEST_POINTS)) and np.all(fit.predict(TEST_POINTS) < upper)
    with pytest.raises(ValueError, match="regression"):
        fit.predict_proba(TEST_POINTS)
    with pytest.raises(ValueError, match="regression"):
        fit.model.training_probabilities(fit)
    assert fit.idata.log_likelihood["y"].shape[-1] == 6
