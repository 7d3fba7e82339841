"""The compiled Holmes-Held sweep draws what the row-by-row formula of its docstring does."""

import numpy as np
import pytest

from bayesvm.blocks.holmes_held import holmes_held_sweep
from bayesvm.blocks.probit import truncated_normal


def _reference_sweep(design, solved, s, y, log_uniform):
    """Each ``s_i`` in turn, ``B = S s`` made afresh for each row, with the NumPy/SciPy
    truncated normal.
    """
    s = s.copy()
    leverage = np.einsum("ij,ij->i", design, solved)
    weight = leverage / (1.0 - leverage)
    for i in range(s.size):
        fitted = design[i] @ (solved.T @ s)
        mean = fitted - weight[i] * (s[i] - fitted)
        s[i] = truncated_normal(mean, np.sqrt(1.0 + weight[i]), y[i], log_uniform[i])
    return s


@pytest.mark.parametrize("columns", [1, 7, 60])
def test_compiled_sweep_matches_the_row_by_row_formula(columns):
    """Same draws to round-off, with labels of both signs, ``s`` far in the tails (``|s_i|``
    up to 40) and ``log u`` down to -700; the given ``s`` is left unchanged.
    """
    rng = np.random.default_rng(columns)
    n = 80
    design = rng.standard_normal((n, columns))
    precision = design.T @ design + np.eye(columns)
    solved = np.linalg.solve(precision, design.T).T
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    s = y * np.abs(rng.standard_normal(n)) * np.where(rng.random(n) < 0.1, 40.0, 1.0)
    log_uniform = np.log(rng.random(n))
    log_uniform[:3] = -700.0
    given = s.copy()
    drawn = holmes_held_sweep(design, solved, s, y, log_uniform)
    expected = _reference_sweep(design, solved, s, y, log_uniform)
    np.testing.assert_allclose(drawn, expected, rtol=1e-9, atol=1e-9)
    assert np.all(y * drawn > 0)
    np.testing.assert_array_equal(s, given)
