"""Rank models fitted to the same data by their expected predictive accuracy:
:func:`compare_models`, ArviZ's ``compare`` on the fits' pointwise log likelihoods, and
:func:`loo`, ArviZ's PSIS leave-one-out with the rows whose log likelihood is flat scored
exactly.

Every fit by a sampler or VB holds ``log_likelihood["y"]`` (:func:`bayesvm.results.
add_log_likelihood`), so ``arviz.loo(fit.idata)``, ``arviz.waic`` and ``arviz.compare`` run on
its ``idata`` as on any PyMC fit. What the log likelihood is depends on the model: the
regressions', the logistic and the probit models' own likelihood; for the hinge models the
pseudo-likelihood normalised over the two labels (Polson-Scott section 2), the class
probability their predictions use. That is a predictive score, not the pseudo-likelihood the
posterior conditions on, so ``p_loo`` does not count a hinge model's parameters. A VB fit's
draws are those from ``q``: its LOO is that of the approximation.

A row whose label is predicted with probability 1 up to round-off in every draw (an SVM on
unscaled, far-out inputs) has a log likelihood flat across draws: its importance ratios
``1 / p(y_i | theta_s)`` are all within round-off of each other, and ArviZ 0.23's ``psislw``,
which fits its generalized Pareto tail to the ratios' excesses ``exp(x) - exp(x_cutoff)``,
finds them rounded to 0 and returns NaN weights (then ``elpd_loo`` is NaN) or a k-hat that
measures round-off. :func:`loo` scores those rows by raw importance sampling, which bounded
ratios need no smoothing for, with k-hat 0 (:data:`FLAT_ROW_SPREAD`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp

from bayesvm._arviz import quiet_arviz_log
from bayesvm.results import Fit

if TYPE_CHECKING:
    import pandas as pd
    from arviz import ELPDData

__all__ = ["compare_models", "loo", "FLAT_ROW_SPREAD"]

#: A row whose log likelihood spans at most this many nats across draws is flat: its
#: importance ratios lie within a factor ``e^0.01`` of each other, so every weighting of the
#: draws puts its leave-one-out log density within 0.01 of the in-sample one, and raw
#: importance sampling has a relative standard deviation below 0.5 % per draw: no tail for
#: Pareto smoothing to correct, and k-hat is 0 (the ratios are bounded). A k-hat fitted to so
#: narrow a tail measures its shape, not its 1 % width: ArviZ 0.23 gave NaN or more than 0.7
#: for 6 % to 40 % of the flat rows of hinge SVMs fitted to the spam data by Gibbs.
FLAT_ROW_SPREAD = 0.01
#: ArviZ's ``scale`` of an ELPD to the log score's factor.
SCALE_FACTORS = {"log": 1.0, "negative_log": -1.0, "deviance": -2.0}
#: The start of ArviZ's warning of a k-hat above its threshold.
PARETO_WARNING = "Estimated shape parameter of Pareto"


def loo(fit: Fit) -> ELPDData:
    """PSIS leave-one-out of a fit (Vehtari, Gelman & Gabry 2017): ArviZ's ``loo``,
    pointwise, with every flat row (:data:`FLAT_ROW_SPREAD`) scored exactly.

    A flat row's ``loo_i`` is the raw importance sampling estimate ``-log mean_s
    exp(-log p(y_i | theta_s))`` (its ratios, bounded, need no smoothing), its ``pareto_k``
    0; the totals (``elpd_loo``, ``se``, ``p_loo``, ``warning``) are recomputed from the rows
    as ArviZ computes them: where no row is flat the result is ArviZ's. ArviZ's warning of a
    high k-hat is issued for the rows that are not flat only.

    Parameters
    ----------
    fit : Fit
        A fit by a sampler or VB (it holds ``log_likelihood["y"]``).

    Returns
    -------
    arviz.ELPDData
        As ``arviz.loo(fit.idata, pointwise=True)``, what ``arviz.compare`` accepts.

    Raises
    ------
    ValueError
        The fit holds no pointwise log likelihood (an EM/ECME point estimate).
    """
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    _require_log_likelihood({"fit": fit})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=PARETO_WARNING)
        with np.errstate(divide="ignore", invalid="ignore"):  # PSIS's fit to a flat row
            result = az.loo(fit.idata, pointwise=True)
    log_likelihood = fit.idata.log_likelihood["y"].stack(__sample__=("chain", "draw"))
    values = log_likelihood.transpose(..., "__sample__").to_numpy()
    values = values.reshape(-1, values.shape[-1])
    flat = np.ptp(values, axis=1) <= FLAT_ROW_SPREAD
    n_rows, n_draws = values.shape
    scale = SCALE_FACTORS[result["scale"]]
    loo_i = result["loo_i"].to_numpy().reshape(-1).copy()
    loo_i[flat] = -scale * (logsumexp(-values[flat], axis=1) - np.log(n_draws))
    pareto_k = result["pareto_k"].to_numpy().reshape(-1).copy()
    pareto_k[flat] = 0.0
    in_sample = float(np.sum(logsumexp(values, axis=1) - np.log(n_draws)))
    repaired = result.copy()
    repaired["loo_i"] = result["loo_i"].copy(data=loo_i.reshape(result["loo_i"].shape))
    repaired["pareto_k"] = result["pareto_k"].copy(data=pareto_k.reshape(result["pareto_k"].shape))
    repaired["elpd_loo"] = float(loo_i.sum())
    repaired["se"] = float(np.sqrt(n_rows * np.var(loo_i)))
    repaired["p_loo"] = in_sample - repaired["elpd_loo"] / scale
    repaired["warning"] = bool(np.any(pareto_k > result["good_k"]))
    if repaired["warning"]:
        warnings.warn(
            f"{PARETO_WARNING} distribution is greater than {result['good_k']:.2f} for one or "
            "more rows: their PSIS-LOO, and the model's, should not be trusted",
            stacklevel=2,
        )
    return repaired


def _require_log_likelihood(fits: Mapping[str, Fit]) -> None:
    """``ValueError`` naming the fits that hold no pointwise log likelihood."""
    missing = [name for name, fit in fits.items() if "log_likelihood" not in fit.idata.groups()]
    if missing:
        raise ValueError(
            f"no pointwise log likelihood in the fits {missing}: a point estimate (EM, ECME) "
            "has none; refit by a sampler or VB"
        )


def compare_models(fits: Mapping[str, Fit], ic: str = "loo") -> pd.DataFrame:
    """ArviZ's ``compare`` of fits of several models to the same labels, best first.

    Parameters
    ----------
    fits : mapping of str to Fit
        Label (e.g. ``"ridge"``, ``"lasso"``) to a fit by a sampler or VB; at least two.
    ic : {"loo", "waic"}
        PSIS leave-one-out (Vehtari, Gelman & Gabry 2017; :func:`loo`, flat rows scored
        exactly) or WAIC.

    Returns
    -------
    pandas.DataFrame
        ArviZ's table: ``elpd_loo`` (or ``elpd_waic``), ``p_loo``, ``elpd_diff`` and its
        standard error ``dse``, the stacking ``weight``, and ``warning`` (True where Pareto
        k-hat of some row exceeds ArviZ's threshold: that model's LOO should not be trusted).

    Raises
    ------
    ValueError
        Fewer than two fits, a fit without a pointwise log likelihood (an EM/ECME point
        estimate, or a fit read from a file written before it was stored), or fits to
        different labels; each named.
    """
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    if len(fits) < 2:
        raise ValueError(f"compare_models needs at least two fits; got {len(fits)}")
    if ic not in ("loo", "waic"):
        raise ValueError(f"ic must be 'loo' or 'waic'; got {ic!r}")
    _require_log_likelihood(fits)
    (first, reference), *others = (
        (name, fit.idata.observed_data["y"]) for name, fit in fits.items()
    )
    different = [
        name
        for name, labels in others
        if labels.shape != reference.shape or not np.array_equal(labels, reference)
    ]
    if different:
        raise ValueError(f"the fits {different} are to other labels than {first!r}'s")
    with quiet_arviz_log():
        if ic == "waic":
            return az.compare({name: fit.idata for name, fit in fits.items()}, ic=ic)
        return az.compare({name: loo(fit) for name, fit in fits.items()}, ic=ic)
