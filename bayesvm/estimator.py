"""scikit-learn estimators on top of :func:`bayesvm.fit`: :class:`BayesianSVC`, over every
classifier of the library, with one-versus-rest for more than two classes, and
:class:`BayesianRegressor`, over the regression models.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from bayesvm.catalogue import METHODS, model_kind
from bayesvm.catalogue import MODELS as CATALOGUE_MODELS
from bayesvm.exceptions import warn_user
from bayesvm.models import LinearRegression, LinearSVM, MixedSVM, SpikeSlabSVM
from bayesvm.registry import fit as fit_model

__all__ = ["BayesianSVC", "BayesianRegressor", "MODELS"]

# Probabilities are ``1 - p`` and ``p`` in float64, so a class probability below machine epsilon
# is round-off: flooring it there caps the log-odds at about +-36 instead of infinity.
PROBABILITY_FLOOR = np.finfo(np.float64).eps


#: ``model=`` values of :class:`BayesianSVC`: the classifiers of the catalogue.
MODELS = {name: kind for name, kind in CATALOGUE_MODELS.items() if kind.classifier}
#: Parameters of :class:`BayesianSVC` that only ``model="linear"`` takes, with their defaults.
LINEAR_ONLY = {"prior": "ridge", "alpha": None, "nu": None, "feature_scale": "none"}


def _spike_slab_options(model: str, options: dict) -> dict:
    """``model_options`` with ``slab``, spike-and-slab's former option, read as ``prior``
    (with a ``FutureWarning``), and a warning where neither is given: the default prior is
    now the one every front door builds.
    """
    if model != "spike_slab" or "prior" in options:
        return options
    if "slab" not in options:
        warn_user(
            "BayesianSVC(model='spike_slab') now builds Luts-Ormerod's Laplace-zero prior, as "
            "from_formula and the command line do (before 0.3.0, the Gaussian slab): give "
            "model_options={'prior': 'laplace_zero'} or {'prior': 'gaussian_slab'}",
            FutureWarning,
        )
        return options
    options = dict(options)
    slab = options.pop("slab")
    prior = {"gaussian": "gaussian_slab", "laplace_zero": "laplace_zero"}.get(slab, slab)
    warn_user(
        f"model_options={{'slab': {slab!r}}} is now {{'prior': {prior!r}}}; 'slab' goes in 0.4.0",
        FutureWarning,
    )
    return {**options, "prior": prior}


def _seed(random_state):
    """``random_state`` as a seed for :func:`bayesvm.fit` (an int or a Generator)."""
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    if isinstance(random_state, numbers.Integral | np.random.Generator):
        return random_state
    raise ValueError(
        f"random_state must be None, an int, a numpy Generator or RandomState; got {random_state!r}"
    )


def _refuse_fit_params(estimator, fit_params: dict) -> None:
    """Raise ``TypeError`` naming the ``fit_params`` given to ``estimator.fit``, none of which
    it takes. The models weigh every row alike (the papers' likelihoods have no weights), so
    ``sample_weight`` gets the way out: repeat a row to give it an integer weight.
    """
    if not fit_params:
        return
    name = type(estimator).__name__
    if "sample_weight" in fit_params:
        raise TypeError(
            f"{name}.fit takes no sample_weight: bayesvm's models weigh every row alike (the "
            "papers' likelihoods have no weights); to give rows integer weights, repeat them "
            "(np.repeat(X, weights, axis=0) and the same for y)"
        )
    raise TypeError(
        f"{name}.fit takes no {', '.join(sorted(fit_params))}: it takes X, y"
        + (" and groups" if isinstance(estimator, BayesianSVC) else "")
        + f"; model and method options go to {name}(model_options=..., fit_options=...)"
    )


def _fit_options(estimator) -> dict:
    """Options of :func:`bayesvm.fit` that the estimator's ``method`` takes, then its
    ``fit_options``.
    """
    options = {"seed": _seed(estimator.random_state), "threads": estimator.n_jobs}
    kind = METHODS[estimator.method].kind if estimator.method in METHODS else None
    if kind == "mcmc":
        options.update(
            draws=estimator.draws, tune=estimator.tune, chains=estimator.chains, progressbar=False
        )
    elif kind == "variational":
        options.update(draws=estimator.draws)
    extra = {} if estimator.fit_options is None else estimator.fit_options
    if not isinstance(extra, dict):
        raise ValueError(f"fit_options must be a dict or None; got {extra!r}")
    return {**options, **extra}


class BayesianSVC(ClassifierMixin, BaseEstimator):
    """Bayesian support vector classifier over any classifier of the library, fitted by VB,
    Gibbs, reversible jump, EM/ECME or NUTS.

    ``model`` chooses the model, each built from ``X``, ``y`` and ``model_options`` (keyword
    arguments of its constructor):

    * ``"linear"``: :class:`~bayesvm.models.LinearSVM`, Polson-Scott's (2011) linear SVM
      (ridge or lasso penalty, fixed through ``alpha`` or ``nu`` or learned when both are None);
    * ``"penalized"``: :meth:`~bayesvm.models.MixedSVM.penalized`, Luts-Ormerod's (2014)
      section 3.1, the penalty ``sigma2_u`` inferred;
    * ``"random_intercept"``: :meth:`~bayesvm.models.MixedSVM.random_intercept`, a random
      intercept per group; the groups go to :meth:`fit` (``groups=``; without them every row
      is in one group) and to the prediction methods (a group not seen in training, or
      ``groups=None`` after a fit with groups, is predicted at the population level);
    * ``"spike_slab"``: :meth:`~bayesvm.models.SpikeSlabSVM.from_arrays` (Luts-Ormerod's
      Laplace-zero prior; ``model_options={"prior": "gaussian_slab"}`` for Polson-Scott's
      Gaussian slab); ``inclusion_probabilities_``;
    * ``"missing"``: :class:`~bayesvm.models.MissingDataSVM`, NaN cells imputed (Luts-Ormerod
      section 3.3): the only model that accepts NaN in ``X``;
    * ``"kernel"``: :class:`~bayesvm.models.KernelGKM`, Zhang et al.'s (2010) kernel model
      (probit, or ``model_options={"likelihood": "hinge"}``; ``method="rj"`` for FBGKM);
    * ``"gp"``: :class:`~bayesvm.models.GPSVM`, Henao et al.'s (2014) GP classifier (full, or
      ``model_options={"inducing": m}`` points);
    * ``"logistic"``: :class:`~bayesvm.models.LogisticRegression`, Drugowitsch's (2019)
      logistic regression.

    These are the classifiers of :data:`bayesvm.catalogue.MODELS`, under the names that
    :func:`bayesvm.from_formula` and ``bayesvm fit --model`` take.

    More than two classes are fitted one versus the rest, as scikit-learn's ``LinearSVC`` does:
    one binary fit per class, that class against all others (``estimators_``), and
    :meth:`predict_proba` normalises each class's probability of being itself over the
    classes, ``p_k / sum_j p_j`` (as scikit-learn's one-versus-rest logistic regression).

    Parameters
    ----------
    model : {"linear", "penalized", "random_intercept", "spike_slab", "missing", "kernel", "gp"}
        Which model to fit.
    method : str
        Fitting method, one of :func:`bayesvm.methods` of the model: "vb", "gibbs", "rj",
        "nuts", "em", "ecme", "svi".
    prior : {"ridge", "lasso"}
        Penalty of ``model="linear"``.
    alpha : float, optional
        Fixed penalty of ``sum(hinge) + alpha * pen(u)`` (``model="linear"``).
    nu : float, optional
        Fixed Polson-Scott scale instead of ``alpha`` (``model="linear"``).
    feature_scale : {"none", "std"}
        Scale each weight's prior by 1 or by the feature's standard deviation
        (``model="linear"``).
    model_options : dict, optional
        Further keyword arguments of the model's constructor (e.g. ``{"lengthscale": 2.0}``
        for ``"kernel"``), refused by it when unknown.
    fit_options : dict, optional
        Further keyword arguments of :func:`bayesvm.fit` for ``method`` (e.g. ``{"starts":
        1}``, VB from the paper's start alone; ``{"thin": 5}`` for a sampler).
    draws : int
        Posterior draws per chain (samplers) or draws from q (VB, SVI).
    chains, tune : int
        Chains and warm-up iterations per chain of the samplers ("gibbs", "rj", "nuts").
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None
        Seed of the fit (draws, or EM/ECME's starting point): same seed, same result.
    n_jobs : int, optional
        BLAS threads of the fit (the ``threads`` of :func:`bayesvm.fit`); None chooses by
        the size of the problem and the usable cores.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted; with two classes ``classes_[1]`` is the class coded +1.
    fit_ : bayesvm.Fit
        The fit returned by :func:`bayesvm.fit` (two classes).
    idata_ : arviz.InferenceData
        Its posterior (two classes).
    estimators_ : list of BayesianSVC
        More than two classes: the binary classifier of each class against the rest, in the
        order of ``classes_``; each has its ``fit_`` and ``idata_``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Linear models: posterior mean of the weights ``u`` (q's mean for VB, the mode for
        EM/ECME); one row per class beyond two classes.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Linear models: posterior mean of the intercept ``beta``.
    inclusion_probabilities_ : ndarray of shape (n_features,) or (n_classes, n_features)
        ``"spike_slab"``: posterior probability that each feature is in the model.
    n_features_in_ : int
        Number of features seen by :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features,)
        Only when ``X`` had string column names; they label the posterior in ``idata_``.
    n_iter_ : int or ndarray of shape (n_classes,)
        Iterations of the fit (per chain for the samplers); one per class beyond two.
    converged_ : bool
        Whether every fit passed its checks (VB/EM: the objective settled; samplers: R-hat,
        effective sample size and divergences); when not, :meth:`fit` issues a
        :class:`bayesvm.ConvergenceWarning` (a scikit-learn ``ConvergenceWarning``) that
        says why.

    Notes
    -----
    The three prediction methods agree by construction. :meth:`predict_proba` is the posterior
    predictive probability, averaged over posterior draws (:meth:`bayesvm.Fit.predict_proba`):
    the normalised pseudo-likelihood for the hinge models, the probit for the kernel and GP
    models. :meth:`decision_function` is its log-odds and :meth:`predict` the more probable
    class. On points close to the boundary this can differ from the SVM papers' rule, the sign
    of the posterior mean of ``f``, which ``fit_.predict`` gives (the two coincide for EM/ECME's
    point estimate).
    """

    def __init__(
        self,
        model="linear",
        method="vb",
        prior="ridge",
        alpha=None,
        nu=None,
        feature_scale="none",
        model_options=None,
        fit_options=None,
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
        self.model_options = model_options
        self.fit_options = fit_options
        self.draws = draws
        self.chains = chains
        self.tune = tune
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        """NaN in ``X`` for the missing-data model only."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.model == "missing"
        return tags

    def fit(self, X, y, groups=None, **fit_params):
        """Fit the model to ``X`` and labels ``y`` (one binary fit per class beyond two).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN where a value is missing (``model="missing"`` only).
        y : array-like of shape (n_samples,)
            At least two classes of any label type.
        groups : array-like of shape (n_samples,), optional
            ``model="random_intercept"``: each row's group (default: one group).
        **fit_params
            None is taken: ``sample_weight`` and any other is refused with a ``TypeError``
            that says why (:func:`_refuse_fit_params`).

        Returns
        -------
        self : BayesianSVC
        """
        _refuse_fit_params(self, fit_params)
        kind, implied = model_kind(self.model, "BayesianSVC")
        if not kind.classifier:
            raise ValueError(f"model={self.model!r} is a regression: use BayesianRegressor")
        X, y = validate_data(
            self,
            X,
            y,
            dtype=np.float64,
            ensure_min_samples=2,
            ensure_all_finite="allow-nan" if self.model == "missing" else True,
        )
        check_classification_targets(y)
        training_groups = self._training_groups(groups, X.shape[0])
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs 2 classes in y; got 1 class: {self.classes_[0]!r}"
            )
        if self.classes_.size > 2:  # each class's fit checks the groups as given
            return self._fit_one_versus_rest(X, y, groups)
        model = self._build_model(kind, X, y, training_groups, implied)
        self.fit_ = fit_model(model, method=self.method, **_fit_options(self))
        self.idata_ = self.fit_.idata
        self.n_iter_ = self.fit_.n_iter
        self.converged_ = self.fit_.converged
        model = self.fit_.model
        if isinstance(model, LinearSVM | MixedSVM) and self.model != "random_intercept":
            beta_mean, u_mean = self.fit_.coefficient_means()
            self.coef_ = u_mean[None, :]
            self.intercept_ = beta_mean
        if isinstance(model, SpikeSlabSVM):
            self.inclusion_probabilities_ = np.asarray(self.fit_.inclusion_probabilities())
        return self

    def _fit_one_versus_rest(self, X, y, groups):
        """One binary classifier per class, that class (coded +1) against the others, each
        seeded on a stream of its own.
        """
        seeds = np.random.SeedSequence(self._seed_entropy()).spawn(self.classes_.size)
        if hasattr(self, "feature_names_in_"):  # so that they label each class's posterior
            import pandas as pd  # imported here: pandas costs 0.1 s at startup

            X = pd.DataFrame(X, columns=self.feature_names_in_)
        self.estimators_ = []
        for label, seed in zip(self.classes_, seeds, strict=True):
            binary = clone(self).set_params(random_state=int(seed.generate_state(1)[0]))
            self.estimators_.append(binary.fit(X, y == label, groups=groups))
        self.n_iter_ = np.array([estimator.n_iter_ for estimator in self.estimators_])
        self.converged_ = all(estimator.converged_ for estimator in self.estimators_)
        for name in ("coef_", "intercept_", "inclusion_probabilities_"):
            if hasattr(self.estimators_[0], name):
                setattr(self, name, np.vstack([getattr(e, name) for e in self.estimators_]))
        if hasattr(self, "intercept_"):
            self.intercept_ = self.intercept_.ravel()
        return self

    def predict_proba(self, X, groups=None):
        """Posterior predictive class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        groups : array-like of shape (n_samples,), optional
            ``model="random_intercept"``: each row's group.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1 (beyond two classes, each
            class's one-versus-rest probability normalised over the classes).
        """
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            own = np.column_stack(
                [e.predict_proba(X, groups=groups)[:, 1] for e in self.estimators_]
            )
            return own / own.sum(axis=1, keepdims=True)
        X = validate_data(
            self,
            X,
            dtype=np.float64,
            reset=False,
            ensure_all_finite="allow-nan" if self.model == "missing" else True,
        )
        return self.fit_.predict_proba(X, **self._prediction_groups(groups, X.shape[0]))

    def decision_function(self, X, groups=None):
        """Log-odds of ``classes_[1]`` under :meth:`predict_proba`; positive means ``classes_[1]``.
        Beyond two classes, each class's log-odds against the rest (its one-versus-rest
        classifier's), one column per class.

        The log-odds are capped at about +-36, where a float64 probability is 1 to round-off.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        groups : array-like of shape (n_samples,), optional
            ``model="random_intercept"``: each row's group.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            return np.column_stack(
                [e.decision_function(X, groups=groups) for e in self.estimators_]
            )
        proba = np.maximum(self.predict_proba(X, groups=groups), PROBABILITY_FLOOR)
        return np.log(proba[:, 1]) - np.log(proba[:, 0])

    def predict(self, X, groups=None):
        """The most probable class under :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        groups : array-like of shape (n_samples,), optional
            ``model="random_intercept"``: each row's group.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        scores = self.decision_function(X, groups=groups)
        if scores.ndim == 2:
            return self.classes_[scores.argmax(axis=1)]
        return self.classes_[(scores > 0).astype(int)]

    def _takes_groups(self, groups) -> bool:
        """Whether the model has groups (a random intercept); ``groups`` refused otherwise."""
        if self.model == "random_intercept":
            return True
        if groups is not None:
            raise ValueError(
                f"groups apply to model='random_intercept' only; got model={self.model!r}"
            )
        return False

    def _training_groups(self, groups, n_samples: int):
        """The groups of a random intercept (one group when not given); refused for the
        other models.
        """
        if not self._takes_groups(groups):
            return None
        self.grouped_ = groups is not None
        if groups is None:
            return np.zeros(n_samples, dtype=int)
        groups = np.asarray(groups)
        if groups.shape != (n_samples,):
            raise ValueError(
                f"groups must have one label per row ({n_samples}); got shape {groups.shape}"
            )
        return groups

    def _prediction_groups(self, groups, n_samples: int) -> dict:
        """``groups=`` for the fit's prediction methods: after a fit without groups, the one
        group every row was in.
        """
        if not self._takes_groups(groups):
            return {}
        if groups is None and not self.grouped_:
            groups = np.zeros(n_samples, dtype=int)
        return {"groups": groups}

    def _build_model(self, kind, X, y, groups, implied: dict):
        """The model of ``kind`` (what ``model=`` names), from ``X``, ``y`` and its options
        (refused before any work where they do not apply) with those a former name
        ``implied``.
        """
        options = {} if self.model_options is None else self.model_options
        if not isinstance(options, dict):
            raise ValueError(f"model_options must be a dict or None; got {options!r}")
        options = {**options, "feature_names": getattr(self, "feature_names_in_", None)}
        if kind.name == "linear":
            linear = {name: getattr(self, name) for name in LINEAR_ONLY}
            return kind.build(X, y, **linear, **options)
        given = [name for name, default in LINEAR_ONLY.items() if getattr(self, name) != default]
        if given:
            raise ValueError(
                f"{', '.join(given)} apply to model='linear' only; give model={self.model!r} "
                "its options through model_options"
            )
        options = {**implied, **_spike_slab_options(kind.name, options)}
        if kind.grouped:
            options["groups"] = groups
        return kind.build(X, y, **options)

    def _seed_entropy(self) -> int:
        """An integer from ``random_state``, to spawn one seed per class from."""
        seed = _seed(self.random_state)
        if isinstance(seed, np.random.Generator):
            return int(seed.integers(np.iinfo(np.int64).max))
        return int(seed)


class BayesianRegressor(RegressorMixin, BaseEstimator):
    """Bayesian linear regression as a scikit-learn regressor: Drugowitsch's (2019) model,
    ``y ~ N(w^T x, 1/tau)`` with a learned shrinkage of ``w`` (shared, or one per weight with
    ``ard=True``, section 2.4), fitted by VB (closed form), Gibbs (exact blocked) or NUTS.

    Parameters
    ----------
    ard : bool
        One shrinkage per weight (automatic relevance determination) instead of one shared.
    fit_intercept : bool
        Add a column of ones to ``X`` (its weight, ``intercept_``, has the same prior as the
        others, as in the paper, which adds the column by hand).
    method : {"vb", "gibbs", "nuts"}
    model_options : dict, optional
        Further keyword arguments of :meth:`bayesvm.models.LinearRegression.from_arrays`
        (e.g. ``{"alpha": 1.0}``, a fixed prior precision).
    fit_options : dict, optional
        Further keyword arguments of :func:`bayesvm.fit` for ``method``.
    draws, chains, tune, random_state, n_jobs
        As for :class:`BayesianSVC`.

    Attributes
    ----------
    fit_ : bayesvm.Fit
    idata_ : arviz.InferenceData
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the weights (VB: q's).
    intercept_ : float
        Posterior mean of the intercept's weight (0.0 without ``fit_intercept``).
    n_features_in_, feature_names_in_, n_iter_, converged_
        As for :class:`BayesianSVC`.
    """

    def __init__(
        self,
        ard=False,
        fit_intercept=True,
        method="vb",
        model_options=None,
        fit_options=None,
        draws=1000,
        chains=4,
        tune=1000,
        random_state=None,
        n_jobs=None,
    ):
        self.ard = ard
        self.fit_intercept = fit_intercept
        self.method = method
        self.model_options = model_options
        self.fit_options = fit_options
        self.draws = draws
        self.chains = chains
        self.tune = tune
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y, **fit_params):
        """Fit the regression to ``X`` and real ``y``; ``fit_params`` as for
        :meth:`BayesianSVC.fit`: none is taken.

        Returns
        -------
        self : BayesianRegressor
        """
        _refuse_fit_params(self, fit_params)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, y_numeric=True)
        options = {} if self.model_options is None else self.model_options
        if not isinstance(options, dict):
            raise ValueError(f"model_options must be a dict or None; got {options!r}")
        names = getattr(self, "feature_names_in_", None)
        names = None if names is None else list(names)
        if self.fit_intercept:
            X = np.column_stack([np.ones(X.shape[0]), X])
            names = None if names is None else ["intercept", *names]
        model = LinearRegression.from_arrays(X, y, ard=self.ard, feature_names=names, **options)
        self.fit_ = fit_model(model, method=self.method, **_fit_options(self))
        self.idata_ = self.fit_.idata
        self.n_iter_ = self.fit_.n_iter
        self.converged_ = self.fit_.converged
        (w,) = self.fit_.coefficient_means()
        self.coef_ = w[1:] if self.fit_intercept else w
        self.intercept_ = float(w[0]) if self.fit_intercept else 0.0
        return self

    def predict(self, X, return_std=False):
        """Posterior predictive mean of ``y`` (and sd, with ``return_std``: the spread of
        ``w^T x`` plus the noise ``1/tau``; VB: the Student-t of Drugowitsch eq. 23).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,), with ``return_std``
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.fit_intercept:
            X = np.column_stack([np.ones(X.shape[0]), X])
        mean = self.fit_.predict(X)
        if not return_std:
            return mean
        if self.fit_.is_variational:
            _, precision, dof = self.fit_.predictive(X)
            return mean, np.sqrt(dof / (dof - 2.0) / precision)
        w, tau = self.fit_.draws(["w", "tau"])
        return mean, np.sqrt((w @ X.T).var(axis=0) + np.mean(1.0 / tau))
