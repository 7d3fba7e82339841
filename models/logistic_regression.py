"""Bayesian logistic regression with a Gamma hyperprior (Drugowitsch 2019, section 3).

``P(y | x, w) = sigma(y w^T x)`` (eq. 38-39), ``w | alpha ~ N(0, alpha^-1 I)`` with
``alpha ~ Gam(a0, b0)`` (eq. 40-41), or one ``alpha_i ~ Gam(a0, b0)`` per coefficient with
ARD (eq. 69-70). Defaults ``a0 = 1e-2``, ``b0 = 1e-4`` (section 3.5). Without the hyperprior
(``hyperprior=False``, the model of ``vb_logit_fit_iter.m``) the prior is ``N(0, D^-1 I)``
(eq. 81).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesvm.models.feature_model import FeatureModel
from bayesvm.models.validation import (
    as_design,
    check_positive_finite,
    encode_labels,
    feature_names_for,
)

__all__ = ["LogisticRegression"]


@dataclass(frozen=True, eq=False)
class LogisticRegression(FeatureModel):
    """Logistic regression with a shared or ARD shrinkage hyperprior, or a fixed prior.

    Posterior variables: ``w`` (dim ``feature``) and, with the hyperprior, ``alpha`` (scalar, or
    per feature with ARD).
    """

    classes: np.ndarray
    ard: bool
    a0: float = 1e-2
    b0: float = 1e-4
    hyperprior: bool = True

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        *,
        ard: bool = False,
        hyperprior: bool = True,
        a0: float = 1e-2,
        b0: float = 1e-4,
        feature_names=None,
        positive_class=None,
    ) -> LogisticRegression:
        """Validate the data and build the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs (add a column of ones for a bias term).
        y : array-like of shape (n_samples,)
            Two classes (-1/+1, 0/1, bool or two labels).
        ard : bool
            One ``alpha_i`` per coefficient (section 3.4).
        hyperprior : bool
            Learn the prior precision (eq. 40-41). ``False`` fixes ``w ~ N(0, D^-1 I)`` (eq. 81),
            fitted by VB with sequential ``xi`` updates (section 3.5.1).
        a0, b0 : float
            ``alpha ~ Gam(a0, b0)`` (section 3.5 defaults); unused without the hyperprior.
        """
        X = as_design(X)
        n_samples, n_features = X.shape
        if n_samples < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={n_samples}")
        y_pm, classes = encode_labels(y, n_samples, positive_class)
        check_positive_finite(a0=a0, b0=b0)
        if ard and not hyperprior:
            raise ValueError("ard=True needs the hyperprior: ARD learns one alpha per coefficient")
        return cls(
            X=X,
            y=y_pm,
            classes=classes,
            feature_names=feature_names_for(n_features, feature_names),
            ard=bool(ard),
            a0=float(a0),
            b0=float(b0),
            hyperprior=bool(hyperprior),
        )

    @property
    def dims(self) -> dict[str, list[str]]:
        """Dimensions of each posterior variable (scalars omitted)."""
        return {"w": ["feature"], "alpha": ["feature"] if self.ard else []}

    @property
    def var_names(self) -> tuple[str, ...]:
        """Canonical posterior variables, identical for every backend."""
        return ("w", "alpha") if self.hyperprior else ("w",)

    def to_pymc(self, noncentered: bool = False):
        """The model as a PyMC specification (eq. 38-41, 69-70 with ARD, or 81)."""
        import pymc as pm

        with pm.Model(coords=self.coords) as model:
            if self.hyperprior:
                alpha = pm.Gamma(
                    "alpha", alpha=self.a0, beta=self.b0, dims="feature" if self.ard else None
                )
            else:
                alpha = float(self.n_features)
            w = pm.Normal("w", 0.0, sigma=1.0 / pm.math.sqrt(alpha), dims="feature")
            pm.Bernoulli("y", logit_p=pm.math.dot(self.X, w), observed=(self.y > 0).astype(int))
        return model
