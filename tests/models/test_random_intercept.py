"""Random-intercept SVM (Luts-Ormerod section 3.1, example 2) and its structured algebra."""

import numpy as np
import pytest

import bayesvm
from bayesvm.blocks.design import DenseDesign, GroupedDesign
from bayesvm.models import MixedSVM

from conftest import (
    RUNS,
    assert_ascent_converged,
    assert_means_within,
    assert_never_decreases,
    assert_samplers_agree,
)


def grouped_data(n_samples=120, n_groups=15, seed=0, sigma_u=1.0):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, n_groups, n_samples)
    X = rng.standard_normal((n_samples, 2))
    u = sigma_u * rng.standard_normal(n_groups)
    p = 1 / (1 + np.exp(-(0.3 + X @ [1.0, -0.7] + u[groups])))
    y = np.where(rng.random(n_samples) < p, 1, -1)
    return X, groups, y


def _dense_twin(model):
    """The same model written in the general form, with Z as a dense indicator matrix."""
    Z = model.design[:, model.n_fixed :]
    return MixedSVM.from_arrays(model.X, model.y, Z=Z)


class _IdentityNoise:
    """Stands in for a Generator: ``standard_normal`` hands out the rows of ``I_K`` in order,
    so a draw of size K returns the draw's linear map ``M`` (``Cov = M M^T``)."""

    def __init__(self, k):
        self.rows, self.used = np.eye(k), 0

    def standard_normal(self, shape):
        block = self.rows[self.used : self.used + shape[0]]
        self.used += shape[0]
        return block


def test_structured_gaussian_equals_dense_algebra():
    X, groups, y = grouped_data(n_groups=12)
    model = MixedSVM.random_intercept(X, y, groups=groups)
    grouped = model.design_operator
    assert isinstance(grouped, GroupedDesign)
    dense = DenseDesign(model.X, model.design[:, model.n_fixed :])
    rng = np.random.default_rng(1)
    weights = rng.gamma(2.0, size=model.n_samples)
    prior = np.concatenate([np.full(model.n_fixed, 1e-8), np.full(model.n_effects, 0.7)])
    g, d = grouped.gaussian(weights, prior), dense.gaussian(weights, prior)
    rhs = rng.standard_normal(model.n_coefficients)
    np.testing.assert_allclose(g.solve(rhs), d.solve(rhs), rtol=1e-8)
    np.testing.assert_allclose(g.log_det_precision(), d.log_det_precision(), rtol=1e-10)
    np.testing.assert_allclose(g.coefficient_variance(), d.coefficient_variance(), rtol=1e-8)
    np.testing.assert_allclose(g.predictor_variance(), d.predictor_variance(), rtol=1e-8)
    theta = rng.standard_normal(model.n_coefficients)
    np.testing.assert_allclose(grouped.predictor(theta), dense.predictor(theta), rtol=1e-12)
    v = rng.standard_normal(model.n_samples)
    np.testing.assert_allclose(grouped.transpose_times(v), dense.transpose_times(v), rtol=1e-12)
    k = model.n_coefficients
    linear_map = g.draw(np.zeros(k), _IdentityNoise(k), size=k)
    np.testing.assert_allclose(linear_map.T @ linear_map, d.covariance(), rtol=1e-8, atol=1e-14)


def test_structured_vb_equals_dense_vb():
    X, groups, y = grouped_data()
    model = MixedSVM.random_intercept(X, y, groups=groups)
    structured, dense = bayesvm.fit(model), bayesvm.fit(_dense_twin(model))
    assert structured.n_iter == dense.n_iter
    np.testing.assert_allclose(structured.lower_bound_trace, dense.lower_bound_trace, rtol=1e-8)
    for name in ("beta_mean", "u_mean", "chi", "variance_rate"):
        np.testing.assert_allclose(
            structured.idata["variational"][name].to_numpy(),
            dense.idata["variational"][name].to_numpy(),
            rtol=1e-8,
        )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vb_bound_never_decreases(seed):
    X, groups, y = grouped_data(n_samples=200, n_groups=40, seed=seed)
    fit = bayesvm.fit(MixedSVM.random_intercept(X, y, groups=groups))
    assert_ascent_converged(fit)
    assert_never_decreases(fit.lower_bound_trace)


def test_vb_means_are_close_to_gibbs():
    X, groups, y = grouped_data(n_samples=300, n_groups=20, seed=3)
    model = MixedSVM.random_intercept(X, y, groups=groups)
    vb = bayesvm.fit(model)
    gibbs = bayesvm.fit(
        model, method="gibbs", seed=0, chains=2, draws=3000, tune=1000, progressbar=False
    )
    # VB's mean-field bias, up to a posterior sd, plus Gibbs's Monte Carlo error
    for name, vb_mean in zip(("beta", "u"), vb.coefficient_means(), strict=True):
        assert_means_within(vb_mean, gibbs, name, posterior_sds=1.0)


# Slow even at the quick length (45 s, most of it NUTS): that to_pymc() states the blocks'
# density is proven without sampling (tests/models/test_log_density.py), and the default suite
# checks this model's Gibbs against VB and the grouped design's algebra against the dense one.
@pytest.mark.slow
@pytest.mark.parametrize("run", RUNS)
def test_gibbs_and_nuts_agree(run):
    X, groups, y = grouped_data(n_samples=80, n_groups=8, seed=4)
    model = MixedSVM.random_intercept(X, y, groups=groups)
    assert_samplers_agree(model, {"noncentered": True}, run=run)


def test_group_labels_are_the_group_coordinate_and_strings_work():
    X, groups, y = grouped_data(n_samples=60, n_groups=6, seed=5)
    labels = np.array([f"patient-{g}" for g in groups])
    model = MixedSVM.random_intercept(
        X, np.where(y > 0, "severe", "mild"), groups=labels, feature_names=["time", "treat"]
    )
    fit = bayesvm.fit(
        model, method="gibbs", seed=0, chains=1, draws=200, tune=100, progressbar=False
    )
    assert list(fit.idata.posterior["u"]["group"].to_numpy()) == sorted(set(labels))
    assert list(fit.idata.posterior["beta"]["fixed"].to_numpy()) == ["intercept", "time", "treat"]
    assert set(fit.predict(X, groups=labels)) <= {"severe", "mild"}


def test_unseen_groups_get_a_zero_random_intercept():
    X, groups, y = grouped_data(n_samples=100, n_groups=10, seed=6)
    fit = bayesvm.fit(MixedSVM.random_intercept(X, y, groups=groups))
    beta, u = fit.coefficient_means()
    X_new = np.array([[0.5, -1.0], [0.5, -1.0], [0.5, -1.0]])
    f = fit.decision_function(X_new, groups=[3, 99, 3])
    population = beta[0] + X_new[0] @ beta[1:]
    np.testing.assert_allclose(f, [population + u[3], population, population + u[3]])
    np.testing.assert_allclose(fit.decision_function(X_new), population)
    proba = fit.predict_proba(X_new, groups=[3, 99, 3])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="one label per row"):
        fit.decision_function(X_new, groups=[3, 4])


def test_a_group_with_a_single_observation():
    X, groups, y = grouped_data(n_samples=50, n_groups=5, seed=7)
    groups = np.append(groups, 42)
    X, y = np.vstack([X, [[0.1, 0.2]]]), np.append(y, 1)
    model = MixedSVM.random_intercept(X, y, groups=groups)
    for method, options in (
        ("vb", {}),
        ("gibbs", {"draws": 300, "tune": 100, "chains": 1, "progressbar": False}),
    ):
        fit = bayesvm.fit(model, method=method, seed=0, **options)
        u_single = fit.idata.posterior["u"].sel(group=42).to_numpy()
        assert np.all(np.isfinite(u_single)) and u_single.std() > 0


def test_bad_groups_are_rejected():
    X, groups, y = grouped_data(n_samples=30, n_groups=3, seed=8)
    with pytest.raises(ValueError, match="shape mismatch"):
        MixedSVM.random_intercept(X, y, groups=groups[:-1])
    with pytest.raises(ValueError, match="missing"):
        MixedSVM.random_intercept(X, y, groups=np.where(groups == 0, None, groups))


def test_pymc_specification_indexes_the_random_intercept():
    X, groups, y = grouped_data(n_samples=40, n_groups=4, seed=9)
    model = MixedSVM.random_intercept(X, y, groups=groups)
    point = {"beta": np.array([0.1, 0.5, -0.2]), "u": np.array([0.3, -0.1, 0.0, 0.2])}
    for noncentered in (False, True):
        pymc_model = model.to_pymc(noncentered=noncentered)
        assert pymc_model.named_vars_to_dims["u"] == ("group",)
    f = model.X @ point["beta"] + point["u"][model.group_index]
    expected = -2 * np.sum(np.maximum(0, 1 - model.y * f))
    pm_model = model.to_pymc()
    potential = pm_model.compile_fn(pm_model["hinge"], inputs=[pm_model["beta"], pm_model["u"]])
    np.testing.assert_allclose(potential(point), expected)
