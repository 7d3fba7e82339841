"""Every variational fit says how good its ``q`` is: the Pareto k-hat of ``log p - log q``
(Yao, Vehtari, Simpson & Gelman 2018), from each block's ``q_log_density``.
"""

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import cho_solve

import bayesvm
from bayesvm.blocks.hinge import CHI_FLOOR
from bayesvm.checks.pareto import MAX_WEIGHED_DRAWS, QCheck
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
from bayesvm.results import khat_threshold
from bayesvm.vb.cavi import initial_state, make_cavi_step

from conftest import simulate_logistic

X, Y = simulate_logistic(40, 3, seed=7)
GROUPS = np.arange(40) % 5


def regression_data(n_samples=40, n_features=3, seed=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    return X, X @ rng.standard_normal(n_features) + 0.5 * rng.standard_normal(n_samples)


def incomplete(X, seed=9):
    """``X`` with a fifth of two columns' cells missing (some rows miss both)."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.random(X.shape[0]) < 0.2, 1] = np.nan
    X[rng.random(X.shape[0]) < 0.2, 2] = np.nan
    return X


MODELS = {
    "ridge, fixed": lambda: LinearSVM.from_arrays(X, Y, alpha=0.5),
    "ridge, learned": lambda: LinearSVM.from_arrays(X, Y),
    "lasso, fixed": lambda: LinearSVM.from_arrays(X, Y, prior="lasso", alpha=0.5),
    "mixed, penalized": lambda: MixedSVM.penalized(X, Y),
    "mixed, random intercept": lambda: MixedSVM.random_intercept(X, Y, groups=GROUPS),
    "spike-and-slab, Laplace-zero": lambda: SpikeSlabSVM.laplace_zero(X, Y),
    "spike-and-slab, Gaussian slab": lambda: SpikeSlabSVM.gaussian_slab(X, Y),
    "missing data": lambda: MissingDataSVM.from_arrays(incomplete(X), Y),
    "linear regression, fixed alpha": lambda: LinearRegression.from_arrays(
        *regression_data(), alpha=1.0
    ),
    "linear regression, ARD": lambda: LinearRegression.from_arrays(*regression_data(), ard=True),
    "logistic regression": lambda: LogisticRegression.from_arrays(X, Y),
    "logistic regression, sequential": lambda: LogisticRegression.from_arrays(
        X, Y, hyperprior=False
    ),
    "kernel GKM": lambda: KernelGKM.from_arrays(X[:20], Y[:20]),
    # VB fits BGKM, every vector active, which a k_max below n leaves out of FBGKM's support
    "kernel GKM, k_max < n": lambda: KernelGKM.from_arrays(X[:20], Y[:20], k_max=5),
    "GP SVM": lambda: GPSVM.from_arrays(X, Y, lengthscale=1.0),
}


def fit_quietly(model, method="vb", **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        return bayesvm.fit(model, method=method, seed=0, progressbar=False, **options)


# -- each block's log q against SciPy's densities at the same parameters -----------------------
def q_parameters(model, sweeps=10):
    """Every block's ``q`` after some CAVI sweeps (any ``q`` of the family will do)."""
    step = make_cavi_step(model.blocks)
    state = initial_state(model.blocks)
    for _ in range(sweeps):
        state, _ = step(state)
    return state[0]


def gaussian_reference(block, params, draws):
    gaussian, mean = params
    covariance = np.column_stack([gaussian.solve(unit) for unit in np.eye(mean.size)])
    theta = np.concatenate([draws[s.name] for s in block.segments], axis=1)
    return stats.multivariate_normal(mean, covariance).logpdf(theta)


def gp_reference(block, params, draws):
    mean, covariance = block.moments(params)
    return stats.multivariate_normal(mean, covariance).logpdf(draws[block.var_name])


def gamma_reference(block, rate, draws):
    reported = draws[block.var_names[0]].reshape(len(draws[block.var_names[0]]), -1)
    lam = {"precision": reported, "variance": 1 / reported, "sd": reported**-2.0}[block.report]
    # log |d lambda / d r|: 0, 2 log lambda, log 2 + 3/2 log lambda
    jacobian = {"precision": 0.0, "variance": 2 * np.log(lam), "sd": np.log(2 * lam**1.5)}
    density = stats.gamma(block.shape_q, scale=1 / np.asarray(rate)).logpdf(lam)
    return np.sum(density + jacobian[block.report], axis=1)


def mixing_reference(block, params, draws):
    chi = params.scaled**2 * params.precision
    mean = 1 / np.sqrt(np.maximum(chi, CHI_FLOOR))
    b = draws[block.var_names[0]]
    return stats.invgauss(mean, scale=1.0).logpdf(b).sum(axis=1)


def inclusion_reference(block, params, draws):
    theta = np.concatenate([draws[s.name] for s in block.segments], axis=1)
    gaussian = stats.multivariate_normal(params.mean, params.covariance).logpdf(theta)
    return gaussian + stats.bernoulli(params.inclusion).logpmf(draws["gamma"]).sum(axis=1)


def normal_gamma_reference(block, params, draws):
    covariance = params.covariance()
    tau = draws["tau"]
    gaussian = [
        stats.multivariate_normal(params.mean, covariance / t).logpdf(w)
        for w, t in zip(draws["w"], tau, strict=True)
    ]
    return stats.gamma(block.shape, scale=1 / params.rate).logpdf(tau) + np.array(gaussian)


def imputation_mean_reference(block, params, draws):
    factor, mean = params
    covariance = cho_solve((factor, True), np.eye(mean.size))
    return stats.multivariate_normal(mean, covariance).logpdf(draws["mu_x"])


def imputation_covariance_reference(block, params, draws):
    factor, df = params
    q = stats.invwishart(df, factor @ factor.T)
    return np.array([q.logpdf(sigma) for sigma in draws["Sigma_x"]])


def cells_reference(block, params, draws):
    total = np.zeros(draws["x_mis"].shape[0])
    for pattern, c in zip(block.patterns, params.patterns, strict=True):
        for row, cells in enumerate(pattern.cells):
            covariance = (c.transform * c.scales[row]) @ c.transform.T
            q = stats.multivariate_normal(c.mean[row], covariance)
            total += np.atleast_1d(q.logpdf(draws["x_mis"][:, cells]))
    return total


def sequential_reference(block, params, draws):
    return gaussian_reference(block.coefficients, params.coefficients, draws)


REFERENCES = {
    "GaussianCoefficients": gaussian_reference,
    "ImputedCoefficients": gaussian_reference,
    "GPValues": gp_reference,
    "GammaPrecision": gamma_reference,
    "MixedGammaPrecision": gamma_reference,
    "SilvermanG": gamma_reference,
    "LaplaceMixing": mixing_reference,
    "InclusionCoefficients": inclusion_reference,
    "NormalGammaCoefficients": normal_gamma_reference,
    "ImputationMean": imputation_mean_reference,
    "ImputationCovariance": imputation_covariance_reference,
    "MissingCells": cells_reference,
    "SequentialJaakkolaJordan": sequential_reference,
}


@pytest.mark.parametrize("name", list(MODELS))
def test_each_blocks_log_q_is_scipys_density_of_its_draws(name):
    """Up to one constant per block (the contract): the difference from SciPy's log density
    at the same draws is the same at every draw, to round-off.
    """
    model = MODELS[name]()
    params = q_parameters(model)
    rng = np.random.default_rng(1)
    checked = []
    for block in model.blocks:
        q = params[block.name]
        draws = block.draw_q(q, rng, 200)
        if not block.var_names:  # integrated out: k-hat's log q leaves it out
            assert draws == {}
            continue
        log_q = block.q_log_density(q, draws)
        if type(block).__name__ == "KernelCoefficients":  # checked on its own below
            continue
        reference = REFERENCES[type(block).__name__](block, q, draws)
        assert log_q.shape == reference.shape == (200,)
        spread = np.ptp(log_q - reference)
        assert spread <= 1e-8 * (1.0 + np.max(np.abs(reference))), (type(block).__name__, spread)
        checked.append(type(block).__name__)
    assert checked


def test_the_kernel_blocks_log_q_maps_beta_back_to_the_feature_weights():
    """``q`` is Gaussian in ``(u, b)``; at ``beta = U Lambda^-1/2 b`` its density gains
    ``log |db / dbeta| = log |Lambda| / 2``.
    """
    model = MODELS["kernel GKM"]()
    block = model.blocks[1]
    q = q_parameters(model)[block.name]
    draws = block.draw_q(q, np.random.default_rng(2), 200)
    same = block.all_active.draw_q(q, np.random.default_rng(2), 200)  # the same normals
    gaussian, mean = q
    covariance = gaussian.covariance()
    weights = np.hstack([same["intercept"], same["feature_weight"]])
    reference = stats.multivariate_normal(mean, covariance).logpdf(weights)
    reference += 0.5 * np.sum(np.log(block.spectrum[0]))
    np.testing.assert_allclose(block.q_log_density(q, draws), reference, rtol=1e-7)


def test_a_block_states_its_q_by_having_its_log_density():
    """A block that reports a variable states ``log q`` by having ``q_log_density`` (the
    protocol ``QDensityBlock``); the base class has no placeholder for it.
    """
    from bayesvm.blocks import Block, QDensityBlock

    class Reported(Block):
        var_names = ("x",)

    assert not isinstance(Reported(), QDensityBlock)


# -- every variational fit reports k-hat -------------------------------------------------------
FITS = [(name, "vb") for name in MODELS] + [("GP SVM", "svi")]


@pytest.mark.parametrize(("name", "method"), FITS, ids=[f"{n}, {m}" for n, m in FITS])
def test_every_variational_fit_reports_its_pareto_k(name, method):
    fit = fit_quietly(MODELS[name](), method)
    assert isinstance(fit.pareto_k, float) and 0.0 <= fit.pareto_k < np.inf
    log_weights = fit.idata["variational"]["log_weight"]
    assert log_weights.dims == ("draw",) and log_weights.size == 1000
    assert np.isfinite(log_weights).all()
    flagged = [problem for problem in fit.problems if "Pareto k-hat" in problem]
    assert len(flagged) == (fit.pareto_k > khat_threshold(1000))


def test_threshold_is_arvizs_for_the_number_of_draws():
    assert khat_threshold(1000) == pytest.approx(2 / 3)
    assert khat_threshold(10**6) == 0.7
    assert khat_threshold(100) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("pareto_k", "shown"), [(0.6749, "0.675, above 0.667"), (0.91, "0.91, above 0.67")]
)
def test_the_problem_shows_k_hat_apart_from_its_threshold(pareto_k, shown):
    """Rounded to two digits, 0.6749 would read "0.67, above 0.67"."""
    check = QCheck(pareto_k, "", np.zeros(1000))
    assert shown in check.problem()


def test_an_exact_q_has_k_hat_0_and_no_problem():
    """Drugowitsch's regression with a fixed alpha: the normal-gamma ``q`` is the posterior,
    so ``log p - log q = log p(y)`` at every draw, to round-off.
    """
    fit = bayesvm.fit(
        LinearRegression.from_arrays(*regression_data(200, 5), alpha=1.0), method="vb", seed=0
    )
    log_weights = fit.idata["variational"]["log_weight"].to_numpy()
    assert np.ptp(log_weights) < 1e-9 * np.max(np.abs(log_weights))
    assert fit.pareto_k == pytest.approx(0.0, abs=1e-12) and "exact" in fit.pareto_k_note
    assert fit.problems == [] and fit.converged


def test_a_q_far_from_its_posterior_is_a_problem_that_bayesvm_fit_warns_of():
    """ARD on pure noise: mean-field ``q`` misses the posterior's funnel in ``(w_i,
    alpha_i)``.
    """
    rng = np.random.default_rng(3)
    X_noise, y_noise = rng.standard_normal((50, 10)), rng.standard_normal(50)
    model = LinearRegression.from_arrays(X_noise, y_noise, ard=True)
    with pytest.warns(bayesvm.ConvergenceWarning, match="Pareto k-hat"):
        fit = bayesvm.fit(model, method="vb", seed=0)
    assert fit.pareto_k > khat_threshold(1000) and not fit.converged


@pytest.mark.slow
def test_vb_on_all_cardiac_patients_warns_of_its_k_hat():
    """Mode A of the missing-data model on all 3504 patients (docs/tutorials/cardiac.md): its
    mean-field ``q`` treats the 1246 imputed cells as independent of the weight they move
    with, and is 2.6 times too narrow in that weight. The fit takes some 40 s.
    """
    from bayesvm.case_studies.cardiac import outcome, predictors
    from bayesvm.case_studies.preprocessing import standardize
    from bayesvm.data import load_cardiac

    data = load_cardiac()
    (D,) = standardize(predictors(data))
    model = MissingDataSVM.from_arrays(D, outcome(data))
    with pytest.warns(bayesvm.ConvergenceWarning, match="Pareto k-hat"):
        fit = bayesvm.fit(model, method="vb", seed=1, progressbar=False)
    assert float(fit.idata["variational"]["u_mean"][-1]) > 0.3  # mode A: cholesterol's weight
    assert fit.pareto_k > 0.7
    assert any("Pareto k-hat" in problem for problem in fit.problems)


def test_no_k_hat_without_a_density_or_with_too_few_draws():
    inducing = GPSVM.from_arrays(X, Y, inducing=5, seed=0)
    fit = fit_quietly(inducing)
    assert np.isnan(fit.pareto_k) and "no model's posterior" in fit.pareto_k_note
    assert "log_weight" not in fit.idata["variational"]
    few = fit_quietly(MODELS["ridge, fixed"](), draws=50)
    assert np.isnan(few.pareto_k) and "50 draws" in few.pareto_k_note
    assert not any("Pareto" in problem for problem in few.problems)


def test_samplers_fits_have_no_k_hat():
    fit = fit_quietly(MODELS["ridge, fixed"](), "em")
    assert np.isnan(fit.pareto_k) and fit.pareto_k_note == ""


def test_k_hat_is_kept_by_the_file(tmp_path):
    fit = fit_quietly(MODELS["ridge, learned"]())
    loaded = bayesvm.load(fit.to_netcdf(tmp_path / "fit.nc"))
    assert loaded.pareto_k == fit.pareto_k
    exact = fit_quietly(MODELS["linear regression, fixed alpha"]())
    loaded = bayesvm.load(exact.to_netcdf(tmp_path / "exact.nc"))
    assert loaded.pareto_k == pytest.approx(0.0, abs=1e-12)
    assert loaded.pareto_k_note == exact.pareto_k_note
    del exact.idata.attrs["pareto_k"]  # as in a file written before k-hat was stored
    assert np.isnan(bayesvm.load(exact.to_netcdf(tmp_path / "old.nc")).pareto_k)


# -- PSIS-corrected moments --------------------------------------------------------------------
def test_psis_moments_of_an_exact_q_are_its_draws_moments():
    fit = fit_quietly(MODELS["linear regression, fixed alpha"]())
    moments = fit.psis_moments(["w", "tau"])
    w = fit.idata.posterior["w"].to_numpy()[0]
    np.testing.assert_allclose(moments["mean"].to_numpy()[:3], w.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(moments["sd"].to_numpy()[:3], w.std(axis=0), rtol=1e-12)
    assert list(moments.index) == ["w[x0]", "w[x1]", "w[x2]", "tau"]


def test_psis_moments_weigh_the_draws_by_their_smoothed_weights():
    import arviz as az

    fit = fit_quietly(MODELS["ridge, fixed"]())
    assert fit.pareto_k <= khat_threshold(1000)
    smoothed, _ = az.psislw(fit.idata["variational"]["log_weight"].to_numpy().copy())
    weights = np.exp(smoothed)
    u = fit.idata.posterior["u"].to_numpy()[0]
    moments = fit.psis_moments(["u"])
    np.testing.assert_allclose(moments["mean"].to_numpy(), weights @ u, rtol=1e-10)
    sd = np.sqrt(weights @ (u - weights @ u) ** 2)
    np.testing.assert_allclose(moments["sd"].to_numpy(), sd, rtol=1e-10)


def test_a_fit_with_more_draws_weighs_its_first_ones():
    """Past :data:`MAX_WEIGHED_DRAWS` each draw would cost a density evaluation and add nothing
    the diagnostic needs: the first ones are weighed, and PSIS corrects those draws' moments
    (``q`` exact here: their plain moments).
    """
    draws = MAX_WEIGHED_DRAWS + 500
    fit = fit_quietly(MODELS["linear regression, fixed alpha"](), draws=draws)
    assert fit.idata.posterior.sizes["draw"] == draws
    log_weights = fit.idata["variational"]["log_weight"].to_numpy()
    assert log_weights.size == MAX_WEIGHED_DRAWS and np.isfinite(log_weights).all()
    assert fit.pareto_k == pytest.approx(0.0, abs=1e-12)
    w = fit.idata.posterior["w"].to_numpy()[0, :MAX_WEIGHED_DRAWS]
    np.testing.assert_allclose(fit.psis_moments(["w"])["mean"], w.mean(axis=0), rtol=1e-12)


def test_psis_moments_are_refused_above_the_threshold():
    fit = fit_quietly(MODELS["ridge, fixed"]())
    fit.idata.attrs["pareto_k"] = 0.9
    with pytest.raises(ValueError, match="k-hat of q's importance weights is 0.90"):
        fit.psis_moments()
    few = fit_quietly(MODELS["ridge, fixed"](), draws=50)
    with pytest.raises(ValueError, match="not computed: 50 draws"):
        few.psis_moments()
