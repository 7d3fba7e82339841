"""Timings of every backend on Luts-Ormerod's simulated problems, with ratios to NUTS.

The data are those of Luts-Ormerod (2014) section 4.2: ``beta ~ N(0, 1)``, ``u ~ N(0, I_d)``,
``d_i ~ N(0, I_d)`` and ``y_i = 2 Bernoulli(expit(beta + d_i^T u)) - 1``. Each method fits
:meth:`~bayesvm.models.MixedSVM.penalized` (the penalty inferred, section 3.1); a method that
cannot (EM, which needs a fixed penalty) fits :class:`~bayesvm.models.LinearSVM` with
``alpha = 0.5`` instead. ``bayesvm bench`` prints :func:`run_bench`'s table (:func:`run`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesvm import registry
from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.bench.timing import measure_fit
from bayesvm.case_studies.simulated import simulate_dataset
from bayesvm.exceptions import IdentifiabilityWarning
from bayesvm.models import LinearSVM, MixedSVM

__all__ = ["run", "run_bench", "svm_model_for", "SETTINGS", "QUICK_SETTINGS", "FIXED_ALPHA"]

# Luts-Ormerod section 4.2 (Gibbs: 5000 burn-in + 5000 kept, one chain) and NUTS at PyMC's
# usual 1000 + 1000, one chain on one core so that both are timed per chain.
SETTINGS = {
    "gibbs": {"draws": 5000, "tune": 5000, "chains": 1, "progressbar": False},
    "nuts": {"draws": 1000, "tune": 1000, "chains": 1, "cores": 1, "progressbar": False},
}
# A smoke test: the same code paths in a few seconds.
QUICK_SETTINGS = {
    "gibbs": {"draws": 200, "tune": 200, "chains": 1, "progressbar": False},
    "nuts": {"draws": 100, "tune": 100, "chains": 1, "cores": 1, "progressbar": False},
}
# The penalty of the LinearSVM fitted by methods that cannot infer it.
FIXED_ALPHA = 0.5


def run_bench(
    sizes: Sequence[tuple[int, int]] = ((200, 10),),
    methods: Sequence[str] = ("vb", "gibbs", "nuts"),
    repeats: int | None = None,
    seed: int = 0,
    quick: bool = False,
    threads: Sequence[int | None] = (None,),
    draws: int | None = None,
    tune: int | None = None,
) -> pd.DataFrame:
    """Time each method on simulated data of each size.

    Parameters
    ----------
    sizes : sequence of (n_samples, n_features)
        Problem sizes.
    methods : sequence of str
        Methods to time ("vb", "gibbs", "nuts", "em", "ecme").
    repeats : int, optional
        Fits per method and size, each on a fresh data set shared by all methods (default 5,
        or 1 when ``quick``).
    seed : int
        Seeds the data and the fits.
    quick : bool
        Use :data:`QUICK_SETTINGS` instead of :data:`SETTINGS`.
    threads : sequence of int or None
        BLAS threads to time each fit with (``threads`` of :func:`bayesvm.fit`; None: its
        automatic choice), e.g. ``(1, 2)`` to compare single- and multi-threaded fits.
    draws, tune : int, optional
        Kept draws and burn-in (Gibbs) or tuning (NUTS) iterations of the samplers, instead
        of :data:`SETTINGS`' (or :data:`QUICK_SETTINGS`'), e.g. to time their sweeps alone.

    Returns
    -------
    pandas.DataFrame
        One row per size, method and thread setting: ``n_samples``, ``n_features``,
        ``method``, ``threads`` (``"auto"`` for None), ``model``,
        medians over repeats of ``seconds`` (wall time of :func:`bayesvm.fit`, PyTensor
        compilation included for NUTS), ``sampling_s`` (the part spent sampling: PyMC's
        ``sampling_time`` for NUTS, ``seconds`` otherwise), ``iter_per_s`` (iterations per
        second of sampling per chain, samplers only), ``ess_bulk_min`` (smallest bulk ESS over
        all parameters, samplers only), ``ess_per_s`` (per second of wall time), and
        ``time_ratio_nuts`` / ``ess_per_s_ratio_nuts`` (the method's seconds and ESS per second
        over NUTS's with the same threads; NaN without NUTS).
    """
    repeats = (1 if quick else 5) if repeats is None else repeats
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1; got {repeats}")
    given = {name: value for name, value in (("draws", draws), ("tune", tune)) if value is not None}
    settings = {
        method: {**options, **given}
        for method, options in (QUICK_SETTINGS if quick else SETTINGS).items()
    }
    rng = np.random.default_rng(seed)
    rows = []
    warm_up_data = simulate_dataset(50, 2, 0, np.random.default_rng(seed))[:2]
    for method in methods:  # untimed: imports, caches and other first-call costs
        _time_fit(*warm_up_data, method, QUICK_SETTINGS.get(method, {}), seed)
    for n_samples, n_features in sizes:
        for repeat in range(repeats):
            D, y, _, _ = simulate_dataset(n_samples, n_features, 0, rng)
            for method in methods:
                for count in threads:
                    options = {**settings.get(method, {}), "threads": count}
                    rows.append(
                        {
                            "n_samples": n_samples,
                            "n_features": n_features,
                            "method": method,
                            "threads": "auto" if count is None else str(count),
                            **_time_fit(D, y, method, options, seed + repeat),
                        }
                    )
    timings = pd.DataFrame(rows)
    keys = ["n_samples", "n_features", "method", "threads", "model"]
    table = timings.groupby(keys, sort=False).median().reset_index()
    same = ["n_samples", "n_features", "threads"]
    nuts = table[table["method"] == "nuts"].set_index(same)
    size = pd.MultiIndex.from_frame(table[same])
    for column, ratio in [("seconds", "time_ratio_nuts"), ("ess_per_s", "ess_per_s_ratio_nuts")]:
        table[ratio] = table[column].to_numpy() / nuts[column].reindex(size).to_numpy()
    return table


def run(options: BenchOptions) -> Tables:
    """``timings``: :func:`run_bench` with the ``options`` given."""
    return {
        "timings": run_bench(
            **options.keywords("sizes", "methods", "repeats", "threads", "draws", "tune")
        )
    }


def svm_model_for(D, y, method: str):
    """The model ``method`` fits in these benchmarks: :meth:`~bayesvm.models.MixedSVM.penalized`
    or, for a method that cannot infer the penalty, :class:`~bayesvm.models.LinearSVM` with
    :data:`FIXED_ALPHA`.
    """
    with warnings.catch_warnings():
        # Timing, not inference: n <= d makes the data separable; the warning would only
        # bury the table.
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        model = MixedSVM.penalized(D, y)
        if method not in registry.methods(model):
            model = LinearSVM.from_arrays(D, y, alpha=FIXED_ALPHA)
    return model


def _time_fit(D, y, method: str, options: dict, seed: int) -> dict:
    """Fit one data set by ``method``; its model, wall time, speed and ESS."""
    model = svm_model_for(D, y, method)
    result, measured = measure_fit(model, method, options, seed)
    # PyMC records the time spent sampling (tuning included, compilation excluded).
    sampling_s = float(result.idata.posterior.attrs.get("sampling_time", measured["seconds"]))
    iter_per_s = np.nan
    if result.kind == "mcmc":
        iter_per_s = result.n_iter * result.idata.posterior.sizes["chain"] / sampling_s
    return {
        "model": type(model).__name__,
        "seconds": measured["seconds"],
        "sampling_s": sampling_s,
        "iter_per_s": iter_per_s,
        "ess_bulk_min": measured["ess_min"],
        "ess_per_s": measured["ess_per_s"],
    }
