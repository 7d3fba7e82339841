"""What the model benchmarks share: timed fits, the load they ran under, a table against NUTS."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesvm import registry
from bayesvm._arviz import arviz as az
from bayesvm.exceptions import ConvergenceWarning

__all__ = ["load_average", "timed_fit", "backend_table"]


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


def backend_table(
    model, methods: Sequence[str], settings: dict, seed: int, var_names: Sequence[str], **columns
) -> pd.DataFrame:
    """One row per method: ``columns`` (e.g. ``n``), ``seconds`` (wall time, PyTensor's
    compilation included), ``n_iter``, ``ess_min`` (the smallest bulk ESS over ``var_names``;
    samplers), ``ess_per_s``, ``load_1min``, and ``time_ratio_nuts`` and
    ``ess_per_s_ratio_nuts`` (NaN without NUTS).
    """
    unknown = sorted(set(methods) - set(settings))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose among {sorted(settings)}")
    records = []
    for method in methods:
        fit = timed_fit(model, method, settings[method], seed)
        ess = np.nan
        if fit.kind == "mcmc":
            summary = az.ess(fit.idata, var_names=list(var_names), method="bulk")
            ess = min(float(summary[name].min()) for name in var_names)
        records.append(
            {
                "method": method,
                **columns,
                "seconds": fit.runtime_s,
                "n_iter": fit.n_iter,
                "ess_min": ess,
                "ess_per_s": ess / fit.runtime_s,
                "load_1min": load_average(),
            }
        )
    table = pd.DataFrame(records)
    nuts = table.set_index("method").reindex(["nuts"]).iloc[0]
    table["time_ratio_nuts"] = table["seconds"] / nuts["seconds"]
    table["ess_per_s_ratio_nuts"] = table["ess_per_s"] / nuts["ess_per_s"]
    return table
