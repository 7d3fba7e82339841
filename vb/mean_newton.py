"""Newton steps in ``q(theta)``'s mean on the hinge, for both of VB's families.

Mean-field CAVI on the hinge (Luts-Ormerod Algorithms 1-2) sets the mean to ``P^-1 C^T y (1 +
E[1/a])`` with ``P = diag(prior precision) + C^T diag(E[1/a]) C``: a majorise-minimise step
that curves the bound by ``E[1/a_i] = chi_i^-1/2`` at every row, where the bound with ``q(a)``
at its optimum curves by ``Var f_i / chi_i^3/2``
(:meth:`~bayesvm.blocks.hinge.HingeAugmentation.mean_field_expectation`), far less at the rows
far from the margin. So the means creep, as iteratively reweighted least squares does on the
hinge: on 1e5 x 100 simulated data, from a fit to a tenth of the rows (26 of ``q``'s sds
off), CAVI with SQUAREM takes 48 sweeps to the relative tolerance of 1e-10 and stops 8e-4 sd
from its optimum; on the standardised spam data 157 sweeps, 0.014 sd from it.

:func:`make_newton_sweep` follows each CAVI sweep with the Newton step for the mean on that
bound, with ``q(theta)``'s covariance and the priors' ``q`` held and ``q(a)`` set to its
optimum at the new mean; the step is halved until the bound does not fall (:func:`halve`: the
bound is concave in the mean, its Hessian ``-(diag(prior precision) + C^T diag(Var f /
chi^3/2) C)``). The Hessian leaves out the rows of least curvature, together a thousandth of
it (:data:`HESSIAN_TAIL`: far from the margin the curvature falls as ``|1 - y_i E f_i|^-3``):
on 1e5 x 100 simulated data it then sums over 12 % of the rows, and the sweeps to converge
stay the same.
Where CAVI has converged the gradient is zero and so is the step: the fixed points are CAVI's.
With SQUAREM over the pair, the same ascents take 9 and 16 sweeps and stop within 2e-6 sd of
the optimum; on Rätsch's heart data and the toenail model 13 and 19 sweeps against 31 and 46.
Near the optimum SQUAREM's cycles of three sweeps only add sweeps: from the subsample's start
the pairs alone take 7 (within 7e-6 sd), and on four other simulated data sets of 1e4 to 1e5
rows 6-10 sweeps against 9-12, within 2e-4 sd; from the papers' start they need SQUAREM (the
toenail model: 30 sweeps alone, 19 with it), which :func:`~bayesvm.vb.cavi.fit_vb` therefore
keeps for every ascent but one from a subsample.

The Gaussian family (:mod:`bayesvm.vb.gaussian_family`) takes the same halved steps in the
mean, along its own direction.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bayesvm.blocks import GaussianExpectationBlock
from bayesvm.vb.state import VBState

__all__ = [
    "hinge_of",
    "halve",
    "mean_move",
    "make_newton_sweep",
    "SMALLEST_STEP",
    "EVALUATION_NOISE",
    "HESSIAN_TAIL",
]

#: The halving of a step stops here and keeps the current value.
SMALLEST_STEP = 2.0**-30
#: A step is kept unless it lowers the bound by more than this share of its size: two
#: evaluations of the bound at nearly the same point differ by some 1e-14 of it.
EVALUATION_NOISE = 1e-13
#: Share of the data's curvature the Newton step's Hessian leaves out: its smallest entries,
#: the rows far from the margin, whose weights ``Var f_i / chi_i^3/2`` are tiny.
HESSIAN_TAIL = 1e-3


def hinge_of(model):
    """``model``'s hinge block, where it is the only latent block and the first block is
    Gaussian coefficients with a tilt; else ``None``.
    """
    blocks = model.blocks
    coefficients = getattr(model, "coefficients", None)
    if not getattr(coefficients, "takes_tilt", False) or blocks[0] is not coefficients:
        return None
    latent = [block for block in blocks if block.latent]
    if len(latent) != 1 or not isinstance(latent[0], GaussianExpectationBlock):
        return None
    return latent[0]


def halve(propose: Callable, state, bound: float, bound_of: Callable):
    """``propose(fraction) -> state`` at the largest of 1, 1/2, 1/4, ... whose bound
    (``bound_of(state)``) is not below ``bound``, ``state``'s, with that bound; ``state``
    itself and ``bound`` below :data:`SMALLEST_STEP`.
    """
    fraction = 1.0
    while fraction >= SMALLEST_STEP:
        trial = propose(fraction)
        trial_bound = bound_of(trial)
        if trial_bound >= bound - EVALUATION_NOISE * (1.0 + abs(bound)):
            return trial, trial_bound
        fraction /= 2.0
    return state, bound


def mean_move(coefficients, state, direction: np.ndarray) -> Callable:
    """``fraction -> state`` with ``q(theta)``'s mean moved by ``fraction * direction`` and its
    covariance held: the coefficient block's ``q`` and statistics, the others' as in ``state``.
    """
    params, stats = state
    q, theta = params[coefficients.name], stats[coefficients.name]
    f_direction = coefficients.design.predictor(direction)
    variance = theta.square - theta.mean**2

    def moved(fraction: float):
        mean = theta.mean + fraction * direction
        return VBState(
            {**params, coefficients.name: q._replace(mean=mean)},
            {
                **stats,
                coefficients.name: theta._replace(
                    mean=mean,
                    square=mean**2 + variance,
                    f_mean=theta.f_mean + fraction * f_direction,
                ),
            },
        )

    return moved


def make_newton_sweep(model, sweep: Callable) -> Callable:
    """``sweep`` (a CAVI sweep over ``model``'s blocks) followed by the Newton step in the mean
    (module docstring); ``model`` needs :func:`hinge_of`. Same signature as ``sweep``.
    """
    coefficients, hinge = model.coefficients, hinge_of(model)
    design = coefficients.design

    def with_hinge_optimal(state):
        params, stats = state
        chi = hinge.conditional(stats)
        return VBState(
            {**params, hinge.name: chi}, {**stats, hinge.name: hinge.expected_stats(chi)}
        )

    def bound_of(state) -> float:
        params, stats = state
        return sum(block.bound_term(params[block.name], stats) for block in model.blocks)

    def step(state):
        state, bound = sweep(state)
        _, stats = state
        theta = stats[coefficients.name]
        prior_precision = coefficients.prior_precision(stats)
        data = hinge.mean_field_expectation(theta.f_mean, theta.f_var)
        gradient = design.transpose_times(data.slope) - prior_precision * theta.mean
        hessian = design.gaussian(_dominant(data.curvature), prior_precision)
        move = mean_move(coefficients, state, hessian.solve(gradient))
        return halve(lambda fraction: with_hinge_optimal(move(fraction)), state, bound, bound_of)

    return step


def _dominant(curvature: np.ndarray) -> np.ndarray:
    """``curvature`` with its smallest entries, together :data:`HESSIAN_TAIL` of its sum, set
    to 0: the Hessian then sums over the other rows alone
    (:func:`~bayesvm.linalg.weighted_gram`), 12 % of them on 1e5 x 100 simulated data.
    """
    order = np.argsort(curvature)
    tail = np.cumsum(curvature[order]) <= HESSIAN_TAIL * curvature.sum()
    kept = curvature.copy()
    kept[order[tail]] = 0.0
    return kept
