"""Mixed-model Bayesian SVM with the penalty inferred (Luts-Ormerod 2014, section 3.1).

``f = X beta + Z u``, ``u | sigma2_u ~ N(0, sigma2_u I)``, ``sigma2_u ~ IG(A_u, B_u)``,
``beta ~ N(0, sigma2_beta I)``; defaults ``sigma2_beta = 1e8``, ``A_u = B_u = 0.01``
(section 3.1). Example 1 (:meth:`MixedSVM.penalized`) takes ``X = 1``, ``Z = D`` so that
``sigma2_u = 1 / (4 alpha)`` is the inferred penalty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesvm.models.linear_predictor import LinearPredictorSVM, frame_to_arrays
from bayesvm.models.linear_svm import _intercept_and_features
from bayesvm.models.penalties import LearnedGaussian
from bayesvm.models.validation import (
    as_design,
    check_positive_finite,
    encode_labels,
    feature_names_for,
)

__all__ = ["MixedSVM"]


@dataclass(frozen=True, eq=False)
class MixedSVM(LinearPredictorSVM):
    """Bayesian SVM with random effects ``u`` and inferred variance ``sigma2_u``."""

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
        """
        D = as_design(D, "D")
        n_samples = D.shape[0]
        return cls._build(
            X=np.ones((n_samples, 1)),
            Z=D,
            y=y,
            fixed_names=["intercept"],
            effect_names=feature_names_for(D.shape[1], feature_names),
            sigma2_beta=sigma2_beta,
            A_u=A_u,
            B_u=B_u,
            positive_class=positive_class,
            structure="penalized",
        )

    @classmethod
    def from_arrays(
        cls,
        X,
        Z,
        y,
        *,
        sigma2_beta: float = 1e8,
        A_u: float = 0.01,
        B_u: float = 0.01,
        fixed_names=None,
        effect_names=None,
        positive_class=None,
    ) -> MixedSVM:
        """General form of eq. (5): user-given fixed design ``X`` and random design ``Z``."""
        X = as_design(X, "X")
        Z = as_design(Z, "Z")
        if Z.shape[0] != X.shape[0]:
            raise ValueError(f"shape mismatch: X has {X.shape[0]} rows but Z has {Z.shape[0]}")
        return cls._build(
            X=X,
            Z=Z,
            y=y,
            fixed_names=feature_names_for(X.shape[1], fixed_names, prefix="beta"),
            effect_names=feature_names_for(Z.shape[1], effect_names, prefix="u"),
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
        penalty = LearnedGaussian(scale=np.ones(Z.shape[1]), shape=float(A_u), rate=float(B_u))
        return cls(
            X=X,
            Z=Z,
            y=y_pm,
            classes=classes,
            penalty=penalty,
            sigma2_beta=float(sigma2_beta),
            **fields,
        )

    def design_for(self, X_new, Z_new=None, **kwargs) -> tuple[np.ndarray, np.ndarray]:
        """Designs for new inputs: ``X_new`` are the predictors (``penalized``), or ``X_new``
        and ``Z_new`` the two designs (general form).
        """
        if self.structure == "penalized":
            return _intercept_and_features(X_new, self.n_effects)
        if Z_new is None:
            raise ValueError("this MixedSVM needs Z_new (the random-effect design) to predict")
        X_new, Z_new = as_design(X_new, "X"), as_design(Z_new, "Z")
        if X_new.shape[1] != self.n_fixed or Z_new.shape[1] != self.n_effects:
            raise ValueError(
                f"expected X with {self.n_fixed} and Z with {self.n_effects} columns; "
                f"got {X_new.shape[1]} and {Z_new.shape[1]}"
            )
        return X_new, Z_new
