"""The parts of the kernel model's blocks: entries on demand, factors kept, inputs refused."""

import numpy as np
import pytest

import bayesvm
from bayesvm.blocks.active_set import PIVOT_TOL, ActiveCholesky
from bayesvm.blocks.kernel import _Gram, _KernelPrior, _Sum
from bayesvm.blocks.kernel_support import AdmittedSet
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
    for column in (0, 9):  # one column's rows, the intercept's included, by either path
        np.testing.assert_allclose(
            lazy[[*order, column], column], precision[[*order, column], column]
        )
        np.testing.assert_allclose(
            lazy[np.ix_([*order, column], [column])][:, 0], lazy[[*order, column], column]
        )
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


def test_the_precision_factor_through_the_whitened_weights_is_its_cholesky(data):
    """``diag(1, L) chol(Pw)`` of an active set is the lower Cholesky factor of ``P_AA =
    [1, K_A]^T W [1, K_A] + diag(eta, g K_AA)``, with unit and with other weights.
    """
    X, y = data
    theta = KernelGKM.from_arrays(X, y).coefficients
    order = [0, 5, 3, 17, 8]
    columns = theta.design[:, order]
    prior = np.zeros((5, 5))
    prior[0, 0], prior[1:, 1:] = 0.7, 2.0 * theta.kernel[np.ix_([4, 2, 16, 7], [4, 2, 16, 7])]
    for weights in (None, np.random.default_rng(2).uniform(0.5, 2.0, 20)):
        unit = np.ones(20) if weights is None else weights
        precision = columns.T @ (unit[:, None] * columns) + prior
        factor = theta._precision_cholesky(order, 0.7, 2.0, weights)
        np.testing.assert_allclose(factor, np.tril(factor))
        np.testing.assert_allclose(factor, np.linalg.cholesky(precision), rtol=1e-10)


@pytest.mark.filterwarnings("ignore::bayesvm.exceptions.ConvergenceWarning")
def test_a_start_on_a_kernel_of_low_numerical_rank_does_not_break_the_first_sweep():
    """Banana's first 200 training rows (two inputs): the dispersed start's ``K_AA`` is
    singular to round-off in index order and ``P_AA`` had no Cholesky factor, so Gibbs broke
    down at its first sweep; the start now keeps what complete pivoting admits and ``P_AA`` is
    factored through the whitened weights.
    """
    X, y, splits = bayesvm.data.load_benchmark("banana")
    train = splits[0][0][:200]
    model = KernelGKM.from_arrays(X[train], y[train])
    fit = bayesvm.fit(model, "gibbs", tune=1, draws=2, chains=2, seed=0, progressbar=False)
    assert np.isfinite(fit.idata.posterior["beta"]).all()


def test_an_active_set_singular_to_round_off_in_index_order_still_has_a_precision_factor():
    """100 of banana's first 200 training points, each independent of those drawn before it
    in ``K``: ``K_AA`` has a Schur complement of order 1e-14 in index order, where ``P_AA``
    has no Cholesky factor in floating point; in :meth:`_order`'s pivoted order through the
    whitened weights, ``L L^T`` is ``P_AA`` to round-off of ``P``'s size.
    """
    X, y, splits = bayesvm.data.load_benchmark("banana")
    train = splits[0][0][:200]
    theta = KernelGKM.from_arrays(X[train], y[train]).coefficients
    factor = ActiveCholesky(theta.kernel, [])
    for j in np.random.default_rng(1).permutation(200):
        border, schur = factor.border(int(j))
        if schur > PIVOT_TOL and len(factor.order) < 100:
            factor.append(int(j), border, schur)
    inclusion = np.zeros(200)
    inclusion[factor.order] = 1.0
    precision, _ = theta._matrices(16.0, 0.44)
    in_index_order = [0, *(np.flatnonzero(inclusion) + 1)]
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(precision[np.ix_(in_index_order, in_index_order)])
    order = theta._order(inclusion)
    lower = theta._precision_cholesky(order, 16.0, 0.44)
    dense = precision[np.ix_(order, order)]
    assert np.abs(lower @ lower.T - dense).max() < 1e-12 * np.abs(dense).max()


def test_start_sizes_are_log_uniform_up_to_half_of_k_max():
    """Sizes of dispersed starts with ``k_max = 60`` (so up to 30 vectors): every size within
    1-30, and ``log size`` uniform on ``[0, log 30]`` up to rounding: its mean ``log(30) / 2
    = 1.70`` within 4 standard errors (sd 1.01 after rounding, 2000 draws: 0.023) and the
    rounding's shift of the mean (-0.017, from 1e7 draws), and both ends of the range reached.
    """
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 2))
    theta = KernelGKM.from_arrays(X, np.tile([1, -1], 40), k_max=60).coefficients
    sizes = np.array([theta.start_size(rng) for _ in range(2000)])
    assert sizes.min() >= 1 and sizes.max() <= 30
    assert abs(np.log(sizes).mean() - np.log(30) / 2) < 4 * 0.023 + 0.017
    assert (sizes <= 5).any() and (sizes >= 25).any()
    start = theta.initial_value({}, np.random.default_rng(6))
    assert 1 <= start.n_active <= 30


def test_admitted_sets_do_not_depend_on_order_and_keep_their_subsets():
    """A point within ``1e-8`` of another has a Schur complement of about ``1e-16`` of its
    diagonal entry in it: no set holding both is admitted, in any order, while each set
    without one of them is, and every subset of an admitted set is admitted.
    """
    rng = np.random.default_rng(2)
    X = rng.normal(size=(8, 2))
    X[7] = X[0] + 1e-8
    theta = KernelGKM.from_arrays(X, np.tile([1, -1], 4)).coefficients
    both = np.array([0, 3, 5, 7])
    for order in (both, both[::-1], rng.permutation(both)):
        assert theta.active_factor(order) is None
    assert theta.active_factor(np.arange(7)) is not None
    for dropped in range(7):
        subset = np.delete(np.arange(7), dropped)
        positions, factor = theta.active_factor(subset)
        block = theta.kernel[np.ix_(subset[positions], subset[positions])]
        np.testing.assert_allclose(factor @ factor.T, block, atol=1e-12)


def test_sets_one_move_away_are_admitted_as_a_fresh_factorisation_admits_them():
    """On 60 points of a line under a lengthscale of a quarter of their range (few digits of
    rank: no set holds more than about a dozen vectors), 3000 random births, deaths and swaps
    from the last admitted set: :class:`AdmittedSet` admits exactly the sets that
    :meth:`active_factor` admits, refusals included, most of them without a factorisation.
    """
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, size=(60, 1))
    theta = KernelGKM.from_arrays(x, np.where(x[:, 0] > 0, 1, -1), lengthscale=1.5).coefficients
    current = [3]
    support = AdmittedSet(theta, np.array(current), np.sqrt(theta.kernel[3:4, 3:4]))
    fresh_tests = []
    fresh = theta.active_factor
    theta.active_factor = lambda active: fresh_tests.append(active) or fresh(active)
    sizes, refused = [], 0
    for _ in range(3000):
        out = current[rng.integers(len(current))] if current else None
        into = int(rng.choice(np.setdiff1d(np.arange(60), current)))
        proposed = {
            0: [*current, into],
            1: [column for column in current if column != out],
            2: [*[column for column in current if column != out], into],
        }[int(rng.integers(3)) if current else 0]
        expected = fresh(np.array(proposed, dtype=int)) is not None
        assert support.admits([0, *(np.array(proposed) + 1)]) == expected
        if expected:
            current = proposed
        refused += not expected
        sizes.append(len(current))
    assert max(sizes) >= 8 and refused > 50
    assert len(fresh_tests) < 1000


@pytest.mark.filterwarnings("ignore::bayesvm.exceptions.ConvergenceWarning")
def test_reversible_jump_stays_in_admitted_sets_on_a_kernel_of_low_rank():
    """On 60 points of a line under a lengthscale of a quarter of their range, ``K`` has few
    digits of rank: many sets are independent in one order of their vectors and not in
    another. The chain runs, both kinds of jump move the set, and every set it visits is one
    :meth:`active_factor` admits (when the birth-and-death moves tested each vector against
    those before it, every one of four seeds broke down within 35 sweeps).
    """
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, size=(60, 1))
    y = np.where(np.sin(2 * x[:, 0]) + 0.3 * rng.standard_normal(60) > 0, 1, -1)
    model = KernelGKM.from_arrays(x, y, lengthscale=1.5)
    options = dict(draws=60, tune=20, thin=1, chains=1, seed=0, progressbar=False)
    fit = bayesvm.fit(model, "rj", **options)
    gamma = fit.idata.posterior["gamma"].values.reshape(-1, 60)
    assert np.ptp(gamma.sum(axis=1)) > 0
    assert fit.idata.sample_stats["laplace_accept_rate"].mean() > 0
    for inclusion in gamma:
        assert model.coefficients.active_factor(np.flatnonzero(inclusion)) is not None
