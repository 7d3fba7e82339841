"""Simulation-based calibration (:mod:`bayesvm.sbc`) of the hand-written samplers on every
model whose likelihood is a distribution of ``y``.

Drugowitsch's linear regression (with and without ARD) by Gibbs, the probit kernel model by
Gibbs (BGKM) and by reversible jump (FBGKM), and the missing-data SVM under the normalised
hinge likelihood by Gibbs: true values are drawn from the prior, data from the likelihood
(:func:`bayesvm.sbc.simulate_response`), and the ranks of the truth among 99 thinned
posterior draws (39 for the missing-data model) must be uniform for every parameter and for
the log joint density (chi-square on 20 bins, Bonferroni over the parameters at 0.001). The
papers' vague defaults (``Gam(1e-2, 1e-4)``, ``IG(0.01, 0.01)``, ``sigma2_beta = 1e8``) make
prior draws useless here, so each model gets proper, moderately informative hyperparameters
chosen for the check (:data:`REGRESSION`, :data:`KERNEL`, :data:`MISSING`). A planted error,
the prior variance of the weights doubled in the simulator, must fail. The logistic
regression has no hand-written sampler (VB only), and the hinge models' pseudo-likelihood is
no distribution of ``y``: they are checked against NUTS and by the one density instead.

A data set with a single class cannot be fitted: such a draw is discarded with its true
values (discarding ``theta`` and ``y`` together conditions the simulation on the data alone,
which leaves ``p(theta | y)`` and so the ranks' uniformity as they are; redrawing ``y`` alone
would not).
"""

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import invwishart

import bayesvm
from bayesvm.blocks.normalized_hinge import NormalizedHinge, log_normalizer
from bayesvm.blocks.probit import ProbitAugmentation
from bayesvm.models import KernelGKM, LinearRegression, LinearSVM, MissingDataSVM
from bayesvm.sbc import (
    KEPT_DRAWS,
    plot_rank_histograms,
    rank_uniformity,
    simulate_response,
    simulation_based_calibration,
)

#: Drugowitsch's ``tau ~ Gam(a0, b0)`` and ``alpha ~ Gam(c0, d0)`` (eq. 2-4): noise precision
#: and shrinkage with mean 1.5 and sd 0.87, instead of section 2.5's ``Gam(1e-2, 1e-4)``.
REGRESSION = {"a0": 3.0, "b0": 2.0, "c0": 3.0, "d0": 2.0}
#: Zhang et al.'s ``g ~ Ga(a_g/2, b_g/2)`` and ``eta ~ Ga(a_eta/2, b_eta/2)`` with mean 1 and
#: sd 0.71 (section 4's ``eta`` has mean 10 and sd 14, its intercept variance is unbounded),
#: so that ``f_i ~ N(0, 1/eta + 1/g)`` at every point; ``gamma`` with eq. 10's uniform
#: ``a_alpha = b_alpha = 1``.
KERNEL = {"a_g": 4.0, "b_g": 4.0, "a_eta": 4.0, "b_eta": 4.0}
#: Luts-Ormerod section 3.3's priors made proper and moderate: ``beta ~ N(0, 1)``, ``sigma2_u ~
#: IG(3, 2)`` (mean 1), ``mu_x ~ N(0, I)``, ``Sigma_x ~ IW(2 I, 5)`` (mean ``I``).
MISSING = {"sigma2_beta": 1.0, "A_u": 3.0, "B_u": 2.0, "sigma2_mu": 1.0, "nu": 5.0}
MISSING_PSI = 2.0


def simulator(draw_prior):
    """``simulate(rng) -> (model, truth)`` for :func:`~bayesvm.sbc.simulation_based_calibration`:
    ``draw_prior(rng) -> (template, truth)`` gives the model on placeholder data and the true
    values, and ``y`` is drawn from its likelihood; drawn again, with ``theta``, while the labels
    hold one class (module docstring).
    """

    def simulate(rng):
        while True:
            template, truth = draw_prior(rng)
            y = simulate_response(template, truth, rng)
            if np.unique(y).size > 1:
                with warnings.catch_warnings():  # separable labels: the priors are proper
                    warnings.simplefilter("ignore", bayesvm.IdentifiabilityWarning)
                    return dataclasses.replace(template, y=y), truth

    return simulate


def regression_prior(ard: bool, n_samples=12, n_features=8, variance_factor=1.0):
    """Drugowitsch's eq. 2-4 (eq. 24-25 with ARD) at :data:`REGRESSION`, inputs ``N(0, I)``;
    ``variance_factor`` scales the prior variance of ``w`` (the planted error when not 1).
    """

    def draw(rng):
        X = rng.standard_normal((n_samples, n_features))
        tau = rng.gamma(REGRESSION["a0"], 1.0 / REGRESSION["b0"])
        size = n_features if ard else None
        alpha = rng.gamma(REGRESSION["c0"], 1.0 / REGRESSION["d0"], size=size)
        w = rng.standard_normal(n_features) * np.sqrt(variance_factor / (tau * alpha))
        model = LinearRegression.from_arrays(X, np.zeros(n_samples), ard=ard, **REGRESSION)
        return model, {"w": w, "tau": tau, "alpha": alpha}

    return draw


def kernel_prior(active_sets: bool, n_samples=12, k_max=4):
    """Zhang et al. section 3.1's hierarchy at :data:`KERNEL` on inputs ``N(0, I_2)``: ``eta``,
    ``g``, ``u ~ N(0, 1/eta)`` and the kernel weights. BGKM (every vector active, section 4.1,
    what Gibbs samples): ``b ~ N(0, I/g)`` in the block's floored eigenbasis, ``beta = U
    Lambda^-1/2 b``. FBGKM (reversible jump): ``gamma`` from eq. 10 with at most ``k_max``
    ones, sets whose ``K_gamma,gamma`` the block finds singular excluded as the sampler excludes
    them (they have no density), and ``beta_gamma ~ N(0, (g K_gamma,gamma)^-1)``.
    """

    def draw(rng):
        X = rng.standard_normal((n_samples, 2))
        placeholder = np.where(np.arange(n_samples) % 2, 1.0, -1.0)
        model = KernelGKM.from_arrays(X, placeholder, k_max=k_max, positive_class=1, **KERNEL)
        block = model.coefficients
        eta = rng.gamma(model.a_eta / 2.0, 2.0 / model.b_eta)
        g = rng.gamma(model.a_g / 2.0, 2.0 / model.b_g)
        truth = {"intercept": rng.normal(0.0, 1.0 / np.sqrt(eta)), "eta": eta, "g": g}
        if not active_sets:
            weights = rng.standard_normal(n_samples) / np.sqrt(g)
            truth.update(beta=block.eigenbasis[1] @ weights, gamma=np.ones(n_samples))
            return model, truth
        sizes = np.arange(k_max + 1)
        log_mass = [block.log_prior(k) + _log_binomial(n_samples, k) for k in sizes]
        while True:
            active = rng.choice(n_samples, rng.choice(sizes, p=_normalized(log_mass)), False)
            kernel = model.kernel_matrix[np.ix_(active, active)]
            gamma, beta = np.zeros(n_samples), np.zeros(n_samples)
            gamma[active] = 1.0
            if active.size:
                factor = np.linalg.cholesky(kernel)
                z = rng.standard_normal(active.size) / np.sqrt(g)
                beta[active] = np.linalg.solve(factor.T, z)
            truth.update(beta=beta, gamma=gamma)
            if np.isfinite(model.log_density(truth)):
                return model, truth

    return draw


def _log_binomial(n: int, k: int) -> float:
    from scipy.special import gammaln

    return float(gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1))


def _normalized(log_mass) -> np.ndarray:
    mass = np.exp(np.asarray(log_mass) - np.max(log_mass))
    return mass / mass.sum()


def missing_data_prior(n_samples=20, n_features=2, missing_per_column=4):
    """Luts-Ormerod section 3.3 at :data:`MISSING` under the normalised hinge: ``mu_x``,
    ``Sigma_x``, the complete rows ``d_i ~ N(mu_x, Sigma_x)``, then ``missing_per_column``
    cells of each column masked at random (completely at random); ``beta``, ``sigma2_u`` and
    ``u | sigma2_u ~ N(0, sigma2_u I)``. The true ``x_mis`` are the masked cells, row by row.
    """
    psi = MISSING_PSI * np.eye(n_features)

    def draw(rng):
        mu_x = rng.normal(0.0, np.sqrt(MISSING["sigma2_mu"]), n_features)
        sigma_x = np.atleast_2d(invwishart.rvs(df=MISSING["nu"], scale=psi, random_state=rng))
        complete = rng.multivariate_normal(mu_x, sigma_x, n_samples)
        mask = np.zeros(complete.shape, dtype=bool)
        for column in range(n_features):
            mask[rng.choice(n_samples, missing_per_column, replace=False), column] = True
        sigma2_u = 1.0 / rng.gamma(MISSING["A_u"], 1.0 / MISSING["B_u"])
        truth = {
            "beta": rng.normal(0.0, np.sqrt(MISSING["sigma2_beta"]), 1),
            "u": rng.normal(0.0, np.sqrt(sigma2_u), n_features),
            "x_mis": complete[mask],
            "mu_x": mu_x,
            "Sigma_x": sigma_x,
            "sigma2_u": sigma2_u,
        }
        placeholder = np.where(np.arange(n_samples) % 2, 1.0, -1.0)
        masked = np.where(mask, np.nan, complete)
        model = MissingDataSVM.from_arrays(
            masked, placeholder, psi=psi, likelihood="normalized", positive_class=1, **MISSING
        )
        return model, truth

    return draw


def sampler(method: str, thin: int, tune: int, kept_draws: int = KEPT_DRAWS, **options):
    """``fit(model, seed)``: one chain of ``method`` keeping ``kept_draws`` draws, one sweep in
    ``thin``, after ``tune``.
    """

    def fit(model, seed):
        return bayesvm.fit(
            model,
            method,
            seed=seed,
            chains=1,
            tune=tune,
            draws=kept_draws,
            thin=thin,
            progressbar=False,
            **options,
        )

    return fit


def log_density(model, point) -> dict[str, float]:
    """The log joint density as a test quantity (Modrák et al. 2023)."""
    return {"log_density": model.log_density(point)}


def kernel_quantities(model, point) -> dict[str, float]:
    """The log joint density and ``f`` at the training points (the kernel weights themselves
    are mostly the prior's: ``beta = U Lambda^-1/2 b`` is dominated by the directions of
    ``K``'s smallest eigenvalues, which the data do not see).
    """
    f = model.stats_at(point)[model.coefficients.name].f_mean
    return {**log_density(model, point), **{f"f[{i}]": value for i, value in enumerate(f)}}


def active_set_quantities(model, point) -> dict[str, float]:
    """:func:`kernel_quantities` and the number of active vectors."""
    return {**kernel_quantities(model, point), "n_active": float(np.sum(point["gamma"]))}


@dataclasses.dataclass(frozen=True)
class Case:
    """One model and sampler: the simulator, the fit, what is ranked, and ``L``."""

    simulate: object
    fit: object
    var_names: tuple | None = None
    quantities: object = log_density
    kept_draws: int = KEPT_DRAWS

    def ranks(self, replications: int, seed: int = 0):
        return simulation_based_calibration(
            self.simulate,
            self.fit,
            replications=replications,
            seed=seed,
            var_names=self.var_names,
            quantities=self.quantities,
            kept_draws=self.kept_draws,
        )


# Thinning: each sampler's sweeps per effective draw, measured on long chains, set ``thin``
# so that the kept draws are near-independent (their median bulk ESS is checked below).
# The missing-data sampler's coefficients need about 20 sweeps per effective draw (the
# hinge's augmentation and the Metropolis-Hastings correction): it keeps L = 39 draws, two
# rank values to each of the 20 bins, to stay within minutes.
MISSING_KEPT_DRAWS = 39
CASES = {
    "regression": Case(simulator(regression_prior(ard=False)), sampler("gibbs", 3, 50)),
    "regression-ard": Case(simulator(regression_prior(ard=True)), sampler("gibbs", 3, 50)),
    "kernel-probit-gibbs": Case(
        simulator(kernel_prior(active_sets=False)),
        sampler("gibbs", 8, 200),
        var_names=("intercept", "eta", "g"),
        quantities=kernel_quantities,
    ),
    "kernel-probit-rj": Case(
        simulator(kernel_prior(active_sets=True)),
        sampler("rj", 5, 200, moves=4),
        var_names=("intercept", "gamma", "eta", "g"),
        quantities=active_set_quantities,
    ),
    "missing-data-normalized": Case(
        simulator(missing_data_prior()),
        sampler("gibbs", 20, 200, kept_draws=MISSING_KEPT_DRAWS),
        kept_draws=MISSING_KEPT_DRAWS,
    ),
}


def assert_calibrated(ranks, kept_draws: int = KEPT_DRAWS):
    """Every parameter's ranks uniform (Bonferroni at 0.001), from near-independent draws."""
    table = rank_uniformity(ranks)
    assert table["passed"].all(), table.sort_values("p_value").head()
    assert (table["ess_median"] > kept_draws / 2).all(), table.sort_values("ess_median").head()


def test_regression_gibbs_is_calibrated_quick():
    """Drugowitsch's regression by Gibbs, 100 replications (the default suite's check)."""
    assert_calibrated(CASES["regression"].ranks(100))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_sampler_is_calibrated(name):
    """200 replications of each model and sampler (minutes each)."""
    case = CASES[name]
    assert_calibrated(case.ranks(200, seed=1), case.kept_draws)


@pytest.mark.slow
def test_planted_prior_error_is_caught():
    """The simulator draws ``w`` with twice the model's prior variance: the ranks of the
    shrinkage ``alpha`` (which the data then put below its true value) are not uniform.
    """
    planted = Case(
        simulator(regression_prior(ard=False, variance_factor=2.0)), CASES["regression"].fit
    )
    table = rank_uniformity(planted.ranks(200, seed=2))
    assert not table.loc["alpha", "passed"], table.sort_values("p_value").head()


# -- the pieces -------------------------------------------------------------------------------
def test_labels_follow_the_probit_and_the_normalized_hinge():
    """The share of ``y = +1`` at each ``f`` is ``Phi(f)`` (probit) and ``exp(-2 (1 - f)_+) /
    Z(f)`` (normalised hinge), within 4 binomial standard errors.
    """
    f = np.repeat([-1.5, -0.3, 0.0, 0.8, 2.0], 20_000)
    stats = {"theta": SimpleNamespace(f_mean=f)}
    expected = {
        "probit": ndtr(f),
        "normalized": np.exp(-2.0 * np.maximum(0.0, 1.0 - f) - log_normalizer(f)),
    }
    blocks = {
        "probit": ProbitAugmentation(np.ones(f.size)),
        "normalized": NormalizedHinge(np.ones(f.size), "theta"),
    }
    for name, block in blocks.items():
        y = block.simulate_response(stats, np.random.default_rng(0)).reshape(5, -1)
        p = expected[name].reshape(5, -1)[:, 0]
        share = np.mean(y == 1.0, axis=1)
        assert np.all(np.isin(y, [-1.0, 1.0]))
        assert np.all(np.abs(share - p) < 4.0 * np.sqrt(p * (1.0 - p) / y.shape[1])), name


def test_regression_outputs_follow_the_normal_likelihood():
    """``y - w^T x ~ N(0, 1/tau)``: mean and variance within 4 Monte Carlo standard errors."""
    n = 40_000
    rng = np.random.default_rng(1)
    X = np.column_stack([np.ones(n), rng.standard_normal(n)])
    model = LinearRegression.from_arrays(X, np.zeros(n), **REGRESSION)
    point = {"w": np.array([0.5, -1.0]), "tau": 4.0, "alpha": 1.0}
    residual = simulate_response(model, point, rng) - X @ point["w"]
    assert abs(residual.mean()) < 4.0 * np.sqrt(0.25 / n)
    assert abs(residual.var() - 0.25) < 4.0 * 0.25 * np.sqrt(2.0 / n)


def test_the_hinge_draws_no_data():
    """The hinge pseudo-likelihood is no distribution of ``y``: nothing to simulate from."""
    X = np.random.default_rng(2).standard_normal((10, 2))
    model = LinearSVM.from_arrays(X, np.where(X[:, 0] > 0, 1, -1), alpha=0.5)
    with pytest.raises(ValueError, match="not a distribution"):
        simulate_response(model, {}, np.random.default_rng(0))


def test_rank_uniformity_passes_uniform_and_flags_skewed_ranks():
    """Uniform ranks pass; ranks of the larger of two uniforms fail, at 0.001 / 2 each."""
    rng = np.random.default_rng(3)
    uniform = rng.integers(0, KEPT_DRAWS + 1, 1000)
    skewed = np.maximum(uniform, rng.integers(0, KEPT_DRAWS + 1, 1000))
    ranks = ranks_frame({"uniform": uniform, "skewed": skewed})
    table = rank_uniformity(ranks)
    assert table.attrs["threshold"] == pytest.approx(0.0005)
    assert table.loc["uniform", "passed"] and not table.loc["skewed", "passed"]
    with pytest.raises(ValueError, match="must divide"):
        rank_uniformity(ranks, bins=30)


def ranks_frame(ranks: dict):
    """A result of :func:`simulation_based_calibration` holding ``ranks`` by parameter."""
    import pandas as pd

    return pd.concat(
        pd.DataFrame(
            {
                "replication": np.arange(values.size),
                "parameter": name,
                "rank": values,
                "kept_draws": KEPT_DRAWS,
                "ess": float(KEPT_DRAWS),
            }
        )
        for name, values in ranks.items()
    )


def test_ties_are_ranked_uniformly_and_histograms_drawn():
    """An indicator whose every draw equals its true value gets uniform ranks (ties broken at
    random); a fit given as a mapping of draws is read as a Fit's posterior.
    """
    ranks = simulation_based_calibration(
        lambda rng: (None, {"gamma": 1.0}),
        lambda model, seed: {"gamma": np.ones((2, 60))},
        replications=200,
        seed=4,
    )
    assert ranks["rank"].between(0, KEPT_DRAWS).all()
    assert rank_uniformity(ranks).loc["gamma", "passed"]
    figure = plot_rank_histograms(ranks)
    assert [ax.get_title() for ax in figure.axes if ax.get_visible()] == ["gamma"]
