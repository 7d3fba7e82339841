import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesvm
from bayesvm import BayesianRegressor, BayesianSVC
from bayesvm.estimator import MODELS
from bayesvm.models import FixedGaussian, LaplaceSlab, LinearRegression, LinearSVM

from conftest import assert_ascent_converged


def simulate(n_samples=80, n_features=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    y = np.where(X[:, 0] - X[:, 1] + 0.3 + rng.standard_normal(n_samples) > 0, 1, -1)
    return X, y


# One estimator per model, by VB (the default suite), and the linear model by Gibbs. The
# missing-data model's VB weighs the optima of its two default starts by importance sampling on
# every fit; the checks' ~100 fits take the paper's start alone. The random intercept's and the
# missing-data model's fixed effects have a vague N(0, 1e8) prior: on the checks' separable data
# their VB needs thousands of sweeps (3429, 20 s, for the missing-data model on one feature), so
# the checks give them a proper N(0, 100) one. 200 draws from q suffice for the API.
PROPER = {"sigma2_beta": 100.0}
# The models whose API checks need a proper prior on the fixed effects (see above).
PROPER_FOR = {"random_intercept": PROPER, "missing": PROPER}
GAUSSIAN_SLAB, LAPLACE_ZERO = {"prior": "gaussian_slab"}, {"prior": "laplace_zero"}
OPTIONS_FOR = {**PROPER_FOR, "spike_slab": LAPLACE_ZERO}
VB_ESTIMATORS = [
    BayesianSVC(draws=200),
    BayesianSVC(model="penalized", draws=200),
    BayesianSVC(model="random_intercept", model_options=PROPER, draws=200),
    BayesianSVC(model="spike_slab", draws=200, model_options=GAUSSIAN_SLAB),
    BayesianSVC(model="spike_slab", draws=200, model_options=LAPLACE_ZERO),
    BayesianSVC(model="missing", model_options=PROPER, fit_options={"starts": 1}, draws=200),
    BayesianSVC(model="kernel", draws=200),
    BayesianSVC(model="gp", draws=200),
    BayesianSVC(model="logistic", draws=200),
]
SHORT_CHAINS = {"draws": 100, "tune": 100, "chains": 1}
# The kernel model's samplers keep every sweep, and its reversible jump makes the paper's one
# proposal of each kind per sweep (its defaults, 20 and 10 and every 5th sweep kept, took 16 s a
# check).
KERNEL_SWEEPS = {**SHORT_CHAINS, "fit_options": {"thin": 1}}
ONE_MOVE = {"moves": 1, "laplace_moves": 1}
# Every other method of each model (the slow suite; NUTS compiles a PyMC model for each of
# the ~100 fits of an estimator's checks).
OTHER_ESTIMATORS = [
    *(
        BayesianSVC(model=name, method="nuts", model_options=OPTIONS_FOR.get(name), **SHORT_CHAINS)
        for name in MODELS
    ),
    BayesianSVC(method="ecme"),
    BayesianSVC(model="penalized", method="gibbs", **SHORT_CHAINS),
    BayesianSVC(model="penalized", method="ecme"),
    BayesianSVC(model="random_intercept", method="gibbs", model_options=PROPER, **SHORT_CHAINS),
    BayesianSVC(model="random_intercept", method="ecme", model_options=PROPER),
    BayesianSVC(model="spike_slab", method="gibbs", model_options=GAUSSIAN_SLAB, **SHORT_CHAINS),
    BayesianSVC(model="spike_slab", method="rj", model_options=LAPLACE_ZERO, **SHORT_CHAINS),
    BayesianSVC(model="missing", method="gibbs", model_options=PROPER, **SHORT_CHAINS),
    BayesianSVC(model="kernel", method="gibbs", **KERNEL_SWEEPS),
    BayesianSVC(model="kernel", method="rj", model_options=ONE_MOVE, **KERNEL_SWEEPS),
    BayesianSVC(model="gp", method="gibbs", **SHORT_CHAINS),
    BayesianSVC(model="gp", method="em"),
    BayesianSVC(model="gp", method="svi", draws=200),
]


REGRESSORS = [BayesianRegressor(draws=200), BayesianRegressor(ard=True, draws=200)]


# The API checks fit many tiny, often separable data sets with 100 draws: some chains have not
# converged and some designs are not identified, which the fit rightly warns about; both
# warnings are tested in test_trust.py.
@parametrize_with_checks([*VB_ESTIMATORS, BayesianSVC(method="gibbs", **SHORT_CHAINS), *REGRESSORS])
@pytest.mark.filterwarnings("ignore::bayesvm.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::bayesvm.IdentifiabilityWarning")
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(
    [
        *OTHER_ESTIMATORS,
        BayesianRegressor(method="gibbs", **SHORT_CHAINS),
        BayesianRegressor(method="nuts", **SHORT_CHAINS),
    ]
)
@pytest.mark.filterwarnings("ignore::bayesvm.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::bayesvm.IdentifiabilityWarning")
def test_scikit_learn_conventions_of_every_method(estimator, check):
    check(estimator)


@pytest.mark.filterwarnings("ignore::bayesvm.IdentifiabilityWarning")
def test_the_api_checks_cover_every_method_of_every_model():
    """Every (model, method) pair is checked."""
    X, y = simulate(n_samples=30)
    estimators = [*VB_ESTIMATORS, BayesianSVC(method="gibbs"), *OTHER_ESTIMATORS]
    checked = {(estimator.model, estimator.method) for estimator in estimators}
    for name, kind in MODELS.items():
        options = {"groups": np.zeros(30, dtype=int)} if name == "random_intercept" else {}
        supported = {(name, method) for method in bayesvm.methods(kind.build(X, y, **options))}
        assert supported <= checked, name


def test_predict_proba_rows_are_probabilities_consistent_with_predict():
    X, y = simulate()
    classifier = BayesianSVC(random_state=0).fit(X, y)
    proba = classifier.predict_proba(X)
    assert proba.shape == (X.shape[0], 2)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(classifier.predict(X), classifier.classes_[proba.argmax(axis=1)])
    assert classifier.score(X, y) > 0.7


def test_string_labels_round_trip():
    X, y = simulate()
    labels = np.where(y > 0, "spam", "ham")
    classifier = BayesianSVC(method="gibbs", draws=2000, tune=500, chains=1, random_state=0)
    predicted = classifier.fit(X, labels).predict(X)
    assert list(classifier.classes_) == ["ham", "spam"]
    assert set(predicted) <= {"ham", "spam"}
    np.testing.assert_array_equal(predicted == "spam", classifier.decision_function(X) > 0)


def test_coefficients_are_the_vb_posterior_means():
    X, y = simulate()
    classifier = BayesianSVC(alpha=0.5, random_state=0).fit(X, y)
    fit = bayesvm.fit(LinearSVM.from_arrays(X, y, alpha=0.5), method="vb")
    variational = fit.idata["variational"]
    assert classifier.coef_.shape == (1, 3) and classifier.intercept_.shape == (1,)
    np.testing.assert_allclose(classifier.coef_[0], variational["u_mean"])
    np.testing.assert_allclose(classifier.intercept_, variational["beta_mean"])
    assert classifier.converged_ == fit.converged and classifier.n_iter_ == fit.n_iter
    assert_ascent_converged(classifier.fit_)


def test_penalized_model_labels_the_posterior_by_column_names():
    X, y = simulate()
    frame = pd.DataFrame(X, columns=["age", "dose", "weight"])
    classifier = BayesianSVC(model="penalized", random_state=0).fit(frame, y)
    assert list(classifier.idata_.posterior["u"].coords["effect"]) == ["age", "dose", "weight"]
    assert "sigma2_u" in classifier.idata_.posterior
    with pytest.raises(ValueError, match="model='linear' only"):
        BayesianSVC(model="penalized", alpha=1.0).fit(X, y)


def test_three_classes_one_versus_rest_on_iris():
    """Iris (3 classes): one binary fit per class, probabilities normalised over the classes,
    5-fold accuracy at least 0.9.
    """
    X, y = load_iris(return_X_y=True)
    classifier = BayesianSVC(random_state=0).fit(X, y)
    assert [list(e.classes_) for e in classifier.estimators_] == [[False, True]] * 3
    proba = classifier.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    own = np.column_stack([e.predict_proba(X)[:, 1] for e in classifier.estimators_])
    np.testing.assert_allclose(proba, own / own.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(classifier.predict(X), classifier.classes_[proba.argmax(axis=1)])
    assert classifier.coef_.shape == (3, 4) and classifier.intercept_.shape == (3,)
    frame = pd.DataFrame(X, columns=["sepal_l", "sepal_w", "petal_l", "petal_w"])
    named = BayesianSVC(random_state=0).fit(frame, y)
    for estimator in named.estimators_:
        assert list(estimator.idata_.posterior["u"].coords["effect"]) == list(frame.columns)
    np.testing.assert_allclose(named.predict_proba(frame), proba)
    assert cross_val_score(BayesianSVC(random_state=0), X, y, cv=5).mean() >= 0.9


def test_random_intercept_takes_groups_in_fit_and_predict():
    X, y = simulate(n_samples=120)
    groups = np.arange(120) % 6
    classifier = BayesianSVC(model="random_intercept", random_state=0)
    classifier.fit(X, y, groups=groups)
    assert classifier.idata_.posterior["u"].sizes["group"] == 6
    direct = classifier.fit_.predict_proba(X, groups=groups)
    np.testing.assert_allclose(classifier.predict_proba(X, groups=groups), direct)
    with pytest.warns(bayesvm.UnseenGroupWarning):
        classifier.predict(X)  # fitted with groups: rows without one get the population level
    with pytest.raises(ValueError, match="groups apply to model='random_intercept' only"):
        BayesianSVC().fit(X, y, groups=groups)


@pytest.mark.filterwarnings("error::bayesvm.UnseenGroupWarning")
def test_random_intercept_without_groups_predicts_every_class_in_the_one_group():
    X, _ = simulate(n_samples=90)
    labels = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    classifier = BayesianSVC(model="random_intercept", method="ecme", model_options=PROPER)
    classifier.fit(X, labels)
    assert not any(estimator.grouped_ for estimator in classifier.estimators_)
    np.testing.assert_array_equal(
        classifier.predict(X), classifier.predict(X, groups=np.zeros(90, dtype=int))
    )


def test_missing_data_model_takes_nan_and_the_others_refuse_it():
    X, y = simulate()
    X[::7, 1] = np.nan
    classifier = BayesianSVC(model="missing", random_state=0).fit(X, y)
    assert np.isfinite(classifier.predict_proba(X)).all()
    with pytest.raises(ValueError, match="NaN"):
        BayesianSVC().fit(X, y)


def test_spike_slab_reports_inclusion_probabilities():
    X, y = simulate()
    options = {"model": "spike_slab", "model_options": LAPLACE_ZERO, "random_state": 0}
    classifier = BayesianSVC(**options).fit(X, y)
    np.testing.assert_allclose(
        classifier.inclusion_probabilities_, classifier.fit_.inclusion_probabilities()
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "svn"}, "BayesianSVC: unknown model 'svn'; the models are 'linear'"),
        ({"model": "regression"}, "is a regression: use BayesianRegressor"),
        ({"model": "kernel", "alpha": 1.0}, "alpha apply to model='linear' only"),
        ({"model": "kernel", "model_options": [1]}, "model_options must be a dict"),
        ({"fit_options": "fast"}, "fit_options must be a dict"),
        ({"model": "gp", "model_options": {"lengthscale": -1.0}}, "lengthscale"),
    ],
)
def test_bad_options_are_refused_before_fitting(options, message):
    X, y = simulate()
    with pytest.raises(ValueError, match=message):
        BayesianSVC(**options).fit(X, y)


def test_unconverged_chains_warn():
    X, y = simulate()
    # Ten draws of two chains from dispersed starts, no warm-up: R-hat is far above 1.01.
    classifier = BayesianSVC(method="gibbs", draws=10, tune=0, chains=2, random_state=0)
    with pytest.warns(ConvergenceWarning, match="R-hat"):
        classifier.fit(X, y)
    assert not classifier.converged_


def test_zero_draws_are_refused_before_fitting():
    X, y = simulate()
    for model, method in [("linear", "vb"), ("linear", "gibbs"), ("gp", "svi")]:
        with pytest.raises(ValueError, match="draws must be >= 1"):
            BayesianSVC(model=model, method=method, draws=0).fit(X, y)


def test_regressor_is_drugowitschs_regression_with_an_intercept_column():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 2))
    y = 1.5 + X @ [2.0, -1.0] + 0.5 * rng.standard_normal(60)
    regressor = BayesianRegressor(random_state=0).fit(X, y)
    fit = bayesvm.fit(LinearRegression.from_arrays(np.column_stack([np.ones(60), X]), y))
    (w,) = fit.coefficient_means()
    np.testing.assert_allclose(regressor.intercept_, w[0])
    np.testing.assert_allclose(regressor.coef_, w[1:])
    mean, sd = regressor.predict(X[:5], return_std=True)
    np.testing.assert_allclose(mean, w[0] + X[:5] @ w[1:])
    _, precision, dof = fit.predictive(np.column_stack([np.ones(5), X[:5]]))
    np.testing.assert_allclose(sd, np.sqrt(dof / (dof - 2.0) / precision))
    assert regressor.score(X, y) > 0.9


def test_spike_slab_builds_the_prior_every_front_door_builds_and_says_so():
    X, y = simulate(n_samples=30)
    with pytest.warns(FutureWarning, match="now builds Luts-Ormerod's Laplace-zero prior"):
        default = BayesianSVC(model="spike_slab", draws=50).fit(X, y)
    assert isinstance(default.fit_.model.penalty, LaplaceSlab)
    with pytest.warns(FutureWarning, match=r"\{'slab': 'gaussian'\} is now \{'prior': 'gaussian_"):
        former = BayesianSVC(model="spike_slab", model_options={"slab": "gaussian"}, draws=50)
        former.fit(X, y)
    assert isinstance(former.fit_.model.penalty, FixedGaussian)
