"""Bayesian linear regression with a normal-inverse-gamma prior (Drugowitsch 2019, section 2).

``y_n ~ N(w^T x_n, 1/tau)``, ``w | tau, alpha ~ N(0, (tau A)^-1)``, ``tau ~ Gam(a0, b0)``
(eq. 1-3) and either a shared ``alpha ~ Gam(c0, d0)`` (eq. 4, ``A = alpha I``) or, with ARD,
one ``alpha_i ~ Gam(c0, d0)`` per coefficient (eq. 24-25). Defaults ``a0 = 1e-2``,
``b0 = 1e-4``, ``c0 = 1e-2``, ``d0 = 1e-4`` (section 2.5, ``vb_linear_fit.m``). Gamma
distributions are shape/rate. A fixed ``alpha`` collapses the hyperprior: the posterior of
``(w, tau)`` is then the exact conjugate normal-inverse-gamma one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bayesvm.models.feature_model import FeatureModel
from bayesvm.models.validation import as_design, check_positive_finite, feature_names_for

__all__ = ["LinearRegression"]


@dataclass(frozen=True, eq=False)
class LinearRegression(FeatureModel):
    """Linear regression with (optionally ARD) shrinkage hyperprior.

    Build it with :meth:`from_arrays`. Posterior variables: ``w`` (dim ``feature``), ``tau``
    (noise precision) and, unless ``alpha`` is fixed, ``alpha`` (scalar, or per feature with
    ARD).
    """

    ard: bool
    a0: float = 1e-2
    b0: float = 1e-4
    c0: float = 1e-2
    d0: float = 1e-4
    alpha: float | None = None

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        *,
        ard: bool = False,
        a0: float = 1e-2,
        b0: float = 1e-4,
        c0: float = 1e-2,
        d0: float = 1e-4,
        alpha: float | None = None,
        feature_names=None,
    ) -> LinearRegression:
        """Validate the data and build the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs ``x_n`` (add a column of ones for an intercept, as the paper does).
        y : array-like of shape (n_samples,)
            Real-valued outputs.
        ard : bool
            One shrinkage ``alpha_i`` per coefficient (section 2.4).
        a0, b0, c0, d0 : float
            ``tau ~ Gam(a0, b0)``, ``alpha ~ Gam(c0, d0)`` (section 2.5 defaults).
        alpha : float, optional
            Fix the shrinkage instead of learning it (the hyperprior collapsed).
        feature_names : sequence of str, optional
            Coordinates of ``w``; default ``x0, x1, ...``.
        """
        X = as_design(X)
        n_samples, n_features = X.shape
        if n_samples < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={n_samples}")
        y = np.asarray(y, dtype=float)
        if y.ndim != 1 or y.shape[0] != n_samples:
            raise ValueError(f"shape mismatch: X has {n_samples} rows but y has shape {y.shape}")
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite values")
        if ard and alpha is not None:
            raise ValueError("a fixed alpha and ARD exclude each other")
        check_positive_finite(a0=a0, b0=b0, c0=c0, d0=d0, alpha=alpha)
        return cls(
            X=X,
            y=y,
            feature_names=feature_names_for(n_features, feature_names),
            ard=bool(ard),
            a0=float(a0),
            b0=float(b0),
            c0=float(c0),
            d0=float(d0),
            alpha=None if alpha is None else float(alpha),
        )

    @property
    def dims(self) -> dict[str, list[str]]:
        """Dimensions of each posterior variable (scalars omitted)."""
        return {"w": ["feature"], "alpha": ["feature"] if self.ard else []}

    @property
    def var_names(self) -> tuple[str, ...]:
        """Canonical posterior variables, identical for every backend."""
        return ("w", "tau") if self.alpha is not None else ("w", "tau", "alpha")

    @cached_property
    def sufficient_statistics(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(X^T X, X^T y, y^T y)``, all the data the VB updates need (eq. 34-35)."""
        return self.X.T @ self.X, self.X.T @ self.y, float(self.y @ self.y)

    def to_pymc(self, noncentered: bool = False):
        """The model as a PyMC specification (eq. 1-4, or 24-25 with ARD)."""
        import pymc as pm

        with pm.Model(coords=self.coords) as model:
            tau = pm.Gamma("tau", alpha=self.a0, beta=self.b0)
            if self.alpha is not None:
                alpha = self.alpha
            else:
                alpha = pm.Gamma(
                    "alpha", alpha=self.c0, beta=self.d0, dims="feature" if self.ard else None
                )
            w = pm.Normal("w", 0.0, sigma=1.0 / pm.math.sqrt(tau * alpha), dims="feature")
            pm.Normal("y", pm.math.dot(self.X, w), sigma=1.0 / pm.math.sqrt(tau), observed=self.y)
        return model
