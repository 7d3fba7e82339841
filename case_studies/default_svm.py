"""The "default SVM" of Luts-Ormerod section 4.1: LIBSVM with alpha tuned by hold-out grids.

The linear SVM minimises ``sum_i (1 - y_i f(x_i))_+ + alpha ||w||^2`` (their eq. 1), which is
LIBSVM's ``C``-SVC with ``C = 1 / (2 alpha)`` (:class:`sklearn.svm.SVC` wraps LIBSVM, as the
paper's R package e1071 does). ``alpha`` is chosen in two stages: a coarse grid, each value
scored by its mean classification error over random 3/4-1/4 splits of the training data,
then a finer grid centred at the best coarse value, scored on the same splits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.svm import SVC

__all__ = [
    "COARSE_ALPHAS",
    "FINE_DECADES",
    "FINE_POINTS",
    "DefaultSVM",
    "fit_default_svm",
    "fine_grid",
    "holdout_errors",
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


@dataclass(frozen=True, eq=False)
class DefaultSVM:
    """A default SVM fitted with its tuned ``alpha``.

    Attributes
    ----------
    alpha : float
        The selected penalty (smallest mean hold-out error on the fine grid).
    classifier : sklearn.svm.SVC
        Refitted on all training data with ``C = 1 / (2 alpha)``.
    coarse_alphas, coarse_errors, fine_alphas, fine_errors : ndarray
        Each grid and the mean hold-out classification error of each of its values.
    runtime_s : float
        Wall time of tuning and the final fit.
    """

    alpha: float
    classifier: SVC
    coarse_alphas: np.ndarray
    coarse_errors: np.ndarray
    fine_alphas: np.ndarray
    fine_errors: np.ndarray
    runtime_s: float

    def predict(self, D) -> np.ndarray:
        """Labels for new inputs, in the coding of the training labels."""
        return self.classifier.predict(np.asarray(D, dtype=float))


def svm_for(alpha: float) -> SVC:
    """LIBSVM linear ``C``-SVC minimising hinge loss plus ``alpha ||w||^2``."""
    return SVC(kernel="linear", C=1.0 / (2.0 * alpha))


def fine_grid(
    centre: float, decades: float = FINE_DECADES, points: int = FINE_POINTS
) -> np.ndarray:
    """``points`` values spaced equally in ``log10`` over ``centre * 10**[-decades, decades]``."""
    return centre * 10.0 ** np.linspace(-decades, decades, points)


def holdout_errors(D: np.ndarray, y: np.ndarray, alphas: np.ndarray, splits) -> np.ndarray:
    """Mean classification error of each ``alpha`` over the hold-out ``splits``.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    alphas : ndarray of shape (n_alphas,)
    splits : sequence of (fit_index, validation_index)

    Returns
    -------
    ndarray of shape (n_alphas,)
        Plain (not balanced) error, as section 4.1 tunes on "classification error".
    """
    errors = np.zeros(len(alphas))
    for fit_index, validation_index in splits:
        D_fit, y_fit = D[fit_index], y[fit_index]
        fitted = [svm_for(alpha).fit(D_fit, y_fit) for alpha in alphas]
        weights = np.stack([clf.coef_[0] for clf in fitted])
        intercepts = np.array([clf.intercept_[0] for clf in fitted])
        classes = fitted[0].classes_
        # Decision values of every alpha at once: (n_validation, n_alphas).
        decision = D[validation_index] @ weights.T + intercepts
        predicted = np.where(decision > 0, classes[1], classes[0])
        errors += np.mean(predicted != y[validation_index][:, None], axis=0)
    return errors / len(splits)


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
    coarse_errors = holdout_errors(D, y, coarse_alphas, splits)
    fine_alphas = fine_grid(coarse_alphas[_best(coarse_errors)], fine_decades, fine_points)
    fine_errors = holdout_errors(D, y, fine_alphas, splits)
    alpha = float(fine_alphas[_best(fine_errors)])
    classifier = svm_for(alpha).fit(D, y)
    return DefaultSVM(
        alpha=alpha,
        classifier=classifier,
        coarse_alphas=coarse_alphas,
        coarse_errors=coarse_errors,
        fine_alphas=fine_alphas,
        fine_errors=fine_errors,
        runtime_s=time.perf_counter() - start,
    )


def _best(errors: np.ndarray) -> int:
    """Index of the smallest error, the last one among ties (grids ascend in ``alpha``)."""
    return errors.size - 1 - int(np.argmin(errors[::-1]))
