"""SpikeSlabSVM (Luts-Ormerod's Laplace-zero, Polson-Scott's Gaussian slab): the whole
samplers agree with each other and with PyMC's compound step, VB's bound is monotone and VB
finds a known support, and the model's API is that of every other model.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm.drivers import ROUNDOFF
from bayesvm.models import LinearSVM, SpikeSlabSVM
from bayesvm.samplers.nuts import fit_nuts, step_methods

from conftest import (
    NUTS_CORES,
    NUTS_LAYOUT_ONLY,
    SAMPLER_RUNS,
    assert_fits_agree,
    separable,
    simulate_logistic,
)

FEATURES = ["age", "dose", "noise"]


def weak_signal(n_samples: int, n_features: int, seed: int):
    """Labels from ``0.3 x_0 - 0.18 x_1`` plus noise: every feature's inclusion is uncertain."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    weights = np.zeros(n_features)
    weights[:2] = [0.3, -0.18]
    y = np.where(X @ weights + 0.2 + rng.standard_normal(n_samples) > 0, 1, -1)
    return X, y


X_SMALL, Y_SMALL = weak_signal(30, 3, seed=4)


def gaussian_slab(X, y, update="collapsed", feature_names=FEATURES):
    return SpikeSlabSVM.gaussian_slab(
        X, y, pi=0.5, nu=1.0, update=update, feature_names=feature_names
    )


def laplace_zero(X, y, update="collapsed", feature_names=FEATURES):
    """``sigma2_u ~ IG(1, 1)`` rather than the paper's vague IG(0.01, 0.01): under that prior
    ``log sigma2_u`` has a prior sd of about 100, which 30 points with uncertain inclusions
    hardly narrow; no sampler (Gibbs, RJ, NUTS) mixed over it in a test's time (R-hat 1.3-1.5).
    """
    return SpikeSlabSVM.laplace_zero(
        X, y, rho=0.5, A_u=1.0, B_u=1.0, update=update, feature_names=feature_names
    )


PRIORS = {
    "gaussian-slab": (gaussian_slab, ["beta", "u", "gamma"], {}),
    "laplace-zero": (laplace_zero, ["beta", "u", "gamma", "sigma2_u"], {"noncentered": True}),
}
SAMPLERS = {
    "gibbs-collapsed": ("gibbs", "collapsed"),
    "gibbs-conditional": ("gibbs", "conditional"),
    "rj": ("rj", "collapsed"),
}
#: Each sampler's seed: compared samplers never start from the same points.
SEEDS = {"gibbs-collapsed": 1, "gibbs-conditional": 2, "rj": 3, "nuts": 4, "nuts-short": 4}


def fit_quietly(model, method, **options):
    """A seeded fit; whether it converged is for the test to assert."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        return bayesvm.fit(model, method=method, **{"seed": 1, "progressbar": False, **options})


@pytest.fixture(scope="module")
def small_fits():
    """Fits of the small problem, made once on first use: ``(prior, sampler) -> Fit``."""
    cache = {}

    def get(prior: str, sampler: str):
        if (prior, sampler) not in cache:
            make, _, nuts_options = PRIORS[prior]
            gibbs_lengths, _ = SAMPLER_RUNS["quick"]
            if sampler == "nuts":  # binary Gibbs-Metropolis moves the indicators slowly
                fit = fit_quietly(
                    make(X_SMALL, Y_SMALL),
                    "nuts",
                    chains=4,
                    draws=800,
                    tune=300,
                    cores=NUTS_CORES,
                    seed=SEEDS[sampler],
                    **nuts_options,
                )
            elif sampler == "nuts-short":  # the layout alone
                options = {**NUTS_LAYOUT_ONLY, **nuts_options}
                fit = fit_quietly(make(X_SMALL, Y_SMALL), "nuts", seed=SEEDS[sampler], **options)
            else:
                method, update = SAMPLERS[sampler]
                model = make(X_SMALL, Y_SMALL, update)
                fit = fit_quietly(model, method, seed=SEEDS[sampler], **gibbs_lengths)
            cache[prior, sampler] = fit
        return cache[prior, sampler]

    return get


# -- whole samplers ---------------------------------------------------------------------------
# PyMC's compound step needs half a minute to a minute of NUTS per prior; that to_pymc() states
# the blocks' density is proven without sampling (tests/models/test_log_density.py), that each
# update of the inclusions (collapsed, conditional, reversible jump) leaves the Gaussian slab's
# posterior invariant is tested exactly (tests/blocks/test_model_search.py), and the blocks the
# samplers share (the hinge's augmentation, the Gaussian coefficients) are checked against NUTS
# on the linear SVMs. So the default suite checks the two Gibbs samplers against each other on
# both priors; the slow suite checks reversible jump's whole sampler as well, and every sampler
# against NUTS on both priors.
@pytest.mark.slow
@pytest.mark.parametrize("sampler", list(SAMPLERS))
@pytest.mark.parametrize("prior", list(PRIORS))
def test_samplers_agree_with_pymc_compound_step(small_fits, prior, sampler):
    """Posterior means and sds of the intercept, the weights ``u = gamma v`` and the
    inclusion indicators (and ``log sigma2_u``) agree within Monte Carlo error with NUTS +
    binary Gibbs-Metropolis; every inclusion probability is uncertain (0.1 to 0.9).
    """
    _, var_names, _ = PRIORS[prior]
    fit, nuts = small_fits(prior, sampler), small_fits(prior, "nuts")
    inclusion = nuts.inclusion_probabilities()
    assert np.all((inclusion > 0.1) & (inclusion < 0.9))
    assert_fits_agree(fit, nuts, var_names)


@pytest.mark.parametrize(
    "sampler", ["gibbs-conditional", pytest.param("rj", marks=pytest.mark.slow)]
)
@pytest.mark.parametrize("prior", list(PRIORS))
def test_samplers_agree_with_collapsed_gibbs(small_fits, prior, sampler):
    """Conditional Gibbs (Luts-Ormerod App. B) and reversible jump agree with collapsed Gibbs
    (Polson-Scott's MCMC-SVM) within Monte Carlo error; every inclusion probability is
    uncertain (0.1 to 0.9).
    """
    _, var_names, _ = PRIORS[prior]
    collapsed = small_fits(prior, "gibbs-collapsed")
    inclusion = collapsed.inclusion_probabilities()
    assert np.all((inclusion > 0.1) & (inclusion < 0.9))
    assert_fits_agree(small_fits(prior, sampler), collapsed, var_names)


@pytest.mark.slow
@pytest.mark.parametrize("prior", list(PRIORS))
def test_samplers_agree_on_a_larger_problem(prior):
    """Six features, 60 points, longer chains: Gibbs (both updates) and reversible jump agree
    with each other and with PyMC's compound step (a few minutes).
    """
    make, var_names, nuts_options = PRIORS[prior]
    X, y = weak_signal(60, 6, seed=7)
    fits = {
        name: fit_quietly(
            make(X, y, update, None), method, seed=SEEDS[name], chains=4, draws=8000, tune=1000
        )
        for name, (method, update) in SAMPLERS.items()
    }
    nuts = fit_quietly(
        make(X, y, "collapsed", None),
        "nuts",
        seed=SEEDS["nuts"],
        chains=4,
        draws=3000,
        tune=1000,
        **nuts_options,
    )
    for fit in fits.values():
        assert_fits_agree(fit, nuts, var_names)
    assert_fits_agree(fits["gibbs-collapsed"], fits["rj"], var_names)


# -- VB -------------------------------------------------------------------------------------
def nearly_separable(seed: int):
    """Separable classes with three labels flipped."""
    X, y = separable(120, 3, seed=seed)
    y[[0, 1, 2]] *= -1
    return X, y


VB_DATA = {
    "logistic-1": simulate_logistic(100, 4, seed=1),
    "logistic-2": simulate_logistic(200, 8, seed=2),
    "separable": separable(120, 3, seed=3),
    "nearly-separable": nearly_separable(seed=4),
}
VB_PRIORS = {
    "gaussian-slab": lambda X, y: SpikeSlabSVM.gaussian_slab(X, y, pi=0.3, nu=2.0),
    "gaussian-slab-paper": lambda X, y: SpikeSlabSVM.gaussian_slab(X, y, pi=0.01, nu=100.0),
    "laplace-zero": lambda X, y: SpikeSlabSVM.laplace_zero(X, y, rho=0.3),
    "laplace-zero-paper": lambda X, y: SpikeSlabSVM.laplace_zero(X, y),
}


@pytest.mark.parametrize("data", list(VB_DATA))
@pytest.mark.parametrize("prior", list(VB_PRIORS))
def test_vb_bound_is_monotone(prior, data):
    """Luts-Ormerod Algorithm 3 is coordinate ascent on the bound: it never decreases by
    more than round-off, at any iteration (on separable data with the paper's vague slab
    ``nu = 100``, for all 10,000 of them: the ascent is that slow there).
    """
    X, y = VB_DATA[data]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        warnings.simplefilter("ignore", bayesvm.IdentifiabilityWarning)
        fit = bayesvm.fit(VB_PRIORS[prior](X, y), method="vb")
    trace = fit.lower_bound_trace
    assert trace.size > 2
    assert np.all(np.diff(trace) >= -ROUNDOFF * (1.0 + np.abs(trace[:-1])))
    assert np.all(np.isfinite(trace))


@pytest.mark.parametrize("prior", ["gaussian-slab", "laplace-zero"])
def test_vb_inclusion_probabilities_find_the_true_support(prior):
    """n = 300, d = 10, three nonzero weights: ``E_q[gamma_k] > 1/2`` exactly on them."""
    rng = np.random.default_rng(21)
    X = rng.standard_normal((300, 10))
    weights = np.zeros(10)
    weights[[1, 4, 7]] = [1.5, -1.0, 1.0]
    y = np.where(X @ weights + 0.5 * rng.standard_normal(300) > 0, 1, -1)
    model = (
        SpikeSlabSVM.gaussian_slab(X, y, pi=0.1, nu=10.0)
        if prior == "gaussian-slab"
        else SpikeSlabSVM.laplace_zero(X, y, rho=0.1)
    )
    probabilities = bayesvm.fit(model, method="vb").inclusion_probabilities()
    assert set(np.flatnonzero(probabilities.to_numpy() > 0.5)) == {1, 4, 7}


# -- the model's API --------------------------------------------------------------------------
METHODS = ["vb", "gibbs-collapsed", "rj", "nuts"]


def api_fit(small_fits, prior, method):
    """A fit of the small problem: VB's (made here, in milliseconds), a short NUTS run's (the
    layout does not need the long one), or a Gibbs sampler's.
    """
    if method == "vb":
        return bayesvm.fit(PRIORS[prior][0](X_SMALL, Y_SMALL), method="vb", seed=1)
    return small_fits(prior, "nuts-short" if method == "nuts" else method)


# The Laplace-zero prior's layout is slow: its NUTS fit compiles a graph no other default test
# uses (25 s on a fresh PyTensor cache); the Gaussian slab's runs every method by default.
@pytest.mark.parametrize(
    "prior",
    [
        pytest.param(name, marks=pytest.mark.slow) if name == "laplace-zero" else name
        for name in PRIORS
    ],
)
def test_every_method_stores_the_same_variables_and_dims(small_fits, prior):
    layouts = []
    for method in METHODS:
        posterior = api_fit(small_fits, prior, method).idata.posterior
        layouts.append({name: values.dims for name, values in posterior.data_vars.items()})
    assert all(layout == layouts[0] for layout in layouts)
    assert layouts[0]["gamma"] == ("chain", "draw", "effect")
    learned = {"sigma2_u", "b"} if prior == "laplace-zero" else set()
    assert set(layouts[0]) == {"beta", "v", "u", "gamma"} | learned


@pytest.mark.parametrize("method", METHODS)
def test_inclusion_probabilities_are_a_series_by_feature(small_fits, method):
    fit = api_fit(small_fits, "gaussian-slab", method)
    probabilities = fit.inclusion_probabilities()
    assert isinstance(probabilities, pd.Series)
    assert list(probabilities.index) == FEATURES
    assert probabilities.between(0.0, 1.0).all()
    if method != "vb":
        gamma = fit.idata.posterior["gamma"]
        np.testing.assert_allclose(probabilities, gamma.mean(("chain", "draw")))
        # u is zero exactly where gamma is
        u = fit.idata.posterior["u"].to_numpy()
        assert np.all((u == 0.0) == (gamma.to_numpy() == 0.0))


def test_inclusion_probabilities_of_a_model_without_gamma_raise(small_data):
    fit = bayesvm.fit(LinearSVM.from_arrays(*small_data), method="vb")
    with pytest.raises(ValueError, match="no inclusion indicators gamma"):
        fit.inclusion_probabilities()


@pytest.mark.parametrize("method", METHODS)
def test_predictions(small_fits, method):
    """On the Gaussian slab, whose NUTS graph the layout test has compiled already."""
    fit = api_fit(small_fits, "gaussian-slab", method)
    labels = fit.predict(X_SMALL[:7])
    assert labels.shape == (7,) and set(labels) <= {-1, 1}
    probabilities = fit.predict_proba(X_SMALL[:7])
    assert probabilities.shape == (7, 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    # the label is the sign of the posterior mean of f (Luts-Ormerod section 4)
    np.testing.assert_array_equal(labels, np.where(fit.decision_function(X_SMALL[:7]) >= 0, 1, -1))


def test_sample_stats_hold_the_model_size_and_the_acceptance_rate(small_fits):
    for method in ("gibbs-collapsed", "gibbs-conditional", "rj"):
        idata = small_fits("gaussian-slab", method).idata
        n_active = idata.sample_stats["n_active"]
        np.testing.assert_array_equal(n_active, idata.posterior["gamma"].sum("effect"))
        assert ("accept_rate" in idata.sample_stats) == (method == "rj")
    accept_rate = small_fits("gaussian-slab", "rj").idata.sample_stats["accept_rate"]
    assert 0.0 < float(accept_rate.mean()) < 1.0
    assert float(accept_rate.min()) >= 0.0 and float(accept_rate.max()) <= 1.0


@pytest.mark.parametrize("method", ["vb", "gibbs-conditional"])
@pytest.mark.parametrize("prior", list(PRIORS))
def test_a_fit_is_written_and_read_back(small_fits, prior, method, tmp_path):
    """``Fit.to_netcdf`` stores the model with its slab (the Laplace slab's hyperprior too)."""
    fit = api_fit(small_fits, prior, method)
    fit.to_netcdf(tmp_path / "fit.nc")
    loaded = bayesvm.load(tmp_path / "fit.nc")
    assert type(loaded.model.penalty) is type(fit.model.penalty)
    np.testing.assert_equal(vars(loaded.model.penalty), vars(fit.model.penalty))
    assert (loaded.model.inclusion_prior, loaded.model.update) == (0.5, fit.model.update)
    pd.testing.assert_series_equal(loaded.inclusion_probabilities(), fit.inclusion_probabilities())
    np.testing.assert_array_equal(loaded.predict(X_SMALL), fit.predict(X_SMALL))


@pytest.mark.parametrize("rho", [0.0, 1.0, -0.2, 1.5, float("nan")])
def test_prior_inclusion_probability_outside_the_unit_interval_is_rejected(rho):
    with pytest.raises(ValueError, match=r"prior inclusion probability must be in \(0, 1\)"):
        SpikeSlabSVM.laplace_zero(X_SMALL, Y_SMALL, rho=rho)
    with pytest.raises(ValueError, match=r"prior inclusion probability must be in \(0, 1\)"):
        SpikeSlabSVM.gaussian_slab(X_SMALL, Y_SMALL, pi=rho)


def test_bad_inputs_are_rejected_with_clear_messages():
    D = X_SMALL.copy()
    D[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SpikeSlabSVM.laplace_zero(D, Y_SMALL)
    with pytest.raises(ValueError, match="update must be 'collapsed' or 'conditional'"):
        SpikeSlabSVM.gaussian_slab(X_SMALL, Y_SMALL, update="metropolis")
    with pytest.raises(ValueError, match="nu"):
        SpikeSlabSVM.gaussian_slab(X_SMALL, Y_SMALL, nu=0.0)
    with pytest.raises(ValueError, match="A_u"):
        SpikeSlabSVM.laplace_zero(X_SMALL, Y_SMALL, A_u=-1.0)
    with pytest.raises(ValueError, match="prior must be 'laplace_zero' or 'gaussian_slab'"):
        SpikeSlabSVM.from_frame(pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1]}), "y", prior="ridge")


# -- PyMC's compound step ---------------------------------------------------------------------
def test_pymc_draws_gamma_by_binary_gibbs_and_the_rest_by_nuts():
    with gaussian_slab(X_SMALL, Y_SMALL).to_pymc() as pymc_model:
        methods = step_methods(pymc_model, ["beta", "v", "u", "gamma"])
    assert methods == {
        "beta": "NUTS",
        "v": "NUTS",
        "u": "NUTS + BinaryGibbsMetropolis",
        "gamma": "BinaryGibbsMetropolis",
    }
    with laplace_zero(X_SMALL, Y_SMALL).to_pymc() as pymc_model:
        methods = step_methods(pymc_model, ["sigma2_u", "b", "gamma"])
    assert methods == {"sigma2_u": "NUTS", "b": "NUTS", "gamma": "BinaryGibbsMetropolis"}
    with LinearSVM.from_arrays(X_SMALL, Y_SMALL).to_pymc() as pymc_model:
        assert set(step_methods(pymc_model, ["beta", "u"]).values()) == {"NUTS"}


def test_the_nuts_fit_and_its_docstring_say_it_is_a_compound_step(small_fits):
    attrs = api_fit(small_fits, "gaussian-slab", "nuts").idata.attrs
    assert attrs["step_methods"] == (
        "beta: NUTS; v: NUTS; u: NUTS + BinaryGibbsMetropolis; gamma: BinaryGibbsMetropolis"
    )
    docstring = " ".join(fit_nuts.__doc__.split())
    assert "compound step" in docstring and "BinaryGibbsMetropolis" in docstring


def test_compare_shows_which_step_drew_each_parameter(small_fits, tmp_path):
    fits = {
        "gibbs": small_fits("gaussian-slab", "gibbs-collapsed"),
        "nuts": api_fit(small_fits, "gaussian-slab", "nuts"),
    }
    table = bayesvm.compare(fits)
    nuts = table.xs("nuts", level="method")["step"]
    assert nuts["gamma[noise]"] == "BinaryGibbsMetropolis"
    assert nuts["beta[intercept]"] == nuts["v[age]"] == "NUTS"
    assert nuts["u[dose]"] == "NUTS + BinaryGibbsMetropolis"
    assert table.xs("gibbs", level="method")["step"].isna().all()
    # kept when the fit is written and read back
    path = tmp_path / "nuts.nc"
    fits["nuts"].to_netcdf(path)
    loaded = bayesvm.compare({"nuts": bayesvm.load(path)}).xs("nuts", level="method")
    pd.testing.assert_series_equal(loaded["step"], nuts)


def test_nutpie_refuses_a_model_with_discrete_variables():
    with pytest.raises(ValueError, match=r"cannot draw the discrete variables \['gamma'\]"):
        bayesvm.fit(gaussian_slab(X_SMALL, Y_SMALL), method="nuts", sampler="nutpie")
