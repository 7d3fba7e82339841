"""Model formulas: ``bayesvm.from_formula("y ~ age + sex + (1|patient)", data)``.

A formula is parsed and evaluated by formulae (the formula parser of Bambi), and its design
is handed to the array constructor of the model named, so that the formula's model is the
one the array constructor builds from the same columns. What formulae offers maps as follows:

* numeric predictors, transformations (``np.log(x)``, ``I(x**2)``, ``scale(x)``),
  categorical predictors (treatment coding, ``sex[M]``) and interactions (``age:sex[M]``)
  are columns of the design, named as formulae names them;
* the intercept: the SVMs carry their own unpenalised intercept (Luts-Ormerod eq. 5), so the
  formula must have one (``0 +`` or ``- 1`` is refused); the regressions of Drugowitsch
  (2019) have none of their own, so formulae's ``Intercept`` column becomes their first
  feature and ``y ~ 0 + x`` fits without one;
* one random intercept ``(1|g)`` with ``model="linear"`` (the default) or
  ``"random_intercept"``: Luts-Ormerod's random intercept
  model (section 3.1, example 2; :meth:`~bayesvm.models.MixedSVM.random_intercept`), the
  groups taken from the column ``g``;
* the response of a classifier: a column with two values of any type, or ``y[level]`` for
  one level against the rest (coded True).

Random slopes, several or nested groupings, offsets and proportion responses have no
counterpart in the models and raise a ``ValueError`` that names the term. Rows with a
missing value in a variable of the formula are left out (with a warning), except with
``model="missing"``, whose model imputes missing numeric predictors.

A model built from a formula remembers its formula: its fit's prediction methods
(``fit.decision_function``, ``fit.predict``, ``fit.predict_proba``, ``fit.predictive``,
``fit.predictive_interval``) take a data frame of new rows, evaluated with the training
data's categorical levels and transformations; :func:`formula_inputs` gives the arrays
themselves. A fit loaded from a file (:func:`bayesvm.load`) keeps its model's arrays but not
the formula: it predicts from arrays, e.g. ``formula_inputs`` of the model built anew.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayesvm.catalogue import MODELS, model_kind
from bayesvm.exceptions import warn_user
from bayesvm.models.validation import frame_reader, read_frames_with

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MODELS", "from_formula", "formula_inputs", "FormulaDesign"]


# The constructors' arguments that the formula itself supplies.
_FROM_FORMULA = {"X", "D", "y", "groups", "feature_names"}


@dataclass(frozen=True)
class FormulaDesign:
    """The part of an evaluated formula that turns new rows into a model's arrays.

    Attributes
    ----------
    formula : str
        The formula as given.
    common : formulae.matrices.CommonEffectsMatrix
        Its common-effects design on the training data, whose ``evaluate_new_data`` keeps the
        training data's categorical levels and stateful transformations.
    intercept : slice or None
        The column of formulae's intercept when the model carries its own (dropped from the
        arrays), else None.
    group_column : str or None
        The column holding the groups of a random intercept ``(1|g)``.
    columns : tuple of str
        The columns of the data that the predictors are computed from.
    """

    formula: str
    common: object
    intercept: slice | None
    group_column: str | None
    columns: tuple[str, ...]

    def inputs(self, data: pd.DataFrame) -> tuple[np.ndarray, dict]:
        """The predictors of ``data`` as the model's array constructor takes them, and the
        keyword arguments of its prediction methods (``groups=`` for a random intercept:
        None when ``data`` has no group column, which predicts the population level).
        """
        absent = [column for column in self.columns if column not in data]
        if absent:
            raise ValueError(f"the new data lack the columns {absent} of {self.formula!r}")
        design = self.common.evaluate_new_data(data).design_matrix
        predictors = _without(design, self.intercept)
        if self.group_column is None:
            return predictors, {}
        groups = data[self.group_column].to_numpy() if self.group_column in data else None
        return predictors, {"groups": groups}


def from_formula(formula: str, data: pd.DataFrame, model: str = "linear", **options):
    """Build a model from a formula on a data frame (module docstring for what maps).

    Parameters
    ----------
    formula : str
        A model formula, e.g. ``"outcome ~ time * treatment + (1|patientID)"``.
    data : pandas.DataFrame
        The rows; the formula's names are its columns (or names of the caller's scope,
        e.g. ``np`` in ``np.log(x)``).
    model : str
        A model of :data:`bayesvm.catalogue.MODELS`, the names every front door takes:

        * ``"linear"``: :meth:`LinearSVM.from_arrays <bayesvm.models.LinearSVM.from_arrays>`
          (Luts-Ormerod section 2.3, Polson-Scott sections 2-4.1); with a ``(1|g)`` term,
          :meth:`MixedSVM.random_intercept <bayesvm.models.MixedSVM.random_intercept>`
          (Luts-Ormerod section 3.1, example 2), as ``"random_intercept"``, which needs one;
        * ``"penalized"``: :meth:`MixedSVM.penalized <bayesvm.models.MixedSVM.penalized>`
          (section 3.1, example 1: the penalty inferred);
        * ``"spike_slab"``: :meth:`SpikeSlabSVM.laplace_zero
          <bayesvm.models.SpikeSlabSVM.laplace_zero>` (Luts-Ormerod section 3.2) or, with
          ``prior="gaussian_slab"``, :meth:`SpikeSlabSVM.gaussian_slab
          <bayesvm.models.SpikeSlabSVM.gaussian_slab>` (Polson-Scott section 4.2);
        * ``"missing"``: :meth:`MissingDataSVM.from_arrays
          <bayesvm.models.MissingDataSVM.from_arrays>` (Luts-Ormerod section 3.3): missing
          numeric predictors are kept as NaN and imputed;
        * ``"kernel"``, ``"gp"``: :meth:`KernelGKM.from_arrays
          <bayesvm.models.KernelGKM.from_arrays>` (Zhang et al.),
          :meth:`GPSVM.from_arrays <bayesvm.models.GPSVM.from_arrays>` (Wenzel et al.) on the
          formula's columns;
        * ``"regression"``: :meth:`LinearRegression.from_arrays
          <bayesvm.models.LinearRegression.from_arrays>` (Drugowitsch section 2);
        * ``"logistic"``: :meth:`LogisticRegression.from_arrays
          <bayesvm.models.LogisticRegression.from_arrays>` (Drugowitsch section 3).

        The names used before 0.3.0, ``"svm"`` and ``"gaussian_slab"``, are taken with a
        ``FutureWarning``.
    **options
        Keyword arguments of that constructor, e.g. ``alpha=``, ``prior=``,
        ``positive_class=``, ``ard=`` (not ``feature_names``: the formula names the columns).

    Returns
    -------
    model
        The model the constructor returns, with the formula's column names as coordinates.

    Raises
    ------
    ValueError
        For an unknown model, an option the constructor does not take, a term the model has
        no counterpart for (named), a formula without intercept for an SVM, a response that
        does not suit the model, or missing values that the model cannot take.
    """
    from formulae import design_matrices, model_description

    kind, implied = model_kind(model, "from_formula")
    model, options = kind.name, {**implied, **options}
    description = model_description(formula)
    if description.response is None:
        raise ValueError(f"the formula {formula!r} has no response: write it as 'y ~ predictors'")
    group_column = _random_intercept_column(description, model)
    if group_column:
        kind = MODELS["random_intercept"]
    _check_options(kind, model, options)
    keep_missing = model == "missing"
    if keep_missing:
        _check_missing_values(description, data)
    # env=1: names such as np in np.log(x) are looked up where from_formula was called.
    design = design_matrices(formula, data, na_action="pass" if keep_missing else "drop", env=1)
    n_rows = design.response.design_matrix.shape[0]
    if n_rows < len(data):
        warn_user(
            f"{len(data) - n_rows} of {len(data)} rows have a missing value in the formula's "
            "variables and were left out (model='missing' imputes missing numeric predictors)",
            UserWarning,
        )
    y = _response(design.response, model, kind.classifier)
    predictors, names, intercept = _common_design(design.common, model, kind.own_intercept)
    if group_column:
        options["groups"] = design.data[group_column].to_numpy()
    built = kind.build(predictors, y, feature_names=names, **options)
    columns = set(design.data.columns) - description.response.var_names - {group_column}
    reader = FormulaDesign(formula, design.common, intercept, group_column, tuple(sorted(columns)))
    read_frames_with(built, reader)
    return built


def formula_inputs(model, data: pd.DataFrame) -> tuple[np.ndarray, dict]:
    """The arrays of new rows for a model built by :func:`from_formula`.

    Returns
    -------
    X_new : ndarray of shape (n_rows, n_columns)
        The predictors in the layout of the model's array constructor (formulae's intercept
        column left out where the model carries its own).
    options : dict
        Keyword arguments of the prediction methods: ``groups`` for a random intercept.
    """
    reader = frame_reader(model)
    if not isinstance(reader, FormulaDesign):
        raise ValueError(
            f"this {type(model).__name__} was not built by from_formula (or was rebuilt from a "
            "file, which keeps the arrays but not the formula): give its arrays instead"
        )
    return reader.inputs(data)


def _random_intercept_column(description, model: str) -> str | None:
    """The column of the formula's one ``(1|g)`` term, or None; other group terms raise."""
    from formulae.terms import Intercept, Variable

    terms = description.group_terms
    if not terms:
        if model == "random_intercept":
            raise ValueError("model='random_intercept' needs a random intercept (1|g) term")
        return None
    supported = (
        "only one random intercept (1|g), with model='random_intercept' or 'linear' "
        "(MixedSVM.random_intercept)"
    )
    for term in terms:
        if not isinstance(term.expr, Intercept):
            raise ValueError(f"random slope ({term.name}) is not supported: {supported}")
    if len(terms) > 1:
        listed = ", ".join(f"({term.name})" for term in terms)
        raise ValueError(
            f"the formula has {len(terms)} groupings, {listed} (nested a/b terms expand to "
            f"several): {supported}"
        )
    (term,) = terms
    factor = term.factor.components
    if len(factor) != 1 or not isinstance(factor[0], Variable):
        raise ValueError(
            f"({term.name}) groups by an expression: {supported}, g a column of the data "
            "(make a column of combined labels for crossed factors)"
        )
    if model not in ("linear", "random_intercept"):
        raise ValueError(f"({term.name}) with model={model!r}: {supported}")
    return factor[0].name


def _check_options(kind, model: str, options: dict) -> None:
    """Refuse options that the constructor of ``kind`` does not take, listing the ones it
    does.
    """
    accepted = [name for name in kind.options(options) if name not in _FROM_FORMULA]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"model={model!r} builds {kind.constructor}, which takes no "
            f"{', '.join(unknown)}; its options are {accepted}"
        )


def _check_missing_values(description, data: pd.DataFrame) -> None:
    """For ``model="missing"``: only numeric predictors may be missing (they are imputed)."""
    import pandas as pd  # imported here: pandas costs 0.1 s at startup

    response = description.response.var_names
    for column in sorted(description.var_names & set(data.columns)):
        if not data[column].isna().any():
            continue
        if column in response:
            raise ValueError(
                f"the response {column!r} has missing values: MissingDataSVM imputes "
                "predictors only; leave those rows out"
            )
        if not pd.api.types.is_numeric_dtype(data[column]):
            raise ValueError(
                f"the categorical predictor {column!r} has missing values: MissingDataSVM "
                "imputes numeric predictors only"
            )


def _response(response, model: str, classifier: bool) -> np.ndarray:
    """The response as the model's constructor takes it: real values, or two classes."""
    values = response.design_matrix
    if response.kind == "proportion":
        raise ValueError(f"a proportion response has no counterpart in model={model!r}")
    if not classifier:
        if response.kind != "numeric":
            raise ValueError(
                f"model={model!r} needs a numeric response; {response.name!r} is categorical"
            )
        return values.astype(float)
    if values.ndim == 2:  # a categorical column: one indicator per level
        levels = list(response.levels)
        if len(levels) != 2:
            raise ValueError(
                f"the response {response.name!r} has {len(levels)} levels {levels[:5]}: "
                f"model={model!r} classifies two; write {response.name}[level] ~ ... for one "
                "level against the rest"
            )
        return np.asarray(levels)[values.argmax(axis=1)]
    if response.kind == "categoric":  # y[level]: the level against the rest
        return values.astype(bool)
    return values


def _common_design(common, model: str, own_intercept: bool):
    """The predictors, their names and formulae's intercept column (when the model carries
    its own intercept and drops it from the predictors).
    """
    terms = {} if common is None else common.terms
    offsets = [name for name, term in terms.items() if term.kind == "offset"]
    if offsets:
        raise ValueError(f"offset terms ({', '.join(offsets)}) have no counterpart in the models")
    intercepts = [name for name, term in terms.items() if term.kind == "intercept"]
    if own_intercept and not intercepts:
        raise ValueError(
            f"model={model!r} always has an unpenalised intercept: remove '0 +' or '- 1' "
            "from the formula"
        )
    if common is None:
        raise ValueError("the formula has no predictors")
    names = [label for term in terms.values() for label in term.labels]
    intercept = common.slices[intercepts[0]] if own_intercept else None
    predictors = _without(common.design_matrix.astype(float), intercept)
    if predictors.shape[1] == 0:
        raise ValueError(
            f"the formula has no predictors besides the intercept, which model={model!r} "
            "carries itself"
        )
    if intercept is not None:
        names = names[: intercept.start] + names[intercept.stop :]
    return predictors, names, intercept


def _without(design: np.ndarray, columns: slice | None) -> np.ndarray:
    """``design`` without the columns ``columns`` (None: all kept)."""
    if columns is None:
        return design
    return np.delete(design, np.arange(design.shape[1])[columns], axis=1)
