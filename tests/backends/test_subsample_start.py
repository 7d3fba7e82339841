"""VB on many rows starts from a fit to a subsample: the same optimum in fewer sweeps."""

import warnings

import numpy as np
import pytest

import bayesvm
from bayesvm.drivers import AscentResult
from bayesvm.exceptions import IdentifiabilityWarning
from bayesvm.models import LinearSVM, LogisticRegression, MixedSVM
from bayesvm.vb import cavi

from conftest import assert_never_decreases, simulate_logistic


@pytest.fixture
def few_rows_suffice(monkeypatch):
    """Subsample from 1,000 rows on, whatever the work, so that small data exercise it."""
    monkeypatch.setattr(cavi, "SUBSAMPLE_MIN_ROWS", 1000)
    monkeypatch.setattr(cavi, "SUBSAMPLE_MIN_FLOPS", 0.0)


def svm_data(n_samples: int = 4000, n_features: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_samples, n_features))
    weights = rng.standard_normal(n_features)
    y = np.where(D @ weights + rng.standard_normal(n_samples) > 0, 1, -1)
    return D, y


def means_and_sds(fit) -> tuple[np.ndarray, np.ndarray]:
    means = np.concatenate([np.ravel(mean) for mean in fit.coefficient_means()])
    q = fit.idata.variational
    variances = np.concatenate(
        [q[f"{name}_variance"].to_numpy().ravel() for name in fit.model.coefficient_var_names]
    )
    return means, np.sqrt(variances)


@pytest.mark.parametrize(
    "build",
    [
        lambda D, y: MixedSVM.penalized(D, y),
        lambda D, y: LinearSVM.from_arrays(D, y, alpha=0.5),
    ],
    ids=["penalized", "ridge"],
)
def test_subsample_start_reaches_the_optimum_of_the_blocks_own_start(few_rows_suffice, build):
    model = build(*svm_data())
    cold = bayesvm.fit(model, method="vb", subsample=False, tol=1e-13)
    warm = bayesvm.fit(model, method="vb", tol=1e-13)
    cold_means, sds = means_and_sds(cold)
    warm_means, _ = means_and_sds(warm)
    assert np.max(np.abs(warm_means - cold_means) / sds) < 1e-4
    assert warm.lower_bound == pytest.approx(cold.lower_bound, rel=1e-11)
    assert_never_decreases(warm.lower_bound_trace)
    assert int(warm.idata.variational["sweeps"]) < int(cold.idata.variational["sweeps"])


def test_subsample_start_is_deterministic(few_rows_suffice):
    model = MixedSVM.penalized(*svm_data(n_samples=2500))
    first, second = (bayesvm.fit(model, method="vb", seed=1) for _ in range(2))
    np.testing.assert_array_equal(first.lower_bound_trace, second.lower_bound_trace)
    assert first.idata.posterior.equals(second.idata.posterior)


def test_subsample_needs_many_rows_and_costly_sweeps():
    assert cavi._subsample(MixedSVM.penalized(*svm_data(n_samples=5000, n_features=80))) is None
    cheap = MixedSVM.penalized(*svm_data(n_samples=20_000, n_features=3))
    assert cheap.flops_per_iteration < cavi.SUBSAMPLE_MIN_FLOPS
    assert cavi._subsample(cheap) is None
    rows, part = cavi._subsample(MixedSVM.penalized(*svm_data(n_samples=20_000, n_features=60)))
    assert part.n_samples == rows.size == 2000 and np.all(np.diff(rows) > 0)


def test_row_subset_is_the_model_of_those_rows():
    D, y = svm_data(n_samples=300)
    model = LinearSVM.from_arrays(D, y, prior="lasso", nu=None)
    rows = np.array([0, 5, 7, 200])
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifiabilityWarning)  # 4 rows: separable, unchecked
        part = model.row_subset(rows)
    assert type(part) is LinearSVM and part.penalty == model.penalty
    np.testing.assert_array_equal(part.Z, D[rows])
    np.testing.assert_array_equal(part.y, model.y[rows])
    np.testing.assert_array_equal(part.X, model.X[rows])
    assert part.effect_names == model.effect_names and part.n_samples == 4


def test_models_without_a_row_subset_start_from_their_blocks(few_rows_suffice):
    X, y = simulate_logistic(1200, 3, seed=2)
    groups = np.arange(1200) % 40
    for model in (
        LogisticRegression.from_arrays(X, y),
        MixedSVM.random_intercept(X, y, groups=groups),
    ):
        assert model.row_subset(np.arange(10)) is None
        default = bayesvm.fit(model, method="vb")
        papers = bayesvm.fit(model, method="vb", subsample=False)
        np.testing.assert_array_equal(default.lower_bound_trace, papers.lower_bound_trace)


def test_interrupting_the_subsample_fit_interrupts_the_fit(few_rows_suffice, monkeypatch):
    model = MixedSVM.penalized(*svm_data(n_samples=1500))
    ascend = cavi.run_ascent_from

    def interrupted_on_the_subsample(states, make_step, **options):
        result = ascend(states, make_step, **options)
        if states[0][1]["hinge"].weights.shape[0] < model.n_samples:
            return AscentResult(result.state, result.trace, False, ["interrupted"], True)
        return result

    monkeypatch.setattr(cavi, "run_ascent_from", interrupted_on_the_subsample)
    with pytest.raises(KeyboardInterrupt):
        bayesvm.fit(model, method="vb")
