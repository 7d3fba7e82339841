"""Linear response VB (:mod:`bayesvm.vb.lrvb`): exact where the posterior is Gaussian, close to
Gibbs on the SVMs where mean-field q is too narrow, and refused where it does not apply."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import bayesvm
from bayesvm.bench.spread import sd_standard_error
from bayesvm.blocks import FixedPrecision
from bayesvm.blocks.base import Block
from bayesvm.blocks.coefficients import GaussianCoefficients, Segment
from bayesvm.blocks.design import DenseDesign
from bayesvm.blocks.hinge import LikelihoodStats
from bayesvm.models import LinearRegression, MissingDataSVM, MixedSVM
from bayesvm.vb.cavi import initial_state, make_cavi_step
from bayesvm.vb.lrvb import RTOL, STEP, linear_response


class GaussianLatent(Block):
    """``z_i ~ N(f_i, 1)`` observed through ``y_i ~ N(z_i, noise)``: with the coefficients
    ``theta`` the posterior is Gaussian, and mean-field ``q(theta) q(z)`` splits it
    (Giordano, Broderick & Jordan 2018, section 3: LRVB is exact there).
    """

    name = "latent"

    def __init__(self, y: np.ndarray, noise: float):
        self.y = y
        self.noise = noise
        self.variance = 1.0 / (1.0 + 1.0 / noise)  # Var(z_i | theta, y)

    def conditional(self, stats):
        """``q(z_i) = N(v (E f_i + y_i / noise), v)``: its mean."""
        return self.variance * (stats["theta"].f_mean + self.y / self.noise)

    def expected_stats(self, mean):
        return LikelihoodStats(np.ones_like(mean), mean)

    def initial_stats(self, stats, start=None):
        return self.expected_stats(self.y)


def gaussian_blocks(rng, n_samples=40, n_features=4, noise=0.5, prior_precision=0.3):
    X = rng.standard_normal((n_samples, n_features))
    y = X @ rng.standard_normal(n_features) + rng.standard_normal(n_samples) * np.sqrt(1 + noise)
    prior = FixedPrecision("prior", np.full(n_features, prior_precision), "theta", slice(None))
    names = [f"x{j}" for j in range(n_features)]
    theta = GaussianCoefficients(
        DenseDesign(X), [Segment("w", "feature", slice(None), prior)], "latent", names
    )
    exact = np.linalg.inv(prior_precision * np.eye(n_features) + X.T @ X / (1.0 + noise))
    return [theta, GaussianLatent(y, noise), prior], exact


def test_lrvb_is_the_exact_covariance_of_a_gaussian_posterior():
    blocks, exact = gaussian_blocks(np.random.default_rng(0))
    sweep = make_cavi_step(blocks)
    state = initial_state(blocks)
    for _ in range(400):  # linear convergence, rate < 0.7 here: to round-off
        state, _ = sweep(state)
    mean_field = state[0]["theta"].gaussian.covariance()
    response = linear_response(partial(make_cavi_step, blocks), state, "theta")
    assert np.max(np.abs(np.diag(mean_field) / np.diag(exact) - 1.0)) > 0.2  # q is too narrow
    np.testing.assert_allclose(response.covariance, exact, rtol=1e-6, atol=1e-6 * exact.max())
    assert response.residual < 1e-6
    assert response.asymmetry < 1e-6
    # The differences' step does not matter: a tenth of it gives the same covariance.
    finer = linear_response(partial(make_cavi_step, blocks), state, "theta", step=STEP / 10)
    np.testing.assert_allclose(finer.covariance, response.covariance, rtol=1e-6)


def test_a_tilt_moves_the_mean_by_the_conditional_covariance():
    blocks, _ = gaussian_blocks(np.random.default_rng(1))
    _, stats = initial_state(blocks)
    theta = blocks[0]
    tilt = np.array([0.5, 0.0, -1.0, 0.0])
    plain, tilted = theta.conditional(stats), theta.conditional(stats, tilt=tilt)
    np.testing.assert_allclose(
        tilted.mean - plain.mean, plain.gaussian.covariance() @ tilt, rtol=1e-10
    )


@pytest.fixture(scope="module")
def heart_fits(heart_model):
    fits = {
        covariance: bayesvm.fit(heart_model, "vb", covariance=covariance, progressbar=False)
        for covariance in ("mean-field", "lrvb")
    }
    fits["gaussian lrvb"] = bayesvm.fit(
        heart_model, "vb", family="gaussian", covariance="lrvb", progressbar=False
    )
    return fits


def test_lrvb_fit_stores_its_covariance_and_summarises_with_it(heart_fits):
    plain, corrected = heart_fits["mean-field"], heart_fits["lrvb"]
    assert plain.idata.attrs["covariance"] == "mean-field"
    assert corrected.idata.attrs["covariance"] == "lrvb"
    group = corrected.idata.variational
    assert float(group["lrvb_residual"]) < RTOL
    assert float(group["lrvb_asymmetry"]) < 1e-4
    assert not [problem for problem in corrected.problems if "LRVB" in problem]
    covariance = group["lrvb_covariance"].to_numpy()
    sd_u = np.sqrt(np.diag(covariance))[1:]  # theta = (intercept, u)
    np.testing.assert_allclose(group["u_q_sd"].to_numpy(), sd_u, rtol=1e-10)
    summary = corrected.summary(var_names=["u"], round_to="none")
    np.testing.assert_allclose(summary["sd"].to_numpy(), sd_u, rtol=1e-10)
    draws = corrected.idata.posterior["u"].to_numpy()[0]
    # 1000 draws: the sample sd is within 4 standard errors, sd * 4 / sqrt(2 * 1000).
    np.testing.assert_allclose(draws.std(axis=0), sd_u, rtol=4 / np.sqrt(2000))
    mean_field_sd = np.sqrt(group["mean_field_variance"].to_numpy())
    np.testing.assert_allclose(
        mean_field_sd, np.sqrt(plain.idata.variational["covariance"].to_numpy().diagonal())
    )
    assert np.all(sd_u > mean_field_sd[1:])
    np.testing.assert_allclose(
        corrected.idata.variational["u_q_mean"], plain.idata.variational["u_q_mean"]
    )


#: LRVB is an approximation, exact where the posterior is Gaussian and the optimum's means are
#: right. On the paper's mean-field ``q(theta) q(a)`` its sds of heart's 13 weights are 0.83-0.96
#: of a long Gibbs run's (mean-field's: 0.44-0.58), so its test allows 20 % besides Gibbs's
#: Monte Carlo error; on the Gaussian family (the hinge's augmentation integrated out,
#: :mod:`bayesvm.vb.gaussian_family`) they are 0.97-1.00, held to the issue's 15 %.
LRVB_TOLERANCE = {"lrvb": 0.2, "gaussian lrvb": 0.15}


def test_lrvb_sds_agree_with_gibbs_where_mean_field_is_too_narrow(heart_model, heart_fits):
    gibbs = bayesvm.fit(
        heart_model, "gibbs", chains=2, draws=2000, tune=300, seed=3, progressbar=False
    )
    draws = gibbs.idata.posterior["u"].to_numpy()
    gibbs_sd = draws.std(axis=(0, 1))
    mcse = np.array([sd_standard_error(draws[..., j]) for j in range(draws.shape[-1])])
    plain = heart_fits["mean-field"].idata.variational["u_q_sd"].to_numpy()
    assert np.all(plain / gibbs_sd < 0.7)  # mean-field: too narrow
    for label, tolerance in LRVB_TOLERANCE.items():
        corrected = heart_fits[label].idata.variational["u_q_sd"].to_numpy()
        gap = np.abs(corrected / gibbs_sd - 1.0)
        assert np.all(gap < tolerance + 3.0 * mcse / gibbs_sd), label


def test_covariance_option_is_checked_before_any_work(heart_model):
    with pytest.raises(ValueError, match="covariance must be one of"):
        bayesvm.fit(heart_model, "vb", covariance="full")
    regression = LinearRegression.from_arrays(np.eye(3), np.arange(3.0), alpha=1.0)
    with pytest.raises(ValueError, match="Gaussian coefficient block that takes a tilt"):
        bayesvm.fit(regression, "vb", covariance="lrvb")
    X = np.random.default_rng(0).normal(size=(20, 2))
    X[0, 0] = np.nan
    missing = MissingDataSVM.from_arrays(X, np.where(X[:, 1] > 0, 1, -1))
    with pytest.raises(ValueError, match="ImputedCoefficients does not"):
        bayesvm.fit(missing, "vb", covariance="lrvb")


def long_run(model, var_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Gibbs's sds of ``var_name`` from 4 x 20,000 draws, and their Monte Carlo errors."""
    gibbs = bayesvm.fit(model, "gibbs", chains=4, draws=20_000, tune=1000, seed=11)
    draws = gibbs.idata.posterior[var_name].to_numpy()
    mcse = np.array([sd_standard_error(draws[..., j]) for j in range(draws.shape[-1])])
    return draws.std(axis=(0, 1)), mcse


@pytest.mark.slow
def test_lrvb_sds_against_a_long_gibbs_run(heart_model, heart_fits):
    """The Gaussian family's LRVB within the issue's 15 % at every weight; mean-field's at the
    median weight (20 % at the worst, see above).
    """
    gibbs_sd, mcse = long_run(heart_model, "u")
    margin = 3.0 * mcse / gibbs_sd
    ratios = {
        label: heart_fits[label].idata.variational["u_q_sd"].to_numpy() / gibbs_sd
        for label in LRVB_TOLERANCE
    }
    assert np.median(np.abs(ratios["lrvb"] - 1.0)) < 0.15 + np.median(margin)
    for label, tolerance in LRVB_TOLERANCE.items():
        assert np.all(np.abs(ratios[label] - 1.0) < tolerance + margin), label


@pytest.mark.slow
def test_gaussian_lrvb_sds_on_standardised_spam():
    """The spam data (log frequencies, standardised, as the VB tutorial fits them): the
    Gaussian family's LRVB sds of the 57 weights are 0.97-1.05 of a long Gibbs run's,
    mean-field's LRVB 0.84-1.40.
    """
    from bayesvm.case_studies.preprocessing import standardize
    from bayesvm.data import load_spam

    spam = load_spam()
    (D,) = standardize(np.log(spam.drop(columns="type").to_numpy(dtype=float) + 0.1))
    model = MixedSVM.penalized(D, spam["type"].to_numpy(), positive_class="spam")
    fit = bayesvm.fit(model, "vb", family="gaussian", covariance="lrvb", progressbar=False)
    gibbs_sd, mcse = long_run(model, "u")
    ratio = fit.idata.variational["u_q_sd"].to_numpy() / gibbs_sd
    assert np.all(np.abs(ratio - 1.0) < 0.15 + 3.0 * mcse / gibbs_sd)


@pytest.mark.slow
def test_lrvb_narrows_mean_field_gap_on_toenail():
    """Toenail's random intercept model (Luts-Ormerod section 4.3): mean-field's sds of the
    fixed effects are 0.33-0.50 of Gibbs's, LRVB's 0.51-0.85; LRVB cannot do better at an
    optimum whose means are off (mean-field's ``sigma2_u`` is well below the posterior's;
    Giordano et al.'s condition is that the means are right).
    """
    from bayesvm.case_studies.toenail import full_data_model

    model = full_data_model()
    fits = {c: bayesvm.fit(model, "vb", covariance=c) for c in ("mean-field", "lrvb")}
    fits["gaussian lrvb"] = bayesvm.fit(model, "vb", family="gaussian", covariance="lrvb")
    gibbs_sd, mcse = long_run(model, "beta")
    ratios = {c: f.idata.variational["beta_q_sd"].to_numpy() / gibbs_sd for c, f in fits.items()}
    margin = 3.0 * mcse / gibbs_sd
    assert np.all(np.abs(ratios["lrvb"] - 1.0) + margin < np.abs(ratios["mean-field"] - 1.0))
    assert np.all(ratios["lrvb"] < 1.0 + margin)  # still too narrow: the optimum's fault
    # The Gaussian family's optimum is closer (0.89-0.98 of Gibbs's sds): the 15 %.
    assert np.all(np.abs(ratios["gaussian lrvb"] - 1.0) < 0.15 + margin)
