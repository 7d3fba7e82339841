"""VB's sds against a long Gibbs run's: mean-field, linear response and the Gaussian family.

Mean-field VB's sds are too narrow (Luts-Ormerod's ``q(theta) q(a)`` factors the coefficients
from the augmentation). For each problem of :data:`PROBLEMS`, its coefficients' sds under four
``q`` (:func:`~bayesvm.vb.cavi.fit_vb`: mean-field, ``covariance="lrvb"``, Giordano,
Broderick & Jordan 2018; ``family="gaussian"``, Opper & Archambeau 2009; and both) are
divided by the sds of a long Gibbs run (:data:`GIBBS`), whose own Monte Carlo error the
``gibbs_sd_error`` column gives (the largest relative standard error of a sd). Each ratio
column gives the smallest and largest ratio over the coefficients; ``seconds`` is the
Gaussian family's fit with linear response, the most expensive of the four.
``bayesvm bench --model spread`` prints the table (:func:`run`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import arviz as az
import numpy as np
import pandas as pd

import bayesvm
from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.case_studies.preprocessing import standardize
from bayesvm.case_studies.toenail import full_data_model
from bayesvm.models import MixedSVM

__all__ = [
    "run",
    "run_spread_bench",
    "PROBLEMS",
    "QUICK_PROBLEMS",
    "VB_FITS",
    "GIBBS",
    "sd_standard_error",
]

#: The four ``q``: ``fit_vb``'s options of each, by the column that gives its ratios.
VB_FITS = {
    "mean_field": {},
    "lrvb": {"covariance": "lrvb"},
    "gaussian": {"family": "gaussian"},
    "gaussian_lrvb": {"family": "gaussian", "covariance": "lrvb"},
}
#: The long Gibbs run (sd errors about 1 %), and the short one of ``quick``.
GIBBS = {"chains": 4, "draws": 20_000, "tune": 1000}
QUICK_GIBBS = {"chains": 2, "draws": 1000, "tune": 200}


def _benchmark(name: str) -> Callable[[], MixedSVM]:
    def model():
        X, y, splits = bayesvm.data.load_benchmark(name)
        train, _ = splits[0]
        return MixedSVM.penalized(X[train], y[train])

    return model


def _spam(transform: Callable[[np.ndarray], np.ndarray]) -> Callable[[], MixedSVM]:
    def model():
        spam = bayesvm.data.load_spam()
        (D,) = standardize(transform(spam.drop(columns="type").to_numpy(dtype=float)))
        return MixedSVM.penalized(D, spam["type"].to_numpy(), positive_class="spam")

    return model


#: The problems, by the name their rows give: ``name -> (model(), coefficients' variable)``.
PROBLEMS = {
    "MixedSVM.penalized, heart (Rätsch's split 1, 170 rows)": (_benchmark("heart"), "u"),
    "MixedSVM.penalized, breast_cancer (split 1, 200 rows)": (_benchmark("breast_cancer"), "u"),
    "MixedSVM.penalized, spam standardised (4601 rows)": (_spam(lambda D: D), "u"),
    "MixedSVM.penalized, spam, logs standardised (4601 rows)": (
        _spam(lambda D: np.log(D + 0.1)),
        "u",
    ),
    "MixedSVM.random_intercept, toenail (fixed effects)": (full_data_model, "beta"),
}
#: The same code paths in seconds.
QUICK_PROBLEMS = {name: PROBLEMS[name] for name in list(PROBLEMS)[:1]}


def run_spread_bench(seed: int = 0, quick: bool = False) -> pd.DataFrame:
    """The sd ratios of each problem (module docstring).

    Parameters
    ----------
    seed : int
        Seeds the Gibbs run and the draws from ``q``.
    quick : bool
        The first problem alone, with a short Gibbs run (:data:`QUICK_GIBBS`).

    Returns
    -------
    pandas.DataFrame
        One row per problem: ``problem``, ``weights`` (the coefficients), one column of
        ``"smallest-largest"`` ratios per :data:`VB_FITS` entry, ``gibbs_draws``,
        ``gibbs_sd_error`` and ``seconds``.
    """
    rows = []
    settings = QUICK_GIBBS if quick else GIBBS
    for name, (make_model, var_name) in (QUICK_PROBLEMS if quick else PROBLEMS).items():
        model = make_model()
        with warnings.catch_warnings():  # a benchmark measures; its fits' trust is not asked
            warnings.simplefilter("ignore")
            gibbs = bayesvm.fit(model, "gibbs", seed=seed, progressbar=False, **settings)
            draws = gibbs.idata.posterior[var_name].to_numpy()
            gibbs_sd = draws.std(axis=(0, 1))
            errors = [sd_standard_error(draws[..., j]) / gibbs_sd[j] for j in range(gibbs_sd.size)]
            row = {"problem": name, "weights": gibbs_sd.size}
            for column, options in VB_FITS.items():
                start = time.perf_counter()
                fit = bayesvm.fit(model, "vb", seed=seed, progressbar=False, **options)
                seconds = time.perf_counter() - start
                ratio = fit.idata.variational[f"{var_name}_q_sd"].to_numpy() / gibbs_sd
                row[column] = f"{ratio.min():.2f}-{ratio.max():.2f}"
        rows.append(
            {
                **row,
                "gibbs_draws": f"{settings['chains']} x {settings['draws']:,}",
                "gibbs_sd_error": float(np.max(errors)),
                "seconds": seconds,
            }
        )
    return pd.DataFrame(rows)


def sd_standard_error(draws: np.ndarray) -> float:
    """Monte Carlo standard error of the sd of ``draws`` (chain, draw): that of the variance,
    by its effective sample size, over ``2 sd`` (the delta method).
    """
    squares = (draws - draws.mean()) ** 2
    return float(np.sqrt(squares.var() / az.ess(squares)) / (2.0 * draws.std()))


def run(options: BenchOptions) -> Tables:
    """``spread``: :func:`run_spread_bench` with the ``options`` given."""
    return {"spread": run_spread_bench(**options.keywords())}
