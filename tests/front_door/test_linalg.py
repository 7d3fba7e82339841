"""The linear algebra every fit's iterations run on (:mod:`bayesvm.linalg`), against NumPy's."""

import numpy as np
import pytest

from bayesvm.linalg import (
    inverse_factor,
    matrix_times,
    quadratic_forms,
    transpose_times,
    weighted_gram,
)

RNG = np.random.default_rng(7)
# More rows than one chunk holds, so that the chunked products are tested across chunks.
X = RNG.standard_normal((30_000, 40))
X_T = np.asfortranarray(X.T)


@pytest.mark.parametrize("shape", [(40,), (3, 40), (2, 3, 40)])
def test_matrix_times_is_the_predictor_of_every_theta(shape):
    theta = RNG.standard_normal(shape)
    np.testing.assert_allclose(matrix_times(X_T, theta), theta @ X.T, rtol=1e-12, atol=1e-11)


def test_transpose_times_sums_the_rows():
    values = RNG.standard_normal(X.shape[0])
    np.testing.assert_allclose(transpose_times(X_T, values), X.T @ values, rtol=1e-12, atol=1e-10)


def test_weighted_gram_with_most_weights_zero_sums_the_other_rows():
    weights = np.where(RNG.random(X.shape[0]) < 0.1, RNG.random(X.shape[0]), 0.0)
    expected = X.T @ (weights[:, None] * X)
    np.testing.assert_allclose(weighted_gram(X_T, weights), expected, rtol=1e-11, atol=1e-9)
    dense = RNG.random(X.shape[0])
    expected = X.T @ (dense[:, None] * X)
    np.testing.assert_allclose(weighted_gram(X_T, dense), expected, rtol=1e-11, atol=1e-9)


def test_quadratic_forms_are_the_predictor_variances():
    precision = X[:500].T @ X[:500] + np.eye(40)
    factor = np.linalg.cholesky(precision)
    forms = quadratic_forms(inverse_factor(factor), X_T)
    expected = np.einsum("ij,ij->i", X, np.linalg.solve(precision, X.T).T)
    np.testing.assert_allclose(forms, expected, rtol=1e-10)
