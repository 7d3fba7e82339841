"""The coefficients' slice moves with the hinge's augmentation (and a lasso's mixing variances)
integrated out: from exact draws of the conditional they stay on it, and the missing-data and
lasso models' sweeps make them."""

import arviz as az
import numpy as np
import pytest
from scipy.stats import kstest

import bayesvm
from bayesvm.blocks import HingeAugmentation
from bayesvm.blocks.marginal_slice import CoefficientSlice, scale_coefficients, slice_coefficients
from bayesvm.blocks.missing_cells import ImputedCoefficientSlice
from bayesvm.models import LinearSVM, MissingDataSVM
from bayesvm.samplers.gibbs import make_gibbs_kernel

from conftest import simulate_logistic

KS_LEVEL = 0.01


PENALTIES = {
    "gaussian": (np.array([0.5, 2.0]), np.zeros(2)),
    "laplace": (np.array([0.5, 0.0]), np.array([0.0, 3.0])),
}


MOVES = {
    "directions": lambda theta, design, *rest: slice_coefficients(theta, design, *rest)[0],
    "scale": lambda theta, design, *rest: scale_coefficients(theta, design @ theta, *rest)[0],
}


@pytest.mark.parametrize("move", list(MOVES))
@pytest.mark.parametrize("prior", list(PENALTIES))
def test_draws_of_the_conditional_stay_on_it_after_a_move(prior, move):
    """``theta ~ exp(-sum_j (P_j theta_j^2 / 2 + L_j |theta_j|))`` (a Gaussian prior, or a
    Gaussian intercept and a Laplace slope) times ``exp(-2 sum max(0, 1 - y C theta))`` on a
    fine grid; exact draws from it, each moved once (slice updates along the eigenvectors, or
    of the scale), have the same marginals and the same law of ``theta_0 + theta_1``
    (Kolmogorov-Smirnov against the grid's distributions).
    """
    X, y = simulate_logistic(30, 1, seed=4)
    design = np.column_stack([np.ones(30), X[:, 0]])
    quadratic, l1 = penalties = PENALTIES[prior]
    log_likelihood_along = HingeAugmentation(y).log_likelihood_along
    grid = np.linspace(-3.0, 3.0, 1201)
    step = grid[1] - grid[0]
    t0, t1 = np.meshgrid(grid, grid, indexing="ij")
    points = np.column_stack([t0.ravel(), t1.ravel()])
    log_density = (
        -0.5 * (points**2 @ quadratic)
        - np.abs(points) @ l1
        - 2.0 * np.maximum(0.0, 1.0 - y * (points @ design.T)).sum(axis=1)
    )
    mass = np.exp(log_density - log_density.max())
    mass /= mass.sum()
    rng = np.random.default_rng(0)
    start = points[rng.choice(mass.size, size=3000, p=mass)]
    start += step * (rng.random(start.shape) - 0.5)  # uniform within each grid cell
    moved = np.array([MOVES[move](t, design, penalties, log_likelihood_along, rng) for t in start])
    assert np.all(np.any(moved != start, axis=1))

    def grid_cdf(values):
        order = np.argsort(values)
        cumulative = np.cumsum(mass[order])
        return lambda x: np.interp(x, values[order], cumulative)

    for projection in ([1.0, 0.0], [0.0, 1.0], [1.0, 1.0]):
        cdf = grid_cdf(points @ projection)
        assert kstest(moved @ projection, cdf).pvalue > KS_LEVEL / 3


def test_the_predictor_follows_the_moved_coefficients():
    """``f`` returned with the coefficients is ``C theta``, after either move."""
    X, y = simulate_logistic(40, 3, seed=2)
    design = np.column_stack([np.ones(40), X])
    penalties = (np.ones(4), np.r_[0.0, np.ones(3)])
    along = HingeAugmentation(y).log_likelihood_along
    rng = np.random.default_rng(1)
    theta, f = slice_coefficients(np.zeros(4), design, penalties, along, rng)
    np.testing.assert_allclose(f, design @ theta, rtol=1e-10, atol=1e-12)
    theta, f = scale_coefficients(theta, f, penalties, along, rng)
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
            assert isinstance(move, ImputedCoefficientSlice)
            order = [block.name for block in model.blocks]
            assert order[order.index("x_mis") + 1] == move.stale == "hinge"


def test_the_lasso_sweep_moves_the_coefficients_and_redraws_the_mixing_variances():
    """A lasso's coefficient block offers the move (a ridge's does not); the move redraws
    ``omega`` given the moved ``u``, and the hinge, next in the sweep, is the block it leaves
    stale.
    """
    X, y = simulate_logistic(40, 3, seed=5)
    ridge = LinearSVM.from_arrays(X, y, prior="ridge", alpha=1.0)
    blocks = {block.name: block for block in ridge.blocks}
    assert not any(isinstance(m, CoefficientSlice) for m in blocks["theta"].gibbs_moves(blocks))
    model = LinearSVM.from_arrays(X, y, prior="lasso", nu=1.0)
    blocks = {block.name: block for block in model.blocks}
    (move,) = blocks["theta"].gibbs_moves(blocks)
    assert isinstance(move, CoefficientSlice) and move.stale == "hinge"
    assert [block.name for block in move.mixing] == ["u_prior"]
    init, step, _ = make_gibbs_kernel(model.blocks)
    rng = np.random.default_rng(3)
    stats, _ = step(init(rng), rng)
    changed = move.update(stats, rng)
    assert set(changed) == {"theta", "u_prior"}
    assert np.all(changed["theta"].mean != stats["theta"].mean)
    # 1 / omega_j ~ InverseGaussian(nu c_j / |u_j|, 1) given the moved u: a different draw
    assert np.all(changed["u_prior"].value != stats["u_prior"].value)
    np.testing.assert_allclose(changed["theta"].f_mean, move.design(stats) @ changed["theta"].mean)


@pytest.mark.slow
def test_lasso_gibbs_mixes_on_the_problem_where_it_crept():
    """A simulated lasso problem (n = 150, d = 6, ``nu = 1``), 2 chains of 4000 kept draws: the
    bulk ESS of every coefficient is at least 0.1 per draw (0.018 without the moves, 0.07
    with the eigenvector updates alone, 0.62 with the scale's).
    """
    rng = np.random.default_rng(7)
    X = rng.normal(size=(150, 6))
    y = np.sign(X @ np.array([2, -1.5, 0, 0, 1, 0]) + 0.5 * rng.normal(size=150))
    model = LinearSVM.from_arrays(X, y, prior="lasso", nu=1.0)
    fit = bayesvm.fit(model, "gibbs", draws=4000, tune=2000, chains=2, seed=1, progressbar=False)
    ess = az.ess(fit.idata.posterior, method="bulk")
    per_draw = np.concatenate([np.atleast_1d(ess[name].to_numpy()) for name in ("beta", "u")])
    assert per_draw.min() / 8000 >= 0.1, per_draw / 8000
    assert fit.converged, fit.problems
