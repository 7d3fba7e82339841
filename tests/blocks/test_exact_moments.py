"""VB summaries come from q's exact moments, and those moments are q's (checked by its draws)."""

import warnings

import numpy as np
import pytest

import bayesvm
from bayesvm.models import (
    GPSVM,
    KernelGKM,
    LinearRegression,
    LinearSVM,
    LogisticRegression,
    MissingDataSVM,
    MixedSVM,
    SpikeSlabSVM,
)

RNG = np.random.default_rng(5)
X = RNG.normal(size=(150, 4))
Y = np.where(X @ [1.0, -1.0, 0.5, 0.0] + 0.7 * RNG.normal(size=150) > 0, 1, -1)
HOLES = np.where(RNG.random(X.shape) < 0.1, np.nan, X)
DRAWS = 40_000
Z_LIMIT = 4.5  # |z| of a correct estimate exceeds this with probability 7e-6

MODELS = {
    "penalized": lambda: MixedSVM.penalized(X, Y),
    "ridge_nu": lambda: LinearSVM.from_arrays(X, Y),
    "laplace_zero": lambda: SpikeSlabSVM.laplace_zero(X, Y, rho=0.3),
    "gaussian_slab": lambda: SpikeSlabSVM.gaussian_slab(X, Y, pi=0.3, nu=3.0),
    "missing": lambda: MissingDataSVM.from_arrays(HOLES, Y),
    "regression_ard": lambda: LinearRegression.from_arrays(
        X, X @ [1.0, 2.0, 0.0, 0.0] + RNG.normal(size=150), ard=True
    ),
    "logistic": lambda: LogisticRegression.from_arrays(X, Y),
    "kernel": lambda: KernelGKM.from_arrays(X[:40], Y[:40]),
    "gp": lambda: GPSVM.from_arrays(X, Y, inducing=15),
}


@pytest.mark.parametrize("name", MODELS)
def test_the_exact_moments_are_those_of_the_draws_from_q(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.IdentifiabilityWarning)
        fit = bayesvm.fit(MODELS[name](), "vb", draws=DRAWS)
    variational = fit.idata["variational"]
    checked = [n for n in fit.idata.posterior.data_vars if f"{n}_q_mean" in variational]
    assert checked, "no variable has exact moments"
    for variable in checked:
        draws = fit.idata.posterior[variable].to_numpy()[0].reshape(DRAWS, -1)
        mean = variational[f"{variable}_q_mean"].to_numpy().ravel()
        sd = variational[f"{variable}_q_sd"].to_numpy().ravel()
        fixed = sd == 0.0
        assert np.all(draws[:, fixed] == mean[fixed]), variable
        finite = np.isfinite(sd) & ~fixed
        z = (draws[:, finite].mean(axis=0) - mean[finite]) / (sd[finite] / np.sqrt(DRAWS))
        assert np.all(np.abs(z) < Z_LIMIT), (variable, z)
        _check_sd(variable, draws[:, finite], sd[finite])


def _check_sd(variable: str, draws: np.ndarray, sd: np.ndarray) -> None:
    """The draws' sd against ``sd`` where their kurtosis is moderate, within ``Z_LIMIT``
    standard errors: ``se(sd) = sd sqrt((kurtosis - 1) / (4 S))`` (delta method).
    """
    centred = draws - draws.mean(axis=0)
    second = np.mean(centred**2, axis=0)
    with np.errstate(invalid="ignore"):  # a rare event never drawn: no spread to compare
        kurtosis = np.mean(centred**4, axis=0) / second**2
    moderate = kurtosis < 10.0
    error = sd * np.sqrt((kurtosis - 1.0) / (4.0 * DRAWS))
    z = (np.sqrt(second) - sd) / error
    assert np.all(np.abs(z[moderate]) < Z_LIMIT), (variable, z[moderate])


def test_an_inverse_gamma_without_a_variance_reports_an_infinite_sd():
    fit = bayesvm.fit(MixedSVM.penalized(X[:, :2], Y), "vb")  # q(sigma2_u): shape 1.01
    row = fit.summary().loc["sigma2_u"]
    assert np.isinf(row["sd"])
    assert np.isfinite(row["mean"])


def test_the_summary_takes_the_exact_moments_and_so_does_compare():
    fit = bayesvm.fit(MixedSVM.penalized(X, Y), "vb")
    summary = fit.summary(round_to="none")
    variational = fit.idata["variational"]
    assert summary.loc["u[x1]", "mean"] == pytest.approx(
        float(variational["u_q_mean"].sel(effect="x1")), rel=1e-12
    )
    assert summary.loc["sigma2_u", "sd"] == pytest.approx(
        float(variational["sigma2_u_q_sd"]), rel=1e-12
    )
    table = bayesvm.compare({"VB": fit})
    assert table.loc[("u[x1]", "VB"), "sd"] == pytest.approx(summary.loc["u[x1]", "sd"])
