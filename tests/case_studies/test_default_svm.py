"""The default SVM's path solver (case_studies/default_svm.py): LIBSVM for the large alphas,
the exact active-set step below where LIBSVM slows down, LIBSVM again where that step would
take too long."""

import numpy as np
import pytest

from bayesvm.blocks.hinge_mode import hinge_objective
from bayesvm.case_studies import default_svm
from bayesvm.case_studies.default_svm import fit_default_svm, linear_svm_path, svm_for
from bayesvm.case_studies.simulated import simulate_dataset

#: Descending: on the data below LIBSVM needs more iterations per row than its cap at 0.01, so
#: 0.01 and 0.001 go to the active-set step.
GRID = np.array([1.0, 0.1, 0.01, 0.001])


@pytest.fixture(scope="module")
def overlapping():
    """60 rows, 3 columns, classes that no hyperplane separates."""
    D, y, _, _ = simulate_dataset(60, 3, 10, np.random.default_rng(0))
    return D, y


@pytest.fixture
def built(monkeypatch):
    """The shapes of the rows each active-set step was built for (once per path needing it)."""
    shapes = []
    make_step = default_svm.make_hinge_mode_step

    def spy(rows):
        shapes.append(rows.shape)
        return make_step(rows)

    monkeypatch.setattr(default_svm, "make_hinge_mode_step", spy)
    return shapes


def _objective(D, y, theta, alpha):
    """``F`` of blocks.hinge_mode: -2 times the SVM's objective."""
    rows = y[:, None] * np.column_stack([np.ones(y.size), D])
    precision = np.r_[0.0, np.full(D.shape[1], 4.0 * alpha)]
    return hinge_objective(rows, theta, precision, np.zeros_like(precision))


def _libsvm(D, y, alpha, **options):
    """scikit-learn's SVC, which the path calls LIBSVM as (``svm_for``)."""
    fitted = svm_for(alpha).set_params(**options).fit(D, y)
    return np.concatenate([fitted.intercept_, fitted.coef_[0]])


def test_small_alphas_go_to_the_exact_active_set_step(overlapping, built):
    D, y = overlapping
    path, warm, gave_up = linear_svm_path(D, y, GRID)
    assert built == [(60, 4)]
    assert list(warm) == [False, False, True, True]
    assert not gave_up
    for alpha, theta in zip(GRID[:2], path[:2], strict=True):  # LIBSVM's own solutions
        np.testing.assert_allclose(theta, _libsvm(D, y, alpha), rtol=1e-12, atol=1e-12)
    # Below: the exact minimiser, at least as good as LIBSVM at a 100 times tighter tolerance
    # (up to round-off) and within that tolerance's reach of it.
    for alpha, theta in zip(GRID[2:], path[2:], strict=True):
        tight = _libsvm(D, y, alpha, tol=1e-5)
        best = _objective(D, y, tight, alpha)
        assert _objective(D, y, theta, alpha) >= best - 1e-12 * abs(best)
        assert np.max(np.abs(theta - tight)) <= 1e-2 * np.max(np.abs(tight))


def test_separable_data_stay_with_libsvm(built):
    # 150 rows, 100 columns: SMO's iterations level off at about 10 per row as the penalty
    # falls, so LIBSVM stays fast and solves every value.
    D, y, _, _ = simulate_dataset(150, 100, 10, np.random.default_rng(1))
    path, warm, _ = linear_svm_path(D, y, GRID)
    assert built == []
    assert not warm.any()
    np.testing.assert_allclose(path[-1], _libsvm(D, y, GRID[-1]), rtol=1e-12, atol=1e-12)


def test_libsvm_takes_over_when_the_active_set_step_would_take_long(overlapping, monkeypatch):
    D, y = overlapping
    monkeypatch.setattr(default_svm, "ACTIVE_SET_STEPS", 0)
    path, warm, gave_up = linear_svm_path(D, y, GRID)
    assert not warm.any() and gave_up  # tried once at 0.01, then LIBSVM
    for alpha, theta in zip(GRID, path, strict=True):
        np.testing.assert_allclose(theta, _libsvm(D, y, alpha), rtol=1e-12, atol=1e-12)


def test_the_path_keeps_the_order_of_its_alphas(overlapping):
    D, y = overlapping
    order = [2, 0, 3, 1]
    shuffled, shuffled_warm, _ = linear_svm_path(D, y, GRID[order])
    path, warm, _ = linear_svm_path(D, y, GRID)
    np.testing.assert_allclose(shuffled, path[order], rtol=1e-12)
    np.testing.assert_array_equal(shuffled_warm, warm[order])


def test_a_path_goes_on_from_a_warm_solution(overlapping):
    D, y = overlapping
    path, warm, _ = linear_svm_path(D, y, GRID)
    assert warm[2]
    rest, rest_warm, _ = linear_svm_path(D, y, GRID[3:], start=path[2])
    np.testing.assert_allclose(rest[0], path[3], rtol=1e-12, atol=1e-12)
    assert rest_warm[0]


def test_default_svm_keeps_the_labels_coding(overlapping):
    D, y = overlapping
    labels = np.where(y > 0, "spam", "mail")
    fitted = fit_default_svm(D, labels, coarse_alphas=[0.1, 1.0], n_holdouts=2, seed=0)
    assert list(fitted.classes) == ["mail", "spam"]
    coded = fit_default_svm(D, y, coarse_alphas=[0.1, 1.0], n_holdouts=2, seed=0)
    assert fitted.alpha == coded.alpha
    np.testing.assert_array_equal(fitted.predict(D) == "spam", coded.predict(D) == 1)


def test_default_svm_refuses_one_class(overlapping):
    D, y = overlapping
    with pytest.raises(ValueError, match="two classes"):
        fit_default_svm(D, np.ones_like(y), n_holdouts=2)


@pytest.mark.parametrize("fine_points", [9, 3])
def test_fine_values_on_the_coarse_grid_keep_their_errors(overlapping, fine_points):
    # 9 points: three on the coarse grid, six solved; 3 points: all three on it if the best
    # coarse value is inside the grid, so no fine path is solved at all.
    D, y = overlapping
    fitted = fit_default_svm(
        D, y, coarse_alphas=GRID[::-1], fine_points=fine_points, n_holdouts=3, seed=0
    )
    shared = np.isclose(fitted.fine_alphas[:, None], fitted.coarse_alphas, rtol=1e-12)
    assert shared.sum() >= 2  # the best coarse value and at least one neighbour
    rows, columns = np.nonzero(shared)
    np.testing.assert_array_equal(fitted.fine_errors[rows], fitted.coarse_errors[columns])


def test_after_one_give_up_the_other_splits_use_libsvm_alone(overlapping, monkeypatch, built):
    D, y = overlapping
    monkeypatch.setattr(default_svm, "ACTIVE_SET_STEPS", 0)
    splits = [(np.arange(60), np.arange(10))] * 3
    _, paths = default_svm.holdout_errors(D, y, GRID, splits)
    assert [path.gave_up for path in paths] == [True, False, False]
    assert len(built) == 1
