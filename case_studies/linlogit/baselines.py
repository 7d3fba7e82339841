"""Maximum likelihood for Drugowitsch (2019)'s examples, shaped like the Bayesian fits it meets.

The likelihood-only counterparts of :mod:`bayesvm.case_studies.linlogit`'s models: least
squares with t intervals for the linear examples (section 2.6), logistic maximum likelihood
with Wald intervals for the logistic ones (section 3.6). Each gives ``coefficient_intervals``
and predictions as the fits of :func:`bayesvm.fit` do, so the study records them alike.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression as MaximumLikelihoodLogit

from bayesvm.linalg import cholesky_lower, cholesky_solve

__all__ = ["LeastSquares", "LogisticMaximumLikelihood", "MAXIMUM_LIKELIHOOD"]


@dataclass(frozen=True)
class LeastSquares:
    """Maximum likelihood for the linear model; t intervals when ``X`` has full column rank."""

    w: np.ndarray
    covariance: np.ndarray | None  # of w: s^2 (X^T X)^-1; None when rank deficient
    noise_variance: float
    dof: int

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray) -> LeastSquares:
        """Least squares (the minimum-norm solution when ``X`` is rank deficient)."""
        w, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
        N, D = X.shape
        if rank < D or N <= D:
            return cls(w, None, np.nan, 0)
        noise_variance = float(np.sum((y - X @ w) ** 2) / (N - D))
        covariance = noise_variance * cholesky_solve(cholesky_lower(X.T @ X), np.eye(D))
        return cls(w, covariance, noise_variance, N - D)

    def _interval(self, centre: np.ndarray, variance, prob: float):
        if self.covariance is None:
            return np.full_like(centre, np.nan), np.full_like(centre, np.nan)
        half = stats.t.ppf((1 + prob) / 2, self.dof) * np.sqrt(variance)
        return centre - half, centre + half

    def coefficient_intervals(self, prob: float):
        """Estimate and t interval of each coefficient."""
        variance = np.diag(self.covariance) if self.covariance is not None else None
        return self.w, *self._interval(self.w, variance, prob)

    def predict(self, X_new: np.ndarray) -> np.ndarray:
        """Fitted values ``X_new w``."""
        return X_new @ self.w

    def predictive_interval(self, X_new: np.ndarray, prob: float, seed=None):
        """T prediction interval of new outputs."""
        if self.covariance is None:
            return self._interval(self.predict(X_new), None, prob)
        spread = self.noise_variance + np.sum((X_new @ self.covariance) * X_new, axis=1)
        return self._interval(self.predict(X_new), spread, prob)


@dataclass(frozen=True)
class LogisticMaximumLikelihood:
    """Unpenalised logistic regression (scikit-learn's Newton solver, ``C = inf``) with Wald
    intervals. On separable data no maximum exists: the weights grow until ``MAX_ITER``
    and ``converged`` is False.
    """

    MAX_ITER = 200

    w: np.ndarray
    sd: np.ndarray  # NaN where the information matrix is singular
    converged: bool

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray) -> LogisticMaximumLikelihood:
        """The maximum of the likelihood of labels ``y`` (-1/+1) given ``X``, no intercept
        added.
        """
        estimator = MaximumLikelihoodLogit(
            C=np.inf,
            fit_intercept=False,
            solver="newton-cholesky",
            tol=1e-10,
            max_iter=cls.MAX_ITER,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # reported as converged=False
            w = estimator.fit(X, y).coef_[0]
        p = expit(X @ w)
        information = X.T @ ((p * (1 - p))[:, None] * X)
        try:
            sd = np.sqrt(np.diag(cholesky_solve(cholesky_lower(information), np.eye(w.size))))
        except np.linalg.LinAlgError:
            sd = np.full(w.size, np.nan)
        return cls(w, sd, bool(estimator.n_iter_[0] < cls.MAX_ITER))

    def coefficient_intervals(self, prob: float):
        """Estimate and Wald interval of each coefficient."""
        half = stats.norm.ppf((1 + prob) / 2) * self.sd
        return self.w, self.w - half, self.w + half

    def predict_proba(self, X_new: np.ndarray) -> np.ndarray:
        """``P(y = -1)`` and ``P(y = +1)`` at the rows of ``X_new``, as columns."""
        p_plus = expit(X_new @ self.w)
        return np.column_stack([1 - p_plus, p_plus])


MAXIMUM_LIKELIHOOD = (LeastSquares, LogisticMaximumLikelihood)
