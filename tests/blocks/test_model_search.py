"""The moves on the inclusion vector are exact: with the hinge augmentation held fixed, the
Gaussian slab's ``p(gamma | a, y)`` is closed form (Polson-Scott eq. 17), and each update of
``gamma`` leaves it invariant.

Every test enumerates the ``2^m`` models. The invariance tests start many independent chains
from exact draws of ``p(gamma | a, y)`` and apply the update: if it leaves the distribution
invariant, the chains' end states are again independent draws of it, so a chi-square
goodness-of-fit test is exact (no autocorrelation to correct for). That a sampler that never
moves would pass too is ruled out by requiring most chains to move; the tests' power is shown
by the same test rejecting an update that targets a slightly different prior.
"""

import itertools

import numpy as np
import pytest
from scipy.special import betaln, expit, logsumexp

from bayesvm.blocks import LikelihoodStats
from bayesvm.blocks.active_set import CollapsedGaussian
from bayesvm.blocks.model_search import DEFAULT_JUMPS, JumpSettings, gibbs_sweep, jump
from bayesvm.models import SpikeSlabSVM
from bayesvm.samplers.gibbs import make_gibbs_kernel

from conftest import goodness_of_fit

# Chi-square tests reject at this level; with the seeds fixed the tests are deterministic.
LEVEL = 1e-3
N_CHAINS = 10_000
SLAB_SD = 0.3
SIGMA2_BETA = 1e2


def augmented_data(n_samples: int, n_features: int, seed: int):
    """Features, labels with a weak signal on three features, and a fixed draw of the hinge
    augmentation's ``1/a``: a posterior over models that spreads its mass (the most probable
    model has about 10 %)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    score = 0.3 * X[:, :3] @ [1.0, -0.7, 0.5] + rng.standard_normal(n_samples)
    y = np.where(score > 0, 1.0, -1.0)
    inv_a = rng.wald(1.0, 1.0, n_samples)
    return X, y, inv_a


def all_models(m: int) -> np.ndarray:
    """Every inclusion vector of length ``m``, row ``i`` the binary digits of ``i``."""
    return np.array(list(itertools.product([0, 1], repeat=m)), dtype=float)


def model_index(gamma: np.ndarray) -> np.ndarray:
    """Row of :func:`all_models` of each inclusion vector."""
    gamma = np.atleast_2d(gamma)
    return (gamma @ 2 ** np.arange(gamma.shape[1])[::-1]).astype(int)


def posterior_over_models(X, y, inv_a, log_prior) -> np.ndarray:
    """``p(gamma | a, y)`` by brute force: for each model, the Gaussian integral of the
    augmented likelihood ``prod_i exp(-(1 + a_i - y_i f_i)^2 / (2 a_i))`` over the included
    coefficients (intercept ``N(0, SIGMA2_BETA)``, slab ``N(0, SLAB_SD^2)``), written out with
    determinants, times ``p(gamma)``.
    """
    n_samples, m = X.shape
    C = np.column_stack([np.ones(n_samples), X])
    gram = C.T @ (inv_a[:, None] * C)
    linear = C.T @ (y * (1.0 + inv_a))
    prior_precision = np.r_[1.0 / SIGMA2_BETA, np.full(m, SLAB_SD**-2)]
    models = all_models(m)
    log_posterior = np.empty(len(models))
    for i, gamma in enumerate(models):
        active = np.flatnonzero(np.r_[1.0, gamma])
        precision = gram[np.ix_(active, active)] + np.diag(prior_precision[active])
        h = linear[active]
        log_posterior[i] = (
            0.5 * np.sum(np.log(prior_precision[active]))
            - 0.5 * np.linalg.slogdet(precision)[1]
            + 0.5 * h @ np.linalg.solve(precision, h)
            + log_prior(int(gamma.sum()), m)
        )
    return np.exp(log_posterior - logsumexp(log_posterior))


def bernoulli_prior(rho: float):
    """``log p(gamma)`` of independent ``Bernoulli(rho)`` indicators with ``k`` ones."""
    return lambda k, m: k * np.log(rho) + (m - k) * np.log1p(-rho)


def beta_bernoulli_prior(a: float, b: float):
    """``log p(gamma)`` of Zhang et al.'s Beta-Bernoulli prior (eq. 10) with ``k`` ones."""
    return lambda k, m: betaln(a + k, b + m - k) - betaln(a, b)


def stationary_starts(probabilities: np.ndarray, seed: int) -> np.ndarray:
    """``N_CHAINS`` independent draws of the model index."""
    return np.random.default_rng(seed).choice(probabilities.shape[0], N_CHAINS, p=probabilities)


def test_the_target_spreads_its_mass():
    """The tests below are only as strong as the target is spread over the models."""
    X, y, inv_a = augmented_data(40, 6, seed=9)
    probabilities = posterior_over_models(X, y, inv_a, bernoulli_prior(0.3))
    assert probabilities.max() < 0.15
    assert np.sum(probabilities > 0.005) >= 25
    inclusion = all_models(6).T @ probabilities
    assert np.all((inclusion > 0.1) & (inclusion < 0.95))


# -- the move sets on their own ---------------------------------------------------------------
def run_chains(X, y, inv_a, starts, update, log_prior, seed) -> tuple[np.ndarray, float]:
    """Apply ``update(collapsed, switchable, log_prior, rng)`` once to a chain from each start;
    the end states and the share of chains that moved.
    """
    n_samples, m = X.shape
    C = np.column_stack([np.ones(n_samples), X])
    gram = C.T @ (inv_a[:, None] * C)
    linear = C.T @ (y * (1.0 + inv_a))
    prior_precision = np.r_[1.0 / SIGMA2_BETA, np.full(m, SLAB_SD**-2)]
    switchable = np.arange(1, m + 1)
    models = all_models(m)
    rng = np.random.default_rng(seed)
    ends = np.empty_like(starts)
    for chain, start in enumerate(starts):
        order = [0, *switchable[models[start] > 0.5].tolist()]
        collapsed = CollapsedGaussian(gram, linear, prior_precision, order)
        collapsed = update(collapsed, switchable, lambda k: log_prior(k, m), rng)
        gamma = np.isin(switchable, collapsed.order).astype(float)
        ends[chain] = model_index(gamma)[0]
    return ends, float(np.mean(ends != starts))


def one_sweep(collapsed, switchable, log_prior, rng):
    gibbs_sweep(collapsed, switchable, log_prior, rng)
    return collapsed


def jumps(settings: JumpSettings = DEFAULT_JUMPS, moves: int = 3):
    def update(collapsed, switchable, log_prior, rng):
        for _ in range(moves):
            collapsed, _ = jump(collapsed, switchable, log_prior, rng, settings)
        return collapsed

    return update


PRIORS = {"bernoulli": bernoulli_prior(0.3), "beta-bernoulli": beta_bernoulli_prior(1.0, 2.0)}
#: The moves read the prior only through ``log_prior(k)``, one function of the model size for
#: either prior: the default suite runs them under the Bernoulli prior, the slow suite under
#: the beta-Bernoulli too.
CHECKED_PRIORS = ["bernoulli", pytest.param("beta-bernoulli", marks=pytest.mark.slow)]


@pytest.mark.parametrize("prior", CHECKED_PRIORS)
def test_gibbs_sweep_leaves_the_model_posterior_invariant(prior):
    X, y, inv_a = augmented_data(40, 6, seed=9)
    probabilities = posterior_over_models(X, y, inv_a, PRIORS[prior])
    starts = stationary_starts(probabilities, seed=10)
    ends, moved = run_chains(X, y, inv_a, starts, one_sweep, PRIORS[prior], seed=11)
    assert moved > 0.5
    assert goodness_of_fit(ends, probabilities) > LEVEL


@pytest.mark.parametrize("prior", CHECKED_PRIORS)
def test_jump_leaves_the_model_posterior_invariant(prior):
    X, y, inv_a = augmented_data(40, 6, seed=9)
    probabilities = posterior_over_models(X, y, inv_a, PRIORS[prior])
    starts = stationary_starts(probabilities, seed=12)
    ends, moved = run_chains(X, y, inv_a, starts, jumps(), PRIORS[prior], seed=13)
    assert moved > 0.5
    assert goodness_of_fit(ends, probabilities) > LEVEL


def test_jump_with_a_largest_model_size_targets_the_truncated_posterior():
    """``max_active = 3``: ``d_{k_max} = 1``, and models with more than 3 columns have no
    mass (eight features: 256 models)."""
    X, y, inv_a = augmented_data(50, 8, seed=7)
    probabilities = posterior_over_models(X, y, inv_a, bernoulli_prior(0.4))
    probabilities[all_models(8).sum(axis=1) > 3] = 0.0
    probabilities /= probabilities.sum()
    starts = stationary_starts(probabilities, seed=14)
    update = jumps(JumpSettings(max_active=3), moves=4)
    ends, moved = run_chains(X, y, inv_a, starts, update, bernoulli_prior(0.4), seed=15)
    assert moved > 0.5
    assert all_models(8)[ends].sum(axis=1).max() == 3
    assert goodness_of_fit(ends, probabilities) > LEVEL


# The power of the goodness-of-fit test does not change with the samplers: the slow suite's.
@pytest.mark.slow
@pytest.mark.parametrize("update", [one_sweep, jumps()], ids=["gibbs", "jump"])
def test_the_goodness_of_fit_test_detects_a_wrong_prior(update):
    """An update that targets ``rho = 0.35`` instead of 0.3 is rejected by far."""
    X, y, inv_a = augmented_data(40, 6, seed=9)
    probabilities = posterior_over_models(X, y, inv_a, bernoulli_prior(0.3))
    starts = stationary_starts(probabilities, seed=16)
    ends, _ = run_chains(X, y, inv_a, starts, update, bernoulli_prior(0.35), seed=17)
    assert goodness_of_fit(ends, probabilities) < 1e-6


def repeated(update, times: int):
    def update_times(collapsed, switchable, log_prior, rng):
        for _ in range(times):
            collapsed = update(collapsed, switchable, log_prior, rng)
        return collapsed

    return update_times


@pytest.mark.parametrize(
    "update",
    [
        repeated(one_sweep, 10),
        pytest.param(repeated(jumps(), 20), marks=pytest.mark.slow),
    ],
    ids=["gibbs", "jump"],
)
def test_chains_from_the_empty_model_reach_the_model_posterior(update):
    """Independent chains all started from the empty model: after 10 sweeps (60 single-site
    updates) or 60 birth / death / swap proposals their end states follow ``p(gamma | a, y)``,
    so each update alone reaches every model (irreducibility), not only keeps the posterior.
    """
    X, y, inv_a = augmented_data(40, 6, seed=9)
    probabilities = posterior_over_models(X, y, inv_a, bernoulli_prior(0.3))
    starts = np.zeros(4000, dtype=int)
    ends, _ = run_chains(X, y, inv_a, starts, update, bernoulli_prior(0.3), seed=20)
    assert goodness_of_fit(ends, probabilities) > LEVEL


# -- the block's updates of (gamma, theta) given the augmentation ----------------------------
def inclusion_block(X, y, inv_a, rho: float, update: str):
    """The Gaussian slab's ``(beta, v, gamma)`` block and its complete-data statistics for
    the fixed augmentation ``inv_a`` (as the Gibbs and RJ drivers compute them).
    """
    model = SpikeSlabSVM.gaussian_slab(
        X, y, pi=rho, nu=SLAB_SD, sigma2_beta=SIGMA2_BETA, update=update
    )
    blocks = model.blocks
    init, _, _ = make_gibbs_kernel(blocks)
    stats = init(np.random.default_rng(0))
    stats["hinge"] = LikelihoodStats(inv_a, y * (1.0 + inv_a))
    block = blocks[0]
    return block, block.conditional(stats)


@pytest.mark.parametrize("update", ["collapsed", "conditional", "rj"])
def test_the_blocks_updates_leave_the_model_posterior_invariant(update):
    """``sample`` (eq. 17's collapsed update, or App. B's given ``theta``) and ``jump_step``: the
    ``gamma`` they return. For App. B's update, ``theta`` is drawn given the start's
    ``gamma`` inside the update, so the pair starts from its joint posterior too.
    """
    X, y, inv_a = augmented_data(40, 6, seed=9)
    block, params = inclusion_block(X, y, inv_a, 0.3, "collapsed" if update == "rj" else update)
    probabilities = posterior_over_models(X, y, inv_a, bernoulli_prior(0.3))
    starts = stationary_starts(probabilities, seed=18)
    models = all_models(6)
    rng = np.random.default_rng(19)

    def move(params, rng):
        if update == "rj":
            return block.jump_step(params, rng)[0]
        return block.sample(params, rng)

    ends = np.array(
        [
            model_index(move(params._replace(inclusion=models[start]), rng).inclusion)[0]
            for start in starts
        ]
    )
    assert np.mean(ends != starts) > 0.3
    assert goodness_of_fit(ends, probabilities) > LEVEL


class Probe:
    """An ``rng`` whose ``random() < p`` records ``p`` and answers from a fixed script, so
    that a Gibbs scan's inclusion probabilities can be read off one by one.
    """

    def __init__(self, answers):
        self.answers = iter(answers)
        self.probabilities = []

    def random(self):
        return self

    def __lt__(self, probability):
        self.probabilities.append(float(probability))
        return next(self.answers)


def augmented_log_likelihood(C, y, inv_a, effective) -> float:
    """``sum_i log[exp(-(1 + a_i - y_i f_i)^2 / (2 a_i))]`` at ``f = C effective``."""
    a = 1.0 / inv_a
    f = C @ effective
    return float(np.sum(-((1.0 + a - y * f) ** 2) / (2.0 * a)))


def test_conditional_update_of_gamma_given_theta_is_the_brute_force_conditional():
    """Luts-Ormerod App. B: ``P(gamma_k = 1 | theta, gamma_-k, a, y)`` in the scan equals the
    ratio of the augmented likelihood at ``gamma_k = 1`` and ``0`` (times the prior odds),
    evaluated from the hinge's augmented density at each ``gamma`` as the scan goes.
    """
    X, y, inv_a = augmented_data(30, 5, seed=6)
    rho = 0.3
    block, params = inclusion_block(X, y, inv_a, rho, "conditional")
    C = np.column_stack([np.ones(X.shape[0]), X])
    theta = np.random.default_rng(1).standard_normal(6)
    gamma = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    answers = [False, True, True, False, True]
    probe = Probe(answers)
    result = block._conditional_inclusion(params._replace(inclusion=gamma), theta, probe)
    np.testing.assert_array_equal(result, np.array(answers, dtype=float))
    current = gamma.copy()
    for k, answer in enumerate(answers):
        log_likelihood = []
        for value in (0.0, 1.0):
            current[k] = value
            log_likelihood.append(
                augmented_log_likelihood(C, y, inv_a, np.r_[1.0, current] * theta)
            )
        expected = expit(log_likelihood[1] - log_likelihood[0] + np.log(rho / (1.0 - rho)))
        assert probe.probabilities[k] == pytest.approx(expected, rel=1e-10)
        current[k] = float(answer)


def test_block_statistics_are_the_complete_data_sufficient_statistics():
    """``G = C^T diag(1/a) C`` and ``h = C^T y (1 + 1/a)`` (Polson-Scott's remark after eq. 17)
    and the slab's and intercept's prior precisions."""
    X, y, inv_a = augmented_data(30, 5, seed=6)
    _, params = inclusion_block(X, y, inv_a, 0.3, "collapsed")
    C = np.column_stack([np.ones(X.shape[0]), X])
    np.testing.assert_allclose(params.gram, C.T @ (inv_a[:, None] * C))
    np.testing.assert_allclose(params.linear, C.T @ (y * (1.0 + inv_a)))
    np.testing.assert_allclose(params.prior, np.r_[1.0 / SIGMA2_BETA, np.full(5, SLAB_SD**-2)])
