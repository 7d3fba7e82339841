"""The optima that VB's ascents reach, and what the bound cannot say about them.

Coordinate ascent climbs to a local optimum of the mean-field bound, and a posterior with
several modes has an optimum near each (Blei, Kucukelbir & McAuliffe 2017, section 2.4). The
bound's value does not rank them by posterior mass: ``log p(y) - KL(q || p)`` loses a
different ``KL`` at each optimum, and where one mode couples many variables that mean-field
treats as independent (the cardiac model's missing cells and ``u``) it loses far more there.
On the full cardiac data the minor mode's optimum has the larger bound by 17.5 nats although
the other mode holds all but ``e^-143`` of the mass. The bound ranks optima only where the
mean-field loss is alike at each (optima of one mode's shape, e.g. the same model's
shrinkage starts of :data:`~bayesvm.blocks.gaussian_priors.PRECISION_STARTS`).

So VB keeps every distinct optimum its starts reach (:func:`distinct_optima`), stores them in
the ``variational`` group (:func:`optimum_group`; ``Fit.optima``), and says so in the fit's
problems (:func:`optima_problem`) rather than choosing by the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Optimum", "distinct_optima", "optimum_group", "optima_problem", "SAME_OPTIMUM"]

#: Two optima are one when every reported mean agrees within this share of ``q``'s sd.
SAME_OPTIMUM = 0.05


@dataclass
class Optimum:
    """An optimum of the bound: its value, ``q``'s mean and sd of each reported variable (where
    ``q`` gives them in closed form), and whether the ascent to it converged.
    """

    bound: float
    means: dict[str, np.ndarray]
    sds: dict[str, np.ndarray]
    converged: bool


def distinct_optima(model, results) -> list[Optimum]:
    """The distinct optima of ascents ``results`` (:class:`~bayesvm.drivers.AscentResult`
    of CAVI over ``model``'s blocks), in the order first reached.
    """
    optima: list[Optimum] = []
    for result in results:
        params, _ = result.state
        means, sds = {}, {}
        for block in model.blocks:
            for name, (mean, sd) in block.q_moments(params[block.name]).items():
                means[name], sds[name] = np.asarray(mean, float), np.asarray(sd, float)
        optimum = Optimum(float(result.trace[-1]), means, sds, result.converged)
        if not any(_same(optimum, kept) for kept in optima):
            optima.append(optimum)
    return optima


def _scaled_gaps(first: Optimum, second: Optimum) -> dict[str, np.ndarray]:
    """Each mean's difference in ``first``'s sds (relative to the mean's size where the sd
    is not finite).
    """
    gaps = {}
    for name, mean in first.means.items():
        sd = first.sds[name]
        scale = np.where(np.isfinite(sd) & (sd > 0.0), sd, 1e-3 * (1.0 + np.abs(mean)))
        gaps[name] = np.abs(second.means[name] - mean) / scale
    return gaps


def _same(first: Optimum, second: Optimum) -> bool:
    return all(np.all(gap <= SAME_OPTIMUM) for gap in _scaled_gaps(first, second).values())


def optimum_group(model, optima: list[Optimum]) -> dict:
    """The ``variational`` group's record of the optima along the dimension ``optimum`` (0:
    the fit's): ``optimum_bound`` and ``optimum_mean_<name>`` of each variable.
    """
    group = {"optimum_bound": (["optimum"], np.array([optimum.bound for optimum in optima]))}
    for name in optima[0].means:
        values = np.stack([optimum.means[name] for optimum in optima])
        group[f"optimum_mean_{name}"] = (["optimum", *model.dims.get(name, [])], values)
    return group


def optima_problem(model, optima: list[Optimum], starts: int) -> str:
    """The fit's problem when its starts reached several optima: each other optimum's bound
    and the mean that differs most from the fit's.
    """
    fit = optima[0]
    others = []
    for optimum in optima[1:]:
        gaps = _scaled_gaps(fit, optimum)
        name = max(gaps, key=lambda key: float(np.max(gaps[key], initial=0.0)))
        index = np.unravel_index(int(np.argmax(gaps[name])), gaps[name].shape)
        coords = [
            model.coords[dim][i] for dim, i in zip(model.dims.get(name, []), index, strict=True)
        ]
        label = f"{name}[{', '.join(str(coord) for coord in coords)}]" if index else name
        others.append(
            f"bound {optimum.bound:.6g} with {label} = {float(optimum.means[name][index]):.3g} "
            f"(here {float(fit.means[name][index]):.3g})"
        )
    return (
        f"VB reached {len(optima)} optima from {starts} starts; this fit is the first start's "
        f"(bound {fit.bound:.6g}), the others: {'; '.join(others)} (fit.optima). The bound "
        "does not rank optima by posterior mass (mean-field loses a different amount at "
        "each), so the posterior may have several modes: fit by Gibbs or NUTS, whose chains "
        "start apart, to see which holds the mass"
    )
