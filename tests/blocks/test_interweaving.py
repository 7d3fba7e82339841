"""The interweaving of a learned Gaussian scale in Gibbs (Yu & Meng 2011): its slice kernel,
its conditional, its place in the sweep, and the posterior it leaves unchanged."""

import dataclasses

import numpy as np
import pytest
from scipy.integrate import cumulative_trapezoid
from scipy.stats import gamma, invgamma, kstest

import bayesvm
from bayesvm.blocks import GammaPrecision
from bayesvm.blocks.slice import slice_step
from bayesvm.models import LinearSVM, MixedSVM
from bayesvm.samplers.gibbs import make_gibbs_kernel

from conftest import assert_fits_agree, assert_samplers_agree, simulate_logistic

KS_LEVEL = 0.01


@pytest.mark.parametrize("width", [0.05, 1.0, 20.0])
def test_one_slice_step_from_the_target_stays_on_the_target(width):
    """Exact draws of ``log X``, ``X ~ Gamma(2.5)``, each moved once, are still draws of it
    (widths that need stepping out, neither, and much shrinking)."""
    rng = np.random.default_rng(0)
    start = np.log(rng.gamma(2.5, size=3000))

    def log_density(x):
        return 2.5 * x - np.exp(x)

    moved = np.array([slice_step(log_density, x, width, rng) for x in start])
    assert np.all(moved != start)
    assert kstest(np.exp(moved), gamma(2.5).cdf).pvalue > KS_LEVEL


def _tiny_model(interweave=True):
    X, y = simulate_logistic(30, 2, seed=11)
    model = MixedSVM.penalized(X, y, A_u=2.0, B_u=1.5)
    penalty = dataclasses.replace(model.penalty, interweave=interweave)
    return dataclasses.replace(model, penalty=penalty)


def test_scale_draws_follow_the_conditional_given_z_beta_and_y():
    """From exact draws of ``sigma | z, beta, y``, the move's draws have that law: the IG
    prior of ``sigma^2`` (with the Jacobian ``2 sigma``) times the hinge with ``a``
    integrated out, ``exp(-2 sum max(0, 1 - y (X beta + sigma Z z)))``, normalised on a grid.
    """
    model = _tiny_model()
    theta_block, hinge, _, prior = model.blocks
    blocks = {block.name: block for block in model.blocks}
    (move,) = theta_block.gibbs_moves(blocks)
    beta, z = np.array([0.4]), np.array([1.3, -0.6])
    grid = np.linspace(1e-3, 12.0, 40_001)
    f = beta[0] + np.outer(grid, model.Z @ z)
    hinge_loss = np.maximum(0.0, 1.0 - model.y * f).sum(axis=1)
    density = invgamma(2.0, scale=1.5).pdf(grid**2) * 2.0 * grid * np.exp(-2.0 * hinge_loss)
    cdf = cumulative_trapezoid(density, grid, initial=0.0)
    cdf /= cdf[-1]

    rng = np.random.default_rng(1)
    draws = []
    for sd in np.interp(rng.random(2000), cdf, grid):  # exact draws by the inverse cdf
        theta = np.concatenate([beta, sd * z])
        stats = {"theta": theta_block.at(theta), prior.name: prior.at(sd**-2.0)}
        changed = move.update(stats, rng)
        new_sd = changed[prior.name].value ** -0.5
        new = changed["theta"]
        np.testing.assert_allclose(new.mean, np.concatenate([beta, new_sd * z]))
        np.testing.assert_allclose(new.f_mean, model.design @ new.mean)
        np.testing.assert_allclose(changed[prior.name].precision, [new_sd**-2.0] * 2)
        draws.append(new_sd)
    assert kstest(draws, lambda x: np.interp(x, grid, cdf)).pvalue > KS_LEVEL


def test_the_sweep_redraws_the_scale_between_the_coefficients_and_the_hinge():
    model = _tiny_model()
    theta_block, hinge, beta_prior, prior = model.blocks
    assert prior.interweave and not beta_prior.interweave
    assert not _tiny_model(interweave=False).blocks[3].interweave
    with pytest.raises(ValueError, match="right after 'theta'"):
        make_gibbs_kernel([theta_block, beta_prior, hinge, prior])
    init, step, record = make_gibbs_kernel(model.blocks)
    rng = np.random.default_rng(0)
    stats, _ = step(init(rng), rng)
    theta = stats["theta"]
    np.testing.assert_allclose(theta.f_mean, model.design @ theta.mean)
    assert set(record(stats)) == {"beta", "u", "sigma2_u"}


def test_only_a_shared_scale_without_mixing_interweaves():
    options = dict(shape=1.0, rate=1.0, coefficients="theta", segment=slice(1, 3))
    with pytest.raises(ValueError, match="interweave"):
        GammaPrecision("u_prior", scale=np.ones(2), ard=True, interweave=True, **options)
    with pytest.raises(ValueError, match="interweave"):
        GammaPrecision("u_prior", scale=np.ones(2), mixing="v_prior", interweave=True, **options)


def test_vb_does_not_see_the_interweaving():
    fits = [bayesvm.fit(_tiny_model(flag), method="vb", seed=0) for flag in (True, False)]
    for group in ("posterior", "variational"):
        first, second = (getattr(fit.idata, group) for fit in fits)
        for name in first.data_vars:
            np.testing.assert_array_equal(first[name].values, second[name].values)


@pytest.mark.slow
def test_gibbs_with_and_without_interweaving_agree():
    """Long chains of both sweeps on the paper's 200 x 10 problem reach the same posterior."""
    X, y = simulate_logistic(200, 10, seed=200)
    model = MixedSVM.penalized(X, y)
    plain = dataclasses.replace(model, penalty=dataclasses.replace(model.penalty, interweave=False))
    fits = [
        bayesvm.fit(
            m, method="gibbs", seed=seed, chains=4, draws=10_000, tune=2000, progressbar=False
        )
        for seed, m in enumerate((model, plain), start=2)
    ]
    assert_fits_agree(*fits)


@pytest.mark.slow
def test_gibbs_with_interweaving_of_nu_agrees_with_nuts():
    """The ridge with a learned Polson-Scott scale ``nu`` (reported as the sd), each weight's
    prior sd ``nu`` times its feature's sd."""
    X, y = simulate_logistic(100, 4, seed=7)
    X[:, 0] *= 3.0
    assert_samplers_agree(LinearSVM.from_arrays(X, y, feature_scale="std"))
