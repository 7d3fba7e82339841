"""Checks, at model construction, for designs that leave parameters to the prior alone.

A likelihood (or the hinge pseudo-likelihood) says nothing about a direction of the
coefficients along which the linear predictor does not change: constant columns beside an
intercept, exactly collinear columns, or, for a classifier, any direction at all once the
classes are separable (the hinge loss is then zero for arbitrarily large weights). There
the posterior is the prior's. With a fixed penalty that is a proper, if prior-driven,
answer; with a learned penalty variance under its vague IG(0.01, 0.01) prior (Luts-Ormerod
section 3.1) the variance has a heavy tail that samplers wander into (sigma2_u from 1e-2 to
1e5 across chains) while mean-field VB settles at one mode and looks confident. A random
intercept for groups of one observation is the same situation per group. Models call
:func:`warn_if_not_identified` when they are built.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.linalg import lapack, solve_triangular

from bayesvm.exceptions import IdentifiabilityWarning, warn_user

__all__ = [
    "constant_columns",
    "collinear_columns",
    "is_separable",
    "design_problems",
    "warn_if_not_identified",
    "COLLINEAR_TOL",
    "SEPARABILITY_MAX_SIZE",
]

# Relative size of a Gram matrix's pivot (columns scaled to unit norm) below which a column
# counts as a linear combination of the others: a condition number of the design above 1e6.
COLLINEAR_TOL = 1e-12
# Largest n x K for which separability is checked by a linear program: 0.13 s at 4601 x 58;
# the cost grows fast with K (1.4 s at 20000 x 101, 17 s at 2000 x 1001).
SEPARABILITY_MAX_SIZE = 500_000


def constant_columns(matrix: np.ndarray, names: Sequence[str]) -> list[str]:
    """Names of the columns of ``matrix`` whose values are all equal."""
    return [names[j] for j in np.flatnonzero(np.ptp(matrix, axis=0) == 0)]


def collinear_columns(matrix: np.ndarray, names: Sequence[str]) -> list[str]:
    """Names of columns that are linear combinations of the columns before them (empty if full
    rank).

    The rank from LAPACK's pivoted Cholesky (``dpstrf``) of the Gram matrix of the unit-norm
    columns; where it falls short, a Cholesky in the columns' own order that skips each column
    whose squared distance from the span of the kept ones (its pivot) is at most
    :data:`COLLINEAR_TOL`: of a dependent set the last column is reported, whatever the
    round-off (the pivoted factorisation chooses among the unit diagonal's ties by it). Needs
    ``n >= K`` to mean anything (with fewer rows every design is deficient).
    """
    gram = matrix.T @ matrix
    norms = np.sqrt(np.diag(gram))
    if np.any(norms == 0):
        return [names[j] for j in np.flatnonzero(norms == 0)]
    gram /= np.outer(norms, norms)  # the unit-norm columns' Gram matrix, with no n x K copy
    if lapack.dpstrf(gram, lower=1, tol=COLLINEAR_TOL)[2] == gram.shape[0]:
        return []  # full rank, found by LAPACK's pivoted factorisation at once
    kept: list[int] = []
    factor = np.zeros_like(gram)  # its leading m x m block: the factor of the m kept columns
    collinear = []
    for j in range(gram.shape[0]):
        m = len(kept)
        row = solve_triangular(factor[:m, :m], gram[kept, j], lower=True)
        pivot = gram[j, j] - row @ row
        if pivot <= COLLINEAR_TOL:
            collinear.append(names[j])
            continue
        factor[m, :m] = row
        factor[m, m] = np.sqrt(pivot)
        kept.append(j)
    return collinear


def is_separable(matrix: np.ndarray, y: np.ndarray) -> bool | None:
    """Whether some ``theta`` gives ``y_i (matrix theta)_i >= 1`` for every row.

    A feasibility linear program, solved by HiGHS's interior-point method: its dual simplex
    took 55-60 s to find 5000 x 81 overlapping classes infeasible (and then reported
    numerical difficulties), the interior point 1.7 s (3.4 s for separable ones). None when the
    problem is larger than :data:`SEPARABILITY_MAX_SIZE`, or the solver ends on neither answer
    (unchecked); True when there are no more rows than columns, where a generic design always
    separates.
    """
    from scipy.optimize import linprog  # imported here: scipy.optimize costs 0.04 s at startup

    n, k = matrix.shape
    if n <= k:
        return True
    if n * k > SEPARABILITY_MAX_SIZE:
        return None
    result = linprog(
        np.zeros(k),
        A_ub=-(y[:, None] * matrix),
        b_ub=-np.ones(n),
        bounds=[(None, None)] * k,
        method="highs-ipm",
    )
    return {0: True, 2: False}.get(result.status)


def design_problems(matrix: np.ndarray, names: Sequence[str]) -> list[str]:
    """Constant columns beyond the first, and columns that are combinations of others.

    The first constant column is taken as the intercept; with fewer rows than columns only
    the constant columns are checked (every such design is deficient).
    """
    problems = []
    constant = constant_columns(matrix, names)
    if len(constant) > 1:
        problems.append(
            f"constant columns {constant[1:]} duplicate {constant[0]!r}: their weights are not "
            "identified"
        )
    keep = [j for j, name in enumerate(names) if name not in constant[1:]]
    if matrix.shape[0] >= len(keep):
        kept = matrix if len(keep) == matrix.shape[1] else matrix[:, keep]
        collinear = collinear_columns(kept, [names[j] for j in keep])
        if collinear:
            problems.append(
                f"columns {collinear} are linear combinations of the other columns: the split "
                "of the weights among them is not identified"
            )
    return problems


def warn_if_not_identified(problems: Sequence[str], model_name: str) -> None:
    """Issue one :class:`~bayesvm.IdentifiabilityWarning` listing ``problems`` (if any)."""
    if problems:
        warn_user(f"{model_name}: " + "; ".join(problems), IdentifiabilityWarning)
