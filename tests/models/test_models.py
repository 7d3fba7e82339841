import numpy as np
import pymc as pm
import pytest

from bayesvm.models import FixedGaussian, Laplace, LearnedGaussian, LinearSVM, MixedSVM


def test_labels_accepted_in_every_coding(small_data):
    X, y = small_data
    reference = LinearSVM.from_arrays(X, y, alpha=1.0).y
    for coded in (y, (y + 1) // 2, y > 0, np.where(y > 0, "spam", "ham")):
        model = LinearSVM.from_arrays(X, coded, alpha=1.0)
        np.testing.assert_array_equal(model.y, reference)
    model = LinearSVM.from_arrays(X, np.where(y > 0, "spam", "ham"), alpha=1.0)
    assert list(model.classes) == ["ham", "spam"]


def test_positive_class_chooses_the_label_coded_plus_one(small_data):
    X, y = small_data
    labels = np.where(y > 0, "b", "a")
    model = LinearSVM.from_arrays(X, labels, alpha=1.0, positive_class="a")
    np.testing.assert_array_equal(model.y, -y)
    assert model.classes[1] == "a"


@pytest.mark.parametrize(
    ("X", "y", "message"),
    [
        (np.zeros((4, 2)), [0, 1, 2, 0], "binary"),
        (np.zeros((4, 2)), [1, 1, 1, 1], "single class"),
        (np.array([[0.0, np.nan], [1, 2], [3, 4], [5, 6]]), [0, 1, 0, 1], "NaN"),
        (np.zeros((4, 2)), [0, 1, 0], "shape mismatch"),
        (np.zeros((1, 2)), [1], "at least 2"),
        (np.zeros((4, 2)), [0, 1, np.nan, 1], "NaN"),
        (np.zeros((2, 2, 2)), [0, 1], "2-D"),
    ],
)
def test_bad_data_is_rejected_with_a_named_problem(X, y, message):
    with pytest.raises(ValueError, match=message):
        LinearSVM.from_arrays(X, y, alpha=1.0)
    with pytest.raises(ValueError, match=message):
        MixedSVM.penalized(X, y)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"alpha": np.inf},
        {"alpha": -1.0},
        {"nu": np.nan},
        {"nu_shape": 0.0},
        {"sigma2_beta": np.inf},
    ],
)
def test_non_finite_or_non_positive_hyperparameters_are_rejected(small_data, kwargs):
    X, y = small_data
    with pytest.raises(ValueError, match="hyperparameter"):
        LinearSVM.from_arrays(X, y, **kwargs)


def test_mixed_hyperparameters_are_checked(small_data):
    X, y = small_data
    with pytest.raises(ValueError, match="A_u"):
        MixedSVM.penalized(X, y, A_u=np.nan)


def test_alpha_and_nu_together_is_an_error(small_data):
    X, y = small_data
    with pytest.raises(ValueError, match="not both"):
        LinearSVM.from_arrays(X, y, alpha=1.0, nu=1.0)


def test_penalty_maps_alpha_to_the_prior_scale(small_data):
    X, y = small_data
    ridge = LinearSVM.from_arrays(X, y, alpha=2.0)
    assert isinstance(ridge.penalty, FixedGaussian)
    np.testing.assert_allclose(ridge.penalty.variance, 1 / (4 * 2.0))  # Luts-Ormerod 2.3
    lasso = LinearSVM.from_arrays(X, y, prior="lasso", alpha=2.0, feature_scale="std")
    assert isinstance(lasso.penalty, Laplace)
    np.testing.assert_allclose(lasso.penalty.scale * lasso.penalty.nu, X.std(0, ddof=1) / 4.0)
    learned = LinearSVM.from_arrays(X, y)
    assert isinstance(learned.penalty, LearnedGaussian) and learned.var_names[-1] == "nu"


def test_to_pymc_declares_the_canonical_variables(small_data):
    X, y = small_data
    cases = [
        (LinearSVM.from_arrays(X, y, alpha=1.0), {"beta", "u"}),
        (LinearSVM.from_arrays(X, y, prior="lasso"), {"beta", "u", "nu"}),
        (LinearSVM.from_arrays(X, y), {"beta", "u", "nu", "nu_squared"}),
        (MixedSVM.penalized(X, y), {"beta", "u", "sigma2_u"}),
    ]
    for model, names in cases:
        pymc_model = model.to_pymc()
        assert isinstance(pymc_model, pm.Model)
        assert {v.name for v in pymc_model.free_RVs + pymc_model.deterministics} == names
        assert set(model.var_names) <= names
        assert pymc_model.named_vars_to_dims["u"] == ("effect",)


def test_pymc_log_density_is_the_hinge_pseudo_posterior(small_data):
    X, y = small_data
    model = LinearSVM.from_arrays(X, y, alpha=0.5)
    point = {"beta": np.array([0.2]), "u": np.array([0.5, -0.3, 0.1])}
    logp = model.to_pymc().compile_logp()(point)
    f = 0.2 + X @ point["u"]
    expected = (
        -2 * np.sum(np.maximum(0, 1 - y * f))
        - 0.5 * 0.2**2 / 1e8
        - 0.5 * np.log(2 * np.pi * 1e8)
        + np.sum(-0.5 * point["u"] ** 2 / 0.5 - 0.5 * np.log(2 * np.pi * 0.5))
    )
    np.testing.assert_allclose(logp, expected, rtol=1e-10)


def test_predicting_with_the_wrong_number_of_features_is_an_error(small_data):
    X, y = small_data
    model = LinearSVM.from_arrays(X, y, alpha=1.0)
    with pytest.raises(ValueError, match="features"):
        model.design_for(X[:, :2])


def test_from_frame_uses_column_names(small_data):
    import pandas as pd

    X, y = small_data
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=np.where(y > 0, "yes", "no"))
    model = LinearSVM.from_frame(df, target="label", alpha=1.0)
    assert model.effect_names == ["a", "b", "c"]
    with pytest.raises(ValueError, match="not in the data"):
        MixedSVM.from_frame(df, target="missing")
