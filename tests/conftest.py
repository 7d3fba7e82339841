import os
import warnings

os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")

import arviz as az  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.stats import chisquare, norm  # noqa: E402

import bayesvm  # noqa: E402


def simulate_logistic(n_samples: int, n_features: int, seed: int, intercept: float = 0.3):
    """Luts-Ormerod section 4.2 style data: y = +-1 with P(y=1) = expit(intercept + x^T w)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    w = rng.standard_normal(n_features)
    p = 1.0 / (1.0 + np.exp(-(intercept + X @ w)))
    y = np.where(rng.random(n_samples) < p, 1, -1)
    return X, y


def separable(n_samples: int, n_features: int, seed: int):
    """Two classes split by a hyperplane with a gap: linearly separable."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    score = X[:, 0] + 0.5 * X[:, 1 % n_features]
    keep = np.abs(score) > 0.5
    return X[keep], np.where(score[keep] > 0, 1, -1)


def goodness_of_fit(states: np.ndarray, probabilities: np.ndarray) -> float:
    """Chi-square p-value of independent draws of model indices against ``probabilities``;
    models expected fewer than 5 times are pooled into one cell.
    """
    observed = np.bincount(states, minlength=probabilities.shape[0])
    expected = probabilities * states.shape[0]
    rare = expected < 5.0
    observed = np.r_[observed[~rare], observed[rare].sum()]
    expected = np.r_[expected[~rare], expected[rare].sum()]
    if expected[-1] == 0.0:
        observed, expected = observed[:-1], expected[:-1]
    return float(chisquare(observed, expected).pvalue)


#: Share of ``1 + |objective|`` by which a step of a monotone objective (a VB bound, an EM
#: objective) may fall: round-off only. An evaluation sums O(n) terms of about the objective's
#: size in double precision (eps = 2.2e-16), so two evaluations at (nearly) the same point
#: differ by some 1e-14 of it (measured at convergence: a fall of 1.5e-12 on a bound of 89,
#: 1.7e-14 of it, on another machine's BLAS); 1e-12 leaves a margin of about 50 and is still a
#: thousand times tighter than the drivers' own check (``bayesvm.drivers.ROUNDOFF = 1e-9``).
MONOTONE_ROUNDOFF = 1e-12


def assert_never_decreases(trace, roundoff: float = MONOTONE_ROUNDOFF):
    """Each step of ``trace`` rises, or falls by at most ``roundoff * (1 + |objective|)``."""
    trace = np.asarray(trace, dtype=float)
    steps = np.diff(trace)
    allowed = roundoff * (1.0 + np.abs(trace[:-1]))
    worst = int(np.argmin(steps / allowed)) if steps.size else 0
    assert np.all(steps >= -allowed), (
        f"the objective fell by {-steps[worst]:.3g} at step {worst} (from {trace[worst]!r}); "
        f"round-off allows {allowed[worst]:.3g}"
    )


def assert_ascent_converged(fit):
    """A variational fit's ascent converged: it has no problem but, maybe, the Pareto k-hat of
    its ``q``, which judges mean-field ``q`` against the posterior rather than the ascent
    (:mod:`bayesvm.checks.pareto`; the hinge SVMs' ``q`` is about half as wide as their
    posteriors, k-hat 0.7 to 1.5).
    """
    others = [problem for problem in fit.problems if "Pareto k-hat" not in problem]
    assert not others, others


def assert_rows_converged_but_k_hat(rows):
    """Each of a case study's result ``rows`` (``converged`` and ``warnings`` columns) passed
    its checks but, maybe, ``q``'s Pareto k-hat (:func:`assert_ascent_converged`): converged,
    or its convergence warning names that problem alone (the problems of one warning are
    joined by ``"; "``, which the k-hat's does not hold).
    """
    pairs = zip(rows["converged"].astype(bool), rows["warnings"].fillna(""), strict=True)
    for converged, warned in pairs:
        notes = [note for note in warned.split(" | ") if "should not be trusted" in note]
        alone = all("trusted: the Pareto k-hat" in note and "; " not in note for note in notes)
        assert converged or (notes and alone), warned


#: Monte Carlo standard errors allowed on top of an approximation's bias allowance when a
#: deterministic approximation (VB) is compared with a sampler's estimates, scalar by scalar.
MCSE_MULTIPLE = 4.0


def sampler_moments(fit, var_name: str):
    """Posterior mean, sd and the mean's Monte Carlo standard error (from ArviZ's effective
    sample size) of each scalar of ``var_name`` in a sampler's ``fit``, flattened in order.
    """
    stats = az.summary(fit.idata, var_names=[var_name], kind="all", round_to="none")
    return stats["mean"].to_numpy(), stats["sd"].to_numpy(), stats["mcse_mean"].to_numpy()


def assert_means_within(means, fit, var_name: str, posterior_sds: float):
    """``means`` (an approximation's, e.g. VB's) of ``var_name`` are within ``posterior_sds``
    posterior sds (the approximation's bias allowance) of ``fit``'s Monte Carlo means, plus
    :data:`MCSE_MULTIPLE` Monte Carlo standard errors of those.
    """
    mean, sd, mcse = sampler_moments(fit, var_name)
    gap = np.abs(np.ravel(means) - mean)
    assert np.all(gap < posterior_sds * sd + MCSE_MULTIPLE * mcse), (var_name, gap / sd, mcse / sd)


@pytest.fixture
def small_data():
    return simulate_logistic(60, 3, seed=3)


@pytest.fixture(scope="module")
def heart_model():
    """Rätsch's heart data, realisation 1's training rows: 170 rows, 13 weights."""
    from bayesvm.models import MixedSVM

    X, y, splits = bayesvm.data.load_benchmark("heart")
    train, _ = splits[0]
    return MixedSVM.penalized(X[train], y[train])


#: Family-wise level of each statistical test's comparisons (Bonferroni within the test).
#: The seeds are fixed, but the chains differ between machines in their round-off, so each
#: test is a fresh draw on a new machine: with about 40 such tests in the default suite, 0.1 %
#: each keeps the suite's chance of a false alarm near 4 % (1 % each made it about 1 in 3).
FAMILY_LEVEL = 0.001
ESS_FLOOR = 400
RHAT_MAX = 1.01


def _comparable(idata, var_names=None):
    posterior = idata.posterior if var_names is None else idata.posterior[list(var_names)]
    posterior = posterior.copy()
    for name in ("sigma2_u", "nu", "alpha", "tau", "g", "eta"):
        if name in posterior:
            posterior[f"log_{name}"] = np.log(posterior[name])
            posterior = posterior.drop_vars(name)
    return az.InferenceData(posterior=posterior)


def _moments(idata, var_names=None):
    data = _comparable(idata, var_names)
    stats = az.summary(data, kind="all", round_to="none")
    stats["mcse_sd"] = az.summary(data, kind="diagnostics", round_to="none")["mcse_sd"]
    return stats


def assert_started_apart(first, second):
    """Two MCMC fits compared as samplers of one posterior ran from different seeds, and no
    chain of one begins where a chain of the other does: where both could be held in one basin
    of a multimodal posterior, agreement would prove nothing.
    """
    seeds = first.idata.attrs.get("seed"), second.idata.attrs.get("seed")
    assert None not in seeds and seeds[0] != seeds[1], f"both fits ran from seed {seeds[0]}"
    a, b = first.idata.posterior, second.idata.posterior
    names = sorted(
        name
        for name in set(a.data_vars) & set(b.data_vars)
        if np.issubdtype(a[name].dtype, np.floating)
    )

    def first_draws(posterior):  # each chain's first draw of every variable, one row a chain
        rows = [posterior[name].isel(draw=0).to_numpy() for name in names]
        return np.column_stack([row.reshape(posterior.sizes["chain"], -1) for row in rows])

    starts_a, starts_b = first_draws(a), first_draws(b)
    same = np.all(starts_a[:, None, :] == starts_b[None, :, :], axis=2)
    assert not np.any(same), "a chain of each fit draws the same first values"


def assert_fits_agree(first, second, var_names=None, statistics=("mean", "sd")):
    """Two MCMC fits agree on every scalar's posterior ``statistics`` (mean, sd).

    Each pair must pass a z-test on their Monte Carlo standard errors, Bonferroni-corrected over
    all comparisons at family-wise level 1%; ESS and R-hat floors for both, no divergent
    transition and no convergence problem. Learned scales and precisions (heavy-tailed under
    vague IG / Gamma priors, so their variance may not exist) are compared on the log scale. A
    scalar that never changed in either fit (an inclusion indicator always on) has no Monte
    Carlo error: its value must be the same in both.
    """
    assert_started_apart(first, second)
    a = _moments(first.idata, var_names)
    b = _moments(second.idata, var_names).loc[a.index]
    constant = (a["sd"] == 0.0) & (b["sd"] == 0.0)
    np.testing.assert_array_equal(a.loc[constant, "mean"], b.loc[constant, "mean"])
    a, b = a[~constant], b[~constant]
    critical = norm.isf(FAMILY_LEVEL / 2 / (len(statistics) * len(a)))
    for statistic in statistics:
        error = np.hypot(a[f"mcse_{statistic}"], b[f"mcse_{statistic}"])
        z = (a[statistic] - b[statistic]) / error
        assert np.all(np.abs(z) < critical), (statistic, z)
    for stats in (a, b):
        assert stats["ess_bulk"].min() > ESS_FLOOR
        assert stats["r_hat"].max() < RHAT_MAX
    for fit in (first, second):
        if "sample_stats" in fit.idata.groups() and "diverging" in fit.idata.sample_stats:
            assert int(fit.idata.sample_stats["diverging"].sum()) == 0
        assert fit.converged, fit.problems


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` starts one worker per core this process may use (pytest-xdist would count
    physical cores through psutil, which can be half the cores a container is given).
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


#: Test files by their measured time (``pytest --durations``), longest first. pytest-xdist hands
#: out whole files (``--dist loadfile``) in collection order (``--no-loadscope-reorder``: by
#: default it would order them by their number of tests), so these go first: a long file
#: started last would leave the other cores idle while it runs.
LONGEST_FILES = (
    "test_estimator.py",
    "test_kernel_gkm.py",
    "test_contract.py",
    "test_spike_slab.py",
    "test_persistence.py",
    "test_readme.py",
    "test_cli.py",
    "test_case_study_linlogit.py",
    "test_case_study_kernel.py",
    "test_gibbs_vs_nuts.py",
    "test_model_search.py",
    "test_logistic_regression.py",
    "test_gp_svm.py",
    "test_runner.py",
    "test_linear_regression.py",
    "test_case_study_toenail.py",
    "test_case_study_cardiac.py",
    "test_case_study_spam.py",
)


def pytest_collection_modifyitems(config, items):
    """Run the files of :data:`LONGEST_FILES` first, in that order (the rest keep theirs)."""
    rank = {name: position for position, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


#: Processes for NUTS's chains in the statistical tests: every core this process may use (PyMC's
#: default counts half the CPUs, as if they were hyper-threads: one on a 2-core machine), or one
#: where pytest-xdist already runs a test on each core.
NUTS_CORES = (
    1
    if os.environ.get("PYTEST_XDIST_WORKER")
    else min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
)


#: A NUTS fit that a test reads for its layout (names, dims, groups, step methods), not its
#: numbers: 20 + 20 draws, compiled in PyTensor's FAST_COMPILE mode (no graph rewrites, no C
#: code: on a fresh compile cache the spike-and-slab model's compound step took 9.5 s instead of
#: 28 s, the missing-data model's NUTS 23 s instead of 48 s). In the whole suite on a fresh
#: cache the statistical tests' fits then compile the C modules these would have: the files
#: using it are faster, the suite's total about the same.
NUTS_LAYOUT_ONLY = {
    "chains": 1,
    "draws": 20,
    "tune": 20,
    "compile_kwargs": {"mode": "FAST_COMPILE"},
    "progressbar": False,
}

#: Chain lengths of :func:`assert_samplers_agree`, ``(gibbs, nuts)``: the default suite's
#: ("quick": NUTS's iterations cost most of the suite's time) and the slow suite's ("long").
#: The comparison's tolerances follow from the chains' Monte Carlo errors either way. Two NUTS
#: chains of 1000 draws after 400 tuning steps were too short for the library's own R-hat check
#: (1.0105 on the random-intercept SVM); four of 1000 after 500 pass it with ESS above 900.
SAMPLER_RUNS = {
    "quick": (
        {"chains": 4, "draws": 4000, "tune": 500},
        {"chains": 4, "draws": 1000, "tune": 500},
    ),
    "long": (
        {"chains": 4, "draws": 5000, "tune": 1000},
        {"chains": 4, "draws": 2000, "tune": 1000},
    ),
}
#: ``run`` parameters of a test that compares samplers: quick by default, long with ``-m slow``.
RUNS = ["quick", pytest.param("long", marks=pytest.mark.slow)]


def assert_samplers_agree(model, nuts_options=None, run: str = "quick", gibbs_draws=None):
    """Gibbs and NUTS agree on every scalar's posterior mean and sd (:func:`assert_fits_agree`)
    with the chain lengths of ``SAMPLER_RUNS[run]`` (``gibbs_draws``: fewer kept Gibbs draws
    per chain, for a sampler that mixes well enough to need them not; ``nuts_options``: NUTS's
    options, over its lengths).
    """
    gibbs_options, nuts_lengths = SAMPLER_RUNS[run]
    if gibbs_draws is not None:
        gibbs_options = {**gibbs_options, "draws": gibbs_draws}
    gibbs = bayesvm.fit(model, method="gibbs", seed=1, progressbar=False, **gibbs_options)
    nuts = bayesvm.fit(
        model,
        method="nuts",
        seed=2,  # not Gibbs's: its chains start elsewhere (assert_started_apart)
        cores=NUTS_CORES,
        progressbar=False,
        **{**nuts_lengths, **(nuts_options or {})},
    )
    assert_fits_agree(gibbs, nuts)


@pytest.fixture(scope="session")
def svm_fits_by_method():
    """A fixed-penalty LinearSVM on 60 points fitted by VB, Gibbs and NUTS (short chains; the
    NUTS fit is :data:`NUTS_LAYOUT_ONLY`: the tests read shapes, files and each draw's
    predictions)."""
    import warnings

    from bayesvm.models import LinearSVM

    X, y = simulate_logistic(60, 3, seed=3)
    model = LinearSVM.from_arrays(X, y, alpha=0.5)
    options = {
        "vb": {},
        "gibbs": {"chains": 2, "draws": 300, "tune": 100, "progressbar": False},
        "nuts": NUTS_LAYOUT_ONLY,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)  # short chains
        fits = {method: bayesvm.fit(model, method, seed=5, **kw) for method, kw in options.items()}
    return X, y, fits
