"""Timings of the Bayesian generalized kernel models (Zhang, Dai, Wang & Jordan 2010).

The data are simulated, since the paper's NewsGroups corpus is not bundled: Breiman's
*ringnorm* (1996), one of the paper's section 4.2 benchmarks, two classes in 20 dimensions
with a quadratic boundary: ``x ~ N(0, 4 I)`` for one class and ``x ~ N(a 1, I)``, ``a = 2 /
sqrt(20)``, for the other, the classes equally likely. Every model is :class:`~bayesvm.models.
KernelGKM` with the paper's defaults (probit link, ``g`` and ``eta`` learned, section 4's
kernel width). Three measurements, each a table of :func:`run_kernel_bench`:

* ``paper_run``: FBGKM (``method="rj"``) for the paper's 10,000 sweeps (5,000 burn-in, every
  5th kept, one chain) at ``n = 500``, ``k_max = 200``, the size of the paper's NewsGroups run
  (2910 s in its Table 2); the wall time of :func:`bayesvm.fit` (its convergence checks
  included), its ratio to 2910 s, and the ESS per second of the model size and of ``g``.
* ``per_sweep``: the cost of one sweep against ``n`` at ``k_max = 200``: the setup (the kernel
  matrix and the starting state; with every vector active also ``K``'s eigendecomposition)
  timed apart from the sweeps, which are timed once the model size has settled (burn-in with
  :data:`SETTLE_MOVES` proposals per sweep, which leaves the posterior invariant as the
  paper's one does, then sweeps with one proposal each as the paper's); BGKM's Gibbs sweep
  (every vector active) beside it where it is feasible. ``exponent`` fits ``time ~ n^a`` by
  least squares on the log-log points, with the paper's Table 3 (total times, ``n`` from 300
  to 800) beside.
* ``bgkm``: BGKM by Gibbs, VB and PyMC's NUTS at a small ``n``, with ESS per second and their
  ratios to NUTS's, as the other benchmarks report.

Every row reports the machine's 1-minute load average (:func:`os.getloadavg`) when it was
measured. ``bayesvm bench --model kernel`` prints the tables (:func:`run`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesvm._arviz import arviz as az
from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.bench.timing import backend_table, load_average, power_law_exponent, timed_fit
from bayesvm.linalg import blas_threads_for
from bayesvm.models import KernelGKM
from bayesvm.samplers.gibbs import make_gibbs_kernel

__all__ = [
    "run",
    "run_kernel_bench",
    "time_paper_run",
    "time_sweeps",
    "fit_exponents",
    "compare_bgkm",
    "ringnorm",
    "PAPER_NEWSGROUPS_SECONDS",
    "TARGET_SECONDS",
    "PAPER_TABLE3",
    "SETTLE_MOVES",
    "SWEEP_SIZES",
    "BGKM_SETTINGS",
    "QUICK_BGKM_SETTINGS",
]

#: FBGKM on NewsGroups, n = 500, k_max = 200 (Table 2; Matlab on a Pentium 4).
PAPER_NEWSGROUPS_SECONDS = 2910.0
#: The time to beat for that run.
TARGET_SECONDS = 60.0
#: Table 3: total seconds of 10,000 sweeps on NewsGroups against n (k_max = 200).
PAPER_TABLE3 = {
    "n": [300, 400, 500, 600, 700, 800],
    "rj": [2085.0, 2804.0, 2910.0, 2973.0, 3610.0, 4327.0],
    "gibbs": [2467.0, 4674.0, 6270.0, 8340.0, 12070.0, 16730.0],
}
#: Reversible-jump proposals per burn-in sweep of :func:`time_sweeps` (the timed sweeps make
#: the paper's one).
SETTLE_MOVES = 25
#: Sizes of :func:`time_sweeps`; BGKM's Gibbs sweep (``O(n^3)``) only up to ``GIBBS_MAX_N``.
SWEEP_SIZES = (250, 500, 1000, 2000, 4000)
GIBBS_MAX_N = 1000
#: The paper's run (section 4: 10,000 sweeps, 5,000 burn-in, every 5th kept), and a smoke test.
PAPER_RUN = {"n": 500, "k_max": 200, "draws": 1000, "tune": 5000, "thin": 5}
QUICK_PAPER_RUN = {"n": 100, "k_max": 40, "draws": 50, "tune": 50, "thin": 2}
#: Sweeps of :func:`time_sweeps`: burn-in and timed, per method.
SWEEPS = {"rj": {"settle": 200, "timed": 300}, "gibbs": {"settle": 3, "timed": 20}}
QUICK_SWEEPS = {"rj": {"settle": 10, "timed": 10}, "gibbs": {"settle": 1, "timed": 3}}
#: BGKM at a small n: Gibbs at the paper's settings, NUTS at PyMC's usual 1000 + 1000.
BGKM_N = 80
BGKM_SETTINGS = {
    "vb": {},
    "gibbs": {"draws": 1000, "tune": 5000, "thin": 5, "chains": 1, "progressbar": False},
    "nuts": {"draws": 1000, "tune": 1000, "chains": 1, "cores": 1, "progressbar": False},
}
QUICK_BGKM_SETTINGS = {
    "vb": {},
    "gibbs": {"draws": 50, "tune": 50, "thin": 1, "chains": 1, "progressbar": False},
    "nuts": {"draws": 50, "tune": 50, "chains": 1, "cores": 1, "progressbar": False},
}
#: Variables whose smallest bulk ESS the ``bgkm`` table reports.
SUMMARISED = ["intercept", "beta", "g", "eta"]


def ringnorm(n_samples: int, rng: np.random.Generator, n_features: int = 20):
    """Breiman's ringnorm (module docstring): ``(X, y)`` with labels 0 (``N(0, 4 I)``) and 1
    (``N(a 1, I)``, ``a = 2 / sqrt(n_features)``).
    """
    y = rng.integers(0, 2, n_samples)
    inner = rng.normal(2.0 / np.sqrt(n_features), 1.0, (n_samples, n_features))
    outer = rng.normal(0.0, 2.0, (n_samples, n_features))
    return np.where(y[:, None] == 1, inner, outer), y


def time_paper_run(seed: int = 0, quick: bool = False) -> pd.DataFrame:
    """FBGKM for the paper's 10,000 sweeps at ``n = 500``, ``k_max = 200`` (module docstring).

    Returns
    -------
    pandas.DataFrame
        One row: ``n``, ``k_max``, ``sweeps``, ``seconds`` (wall time of :func:`bayesvm.fit`),
        ``paper_s``, ``ratio_to_paper`` (``seconds / paper_s``), ``target_s``,
        ``mean_active`` and ``accept_rate`` (over the kept draws), the bulk ESS of
        ``n_active`` and of ``g`` and their values per second, and ``load_1min``.
    """
    run = QUICK_PAPER_RUN if quick else PAPER_RUN
    X, y = ringnorm(run["n"], np.random.default_rng(seed))
    model = KernelGKM.from_arrays(X, y, k_max=run["k_max"])
    options = {key: run[key] for key in ("draws", "tune", "thin")}
    fit = timed_fit(model, "rj", {**options, "chains": 1, "progressbar": False}, seed)
    n_active = fit.idata.sample_stats["n_active"].to_numpy()
    ess_size = float(az.ess(n_active, method="bulk"))
    ess_g = float(az.ess(fit.idata.posterior["g"].to_numpy(), method="bulk"))
    return pd.DataFrame(
        [
            {
                "n": run["n"],
                "k_max": run["k_max"],
                "sweeps": fit.n_iter,
                "seconds": fit.runtime_s,
                "paper_s": PAPER_NEWSGROUPS_SECONDS,
                "ratio_to_paper": fit.runtime_s / PAPER_NEWSGROUPS_SECONDS,
                "target_s": TARGET_SECONDS,
                "mean_active": float(n_active.mean()),
                "accept_rate": float(fit.idata.sample_stats["accept_rate"].mean()),
                "ess_n_active": ess_size,
                "ess_g": ess_g,
                "ess_n_active_per_s": ess_size / fit.runtime_s,
                "ess_g_per_s": ess_g / fit.runtime_s,
                "load_1min": load_average(),
            }
        ]
    )


def time_sweeps(
    sizes: Sequence[int] = SWEEP_SIZES,
    k_max: int = 200,
    methods: Sequence[str] = ("rj", "gibbs"),
    seed: int = 0,
    quick: bool = False,
) -> pd.DataFrame:
    """Setup and per-sweep times against ``n`` (module docstring).

    Parameters
    ----------
    sizes : sequence of int
        Training sizes; ``"gibbs"`` (BGKM) is timed only up to ``GIBBS_MAX_N``.
    k_max : int
        Most active vectors of FBGKM (capped at ``n``; BGKM's are all ``n``).
    methods : sequence of str
        Among "rj" (FBGKM) and "gibbs" (BGKM).
    seed : int
        Seeds the data and the sweeps.
    quick : bool
        A few sweeps each (a smoke test).

    Returns
    -------
    pandas.DataFrame
        One row per method and size: ``method``, ``n``, ``k_max``, ``setup_s``,
        ``settle_sweeps`` and ``timed_sweeps``, ``ms_per_sweep``, ``mean_active`` over the
        timed sweeps, and ``load_1min``.
    """
    unknown = sorted(set(methods) - set(SWEEPS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose among {sorted(SWEEPS)}")
    sweeps = QUICK_SWEEPS if quick else SWEEPS
    rows = []
    for n in sizes:
        X, y = ringnorm(n, np.random.default_rng(seed))
        for method in methods:
            if method == "gibbs" and n > GIBBS_MAX_N:
                continue
            most = min(k_max, n) if method == "rj" else n  # BGKM: every vector active
            rows.append(
                {"method": method, "n": n, "k_max": most}
                | _time_sweeps(X, y, most, method, sweeps[method], seed)
            )
    return pd.DataFrame(rows)


def _time_sweeps(X, y, k_max: int, method: str, counts: dict, seed: int) -> dict:
    """Build the model and its starting state, burn in, then time sweeps one by one."""
    rng = np.random.default_rng(seed)
    jumps = method == "rj"
    start = time.perf_counter()
    model = KernelGKM.from_arrays(X, y, k_max=k_max, moves=1)  # timed: the paper's sweep
    with blas_threads_for(model.flops_per_iteration):
        if not jumps:  # K's eigendecomposition, computed once
            model.coefficients.all_active  # noqa: B018
        init, step, _ = make_gibbs_kernel(model.blocks, jumps=jumps)
        state = init(rng)
        setup_s = time.perf_counter() - start
        _, settle, _ = make_gibbs_kernel(model.blocks, jumps=jumps, moves=SETTLE_MOVES)
        for _ in range(counts["settle"]):
            state, _ = settle(state, rng)
        sizes = []
        start = time.perf_counter()
        for _ in range(counts["timed"]):
            state, _ = step(state, rng)
            sizes.append(model.coefficients.sample_stats(state["theta"])["n_active"])
        seconds = time.perf_counter() - start
    return {
        "setup_s": setup_s,
        "settle_sweeps": counts["settle"],
        "timed_sweeps": counts["timed"],
        "ms_per_sweep": 1000.0 * seconds / counts["timed"],
        "mean_active": float(np.mean(sizes)),
        "load_1min": load_average(),
    }


def fit_exponents(per_sweep: pd.DataFrame) -> pd.DataFrame:
    """The exponent ``a`` of ``time ~ n^a`` by least squares on the log-log points: of the
    time per sweep for each method of ``per_sweep`` (:func:`time_sweeps`), and of the paper's
    total times (:data:`PAPER_TABLE3`).
    """
    rows = []
    for method, group in per_sweep.groupby("method", sort=False):
        if len(group) >= 2:
            rows.append(_exponent(f"{method}: ms per sweep", group["n"], group["ms_per_sweep"]))
    for method in ("rj", "gibbs"):
        rows.append(_exponent(f"{method}: paper Table 3", PAPER_TABLE3["n"], PAPER_TABLE3[method]))
    return pd.DataFrame(rows)


def _exponent(label: str, n, seconds) -> dict:
    exponent = power_law_exponent(n, seconds)
    return {"timing": label, "n_from": int(min(n)), "n_to": int(max(n)), "exponent": exponent}


def compare_bgkm(
    methods: Sequence[str] = ("gibbs", "vb", "nuts"),
    n: int = BGKM_N,
    seed: int = 0,
    quick: bool = False,
) -> pd.DataFrame:
    """BGKM (every vector active) by each method at a small ``n`` (module docstring).

    Returns
    -------
    pandas.DataFrame
        One row per method: ``n``, ``seconds`` (wall time, PyTensor compilation included),
        ``n_iter``, ``ess_min`` (smallest bulk ESS over :data:`SUMMARISED`; samplers),
        ``ess_per_s``, ``time_ratio_nuts`` and ``ess_per_s_ratio_nuts`` (NaN without NUTS),
        and ``load_1min``.
    """
    settings = QUICK_BGKM_SETTINGS if quick else BGKM_SETTINGS
    X, y = ringnorm(n, np.random.default_rng(seed))
    return backend_table(KernelGKM.from_arrays(X, y), methods, settings, seed, SUMMARISED, n=n)


def run_kernel_bench(
    methods: Sequence[str] = ("gibbs", "vb", "nuts"), seed: int = 0, quick: bool = False
) -> dict[str, pd.DataFrame]:
    """All three measurements (module docstring).

    Parameters
    ----------
    methods : sequence of str
        BGKM's methods in the ``bgkm`` table, among "gibbs", "vb", "nuts".
    seed : int
        Seeds the data and the samplers.
    quick : bool
        Small sizes and short chains: a smoke test.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``paper_run`` (:func:`time_paper_run`), ``per_sweep`` (:func:`time_sweeps`),
        ``exponent`` (:func:`fit_exponents`) and ``bgkm`` (:func:`compare_bgkm`).
    """
    sizes = (60, 120) if quick else SWEEP_SIZES
    per_sweep = time_sweeps(sizes, k_max=40 if quick else 200, seed=seed, quick=quick)
    return {
        "paper_run": time_paper_run(seed, quick),
        "per_sweep": per_sweep,
        "exponent": fit_exponents(per_sweep),
        "bgkm": compare_bgkm(methods, n=30 if quick else BGKM_N, seed=seed, quick=quick),
    }


def run(options: BenchOptions) -> Tables:
    """:func:`run_kernel_bench` with the ``options`` given."""
    return run_kernel_bench(**options.keywords("methods"))
