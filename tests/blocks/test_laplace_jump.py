"""The Laplace approximation behind the jump with the probit's ``s`` integrated out.

Its mode is where the gradient of the log posterior vanishes, its precision is the negative
Hessian there (checked by central differences), and it does not depend on Newton's start, so
that the proposal density of a move and of its reverse are the same function
(:mod:`bayesvm.blocks.laplace_jump`). Its exactness as a move is checked against the
enumerated posterior in ``tests/models/test_kernel_gkm.py``.
"""

import numpy as np
import pytest
from scipy.special import log_ndtr
from scipy.stats import norm

from bayesvm.blocks import laplace_jump
from bayesvm.blocks.laplace_jump import MANY_COLUMNS, NEWTON_TOL, LaplaceJump, probit_laplace
from bayesvm.blocks.probit_newton import compiled_probit
from bayesvm.models import KernelGKM
from bayesvm.samplers.gibbs import make_gibbs_kernel


def problem():
    """A probit regression with an intercept, three nearly separating features and a Gaussian
    prior of general precision.
    """
    rng = np.random.default_rng(3)
    design = np.column_stack([np.ones(40), rng.standard_normal((40, 3))])
    y = np.where(design @ [0.2, 3.0, -2.0, 1.0] + 0.3 * rng.standard_normal(40) > 0, 1.0, -1.0)
    root = rng.standard_normal((4, 4))
    return design, y, 0.1 * (root @ root.T) + 0.05 * np.eye(4)


def log_posterior(design, y, precision, theta):
    return np.sum(log_ndtr(y * (design @ theta))) - 0.5 * theta @ precision @ theta


def test_the_mode_is_stationary_and_the_precision_is_the_negative_hessian():
    """Central differences of step ``h`` have error ``O(h^2)`` times the third derivatives
    (at most about 1 here), and round-off ``1e-16 / h^2`` in the second: with ``h = 1e-4`` both
    are below ``1e-6``.
    """
    design, y, precision = problem()
    laplace = probit_laplace(design, precision, y, np.zeros(4))
    h = 1e-4
    steps = h * np.eye(4)

    def value(theta):
        return log_posterior(design, y, precision, theta)

    gradient = np.array(
        [(value(laplace.mode + e) - value(laplace.mode - e)) / (2 * h) for e in steps]
    )
    np.testing.assert_allclose(gradient, 0.0, atol=1e-6)
    hessian = np.array(
        [
            [
                (
                    value(laplace.mode + a + b)
                    - value(laplace.mode + a - b)
                    - value(laplace.mode - a + b)
                    + value(laplace.mode - a - b)
                )
                / (4 * h * h)
                for b in steps
            ]
            for a in steps
        ]
    )
    np.testing.assert_allclose(
        laplace.factor @ laplace.factor.T, -hessian, atol=1e-5 * np.abs(hessian).max()
    )


def test_the_approximation_does_not_depend_on_the_start():
    """From zero, from far off and from so far that the probit's curvature loses its digits
    (``|z_i|`` near 1e5), the mode agrees to Newton's tolerance (``1e-6`` standard
    deviations), and the factors to the same relative order.
    """
    design, y, precision = problem()
    first = probit_laplace(design, precision, y, np.zeros(4))
    sd = np.sqrt(np.diag(np.linalg.inv(first.factor @ first.factor.T)))
    for start in ([5.0, -20.0, 10.0, 3.0], [4e4, -3e4, 2e4, 1e4]):
        other = probit_laplace(design, precision, y, np.array(start))
        assert np.all(np.abs(first.mode - other.mode) < 1e-6 * sd)
        np.testing.assert_allclose(first.factor, other.factor, rtol=1e-5, atol=1e-9)


def test_with_many_columns_newton_ends_at_the_mode_with_the_hessian_there():
    """60 columns, beyond :data:`MANY_COLUMNS`, from a start far from the mode (so that Newton
    keeps its Hessian over several steps): the returned factor is the negative Hessian at the
    returned mode, to round-off, and the decrement there is below the tolerance.
    """
    rng = np.random.default_rng(4)
    design = np.column_stack([np.ones(200), rng.standard_normal((200, 59))])
    y = np.where(design @ rng.standard_normal(60) + rng.standard_normal(200) > 0, 1.0, -1.0)
    precision = np.diag(np.full(60, 2.0))
    assert design.shape[1] >= MANY_COLUMNS
    laplace = probit_laplace(design, precision, y, rng.standard_normal(60))
    z = y * (design @ laplace.mode)
    mills = np.exp(norm.logpdf(z) - log_ndtr(z))
    gradient = design.T @ (y * mills) - precision @ laplace.mode
    hessian = design.T @ ((mills * (mills + z))[:, None] * design) + precision
    np.testing.assert_allclose(
        laplace.factor @ laplace.factor.T, hessian, atol=1e-12 * np.abs(hessian).max()
    )
    assert gradient @ np.linalg.solve(hessian, gradient) < NEWTON_TOL


def test_each_set_is_fitted_once_a_step_however_often_it_is_proposed(monkeypatch):
    """Twelve points and ``k_max = 3``, where a step proposes some sets more than once: the
    Newton fits of a step are as many as the distinct sets it proposes (each set's ``q`` is
    the same for every proposal to it within the step).
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    model = KernelGKM.from_arrays(X, np.where(X[:, 0] > 0, 1, -1), k_max=3)
    per_step = []
    original_step, original_candidate = LaplaceJump.step, LaplaceJump._candidate
    original_fit = laplace_jump.probit_laplace

    def counted_step(self, stats, rng):
        per_step.append({"proposed": [], "fits": 0})
        return original_step(self, stats, rng)

    def counted_candidate(self, active, *args):
        per_step[-1]["proposed"].append(tuple(sorted(active.tolist())))
        return original_candidate(self, active, *args)

    def counted_fit(*args):
        per_step[-1]["fits"] += 1
        return original_fit(*args)

    monkeypatch.setattr(LaplaceJump, "step", counted_step)
    monkeypatch.setattr(LaplaceJump, "_candidate", counted_candidate)
    monkeypatch.setattr(laplace_jump, "probit_laplace", counted_fit)
    init, step, _ = make_gibbs_kernel(model.blocks, jumps=True)
    stats = init(rng)
    for _ in range(30):
        stats, _ = step(stats, rng)
    assert all(record["fits"] <= len(set(record["proposed"])) for record in per_step)
    assert sum(record["fits"] for record in per_step) < sum(
        len(record["proposed"]) for record in per_step
    )


def test_the_compiled_loop_and_the_numpy_loop_find_the_same_approximation(monkeypatch):
    """Below :data:`COMPILED_COLUMNS` Newton runs compiled; the NumPy loop (forced here at 4
    columns) finds the same mode to a millionth of a standard deviation and the same factor,
    from near and far starts; the compiled log likelihood is SciPy's sum to round-off.
    """
    design, y, precision = problem()
    for start in ([0.0, 0.0, 0.0, 0.0], [5.0, -20.0, 10.0, 3.0], [4e4, -3e4, 2e4, 1e4]):
        compiled = probit_laplace(design, precision, y, np.array(start))
        with monkeypatch.context() as patch:
            patch.setattr(laplace_jump, "COMPILED_COLUMNS", 1)
            loop = probit_laplace(design, precision, y, np.array(start))
        sd = np.sqrt(np.diag(np.linalg.inv(loop.factor @ loop.factor.T)))
        assert np.all(np.abs(compiled.mode - loop.mode) < 1e-6 * sd)
        np.testing.assert_allclose(compiled.factor, loop.factor, rtol=1e-6, atol=1e-12)
    _, log_likelihood = compiled_probit()
    theta = np.array([0.5, 30.0, -20.0, 1.0])  # some y_i c_i^T theta far in the lower tail
    expected = log_ndtr(y * (design @ theta)).sum()
    assert abs(log_likelihood(design, y, theta) - expected) < 1e-12 * abs(expected)


def test_the_compiled_loop_reports_a_hessian_without_a_factor():
    """A prior precision that is not positive definite, with a design that cannot make up
    for it, gives a clear error rather than a factor with NaNs.
    """
    design, y, _ = problem()
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        probit_laplace(np.zeros_like(design), -np.eye(4), y, np.zeros(4))
