"""The optima that VB's ascents reach, and which of them holds the posterior mass.

Coordinate ascent climbs to a local optimum of the mean-field bound, and a posterior with
several modes has an optimum near each (Blei, Kucukelbir & McAuliffe 2017, section 2.4). The
bound's value does not rank them by posterior mass: ``log p(y) - KL(q || p)`` loses a
different ``KL`` at each optimum, and where one mode couples many variables that mean-field
treats as independent (the cardiac model's missing cells and ``u``) it loses far more there.
On the full cardiac data the minor mode's optimum has the larger bound by 17.5 nats although
the other mode holds all but ``e^-143`` of the mass. The bound ranks optima only where the
mean-field loss is alike at each (optima of one mode's shape, e.g. the same model's
shrinkage starts of :data:`~bayesvm.blocks.gaussian_priors.PRECISION_STARTS`).

So VB keeps every distinct optimum its starts reach (:func:`distinct_optima`) and, where
there are several, weighs them by importance sampling of the model's density
(:func:`weigh_optima`, :mod:`bayesvm.checks.mode_mass`): the fit is the optimum holding the
most mass. Each optimum's proposal is the first with a Pareto k-hat below 0.7 (else the best)
of t distributions fitted to draws from its ``q``, to those spread :data:`WIDER` times as
wide, to the Laplace approximation at the density's mode nearest ``q``'s mean, and to both.
``q`` alone can sit several posterior sds from its mode and be too narrow (the cardiac model's
main mode: k-hat 2.7 from ``q``, 0.3 spread twice as wide, 0.5 with the Laplace draws), and a
mode on a kink has no Laplace approximation (the other cardiac mode, a weight at 0: k-hat 0.6
from ``q``). On all 3504 cardiac patients the log mass ratio is 143.9 (the samplers' chains:
143.2). The optima are stored in the ``variational`` group (:func:`optimum_group`;
``Fit.optima``), and the fit's problems say so (:func:`optima_problem`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache, partial

import numpy as np

from bayesvm.checks.mode_mass import (
    FIT_DRAWS,
    ModeMasses,
    laplace_draws,
    masses_from_draws,
    unconstrained_draws,
)

__all__ = [
    "Optimum",
    "distinct_optima",
    "q_moments",
    "weigh_optima",
    "optimum_group",
    "optima_problem",
    "SAME_OPTIMUM",
]

#: Two optima are one when every reported mean agrees within this share of ``q``'s sd.
SAME_OPTIMUM = 0.05
#: The second proposal of an optimum: draws from ``q`` spread this many times as wide
#: (mean-field ``q`` is narrower than the posterior: 2.6 times on the cardiac model).
WIDER = 2.0


@dataclass
class Optimum:
    """An optimum of the bound: its value, ``q``'s mean and sd of each reported variable (where
    ``q`` gives them in closed form), whether the ascent to it converged, the ascent itself
    (its final state holds ``q``) and its sweeps, and, once weighed, its log mass (up to a
    constant shared by the optima) and the k-hat of that estimate.
    """

    bound: float
    means: dict[str, np.ndarray]
    sds: dict[str, np.ndarray]
    converged: bool
    ascent: object = None
    sweeps: int = 0
    log_mass: float = np.nan
    khat: float = np.nan


def distinct_optima(model, ascents) -> list[Optimum]:
    """The distinct optima of ``ascents``, pairs of an :class:`~bayesvm.drivers.AscentResult`
    of CAVI over ``model``'s blocks and its sweeps, in the order first reached.
    """
    optima: list[Optimum] = []
    for result, sweeps in ascents:
        means, sds = q_moments(model, result.state[0])
        optimum = Optimum(float(result.trace[-1]), means, sds, result.converged, result, sweeps)
        if not any(_same(optimum, kept) for kept in optima):
            optima.append(optimum)
    return optima


def q_moments(model, params) -> tuple[dict, dict]:
    """``q``'s mean and sd of each reported variable (where ``q`` gives them in closed form),
    from every block's parameters ``params``.
    """
    means, sds = {}, {}
    for block in model.blocks:
        for name, (mean, sd) in block.q_moments(params[block.name]).items():
            means[name], sds[name] = np.asarray(mean, float), np.asarray(sd, float)
    return means, sds


def weigh_optima(model, optima: list[Optimum], rng) -> tuple[list[Optimum], ModeMasses | str]:
    """The optima ordered by posterior mass, heaviest first, each with its ``log_mass`` and
    ``khat``, and the masses (:class:`~bayesvm.checks.mode_mass.ModeMasses`); where they
    cannot be estimated, the optima as given and why (a ``str``).
    """
    names = model.mass_var_names
    candidates, shapes = [], {}
    for optimum in optima:
        params, _ = optimum.ascent.state
        values: dict = {}
        for block in model.blocks:
            values.update(block.draw_q(params[block.name], rng, FIT_DRAWS))
        shapes = {name: values[name].shape[1:] for name in names}
        from_q = unconstrained_draws(model, values)
        centre = from_q.mean(axis=0)
        laplace = cache(
            partial(laplace_draws, model, shapes, centre, from_q.std(axis=0), rng, FIT_DRAWS)
        )
        wider = centre + WIDER * (from_q - centre)
        candidates.append([from_q, wider, laplace, partial(_both, from_q, laplace)])
    masses = masses_from_draws(model, shapes, candidates, rng)
    if isinstance(masses, str):
        return optima, masses
    weighed = [
        replace(optimum, log_mass=float(log_mass), khat=float(khat))
        for optimum, log_mass, khat in zip(optima, masses.log_mass, masses.khat, strict=True)
    ]
    order = np.argsort(-masses.log_mass, kind="stable")
    ordered = ModeMasses(masses.log_mass[order], masses.standard_error[order], masses.khat[order])
    return [weighed[k] for k in order], ordered


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


def _both(from_q: np.ndarray, laplace) -> np.ndarray | None:
    """The draws from ``q`` and the Laplace approximation's together (None without one)."""
    draws = laplace()
    return None if draws is None else np.vstack([from_q, draws])


def optimum_group(model, optima: list[Optimum]) -> dict:
    """The ``variational`` group's record of the optima along the dimension ``optimum`` (0:
    the fit's): ``optimum_bound``, ``optimum_log_mass`` and ``optimum_khat`` (NaN where not
    weighed) and ``optimum_mean_<name>`` of each variable.
    """
    group = {
        f"optimum_{field}": (["optimum"], np.array([getattr(optimum, field) for optimum in optima]))
        for field in ("bound", "log_mass", "khat")
    }
    for name in optima[0].means:
        values = np.stack([optimum.means[name] for optimum in optima])
        group[f"optimum_mean_{name}"] = (["optimum", *model.dims.get(name, [])], values)
    return group


def optima_problem(model, optima: list[Optimum], starts: int, masses=None) -> str:
    """The fit's problem when its starts reached several optima: which one the fit is and
    why (``masses``, from :func:`weigh_optima`: the masses or why they are not estimated), and
    each other optimum's bound and the mean that differs most from the fit's.
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
    if isinstance(masses, ModeMasses):
        weighed = masses.describe().replace("mode ", "optimum ")
        chosen = (
            f"this fit is the optimum that holds the most posterior mass (bound {fit.bound:.6g}; "
            f"{weighed}, optima counted in fit.optima's order)"
        )
    else:
        reason = masses or "masses not estimated"
        chosen = f"this fit is the first start's (bound {fit.bound:.6g}; {reason})"
    return (
        f"VB reached {len(optima)} optima from {starts} starts; {chosen}; the others: "
        f"{'; '.join(others)} (fit.optima). The bound does not rank optima by posterior mass "
        "(mean-field loses a different amount at each): the posterior has several modes, and "
        "inside the fit's mode mean-field q may still be far from it; Gibbs or NUTS, whose "
        "chains start apart, show each mode's shape"
    )
