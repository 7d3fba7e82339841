"""What a fit predicts: new inputs' scores, labels or responses, the training data replicated
and the pointwise log likelihood, each a method of ``(model, fit)`` (:class:`~bayesvm.Fit`
delegates here).

A model composes its blocks (:class:`~bayesvm.models.block_model.BlockModel`) with one of two
kinds of prediction, each stating what the model must give:

* :class:`ClassPredictions` (every SVM, the GP and the logistic regression): the model's
  ``predictor(X_new, theta)`` (the linear predictor at coefficients ``theta``), ``predict``
  and ``predict_proba``, and ``training_log_probability(fit, labels)``, ``log p(y_i =
  labels_i)`` per posterior draw; labels are replicated from those probabilities;
* :class:`ResponsePredictions` (the linear regression; the kernel model with a Gaussian
  likelihood answers the same questions itself): the model's ``predict``, ``predictive``,
  ``predictive_interval``, ``replicate`` and ``training_log_likelihood``.
"""

from __future__ import annotations

import numpy as np

from bayesvm.models.links import draw_labels

__all__ = [
    "ClassPredictions",
    "ResponsePredictions",
    "no_class_probabilities",
    "no_predictive_density",
]


def no_class_probabilities(model):
    """The error of asking a regression for class probabilities."""
    raise ValueError(
        f"{type(model).__name__} is a regression: it has no class probabilities; "
        "use predictive_interval"
    )


def no_predictive_density(model):
    """The error of asking a classifier for a predictive density of ``y``."""
    raise ValueError(
        f"{type(model).__name__} is a classifier: it has no predictive density of y; "
        "use predict_proba"
    )


class _LinearScores:
    def decision_function(self, fit, X_new, **kwargs):
        """Posterior mean of the linear predictor at new inputs: the model's ``predictor`` at
        the coefficients' posterior means (``f`` is linear in them).
        """
        return self.predictor(X_new, np.concatenate(fit.coefficient_means()), **kwargs)


class ClassPredictions(_LinearScores):
    """Predictions of a classifier (module docstring)."""

    def predictive(self, fit, X_new):
        """A classifier has no predictive density of ``y`` (``ValueError``)."""
        no_predictive_density(self)

    def predictive_interval(self, fit, X_new, prob: float = 0.95, seed=0):
        """A classifier has no predictive interval of ``y`` (``ValueError``)."""
        no_predictive_density(self)

    def training_probabilities(self, fit) -> np.ndarray:
        """``p(y_i = +1)`` at each training row given each posterior draw of ``fit`` (chains
        pooled): shape ``(draws, n_samples)``.
        """
        return np.exp(self.training_log_probability(fit, 1))

    def training_log_likelihood(self, fit) -> np.ndarray:
        """``log p(y_i | theta)`` of each training label given each posterior draw ``theta``
        of ``fit`` (chains pooled): shape ``(draws, n_samples)``, the pointwise log likelihood
        ArviZ's ``loo``, ``waic`` and ``compare`` read (:func:`bayesvm.results.
        add_log_likelihood`). It is the likelihood the predictions use: for the hinge models
        the pseudo-likelihood normalised over the two labels, a predictive score rather than
        the pseudo-likelihood the posterior conditions on.
        """
        return self.training_log_probability(fit, self.y)

    def replicate(self, fit, rng: np.random.Generator) -> np.ndarray:
        """Labels -1/+1 replicated at the training rows, one row per posterior draw of ``fit``
        (chains pooled), drawn with :meth:`training_probabilities`: shape ``(draws,
        n_samples)`` (:func:`bayesvm.results.add_posterior_predictive`).
        """
        return draw_labels(self.training_probabilities(fit), rng)


class ResponsePredictions(_LinearScores):
    """Predictions of a regression (module docstring)."""

    def predict_proba(self, fit, X_new, max_draws: int = 1000, **kwargs):
        """A regression has no class probabilities (``ValueError``)."""
        no_class_probabilities(self)
