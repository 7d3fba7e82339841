"""EM and ECME over a model's blocks: the posterior mode (Polson-Scott 2011, section 3).

One iteration (:mod:`bayesvm.blocks.base`):

* E-step: each *latent* block takes the expectation of its statistics under its complete
  conditional at the current values, ``expected_stats(conditional(stats))``;
* M-step: the coefficient block (the first) takes the mode of its conditional;
* CM-steps: the other blocks take the modes of theirs, given the new coefficients (a *learned*
  block's is ECME's CME step; a fixed prior's is its constant).

The objective is the sum of the blocks' :meth:`~bayesvm.blocks.Block.log_density`, the latent
blocks integrated out: the log (pseudo-)posterior up to a constant. For a linear SVM, with
``theta = (beta, u)``, ``C = [X, Z]``, ``a_i = y_i c_i`` and residuals ``r_i = 1 - a_i^T
theta``, it is

    ``F(theta) = -2 sum_i max(0, r_i) - sum_j P_j theta_j^2 / 2 - sum_j L_j |theta_j|``

with ``P = 1 / sigma2_beta`` for ``beta`` and ``1 / v_j`` (ridge) for ``u``, or
``L_j = 1 / (nu c_j)`` (lasso), plus the learned scale's terms. Its maximiser is the SVM
solution: for the ridge with penalty ``alpha`` it minimises ``sum_i (1 - y_i f_i)_+ + alpha
||u||^2`` (LIBSVM with ``C = 1 / (2 alpha)``, up to the vague ``N(0, 1e8)`` prior on the
intercept).

EM-SVM (section 3.1)
    E-step: ``1/lambda_i = |r_i|^-1`` (eq. 14, the hinge block) and, for the lasso,
    ``1/omega_j = nu c_j / |u_j|`` (Corollary 4 with alpha = 1, the Laplace mixing block;
    ``omega_j = 1`` for the ridge). M-step: the weighted least squares ``(diag(prior
    precision) + A^T Lambda^-1 A) theta = A^T (1 + lambda^-1)``, prior precision
    ``1 / sigma2_beta``, ``1 / v_j`` (ridge) or ``(1/omega_j) / (nu^2 c_j^2)`` (lasso), solved
    by Cholesky. It is a minorise-maximise step (``|r| <= r^2 / (2 |r_g|) + |r_g| / 2``,
    equality at ``r_g``), so ``F`` never decreases.

    The weights are infinite on the support vectors (and on lasso weights at 0), which plain EM
    cannot represent: the blocks floor them (``1 / |r_i| <= 1e5``, as VB's guard). A floored
    weight ``1 / c`` with ``c > |r_g|`` gives a minorant that lies below ``F`` at the current
    point by ``(c - |r_g|)^2 / (2 c) <= c / 2``, so a step may lower ``F`` by that much: plain
    EM then stays where it is, which ends the ascent. It converges linearly, slowly, and only
    approximately (on the tests' problems ``F`` ends within ~1e-4 of the mode's for a ridge,
    ~1e-1 for a lasso, whose zeros it only approaches). The *accelerated*
    step (``accelerate=True``, the default) replaces the E- and M-steps of the coefficients by
    the likelihood block's exact M-step (:meth:`~bayesvm.blocks.Block.accelerated_m_step`).
    For the hinge under a Gaussian prior it is :mod:`bayesvm.blocks.hinge_mode`: support
    vectors as the equality constraints of eq. (15), an active-set rule and a Newton step
    beyond the paper, which reaches the exact mode, LIBSVM's solution, in few iterations.

    Lasso (section 3.1 with alpha = 1): where the penalties have an L1 part the hinge's
    exact step is the mode itself, ``argmax F`` for the current ``(P, L)``, by the linear
    program of :mod:`bayesvm.blocks.hinge_lp` (HiGHS on its dual; the quadratic terms, the
    intercept's vague prior, by Kelley's cutting planes). It replaces the E-step weights
    ``1/omega_j = nu c_j / |u_j|``, infinite at the zeros EM only approaches, and reads only
    the penalties, not the current value: EM stops after two iterations (the second finds the
    same mode) at the exact mode, the same from every start, with exact zeros.

ECME-SVM (section 3.3)
    E-step and CM-step as above with the current scale; then the CME step maximises the
    observed-data pseudo-posterior over the scale given the new coefficients:

    * lasso, ``t = 1/nu ~ Gamma(a, b)``: ``t | u ~ Gamma(a + m, b + sum_j |u_j| / c_j)`` and the
      CME step takes its mode ``t = (a + m - 1) / (b + sum_j |u_j| / c_j)``. The formula printed
      in section 3.3, ``(b + sum |u_j / c_j|) / (m + a - 1)``, is the reciprocal of this mode
      (a typo: it is neither the mode of ``t`` nor that of ``nu``);
    * ridge, ``s2 = nu^2 ~ IG(a, b)``: ``s2 | u ~ IG(a + m/2, b + sum_j (u_j / c_j)^2 / 2)`` and
      the CME step takes its mode ``(b + sum_j (u_j / c_j)^2 / 2) / (a + m/2 + 1)``.

    So the result is the joint mode of ``(theta, t)`` (lasso) or ``(theta, s2)`` (ridge): the
    objective adds ``log p(u | scale) + log p(scale)`` in that parameterisation, and it is
    monotone (Liu-Rubin 1994).

    Lasso: with the exact coefficient step (the linear program above) ECME is the iteration
    ``t <- (a + m - 1) / (b + s(t))``, ``s(t) = sum_j |u_j| / c_j`` at the mode for ``t``. The
    program's constraints do not depend on ``t`` and its cost is linear in ``t``, so one
    vertex is optimal over an interval of ``t`` (the intercept's vague quadratic prior aside):
    ``s`` is a non-increasing step function, and ECME ends in finitely many iterations at an
    exact fixed point ``t = (a + m - 1) / (b + s(t))``, a local maximum of the objective
    profiled over ``t``. The start enters only through the first ``t``; where that profile has
    several local maxima, the first ``t`` decides which one ECME climbs to.

Start: ``theta ~ N(0, I)`` (Polson-Scott section 5; 0 is a fixed point of plain EM for the
lasso, though not of its exact step, which does not read it), the other non-latent blocks at
their modes given it (ECME: the scale's CME step).
Stop: when the objective rises by less than ``tol * 2 n`` in an iteration (``2 n = |F(0)|``,
the hinge part at ``theta = 0``), so ``tol`` is relative to the objective's scale. The default
1e-15 is round-off level: the accelerated EM stops at its exact fixed point, lasso ECME too
(above), and ridge ECME (linear in the scale) at about ``sqrt(machine epsilon)`` in the
parameters, the resolution of an objective-based stop.
"""

from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple

import numpy as np

from bayesvm.blocks import ExactMStepBlock
from bayesvm.drivers import run_ascent
from bayesvm.registry import block_driver, register
from bayesvm.results import Fit, build_idata

__all__ = ["EMState", "EMInfo", "make_em_step", "fit_em", "fit_ecme"]


class EMState(NamedTuple):
    """Current mode estimate, and what the next step compares its objective with."""

    stats: dict  # every non-latent block's statistics at its value (latent: expectations)
    objective: float  # the sum of the blocks' log densities at ``stats``


class EMInfo(NamedTuple):
    """What one iteration reports (:func:`bayesvm.drivers.run_ascent` keeps it)."""

    objective: float  # the sum of the blocks' log densities after the iteration
    n_released: int  # active-set releases of the accelerated M-step in the iteration


def log_density(blocks, stats) -> float:
    """EM's objective: the sum of the blocks' log densities at ``stats``."""
    return sum(block.log_density(stats) for block in blocks)


def make_em_step(model, accelerate: bool = True):
    """Build the EM iteration over ``model``'s blocks (ECME when a block is learned).

    Returns ``(objective, step, start)``: ``start(coefficient_stats)`` is the state at the
    coefficients' value with the other non-latent blocks at their modes given it;
    ``objective(theta)`` the objective at ``start`` of the value ``theta``; ``step(state) ->
    (state, info)`` one iteration (module docstring; ``info``: :class:`EMInfo`), with the
    likelihood block's accelerated M-step if ``accelerate`` and the block offers one.
    """
    blocks = model.blocks
    coefficients = blocks[0]
    latent = [block for block in blocks if block.latent]
    priors = [block for block in blocks[1:] if not block.latent]
    exact_m_step = None
    if accelerate:
        offering = (block for block in latent if isinstance(block, ExactMStepBlock))
        exact_m_step = next((block.accelerated_m_step(coefficients) for block in offering), None)

    def maximise_priors(stats: dict) -> dict:
        for block in priors:
            stats[block.name] = block.mode(block.conditional(stats))
        return stats

    def start(coefficient_stats) -> EMState:
        stats = maximise_priors({coefficients.name: coefficient_stats})
        return EMState(stats, log_density(blocks, stats))

    def objective(theta: np.ndarray) -> float:
        return start(coefficients.at(theta)).objective

    def step(state: EMState) -> tuple[EMState, EMInfo]:
        stats = dict(state.stats)
        if exact_m_step is None:
            for block in latent:
                stats[block.name] = block.expected_stats(block.conditional(stats))
            stats[coefficients.name] = coefficients.mode(coefficients.conditional(stats))
            released = 0
        else:
            stats[coefficients.name], released = exact_m_step(stats)
        value = log_density(blocks, maximise_priors(stats))
        if exact_m_step is None and value < state.objective:
            # floored weights: the minorant no longer touches F, so EM has reached the
            # floors' resolution (module docstring); stay, which ends the ascent
            return state, EMInfo(state.objective, 0)
        return EMState(stats, value), EMInfo(value, released)

    return objective, step, start


def _fit(
    model, method: str, *, accelerate: bool, tol: float, max_iter: int, seed, progressbar: bool
) -> Fit:
    _, step, start = make_em_step(model, accelerate)
    coefficients = model.blocks[0]
    state = start(coefficients.initial_value({}, np.random.default_rng(seed)))
    # ``tol`` is relative to |F(0)| = 2n, the hinge part of the objective at theta = 0.
    result = run_ascent(
        state,
        step,
        tol=tol * 2.0 * model.n_samples,
        max_iter=max_iter,
        progressbar=progressbar,
        description=method,
        objective_of=attrgetter("objective"),
    )
    stats = result.state.stats
    posterior: dict = {}
    sample_stats = {"lp": result.trace[-1]}
    for block in model.blocks:
        if block.name in stats:
            posterior.update(block.record(stats[block.name]))
        sample_stats.update(block.mode_stats(stats))
    sample_stats["n_released"] = sum(info.n_released for info in result.infos)
    idata = build_idata(
        model,
        {name: np.asarray(value)[None, None] for name, value in posterior.items()},
        sample_stats={name: np.array([[value]]) for name, value in sample_stats.items()},
    )
    return Fit(
        model,
        idata,
        method,
        "point",
        n_iter=result.trace.size,
        converged=result.converged,
        problems=result.problems,
        objective_trace=result.trace,
    )


@register("em", block_driver("em", learned=False))
def fit_em(
    model,
    *,
    accelerate: bool = True,
    tol: float = 1e-15,
    max_iter: int = 5000,
    seed=None,
    progressbar: bool = True,
) -> Fit:
    """Posterior mode by EM (Polson-Scott sections 3.1-3.2) for a model without learned blocks.

    For the SVMs, EM-SVM; with ``accelerate`` its coefficient step is exact (for the ridge the
    restricted least squares of section 3.2, an active-set rule and a Newton step, and the mode
    is LIBSVM's solution with ``C = 1 / (2 alpha)``; for the lasso the mode by a linear
    program; see the module docstring).

    Parameters
    ----------
    accelerate : bool
        Replace the E- and M-step of the coefficients by the likelihood block's exact M-step
        (for the hinge :mod:`bayesvm.blocks.hinge_mode`, or :mod:`bayesvm.blocks.hinge_lp`
        under a prior with an L1 part). False runs the plain EM of the
        blocks, whose E-step weights are floored where they are infinite (support vectors,
        lasso weights at 0): it converges slowly (linearly, often to ``max_iter``) and only
        to about the floor's resolution. A model whose likelihood block offers no exact
        M-step runs plain EM either way.
    tol : float
        Stop when the log pseudo-posterior increases by less than ``tol * 2 n`` (``2 n`` is
        its value's size at ``theta = 0``, where every hinge is 1).
    max_iter : int
        Most iterations.
    seed : int or numpy.random.Generator, optional
        Start ``theta ~ N(0, I)``.
    progressbar : bool
        Show the iterations and the objective once the fit has run for a second.

    Returns
    -------
    Fit
        ``kind="point"``: the mode as one chain of one draw, the log pseudo-posterior after
        every iteration in ``objective_trace``, and in ``sample_stats`` its final value
        ``lp``, the blocks' counts (the hinge's ``n_support_vectors``, on or inside the
        margin, LIBSVM's count, and ``n_margin``, on it; the coefficients' ``n_zero``, exactly
        0) and ``n_released`` (active-set releases of the accelerated step; 0 for the lasso,
        whose linear program has none).
    """
    return _fit(
        model,
        "em",
        accelerate=accelerate,
        tol=tol,
        max_iter=max_iter,
        seed=seed,
        progressbar=progressbar,
    )


@register("ecme", block_driver("em", learned=True))
def fit_ecme(
    model,
    *,
    accelerate: bool = True,
    tol: float = 1e-15,
    max_iter: int = 5000,
    seed=None,
    progressbar: bool = True,
) -> Fit:
    """Joint mode of the coefficients and the learned blocks by ECME (Polson-Scott s. 3.3).

    The learned blocks are reported as the model's hyper-parameters (``nu``, or ``sigma2_u``
    for :class:`~bayesvm.models.MixedSVM`); the rest is as in :func:`fit_em`.

    Parameters
    ----------
    accelerate : bool
        Exact coefficient step (see :func:`fit_em`).
    tol : float
        Stop when the log pseudo-posterior increases by less than ``tol * 2 n``.
    max_iter : int
        Most iterations.
    seed : int or numpy.random.Generator, optional
        Start ``theta ~ N(0, I)``.
    progressbar : bool
        As in :func:`fit_em`.
    """
    return _fit(
        model,
        "ecme",
        accelerate=accelerate,
        tol=tol,
        max_iter=max_iter,
        seed=seed,
        progressbar=progressbar,
    )
