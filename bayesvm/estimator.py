"""A scikit-learn classifier on top of :func:`bayesvm.fit`: :class:`BayesianSVC`."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from bayesvm.models import LinearSVM, MixedSVM
from bayesvm.registry import fit as fit_model

__all__ = ["BayesianSVC"]

# Methods that draw a Markov chain and take ``draws``, ``tune``, ``chains`` and ``progressbar``.
SAMPLING_METHODS = ("gibbs", "rj", "nuts")

# Probabilities are ``1 - p`` and ``p`` in float64, so a class probability below machine epsilon
# is round-off: flooring it there caps the log-odds at about +-36 instead of infinity.
PROBABILITY_FLOOR = np.finfo(np.float64).eps


class BayesianSVC(ClassifierMixin, BaseEstimator):
    """Bayesian linear support vector classifier (binary), fitted by VB, Gibbs, EM/ECME or NUTS.

    The model is Luts-Ormerod's (2014) linear Bayesian SVM with the hinge pseudo-likelihood:
    ``model="linear"`` is :class:`~bayesvm.models.LinearSVM` (ridge or lasso penalty, fixed
    through ``alpha`` or ``nu`` or learned when both are None; Polson-Scott 2011) and
    ``model="penalized"`` is :meth:`~bayesvm.models.MixedSVM.penalized` (section 3.1, the
    penalty ``sigma2_u`` inferred).

    Parameters
    ----------
    model : {"linear", "penalized"}
        Which model to fit.
    method : str
        Fitting method, one of :func:`bayesvm.methods` of the model: "vb", "gibbs", "nuts",
        "em", "ecme".
    prior : {"ridge", "lasso"}
        Penalty of ``model="linear"``.
    alpha : float, optional
        Fixed penalty of ``sum(hinge) + alpha * pen(u)`` (``model="linear"``).
    nu : float, optional
        Fixed Polson-Scott scale instead of ``alpha`` (``model="linear"``).
    feature_scale : {"none", "std"}
        Scale each weight's prior by 1 or by the feature's standard deviation
        (``model="linear"``).
    draws : int
        Posterior draws per chain (samplers) or draws from q (VB).
    chains, tune : int
        Chains and warm-up iterations per chain of the samplers ("gibbs", "nuts").
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None
        Seed of the fit (draws, or EM/ECME's starting point): same seed, same result.
    n_jobs : int, optional
        BLAS threads of the fit (the ``threads`` of :func:`bayesvm.fit`); None chooses by
        the size of the problem and the idle cores.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the class coded +1.
    fit_ : bayesvm.Fit
        The fit returned by :func:`bayesvm.fit`.
    idata_ : arviz.InferenceData
        Its posterior (``beta``, ``u`` and the learned penalty, if any).
    coef_ : ndarray of shape (1, n_features)
        Posterior mean of the weights ``u`` (q's mean for VB, the mode for EM/ECME).
    intercept_ : ndarray of shape (1,)
        Posterior mean of the intercept ``beta``.
    n_features_in_ : int
        Number of features seen by :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features,)
        Only when ``X`` had string column names; they label ``u`` in ``idata_``.
    n_iter_ : int
        Iterations of the fit (per chain for the samplers).
    converged_ : bool
        Whether the fit passed its checks (VB/EM: the objective settled; samplers: R-hat,
        effective sample size and divergences); when not, :meth:`fit` issues a
        :class:`bayesvm.ConvergenceWarning` (a scikit-learn ``ConvergenceWarning``) that
        says why.

    Notes
    -----
    The three prediction methods agree by construction. :meth:`predict_proba` is the posterior
    predictive probability: the normalised pseudo-likelihood averaged over posterior draws
    (:meth:`bayesvm.Fit.predict_proba`). :meth:`decision_function` is its log-odds and
    :meth:`predict` the more probable class. On points close to the boundary this can differ
    from the paper's rule, the sign of the posterior mean of ``f = beta + x^T u``, which
    ``fit_.predict`` gives (the two coincide for EM/ECME's point estimate).
    """

    def __init__(
        self,
        model="linear",
        method="vb",
        prior="ridge",
        alpha=None,
        nu=None,
        feature_scale="none",
        draws=1000,
        chains=4,
        tune=1000,
        random_state=None,
        n_jobs=None,
    ):
        self.model = model
        self.method = method
        self.prior = prior
        self.alpha = alpha
        self.nu = nu
        self.feature_scale = feature_scale
        self.draws = draws
        self.chains = chains
        self.tune = tune
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        """Binary classification only."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit the model to ``X`` and binary labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes of any label type.

        Returns
        -------
        self : BayesianSVC
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        target_type = type_of_target(y, input_name="y")
        if target_type != "binary":
            raise ValueError(
                f"Only binary classification is supported. The type of the target is {target_type}."
            )
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs 2 classes in y; got 1 class: {self.classes_[0]!r}"
            )
        self.fit_ = fit_model(self._build_model(X, y), method=self.method, **self._fit_options())
        self.idata_ = self.fit_.idata
        beta_mean, u_mean = self.fit_.coefficient_means()
        self.coef_ = u_mean[None, :]
        self.intercept_ = beta_mean
        self.n_iter_ = self.fit_.n_iter
        self.converged_ = self.fit_.converged
        return self

    def predict_proba(self, X):
        """Posterior predictive class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.fit_.predict_proba(X)

    def decision_function(self, X):
        """Log-odds of ``classes_[1]`` under :meth:`predict_proba`; positive means ``classes_[1]``.

        The log-odds are capped at about +-36, where a float64 probability is 1 to round-off.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = np.maximum(self.predict_proba(X), PROBABILITY_FLOOR)
        return np.log(proba[:, 1]) - np.log(proba[:, 0])

    def predict(self, X):
        """The more probable class under :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def _build_model(self, X, y):
        feature_names = getattr(self, "feature_names_in_", None)
        if self.model == "linear":
            return LinearSVM.from_arrays(
                X,
                y,
                prior=self.prior,
                alpha=self.alpha,
                nu=self.nu,
                feature_scale=self.feature_scale,
                feature_names=feature_names,
            )
        if self.model == "penalized":
            linear_only = {
                "prior": (self.prior, "ridge"),
                "alpha": (self.alpha, None),
                "nu": (self.nu, None),
                "feature_scale": (self.feature_scale, "none"),
            }
            given = [name for name, (value, default) in linear_only.items() if value != default]
            if given:
                raise ValueError(
                    f"{', '.join(given)} apply to model='linear' only; model='penalized' "
                    "infers its penalty"
                )
            return MixedSVM.penalized(X, y, feature_names=feature_names)
        raise ValueError(f"model must be 'linear' or 'penalized'; got {self.model!r}")

    def _fit_options(self) -> dict:
        """Options of :func:`bayesvm.fit` that ``method`` takes."""
        options = {"seed": self._seed(), "threads": self.n_jobs}
        if self.method in SAMPLING_METHODS:
            options.update(draws=self.draws, tune=self.tune, chains=self.chains, progressbar=False)
        elif self.method == "vb":
            options.update(draws=self.draws)
        return options

    def _seed(self):
        """``random_state`` as a seed for :func:`bayesvm.fit` (an int or a Generator)."""
        if self.random_state is None or isinstance(self.random_state, np.random.RandomState):
            return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        if isinstance(self.random_state, numbers.Integral | np.random.Generator):
            return self.random_state
        raise ValueError(
            f"random_state must be None, an int, a numpy Generator or RandomState; "
            f"got {self.random_state!r}"
        )
