"""Timings of the model search on the spam data: Gibbs, reversible jump and PyMC's compound step.

Every sampler fits the same :class:`~bayesvm.models.SpikeSlabSVM` to the standardised spam data
(:func:`bayesvm.data.load_spam`, optionally a random subset of rows): Gibbs (the model's
``update`` of ``gamma``), reversible jump (birth / death / swap, one proposal per feature per
sweep) and PyMC (NUTS for the continuous variables, binary Gibbs-Metropolis for ``gamma``).
What mixes slowly in a model search is the model itself, so besides iterations per second the
table reports the effective sample size per second of the model size ``n_active`` and the
smallest over the inclusion indicators ``gamma_k`` that are neither always 0 nor always 1.
``bayesvm bench --model spike_slab`` prints :func:`run_model_search_bench`'s table
(:func:`run`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesvm import registry
from bayesvm._arviz import arviz as az
from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.data import load_spam
from bayesvm.exceptions import ConvergenceWarning, IdentifiabilityWarning
from bayesvm.models import SpikeSlabSVM

__all__ = [
    "run",
    "run_model_search_bench",
    "spam_arrays",
    "SEARCH_SETTINGS",
    "QUICK_SEARCH_SETTINGS",
]

# One chain each; NUTS at PyMC's usual 1000 + 1000 on one core.
SEARCH_SETTINGS = {
    "gibbs": {"draws": 5000, "tune": 1000, "chains": 1, "progressbar": False},
    "rj": {"draws": 5000, "tune": 1000, "chains": 1, "progressbar": False},
    "nuts": {"draws": 1000, "tune": 1000, "chains": 1, "cores": 1, "progressbar": False},
}
QUICK_SEARCH_SETTINGS = {
    "gibbs": {"draws": 100, "tune": 50, "chains": 1, "progressbar": False},
    "rj": {"draws": 100, "tune": 50, "chains": 1, "progressbar": False},
    "nuts": {"draws": 50, "tune": 50, "chains": 1, "cores": 1, "progressbar": False},
}


def spam_arrays(rows: int | None = None, seed: int = 0):
    """``(D, y, names)``: the spam predictors standardised (both papers), the labels, and the
    variable names; ``rows`` a random subset of the 4601 e-mails.
    """
    data = load_spam()
    features = [column for column in data.columns if column != "type"]
    if rows is not None:
        chosen = np.random.default_rng(seed).choice(len(data), size=rows, replace=False)
        data = data.iloc[np.sort(chosen)]
    D = data[features].to_numpy(dtype=float)
    sd = D.std(axis=0)
    D = (D - D.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return D, data["type"].to_numpy(), features


def run_model_search_bench(
    methods: Sequence[str] = ("gibbs", "rj", "nuts"),
    prior: str = "gaussian_slab",
    rows: int | None = None,
    seed: int = 0,
    quick: bool = False,
) -> pd.DataFrame:
    """Time each sampler of a spike-and-slab SVM on the spam data.

    Parameters
    ----------
    methods : sequence of str
        Among "gibbs", "rj", "nuts".
    prior : {"gaussian_slab", "laplace_zero"}
        Polson-Scott's slab (``pi = 0.5``, ``nu = 100``) or Luts-Ormerod's Laplace-zero
        (``rho = 0.01``), with their constructors' defaults otherwise.
    rows : int, optional
        A random subset of e-mails (default: all; ``quick``: 300).
    seed : int
        Seeds the subset and the samplers.
    quick : bool
        Short chains (:data:`QUICK_SEARCH_SETTINGS`): a smoke test.

    Returns
    -------
    pandas.DataFrame
        One row per method: ``seconds`` (wall time, PyTensor compilation included),
        ``sampling_s``, ``iter_per_s``, ``mean_active`` (posterior mean model size),
        ``ess_n_active`` and ``ess_gamma_min`` (bulk ESS), their values per second of
        ``seconds``, and the ratios of those to Gibbs's and to NUTS's.
    """
    rows = 300 if quick and rows is None else rows
    D, y, names = spam_arrays(rows, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        if prior == "gaussian_slab":
            model = SpikeSlabSVM.gaussian_slab(D, y, pi=0.5, nu=100.0, feature_names=names)
        elif prior == "laplace_zero":
            model = SpikeSlabSVM.laplace_zero(D, y, rho=0.01, feature_names=names)
        else:
            raise ValueError(f"prior must be 'gaussian_slab' or 'laplace_zero'; got {prior!r}")
    settings = QUICK_SEARCH_SETTINGS if quick else SEARCH_SETTINGS
    unknown = sorted(set(methods) - set(settings))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose among {sorted(settings)}")
    table = pd.DataFrame(
        [_time_search(model, method, settings[method], seed) for method in methods]
    )
    for reference in ("gibbs", "nuts"):
        if reference not in set(table["method"]):
            continue
        base = table.set_index("method").loc[reference]
        for column in ("iter_per_s", "ess_n_active_per_s", "ess_gamma_per_s"):
            table[f"{column}_ratio_{reference}"] = table[column] / base[column]
    return table


def run(options: BenchOptions) -> Tables:
    """``timings``: :func:`run_model_search_bench` with the ``options`` given."""
    return {"timings": run_model_search_bench(**options.keywords("methods", "prior", "rows"))}


def _time_search(model, method: str, options: dict, seed: int) -> dict:
    """Fit ``model`` by ``method``: its speed and the ESS of the model search."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = registry.fit(model, method=method, seed=seed, **options)
    sampling_s = float(fit.idata.posterior.attrs.get("sampling_time", fit.runtime_s))
    gamma = fit.idata.posterior["gamma"]
    n_active = gamma.sum(gamma.dims[-1])  # per draw; NUTS does not record it itself
    ess_size = float(az.ess(n_active.to_numpy(), method="bulk"))
    moving = (gamma.min(("chain", "draw")) < gamma.max(("chain", "draw"))).to_numpy()
    ess_gamma = az.ess(gamma.to_dataset(name="gamma"), method="bulk")["gamma"].to_numpy()
    ess_gamma_min = float(ess_gamma[moving].min()) if moving.any() else float("nan")
    return {
        "method": method,
        "seconds": fit.runtime_s,
        "sampling_s": sampling_s,
        "iter_per_s": fit.n_iter * gamma.sizes["chain"] / sampling_s,
        "mean_active": float(n_active.mean()),
        "ess_n_active": ess_size,
        "ess_gamma_min": ess_gamma_min,
        "ess_n_active_per_s": ess_size / fit.runtime_s,
        "ess_gamma_per_s": ess_gamma_min / fit.runtime_s,
    }
