"""Model formulas (bayesvm.formula): the same model, and fit, as the array constructors."""

import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm.case_studies.preprocessing import standardize
from bayesvm.case_studies.toenail import POSITIVE_OUTCOME, fixed_effects, full_data_model
from bayesvm.data import load_toenail
from bayesvm.formula import formula_inputs
from bayesvm.models import (
    GPSVM,
    FixedGaussian,
    KernelGKM,
    LinearRegression,
    LinearSVM,
    LogisticRegression,
    MissingDataSVM,
    MixedSVM,
)

TOENAIL = "outcome ~ time * treatment + (1|patientID)"
TOENAIL_NAMES = ["time", "treatment[terbinafine]", "time:treatment[terbinafine]"]


def patients(n_samples=150, seed=0):
    """Age, sex (F/M), smoker (never/former/current) and a two-class and a real response."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.normal(50.0, 10.0, n_samples),
            "sex": rng.choice(["F", "M"], n_samples),
            "smoker": rng.choice(["current", "former", "never"], n_samples),
            "ward": rng.choice(["A", "B", "C", "D"], n_samples),
        }
    )
    male = (frame["sex"] == "M").to_numpy(float)
    score = 0.05 * (frame["age"] - 50.0) + 0.8 * male - 0.04 * (frame["age"] - 50.0) * male
    noise = rng.standard_normal(n_samples)
    frame["sick"] = np.where(score + noise > 0, "yes", "no")
    frame["blood_pressure"] = 120.0 + 0.5 * frame["age"] + 4.0 * male + noise
    return frame


def hand_built(frame):
    """The columns of ``age * sex + smoker`` under treatment coding, written out."""
    age = frame["age"].to_numpy()
    male = (frame["sex"] == "M").to_numpy(float)
    smoker = frame["smoker"].to_numpy()
    X = np.column_stack([age, male, age * male, smoker == "former", smoker == "never"])
    names = ["age", "sex[M]", "age:sex[M]", "smoker[former]", "smoker[never]"]
    return X.astype(float), names


def assert_same_vb_fit(formula_model, array_model):
    """VB fits of both models have the same coefficient means (to 1e-10)."""
    formula_fit = bayesvm.fit(formula_model, method="vb", seed=3)
    array_fit = bayesvm.fit(array_model, method="vb", seed=3)
    for from_formula, from_arrays in zip(
        formula_fit.coefficient_means(), array_fit.coefficient_means(), strict=True
    ):
        np.testing.assert_allclose(from_formula, from_arrays, rtol=0, atol=1e-10)
    return formula_fit, array_fit


def test_toenail_formula_is_the_random_intercept_model():
    data = load_toenail()
    model = bayesvm.from_formula(
        TOENAIL, data, model="random_intercept", positive_class=POSITIVE_OUTCOME
    )
    reference = MixedSVM.random_intercept(
        fixed_effects(data),
        data["outcome"].to_numpy(),
        groups=data["patientID"].to_numpy(),
        feature_names=TOENAIL_NAMES,
        positive_class=POSITIVE_OUTCOME,
    )
    assert isinstance(model, MixedSVM) and model.structure == "random_intercept"
    np.testing.assert_array_equal(model.X, reference.X)
    np.testing.assert_array_equal(model.group_index, reference.group_index)
    np.testing.assert_array_equal(model.y, reference.y)
    np.testing.assert_array_equal(model.classes, reference.classes)
    assert model.coords == reference.coords
    assert model.coords["fixed"] == ["intercept", *TOENAIL_NAMES]
    formula_fit, array_fit = assert_same_vb_fit(model, reference)

    # New visits: one of a patient seen in training, one of a patient who was not.
    new = data.iloc[[0, 7]].drop(columns="outcome").assign(patientID=[1, 10_000])
    with pytest.warns(bayesvm.UnseenGroupWarning, match="1 of 2 rows"):
        from_frame = formula_fit.decision_function(new)
    with pytest.warns(bayesvm.UnseenGroupWarning, match="1 of 2 rows"):
        from_arrays = array_fit.decision_function(fixed_effects(new), groups=[1, 10_000])
    np.testing.assert_array_equal(from_frame, from_arrays)


def test_standardised_toenail_formula_is_the_case_studys_model():
    # Section 4.3 standardises the three predictors, the interaction column included: scale()
    # is formulae's stateful (x - mean) / sd, the sd with ddof 0 as standardize's.
    data = load_toenail().assign(terbinafine=lambda frame: frame["treatment"] == "terbinafine")
    formula = (
        "outcome ~ scale(time) + scale(terbinafine) + scale(time * terbinafine) + (1|patientID)"
    )
    model = bayesvm.from_formula(formula, data, positive_class=POSITIVE_OUTCOME)
    reference = full_data_model()
    # The same moments summed in another order: equal to rounding.
    np.testing.assert_allclose(model.X, reference.X, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(model.group_index, reference.group_index)
    assert_same_vb_fit(model, reference)

    # New rows are scaled with the training data's moments, as the case study's test parts.
    train, new = data.iloc[:1500], data.iloc[1500:]
    model = bayesvm.from_formula(formula, train, positive_class=POSITIVE_OUTCOME)
    X_new, options = formula_inputs(model, new)
    expected = standardize(fixed_effects(train), fixed_effects(new))[1]
    np.testing.assert_allclose(X_new, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(options["groups"], new["patientID"])


def test_categorical_predictor_and_interaction_equal_the_hand_built_columns():
    frame = patients()
    model = bayesvm.from_formula("sick ~ age * sex + smoker", frame, alpha=0.5)
    X, names = hand_built(frame)
    reference = LinearSVM.from_arrays(X, frame["sick"].to_numpy(), alpha=0.5, feature_names=names)
    assert isinstance(model, LinearSVM)
    assert model.coords == {"fixed": ["intercept"], "effect": names}
    np.testing.assert_array_equal(model.design, reference.design)
    np.testing.assert_array_equal(model.classes, ["no", "yes"])
    formula_fit, array_fit = assert_same_vb_fit(model, reference)
    assert "u[age:sex[M]]" in formula_fit.summary().index

    new = patients(n_samples=20, seed=1).drop(columns=["sick", "blood_pressure"])
    X_new, options = formula_inputs(model, new)
    assert options == {}
    np.testing.assert_array_equal(X_new, hand_built(new)[0])
    np.testing.assert_array_equal(
        formula_fit.decision_function(new), array_fit.decision_function(X_new)
    )
    np.testing.assert_array_equal(formula_fit.predict(new), array_fit.predict(X_new))
    np.testing.assert_array_equal(formula_fit.predict_proba(new), array_fit.predict_proba(X_new))


def test_an_unseen_level_in_new_data_is_refused():
    frame = patients()
    fit = bayesvm.fit(bayesvm.from_formula("sick ~ age + sex", frame, alpha=0.5), method="vb")
    new = frame.iloc[:2].assign(sex=["F", "unknown"])
    with pytest.raises(ValueError, match="unknown"):
        fit.decision_function(new)


def test_new_data_without_a_predictor_column_is_refused_by_name():
    frame = patients()
    fit = bayesvm.fit(bayesvm.from_formula("sick ~ age * sex + smoker", frame, alpha=0.5))
    with pytest.raises(ValueError, match=r"lack the columns \['smoker'\] of 'sick ~ age"):
        fit.predict(frame.drop(columns="smoker"))


def test_regression_formula_keeps_its_intercept_as_a_feature():
    frame = patients()
    model = bayesvm.from_formula("blood_pressure ~ age + sex", frame, model="regression")
    male = (frame["sex"] == "M").to_numpy(float)
    X = np.column_stack([np.ones(len(frame)), frame["age"], male])
    reference = LinearRegression.from_arrays(
        X, frame["blood_pressure"], feature_names=["Intercept", "age", "sex[M]"]
    )
    assert isinstance(model, LinearRegression)
    assert model.coords == reference.coords
    np.testing.assert_array_equal(model.X, reference.X)
    formula_fit, array_fit = assert_same_vb_fit(model, reference)
    new = frame.iloc[:5]
    np.testing.assert_array_equal(formula_fit.predict(new), array_fit.predict(X[:5]))
    np.testing.assert_array_equal(
        formula_fit.predictive_interval(new)[0], array_fit.predictive_interval(X[:5])[0]
    )

    without = bayesvm.from_formula("blood_pressure ~ 0 + age + sex", frame, model="regression")
    assert without.feature_names == ["age", "sex[F]", "sex[M]"]


def test_logistic_formula_with_a_level_against_the_rest():
    frame = patients()
    model = bayesvm.from_formula("smoker[never] ~ age + sex", frame, model="logistic")
    assert isinstance(model, LogisticRegression)
    assert model.feature_names == ["Intercept", "age", "sex[M]"]
    np.testing.assert_array_equal(model.classes, [False, True])
    np.testing.assert_array_equal(model.y, np.where(frame["smoker"] == "never", 1.0, -1.0))


def test_missing_model_keeps_missing_numeric_predictors():
    frame = patients()
    frame.loc[[3, 8], "age"] = np.nan
    model = bayesvm.from_formula("sick ~ age + sex", frame, model="missing")
    assert isinstance(model, MissingDataSVM)
    assert model.n_samples == len(frame)
    np.testing.assert_array_equal(np.flatnonzero(np.isnan(model.Z).any(axis=1)), [3, 8])
    # New rows may be incomplete too: their missing part is integrated out.
    fit = bayesvm.fit(model, method="vb", seed=0)
    new = frame.iloc[:4]
    X_new, _ = formula_inputs(model, new)
    assert np.isnan(X_new[3, 0])
    np.testing.assert_array_equal(fit.decision_function(new), fit.decision_function(X_new))

    frame.loc[5, "sex"] = None
    with pytest.raises(ValueError, match="categorical predictor 'sex' has missing values"):
        bayesvm.from_formula("sick ~ age + sex", frame, model="missing")


def test_other_models_leave_incomplete_rows_out_and_say_so():
    frame = patients()
    frame.loc[[3, 8], "age"] = np.nan
    with pytest.warns(UserWarning, match="2 of 150 rows have a missing value"):
        model = bayesvm.from_formula("sick ~ age + sex", frame, alpha=0.5)
    assert model.n_samples == 148


@pytest.mark.parametrize(
    ("formula", "model", "message"),
    [
        ("sick ~ age + (age|ward)", "linear", r"random slope \(age\|ward\)"),
        ("sick ~ age + (1|ward) + (1|sex)", "linear", r"2 groupings, \(1\|ward\), \(1\|sex\)"),
        ("sick ~ age + (1|ward/sex)", "linear", "2 groupings"),
        ("sick ~ age + (1|ward:sex)", "linear", r"\(1\|ward:sex\) groups by an expression"),
        ("sick ~ age + (1|ward)", "penalized", r"\(1\|ward\) with model='penalized'"),
        ("sick ~ age", "forest", "unknown model 'forest'"),
        ("sick ~ age", "random_intercept", r"needs a random intercept \(1\|g\) term"),
        ("smoker ~ age", "linear", r"'smoker' has 3 levels .* write smoker\[level\]"),
        ("sick ~ 0 + age", "linear", "always has an unpenalised intercept"),
        ("sick ~ 1", "linear", "no predictors besides the intercept"),
        ("sick ~ age + offset(age)", "linear", r"offset terms \(offset\(age\)\)"),
        ("sick ~ age", "regression", "needs a numeric response; 'sick' is categorical"),
    ],
)
def test_unsupported_formulas_are_refused_by_name(formula, model, message):
    with pytest.raises(ValueError, match=message):
        bayesvm.from_formula(formula, patients(), model=model)


def test_options_the_constructor_does_not_take_are_refused():
    with pytest.raises(ValueError, match=r"MixedSVM.random_intercept, which takes no alpha"):
        bayesvm.from_formula("sick ~ age + (1|ward)", patients(), alpha=0.5)
    with pytest.raises(ValueError, match="which takes no feature_names"):
        bayesvm.from_formula("sick ~ age", patients(), feature_names=["a"])


def test_formula_names_resolve_in_the_callers_scope():
    frame = patients()
    model = bayesvm.from_formula("sick ~ np.log(age)", frame, alpha=0.5)
    np.testing.assert_allclose(model.Z[:, 0], np.log(frame["age"]))
    assert model.effect_names == ["np.log(age)"]


def test_arrays_still_predict_and_a_model_without_formula_says_so():
    frame = patients()
    model = bayesvm.from_formula("sick ~ age + sex", frame, alpha=0.5)
    fit = bayesvm.fit(model, method="vb")
    X_new, _ = formula_inputs(model, frame.iloc[:4])
    np.testing.assert_array_equal(fit.decision_function(X_new), fit.decision_function(frame[:4]))
    plain = LinearSVM.from_arrays(X_new, [0, 1, 0, 1], alpha=0.5)
    with pytest.raises(ValueError, match="was not built by from_formula"):
        formula_inputs(plain, frame)


def test_the_former_model_names_warn_and_build_what_they_built():
    frame = patients()
    with pytest.warns(FutureWarning, match="the model 'svm' is now 'linear'"):
        former = bayesvm.from_formula("sick ~ age + sex", frame, model="svm", alpha=0.5)
    np.testing.assert_array_equal(former.Z, bayesvm.from_formula("sick ~ age + sex", frame).Z)
    with pytest.warns(FutureWarning, match="'spike_slab', prior='gaussian_slab'"):
        slab = bayesvm.from_formula("sick ~ age + sex", frame, model="gaussian_slab", pi=0.3)
    named = bayesvm.from_formula(
        "sick ~ age + sex", frame, model="spike_slab", prior="gaussian_slab", pi=0.3
    )
    assert type(slab.penalty) is type(named.penalty) is FixedGaussian


@pytest.mark.parametrize(("model", "kind"), [("kernel", KernelGKM), ("gp", GPSVM)])
def test_the_kernel_models_take_the_formulas_columns(model, kind):
    built = bayesvm.from_formula("sick ~ age + sex", patients(), model=model)
    assert isinstance(built, kind) and built.X.shape[1] == 2
