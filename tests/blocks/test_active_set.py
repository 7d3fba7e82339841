"""The linear algebra of the collapsed model search (:mod:`bayesvm.blocks.active_set`): the
up- and downdated Cholesky factor equals a fresh one, the proposals' gains equal differences
of the log marginal computed from scratch, and the log marginal is the Gaussian integral.
"""

import itertools

import numpy as np
import pytest

from bayesvm.blocks.active_set import ActiveCholesky, CollapsedGaussian

K = 7


def spd(size: int, rng: np.random.Generator) -> np.ndarray:
    """A random symmetric positive definite matrix with correlated columns."""
    root = rng.standard_normal((size + 3, size))
    return root.T @ root + 0.1 * np.eye(size)


def problem(rng: np.random.Generator, full_prior: bool):
    """``(G, h, R)`` of a random collapsed Gaussian: ``R`` diagonal or a full matrix."""
    gram = spd(K, rng)
    linear = 2.0 * rng.standard_normal(K)
    prior = spd(K, rng) if full_prior else rng.uniform(0.2, 3.0, K)
    return gram, linear, prior


def log_marginal_from_scratch(gram, linear, prior, order) -> float:
    """``log|R_AA| / 2 - log|P_A| / 2 + h_A^T P_A^-1 h_A / 2`` by determinants and a solve."""
    if not order:
        return 0.0
    index = np.ix_(order, order)
    prior_block = np.diag(prior[order]) if np.ndim(prior) == 1 else prior[index]
    precision = gram[index] + prior_block
    h = linear[order]
    return 0.5 * (
        np.log(np.linalg.det(prior_block))
        - np.log(np.linalg.det(precision))
        + h @ np.linalg.solve(precision, h)
    )


def random_changes(rng: np.random.Generator, start: list, n_changes: int):
    """A random sequence of ``("add", j)`` / ``("remove", j)`` on a set of columns, removals
    at arbitrary positions of the current order.
    """
    active = list(start)
    for _ in range(n_changes):
        inactive = [j for j in range(K) if j not in active]
        if active and (not inactive or rng.random() < 0.5):
            column = int(rng.choice(active))
            active.remove(column)
            yield "remove", column
        else:
            column = int(rng.choice(inactive))
            active.append(column)
            yield "add", column


@pytest.mark.parametrize("seed", range(5))
def test_updated_factor_equals_a_fresh_cholesky(seed):
    rng = np.random.default_rng(seed)
    matrix = spd(K, rng)
    start = [3, 0, 5]
    factor = ActiveCholesky(matrix, start)
    for change, column in random_changes(rng, start, 40):
        if change == "add":
            factor.append(column, *factor.border(column))
        else:
            factor.delete(column)
        order = factor.order
        block = matrix[np.ix_(order, order)]
        if order:
            np.testing.assert_allclose(factor.factor, np.linalg.cholesky(block), atol=1e-10)
            np.testing.assert_allclose(factor.log_det(), np.linalg.slogdet(block)[1], atol=1e-10)
            inverse = np.linalg.inv(block)
            for position, j in enumerate(order):
                assert factor.inverse_diagonal(j) == pytest.approx(inverse[position, position])
        else:
            assert factor.factor.shape == (0, 0) and factor.log_det() == 0.0


def test_appending_a_column_that_makes_the_block_singular_raises():
    matrix = np.array([[1.0, 1.0], [1.0, 1.0]])
    factor = ActiveCholesky(matrix, [0])
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        factor.append(1, *factor.border(1))


def test_a_copy_is_independent():
    rng = np.random.default_rng(0)
    gram, linear, prior = problem(rng, full_prior=True)
    collapsed = CollapsedGaussian(gram, linear, prior, [0, 2])
    copy = collapsed.copy()
    copy.add(copy.propose_addition(4)[1])
    copy.remove(0)
    assert collapsed.order == [0, 2] and copy.order == [2, 4]
    assert collapsed.log_marginal() == pytest.approx(
        log_marginal_from_scratch(gram, linear, prior, [0, 2])
    )


@pytest.mark.parametrize("full_prior", [False, True], ids=["diagonal-prior", "full-prior"])
@pytest.mark.parametrize("seed", range(3))
def test_gains_equal_differences_of_the_log_marginal(seed, full_prior):
    rng = np.random.default_rng(seed)
    gram, linear, prior = problem(rng, full_prior)
    start = [6, 1, 3]
    collapsed = CollapsedGaussian(gram, linear, prior, start)
    for change, column in random_changes(rng, start, 30):
        order = collapsed.order
        current = log_marginal_from_scratch(gram, linear, prior, order)
        assert collapsed.log_marginal() == pytest.approx(current, abs=1e-9)
        for j in range(K):
            if j in order:
                smaller = [i for i in order if i != j]
                expected = log_marginal_from_scratch(gram, linear, prior, smaller) - current
                assert collapsed.removal_gain(j) == pytest.approx(expected, abs=1e-9)
            else:
                expected = log_marginal_from_scratch(gram, linear, prior, [*order, j]) - current
                assert collapsed.propose_addition(j)[0] == pytest.approx(expected, abs=1e-9)
        if change == "add":
            collapsed.add(collapsed.propose_addition(column)[1])
        else:
            collapsed.remove(column)
        np.testing.assert_allclose(
            collapsed.mean(),
            np.linalg.solve(
                (gram + (np.diag(prior) if np.ndim(prior) == 1 else prior))[
                    np.ix_(collapsed.order, collapsed.order)
                ],
                linear[collapsed.order],
            )
            if collapsed.order
            else np.zeros(0),
            atol=1e-9,
        )


def test_log_marginal_is_the_gaussian_integral():
    """``log int N(theta | 0, R_AA^-1) exp(-theta^T G_AA theta / 2 + h_A^T theta) dtheta``
    computed by the trapezoidal rule on a grid over ``[-12, 12]^k`` (exponentially accurate for
    a Gaussian integrand that vanishes at the edges), for every active set of three columns of
    size at most two.
    """
    rng = np.random.default_rng(4)
    gram, linear = spd(3, rng), rng.standard_normal(3)
    prior = spd(3, rng)
    axis = np.linspace(-12.0, 12.0, 961)

    for size in (1, 2):
        for order in itertools.combinations(range(3), size):
            order = list(order)
            collapsed = CollapsedGaussian(gram, linear, prior, order)
            prior_block = prior[np.ix_(order, order)]
            theta = np.stack(np.meshgrid(*[axis] * size, indexing="ij"), axis=-1)
            exponent = (
                -0.5
                * np.einsum(
                    "...i,ij,...j->...", theta, prior_block + gram[np.ix_(order, order)], theta
                )
                + theta @ linear[order]
            )
            density = np.sqrt(np.linalg.det(prior_block) / (2 * np.pi) ** size) * np.exp(exponent)
            value = density
            for _ in range(size):
                value = np.trapezoid(value, axis, axis=0)
            assert collapsed.log_marginal() == pytest.approx(np.log(value), abs=1e-6)
    assert CollapsedGaussian(gram, linear, prior, []).log_marginal() == 0.0


def test_draws_follow_the_active_conditional():
    """``draw`` is ``N(P_A^-1 h_A, P_A^-1)``: the mean and covariance of 40,000 draws agree
    with it within five Monte Carlo standard errors.
    """
    rng = np.random.default_rng(5)
    gram, linear, prior = problem(rng, full_prior=False)
    order = [4, 1, 2]
    collapsed = CollapsedGaussian(gram, linear, prior, order)
    precision = (gram + np.diag(prior))[np.ix_(order, order)]
    covariance = np.linalg.inv(precision)
    mean = np.linalg.solve(precision, linear[order])
    n_draws = 40_000
    draws = np.array([collapsed.draw(rng) for _ in range(n_draws)])
    sd = np.sqrt(np.diag(covariance))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * sd / np.sqrt(n_draws))
    correlation = np.corrcoef(draws.T)
    expected = covariance / np.outer(sd, sd)
    # the sample correlation's standard error is at most (1 - r^2) / sqrt(n) <= 1 / sqrt(n)
    assert np.all(np.abs(correlation - expected) < 5 / np.sqrt(n_draws))
    assert np.all(np.abs(draws.std(axis=0) / sd - 1.0) < 5 / np.sqrt(2 * n_draws))
