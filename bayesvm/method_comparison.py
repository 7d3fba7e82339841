"""Put fits of one model by several methods side by side: :func:`compare` and :func:`plot_compare`.

Every backend returns the same posterior variables, dims and coords (see
:func:`bayesvm.results.build_idata`), so a comparison is a loop over ArviZ summaries. What a
column means depends on the kind of fit:

* ``"mcmc"`` (Gibbs, NUTS): ArviZ's mean, sd and HDI of the draws, the Monte Carlo standard
  error of the mean, bulk and tail ESS, R-hat, and the number of divergent transitions
  (NUTS; NaN for samplers without them);
* ``"variational"`` (VB): the same statistics of draws from q; MCSE, ESS and R-hat are NaN
  because the draws are independent by construction and say nothing about mixing;
* ``"point"`` (EM, ECME): the mode; the other columns are NaN and the HDI collapses to it.

The ``step`` column says which of PyMC's step methods drew a parameter in a NUTS fit: on a
model with discrete variables PyMC samples by a compound step, so the inclusion indicators
``gamma`` of a spike-and-slab read ``BinaryGibbsMetropolis`` there, not ``NUTS``
(:mod:`bayesvm.samplers.nuts`). It is NaN for the other methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayesvm._arviz import quiet_arviz_log
from bayesvm.exceptions import warn_user
from bayesvm.fit_file import model_from_dataset, model_to_dataset
from bayesvm.moments import with_exact_moments
from bayesvm.results import KINDS, Fit

if TYPE_CHECKING:
    import arviz as az
    import pandas as pd

__all__ = ["compare", "plot_compare", "COLUMNS"]

COLUMNS = [
    "mean",
    "sd",
    "hdi_lower",
    "hdi_upper",
    "mcse_mean",
    "ess_bulk",
    "ess_tail",
    "ess_per_s",
    "r_hat",
    "divergences",
    "runtime_s",
    "step",
]
# Columns that only MCMC fills (NaN for VB and point estimates).
_MCMC_ONLY = ["mcse_mean", "ess_bulk", "ess_tail", "r_hat"]


def compare(
    fits: Mapping[str, Fit | az.InferenceData],
    var_names: Sequence[str] | None = None,
    hdi_prob: float = 0.94,
) -> pd.DataFrame:
    """Summarise several fits of one model in one table.

    Parameters
    ----------
    fits : mapping of str to Fit or arviz.InferenceData
        Label (e.g. the method) to fit. An ``InferenceData`` (such as one read back with
        ``arviz.from_netcdf`` from :meth:`Fit.to_netcdf`) carries its ``kind`` and
        ``runtime_s`` in its ``attrs``; without ``kind`` it counts as variational when it has
        a ``variational`` group, as a point estimate when it holds a single draw, and as MCMC
        otherwise; without ``runtime_s`` the runtime is NaN.
    var_names : sequence of str, optional
        Posterior variables to include (default: every variable of every fit). A fit that
        lacks one of them (``sigma2_u`` in one model, ``nu`` in another) just has no row for it.
    hdi_prob : float
        Probability mass of the highest-density interval.

    Warns
    -----
    UserWarning
        When the fits are of different models or data (their classes, hyperparameters or
        data differ, as far as each fit records them): their rows then sit side by side
        without being estimates of one posterior.

    Returns
    -------
    pandas.DataFrame
        Index levels ``parameter`` (ArviZ labels such as ``"beta[intercept]"``, ``"u[x0]"``,
        ``"sigma2_u"``) and ``method`` (the keys of ``fits``), parameters in order of first
        appearance; columns :data:`COLUMNS`. ``mcse_mean``, ``ess_bulk``, ``ess_tail`` and
        ``r_hat`` are given for MCMC only (R-hat needs two chains or more), ``ess_per_s`` is
        ``ess_bulk / runtime_s``, ``divergences`` counts NUTS's divergent transitions over
        all chains, and ``step`` is the PyMC step method that drew the parameter in a NUTS fit
        (``"NUTS"``; ``"BinaryGibbsMetropolis"`` for binary variables, which PyMC's compound
        step draws by Gibbs; both, joined by ``" + "``, for a deterministic function of both,
        such as ``u = gamma * v``); NaN for the other methods.
    """
    import pandas as pd  # imported here: pandas costs 0.1 s at startup

    if not fits:
        raise ValueError("compare needs at least one fit")
    if not 0.0 < hdi_prob < 1.0:
        raise ValueError(f"hdi_prob must be in (0, 1); got {hdi_prob!r}")
    tables = []
    for label, fit in fits.items():
        idata, kind, runtime_s = _unpack(fit)
        present = _present_var_names(idata, var_names)
        if not present:
            continue
        table = _summary(idata, kind, present, hdi_prob)
        table["runtime_s"] = runtime_s
        table["ess_per_s"] = table["ess_bulk"] / runtime_s
        table["divergences"] = _divergences(idata)
        table["step"] = _steps(idata, table.index)
        table.index = pd.MultiIndex.from_product(
            [table.index, [label]], names=["parameter", "method"]
        )
        tables.append(table[COLUMNS])
    if not tables:
        raise ValueError(f"none of the fits has any of the variables {list(var_names)}")
    _warn_if_models_differ(fits)
    table = pd.concat(tables)
    table["step"] = table["step"].astype(object)  # one dtype, whether or not any is missing
    parameters = dict.fromkeys(table.index.get_level_values("parameter"))
    order = [(p, label) for p in parameters for label in fits if (p, label) in table.index]
    return table.loc[order]


def plot_compare(
    fits: Mapping[str, Fit | az.InferenceData],
    var_names: Sequence[str] | None = None,
    hdi_prob: float = 0.94,
):
    """Forest plot of every fit side by side (``arviz.plot_forest``, one colour per method).

    Parameters
    ----------
    fits, var_names, hdi_prob
        As in :func:`compare`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    if not fits:
        raise ValueError("plot_compare needs at least one fit")
    axes = az.plot_forest(
        [_unpack(fit)[0] for fit in fits.values()],
        model_names=list(fits),
        var_names=None if var_names is None else list(var_names),
        combined=True,
        hdi_prob=hdi_prob,
    )
    return np.ravel(axes)[0].figure


def _unpack(fit: Fit | az.InferenceData) -> tuple[az.InferenceData, str, float]:
    """``(idata, kind, runtime_s)`` of a Fit or of an InferenceData written by one."""
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    if isinstance(fit, Fit):
        return fit.idata, fit.kind, float(fit.runtime_s)
    if not isinstance(fit, az.InferenceData):
        raise TypeError(f"expected a Fit or an arviz.InferenceData; got {type(fit).__name__}")
    kind = fit.attrs.get("kind")
    if kind is None:
        posterior = fit.posterior
        if "variational" in fit.groups():
            kind = "variational"
        elif posterior.sizes["chain"] * posterior.sizes["draw"] == 1:
            kind = "point"
        else:
            kind = "mcmc"
    if kind not in KINDS:
        raise ValueError(f"InferenceData attrs say kind={kind!r}; expected one of {KINDS}")
    return fit, str(kind), float(fit.attrs.get("runtime_s", np.nan))


def _warn_if_models_differ(fits: Mapping[str, Fit | az.InferenceData]) -> None:
    """Warn when the fits' models or data differ (:func:`_model_record`); fits that record no
    model (an InferenceData of another program) are left out of the check.
    """
    records = {label: _model_record(fit) for label, fit in fits.items()}
    records = {label: record for label, record in records.items() if record is not None}
    first, *others = records.values() if records else [None]
    if not others or all(_same_record(first, record) for record in others):
        return
    described = "; ".join(f"{label}: {record[0]}" for label, record in records.items())
    warn_user(
        f"the fits compared are of different models or data ({described}): their rows sit "
        "side by side, but they are not estimates of one posterior",
        UserWarning,
    )


def _model_record(fit: Fit | az.InferenceData):
    """``(description, model group, data groups)`` of the model a fit is of, in the form
    :func:`~bayesvm.fit_file.model_to_dataset` stores it; None where the fit records none.
    """
    if isinstance(fit, Fit):
        model, idata = fit.model, fit.idata
    elif "model" in fit.groups():
        model, idata = model_from_dataset(fit["model"], fit), fit
    else:
        return None
    try:
        dataset = model_to_dataset(model, idata)
    except TypeError:  # a model class of the user's, which has no stored form
        return None
    data = [idata[group] for group in ("observed_data", "constant_data") if group in idata.groups()]
    rows = getattr(model, "n_samples", None)
    description = type(model).__name__ + ("" if rows is None else f" on {rows} rows")
    return description, dataset, data


def _same_record(first, second) -> bool:
    """Whether two :func:`_model_record` are of one model on one data set."""
    (_, model, data), (_, other_model, other_data) = first, second
    return (
        model.attrs["spec"] == other_model.attrs["spec"]
        and model.equals(other_model)
        and len(data) == len(other_data)
        and all(group.equals(other) for group, other in zip(data, other_data, strict=True))
    )


def _present_var_names(idata: az.InferenceData, var_names) -> list[str]:
    available = list(idata.posterior.data_vars)
    if var_names is None:
        return available
    return [name for name in var_names if name in available]


def _summary(idata: az.InferenceData, kind: str, var_names: list[str], hdi_prob: float):
    """ArviZ statistics renamed to :data:`COLUMNS` (without the runtime columns)."""
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    if kind == "point":
        table = az.summary(
            idata, var_names=var_names, stat_funcs={"mean": np.mean}, extend=False, round_to="none"
        )
        return table.assign(
            sd=np.nan,
            hdi_lower=table["mean"],
            hdi_upper=table["mean"],
            **dict.fromkeys(_MCMC_ONLY, np.nan),
        )
    stats = "all" if kind == "mcmc" else "stats"
    with quiet_arviz_log():
        table = az.summary(
            idata, var_names=var_names, kind=stats, hdi_prob=hdi_prob, round_to="none"
        )
    if kind == "variational":
        table = with_exact_moments(table, idata)
    lower, upper = (column for column in table.columns if column.startswith("hdi_"))
    table = table.rename(columns={lower: "hdi_lower", upper: "hdi_upper"})
    if kind != "mcmc":
        table = table.assign(**dict.fromkeys(_MCMC_ONLY, np.nan))
    return table


def _steps(idata: az.InferenceData, parameters: pd.Index) -> list:
    """The step method of each parameter (ArviZ label ``name[coords]``) from the fit's
    ``step_methods`` attribute (:func:`bayesvm.samplers.nuts.fit_nuts`); NaN without one.
    """
    recorded = idata.attrs.get("step_methods")
    if not recorded:
        return [np.nan] * len(parameters)
    methods = dict(entry.split(": ", 1) for entry in str(recorded).split("; "))
    return [methods.get(parameter.split("[", 1)[0], np.nan) for parameter in parameters]


def _divergences(idata: az.InferenceData) -> float:
    """Divergent transitions over all chains; NaN for a fit that has no such statistic."""
    if "sample_stats" in idata.groups() and "diverging" in idata.sample_stats:
        return float(idata.sample_stats["diverging"].sum())
    return np.nan
