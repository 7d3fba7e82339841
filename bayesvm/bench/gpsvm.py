"""Timings of the Bayesian nonlinear SVM (Wenzel, Galy-Fajou, Deutsch & Kloft 2017).

:class:`~bayesvm.models.GPSVM` with the kernel ``k(x, x') = variance * exp(-||x - x'||^2 /
lengthscale^2)``. Three measurements, each a table of :func:`run_gpsvm_bench`:

* ``waveform``: the paper's Table 1 protocol on Rätsch's *waveform* (all 5000 rows, 21
  features), 10-fold cross-validation: S-BSVM (``"svi"``, 100 k-means inducing points,
  minibatches of 10, length-scale 5.0 fixed, as in section 5.2 and Figure 1) and B-BSVM
  (``"vb"``, the same inducing points) timed to convergence, with the held-out error; beside
  them the paper's S-BSVM, ECM and GPC times (12.5 s, 264 s, 8691 s) and its error 0.09 ± 0.02.
  ``seconds`` is the wall time of :func:`bayesvm.fit`; ``setup_s`` (k-means and the kernel's
  factor) is apart, as the paper's time leaves the inducing points' choice out.
* ``throughput``: S-BSVM's rows per second with 64 inducing points and minibatches of 100 on
  :func:`susy_like` data (18 features, as SUSY), in memory and as a Dask array generated chunk
  by chunk (:meth:`~bayesvm.models.GPSVM.from_dask`), and the peak of the memory Python
  allocates (:mod:`tracemalloc`, NumPy's buffers included) while the model is built and
  fitted: with Dask it holds a few chunks whatever ``n``.
* ``full_gp``: the full GP (no inducing points) at a small ``n`` by B-BSVM, Gibbs (eq. 5) and
  PyMC's NUTS, with the smallest bulk ESS of ``f`` per second and ratios to NUTS's.

Every row reports the machine's 1-minute load average (:func:`os.getloadavg`) when it was
measured. ``bayesvm bench --model gp`` prints the tables (:func:`run`).
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.bench.timing import backend_table, load_average, timed_fit
from bayesvm.data import load_benchmark
from bayesvm.models import GPSVM

__all__ = [
    "run",
    "run_gpsvm_bench",
    "time_waveform",
    "time_throughput",
    "compare_full_gp",
    "susy_like",
    "susy_like_dask",
    "PAPER_WAVEFORM",
    "WAVEFORM_RUN",
    "THROUGHPUT_RUN",
    "THROUGHPUT_SIZES",
    "TARGET_SECONDS",
    "TARGET_POINTS_PER_S",
    "FULL_GP_SETTINGS",
]

#: Table 1, waveform: S-BSVM's, ECM's and GPC's training times (one 2.9 GHz core, section 5)
#: and S-BSVM's 10-fold error (mean, sd).
PAPER_WAVEFORM = {"svi_s": 12.5, "ecm_s": 264.0, "gpc_s": 8691.0, "error": 0.09, "error_sd": 0.02}
#: The time to beat for S-BSVM on waveform.
TARGET_SECONDS = 5.0
#: The paper's waveform settings (section 5.2, Figure 1), and a smoke test on a subset.
WAVEFORM_RUN = {"folds": 10, "rows": None, "inducing": 100, "batch_size": 10, "lengthscale": 5.0}
QUICK_WAVEFORM_RUN = {"folds": 2, "rows": 400, "inducing": 20, "batch_size": 10, "lengthscale": 5.0}
#: S-BSVM's throughput: SUSY's 18 features, 64 inducing points, minibatches of 100, rows
#: generated in chunks; ``steps`` timed, ``memory_steps`` under :mod:`tracemalloc`.
THROUGHPUT_RUN = {
    "n_features": 18,
    "inducing": 64,
    "batch_size": 100,
    "chunk_rows": 20_000,
    "steps": 3000,
    "memory_steps": 1000,
    "test_rows": 5000,
}
QUICK_THROUGHPUT_RUN = {
    **THROUGHPUT_RUN,
    "inducing": 8,
    "batch_size": 20,
    "chunk_rows": 500,
    "steps": 60,
    "memory_steps": 60,
    "test_rows": 200,
}
#: ``(storage, n)`` of :func:`time_throughput`.
THROUGHPUT_SIZES = (("memory", 100_000), ("dask", 100_000), ("dask", 1_000_000))
QUICK_THROUGHPUT_SIZES = (("memory", 1000), ("dask", 1000), ("dask", 3000))
#: Rows per second to reach on two cores.
TARGET_POINTS_PER_S = 20_000.0
#: The full GP at a small n: Gibbs and NUTS at PyMC's usual 1000 + 1000, one chain.
FULL_GP_N = 80
FULL_GP_SETTINGS = {
    "vb": {},
    "gibbs": {"draws": 1000, "tune": 1000, "chains": 1, "progressbar": False},
    "nuts": {"draws": 1000, "tune": 1000, "chains": 1, "cores": 1, "progressbar": False},
}
QUICK_FULL_GP_SETTINGS = {
    "vb": {},
    "gibbs": {"draws": 50, "tune": 50, "chains": 1, "progressbar": False},
    "nuts": {"draws": 50, "tune": 50, "chains": 1, "cores": 1, "progressbar": False},
}


def _folds(n_rows: int, folds: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The test rows of each fold of a random ``folds``-fold split."""
    return np.array_split(rng.permutation(n_rows), folds)


def time_waveform(
    methods: Sequence[str] = ("svi", "vb"), seed: int = 0, quick: bool = False
) -> pd.DataFrame:
    """S-BSVM and B-BSVM on waveform by 10-fold cross-validation (module docstring).

    Parameters
    ----------
    methods : sequence of str
        Among "svi" (S-BSVM, minibatches of 10) and "vb" (B-BSVM).
    seed : int
        Seeds the folds, k-means and the minibatches.
    quick : bool
        Two folds of 400 rows, 20 inducing points (a smoke test).

    Returns
    -------
    pandas.DataFrame
        One row per method: ``folds``, ``n_train``, ``inducing``, ``setup_s`` (mean over
        folds), ``seconds`` and ``seconds_sd``, ``epochs`` (passes over the training rows, mean),
        ``converged`` (fraction of folds), ``error`` and ``error_sd`` over folds, the paper's
        ``paper_error`` and ``paper_error_sd``, ``ratio_to_paper`` (``seconds`` over the
        paper's S-BSVM time), ``ratio_to_ecm``, ``ratio_to_gpc``, ``target_s``,
        ``error_within_sd`` (the error within one paper sd of the paper's), ``load_1min``.
    """
    unknown = sorted(set(methods) - {"svi", "vb"})
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose among ['svi', 'vb']")
    run = QUICK_WAVEFORM_RUN if quick else WAVEFORM_RUN
    X, y, _ = load_benchmark("waveform")
    rng = np.random.default_rng(seed)
    if run["rows"] is not None:
        rows = rng.choice(y.size, run["rows"], replace=False)
        X, y = X[rows], y[rows]
    records = {method: [] for method in methods}
    for test in _folds(y.size, run["folds"], rng):
        train = np.setdiff1d(np.arange(y.size), test)
        start = time.perf_counter()
        model = GPSVM.from_arrays(
            X[train], y[train], lengthscale=run["lengthscale"], inducing=run["inducing"], seed=seed
        )
        model.whitening  # noqa: B018 (the kernel's factor, part of the setup)
        setup_s = time.perf_counter() - start
        for method in methods:
            options = {"batch_size": run["batch_size"], "progressbar": False}
            fit = timed_fit(model, method, options if method == "svi" else {}, seed)
            steps_per_epoch = np.ceil(train.size / run["batch_size"]) if method == "svi" else 1
            records[method].append(
                {
                    "setup_s": setup_s,
                    "seconds": fit.runtime_s,
                    "epochs": fit.n_iter / steps_per_epoch,
                    "converged": fit.converged,
                    "error": float(np.mean(fit.predict(X[test]) != y[test])),
                    "n_train": train.size,
                }
            )
    paper = PAPER_WAVEFORM
    rows = []
    for method, folds in records.items():
        table = pd.DataFrame(folds)
        error = table["error"].mean()
        seconds = table["seconds"].mean()
        rows.append(
            {
                "method": method,
                "folds": len(folds),
                "n_train": int(table["n_train"].mean()),
                "inducing": run["inducing"],
                "setup_s": table["setup_s"].mean(),
                "seconds": seconds,
                "seconds_sd": table["seconds"].std(),
                "epochs": table["epochs"].mean(),
                "converged": table["converged"].mean(),
                "error": error,
                "error_sd": table["error"].std(),
                "paper_error": paper["error"],
                "paper_error_sd": paper["error_sd"],
                "ratio_to_paper": seconds / paper["svi_s"],
                "ratio_to_ecm": seconds / paper["ecm_s"],
                "ratio_to_gpc": seconds / paper["gpc_s"],
                "target_s": TARGET_SECONDS,
                "error_within_sd": bool(abs(error - paper["error"]) <= paper["error_sd"]),
                "load_1min": load_average(),
            }
        )
    return pd.DataFrame(rows)


def susy_like(n_samples: int, seed: int, block: int = 0, n_features: int = 18):
    """``n_samples`` rows of a SUSY-sized problem: ``x ~ N(0, I)`` and ``y = sign(x_1 x_2 +
    (x_3^2 + x_4^2 + x_5^2) / 3 - 1 + x_6 / 2 + e)``, ``e ~ N(0, 0.3^2)``, a nonlinear boundary
    with label noise (the physics of SUSY is not simulated). ``block`` numbers independent
    chunks of one data set.
    """
    rng = np.random.default_rng([seed, block])
    X = rng.standard_normal((n_samples, n_features))
    score = X[:, 0] * X[:, 1] + (X[:, 2:5] ** 2).sum(axis=1) / 3.0 - 1.0 + X[:, 5] / 2.0
    y = np.where(score + rng.normal(0.0, 0.3, n_samples) > 0.0, 1.0, -1.0)
    return X, y


def susy_like_dask(n_samples: int, chunk_rows: int, seed: int, n_features: int = 18):
    """:func:`susy_like` as Dask arrays whose chunks are generated when read (never all in
    memory): ``(X, y)`` chunked by ``chunk_rows`` rows.
    """
    import dask
    import dask.array as da

    sizes = [chunk_rows] * (n_samples // chunk_rows)
    if n_samples % chunk_rows:
        sizes.append(n_samples % chunk_rows)
    parts = []
    for block, rows in enumerate(sizes):
        both = dask.delayed(_stacked)(rows, seed, block, n_features)
        parts.append(da.from_delayed(both, shape=(rows, n_features + 1), dtype=float))
    data = da.concatenate(parts)
    return data[:, :n_features], data[:, n_features]


def _stacked(n_samples: int, seed: int, block: int, n_features: int) -> np.ndarray:
    X, y = susy_like(n_samples, seed, block, n_features)
    return np.column_stack([X, y])


def time_throughput(
    sizes: Sequence[tuple[str, int]] = THROUGHPUT_SIZES, seed: int = 0, quick: bool = False
) -> pd.DataFrame:
    """S-BSVM's rows per second and peak memory on :func:`susy_like` data (module docstring).

    Parameters
    ----------
    sizes : sequence of (storage, n)
        ``storage`` "memory" (NumPy arrays) or "dask" (:func:`susy_like_dask`).
    seed : int
        Seeds the data, k-means and the minibatches.
    quick : bool
        Tiny sizes and a few steps (a smoke test).

    Returns
    -------
    pandas.DataFrame
        One row per size: ``storage``, ``n``, ``chunk_rows``, ``inducing``, ``batch_size``,
        ``steps``, ``seconds`` (wall time of :func:`bayesvm.fit` for ``steps`` steps),
        ``points_per_s`` (``steps * batch_size / seconds``), ``target_points_per_s``,
        ``test_error`` (on fresh rows), ``peak_mib`` (:mod:`tracemalloc`'s peak over building
        and fitting for ``memory_steps`` steps), ``data_mib`` (the size of ``X``), and
        ``load_1min``.
    """
    run = QUICK_THROUGHPUT_RUN if quick else THROUGHPUT_RUN
    unknown = sorted({storage for storage, _ in sizes} - {"memory", "dask"})
    if unknown:
        raise ValueError(f"unknown storage {unknown}; choose among ['dask', 'memory']")
    X_test, y_test = susy_like(run["test_rows"], seed + 1, n_features=run["n_features"])
    rows = []
    for storage, n in sizes:
        model = _throughput_model(storage, n, run, seed)
        fit = timed_fit(model, "svi", _throughput_options(run, "steps"), seed)
        tracemalloc.start()
        try:
            timed_fit(
                _throughput_model(storage, n, run, seed), "svi", _throughput_options(run), seed
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rows.append(
            {
                "storage": storage,
                "n": n,
                "chunk_rows": run["chunk_rows"] if storage == "dask" else n,
                "inducing": run["inducing"],
                "batch_size": run["batch_size"],
                "steps": fit.n_iter,
                "seconds": fit.runtime_s,
                "points_per_s": fit.n_iter * run["batch_size"] / fit.runtime_s,
                "target_points_per_s": TARGET_POINTS_PER_S,
                "test_error": float(np.mean(fit.predict(X_test) != y_test)),
                "peak_mib": peak / 2**20,
                "data_mib": n * run["n_features"] * 8 / 2**20,
                "load_1min": load_average(),
            }
        )
    return pd.DataFrame(rows)


def _throughput_model(storage: str, n: int, run: dict, seed: int) -> GPSVM:
    if storage == "dask":
        X, y = susy_like_dask(n, run["chunk_rows"], seed, run["n_features"])
        return GPSVM.from_dask(X, y, inducing=run["inducing"], seed=seed)
    X, y = susy_like(n, seed, n_features=run["n_features"])
    return GPSVM.from_arrays(X, y, inducing=run["inducing"], seed=seed)


def _throughput_options(run: dict, steps: str = "memory_steps") -> dict:
    """A fixed number of steps (``tol=0`` never stops early), few draws from ``q``."""
    return {
        "batch_size": run["batch_size"],
        "max_iter": run[steps],
        "tol": 0.0,
        "draws": 10,
        "progressbar": False,
    }


def compare_full_gp(
    methods: Sequence[str] = ("vb", "gibbs", "nuts"),
    n: int = FULL_GP_N,
    seed: int = 0,
    quick: bool = False,
) -> pd.DataFrame:
    """The full GP on ``n`` waveform rows (length-scale 5.0) by each method (module docstring).

    Returns
    -------
    pandas.DataFrame
        One row per method: ``n``, ``seconds`` (wall time, PyTensor compilation included),
        ``n_iter``, ``ess_min`` (smallest bulk ESS of ``f``; samplers), ``ess_per_s``,
        ``time_ratio_nuts`` and ``ess_per_s_ratio_nuts`` (NaN without NUTS), ``load_1min``.
    """
    settings = QUICK_FULL_GP_SETTINGS if quick else FULL_GP_SETTINGS
    X, y, _ = load_benchmark("waveform")
    rows = np.random.default_rng(seed).choice(y.size, n, replace=False)
    model = GPSVM.from_arrays(X[rows], y[rows], lengthscale=WAVEFORM_RUN["lengthscale"])
    return backend_table(model, methods, settings, seed, ["f"], n=n)


def run_gpsvm_bench(
    methods: Sequence[str] = ("vb", "gibbs", "nuts"), seed: int = 0, quick: bool = False
) -> dict[str, pd.DataFrame]:
    """All three measurements (module docstring).

    Parameters
    ----------
    methods : sequence of str
        The full GP's methods in the ``full_gp`` table, among "vb", "gibbs", "nuts".
    seed : int
        Seeds the data, the folds, k-means and the fits.
    quick : bool
        Small sizes and short runs: a smoke test.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``waveform`` (:func:`time_waveform`), ``throughput`` (:func:`time_throughput`) and
        ``full_gp`` (:func:`compare_full_gp`).
    """
    return {
        "waveform": time_waveform(seed=seed, quick=quick),
        "throughput": time_throughput(
            QUICK_THROUGHPUT_SIZES if quick else THROUGHPUT_SIZES, seed=seed, quick=quick
        ),
        "full_gp": compare_full_gp(methods, n=30 if quick else FULL_GP_N, seed=seed, quick=quick),
    }


def run(options: BenchOptions) -> Tables:
    """:func:`run_gpsvm_bench` with the ``options`` given."""
    return run_gpsvm_bench(**options.keywords("methods"))
