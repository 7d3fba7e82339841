"""The coefficients' slice moves with the hinge's augmentation integrated out: from exact draws
of the conditional they stay on it, and the missing-data model's sweep makes them."""

import numpy as np
from scipy.stats import kstest

from bayesvm.blocks import HingeAugmentation
from bayesvm.blocks.marginal_slice import slice_coefficients
from bayesvm.blocks.missing_cells import CoefficientSlice
from bayesvm.models import MissingDataSVM

from conftest import simulate_logistic

KS_LEVEL = 0.01


def test_draws_of_the_conditional_stay_on_it_after_a_move():
    """``theta ~ N(0, diag(1 / lambda))`` times ``exp(-2 sum max(0, 1 - y C theta))`` on a
    fine grid; exact draws from it, each moved once, have the same marginals and the same law
    of ``theta_0 + theta_1`` (Kolmogorov-Smirnov against the grid's distributions).
    """
    X, y = simulate_logistic(30, 1, seed=4)
    design = np.column_stack([np.ones(30), X[:, 0]])
    precision = np.array([0.5, 2.0])
    log_likelihood_along = HingeAugmentation(y).log_likelihood_along
    grid = np.linspace(-3.0, 3.0, 1201)
    step = grid[1] - grid[0]
    t0, t1 = np.meshgrid(grid, grid, indexing="ij")
    points = np.column_stack([t0.ravel(), t1.ravel()])
    log_density = -0.5 * (points**2 @ precision) - 2.0 * np.maximum(
        0.0, 1.0 - y * (points @ design.T)
    ).sum(axis=1)
    mass = np.exp(log_density - log_density.max())
    mass /= mass.sum()
    rng = np.random.default_rng(0)
    start = points[rng.choice(mass.size, size=3000, p=mass)]
    start += step * (rng.random(start.shape) - 0.5)  # uniform within each grid cell
    moved = np.array(
        [slice_coefficients(t, design, precision, log_likelihood_along, rng)[0] for t in start]
    )
    assert np.all(np.any(moved != start, axis=1))

    def grid_cdf(values):
        order = np.argsort(values)
        cumulative = np.cumsum(mass[order])
        return lambda x: np.interp(x, values[order], cumulative)

    for projection in ([1.0, 0.0], [0.0, 1.0], [1.0, 1.0]):
        cdf = grid_cdf(points @ projection)
        assert kstest(moved @ projection, cdf).pvalue > KS_LEVEL / 3


def test_the_predictor_follows_the_moved_coefficients():
    """``f`` returned with the coefficients is ``C theta``."""
    X, y = simulate_logistic(40, 3, seed=2)
    design = np.column_stack([np.ones(40), X])
    theta, f = slice_coefficients(
        np.zeros(4),
        design,
        np.ones(4),
        HingeAugmentation(y).log_likelihood_along,
        np.random.default_rng(1),
    )
    np.testing.assert_allclose(f, design @ theta, rtol=1e-10, atol=1e-12)


def test_the_missing_data_sweep_moves_the_coefficients_after_the_cells_before_the_hinge():
    """The cells block offers the move, reading the hinge next; the normalised likelihood,
    whose Gibbs corrects the hinge's draws, offers none.
    """
    X, y = simulate_logistic(40, 2, seed=3)
    D = X.copy()
    D[::5, 1] = np.nan
    for likelihood, moves in (("hinge", 1), ("normalized", 0)):
        model = MissingDataSVM.from_arrays(D, y, likelihood=likelihood)
        blocks = {block.name: block for block in model.blocks}
        offered = blocks["x_mis"].gibbs_moves(blocks)
        assert len(offered) == moves
        if moves:
            (move,) = offered
            assert isinstance(move, CoefficientSlice)
            order = [block.name for block in model.blocks]
            assert order[order.index("x_mis") + 1] == move.stale == "hinge"
