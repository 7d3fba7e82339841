"""Simulation-based calibration of samplers (Talts et al. 2018; Modrák et al. 2023).

Draw ``theta~`` from the prior and ``y`` from ``p(y | theta~)``; then ``theta~`` is a draw
from the posterior ``p(theta | y)``, exchangeable with draws ``theta_1, ..., theta_L`` of a
correct sampler. For any scalar ``h(theta, y)``, the rank of ``h(theta~, y)`` among the
``h(theta_l, y)`` (how many fall below it) is uniform on ``0, ..., L`` (Talts et al. Theorem
1): for each parameter, and for data-dependent quantities such as the log joint density,
which Modrák et al. find sensitive to errors that no single parameter shows. A sampler
that does not target the model's posterior, or a simulator whose prior or likelihood is not
the model's, makes the ranks non-uniform.

* :func:`simulation_based_calibration` runs the replications: for replication ``r`` it
  simulates a model and its true values, fits it with a seed of its own (``SeedSequence(seed)``
  spawned per replication), keeps ``L`` draws evenly spaced over the chains (thinned to
  near-independent draws, as Talts et al. advise: autocorrelated draws pile a correct
  sampler's ranks up at the ends; the effective sample size of the kept draws is recorded to
  show it), and ranks.
  Ties (indicators, point masses at zero) are broken uniformly at random, which keeps the
  rank uniform for a discrete ``h``.
* :func:`rank_uniformity` bins each parameter's ranks (20 bins of the ``L + 1 = 100`` values
  by default, 5 values each) and tests uniformity by Pearson's chi-square; a parameter passes
  when its p-value is at least the family level (0.001) divided by the number of parameters
  (Bonferroni).
* :func:`plot_rank_histograms` draws the histograms with the band that holds 99% of a bin's
  counts under uniformity, as Talts et al. draw them.
* :func:`simulate_response` draws ``y`` given true values from the model's likelihood block
  (``simulate_response(stats, rng)`` of :class:`~bayesvm.blocks.probit.ProbitAugmentation`,
  :class:`~bayesvm.blocks.NormalGammaCoefficients` and :class:`~bayesvm.blocks.
  normalized_hinge.NormalizedHinge`). The hinge pseudo-likelihood ``exp(-2 (1 - y f)_+)`` of
  the SVMs is not a distribution of ``y``, so no ``y`` can be drawn from it, and the
  posteriors built on it are not calibrated this way.

pandas, ArviZ and matplotlib are imported by the first call that needs them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import matplotlib.figure
    import pandas as pd

__all__ = [
    "KEPT_DRAWS",
    "BINS",
    "FAMILY_LEVEL",
    "simulate_response",
    "simulation_based_calibration",
    "rank_uniformity",
    "plot_rank_histograms",
]

#: Draws ranked per replication, ``L``: ranks ``0..99`` fall 5 to each of 20 bins.
KEPT_DRAWS = 99
#: Bins of the rank histograms.
BINS = 20
#: Level of the uniformity tests over all parameters together (Bonferroni).
FAMILY_LEVEL = 0.001


def simulate_response(model, point: Mapping, rng: np.random.Generator) -> np.ndarray:
    """``y`` drawn from ``model``'s likelihood at the canonical values ``point``.

    The model's statistics at ``point`` (:meth:`~bayesvm.models.BlockModel.stats_at`) go to
    the one block that can draw the data, its ``simulate_response(stats, rng)``.

    Raises
    ------
    ValueError
        When no block of the model can draw ``y``: the hinge pseudo-likelihood is not a
        distribution of the labels.
    """
    simulators = [block for block in model.blocks if hasattr(block, "simulate_response")]
    if len(simulators) != 1:
        raise ValueError(
            f"{type(model).__name__} has {len(simulators)} blocks that draw y; need exactly one "
            "(the hinge pseudo-likelihood is not a distribution of y)"
        )
    return simulators[0].simulate_response(model.stats_at(point), rng)


def simulation_based_calibration(
    simulate: Callable,
    fit: Callable,
    *,
    replications: int,
    seed=0,
    var_names=None,
    quantities: Callable | None = None,
    kept_draws: int = KEPT_DRAWS,
) -> pd.DataFrame:
    """Ranks of the true values among posterior draws, over simulated data sets.

    Parameters
    ----------
    simulate : callable
        ``simulate(rng) -> (model, truth)``: a model built on data drawn from its prior
        predictive, and the true values, a point of the model's canonical variables by name.
    fit : callable
        ``fit(model, seed) -> draws``: a :class:`~bayesvm.Fit`, or a mapping of each variable
        to draws of shape ``(chain, draw, *shape)``; ``seed`` is a ``SeedSequence``.
    replications : int
        Simulated data sets.
    seed : int or numpy.random.SeedSequence
        Every replication's streams (simulation, fit, ties) are spawned from it.
    var_names : sequence of str, optional
        Variables to rank (default every one of ``truth``); each scalar entry is a parameter.
    quantities : callable, optional
        ``quantities(model, point) -> dict[str, float]``: further quantities ``h(theta, y)``,
        ranked as parameters (e.g. ``{"log_density": model.log_density(point)}``).
    kept_draws : int
        ``L``, the draws kept for ranking, evenly spaced over the pooled chains.

    Returns
    -------
    pandas.DataFrame
        One row per replication and scalar parameter: ``replication``, ``parameter`` (e.g.
        ``beta[3]``), ``rank`` (in ``0..L``), ``kept_draws`` (``L``) and ``ess`` (the bulk
        effective sample size of the kept draws: near ``L`` when they are near-independent).
    """
    # imported here: pandas, and scikit-learn under ConvergenceWarning, cost start-up time
    import pandas as pd

    from bayesvm.exceptions import ConvergenceWarning

    if replications < 1 or kept_draws < 1:
        raise ValueError(
            f"replications and kept_draws must be >= 1; got {replications}, {kept_draws}"
        )
    rows = []
    for replication, stream in enumerate(np.random.SeedSequence(seed).spawn(replications)):
        simulation, fitting, ties = stream.spawn(3)
        model, truth = simulate(np.random.default_rng(simulation))
        with warnings.catch_warnings():  # short chains, judged by the ranks' ESS instead
            warnings.simplefilter("ignore", ConvergenceWarning)
            draws = _pooled_draws(fit(model, fitting))
        names = list(truth) if var_names is None else list(var_names)
        true_values, kept = _kept_values(model, truth, draws, names, quantities, kept_draws)
        ess = _effective_sizes(kept)
        tie_rng = np.random.default_rng(ties)
        for parameter, values in kept.items():
            rank = _rank(true_values[parameter], values, tie_rng)
            rows.append((replication, parameter, rank, kept_draws, ess[parameter]))
    return pd.DataFrame(rows, columns=["replication", "parameter", "rank", "kept_draws", "ess"])


def _kept_values(model, truth, draws, names, quantities, kept_draws) -> tuple[dict, dict]:
    """Each scalar parameter's true value and its ``kept_draws`` draws, evenly spaced."""
    total = len(next(iter(draws.values())))
    if total < kept_draws:
        raise ValueError(f"the fit has {total} draws; kept_draws={kept_draws} needs as many")
    keep = np.linspace(0, total - 1, kept_draws).round().astype(int)
    true_values, kept = {}, {}
    for name in names:
        true_values.update(_scalars(name, np.asarray(truth[name], dtype=float)[None]))
        kept.update(_scalars(name, np.asarray(draws[name], dtype=float)[keep]))
    if quantities is not None:
        true_values.update(
            {key: np.array([value]) for key, value in quantities(model, truth).items()}
        )
        at_draws = [quantities(model, _draw(draws, index)) for index in keep]
        kept.update({key: np.array([values[key] for values in at_draws]) for key in at_draws[0]})
    return {key: float(value[0]) for key, value in true_values.items()}, kept


def _pooled_draws(result) -> dict[str, np.ndarray]:
    """Each variable's draws with the chains pooled, ``(chains * draws, *shape)``."""
    posterior = result.idata.posterior if hasattr(result, "idata") else result
    pooled = {}
    for name in posterior:
        values = np.asarray(posterior[name])
        pooled[name] = values.reshape(values.shape[0] * values.shape[1], *values.shape[2:])
    return pooled


def _draw(draws: dict, index: int) -> dict[str, np.ndarray]:
    """One draw of every variable."""
    return {name: values[index] for name, values in draws.items()}


def _scalars(name: str, values: np.ndarray) -> dict[str, np.ndarray]:
    """``values`` of shape ``(draws, *shape)`` split into scalar parameters ``name[i, j]``."""
    if values.ndim == 1:
        return {name: values}
    return {
        f"{name}[{', '.join(map(str, index))}]": values[(slice(None), *index)]
        for index in np.ndindex(values.shape[1:])
    }


def _rank(true_value: float, values: np.ndarray, rng: np.random.Generator) -> int:
    """How many of ``values`` lie below ``true_value``, ties placed at random among them."""
    below = int(np.sum(values < true_value))
    return below + int(rng.integers(0, int(np.sum(values == true_value)) + 1))


def _effective_sizes(kept: dict[str, np.ndarray]) -> dict[str, float]:
    """Bulk ESS of each parameter's kept draws (one chain; NaN for a constant one)."""
    import xarray as xr

    from bayesvm._arviz import arviz as az

    names = list(kept)
    values = np.stack([kept[name] for name in names], axis=-1)[None]
    dataset = xr.Dataset({"kept": (["chain", "draw", "parameter"], values)})
    with warnings.catch_warnings():  # a constant parameter (e.g. gamma = 1) has no ESS
        warnings.simplefilter("ignore", RuntimeWarning)
        ess = az.ess(dataset, method="bulk")["kept"].to_numpy()
    return dict(zip(names, ess.tolist(), strict=True))


def rank_uniformity(
    ranks: pd.DataFrame, bins: int = BINS, level: float = FAMILY_LEVEL
) -> pd.DataFrame:
    """Pearson's chi-square test of each parameter's ranks against the uniform.

    Parameters
    ----------
    ranks : pandas.DataFrame
        :func:`simulation_based_calibration`'s result.
    bins : int
        Equal bins of the ``L + 1`` rank values; must divide ``L + 1``.
    level : float
        Level over all parameters together: each passes at ``level / n_parameters``.

    Returns
    -------
    pandas.DataFrame
        Indexed by parameter: ``replications``, ``chi2``, ``p_value``, ``ess_median`` (of the
        kept draws) and ``passed``; ``attrs["threshold"]`` is the per-parameter level.
    """
    import pandas as pd
    from scipy.stats import chisquare

    values = int(ranks["kept_draws"].iloc[0]) + 1
    if values % bins:
        raise ValueError(f"bins={bins} must divide the {values} rank values")
    rows = {}
    for parameter, group in ranks.groupby("parameter", sort=False):
        counts = np.bincount(group["rank"].to_numpy() * bins // values, minlength=bins)
        statistic, p_value = chisquare(counts)
        rows[parameter] = (len(group), statistic, p_value, group["ess"].median())
    table = pd.DataFrame.from_dict(
        rows, orient="index", columns=["replications", "chi2", "p_value", "ess_median"]
    )
    threshold = level / len(table)
    table["passed"] = table["p_value"] >= threshold
    table.index.name = "parameter"
    table.attrs["threshold"] = threshold
    return table


def plot_rank_histograms(
    ranks: pd.DataFrame, bins: int = BINS, parameters=None, columns: int = 4
) -> matplotlib.figure.Figure:
    """One rank histogram per parameter, with the band holding 99% of a bin's count under
    uniformity (binomial quantiles) and its expected count.

    Parameters
    ----------
    ranks : pandas.DataFrame
        :func:`simulation_based_calibration`'s result.
    bins : int
        Equal bins of the ``L + 1`` rank values.
    parameters : sequence of str, optional
        Which to draw (default all).
    columns : int
        Panels per row.
    """
    import matplotlib.pyplot as plt
    from scipy.stats import binom

    parameters = list(ranks["parameter"].unique() if parameters is None else parameters)
    values = int(ranks["kept_draws"].iloc[0]) + 1
    rows = -(-len(parameters) // columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(3 * columns, 2.2 * rows), squeeze=False, sharex=True
    )
    for ax, parameter in zip(axes.flat, parameters, strict=False):
        rank = ranks.loc[ranks["parameter"] == parameter, "rank"].to_numpy()
        lower, upper = binom.ppf([0.005, 0.995], rank.size, 1.0 / bins)
        ax.axhspan(lower, upper, color="0.85")
        ax.axhline(rank.size / bins, color="0.5", lw=1)
        ax.hist(rank, bins=np.linspace(0, values, bins + 1), color="C0")
        ax.set_title(parameter, fontsize=9)
    for ax in axes.flat[len(parameters) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("rank")
    figure.tight_layout()
    return figure
