"""VB's Gaussian family on the hinge (:mod:`bayesvm.vb.gaussian_family`): the closed-form
expectation, the optimum's equations, a bound that rises above mean-field's, and refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

import bayesvm
from bayesvm.models import LinearRegression, MixedSVM, SpikeSlabSVM

from conftest import assert_never_decreases


def test_gaussian_expectation_of_the_hinge_against_quadrature():
    hinge = MixedSVM.penalized(np.array([[0.0], [1.0], [2.0]]), [-1, 1, -1]).blocks[1]
    f_mean, f_var = np.array([0.3, 1.1, -2.0]), np.array([0.5, 0.01, 2.0])
    terms = hinge.gaussian_expectation(f_mean, f_var)

    def expected(i, mean):
        def integrand(f):
            density = np.exp(-0.5 * (f - mean) ** 2 / f_var[i]) / np.sqrt(2 * np.pi * f_var[i])
            return -2.0 * max(0.0, 1.0 - hinge.y[i] * f) * density

        kink = 1.0 / hinge.y[i]
        wide = 12 * np.sqrt(f_var[i])
        return sum(
            integrate.quad(integrand, a, b, epsabs=1e-13)[0]
            for a, b in ((mean - wide, kink), (kink, mean + wide))
        )

    values = [expected(i, f_mean[i]) for i in range(3)]
    np.testing.assert_allclose(terms.value, sum(values), rtol=1e-8)
    h = 1e-4
    for i in range(3):
        up, down = expected(i, f_mean[i] + h), expected(i, f_mean[i] - h)
        np.testing.assert_allclose(terms.slope[i], (up - down) / (2 * h), rtol=1e-5)
        second = (up - 2 * values[i] + down) / h**2
        np.testing.assert_allclose(terms.curvature[i], -second, rtol=1e-3)


@pytest.fixture(scope="module")
def heart_fits(heart_model):
    return {
        family: bayesvm.fit(heart_model, "vb", family=family, progressbar=False)
        for family in ("mean-field", "gaussian")
    }


def test_gaussian_bound_rises_above_mean_field(heart_fits):
    trace = heart_fits["gaussian"].idata.variational["lower_bound"].to_numpy()
    assert_never_decreases(trace)
    mean_field = heart_fits["mean-field"].idata.variational["lower_bound"].to_numpy()[-1]
    assert trace[0] > mean_field  # the same q(theta), the hinge's expectation exact
    assert heart_fits["gaussian"].idata.attrs["family"] == "gaussian"
    assert heart_fits["mean-field"].idata.attrs["family"] == "mean-field"
    assert heart_fits["gaussian"].converged


def test_gaussian_optimum_solves_opper_archambeau_equations(heart_model, heart_fits):
    """``S^-1 = diag(P) + C^T diag(w) C`` and ``E_q[d log p / d theta] = 0`` (eq. 8-9)."""
    group = heart_fits["gaussian"].idata.variational
    mean = np.concatenate([group["beta_q_mean"].to_numpy(), group["u_q_mean"].to_numpy()])
    covariance = group["covariance"].to_numpy()
    C = np.hstack([heart_model.X, heart_model.Z])
    terms = heart_model.blocks[1].gaussian_expectation(
        C @ mean, np.einsum("ij,jk,ik->i", C, covariance, C)
    )
    penalty = float(group["variance_shape"] / group["variance_rate"])
    prior = np.concatenate([[1.0 / heart_model.sigma2_beta], np.full(C.shape[1] - 1, penalty)])
    data_gradient = C.T @ terms.slope
    # The fit stops at a relative bound increase of 1e-10: the equations hold to about 1e-5.
    assert np.max(np.abs(data_gradient - prior * mean)) < 1e-4 * np.max(np.abs(data_gradient))
    precision = np.diag(prior) + C.T @ (terms.curvature[:, None] * C)
    error = np.abs(np.linalg.inv(covariance) - precision)
    assert np.max(error) < 1e-4 * np.max(np.abs(precision))


def test_family_option_is_checked_before_any_work(heart_model):
    with pytest.raises(ValueError, match="family must be one of"):
        bayesvm.fit(heart_model, "vb", family="full-rank")
    regression = LinearRegression.from_arrays(np.eye(3), np.arange(3.0), alpha=1.0)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    y = np.where(X[:, 0] + rng.standard_normal(20) > 0, 1, -1)
    spike_slab = SpikeSlabSVM.laplace_zero(X, y, rho=0.1)
    for model in (regression, spike_slab):
        with pytest.raises(ValueError, match="family='gaussian' needs"):
            bayesvm.fit(model, "vb", family="gaussian")
