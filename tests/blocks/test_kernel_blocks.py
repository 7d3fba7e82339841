"""The parts of the kernel model's blocks: entries on demand, factors kept, inputs refused."""

import numpy as np
import pytest

import bayesvm
from bayesvm.blocks.kernel import _Gram, _KernelPrior, _Sum
from bayesvm.drivers import run_mcmc
from bayesvm.models import KernelGKM
from bayesvm.models.kernel_gkm import mean_distance, rbf_kernel


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    return X, np.where(X[:, 0] * X[:, 1] > 0, "a", "b")


def test_entries_on_demand_equal_the_dense_matrices(data):
    X, _ = data
    kernel = rbf_kernel(X, X, 1.3)
    design = np.hstack([np.ones((20, 1)), kernel])
    weights = np.random.default_rng(1).uniform(0.5, 2.0, 20)
    prior = np.zeros((21, 21))
    prior[0, 0], prior[1:, 1:] = 0.7, 2.0 * kernel
    precision = design.T @ (weights[:, None] * design) + prior
    lazy = _Sum(_Gram(design, weights), _KernelPrior(kernel, 0.7, 2.0))
    order = [0, 5, 3, 17]
    np.testing.assert_allclose(lazy[np.ix_(order, order)], precision[np.ix_(order, order)])
    np.testing.assert_allclose(lazy[order, 9], precision[order, 9])
    assert lazy[9, 9].shape == () and np.isclose(lazy[9, 9], precision[9, 9])
    assert lazy[np.ix_([], [])].shape == (0, 0)


def test_the_default_lengthscale_is_the_mean_distance_and_the_kernel_is_section_4s(data):
    X, y = data
    model = KernelGKM.from_arrays(X, y)
    assert model.lengthscale == pytest.approx(mean_distance(X))
    distance = np.linalg.norm(X[3] - X[7])
    assert model.kernel_matrix[3, 7] == pytest.approx(np.exp(-(distance**2) / model.lengthscale**2))
    assert model.k_max == 20 and model.likelihood == "probit"
    assert model.var_names == ("intercept", "beta", "gamma", "eta", "g")
    fixed = KernelGKM.from_arrays(X, y, g=2.0, eta=0.5)
    assert fixed.var_names == ("intercept", "beta", "gamma")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"kernel": "linear"}, "kernel must be one of"),
        ({"likelihood": "logit"}, "likelihood must be one of"),
        ({"k_max": 0}, "k_max must be in"),
        ({"k_max": 21}, "k_max must be in"),
        ({"k_max": 2.5}, "k_max must be an integer"),
        ({"g": -1.0}, "g"),
        ({"lengthscale": 0.0}, "lengthscale"),
        ({"a_g": np.inf}, "a_g"),
        ({"moves": -1}, "moves must be"),
    ],
)
def test_bad_options_are_refused(data, options, message):
    X, y = data
    with pytest.raises(ValueError, match=message):
        KernelGKM.from_arrays(X, y, **options)


def test_missing_values_and_wrong_widths_are_refused(data):
    X, y = data
    X_missing = X.copy()
    X_missing[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelGKM.from_arrays(X_missing, y)
    model = KernelGKM.from_arrays(X, y)
    with pytest.raises(ValueError, match="columns"):
        model.kernel_between(np.ones((3, 5)))


@pytest.mark.filterwarnings("ignore::bayesvm.exceptions.ConvergenceWarning")
def test_kept_factors_give_the_same_chain_as_fresh_ones(data):
    """A jump's factors kept for the next sweep equal fresh factorisations: two fits with
    the same seed, one with the kept factors computed afresh (in the same column order)
    before every jump, agree to round-off.
    """
    X, y = data
    fits = []
    for drop in (False, True):
        model = KernelGKM.from_arrays(X, y, k_max=10)
        theta = model.coefficients
        if drop:
            jump = theta.jump_step

            def fresh_jump(params, rng, moves=None, jump=jump, theta=theta):
                order = theta._order(params.inclusion)
                active = np.asarray(order[1:], dtype=int) - 1  # empty: no vector active
                fresh = np.linalg.cholesky(theta.kernel[np.ix_(active, active)])
                theta._precision_factor = ((), None)
                theta._kernel_factor = (tuple(order), fresh)
                return jump(params, rng, moves)

            theta.jump_step = fresh_jump
        options = dict(draws=50, tune=50, thin=1, chains=1, seed=4, progressbar=False)
        fits.append(bayesvm.fit(model, method="rj", **options))
    for name in ("intercept", "beta", "g", "eta"):
        np.testing.assert_allclose(
            fits[0].idata.posterior[name], fits[1].idata.posterior[name], rtol=1e-6, atol=1e-8
        )
    np.testing.assert_array_equal(
        fits[0].idata.posterior["gamma"], fits[1].idata.posterior["gamma"]
    )


def test_thinning_keeps_every_thin_th_sweep_after_burn_in():
    def step(state, rng):
        return state + 1, {}

    result = run_mcmc(
        lambda rng: 0,
        step,
        lambda s: {"x": s},
        rng=np.random.default_rng(0),
        chains=2,
        tune=10,
        draws=4,
        thin=3,
        progressbar=False,
    )
    np.testing.assert_array_equal(result.samples["x"][0], [13, 16, 19, 22])
    assert result.n_iter == 22
    with pytest.raises(ValueError, match="thin"):
        run_mcmc(
            lambda rng: 0,
            step,
            lambda s: {"x": s},
            rng=np.random.default_rng(0),
            chains=1,
            tune=0,
            draws=1,
            thin=0,
            progressbar=False,
        )
