"""Input validation and label coding shared by every model constructor."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["as_design", "encode_labels", "check_positive_finite", "feature_names_for"]


def as_design(X, name: str = "X", missing: bool = False) -> np.ndarray:
    """Return ``X`` as a finite 2-D float array, or raise ``ValueError`` naming the problem.

    With ``missing``, NaN marks a missing value and is kept (infinite values are still
    refused).
    """
    try:
        array = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric: {error}") from error
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {array.shape}")
    if array.shape[1] == 0:
        raise ValueError(f"{name} has no columns")
    if missing:
        if np.isinf(array).any():
            bad = np.argwhere(np.isinf(array))[0]
            raise ValueError(
                f"{name} contains infinite values (first at row {bad[0]}, column {bad[1]})"
            )
        return array
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0]
        raise ValueError(
            f"{name} contains NaN or infinite values (first at row {bad[0]}, column {bad[1]}); "
            "this model has no missing-data part (MissingDataSVM imputes missing predictors)"
        )
    return array


def encode_labels(y, n_samples: int, positive_class=None) -> tuple[np.ndarray, np.ndarray]:
    """Code binary labels as -1/+1.

    Accepts -1/+1, 0/1, booleans or any two distinct labels (strings included). The
    classes are sorted; the second is coded +1 unless ``positive_class`` names it.

    Returns
    -------
    y_pm : ndarray of shape (n_samples,)
        Labels coded -1.0 / +1.0.
    classes : ndarray of shape (2,)
        The original labels, ``classes[1]`` being the one coded +1.
    """
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {labels.shape}")
    if labels.shape[0] != n_samples:
        raise ValueError(
            f"shape mismatch: X has {n_samples} rows but y has {labels.shape[0]} labels"
        )
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("y contains NaN or infinite values")
    if labels.dtype.kind == "O" and any(label is None for label in labels):
        raise ValueError("y contains missing labels (None)")
    classes = np.unique(labels)
    if classes.size == 1:
        raise ValueError(
            f"y has a single class ({classes[0]!r}): both classes must be present to fit"
        )
    if classes.size > 2:
        raise ValueError(
            f"y must be binary; got {classes.size} classes: {list(classes[:5])}"
            + (" ..." if classes.size > 5 else "")
        )
    if positive_class is not None:
        if positive_class not in classes:
            raise ValueError(f"positive_class {positive_class!r} is not one of {list(classes)}")
        if classes[0] == positive_class:
            classes = classes[::-1]
    y_pm = np.where(labels == classes[1], 1.0, -1.0)
    return y_pm, classes


def check_positive_finite(**values: float) -> None:
    """Raise ``ValueError`` unless every named hyperparameter is a finite number > 0.

    Numbers only: a string such as ``"0.5"`` (read from a file, say) is refused rather than
    converted, and so is a boolean.
    """
    for name, value in values.items():
        if value is None:
            continue
        array = np.asarray(value)
        if array.dtype.kind not in "iuf":
            raise ValueError(
                f"hyperparameter {name} must be a number; got {value!r} ({type(value).__name__})"
            )
        if not np.all(np.isfinite(array)) or np.any(array <= 0):
            raise ValueError(f"hyperparameter {name} must be finite and > 0; got {value!r}")


def feature_names_for(n_features: int, names: Sequence[str] | None, prefix: str = "x") -> list:
    """Feature coordinate labels: the given names, or ``x0, x1, ...``."""
    if names is None:
        return [f"{prefix}{j}" for j in range(n_features)]
    names = [str(name) for name in names]
    if len(names) != n_features:
        raise ValueError(f"got {len(names)} feature names for {n_features} columns")
    if len(set(names)) != len(names):
        raise ValueError("feature names must be unique")
    return names
