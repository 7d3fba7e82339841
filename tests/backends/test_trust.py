"""A fit says when it cannot be trusted, and bad arguments fail before any work."""

import os
import warnings

import arviz as az
import numpy as np
import pytest
from threadpoolctl import threadpool_info

import bayesvm
from bayesvm.linalg import MULTITHREAD_MIN_FLOPS, automatic_threads, blas_threads_for, usable_cores
from bayesvm.models import LinearRegression, LinearSVM, LogisticRegression, MixedSVM
from bayesvm.models.identification import collinear_columns
from bayesvm.samplers.diagnostics import ESS_PER_CHAIN, mcmc_problems

from conftest import separable, simulate_logistic

X, Y = simulate_logistic(80, 3, seed=21)
QUIET = {"progressbar": False}


def no_warnings_of(category, build):
    with warnings.catch_warnings():
        warnings.simplefilter("error", category)
        return build()


# --- convergence ---------------------------------------------------------------------------


def test_vb_stopped_at_max_iter_warns_and_is_not_converged():
    model = MixedSVM.penalized(X, Y)
    with pytest.warns(bayesvm.ConvergenceWarning, match="stopped at max_iter=3"):
        fit = bayesvm.fit(model, method="vb", max_iter=3)
    assert not fit.converged and "max_iter=3" in fit.problems[0]
    assert fit.idata.attrs["converged"] == 0 and "max_iter=3" in fit.idata.attrs["problems"]
    converged = no_warnings_of(bayesvm.ConvergenceWarning, lambda: bayesvm.fit(model))
    assert converged.converged and converged.problems == []


def test_em_stopped_at_max_iter_warns():
    model = LinearSVM.from_arrays(X, Y, alpha=0.5)
    with pytest.warns(bayesvm.ConvergenceWarning, match="max_iter=2"):
        assert not bayesvm.fit(model, method="em", max_iter=2).converged


def test_short_gibbs_chains_warn_with_the_worst_parameter():
    model = MixedSVM.penalized(X, Y)
    with pytest.warns(bayesvm.ConvergenceWarning) as record:
        fit = bayesvm.fit(model, method="gibbs", draws=30, tune=0, chains=2, seed=1, **QUIET)
    message = str(record[0].message)
    assert "gibbs fit of MixedSVM should not be trusted" in message
    assert "bulk ESS" in message and "below 200 (100 per chain)" in message
    assert not fit.converged and fit.problems


def test_the_checks_pass_iid_draws_and_fail_sticky_or_divergent_ones():
    rng = np.random.default_rng(0)
    iid = rng.standard_normal((4, 1000))
    assert mcmc_problems(az.from_dict(posterior={"x": iid})) == []
    sticky = np.empty((4, 1000))  # AR(1) with autocorrelation 0.98: ESS about 40
    sticky[:, 0] = rng.standard_normal(4)
    for t in range(1, 1000):
        sticky[:, t] = 0.98 * sticky[:, t - 1] + np.sqrt(1 - 0.98**2) * rng.standard_normal(4)
    problems = mcmc_problems(az.from_dict(posterior={"x": sticky}))
    assert any(p.startswith("bulk ESS") and f"below {4 * ESS_PER_CHAIN}" in p for p in problems)
    diverging = np.zeros((4, 1000), dtype=bool)
    diverging[1, [3, 70, 500]] = True
    idata = az.from_dict(posterior={"x": iid}, sample_stats={"diverging": diverging})
    assert mcmc_problems(idata) == [
        "3 divergent transitions: NUTS could not explore part of the posterior (try "
        "noncentered=True or a higher target_accept)"
    ]


def test_indicators_that_never_switch_are_skipped_without_warnings():
    rng = np.random.default_rng(2)
    gamma = np.zeros((1, 400, 3))
    gamma[0, :, 1] = 1.0  # included in every draw
    gamma[0, ::2, 2] = 1.0  # switching: checked
    idata = az.from_dict(posterior={"x": rng.standard_normal((1, 400)), "gamma": gamma})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mcmc_problems(idata) == []


def test_the_worst_parameter_is_named_by_its_coordinate():
    rng = np.random.default_rng(1)
    draws = rng.standard_normal((2, 500, 3))
    draws[1, :, 2] += 5.0  # the chains disagree about w[c] only
    idata = az.from_dict(posterior={"w": draws}, coords={"k": ["a", "b", "c"]}, dims={"w": ["k"]})
    problem = mcmc_problems(idata)[0]
    assert problem.startswith("R-hat") and "of w[c] exceeds 1.01" in problem


def test_an_indicator_stuck_at_different_values_in_each_chain_is_named_as_undefined_rhat():
    gamma = np.zeros((2, 300, 2))
    gamma[0, :, 0] = 1.0  # one chain keeps the feature in throughout, the other keeps it out
    gamma[:, ::2, 1] = 1.0  # switching in both chains alike: passes
    idata = az.from_dict(
        posterior={"gamma": gamma}, coords={"k": ["a", "b"]}, dims={"gamma": ["k"]}
    )
    problems = mcmc_problems(idata)
    assert problems[0] == (
        "R-hat of gamma[a] is undefined: the chains disagree, each staying at one value"
    )


# --- identifiability at construction -------------------------------------------------------


def test_clean_designs_build_without_warnings():
    for build in (
        lambda: MixedSVM.penalized(X, Y),
        lambda: LinearSVM.from_arrays(X, Y),
        lambda: MixedSVM.random_intercept(X, Y, groups=np.arange(80) % 10),
        lambda: LinearRegression.from_arrays(X, X[:, 0]),
    ):
        no_warnings_of(bayesvm.IdentifiabilityWarning, build)


@pytest.mark.parametrize(
    "build, expected",
    [
        (
            lambda: MixedSVM.penalized(np.column_stack([X, np.full(80, 2.0)]), Y),
            r"constant columns \['x3'\] duplicate 'intercept'",
        ),
        (
            lambda: LinearSVM.from_arrays(np.column_stack([X, X[:, 0] - X[:, 2]]), Y, alpha=1.0),
            r"columns \['x3'\] are linear combinations of the other columns",
        ),
        (
            lambda: LinearRegression.from_arrays(np.column_stack([X, 2 * X[:, 1]]), X[:, 0]),
            r"columns \['x3'\] are linear combinations",
        ),
        (
            lambda: MixedSVM.random_intercept(
                np.column_stack([X, X[:, 1]]), Y, groups=np.arange(80) % 8
            ),
            r"columns \['x3'\] are linear combinations",
        ),
        (
            lambda: MixedSVM.random_intercept(X, Y, groups=np.arange(80) % 60),
            "40 of 60 groups have a single observation",
        ),
        (lambda: MixedSVM.penalized(*separable(60, 3, seed=2)), "the classes are separable"),
        (
            lambda: LinearSVM.from_arrays(*simulate_logistic(20, 30, seed=3)),
            r"separable \(n_samples=20 <= 31 coefficients\).*learned nu",
        ),
    ],
)
def test_non_identified_designs_warn_at_construction(build, expected):
    with pytest.warns(bayesvm.IdentifiabilityWarning, match=expected) as record:
        build()
    assert record[0].filename == __file__  # attributed to the user's line


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e4])
def test_of_dependent_columns_the_last_is_reported(scale):
    """Whatever the columns' scales and round-off, the column in the span of those before it."""
    design = np.column_stack([X[:, 0], scale * (X[:, 0] + X[:, 1]), X[:, 1], X[:, 2]])
    assert collinear_columns(design, ["a", "b", "c", "d"]) == ["c"]
    assert collinear_columns(design[:, [0, 1, 3]], ["a", "b", "d"]) == []


def test_separable_classes_are_fine_with_a_fixed_penalty():
    no_warnings_of(
        bayesvm.IdentifiabilityWarning,
        lambda: LinearSVM.from_arrays(*separable(60, 3, seed=2), alpha=0.5),
    )


def test_the_regression_models_check_their_design_too():
    with pytest.warns(bayesvm.IdentifiabilityWarning, match="linear combinations"):
        LogisticRegression.from_arrays(np.column_stack([X, X[:, 0] + X[:, 1]]), Y)


# --- bad arguments -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, options, expected",
    [
        ("vb", {"draws": 0}, "draws must be >= 1; got 0"),
        ("vb", {"draws": -5}, "draws must be >= 1; got -5"),
        ("vb", {"draws": 10.0}, "draws must be an integer >= 1; got 10.0"),
        ("vb", {"max_iter": 0}, "max_iter must be >= 1"),
        ("vb", {"tol": -1.0}, "tol must be a finite number >= 0"),
        ("vb", {"chains": 2}, "fit_vb takes no option 'chains'; it takes: tol, relative, max_iter"),
        ("gibbs", {"chains": 0}, "chains must be >= 1; got 0"),
        ("gibbs", {"tune": -1}, "tune must be >= 0; got -1"),
        ("gibbs", {"draws": True}, "draws must be an integer"),
        ("gibbs", {"seed": "1"}, "seed must be None, an integer >= 0"),
        ("nuts", {"tune": -1}, "tune must be >= 0; got -1"),
        ("nuts", {"chains": 0}, "chains must be >= 1; got 0"),
        ("nuts", {"target_accept": 1.2}, r"target_accept must be in \(0, 1\)"),
        ("vb", {"threads": 0}, "threads must be >= 1; got 0"),
    ],
)
def test_bad_options_fail_before_any_work(method, options, expected):
    model = MixedSVM.penalized(X, Y)
    with pytest.raises(ValueError, match=expected):
        bayesvm.fit(model, method=method, **options)


@pytest.mark.parametrize("value", ["0.5", True])
def test_a_penalty_that_is_not_a_number_is_refused(value):
    with pytest.raises(ValueError, match="hyperparameter alpha must be"):
        LinearSVM.from_arrays(X, Y, alpha=value)


# --- random-intercept labels at prediction time --------------------------------------------


def test_group_labels_match_across_int_and_str():
    groups = np.arange(80) % 10
    fitted = bayesvm.fit(MixedSVM.random_intercept(X, Y, groups=groups), seed=0)
    expected = fitted.decision_function(X, groups=groups)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bayesvm.UnseenGroupWarning)
        from_csv = fitted.decision_function(X, groups=groups.astype(str))
    np.testing.assert_array_equal(from_csv, expected)
    fitted_on_text = bayesvm.fit(MixedSVM.random_intercept(X, Y, groups=groups.astype(str)), seed=0)
    np.testing.assert_allclose(fitted_on_text.decision_function(X, groups=groups), expected)


def test_unseen_groups_and_missing_groups_warn_with_a_count():
    groups = np.arange(80) % 10
    fitted = bayesvm.fit(MixedSVM.random_intercept(X, Y, groups=groups), seed=0)
    new_groups = np.array([1, 2, 11, 12, 12])
    with pytest.warns(bayesvm.UnseenGroupWarning, match=r"3 of 5 rows .*\(e.g. 11, 12\)"):
        fitted.predict(X[:5], groups=new_groups)
    with pytest.warns(bayesvm.UnseenGroupWarning, match="groups=None"):
        population = fitted.decision_function(X[:5])
    beta = fitted.coefficient_means()[0]
    np.testing.assert_allclose(population, beta[0] + X[:5] @ beta[1:])


# --- BLAS threads --------------------------------------------------------------------------


def test_small_problems_run_single_threaded():
    assert automatic_threads(2 * 20 * 201**2 + 201**3) == 1  # n = 20, d = 200
    assert automatic_threads(MULTITHREAD_MIN_FLOPS / 2) == 1
    assert 1 <= automatic_threads(MULTITHREAD_MIN_FLOPS * 10) <= usable_cores()


def test_requested_threads_are_capped_by_the_usable_cores():
    with blas_threads_for(1.0, threads=usable_cores() + 64):
        counts = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert counts and max(counts) <= usable_cores()
    with blas_threads_for(1.0):
        counts = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert counts == [1] * len(counts)


def test_threads_go_to_scipys_blas_alone_where_numpy_brings_another():
    """Two OpenBLAS pools with threads each spin against each other (bayesvm.linalg); a peer
    that calls one BLAS alone gets the threads in every one.
    """
    from scipy.linalg import blas

    pools = [pool["filepath"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    site = os.path.dirname(os.path.dirname(os.path.dirname(blas.__file__)))
    scipys = [path for path in pools if os.path.relpath(path, site).startswith("scipy")]
    if len(pools) < 2 or not scipys or usable_cores() < 2:
        pytest.skip(
            "one BLAS shared by NumPy and SciPy (e.g. conda's), or one core: there are no "
            "two pools to give the threads to one of"
        )

    def threads(**options):
        with blas_threads_for(1.0, threads=2, **options):
            return {
                p["filepath"]: p["num_threads"]
                for p in threadpool_info()
                if p["user_api"] == "blas"
            }

    ours = threads()
    assert [ours[path] for path in scipys] == [2] * len(scipys)
    assert all(ours[path] == 1 for path in pools if path not in scipys)
    assert set(threads(every_blas=True).values()) == {2}


def test_threads_option_gives_the_same_fit():
    model = MixedSVM.penalized(X, Y)
    one, many = (bayesvm.fit(model, seed=0, threads=threads) for threads in (1, 2))
    np.testing.assert_allclose(one.coefficient_means()[1], many.coefficient_means()[1], atol=1e-10)
