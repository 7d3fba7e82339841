"""Classification metrics of the papers' experiments."""

from __future__ import annotations

import numpy as np

__all__ = ["balanced_error_rate", "predicts_single_class"]


def balanced_error_rate(y_true, y_pred) -> float:
    """Balanced error rate: the mean over classes of the error rate within each class.

    Luts-Ormerod section 4: "the BER is the average of the error rates for both classes".
    Classes are those present in ``y_true``; a predicted label outside them counts as an error.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels, in any common coding.

    Returns
    -------
    float
        In ``[0, 1]``; 0.5 for a constant prediction on two classes.

    Examples
    --------
    >>> balanced_error_rate([1, 1, 1, -1], [1, 1, -1, 1])  # (1/3 + 1) / 2
    0.6666666666666666
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(
            f"y_true and y_pred must be 1-d of the same length; got shapes {y_true.shape} "
            f"and {y_pred.shape}"
        )
    if y_true.size == 0:
        raise ValueError("balanced error rate of no observations is undefined")
    classes, class_index = np.unique(y_true, return_inverse=True)
    errors_per_class = np.bincount(class_index, weights=y_pred != y_true)
    return float(np.mean(errors_per_class / np.bincount(class_index, minlength=classes.size)))


def predicts_single_class(y_pred) -> bool:
    """Whether every prediction is the same class: a constant classifier, whose BER is 0.5.

    Parameters
    ----------
    y_pred : array-like of shape (n_samples,)
        Predicted labels, in any coding.

    Examples
    --------
    >>> predicts_single_class([-1, -1, -1]), predicts_single_class([1, -1, -1])
    (True, False)
    """
    return bool(np.unique(np.asarray(y_pred)).size == 1)


def brier_score(y, probability_positive) -> float:
    """Section 5.1's Brier score: the mean of ``(y01 - q)**2``, ``y01`` the label coded 0/1
    (from -1/+1) and ``q`` the predicted probability of +1.
    """
    y01 = (np.asarray(y) == 1).astype(float)
    return float(np.mean((y01 - np.asarray(probability_positive, dtype=float)) ** 2))
