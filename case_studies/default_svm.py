"""The "default SVM" of Luts-Ormerod section 4.1: the linear SVM with alpha tuned by hold-out
grids.

The linear SVM minimises ``sum_i (1 - y_i f(x_i))_+ + alpha ||w||^2`` (their eq. 1), which is
LIBSVM's ``C``-SVC with ``C = 1 / (2 alpha)`` (:class:`sklearn.svm.SVC` wraps LIBSVM, as the
paper's R package e1071 does). ``alpha`` is chosen in two stages: a coarse grid, each value
scored by its mean classification error over random 3/4-1/4 splits of the training data,
then a finer grid centred at the best coarse value, scored on the same splits.

Each grid is solved as a path, from the largest ``alpha`` down (:func:`linear_svm_path`; the
fine grid's values on the coarse grid keep their errors, its path through the others goes on
from the split's coarse path, and the final fit's passes through the coarse values above
it). LIBSVM's SMO solves the large values in milliseconds, but where the classes overlap
its iterations grow quickly as ``C`` grows: at ``alpha = 1e-4`` a fit of 75 rows and 10
columns takes 4 s, of 375 rows and 50 columns up to 35 s, and on the toenail data's 1431
rows 28 s already at ``1e-3`` (30,000 iterations per row, against 0.24 at ``1e-2``). So
LIBSVM stops after :data:`SMO_ITERATIONS_PER_ROW` iterations per row, or fewer where there are
few columns (:data:`SMO_ITERATIONS_PER_ROW_AND_COEFFICIENT`); where it has not converged by
then, that value and the smaller ones go to the exact active-set step of
:mod:`bayesvm.blocks.hinge_mode` (the hinge's Gaussian-prior mode, here with a flat prior on
the intercept), started from the better of LIBSVM's unfinished solution and the previous
value's: few points cross the margin between neighbouring values, and it needs 1-60 steps of
a few milliseconds on the simulated data, up to about 500 on the spam data (where points cross
one at a time). Where it would need more than :data:`ACTIVE_SET_STEPS`, LIBSVM solves
that value to the end, and LIBSVM alone the rest of the grid and the later hold-out splits
of the same data. Both solve the same problem: the active set's solutions are exact,
LIBSVM's within its tolerance (``1e-3``, e1071's default too).

The threshold was chosen on the simulated study's data sets (section 4.2; 10 hold-outs
each). On twelve of them (one or two per cell), with LIBSVM run to the end and the active set
only for the values below one where LIBSVM had needed more than 200 iterations per row, the
default SVMs took 12 s in all, against 26 s with a threshold of 50 iterations per row (the
active set started where LIBSVM was still fast). On eighteen others (two per cell), stopping
LIBSVM at the threshold as now took 12.2 s against 15.0 s, and on the toenail data 1.5 s per
hold-out split against 29 s. On the cardiac data LIBSVM stays far below the threshold at the
grid's values (at most 17 iterations per row). The step limit is about twice the most the
spam data needed: on two of its splits (10 hold-outs each) the active set took up to 525
steps and the default SVM 36-37 s, against 893-913 s with a limit of 150, where the active
set gave up at 0.01 and LIBSVM took 25-40 s per fit at the fine grid's values from 1.8e-3 to
1e-3. On the simulated data sets the limit changed nothing (54 of them, 10 hold-outs each;
with a limit of 50 the active set had given up on 375 x 50 data, where LIBSVM then took
35 s).

The active set's step solves for the ``d + 1`` coefficients, while LIBSVM's iterations cost
the same whatever ``d``: with few columns the active set is cheap and takes over earlier, at 5
iterations per row and coefficient. On eight simulated data sets per cell (10 hold-outs each,
one thread), that took 0.47 s per data set against 0.81 s at 500 x 10, 0.15 s against 0.23 s
at 200 x 10 and 0.12 s against 0.15 s at 100 x 10. With 50 or 100 columns the same rule (255
and 505 per row) changed little (1.67 s against 1.66 s at 500 x 50, 1.47 s against 1.55 s at
500 x 100), and on the spam data (57 columns) it took 47-49 s per split against 39-41 s:
hence 200 per row at most. The toenail data's default SVMs took as long either way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.svm import SVC, _libsvm

from bayesvm.blocks.hinge_mode import hinge_objective, make_hinge_mode_step

__all__ = [
    "ACTIVE_SET_STEPS",
    "COARSE_ALPHAS",
    "FINE_DECADES",
    "FINE_POINTS",
    "SMO_ITERATIONS_PER_ROW",
    "SMO_ITERATIONS_PER_ROW_AND_COEFFICIENT",
    "DefaultSVM",
    "SVMPath",
    "fit_default_svm",
    "fine_grid",
    "holdout_errors",
    "linear_svm_path",
    "svm_for",
]

#: Coarse grid: 1e-4, 1e-3, ..., 1e3 (one value per decade). The paper does not list its grid.
COARSE_ALPHAS = 10.0 ** np.arange(-4, 4)
#: The fine grid spans this many decades either side of the best coarse alpha ...
FINE_DECADES = 1.0
#: ... in this many log-equally spaced points (a quarter decade apart).
FINE_POINTS = 9
#: Share of the training data that validates each hold-out fit (section 4: 1/4).
VALIDATION_SHARE = 0.25
#: LIBSVM's iterations per row at one ``alpha``, beyond which that value and the smaller ones
#: go to the active-set step (module docstring) ...
SMO_ITERATIONS_PER_ROW = 200
#: ... or fewer with few columns: at most this many per row and coefficient (module docstring).
SMO_ITERATIONS_PER_ROW_AND_COEFFICIENT = 5
#: LIBSVM's stopping tolerance and kernel cache (MB): SVC's defaults (the tolerance is e1071's
#: too).
LIBSVM_TOL = 1e-3
LIBSVM_CACHE_MB = 200.0
#: Steps the active-set step may take at one ``alpha`` before LIBSVM solves it instead.
ACTIVE_SET_STEPS = 1000
#: The active-set step has converged when the objective rises by less than this times its
#: value at zero (``2 n``), as :mod:`bayesvm.samplers.em` stops.
ACTIVE_SET_TOL = 1e-15


@dataclass(frozen=True, eq=False)
class DefaultSVM:
    """A default SVM fitted with its tuned ``alpha``.

    Attributes
    ----------
    alpha : float
        The selected penalty (smallest mean hold-out error on the fine grid).
    weights : ndarray of shape (n_features,)
    intercept : float
        The linear SVM at ``alpha`` on all training data: ``f(x) = weights^T x + intercept``.
    classes : ndarray of shape (2,)
        The training labels, sorted; ``f(x) > 0`` predicts the second.
    coarse_alphas, coarse_errors, fine_alphas, fine_errors : ndarray
        Each grid and the mean hold-out classification error of each of its values.
    runtime_s : float
        Wall time of tuning and the final fit.
    """

    alpha: float
    weights: np.ndarray
    intercept: float
    classes: np.ndarray
    coarse_alphas: np.ndarray
    coarse_errors: np.ndarray
    fine_alphas: np.ndarray
    fine_errors: np.ndarray
    runtime_s: float

    def predict(self, D) -> np.ndarray:
        """Labels for new inputs, in the coding of the training labels."""
        decision = np.asarray(D, dtype=float) @ self.weights + self.intercept
        return np.where(decision > 0.0, self.classes[1], self.classes[0])


def svm_for(alpha: float) -> SVC:
    """LIBSVM linear ``C``-SVC minimising hinge loss plus ``alpha ||w||^2``."""
    return SVC(kernel="linear", C=_cost(alpha), tol=LIBSVM_TOL, cache_size=LIBSVM_CACHE_MB)


def _cost(alpha: float) -> float:
    """LIBSVM's ``C`` for the SVM at ``alpha``: ``1 / (2 alpha)`` (eq. 1 divided by ``2 alpha``)."""
    return 1.0 / (2.0 * alpha)


class SVMPath(NamedTuple):
    """:func:`linear_svm_path`'s result.

    Attributes
    ----------
    solutions : ndarray of shape (n_alphas, 1 + n_features)
        Row ``j``: the intercept and the weights minimising
        ``sum_i (1 - signs_i f(x_i))_+ + alphas[j] ||w||^2``.
    warm : ndarray of bool, shape (n_alphas,)
        Whether the active-set step goes on from that solution to smaller penalties.
    gave_up : bool
        Whether the active-set step took more than :data:`ACTIVE_SET_STEPS` at some value.
    """

    solutions: np.ndarray
    warm: np.ndarray
    gave_up: bool


def linear_svm_path(
    D: np.ndarray,
    signs: np.ndarray,
    alphas,
    start: np.ndarray | None = None,
    active_set: bool = True,
) -> SVMPath:
    """The linear SVM at each of ``alphas``, solved from the largest down (module docstring).

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_features)
    signs : ndarray of shape (n_samples,)
        Labels coded -1/+1, both present.
    alphas : array-like of shape (n_alphas,)
        Positive penalties, in any order.
    start : ndarray of shape (1 + n_features,), optional
        A solution at a larger penalty, marked ``warm`` by an earlier path on the same data:
        the active-set step goes on from it.
    active_set : bool
        False: LIBSVM alone (as after the active set has given up on other splits of the data).

    Returns
    -------
    SVMPath
    """
    alphas = np.asarray(alphas, dtype=float)
    rows = signs[:, None] * np.column_stack([np.ones(signs.size), D])
    step = None  # the active-set step of blocks.hinge_mode, built when first needed
    solutions = np.empty((alphas.size, rows.shape[1]))
    warm = np.zeros(alphas.size, dtype=bool)
    previous = start if active_set else None  # the solution the active set goes on from
    last = previous  # the last solution
    gave_up = False
    per_row = min(SMO_ITERATIONS_PER_ROW, SMO_ITERATIONS_PER_ROW_AND_COEFFICIENT * rows.shape[1])
    cap = per_row * signs.size
    for j in np.argsort(-alphas, kind="stable"):
        precision = _precision(rows.shape[1], alphas[j])
        if previous is None and active_set:
            capped, converged = _libsvm_solution(D, signs, alphas[j], cap)
            if converged:
                solutions[j] = last = capped
                continue
            # LIBSVM slows down here: the active set from the better of its start and the last
            candidates = [capped] if last is None else [capped, last]
            previous = max(candidates, key=lambda theta: _objective(rows, theta, precision))
        if previous is not None:
            step = step or make_hinge_mode_step(rows)
            previous = _active_set_solution(rows, previous, precision, step)
            if previous is not None:
                solutions[j], warm[j] = previous, True
                last = previous
                continue
            gave_up, active_set = True, False  # LIBSVM alone from here on
        solutions[j] = last = _libsvm_solution(D, signs, alphas[j])[0]
    return SVMPath(solutions, warm, gave_up)


def _libsvm_solution(D, signs, alpha, max_iter: int = -1) -> tuple[np.ndarray, bool]:
    """LIBSVM's intercept and weights at ``alpha``, stopped after ``max_iter`` iterations (-1:
    none), and whether it converged within them.

    It calls scikit-learn's binding of LIBSVM directly, with :func:`svm_for`'s settings:
    :class:`~sklearn.svm.SVC` checks its input and labels on every fit, which took 1.3 of the
    1.5 ms of a fit of 75 rows and 10 columns, and the grids fit thousands of such paths.
    """
    _libsvm.set_verbosity_wrap(0)  # quiet, as SVC sets it before each fit
    _, vectors, _, dual, intercept, _, _, _, iterations = _libsvm.fit(
        np.ascontiguousarray(D, dtype=np.float64),
        (signs > 0).astype(np.float64),  # SVC's coding of the sorted labels -1, +1
        svm_type=0,  # C-SVC
        kernel="linear",
        C=_cost(alpha),
        tol=LIBSVM_TOL,
        cache_size=LIBSVM_CACHE_MB,
        max_iter=max_iter,
        class_weight=np.empty(0),
        sample_weight=np.empty(0),
        random_seed=0,  # only used for probability estimates, which are off
    )
    # LIBSVM's decision function is positive for the first label (-1): SVC flips both signs.
    theta = -np.concatenate([intercept, dual[0] @ vectors])
    return theta, max_iter < 0 or iterations[0] < max_iter


def _precision(n_coefficients: int, alpha: float) -> np.ndarray:
    """``P`` of :mod:`bayesvm.blocks.hinge_mode` for the SVM at ``alpha``: ``4 alpha`` on the
    weights, ``0`` on the intercept, so that ``F`` is ``-2`` times the SVM's objective.
    """
    precision = np.full(n_coefficients, 4.0 * alpha)
    precision[0] = 0.0
    return precision


def _objective(rows, theta, precision) -> float:
    """``F`` of :mod:`bayesvm.blocks.hinge_mode` for the SVM whose :func:`_precision` is
    ``precision``.
    """
    return hinge_objective(rows, theta, precision, np.zeros_like(precision))


def _active_set_solution(rows, start, precision, step) -> np.ndarray | None:
    """The exact SVM whose :func:`_precision` is ``precision``, by the active-set step from
    ``start``; None if it has not converged in :data:`ACTIVE_SET_STEPS` steps.
    """
    tol = ACTIVE_SET_TOL * 2.0 * rows.shape[0]
    theta = start
    value = _objective(rows, theta, precision)
    for _ in range(ACTIVE_SET_STEPS):
        theta, _ = step(theta, precision)
        new_value = _objective(rows, theta, precision)
        if new_value - value < tol:
            return theta
        value = new_value
    return None


def fine_grid(
    centre: float, decades: float = FINE_DECADES, points: int = FINE_POINTS
) -> np.ndarray:
    """``points`` values spaced equally in ``log10`` over ``centre * 10**[-decades, decades]``."""
    return centre * 10.0 ** np.linspace(-decades, decades, points)


def holdout_errors(
    D: np.ndarray, y: np.ndarray, alphas: np.ndarray, splits, starts=None, active_set=True
) -> tuple[np.ndarray, list[SVMPath]]:
    """Mean classification error of each ``alpha`` over the hold-out ``splits``.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels coded -1/+1.
    alphas : ndarray of shape (n_alphas,)
    splits : sequence of (fit_index, validation_index)
    starts : sequence of ndarray or None, optional
        Per split, the ``start`` of its path (:func:`linear_svm_path`).
    active_set : bool
        Whether the paths may use the active-set step; once it has given up on one split,
        the later splits' paths are LIBSVM's alone (the splits share most of their rows).

    Returns
    -------
    errors : ndarray of shape (n_alphas,)
        Plain (not balanced) error, as section 4.1 tunes on "classification error".
    paths : list of SVMPath
        Each split's :func:`linear_svm_path`.
    """
    errors = np.zeros(len(alphas))
    paths = []
    for (fit_index, validation_index), start in zip(
        splits, starts or [None] * len(splits), strict=True
    ):
        path = linear_svm_path(D[fit_index], y[fit_index], alphas, start, active_set)
        active_set = active_set and not path.gave_up
        paths.append(path)
        # Decision values of every alpha at once: (n_validation, n_alphas).
        solutions = path.solutions
        decision = D[validation_index] @ solutions[:, 1:].T + solutions[:, 0]
        predicted = np.where(decision > 0.0, 1, -1)
        errors += np.mean(predicted != y[validation_index][:, None], axis=0)
    return errors / len(splits), paths


def _continuation(alphas, path, below: float) -> np.ndarray | None:
    """The ``start`` for a path below ``below`` from an earlier ``path`` over ``alphas``.

    Its solution at the smallest of ``alphas`` not below (to round-off), if warm; else None.
    """
    solutions, warm, _ = path
    above = np.flatnonzero(alphas >= below * (1.0 - 1e-12))
    if above.size == 0:
        return None
    nearest = above[np.argmin(alphas[above])]
    return solutions[nearest] if warm[nearest] else None


def fit_default_svm(
    D,
    y,
    *,
    coarse_alphas=COARSE_ALPHAS,
    fine_decades: float = FINE_DECADES,
    fine_points: int = FINE_POINTS,
    n_holdouts: int = 100,
    seed=None,
) -> DefaultSVM:
    """Tune ``alpha`` by two hold-out grids and refit (Luts-Ormerod section 4.1).

    Parameters
    ----------
    D : array-like of shape (n_samples, n_features)
        Training inputs.
    y : array-like of shape (n_samples,)
        Two classes, each with at least two observations.
    coarse_alphas : array-like
        First grid (default :data:`COARSE_ALPHAS`, 1e-4 to 1e3 by decades).
    fine_decades, fine_points : float, int
        The second grid: ``fine_points`` log-spaced values within ``fine_decades`` decades
        either side of the best coarse value (default 9 points over +-1 decade).
    n_holdouts : int
        Random 3/4-1/4 splits of the training data scoring every grid value (paper: 100). The
        splits are stratified by class so that every fitting part holds both classes; both
        grids use the same splits. Ties go to the largest ``alpha``: the most regularised of
        equally good classifiers, and the cheapest for LIBSVM (on the toenail data every alpha
        gives the all-negative classifier, and the smallest take minutes per fit).
    seed : int, numpy.random.SeedSequence or Generator, optional
        Draws the splits.

    Returns
    -------
    DefaultSVM
    """
    start = time.perf_counter()
    D = np.asarray(D, dtype=float)
    y = np.asarray(y)
    coarse_alphas = np.asarray(coarse_alphas, dtype=float)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"y must hold two classes; got {classes.size}")
    if n_holdouts < 1:
        raise ValueError(f"n_holdouts must be at least 1; got {n_holdouts}")
    if coarse_alphas.ndim != 1 or coarse_alphas.size == 0 or np.any(coarse_alphas <= 0):
        raise ValueError("coarse_alphas must be a non-empty 1-d array of positive values")
    rng = np.random.default_rng(seed)
    splitter = StratifiedShuffleSplit(
        n_splits=n_holdouts,
        test_size=VALIDATION_SHARE,
        random_state=int(rng.integers(2**31 - 1)),
    )
    splits = list(splitter.split(D, y))
    signs = np.where(y == classes[1], 1, -1)
    coarse_errors, coarse_paths = holdout_errors(D, signs, coarse_alphas, splits)
    active_set = not any(path.gave_up for path in coarse_paths)
    fine_alphas = fine_grid(coarse_alphas[_best(coarse_errors)], fine_decades, fine_points)
    # The fine grid's values on the coarse grid keep their errors; each split's path through
    # the others goes on from its coarse path where the active set had taken over.
    on_coarse = np.isclose(fine_alphas[:, None], coarse_alphas, rtol=1e-12, atol=0.0)
    new = ~on_coarse.any(axis=1)
    fine_errors = on_coarse.astype(float) @ coarse_errors
    if new.any():
        top = fine_alphas[new].max()
        starts = [_continuation(coarse_alphas, path, top) for path in coarse_paths]
        fine_errors[new], fine_paths = holdout_errors(
            D, signs, fine_alphas[new], splits, starts, active_set
        )
        active_set = active_set and not any(path.gave_up for path in fine_paths)
    alpha = float(fine_alphas[_best(fine_errors)])
    # The final fit as the end of a path through the coarse values above ``alpha``.
    through = np.append(coarse_alphas[coarse_alphas > alpha], alpha)
    final = linear_svm_path(D, signs, through, active_set=active_set).solutions[-1]
    return DefaultSVM(
        alpha=alpha,
        weights=final[1:],
        intercept=float(final[0]),
        classes=classes,
        coarse_alphas=coarse_alphas,
        coarse_errors=coarse_errors,
        fine_alphas=fine_alphas,
        fine_errors=fine_errors,
        runtime_s=time.perf_counter() - start,
    )


def _best(errors: np.ndarray) -> int:
    """Index of the smallest error, the last one among ties (grids ascend in ``alpha``)."""
    return errors.size - 1 - int(np.argmin(errors[::-1]))
