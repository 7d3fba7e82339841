import arviz as az
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm.method_comparison import COLUMNS, compare, plot_compare
from bayesvm.models import MixedSVM
from bayesvm.results import Fit, build_idata

matplotlib.use("Agg")

PARAMETERS = ["beta[intercept]", "u[x0]", "u[x1]", "u[x2]", "sigma2_u"]


def point_fit(model, vb_fit):
    """A point-estimate Fit (as EM/ECME return): the VB means as a single draw."""
    posterior = vb_fit.idata.posterior.mean(("chain", "draw"))
    draws = {name: posterior[name].to_numpy()[None, None] for name in model.var_names}
    fit = Fit(model, build_idata(model, draws), "mode", "point", n_iter=1, converged=True)
    fit.runtime_s = 0.01
    return fit


@pytest.fixture(scope="module")
def fits():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80, 3))
    y = np.where(X @ [1.5, -1.0, 0.0] + 0.3 + rng.standard_normal(80) > 0, 1, -1)
    model = MixedSVM.penalized(X, y)
    vb = bayesvm.fit(model, method="vb", seed=1)
    gibbs = bayesvm.fit(
        model, method="gibbs", seed=1, draws=200, tune=200, chains=2, progressbar=False
    )
    return {"vb": vb, "gibbs": gibbs, "mode": point_fit(model, vb)}


def test_table_has_one_row_per_parameter_and_method(fits):
    table = compare(fits)
    assert list(table.columns) == COLUMNS
    assert table.index.names == ["parameter", "method"]
    expected = [(parameter, method) for parameter in PARAMETERS for method in fits]
    assert list(table.index) == expected


def test_diagnostics_only_where_meaningful(fits):
    table = compare(fits)
    mcmc = table.xs("gibbs", level="method")
    assert np.all(np.isfinite(mcmc[["sd", "ess_bulk", "ess_per_s", "r_hat"]]))
    np.testing.assert_allclose(mcmc["ess_per_s"], mcmc["ess_bulk"] / fits["gibbs"].runtime_s)
    vb = table.xs("vb", level="method")
    assert vb[["ess_bulk", "ess_per_s", "r_hat"]].isna().all().all()
    assert np.all(vb["hdi_lower"] < vb["mean"]) and np.all(vb["mean"] < vb["hdi_upper"])
    assert np.all(mcmc["mcse_mean"] > 0) and np.all(mcmc["ess_tail"] > 0)
    assert mcmc["divergences"].isna().all()  # Gibbs has no divergent transitions to count
    mode = table.xs("mode", level="method")
    assert mode[["sd", "mcse_mean", "ess_bulk", "ess_tail", "r_hat"]].isna().all().all()
    np.testing.assert_array_equal(mode["hdi_lower"], mode["mean"])
    np.testing.assert_array_equal(mode["hdi_upper"], mode["mean"])
    assert (table["runtime_s"] > 0).all()


def test_vb_and_gibbs_agree_on_the_coefficients(fits):
    table = compare(fits, var_names=["beta", "u"])
    vb, gibbs = table.xs("vb", level="method"), table.xs("gibbs", level="method")
    mcse = gibbs["sd"] / np.sqrt(gibbs["ess_bulk"])
    # Mean-field VB is close to the posterior mean for these coefficients (Luts-Ormerod
    # section 4.2); allow its approximation error plus 4 Monte Carlo standard errors.
    assert np.all(np.abs(vb["mean"] - gibbs["mean"]) < 0.5 * gibbs["sd"] + 4 * mcse)


def test_var_names_select_rows_and_missing_variables_are_skipped(fits):
    table = compare(fits, var_names=["u", "nu"])
    assert set(table.index.get_level_values("parameter")) == {"u[x0]", "u[x1]", "u[x2]"}
    with pytest.raises(ValueError, match="none of the fits"):
        compare(fits, var_names=["nu"])


def test_inference_data_read_back_from_netcdf_gives_the_same_table(fits, tmp_path):
    loaded = {}
    for name, fit in fits.items():
        fit.to_netcdf(tmp_path / f"{name}.nc")
        loaded[name] = az.from_netcdf(tmp_path / f"{name}.nc")
    pd.testing.assert_frame_equal(compare(loaded), compare(fits))


def test_kind_is_inferred_without_attrs(fits):
    idata = fits["vb"].idata.copy()
    idata.attrs.clear()
    row = compare({"vb": idata}).iloc[0]
    assert np.isnan(row["ess_bulk"]) and np.isnan(row["runtime_s"])


def test_plot_compare_returns_a_figure(fits):
    figure = plot_compare(fits, var_names=["beta", "u"], hdi_prob=0.9)
    assert isinstance(figure, plt.Figure)
    labels = {text.get_text() for text in figure.axes[0].get_legend().get_texts()}
    assert labels == set(fits)
    plt.close(figure)


def test_summaries_write_no_negative_zero(fits):
    """A small negative value rounded is ``-0.0``, which equals ``0.0``: written as ``0.0``
    (ArviZ's summary writes ``-0.0``).
    """
    model, posterior = fits["gibbs"].model, fits["gibbs"].idata.posterior
    rng = np.random.default_rng(0)
    near_zero = {
        name: -0.01 + 0.001 * rng.standard_normal(posterior[name].shape) for name in model.var_names
    }
    mcmc = Fit(model, build_idata(model, near_zero), "gibbs", "mcmc", n_iter=100, converged=True)
    tables = [mcmc.summary(round_to=1), fits["vb"].summary(round_to=0)]
    raw = fits["vb"].summary(round_to="none")
    assert ((raw["mean"] < 0) & (raw["mean"] > -0.5)).any()  # VB's case exists too
    for table in tables:
        values = table[["mean", "hdi_3%", "hdi_97%"]].to_numpy()
        assert (values == 0).any() and not np.signbit(values[values == 0]).any()


def test_summaries_in_xarray_form(fits):
    for label in ("vb", "gibbs"):
        summary = fits[label].summary(fmt="xarray")
        assert "u" in summary and "mean" in summary.coords["metric"]
