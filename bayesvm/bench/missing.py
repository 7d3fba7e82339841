"""Timings of the missing-data SVM on a cardiac training split: VB, Gibbs and NUTS.

Every method fits :class:`~bayesvm.models.MissingDataSVM` to the training part of a split of
the cardiac data drawn as the cardiac study draws them (:mod:`bayesvm.case_studies.cardiac`:
2628 patients, 1246 of them without cholesterol, predictors standardised): VB (Algorithm 4
from the paper's start alone, the paper's 1e-10 rule), Gibbs (Appendix C, 5000 burn-in and
5000 kept draws, one chain, as the paper) and PyMC's NUTS (1000 + 1000, one chain, the 1246
missing cells as free variables).
Besides seconds, the table gives the samplers' smallest bulk effective sample size over
``beta``, ``u``, ``sigma2_u`` and ``mu_x`` per second, and the ratios to NUTS and to the paper's
times per split (VB 1028.18 s, MCMC 1718.98 s; NUTS is set beside the paper's MCMC).
``bayesvm bench --model missing`` prints :func:`run_missing_bench`'s table (:func:`run`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesvm import registry
from bayesvm._arviz import arviz as az
from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.case_studies.cardiac import (
    FEATURES,
    PAPER_PROTOCOL,
    PAPER_SECONDS,
    draw_split,
    outcome,
    predictors,
)
from bayesvm.case_studies.preprocessing import standardize
from bayesvm.data import load_cardiac
from bayesvm.exceptions import ConvergenceWarning
from bayesvm.models import MissingDataSVM

__all__ = ["run", "run_missing_bench", "MISSING_SETTINGS", "QUICK_MISSING_SETTINGS", "SUMMARISED"]

MISSING_SETTINGS = {
    "vb": {"starts": 1},
    "gibbs": {"draws": 5000, "tune": 5000, "chains": 1, "progressbar": False},
    "nuts": {"draws": 1000, "tune": 1000, "chains": 1, "cores": 1, "progressbar": False},
}
QUICK_MISSING_SETTINGS = {
    "vb": {"starts": 1},
    "gibbs": {"draws": 100, "tune": 100, "chains": 1, "progressbar": False},
    "nuts": {"draws": 50, "tune": 50, "chains": 1, "cores": 1, "progressbar": False},
}
#: Variables whose smallest bulk ESS is reported (the imputed cells are many, and not the aim).
SUMMARISED = ["beta", "u", "sigma2_u", "mu_x"]


def run_missing_bench(
    methods: Sequence[str] = ("vb", "gibbs", "nuts"), seed: int = 0, quick: bool = False
) -> pd.DataFrame:
    """Time each method on the training part of a random cardiac split.

    Parameters
    ----------
    methods : sequence of str
        Among "vb", "gibbs", "nuts".
    seed : int
        Seeds the split and the samplers.
    quick : bool
        Short chains (:data:`QUICK_MISSING_SETTINGS`): a smoke test.

    Returns
    -------
    pandas.DataFrame
        One row per method: ``seconds`` (wall time, PyTensor compilation included), ``n_iter``,
        ``ess_min`` and ``ess_per_s`` (samplers), ``paper_s`` and ``speedup_vs_paper``, and
        ``ess_per_s_ratio_nuts``.
    """
    settings = QUICK_MISSING_SETTINGS if quick else MISSING_SETTINGS
    unknown = sorted(set(methods) - set(settings))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose among {sorted(settings)}")
    data = load_cardiac()
    D, y = predictors(data), outcome(data)
    observed = ~np.isnan(D).any(axis=1)
    rng = np.random.default_rng(seed)
    train, test = draw_split(observed, PAPER_PROTOCOL.n_test(y.size), rng)
    D_train, _ = standardize(D[train], D[test])
    model = MissingDataSVM.from_arrays(D_train, y[train], feature_names=list(FEATURES))
    table = pd.DataFrame([_time(model, method, settings[method], seed) for method in methods])
    if "nuts" in set(table["method"]):
        nuts = table.set_index("method").loc["nuts", "ess_per_s"]
        table["ess_per_s_ratio_nuts"] = table["ess_per_s"] / nuts
    return table


def run(options: BenchOptions) -> Tables:
    """``timings``: :func:`run_missing_bench` with the ``options`` given."""
    return {"timings": run_missing_bench(**options.keywords("methods"))}


def _time(model, method: str, options: dict, seed: int) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = registry.fit(model, method=method, seed=seed, **options)
    paper = PAPER_SECONDS["gibbs" if method == "nuts" else method]
    row = {
        "method": method,
        "n_train": model.n_samples,
        "missing_cells": int(model.missing.sum()),
        "seconds": fit.runtime_s,
        "n_iter": fit.n_iter,
        "paper_s": paper,
        "speedup_vs_paper": paper / fit.runtime_s,
        "ess_min": np.nan,
        "ess_per_s": np.nan,
    }
    if fit.kind == "mcmc":
        ess = az.ess(fit.idata, var_names=SUMMARISED, method="bulk")
        row["ess_min"] = float(min(float(ess[name].min()) for name in SUMMARISED))
        row["ess_per_s"] = row["ess_min"] / fit.runtime_s
    return row
