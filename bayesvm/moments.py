"""Summaries of a variational fit from ``q``'s exact moments rather than from its draws.

A VB fit stores draws from ``q`` as its posterior, so that ArviZ treats it like a sampler's;
but their mean and sd are Monte Carlo estimates, which move between calls with different
seeds and, for a heavy-tailed ``q`` (an inverse gamma with shape below 2, whose variance does
not exist), never settle. Where a block gives ``q``'s mean and sd in closed form
(:meth:`~bayesvm.blocks.Block.q_moments`, stored by :func:`bayesvm.vb.posterior.q_groups`),
the summary's ``mean`` and ``sd`` columns are those; the HDI and anything else still come
from the draws, which are seeded (``seed=0`` by default), so the same call gives the same
numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import arviz as az
    import pandas as pd

__all__ = ["with_exact_moments"]

# The names under which :func:`bayesvm.vb.posterior.q_groups` stores them (not imported: the
# front door does not import the backends' modules for a constant).
_Q_MEAN, _Q_SD = "{}_q_mean", "{}_q_sd"


def with_exact_moments(table: pd.DataFrame, idata: az.InferenceData) -> pd.DataFrame:
    """``table`` (an ``arviz.summary`` of ``idata``) with the ``mean`` and ``sd`` of every
    parameter whose ``q`` has them in closed form replaced by them; a copy.

    Rows are matched by ArviZ's own labels (``"u[age]"``, ``"Sigma_x[a, b]"``), so any
    selection of variables or rows ArviZ made is kept.
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup
    from arviz.labels import BaseLabeller
    from arviz.sel_utils import xarray_var_iter

    if "variational" not in idata.groups():
        return table
    group = idata["variational"]
    names = [name for name in idata.posterior.data_vars if _Q_MEAN.format(name) in group]
    if not names:
        return table
    table = table.copy()
    labeller = BaseLabeller()
    for column, template in (("mean", _Q_MEAN), ("sd", _Q_SD)):
        if column not in table.columns:
            continue
        values = xr.Dataset({name: group[template.format(name)] for name in names})
        for name, selection, positions, value in xarray_var_iter(values, combined=True):
            label = labeller.make_label_flat(name, selection, positions)
            if label in table.index:
                table.loc[label, column] = float(np.asarray(value))
    return table
