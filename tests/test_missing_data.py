"""MissingDataSVM (Luts-Ormerod section 3.3): the missing cells as a block, by VB, Gibbs, NUTS."""

import warnings

import numpy as np
import pytest
from scipy.special import gammaln, kve, multigammaln

import bayesvm
from bayesvm.blocks.missing_cells import missing_patterns
from bayesvm.case_studies.missing_recovery import recovery_curve, summary_table
from bayesvm.models import LinearSVM, MissingDataSVM, MixedSVM
from bayesvm.vb.cavi import initial_state, make_cavi_step

from conftest import assert_fits_agree, simulate_logistic


def with_missing(X, fraction, seed, columns=None):
    """``X`` with cells set to NaN completely at random (only in ``columns`` if given)."""
    rng = np.random.default_rng(seed)
    hide = rng.random(X.shape) < fraction
    if columns is not None:
        hide[:, [j for j in range(X.shape[1]) if j not in columns]] = False
    return np.where(hide, np.nan, X)


def correlated_data(n_samples, seed):
    """Two correlated predictors and labels from a logistic model (the Gibbs vs NUTS data)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, 2)) @ np.array([[1.0, 0.5], [0.0, 0.8]])
    p = 1.0 / (1.0 + np.exp(-(0.3 + X @ np.array([1.0, -0.7]))))
    return X, np.where(rng.random(n_samples) < p, 1, -1)


# -- without missing values the imputation blocks decouple --------------------------------
def test_without_missing_values_the_coefficients_equal_mixed_svm_penalized():
    X, y = simulate_logistic(150, 4, seed=7)
    # Plain CAVI to an absolute tolerance: the same sweeps and stop (SQUAREM's step length and
    # a relative stop would also see the imputation blocks' terms).
    plain = {"accelerate": False, "tol": 1e-10, "relative": False}
    mixed = bayesvm.fit(MixedSVM.penalized(X, y), method="vb", **plain)
    missing = bayesvm.fit(MissingDataSVM.from_arrays(X, y), method="vb", **plain)
    assert missing.n_iter == mixed.n_iter
    for name in ("beta", "u"):
        group_a, group_b = mixed.idata["variational"], missing.idata["variational"]
        np.testing.assert_allclose(group_b[f"{name}_mean"], group_a[f"{name}_mean"], atol=1e-8)
        np.testing.assert_allclose(
            group_b[f"{name}_variance"], group_a[f"{name}_variance"], atol=1e-8
        )
    np.testing.assert_allclose(
        missing.idata["variational"]["variance_rate"],
        mixed.idata["variational"]["variance_rate"],
        rtol=1e-8,
    )
    assert missing.idata.posterior["x_mis"].shape == (1, 1000, 0)


# -- VB: Algorithm 4 ------------------------------------------------------------------------
@pytest.mark.parametrize("fraction", [0.1, 0.4])
def test_vb_bound_never_decreases(fraction):
    X, y = simulate_logistic(200, 4, seed=11)
    D = with_missing(X, fraction, seed=1)
    D[3] = np.nan  # a row with every predictor missing
    fit = bayesvm.fit(MissingDataSVM.from_arrays(D, y), method="vb")
    assert fit.converged
    assert np.diff(fit.lower_bound_trace).min() >= 0.0


def test_bound_equals_section_3_3_formula():
    """The bound of section 3.3 (after Algorithm 4), evaluated independently from ``q``.

    Two predictors and ``nu = 3``, so the inverse-Wishart prior is proper and the paper's
    ``log Gamma_d(nu / 2)`` finite; each incomplete row misses one cell, so ``|Sigma_q(d_i)|``
    is that cell's variance.
    """
    X, y = correlated_data(150, seed=2)
    D = with_missing(X, 0.25, seed=3)
    D[np.isnan(D).all(axis=1), 0] = X[np.isnan(D).all(axis=1), 0]
    model = MissingDataSVM.from_arrays(D, y)
    fit = bayesvm.fit(model, method="vb")
    q = fit.idata["variational"]
    n, d = D.shape
    C = np.column_stack([np.ones(n), D])
    C[:, 1:][np.isnan(D)] = q["x_mis_mean"].to_numpy()
    mu = np.concatenate([q["beta_mean"], q["u_mean"]])
    cov, chi = q["covariance"].to_numpy(), q["chi"].to_numpy()
    A = B = 0.01
    s2b, s2mu, nu, psi = 1e8, 1e8, 3.0, 0.01 * np.eye(d)
    B_q = float(q["variance_rate"])
    mu_mu, cov_mu = q["mu_x_mean"].to_numpy(), q["mu_x_covariance"].to_numpy()
    psi_q = q["Sigma_x_scale"].to_numpy()
    expected = (
        n * np.log(2) - n - n / 2 * np.log(2 * np.pi)
        + model.y @ (C @ mu)
        + 0.25 * np.sum(np.log(chi))
        + np.sum(np.log(kve(0.5, np.sqrt(chi))) - np.sqrt(chi))
        + A * np.log(B) - gammaln(A) - (A + d / 2) * np.log(B_q) + gammaln(A + d / 2)
        - 0.5 * np.log(s2b) - (mu[0] ** 2 + cov[0, 0]) / (2 * s2b)
        + (1 + d) / 2 + 0.5 * np.linalg.slogdet(cov)[1]
        + d / 2 + 0.5 * np.linalg.slogdet(cov_mu)[1] - n * d / 2 * np.log(2 * np.pi)
        - d / 2 * np.log(s2mu) - (mu_mu @ mu_mu + np.trace(cov_mu)) / (2 * s2mu)
        + nu / 2 * np.linalg.slogdet(psi)[1] - multigammaln(nu / 2, d)
        - (nu + n) / 2 * np.linalg.slogdet(psi_q)[1] + d * n / 2 * np.log(2)
        + multigammaln((nu + n) / 2, d)
        + np.sum(0.5 + 0.5 * np.log(2 * np.pi) + 0.5 * np.log(q["x_mis_variance"].to_numpy()))
    )  # fmt: skip
    np.testing.assert_allclose(fit.lower_bound, expected, rtol=1e-10)


def _per_row_conditional(block, stats, row):
    """The conditional of one row's missing cells, from Appendix C / Algorithm 4 lines 6-7
    with explicit solves (what the per-pattern factorisation must reproduce).
    """
    theta, hinge = stats["theta"], stats["hinge"]
    precision, mu = stats["Sigma_x"].precision, stats["mu_x"].mean
    omega = theta.covariance + np.outer(theta.mean, theta.mean)
    w, r = hinge.weights[row], hinge.response[row]
    M = np.flatnonzero(block.mask[row])
    O = np.flatnonzero(~block.mask[row])  # noqa: E741
    full = precision + w * omega[1:, 1:]
    d_obs = block.first_guess[row, O]
    rhs = (
        precision @ mu
        + r * theta.mean[1:]
        - w * omega[1:, 0]
        - full[:, O] @ d_obs
    )[M]  # fmt: skip
    covariance = np.linalg.inv(full[np.ix_(M, M)])
    return covariance @ rhs, covariance


@pytest.mark.parametrize("draw", [False, True], ids=["vb", "gibbs"])
def test_one_factorisation_per_pattern_gives_each_rows_conditional(draw):
    X, y = simulate_logistic(80, 4, seed=5)
    D = with_missing(X, 0.3, seed=6)
    D[0] = np.nan
    model = MissingDataSVM.from_arrays(D, y)
    blocks = model.blocks
    _, stats = initial_state(blocks)
    state = ({}, stats)
    step = make_cavi_step(blocks)
    for _ in range(3):
        state, _ = step(state)
    stats = dict(state[1])
    if draw:  # statistics at values, as a Gibbs sweep sees them
        rng = np.random.default_rng(0)
        for block in blocks:
            stats[block.name] = block.sample(block.conditional(stats), rng)
    cells = blocks[1]
    params = cells.conditional(stats)
    for pattern, conditional in zip(cells.patterns, params.patterns, strict=True):
        for k, row in enumerate(pattern.rows):
            mean, covariance = _per_row_conditional(cells, stats, row)
            np.testing.assert_allclose(conditional.mean[k], mean, rtol=1e-9, atol=1e-12)
            T = conditional.transform
            np.testing.assert_allclose(
                (T * conditional.scales[k]) @ T.T, covariance, rtol=1e-9, atol=1e-12
            )
    assert len(cells.patterns) == len(np.unique(np.isnan(D)[np.isnan(D).any(axis=1)], axis=0))


def test_missing_patterns_group_rows_and_number_cells_row_by_row():
    mask = np.array([[1, 0, 0], [0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)
    patterns = {tuple(p.missing): p for p in missing_patterns(mask)}
    assert set(patterns) == {(0,), (1,), (0, 1, 2)}
    np.testing.assert_array_equal(patterns[(0,)].rows, [0, 2])
    np.testing.assert_array_equal(patterns[(0,)].cells.ravel(), [0, 1])
    np.testing.assert_array_equal(patterns[(0, 1, 2)].cells.ravel(), [2, 3, 4])
    np.testing.assert_array_equal(patterns[(1,)].observed, [0, 2])


# -- Gibbs (Appendix C) against NUTS on to_pymc() -------------------------------------------
def test_gibbs_and_nuts_agree_within_monte_carlo_error():
    """beta, u, sigma2_u, x_mis, mu_x and Sigma_x; a row with both predictors missing."""
    X, y = correlated_data(50, seed=5)
    D = with_missing(X, 0.2, seed=5)
    D[0] = np.nan
    model = MissingDataSVM.from_arrays(D, y)
    gibbs = bayesvm.fit(
        model, method="gibbs", seed=1, chains=4, draws=5000, tune=1000, progressbar=False
    )
    nuts = bayesvm.fit(
        model, method="nuts", seed=1, chains=4, draws=1000, tune=1000, progressbar=False
    )
    assert_fits_agree(gibbs, nuts)


# -- the model's variables and input checks -------------------------------------------------
def test_x_mis_names_the_row_and_column_of_each_cell():
    X, y = simulate_logistic(30, 3, seed=1)
    D = X.copy()
    D[4, 2] = D[7, 0] = D[7, 1] = np.nan
    model = MissingDataSVM.from_arrays(D, y, feature_names=["age", "sex", "chol"])
    fit = bayesvm.fit(model, method="vb")
    cells = fit.idata.posterior["x_mis"]
    assert cells.dims == ("chain", "draw", "missing_cell")
    assert list(cells["missing_cell"].to_numpy()) == ["4:chol", "7:age", "7:sex"]
    constant = fit.idata.constant_data
    np.testing.assert_array_equal(constant["missing_row"], [4, 7, 7])
    assert list(constant["missing_column"].to_numpy()) == ["chol", "age", "sex"]
    assert fit.idata.posterior["Sigma_x"].dims == ("chain", "draw", "effect", "effect_")
    assert set(model.var_names) == {"beta", "u", "sigma2_u", "x_mis", "mu_x", "Sigma_x"}
    assert set(bayesvm.methods(model)) == {"vb", "gibbs", "nuts"}


def test_other_models_reject_nan_and_name_this_one():
    X, y = simulate_logistic(30, 3, seed=1)
    X[2, 1] = np.nan
    for build in (lambda: LinearSVM.from_arrays(X, y), lambda: MixedSVM.penalized(X, y)):
        with pytest.raises(ValueError, match="MissingDataSVM"):
            build()


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda D: D.__setitem__((slice(None), 1), np.nan), "no observed value"),
        (lambda D: D.__setitem__((0, 0), np.inf), "infinite"),
    ],
)
def test_bad_predictors_are_refused(change, message):
    X, y = simulate_logistic(30, 3, seed=1)
    change(X)
    with pytest.raises(ValueError, match=message):
        MissingDataSVM.from_arrays(X, y)


def test_bad_inverse_wishart_scale_is_refused():
    X, y = simulate_logistic(30, 3, seed=1)
    with pytest.raises(ValueError, match="psi must be 3 x 3"):
        MissingDataSVM.from_arrays(X, y, psi=np.eye(2))
    with pytest.raises(ValueError, match="positive definite"):
        MissingDataSVM.from_arrays(X, y, psi=-np.eye(3))


# -- predictions with missing parts ---------------------------------------------------------
@pytest.fixture(scope="module")
def fitted():
    """Short chains: the predictions are checked against the draws they were made from."""
    X, y = correlated_data(120, seed=8)
    model = MissingDataSVM.from_arrays(with_missing(X, 0.2, seed=8), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        gibbs = bayesvm.fit(model, method="gibbs", draws=500, tune=500, chains=2, seed=0)
    return {"vb": bayesvm.fit(model, method="vb", seed=0), "gibbs": gibbs}


@pytest.mark.parametrize("method", ["vb", "gibbs"])
def test_decision_function_integrates_the_missing_part_over_the_draws(fitted, method):
    fit = fitted[method]
    D_new = np.array([[0.5, -1.0], [0.5, np.nan], [np.nan, 2.0], [np.nan, np.nan]])
    f = fit.decision_function(D_new)
    post = fit.idata.posterior.stack(sample=("chain", "draw"))
    beta, u = post["beta"].to_numpy()[0], post["u"].to_numpy()
    mu, sigma = post["mu_x"].to_numpy(), post["Sigma_x"].to_numpy()
    expected = []
    for row in D_new:
        M, O = np.flatnonzero(np.isnan(row)), np.flatnonzero(~np.isnan(row))  # noqa: E741
        values = []
        for s in range(beta.size):
            cond = mu[M, s] + sigma[np.ix_(M, O)][..., s] @ np.linalg.solve(
                sigma[np.ix_(O, O)][..., s], row[O] - mu[O, s]
            )
            values.append(beta[s] + row[O] @ u[O, s] + cond @ u[M, s])
        expected.append(np.mean(values))
    # complete rows: the posterior mean (q's mean for VB, as the paper)
    theta = np.concatenate(fit.coefficient_means())
    expected[0] = theta[0] + D_new[0] @ theta[1:]
    np.testing.assert_allclose(f, expected, rtol=1e-8)
    np.testing.assert_array_equal(fit.predict(D_new), np.where(f > 0, 1, -1))


def test_probabilities_widen_as_the_row_loses_predictors(fitted):
    """The missing part is drawn, not plugged in: a row missing its most informative
    predictor gets a probability nearer 1/2 than the complete row, and the row with nothing
    observed is the population's.
    """
    fit = fitted["gibbs"]
    complete = np.array([[2.0, -2.0]])
    proba = fit.predict_proba(np.vstack([complete, [[np.nan, -2.0]], [[np.nan, np.nan]]]))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert abs(proba[1, 1] - 0.5) < abs(proba[0, 1] - 0.5)
    assert abs(proba[2, 1] - 0.5) < abs(proba[0, 1] - 0.5)


def test_predictions_refuse_the_wrong_number_of_columns(fitted):
    with pytest.raises(ValueError, match="built with 2"):
        fitted["vb"].predict(np.zeros((3, 3)))


# -- recovery as the missing fraction grows (case_studies/missing_recovery.py) -------------
def test_recovery_curve_direction_improves_on_complete_cases_while_weights_inflate():
    """The documented curve: the imputation model's weight vector points closer to the
    full-data fit's than the complete-case fit's at every missing fraction, while its weights on
    the incomplete columns grow with the fraction (the pseudo-likelihood's imputation effect);
    mean imputation shrinks them.
    """
    curve = recovery_curve(fractions=(0.0, 0.2, 0.4, 0.6))
    table = summary_table(curve)
    # Without missing cells the imputation model is the full-data model: the same fixed point,
    # reached by other SQUAREM paths and stopped at a relative bound change of 1e-10.
    assert curve.loc[curve["fraction"] == 0.0, "coefficient_error"].max() < 1e-4
    positive = table.index > 0
    angle = table["angle_deg"][positive]
    assert (angle["imputation"] < angle["complete_cases"]).all()
    inflation = table["incomplete_norm_ratio"]
    assert inflation["imputation"].is_monotonic_increasing
    assert inflation["imputation"].loc[0.4] > 1.2
    assert inflation["mean_imputation"].is_monotonic_decreasing
    assert inflation["mean_imputation"].loc[0.6] < 1.0
