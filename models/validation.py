"""Input validation and label coding shared by every model constructor."""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence

import numpy as np

__all__ = [
    "read_frames_with",
    "frame_reader",
    "prediction_inputs",
    "as_design",
    "design_and_names",
    "column_names",
    "select_columns",
    "table_inputs",
    "encode_labels",
    "real_response",
    "check_positive_finite",
    "feature_names_for",
]


def as_design(X, name: str = "X", missing: bool = False) -> np.ndarray:
    """Return ``X`` as a finite 2-D float array, or raise ``ValueError`` naming the problem.

    With ``missing``, NaN marks a missing value and is kept (infinite values are still
    refused). A sparse matrix is refused rather than densified: the models factor dense
    ``K x K`` precisions and read dense designs.
    """
    if _is_sparse(X):
        raise ValueError(
            f"{name} is a scipy.sparse matrix of shape {X.shape}: bayesvm's models take dense "
            f"designs; pass {name}.toarray() where {X.shape[0]} x {X.shape[1]} floats fit in "
            "memory"
        )
    _check_numeric_columns(X, name)
    array = _float_array(X, name)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {array.shape}")
    if array.shape[1] == 0:
        raise ValueError(f"{name} has no columns")
    names = column_names(X)
    columns = [repr(c) for c in names] if names else [str(j) for j in range(array.shape[1])]
    if missing:
        if np.isinf(array).any():
            row, column = np.argwhere(np.isinf(array))[0]
            raise ValueError(
                f"{name} contains infinite values (first at row {row}, column {columns[column]})"
            )
    elif not np.all(np.isfinite(array)):
        row, column = np.argwhere(~np.isfinite(array))[0]
        raise ValueError(
            f"{name} contains missing (NaN, None, pd.NA) or infinite values (first at row {row}, "
            f"column {columns[column]}); this model has no missing-data part (MissingDataSVM "
            "imputes missing predictors)"
        )
    _check_magnitude(array, name, columns)
    return array


#: The largest magnitude an input value may have. The fits compute with squares and products of
#: the values (Gram matrices, kernel distances, sums over rows), which overflow double
#: precision (about 1.8e308) for values near 1e154 or above; values beyond 1e100 are refused
#: before any work, with the column that holds them.
LARGEST_VALUE = 1e100


def _check_magnitude(array: np.ndarray, name: str, columns: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the first column of ``array`` (NaN aside) that holds a value
    beyond :data:`LARGEST_VALUE` in magnitude.
    """
    with np.errstate(invalid="ignore"):
        too_large = np.abs(array) > LARGEST_VALUE
    if too_large.any():
        row, column = np.argwhere(too_large)[0]
        raise ValueError(
            f"{name} holds values too large to compute with: {array[row, column]:.3g} at row "
            f"{row}, column {columns[column]} (at most {LARGEST_VALUE:g} in magnitude: squares "
            "and sums of such values overflow double precision); rescale the column, for "
            "example standardise it"
        )


def _float_array(X, name: str) -> np.ndarray:
    """``X`` as a float array, a pandas missing value (``pd.NA`` of a nullable or pyarrow
    column, ``None``) as NaN: a missing value wherever NaN is one.
    """
    pandas = sys.modules.get("pandas")  # a pandas object exists only once pandas is imported
    try:
        if pandas is not None and isinstance(X, pandas.DataFrame | pandas.Series):
            return X.to_numpy(dtype=float, na_value=np.nan)
        return np.asarray(X, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric: {error}") from error


def design_and_names(
    X, feature_names=None, *, name: str = "X", missing: bool = False, prefix: str = "x"
) -> tuple[np.ndarray, list]:
    """``X`` as a checked design (:func:`as_design`) and the names of its columns.

    The names are ``feature_names`` when given, else the column names of a data frame
    (:func:`column_names`, kept as scikit-learn keeps them), else ``x0, x1, ...``
    (:func:`feature_names_for`).
    """
    names = column_names(X) if feature_names is None else feature_names
    array = as_design(X, name, missing)
    return array, feature_names_for(array.shape[1], names, prefix)


def column_names(table) -> list[str] | None:
    """The column names of a data frame (pandas, or any frame with ``columns``) when they
    are all strings, else None: an array, or a frame with integer column labels, has none
    (scikit-learn's ``feature_names_in_`` rule).
    """
    columns = getattr(table, "columns", None)
    if columns is None or isinstance(table, np.ndarray):
        return None
    names = list(columns)
    if names and all(isinstance(column, str) for column in names):
        return names
    return None


def select_columns(table, names: Sequence[str], name: str = "X"):
    """The columns ``names`` of a data frame, in that order, as a float array; anything
    without string column names is returned as it is (the model then checks its width).

    Raises
    ------
    ValueError
        When the frame lacks some of ``names`` or has columns the model does not know,
        naming them.
    """
    given = column_names(table)
    if given is None:
        return table
    names = [str(column) for column in names]
    missing = [column for column in names if column not in given]
    unknown = [column for column in given if column not in names]
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"missing {missing}")
        if unknown:
            problems.append(f"not in the model {unknown}")
        prefix = names[0].rstrip("0123456789")
        hint = ""
        if names == feature_names_for(len(names), None, prefix):  # built from an array
            hint = (
                f" (the model was built from an array, whose columns it calls {prefix}0, "
                f"{prefix}1, ...: pass an array of {len(names)} columns in the training order)"
            )
        raise ValueError(
            f"the columns of {name} do not match the model's: {'; '.join(problems)}{hint}"
        )
    _check_numeric_columns(table[names], name)
    return _float_array(table[names], name)


# Models whose prediction methods read a data frame through a reader of their own (a formula's
# design, :func:`bayesvm.from_formula`): models are frozen dataclasses compared by identity, so
# the entry goes when the model does.
_FRAME_READERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def read_frames_with(model, reader) -> None:
    """Let ``reader`` turn the data frames given to ``model``'s prediction methods into its
    arrays: ``reader.inputs(frame) -> (X_new, options)``.
    """
    _FRAME_READERS[model] = reader


def frame_reader(model):
    """The reader of :func:`read_frames_with` for ``model``, or None."""
    return _FRAME_READERS.get(model)


def prediction_inputs(model, X_new, options: dict) -> tuple:
    """``(X_new, options)`` for ``model``'s prediction methods: a data frame goes through the
    model's frame reader where it has one (the prediction options it yields may not be given
    as well), and any frame left is taken by its column names (:func:`table_inputs`).
    """
    reader = frame_reader(model)
    if reader is not None and hasattr(X_new, "columns"):
        X_new, from_data = reader.inputs(X_new)
        given = sorted(set(from_data) & set(options))
        if given:
            raise ValueError(
                f"{', '.join(given)} come from the data frame's columns for a formula model; "
                "leave them out"
            )
        options = {**from_data, **options}
    return table_inputs(model.input_columns(), X_new, options)


def table_inputs(columns: dict[str, Sequence[str]], X_new, options: dict) -> tuple:
    """``(X_new, options)`` with every data frame among them replaced by its columns in the
    model's order (:func:`select_columns`): ``columns`` maps ``"X_new"`` and any keyword
    argument of the prediction methods that takes a table (e.g. ``"Z_new"``) to the column
    names of the training data.
    """
    X_new = select_columns(X_new, columns["X_new"])
    options = {
        key: select_columns(value, columns[key], key) if key in columns else value
        for key, value in options.items()
    }
    return X_new, options


def _check_numeric_columns(table, name: str) -> None:
    """Raise ``ValueError`` naming the columns of a data frame that are not numbers."""
    dtypes = getattr(table, "dtypes", None)
    if dtypes is None or isinstance(table, np.ndarray) or not hasattr(dtypes, "items"):
        return
    bad = [str(column) for column, dtype in dtypes.items() if not _numeric_dtype(dtype)]
    if bad:
        raise ValueError(f"{name} must be numeric; columns that are not: {bad}")


def _numeric_dtype(dtype) -> bool:
    try:
        return np.dtype(dtype).kind in "biuf"
    except TypeError:  # an extension type (pandas' nullable Int64, Float64, boolean, ...)
        return getattr(dtype, "kind", "O") in "biuf"


def _is_sparse(X) -> bool:
    """Whether ``X`` is a scipy.sparse matrix or array (without importing scipy.sparse, which
    costs 0.4 s at startup: if it is not imported, ``X`` cannot be one).
    """
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


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
        rows = np.flatnonzero(~np.isfinite(labels))
        raise ValueError(f"y contains NaN or infinite values (rows {_listed(rows)})")
    if labels.dtype.kind == "O":
        import pandas as pd  # imported here: pandas costs 0.1 s at startup

        rows = np.flatnonzero(pd.isna(labels))
        if rows.size:
            raise ValueError(
                f"y contains missing labels (an empty cell, None or NaN; rows {_listed(rows)})"
            )
    try:
        classes = np.unique(labels)
    except TypeError as error:  # labels of several types that do not order, e.g. 1 and "a"
        types = sorted({type(label).__name__ for label in labels})
        raise ValueError(f"y mixes labels of the types {types}: give labels of one type") from error
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


def real_response(y, n_samples: int) -> np.ndarray:
    """A regression's responses as a 1-D float array of ``n_samples`` finite numbers."""
    values = _float_array(y, "y (a regression's responses)")
    if values.ndim != 1 or values.shape[0] != n_samples:
        raise ValueError(f"shape mismatch: X has {n_samples} rows but y has shape {values.shape}")
    if not np.all(np.isfinite(values)):
        rows = np.flatnonzero(~np.isfinite(values))
        raise ValueError(f"y contains NaN or infinite values (rows {_listed(rows)})")
    _check_magnitude(values[:, None], "y", ["0"])
    return values


def _listed(rows: np.ndarray, most: int = 5) -> str:
    """Row numbers for a message: the first ``most`` of them, and how many there are."""
    shown = ", ".join(str(row) for row in rows[:most])
    return shown + (f", ... ({rows.size} in all)" if rows.size > most else "")


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
