"""What the model benchmarks share: timed fits, the load they ran under, a table against NUTS,
the smallest ESS of a fit and the exponent of a power law.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesvm import registry
from bayesvm._arviz import arviz as az
from bayesvm.exceptions import ConvergenceWarning

__all__ = [
    "load_average",
    "timed_fit",
    "measure_fit",
    "ess_bulk_min",
    "backend_table",
    "power_law_exponent",
]


def load_average() -> float:
    """The machine's 1-minute load average (each row says what the timing ran beside)."""
    return os.getloadavg()[0]


def timed_fit(model, method: str, options: dict, seed: int):
    """:func:`bayesvm.fit` with convergence warnings silenced: a benchmark times, it does not
    infer, and a short run may stop before converging (its row says so).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return registry.fit(model, method=method, seed=seed, **options)


def measure_fit(model, method: str, options: dict, seed: int, var_names=None):
    """:func:`timed_fit` and what a benchmark row reports of it.

    Returns
    -------
    fit : Fit
    row : dict
        ``seconds`` (wall time of the call, PyTensor's or Numba's compilation included, and
        so is building the model's blocks, e.g. ``X^T X``, which happens before
        ``fit.runtime_s`` starts), ``n_iter``, ``ess_min`` (:func:`ess_bulk_min` over
        ``var_names``, default every posterior variable; NaN for a fit without draws) and
        ``ess_per_s``.
    """
    start = time.perf_counter()
    fit = timed_fit(model, method, options, seed)
    seconds = time.perf_counter() - start
    ess = ess_bulk_min(fit.idata, var_names) if fit.kind == "mcmc" else np.nan
    row = {"seconds": seconds, "n_iter": fit.n_iter, "ess_min": ess, "ess_per_s": ess / seconds}
    return fit, row


def ess_bulk_min(idata, var_names: Sequence[str] | None = None) -> float:
    """The smallest bulk ESS over every element of the posterior variables ``var_names``
    (default all of them).
    """
    names = list(idata.posterior.data_vars) if var_names is None else list(var_names)
    summary = az.ess(idata, var_names=names, method="bulk")
    return min(float(summary[name].min()) for name in names)


def backend_table(
    model, methods: Sequence[str], settings: dict, seed: int, var_names: Sequence[str], **columns
) -> pd.DataFrame:
    """One row per method: ``columns`` (e.g. ``n``), ``seconds``, ``n_iter``, ``ess_min`` and
    ``ess_per_s`` (:func:`measure_fit`'s, ESS over ``var_names``), ``load_1min``, and
    ``time_ratio_nuts`` and ``ess_per_s_ratio_nuts`` (NaN without NUTS).
    """
    unknown = sorted(set(methods) - set(settings))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose among {sorted(settings)}")
    records = []
    for method in methods:
        _, row = measure_fit(model, method, settings[method], seed, var_names)
        records.append({"method": method, **columns, **row, "load_1min": load_average()})
    table = pd.DataFrame(records)
    nuts = table.set_index("method").reindex(["nuts"]).iloc[0]
    table["time_ratio_nuts"] = table["seconds"] / nuts["seconds"]
    table["ess_per_s_ratio_nuts"] = table["ess_per_s"] / nuts["ess_per_s"]
    return table


def power_law_exponent(n, seconds) -> float:
    """The exponent ``a`` of ``seconds ~ n^a``: the least-squares slope on the log-log points."""
    slope, _ = np.polyfit(np.log(np.asarray(n, float)), np.log(np.asarray(seconds, float)), 1)
    return float(slope)
