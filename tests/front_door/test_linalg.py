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


def test_threads_follow_the_problem_and_the_cores_never_the_load(monkeypatch):
    """The same default call gives the same draws on an idle and a busy machine: the thread
    count never reads the load (a test of bit-identical draws under two load readings, with
    the threshold lowered so that this small fit gets every usable core).
    """
    import warnings

    import bayesvm
    from bayesvm import linalg
    from bayesvm.models import MixedSVM

    model = MixedSVM.penalized(X[:2000, :5], np.where(X[:2000, 0] > 0, 1, -1))
    monkeypatch.setattr(linalg, "MULTITHREAD_MIN_FLOPS", 0.0)
    draws = []
    for load in (0.0, 50.0):
        monkeypatch.setattr(linalg.os, "getloadavg", lambda load=load: (load, load, load))
        assert linalg.automatic_threads(1.0) == linalg.usable_cores()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
            fit = bayesvm.fit(model, "gibbs", chains=1, draws=30, tune=0, progressbar=False)
        draws.append(fit.idata.posterior["u"].to_numpy())
    np.testing.assert_array_equal(draws[0], draws[1])
    monkeypatch.setattr(linalg.os, "getloadavg", pytest.fail)
    assert linalg.automatic_threads(linalg.MULTITHREAD_MIN_FLOPS / 2) >= 1
