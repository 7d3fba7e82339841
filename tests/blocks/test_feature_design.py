"""The arrowhead Gaussian of a kernel's eigenfeatures equals the dense Cholesky one."""

import numpy as np
import pytest

from bayesvm.blocks.design import ArrowheadGaussian, DenseGaussian, FeatureDesign


@pytest.fixture
def design():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(30, 3))
    kernel = np.exp(-((points[:, None] - points[None]) ** 2).sum(-1) / 4.0)
    eigenvalues, eigenvectors = np.linalg.eigh(kernel)
    return FeatureDesign(eigenvectors * np.sqrt(eigenvalues))


@pytest.fixture
def prior():
    return np.concatenate([[0.3], np.full(30, 2.5)])


def test_unit_weights_give_the_arrowhead_and_others_the_dense_gaussian(design, prior):
    assert isinstance(design.gaussian(np.ones(30), prior), ArrowheadGaussian)
    assert isinstance(design.gaussian(np.full(30, 2.0), prior), DenseGaussian)


def test_every_operation_equals_the_dense_cholesky(design, prior):
    arrowhead = design.gaussian(np.ones(30), prior)
    dense = DenseGaussian(design, np.ones(30), prior)
    rhs = np.random.default_rng(1).normal(size=(31, 4))
    np.testing.assert_allclose(arrowhead.precision(), dense.precision(), atol=1e-10)
    np.testing.assert_allclose(arrowhead.solve(rhs), dense.solve(rhs), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(arrowhead.solve(rhs[:, 0]), dense.solve(rhs[:, 0]), rtol=1e-8)
    np.testing.assert_allclose(arrowhead.log_det_precision(), dense.log_det_precision())
    np.testing.assert_allclose(arrowhead.coefficient_variance(), dense.coefficient_variance())
    np.testing.assert_allclose(arrowhead.predictor_variance(), dense.predictor_variance())
    np.testing.assert_allclose(arrowhead.covariance(), dense.covariance(), atol=1e-12)


def test_draws_have_the_covariance_p_inverse(design, prior):
    arrowhead = design.gaussian(np.ones(30), prior)
    draws = arrowhead.draw(np.zeros(31), np.random.default_rng(2), size=200_000)
    covariance = arrowhead.covariance()
    # each entry's Monte Carlo sd is at most sqrt((C_ii C_jj + C_ij^2) / N)
    scale = np.sqrt(np.outer(np.diag(covariance), np.diag(covariance)) * 2 / draws.shape[0])
    assert np.all(np.abs(np.cov(draws.T) - covariance) < 5 * scale)
    single = arrowhead.draw(np.ones(31), np.random.default_rng(3))
    assert single.shape == (31,)
