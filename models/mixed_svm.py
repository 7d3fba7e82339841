"""Mixed-model Bayesian SVM with the penalty inferred (Luts-Ormerod 2014, section 3.1).

``f = X beta + Z u``, ``u | sigma2_u ~ N(0, sigma2_u I)``, ``sigma2_u ~ IG(A_u, B_u)``,
``beta ~ N(0, sigma2_beta I)``; defaults ``sigma2_beta = 1e8``, ``A_u = B_u = 0.01``
(section 3.1). Example 1 (:meth:`MixedSVM.penalized`) takes ``X = 1``, ``Z = D`` so that
``sigma2_u = 1 / (4 alpha)`` is the inferred penalty; example 2
(:meth:`MixedSVM.random_intercept`) takes ``X = [1, D]`` and ``Z`` the group indicators, so
that ``sigma2_u`` is the random-intercept variance.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from bayesvm.blocks.design import DenseDesign, GroupedDesign
from bayesvm.exceptions import UnseenGroupWarning, warn_user
from bayesvm.models.linear_predictor import LinearPredictorSVM, frame_to_arrays
from bayesvm.models.linear_svm import intercept_and_features
from bayesvm.models.penalties import LearnedGaussian
from bayesvm.models.validation import (
    as_design,
    check_positive_finite,
    design_and_names,
    encode_labels,
)

__all__ = ["MixedSVM"]


@dataclass(frozen=True, eq=False)
class MixedSVM(LinearPredictorSVM):
    """Bayesian SVM with random effects ``u`` and inferred variance ``sigma2_u``."""

    subsample_start = True

    structure: str = "general"

    @classmethod
    def penalized(
        cls,
        D,
        y,
        *,
        sigma2_beta: float = 1e8,
        A_u: float = 0.01,
        B_u: float = 0.01,
        feature_names=None,
        positive_class=None,
    ) -> MixedSVM:
        """Example 1 of section 3.1: unpenalised intercept, penalty ``sigma2_u`` inferred.

        Parameters
        ----------
        D : array-like of shape (n_samples, n_features)
            Predictors (penalised; no intercept column).
        y : array-like of shape (n_samples,)
            Two classes.
        sigma2_beta, A_u, B_u : float
            Prior variance of the intercept and the IG(A_u, B_u) prior on ``sigma2_u``.
        feature_names : sequence of str, optional
            Names of the predictors (default: a data frame's column names, else ``x0, x1,
            ...``).
        positive_class : optional
            The label coded +1.
        """
        D, names = design_and_names(D, feature_names, name="D")
        n_samples = D.shape[0]
        return cls._build(
            X=np.ones((n_samples, 1)),
            Z=D,
            y=y,
            fixed_names=["intercept"],
            effect_names=names,
            sigma2_beta=sigma2_beta,
            A_u=A_u,
            B_u=B_u,
            positive_class=positive_class,
            structure="penalized",
        )

    @classmethod
    def random_intercept(
        cls,
        X,
        y,
        *legacy,
        groups=None,
        sigma2_beta: float = 1e8,
        A_u: float = 0.01,
        B_u: float = 0.01,
        feature_names=None,
        positive_class=None,
    ) -> MixedSVM:
        """Example 2 of section 3.1: fixed effects ``[1, X]`` and a random intercept per group.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Fixed-effect predictors (no intercept column: one is added, unpenalised).
        y : array-like of shape (n_samples,)
            Two classes.
        groups : array-like of shape (n_samples,)
            Group of each observation, any hashable labels; they become the ``group``
            coordinate of ``u`` (sorted). Required (keyword); the older order
            ``random_intercept(X, groups, y)`` still works, with a ``FutureWarning``.
        sigma2_beta, A_u, B_u : float
            Prior variance of each fixed effect and the IG(A_u, B_u) prior on ``sigma2_u``.
        feature_names : sequence of str, optional
            Names of the fixed effects after ``"intercept"`` (default: a data frame's column
            names, else ``x0, x1, ...``).

        Notes
        -----
        The backends use the indicator structure of ``Z`` (:class:`.GroupedDesign`): VB and
        Gibbs cost ``O(n p^2 + m p^2 + p^3)`` per iteration, so thousands of groups stay fast.
        """
        y, groups = _keyword_after_y("random_intercept", "groups", y, legacy, groups)
        X, names = design_and_names(X, feature_names)
        n_samples = X.shape[0]
        labels, group_index = _group_codes(groups, n_samples)
        return cls._build(
            X=np.hstack([np.ones((n_samples, 1)), X]),
            Z=None,
            y=y,
            fixed_names=["intercept", *names],
            effect_names=list(labels),
            effect_dim="group",
            group_index=group_index,
            sigma2_beta=sigma2_beta,
            A_u=A_u,
            B_u=B_u,
            positive_class=positive_class,
            structure="random_intercept",
        )

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        *legacy,
        Z=None,
        sigma2_beta: float = 1e8,
        A_u: float = 0.01,
        B_u: float = 0.01,
        fixed_names=None,
        effect_names=None,
        positive_class=None,
    ) -> MixedSVM:
        """General form of eq. (5): user-given fixed design ``X`` and random design ``Z``.

        ``Z`` is required (keyword); the older order ``from_arrays(X, Z, y)`` still works, with
        a ``FutureWarning``. Names default to a data frame's column names, else ``beta0,
        ...`` and ``u0, ...``; prediction then takes ``X_new`` and ``Z_new``.
        """
        y, Z = _keyword_after_y("from_arrays", "Z", y, legacy, Z)
        X, fixed_names = design_and_names(X, fixed_names, prefix="beta")
        Z, effect_names = design_and_names(Z, effect_names, name="Z", prefix="u")
        if Z.shape[0] != X.shape[0]:
            raise ValueError(f"shape mismatch: X has {X.shape[0]} rows but Z has {Z.shape[0]}")
        return cls._build(
            X=X,
            Z=Z,
            y=y,
            fixed_names=fixed_names,
            effect_names=effect_names,
            sigma2_beta=sigma2_beta,
            A_u=A_u,
            B_u=B_u,
            positive_class=positive_class,
            structure="general",
        )

    @classmethod
    def from_frame(cls, df, target: str, features=None, **kwargs) -> MixedSVM:
        """:meth:`penalized` on a data frame's ``features`` (default: all but ``target``)."""
        D, y, names = frame_to_arrays(df, target, features)
        return cls.penalized(D, y, feature_names=names, **kwargs)

    @classmethod
    def _build(cls, *, X, Z, y, sigma2_beta, A_u, B_u, positive_class, **fields) -> MixedSVM:
        if X.shape[0] < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={X.shape[0]}")
        y_pm, classes = encode_labels(y, X.shape[0], positive_class)
        check_positive_finite(sigma2_beta=sigma2_beta, A_u=A_u, B_u=B_u)
        n_effects = len(fields["effect_names"])
        penalty = LearnedGaussian(scale=np.ones(n_effects), shape=float(A_u), rate=float(B_u))
        return cls(
            X=X,
            Z=Z,
            y=y_pm,
            classes=classes,
            penalty=penalty,
            sigma2_beta=float(sigma2_beta),
            **fields,
        )

    def input_columns(self) -> dict[str, list]:
        """The columns of new inputs by name: the predictors (``penalized``), the fixed
        effects after the intercept (``random_intercept``), or both designs (general form:
        ``X_new`` and ``Z_new``).
        """
        if self.structure == "penalized":
            return {"X_new": list(self.effect_names)}
        if self.structure == "random_intercept":
            return {"X_new": list(self.fixed_names[1:])}
        return {"X_new": list(self.fixed_names), "Z_new": list(self.effect_names)}

    def design_for(self, X_new, Z_new=None, groups=None) -> DenseDesign | GroupedDesign:
        """Design of new inputs.

        ``penalized``: ``X_new`` are the predictors. ``random_intercept``: ``X_new`` are the
        fixed-effect predictors and ``groups`` their groups; a group seen in training uses its
        random intercept, an unseen one (or ``groups=None``) gets 0, the population level,
        with an :class:`~bayesvm.UnseenGroupWarning` that says how many rows did. Labels
        match across types where that is unambiguous: ``"17"`` read from a CSV finds the
        group fitted as the integer 17, and the other way round.
        General form: ``X_new`` and ``Z_new`` are the two designs.
        """
        if self.structure == "penalized":
            return DenseDesign(*intercept_and_features(X_new, self.n_effects))
        if self.structure == "random_intercept":
            ones, X_new = intercept_and_features(X_new, self.n_fixed - 1)
            index = self._group_positions(groups, X_new.shape[0])
            return GroupedDesign(np.hstack([ones, X_new]), index, self.n_effects)
        if Z_new is None:
            raise ValueError("this MixedSVM needs Z_new (the random-effect design) to predict")
        X_new, Z_new = as_design(X_new, "X"), as_design(Z_new, "Z")
        if X_new.shape[1] != self.n_fixed or Z_new.shape[1] != self.n_effects:
            raise ValueError(
                f"expected X with {self.n_fixed} and Z with {self.n_effects} columns; "
                f"got {X_new.shape[1]} and {Z_new.shape[1]}"
            )
        return DenseDesign(X_new, Z_new)

    def _group_positions(self, groups, n_rows: int) -> np.ndarray:
        """Position of each row's group among the fitted ones, -1 where unseen (warned)."""
        import pandas as pd  # imported here: pandas costs 0.1 s at startup

        if groups is None:
            warn_user(
                "groups=None: every row gets the population level (random intercept 0); "
                "pass groups= to use the fitted random intercepts",
                UnseenGroupWarning,
            )
            return np.full(n_rows, -1)
        groups = np.asarray(groups)
        if groups.shape != (n_rows,):
            raise ValueError(
                f"groups must have one label per row of X: got shape {groups.shape} "
                f"for {n_rows} rows"
            )
        index = pd.Index(self.effect_names).get_indexer(groups)
        as_text = pd.Index([str(label) for label in self.effect_names])
        unseen = index < 0
        if unseen.any() and as_text.is_unique:
            index[unseen] = as_text.get_indexer([str(label) for label in groups[unseen]])
            unseen = index < 0
        if unseen.any():
            examples = ", ".join(str(label) for label in pd.unique(groups[unseen])[:3])
            warn_user(
                f"{int(unseen.sum())} of {n_rows} rows belong to groups not seen in training "
                f"(e.g. {examples}): they get the population level (random intercept 0)",
                UnseenGroupWarning,
            )
        return index


def _keyword_after_y(method: str, keyword: str, y, legacy: tuple, value):
    """``(y, value)`` of a constructor whose ``keyword`` argument came second before the
    order ``(X, y, ...)``: ``method(X, value, y)`` still works, with a ``FutureWarning``.
    """
    if legacy:
        if len(legacy) > 1 or value is not None:
            raise TypeError(
                f"MixedSVM.{method} takes X and y by position and {keyword}= by keyword"
            )
        warnings.warn(
            f"MixedSVM.{method}(X, {keyword}, y) is deprecated: write "
            f"MixedSVM.{method}(X, y, {keyword}={keyword}), the order of every constructor",
            FutureWarning,
            stacklevel=3,
        )
        return legacy[0], y
    if value is None:
        raise TypeError(f"MixedSVM.{method} needs {keyword}= (after X and y)")
    return y, value


def _group_codes(groups, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct group labels and each row's index into them."""
    import pandas as pd  # imported here: pandas costs 0.1 s at startup

    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != n_samples:
        raise ValueError(
            f"shape mismatch: X has {n_samples} rows but groups has shape {groups.shape}"
        )
    if pd.isna(groups).any():
        raise ValueError("groups contains missing labels")
    labels, index = np.unique(groups, return_inverse=True)
    return labels, index
