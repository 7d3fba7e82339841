"""The basic linear Bayesian SVM with ridge or lasso penalty.

Luts-Ormerod (2014) section 2.3 (fixed penalty alpha, Algorithm 1) and Polson-Scott (2011)
sections 2-4.1 (exponential-power priors with alpha in {1, 2}, the ``sigma_j`` scaling and a
fixed or learned scale ``nu``). The intercept is unpenalised (``beta``, prior
``N(0, sigma2_beta)``); the feature weights ``u`` carry the penalty.

Parameterisation
----------------
The pseudo-posterior is ``exp(-2 sum_i (1 - y_i f_i)_+) p(u) p(beta)``. Its mode minimises
``sum_i (1 - y_i f_i)_+ + alpha * pen(u / c)`` where ``pen`` is ``||.||^2`` (ridge) or
``||.||_1`` (lasso) and ``c_j`` is the feature scale (1, or the feature's standard deviation
as in Polson-Scott eq. 1). Hence, for a given penalty ``alpha``:

* ridge: ``u_j ~ N(0, nu^2 c_j^2)`` with ``nu^2 = 1 / (4 alpha)`` (Luts-Ormerod section 2.3);
* lasso: ``u_j ~ Laplace(0, nu c_j)`` with ``nu = 1 / (2 alpha)`` (Polson-Scott eq. 5, 7).

For ridge this follows the Gaussian full conditional of Polson-Scott eq. (9)-(10) with
``omega_j = 1``; their eq. (5) at alpha = 2 would give half that variance, a factor the
conditional (and the EM-SVM algorithm built on it) does not carry. ``alpha`` relates to
LIBSVM's cost by ``C = 1 / (2 alpha)``. With neither ``alpha`` nor ``nu`` given, ``nu`` is
learned under ``nu^-a ~ Gamma(nu_shape, nu_rate)`` (Polson-Scott section 3.3; a = 2 for ridge,
1 for lasso). The default 0.01/0.01 is Luts-Ormerod's IG(0.01, 0.01) on the penalty variance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from bayesvm.blocks.design import DenseDesign
from bayesvm.models.linear_predictor import LinearPredictorSVM, frame_to_arrays
from bayesvm.models.penalties import FixedGaussian, Laplace, LearnedGaussian
from bayesvm.models.validation import (
    as_design,
    check_positive_finite,
    design_and_names,
    encode_labels,
)

__all__ = ["LinearSVM"]


@dataclass(frozen=True, eq=False)
class LinearSVM(LinearPredictorSVM):
    """Linear Bayesian SVM ``f(x) = beta + x^T u`` with a ridge or lasso penalty on ``u``.

    Build it with :meth:`from_arrays` or :meth:`from_frame`.
    """

    subsample_start = True

    prior: Literal["ridge", "lasso"] = "ridge"

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        *,
        prior: Literal["ridge", "lasso"] = "ridge",
        alpha: float | None = None,
        nu: float | None = None,
        feature_scale: Literal["none", "std"] = "none",
        nu_shape: float = 0.01,
        nu_rate: float = 0.01,
        sigma2_beta: float = 1e8,
        feature_names=None,
        positive_class=None,
    ) -> LinearSVM:
        """Validate the data and build the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features (no intercept column: the intercept is added, unpenalised).
        y : array-like of shape (n_samples,)
            Two classes: -1/+1, 0/1, booleans or two labels of any type.
        prior : {"ridge", "lasso"}
            Penalty on the weights (Polson-Scott exponent alpha = 2 or 1).
        alpha : float, optional
            Fixed penalty of ``sum(hinge) + alpha * pen(u / c)`` (Luts-Ormerod eq. 1).
        nu : float, optional
            Fixed Polson-Scott scale instead of ``alpha``. Leave both out to learn ``nu``.
        feature_scale : {"none", "std"}
            ``c_j``: 1 (Luts-Ormerod, LIBSVM) or the feature's standard deviation
            (Polson-Scott's ``sigma_j``).
        nu_shape, nu_rate : float
            Gamma prior on ``nu^-2`` (ridge) or ``nu^-1`` (lasso) when ``nu`` is learned.
        sigma2_beta : float
            Prior variance of the intercept (Luts-Ormerod section 3.1: 1e8).
        feature_names : sequence of str, optional
            Coordinates of ``u``; default: the column names of a data frame ``X``, else
            ``x0, x1, ...``. Prediction from a data frame selects these columns by name.
        positive_class : optional
            The label coded +1 (default: the larger of the two sorted labels).
        """
        X, names = design_and_names(X, feature_names)
        n_samples = X.shape[0]
        if n_samples < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={n_samples}")
        y_pm, classes = encode_labels(y, n_samples, positive_class)
        if prior not in ("ridge", "lasso"):
            raise ValueError(f"prior must be 'ridge' or 'lasso'; got {prior!r}")
        if alpha is not None and nu is not None:
            raise ValueError("give alpha or nu, not both (nu = 1/(2 sqrt(alpha)) for ridge)")
        check_positive_finite(
            alpha=alpha, nu=nu, nu_shape=nu_shape, nu_rate=nu_rate, sigma2_beta=sigma2_beta
        )
        scale = _feature_scale(X, feature_scale)
        if alpha is not None:
            nu = 1.0 / (2.0 * np.sqrt(alpha)) if prior == "ridge" else 1.0 / (2.0 * alpha)
        if prior == "ridge" and nu is not None:
            penalty = FixedGaussian(variance=(nu * scale) ** 2)
        elif prior == "ridge":
            penalty = LearnedGaussian(scale=scale, shape=nu_shape, rate=nu_rate, report="nu")
        else:
            penalty = Laplace(scale=scale, nu=nu, shape=nu_shape, rate=nu_rate)
        return cls(
            X=np.ones((n_samples, 1)),
            Z=X,
            y=y_pm,
            classes=classes,
            fixed_names=["intercept"],
            effect_names=names,
            penalty=penalty,
            sigma2_beta=float(sigma2_beta),
            prior=prior,
        )

    @classmethod
    def from_frame(cls, df, target: str, features=None, **kwargs) -> LinearSVM:
        """Build from a DataFrame: ``target`` column as y, ``features`` (default: all others)."""
        X, y, names = frame_to_arrays(df, target, features)
        return cls.from_arrays(X, y, feature_names=names, **kwargs)

    def design_for(self, X_new, **kwargs) -> DenseDesign:
        """Design ``[1, X_new]`` of new inputs."""
        return DenseDesign(*intercept_and_features(X_new, self.n_effects))


def intercept_and_features(X_new, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """``(column of ones, X_new)`` after checking that ``X_new`` has ``n_features`` columns."""
    X_new = as_design(X_new)
    if X_new.shape[1] != n_features:
        raise ValueError(f"X has {X_new.shape[1]} features; the model was built with {n_features}")
    return np.ones((X_new.shape[0], 1)), X_new


def _feature_scale(X: np.ndarray, feature_scale: str) -> np.ndarray:
    if feature_scale == "none":
        return np.ones(X.shape[1])
    if feature_scale != "std":
        raise ValueError(f"feature_scale must be 'none' or 'std'; got {feature_scale!r}")
    sd = X.std(axis=0, ddof=1)
    if np.any(sd == 0):
        raise ValueError(f"constant feature columns {np.flatnonzero(sd == 0).tolist()} have sd 0")
    return sd
