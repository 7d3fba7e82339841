"""Mean-field variational Bayes for every model, by coordinate ascent over its blocks (CAVI).

Each iteration visits the model's blocks in order and sets ``q(block)`` to the block's
complete conditional with the other blocks' statistics replaced by their expectations under
``q`` (Blei, Kucukelbir & McAuliffe 2017, section 4.3, eq. 17-18). For the papers' models this
is Luts-Ormerod's Algorithms 1-2 and Drugowitsch's updates (sections 2.2-2.4, 3.2-3.4) line by
line: the blocks' docstrings name each line. After the sweep the lower bound is the sum of the
blocks' terms (:mod:`bayesvm.blocks.base`); the ascent stops on the model's rule and raises if
the bound ever decreases (:func:`bayesvm.drivers.run_ascent`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from bayesvm.blocks import dispersed_start
from bayesvm.checks.pareto import check_q
from bayesvm.drivers import run_ascent, run_ascent_from
from bayesvm.registry import block_driver, register
from bayesvm.results import Fit, build_idata
from bayesvm.vb.gaussian_family import check_family, gaussian_state, make_gaussian_step
from bayesvm.vb.lrvb import check_covariance, linear_response
from bayesvm.vb.mean_newton import hinge_of, make_newton_sweep
from bayesvm.vb.optima import (
    distinct_optima,
    optima_problem,
    optimum_group,
    q_moments,
    weigh_optima,
)
from bayesvm.vb.posterior import q_groups
from bayesvm.vb.squarem import Squarem
from bayesvm.vb.state import VBState

__all__ = [
    "fit_vb",
    "ascend",
    "Acceleration",
    "initial_state",
    "make_cavi_step",
    "SUBSAMPLE_MIN_ROWS",
    "SUBSAMPLE_MIN_FLOPS",
    "SUBSAMPLE_FRACTION",
    "SUBSAMPLE_TOL",
]


def initial_state(blocks, starts: tuple = ()) -> VBState:
    """Expected statistics of every block but the first, which the first update reads.

    ``starts`` gives each block's starting point (:attr:`~bayesvm.blocks.Block.starts`), in
    the order of ``blocks``.
    """
    stats: dict = {}
    starts = dict(zip([block.name for block in blocks], starts, strict=False))
    for block in blocks[1:]:
        stats[block.name] = block.initial_stats(stats, starts.get(block.name))
    return VBState({}, stats)


def make_cavi_step(blocks, tilts: Mapping[str, np.ndarray] | None = None):
    """One CAVI sweep: ``step(state) -> (new state, lower bound)``, states
    :class:`~bayesvm.vb.state.VBState`.

    ``tilts``: a vector ``t`` by block name, which that block's conditional takes as its
    ``tilt`` (the log joint tilted by ``t^T theta``: linear response, :mod:`bayesvm.vb.lrvb`);
    the bound is then the tilted one, ``+ t^T E[theta]`` (the block's statistics' ``mean``).
    """
    tilts = dict(tilts or {})

    def step(state):
        params, stats = dict(state[0]), dict(state[1])
        for block in blocks:
            if block.name in tilts:
                q = block.conditional(stats, tilt=tilts[block.name])
            else:
                q = block.conditional(stats)
            params[block.name] = q
            stats[block.name] = block.expected_stats(q)
        bound = 0.0
        for block in blocks:
            bound += block.bound_term(params[block.name], stats)
        for name, tilt in tilts.items():
            bound += float(np.dot(tilt, stats[name].mean))
        return VBState(params, stats), bound

    return step


@register("vb", block_driver("vb"))
def fit_vb(
    model,
    *,
    tol: float | None = None,
    relative: bool | None = None,
    max_iter: int | None = None,
    accelerate: bool = True,
    subsample: bool = True,
    starts=None,
    draws: int = 1000,
    seed=None,
    progressbar: bool = True,
    covariance: str = "mean-field",
    family: str = "mean-field",
) -> Fit:
    """Fit by mean-field VB: CAVI over the model's blocks, accelerated by SQUAREM and, on the
    hinge, Newton steps in the coefficients' mean.

    A model with several starting points (a learned shrinkage with Drugowitsch's hyperprior:
    its prior mean and 1) runs a few iterations from each and goes on from the one with the
    larger bound (:func:`bayesvm.drivers.run_ascent_from`). That ascent starts where the papers
    do; ``starts`` adds ascents from other points, by default the model's own
    (:meth:`~bayesvm.models.BlockModel.vb_start_models`: the complete-case fit for
    :class:`~bayesvm.models.MissingDataSVM`). Every distinct optimum is kept in
    ``fit.optima``; where there are several, they are weighed by importance sampling and the
    fit is the one holding the most posterior mass, not the one with the largest bound
    (:mod:`bayesvm.vb.optima`), and ``problems`` says so.

    Parameters
    ----------
    tol : float, optional
        Stop when an iteration increases the bound by less than this, relative to the bound's
        size (``relative``); default ``model.vb_settings``: 1e-10 relative for the SVMs (so
        that the rule does not tighten with n as the paper's absolute 1e-10 of Luts-Ormerod
        section 4 does), 0.001 % relative (Drugowitsch sections 2.5 / 3.5).
    relative : bool, optional
        ``False`` makes ``tol`` absolute, e.g. ``tol=1e-10, relative=False, accelerate=False``
        is Luts-Ormerod's rule and algorithm as printed; default ``model.vb_settings``.
    max_iter : int, optional
        Most iterations (default ``model.vb_settings``: 10,000 for the SVMs, since coordinate
        ascent is slow on nearly separable data; 500 in Drugowitsch's code).
    accelerate : bool
        Iterate SQUAREM cycles of three sweeps (:class:`bayesvm.vb.squarem.Squarem`) instead
        of single sweeps, and on the hinge with Gaussian coefficients follow each sweep by a
        Newton step in their mean (:mod:`bayesvm.vb.mean_newton`: on the spam data 16 sweeps
        instead of 157). From a subsample's optimum (``subsample``) those Newton sweeps go on
        without SQUAREM, which there only adds sweeps (on simulated data of 1e4-1e5 rows, 6-10
        sweeps against 9-12 and 42-48 for CAVI with SQUAREM). The bound still never
        decreases, and the fixed points are CAVI's.
    subsample : bool
        On :data:`SUBSAMPLE_MIN_ROWS` rows or more and :data:`SUBSAMPLE_MIN_FLOPS` per
        iteration, start from a fit to a random tenth of the rows (itself so started), where
        the model can be restricted to rows
        (:meth:`~bayesvm.models.block_model.BlockModel.row_subset`). The ascent on all rows
        then begins near its optimum and needs a third to a half of the sweeps; the fixed point is
        the same (the bound still never decreases from that start). ``False`` starts from
        the blocks' own starting points, as the papers do.
    starts : int or sequence of dict, optional
        Ascents besides the papers' start: an int ``k`` adds ``k - 1`` from dispersed values
        (the blocks' :func:`~bayesvm.blocks.dispersed_start`, drawn with a fixed seed, so the
        fit stays deterministic; ``starts=1`` is the papers' start alone); points (dicts of the
        model's variables, e.g. the posterior means of a sampler's chains in another mode) add
        one ascent from each. Each costs about one more fit. They need a model whose blocks
        after the coefficient block give VB statistics at a value (every model but
        :class:`~bayesvm.models.KernelGKM`, whose blocks tell draws from ``q``'s moments); a
        fit started from a subsample has the first alone. Default: the model's own starts.
    draws : int
        Draws from ``q`` stored as the posterior (one chain), so that ArviZ treats VB like the
        samplers; ``q``'s parameters are in the ``variational`` group. Their importance
        weights give ``fit.pareto_k``, which says whether ``q`` is close to the posterior
        (:mod:`bayesvm.checks.pareto`; it needs at least 100 draws, and a problem is reported
        above ``min(1 - 1 / log10(draws), 0.7)``).
    seed : int or numpy.random.Generator, optional
        For the draws from ``q`` only; the fit itself is deterministic.
    progressbar : bool
        Show the iterations and the bound once the fit has run for a second.
    covariance : {"mean-field", "lrvb"}
        The coefficients' covariance: mean-field ``q``'s (the papers'), or the linear response
        VB correction of Giordano, Broderick & Jordan (2018) (:mod:`bayesvm.vb.lrvb`), which
        widens mean-field's too narrow sds (on Rätsch's heart data from 0.44-0.58 of Gibbs's to
        0.84-0.96; the module says where it falls short; with ``family="gaussian"``,
        0.98-1.00).
        With ``"lrvb"`` the coefficients' draws come from ``N(q's mean, Cov_LRVB)`` and their
        summary sds are LRVB's; the ``variational`` group keeps ``lrvb_covariance`` and the
        ``mean_field_variance`` it corrects, and ``idata.attrs["covariance"]`` says which.
        Other variables keep mean-field ``q``. It costs about ``10 K`` more sweeps for ``K``
        coefficients (block GMRES on the sweep's Jacobian at the optimum; the spam data's 58:
        700 sweeps, 9 s beside the plain fit's 3.4 s). Needs a Gaussian coefficient block (not
        :class:`~bayesvm.models.KernelGKM`, :class:`~bayesvm.models.LinearRegression`).
    family : {"mean-field", "gaussian"}
        ``q``'s family: the papers' mean-field ``q(theta) q(a)``, or a Gaussian ``q(theta)``
        with the hinge's augmentation ``a`` integrated out (the Gaussian variational
        approximation, :mod:`bayesvm.vb.gaussian_family`), fitted from mean-field's optimum
        (the one kept, where there are several). Its bound is the tighter, its means closer to
        the posterior's, and with ``covariance="lrvb"`` its sds within a few per cent of long
        Gibbs runs where mean-field's LRVB is up to half off. For a Gaussian coefficient block,
        the hinge and priors (:class:`~bayesvm.models.LinearSVM` with a ridge prior,
        :class:`~bayesvm.models.MixedSVM`); ``idata.attrs["family"]`` says which.
    """
    settings = model.vb_settings
    options = dict(
        tol=settings["tol"] if tol is None else tol,
        max_iter=settings["max_iter"] if max_iter is None else max_iter,
        relative=settings["relative"] if relative is None else relative,
    )
    check_covariance(model, covariance)
    check_family(model, family)
    extra = None if starts is None else _extra_starts(model, starts)  # refused before any work
    acceleration = Acceleration(squarem=accelerate, newton=accelerate)
    optima = _find_optima(model, options, extra, acceleration, subsample, progressbar)
    refined = _refine(model, optima.kept, family, options, progressbar)
    fitted, response = _fitted_q(model, refined, covariance)
    return _vb_fit(model, optima, refined, fitted, response, covariance, draws, seed)


@dataclass(frozen=True)
class _Optima:
    """What :func:`fit_vb`'s ascents found: the distinct optima, the kept one first, their
    masses where there are several, and how many ascents ran.
    """

    optima: list
    masses: object
    ascents: int

    @property
    def kept(self):
        return self.optima[0]


@dataclass(frozen=True)
class _Refined:
    """The kept optimum as the fit reports it: the ascent's result, its sweeps, ``q``'s family
    and the sweep that linear response differentiates.
    """

    result: object
    sweeps: int
    family: str
    sweep_for: Callable


def _find_optima(model, options: dict, extra, acceleration, subsample, progressbar) -> _Optima:
    """The papers' ascent (from a subsample's optimum where it pays), the ascents from the
    other starts (``extra``, or the model's own), and their distinct optima, weighed by their
    posterior mass where there are several (:mod:`bayesvm.vb.optima`).
    """
    result, sweeps, subsampled = ascend(
        model, acceleration, **options, subsample=subsample, progressbar=progressbar
    )
    others = []
    if not subsampled and not result.interrupted:
        if extra is None:  # the model's own starts, fitted only where they are used
            extra = _extra_starts(model, _model_starts(model, options))
        others = _further_ascents(model, extra, acceleration, options)
    optima = distinct_optima(model, [(result, sweeps), *others])
    masses = None
    if len(optima) > 1:
        optima, masses = weigh_optima(model, optima, np.random.default_rng(MASS_SEED))
    return _Optima(optima, masses, 1 + len(others))


def _refine(model, optimum, family: str, options: dict, progressbar) -> _Refined:
    """The kept optimum, refined by the Gaussian family's ascent from it where ``family`` is
    ``"gaussian"`` (:mod:`bayesvm.vb.gaussian_family`; not after an interrupted ascent).
    """
    result, sweeps = optimum.ascent, optimum.sweeps
    if result.interrupted or family != "gaussian":
        return _Refined(result, sweeps, "mean-field", partial(make_cavi_step, model.blocks))
    step = _Counted(make_gaussian_step(model))
    start = gaussian_state(model, result.state)
    result = run_ascent(start, step, **options, progressbar=progressbar)
    return _Refined(
        result, sweeps + step.sweeps, family, partial(make_gaussian_step, model, search=False)
    )


def _fitted_q(model, refined: _Refined, covariance: str):
    """Each block with its ``q``, the coefficients' covariance corrected by linear response
    where ``covariance`` is ``"lrvb"`` (:mod:`bayesvm.vb.lrvb`), and that response (or None).
    """
    params, _ = refined.result.state
    fitted = [(block, params[block.name]) for block in model.blocks]
    if covariance != "lrvb":
        return fitted, None
    coefficients = model.coefficients
    response = linear_response(refined.sweep_for, refined.result.state, coefficients.name)
    fitted = [
        (block, response.corrected(block, q) if block is coefficients else q) for block, q in fitted
    ]
    return fitted, response


def _vb_fit(model, found: _Optima, refined: _Refined, fitted, response, covariance, draws, seed):
    """The :class:`~bayesvm.Fit`: draws from ``q``, its ``variational`` group (bound trace,
    optima, Pareto k-hat, LRVB) and every problem found.
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup

    result, optima = refined.result, found.optima
    posterior, variational, coords = q_groups(model, fitted, np.random.default_rng(seed), draws)
    check = check_q(model, fitted, posterior)
    coords["obs_id"] = np.arange(model.n_samples)
    variational["lower_bound"] = (["iteration"], result.trace)
    variational["sweeps"] = ((), refined.sweeps)
    variational.update(optimum_group(model, optima))
    variational.update(check.variational())
    coords["optimum"] = np.arange(len(optima))
    if response is not None:
        group, lrvb_coords = response.variational(model.coefficients)
        variational.update(group)
        coords.update(lrvb_coords)
    idata = build_idata(model, posterior, variational=xr.Dataset(variational, coords=coords))
    idata.attrs["covariance"] = covariance
    idata.attrs["family"] = refined.family
    idata.attrs.update(check.attrs())
    problems = list(result.problems)
    if len(optima) > 1:
        problems.append(optima_problem(model, optima, found.ascents, found.masses))
    if check.problem():
        problems.append(check.problem())
    if response is not None:
        problems.extend(response.problems())
    return Fit(
        model,
        idata,
        "vb",
        "variational",
        n_iter=result.trace.size,
        converged=result.converged and not problems,
        problems=problems,
        lower_bound_trace=result.trace,
    )


#: Seed of VB's dispersed starts (fixed: the same call gives the same fit).
DISPERSED_SEED = 20140101
#: Seed of the importance sampling that weighs several optima (fixed, likewise).
MASS_SEED = 20180101


def _model_starts(model, options: dict) -> list[dict]:
    """The points of ``model``'s own further starts: each smaller model's
    (:meth:`~bayesvm.models.BlockModel.vb_start_models`) ``q`` means at its optimum from
    the papers' start, mapped to ``model``.
    """
    points = []
    for smaller, to_point in model.vb_start_models():
        result, _, _ = ascend(smaller, Acceleration(), **options, subsample=True, progressbar=False)
        means, _ = q_moments(smaller, result.state[0])
        points.append(to_point(means))
    return points


def _extra_starts(model, starts) -> list[dict]:
    """Every block's statistics at each start of :func:`fit_vb`'s ``starts`` beyond the
    papers': at dispersed values (an int), or at given points (the blocks'
    :meth:`~bayesvm.blocks.PointBlock.point_stats`, latent blocks at a dispersed value given them).
    """
    blocks = model.blocks
    if isinstance(starts, (int, np.integer)) and not isinstance(starts, bool):
        if starts < 1:
            raise ValueError(f"starts must be a positive integer or points; got {starts!r}")
        points = [None] * (int(starts) - 1)
    elif isinstance(starts, (list, tuple)) and all(isinstance(p, Mapping) for p in starts):
        points = list(starts)
    else:
        raise ValueError(f"starts must be a positive integer or points; got {starts!r}")
    if points and ("gibbs" not in model.drivers or blocks[0] is not model.coefficients):
        raise ValueError(
            f"starts={starts!r}: VB cannot start {type(model).__name__} from values (its blocks "
            "tell draws from q's moments, or it has no Gibbs start); use starts=1"
        )
    rngs = np.random.default_rng(DISPERSED_SEED).spawn(len(points))
    return [
        dispersed_start(blocks, rng) if point is None else model.stats_at(point, rng)
        for point, rng in zip(points, rngs, strict=True)
    ]


def _further_ascents(model, starts: list[dict], acceleration, options: dict) -> list:
    """Ascents to convergence from each of ``starts`` (every block's statistics), the first
    block's dropped: the first update computes it; each with its sweeps.
    """
    blocks = model.blocks
    sweep = _ascent_sweep(model, acceleration)
    results = []
    for stats in starts:
        state = {name: value for name, value in stats.items() if name != blocks[0].name}
        step = Squarem(sweep) if acceleration.squarem else _Counted(sweep)
        results.append((run_ascent(({}, state), step, **options), step.sweeps))
    return results


#: VB starts from a fit to a subsample (:func:`fit_vb`) from this many rows and this much
#: work per iteration on (``model.flops_per_iteration``; below it a sweep costs too little for
#: the start to pay off: at 1e5 x 10 it cost 0.76 s against 0.51 s, at 3e5 x 10 it saved a
#: third); the subsample is this share of the rows.
SUBSAMPLE_MIN_ROWS = 10_000
SUBSAMPLE_MIN_FLOPS = 5e7
SUBSAMPLE_FRACTION = 0.1
#: The subsample's fit stops on a relative bound increase below this: its optimum lies some
#: posterior sds of the full fit's away, so converging it further buys nothing.
SUBSAMPLE_TOL = 1e-4


@dataclass(frozen=True)
class Acceleration:
    """What speeds VB's ascent (``accelerate`` of :func:`fit_vb` sets both): ``squarem``,
    SQUAREM's cycles of three sweeps (:class:`bayesvm.vb.squarem.Squarem`) instead of single
    sweeps, and ``newton``, on the hinge with Gaussian coefficients a Newton step in their mean
    after each sweep (:mod:`bayesvm.vb.mean_newton`). Neither changes CAVI's fixed points;
    ``bayesvm bench --model acceleration`` times each combination.
    """

    squarem: bool = True
    newton: bool = True


def ascend(model, acceleration: Acceleration, *, tol, max_iter, relative, subsample, progressbar):
    """CAVI over ``model``'s blocks to convergence, sped up by ``acceleration``: the ascent's
    result, its sweeps and whether it started from a subsample.

    Where ``subsample`` applies (:func:`fit_vb`), the ascent starts from the blocks'
    statistics carried over from an ascent on a random subsample of the rows
    (:meth:`~bayesvm.blocks.Block.subsample_stats`), itself so accelerated and started; else
    it starts from every starting point of the blocks and goes on from the leader
    (:func:`bayesvm.drivers.run_ascent_from`). From a subsample's optimum, where Newton steps
    apply, SQUAREM is left out: near the optimum they need no extrapolation (module docstring
    of :mod:`bayesvm.vb.mean_newton`), and SQUAREM's cycles would only add sweeps.
    """
    blocks = model.blocks
    sweep = _ascent_sweep(model, acceleration)
    smaller = _subsample(model) if subsample else None
    newton = acceleration.newton and hinge_of(model) is not None
    squarem = acceleration.squarem and not (smaller is not None and newton)
    steps = []

    def make_step():
        steps.append(Squarem(sweep) if squarem else _Counted(sweep))
        return steps[-1]

    if smaller is None:
        starts = list(itertools.product(*(block.starts for block in blocks)))
        states = [initial_state(blocks, start) for start in starts]
    else:
        rows, part = smaller
        result, _, _ = ascend(
            part,
            acceleration,
            tol=SUBSAMPLE_TOL,
            relative=True,
            max_iter=max_iter,
            subsample=True,
            progressbar=progressbar,
        )
        if result.interrupted:  # nothing of the fit to all rows exists yet to keep
            raise KeyboardInterrupt
        states = [_carried_over(blocks, result.state, rows.size / model.n_samples)]
    result = run_ascent_from(
        states,
        make_step,
        tol=tol,
        max_iter=max_iter,
        relative=relative,
        progressbar=progressbar,
        description="vb",
    )
    return result, sum(step.sweeps for step in steps), smaller is not None


def _ascent_sweep(model, acceleration: Acceleration):
    """The ascent's sweep: CAVI over ``model``'s blocks, followed by the Newton step in the
    coefficients' mean where the model is Gaussian coefficients, the hinge and priors and
    ``acceleration.newton`` (:mod:`bayesvm.vb.mean_newton`: the same fixed points, reached in
    a fraction of the sweeps).
    """
    sweep = make_cavi_step(model.blocks)
    if acceleration.newton and hinge_of(model) is not None:
        return make_newton_sweep(model, sweep)
    return sweep


def _subsample(model):
    """A random :data:`SUBSAMPLE_FRACTION` of ``model``'s rows (fixed seed: the fit stays
    deterministic) and the model of them; None where there are too few rows, too little work
    per sweep, or the model cannot be restricted to rows.
    """
    n_samples = getattr(model, "n_samples", 0)
    if n_samples < SUBSAMPLE_MIN_ROWS or model.flops_per_iteration < SUBSAMPLE_MIN_FLOPS:
        return None
    rng = np.random.default_rng(0)
    size = int(SUBSAMPLE_FRACTION * n_samples)
    rows = np.sort(rng.choice(n_samples, size=size, replace=False))
    part = model.row_subset(rows)
    return None if part is None else (rows, part)


def _carried_over(blocks, state, fraction: float) -> tuple[dict, dict]:
    """The start on all rows: each block's statistics from its ``q`` on a ``fraction`` of the
    rows, in visiting order (:meth:`~bayesvm.blocks.Block.subsample_stats`).
    """
    params, _ = state
    stats: dict = {}
    for block in blocks:
        stats[block.name] = block.subsample_stats(params[block.name], stats, fraction)
    return {}, stats


class _Counted:
    """A plain CAVI sweep as the step, counting sweeps like :class:`Squarem`."""

    def __init__(self, sweep):
        self.sweep = sweep
        self.sweeps = 0

    def __call__(self, state):
        self.sweeps += 1
        return self.sweep(state)
