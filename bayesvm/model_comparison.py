"""Rank models fitted to the same data by their expected predictive accuracy:
:func:`compare_models`, ArviZ's ``compare`` on the fits' pointwise log likelihoods.

Every fit by a sampler or VB holds ``log_likelihood["y"]`` (:func:`bayesvm.results.
add_log_likelihood`), so ``arviz.loo(fit.idata)``, ``arviz.waic`` and ``arviz.compare`` run on
its ``idata`` as on any PyMC fit. What the log likelihood is depends on the model: the
regressions', the logistic and the probit models' own likelihood; for the hinge models the
pseudo-likelihood normalised over the two labels (Polson-Scott section 2), the class
probability their predictions use. That is a predictive score, not the pseudo-likelihood the
posterior conditions on, so ``p_loo`` does not count a hinge model's parameters. A VB fit's
draws are those from ``q``: its LOO is that of the approximation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from bayesvm._arviz import quiet_arviz_log
from bayesvm.results import Fit

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_models"]


def compare_models(fits: Mapping[str, Fit], ic: str = "loo") -> pd.DataFrame:
    """ArviZ's ``compare`` of fits of several models to the same labels, best first.

    Parameters
    ----------
    fits : mapping of str to Fit
        Label (e.g. ``"ridge"``, ``"lasso"``) to a fit by a sampler or VB; at least two.
    ic : {"loo", "waic"}
        PSIS leave-one-out (Vehtari, Gelman & Gabry 2017) or WAIC.

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
    missing = [name for name, fit in fits.items() if "log_likelihood" not in fit.idata.groups()]
    if missing:
        raise ValueError(
            f"no pointwise log likelihood in the fits {missing}: a point estimate (EM, ECME) "
            "has none; refit by a sampler or VB"
        )
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
        return az.compare({name: fit.idata for name, fit in fits.items()}, ic=ic)
