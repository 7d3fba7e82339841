"""Trans-dimensional fits are judged on their model size ``n_active`` too."""

import arviz as az
import numpy as np

from bayesvm.samplers.diagnostics import ESS_PER_CHAIN, MODEL_SIZE, mcmc_problems

CHAINS, DRAWS = 4, 500


def switching_indicators(rng) -> np.ndarray:
    """Indicators of 3 columns, each an independent coin in every draw: they pass."""
    return (rng.random((CHAINS, DRAWS, 3)) < 0.5).astype(float)


def idata_with(n_active: np.ndarray, rng) -> az.InferenceData:
    return az.from_dict(
        posterior={"x": rng.standard_normal((CHAINS, DRAWS)), "gamma": switching_indicators(rng)},
        sample_stats={MODEL_SIZE: n_active},
    )


def test_a_well_mixed_model_size_passes():
    rng = np.random.default_rng(0)
    n_active = rng.integers(3, 9, size=(CHAINS, DRAWS)).astype(float)
    assert mcmc_problems(idata_with(n_active, rng)) == []


def test_chains_that_disagree_on_the_model_size_are_named():
    """Each chain's own model size is i.i.d., but one chain's is larger by 4 (its sd is 1.7):
    the parameters pass, R-hat of ``n_active`` does not (nor its bulk ESS, which compares the
    chains too).
    """
    rng = np.random.default_rng(1)
    n_active = rng.integers(3, 9, size=(CHAINS, DRAWS)).astype(float)
    n_active[2] += 4.0
    problems = mcmc_problems(idata_with(n_active, rng))
    assert problems[0].startswith("R-hat") and f"of {MODEL_SIZE} exceeds 1.01" in problems[0]
    assert all(MODEL_SIZE in problem for problem in problems)


def test_a_drifting_model_size_fails_its_bulk_ess():
    """A model size that random-walks (a reversible jump of one birth or death per sweep)
    has a bulk ESS far below 100 per chain; its R-hat fails as well.
    """
    rng = np.random.default_rng(2)
    steps = rng.choice([-1.0, 1.0], size=(CHAINS, DRAWS))
    n_active = 200.0 + np.cumsum(steps, axis=1)
    problems = mcmc_problems(idata_with(n_active, rng))
    named = [problem for problem in problems if MODEL_SIZE in problem]
    assert any(p.startswith("bulk ESS") and f"below {CHAINS * ESS_PER_CHAIN}" in p for p in named)
    assert all(MODEL_SIZE in problem for problem in problems)


def test_a_model_size_stuck_at_one_value_per_chain_is_undefined_rhat():
    rng = np.random.default_rng(3)
    n_active = np.repeat([[5.0], [5.0], [5.0], [6.0]], DRAWS, axis=1)
    problems = mcmc_problems(idata_with(n_active, rng))
    assert problems[0] == (
        f"R-hat of {MODEL_SIZE} is undefined: the chains disagree, each staying at one value"
    )


def test_a_constant_model_size_is_not_checked():
    """Every vector active in every draw (BGKM by Gibbs): nothing to check."""
    rng = np.random.default_rng(4)
    assert mcmc_problems(idata_with(np.full((CHAINS, DRAWS), 40.0), rng)) == []
