"""The hand-written Gibbs samplers target the same posterior as NUTS on ``model.to_pymc()``
(the test itself is :func:`conftest.assert_samplers_agree`)."""

import warnings

import pytest

import bayesvm
from bayesvm.models import LinearSVM, MixedSVM

from conftest import RUNS, assert_samplers_agree, assert_started_apart, simulate_logistic

X, Y = simulate_logistic(60, 3, seed=3)
MODELS = {
    "ridge-fixed": LinearSVM.from_arrays(X, Y, alpha=0.5),
    "mixed-penalized": MixedSVM.penalized(X, Y),
    "lasso-learned-std": LinearSVM.from_arrays(X, Y, prior="lasso", feature_scale="std"),
    "lasso-fixed": LinearSVM.from_arrays(X, Y, prior="lasso", nu=0.5),
}


# The fixed priors' comparisons are slow (15-16 s each): "mixed-penalized" and
# "lasso-learned-std" run their blocks, with the prior's scale learned, by default.
@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name.endswith("-fixed") else name
        for name in MODELS
    ],
)
def test_gibbs_and_nuts_agree_within_monte_carlo_error(name, run):
    """The lasso's sweep, with its slice moves, gives about 0.6 effective draws per draw (2500
    of 4000 in 1000 per chain, more than NUTS's 4000 draws give) at three times a plain sweep's
    cost: its quick run keeps 1000 draws per chain. NUTS's quick run of the penalized mixed SVM
    keeps 2000 per chain: with 1000 its random effects' bulk ESS was 1064-1348 of 4000 draws,
    their R-hat 1.002-1.006 over five seeds, and 1.011 on another CPU's round-off.
    """
    quick = run == "quick"
    gibbs_draws = 1000 if quick and name.startswith("lasso") else None
    nuts_options = {"draws": 2000} if quick and name == "mixed-penalized" else None
    assert_samplers_agree(MODELS[name], nuts_options, run=run, gibbs_draws=gibbs_draws)


@pytest.mark.slow
@pytest.mark.parametrize("n_samples", [200, 500])
def test_agreement_at_the_paper_size(n_samples):
    """Luts-Ormerod section 4.2's problem with d = 10 (several minutes)."""
    X_paper, y_paper = simulate_logistic(n_samples, 10, seed=n_samples)
    assert_samplers_agree(MixedSVM.penalized(X_paper, y_paper), run="long")


def test_compared_samplers_must_start_apart():
    """Two fits from one seed start their chains at the same points: a comparison of them is
    refused (:func:`conftest.assert_started_apart`), and two seeds' fits start apart.
    """
    model = MODELS["ridge-fixed"]
    options = {"chains": 2, "draws": 20, "tune": 0, "progressbar": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # 20 draws
        first, again, other = (
            bayesvm.fit(model, "gibbs", seed=seed, **options) for seed in (1, 1, 2)
        )
    assert first.idata.attrs["seed"] == 1
    with pytest.raises(AssertionError, match="both fits ran from seed 1"):
        assert_started_apart(first, again)
    assert_started_apart(first, other)
