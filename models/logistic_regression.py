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
from scipy.special import expit, log_expit

from bayesvm.blocks import (
    GaussianCoefficients,
    JaakkolaJordan,
    Segment,
    SequentialJaakkolaJordan,
    jaakkola_lambda,
)
from bayesvm.blocks.design import DenseDesign
from bayesvm.models.feature_model import FeatureModel
from bayesvm.models.links import log_sigmoid
from bayesvm.models.predictive import ClassPredictions
from bayesvm.models.validation import (
    check_positive_finite,
    design_and_names,
    encode_labels,
)

__all__ = ["LogisticRegression"]

# Fixed-point iterations of the predictive's xi (eq. 68), from xi^2 = E[(w^T x)^2].
PREDICTIVE_ITERATIONS = 100


@dataclass(frozen=True, eq=False)
class LogisticRegression(ClassPredictions, FeatureModel):
    """Logistic regression with a shared or ARD shrinkage hyperprior, or a fixed prior.

    Posterior variables: ``w`` (dim ``feature``) and, with the hyperprior, ``alpha`` (scalar, or
    per feature with ARD). Fitted by VB with the Jaakkola-Jordan bound and by NUTS on the exact
    likelihood, both from the blocks of :meth:`build_blocks`.
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
        X, names = design_and_names(X, feature_names)
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
            feature_names=names,
            ard=bool(ard),
            a0=float(a0),
            b0=float(b0),
            hyperprior=bool(hyperprior),
        )

    def build_blocks(self) -> list:
        """With the hyperprior: ``w`` (:class:`~bayesvm.blocks.GaussianCoefficients` over
        ``X``), ``alpha ~ Gam(a0, b0)`` shared or per weight (ARD) and the batch
        Jaakkola-Jordan ``xi``, in the order of ``vb_logit_fit.m`` (``q(w)``, ``q(alpha)``,
        ``xi``); VB starts ``E(alpha)`` at its prior mean (the paper's start) and at 1 and keeps
        the larger bound (from the first, weakly informative data can end in a local maximum
        with every weight shrunk to zero). Without it: ``q(w)`` and ``xi`` updated
        sequentially under ``N(0, D^-1 I)`` (:class:`~bayesvm.blocks.SequentialJaakkolaJordan`).
        """
        D = self.n_features
        design = DenseDesign(self.X)
        if not self.hyperprior:
            prior_precision = np.full(D, float(D))  # eq. 81
            return [SequentialJaakkolaJordan(design, self.y, prior_precision, self.feature_names)]
        alpha = self.shrinkage_block("theta", self.a0, self.b0, ("an", "bn", "E_a"))
        likelihood = JaakkolaJordan(self.y, self.X, prior=alpha.name)
        w = GaussianCoefficients(
            design,
            [Segment("w", "feature", slice(0, D), alpha)],
            likelihood=likelihood.name,
            coefficient_names=self.feature_names,
        )
        return [w, alpha, likelihood]

    # -- predictions ------------------------------------------------------------------------
    def predict_proba(self, fit, X_new, max_draws: int = 1000) -> np.ndarray:
        """``P(y | x, D)``, shape ``(n, 2)`` ordered as ``classes``.

        VB: the variational predictive of section 3.3 (eq. 65-68), the bound parameter ``xi``
        of every point optimised at once. With ``m = x^T w_N``, ``s = x^T V_N x`` and
        ``k = 1 + 2 lambda(xi) s`` (Sherman-Morrison on eq. 66): ``xi^2 = s / k + ((m + s/2) /
        k)^2`` and ``ln P(y = 1) = -ln(k)/2 + (m + s/4 - 2 lambda (m + s/2)^2 / k)/2 +
        ln sigma(xi) - xi/2 + lambda xi^2``. Other methods: ``sigma(w^T x)`` averaged over up
        to ``max_draws`` posterior draws.
        """
        X_new = self.design_for(X_new)
        if not fit.is_variational:
            f = self.predictor(X_new, fit.coefficient_draws(max_draws))
            # Each class on its own, so that a probability near 0 is not lost to 1 - p.
            return np.column_stack([expit(-f).mean(axis=0), expit(f).mean(axis=0)])
        q = fit.idata["variational"]
        m = X_new @ q["w_mean"].to_numpy()
        s = np.sum((X_new @ q["V"].to_numpy()) * X_new, axis=1)
        xi = np.sqrt(s + m**2)
        for _ in range(PREDICTIVE_ITERATIONS):
            k = 1.0 + 2.0 * jaakkola_lambda(xi) * s
            xi = np.sqrt(s / k + ((m + s / 2.0) / k) ** 2)
        lam = jaakkola_lambda(xi)
        k = 1.0 + 2.0 * lam * s
        log_p = (
            -0.5 * np.log(k)
            + 0.5 * (m + s / 4.0 - 2.0 * lam * (m + s / 2.0) ** 2 / k)
            + log_expit(xi)
            - xi / 2.0
            + lam * xi**2
        )
        p_plus = np.exp(log_p)
        return np.column_stack([1.0 - p_plus, p_plus])

    def training_log_probability(self, fit, labels) -> np.ndarray:
        """``log sigma(labels_i x_i^T w)`` at each training row for each posterior draw of
        ``w`` (VB: the draws from ``q``; its :meth:`predict_proba` is the bound's closed form
        instead).
        """
        return log_sigmoid(labels * self.predictor(self.X, fit.coefficient_draws()))

    def predict(self, fit, X_new) -> np.ndarray:
        """The more probable class under :meth:`predict_proba`."""
        positive = self.predict_proba(fit, X_new)[:, 1] > 0.5
        return np.where(positive, self.classes[1], self.classes[0])
