"""Gibbs sampling for every model, one complete conditional per block.

A sweep visits the model's blocks in order and draws each from its complete conditional given
the other blocks' current values (:mod:`bayesvm.blocks.base`). For the SVMs this is the
three-block sampler of Polson-Scott (MCMC-SVM) and Luts-Ormerod (App. A): ``(beta, u) | a``,
``1/a | beta, u`` and the penalty's conditionals; for Drugowitsch's linear regression the
exact draw of ``(w, tau) | alpha`` followed by ``alpha | w, tau``. A block may add moves
that the sweep makes right after its draw (:meth:`~bayesvm.blocks.Block.gibbs_moves`): the
coefficient block redraws a learned Gaussian scale in the ancillary parameterisation, the
interweaving of Yu & Meng (2011) (:mod:`bayesvm.blocks.interweaving`). A chain starts from the
first block's dispersed value and the others drawn given it.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from bayesvm.blocks import JumpBlock, dispersed_start
from bayesvm.drivers import run_mcmc
from bayesvm.registry import block_driver, register
from bayesvm.results import Fit
from bayesvm.samplers.diagnostics import mcmc_fit

__all__ = ["fit_gibbs", "fit_rj", "make_gibbs_kernel"]


def make_gibbs_kernel(blocks, jumps: bool = False, moves: int | None = None):
    """``(init, step, record)`` over ``blocks`` for :func:`bayesvm.drivers.run_mcmc`.

    With ``jumps``, a block offering trans-dimensional moves (a
    :class:`~bayesvm.blocks.JumpBlock`) makes
    ``moves`` of them per sweep (:meth:`~bayesvm.blocks.Block.jump_step`) instead of its Gibbs
    update, followed by its :meth:`~bayesvm.blocks.Block.jump_moves` (e.g. the kernel model's
    jumps with the probit's ``s`` integrated out, :mod:`bayesvm.blocks.laplace_jump`).
    Each block's :meth:`~bayesvm.blocks.Block.gibbs_moves` follow its update (e.g. the
    interweaving of a learned scale, :class:`~bayesvm.blocks.interweaving.ScaleInterweaving`).
    ``step(stats, rng) -> (stats, info)`` returns the sweep's diagnostics in ``info`` (the
    jumps' ``accept_rate``, a Metropolis-Hastings update's acceptance); ``record`` returns the
    posterior variables and the blocks' sample statistics.
    """
    by_name = {block.name: block for block in blocks}
    sweep = []
    for position, block in enumerate(blocks):
        sweep.append(_block_update(block, jumps, moves))
        if jumps and isinstance(block, JumpBlock):
            sweep.extend(move.step for move in block.jump_moves(by_name))
        following = blocks[position + 1].name if position + 1 < len(blocks) else None
        for move in block.gibbs_moves(by_name):
            sweep.append(lambda stats, rng, move=move: (move.update(stats, rng), {}))
            if move.stale not in (None, following):
                raise ValueError(
                    f"{type(move).__name__} integrates {move.stale!r} out: the sweep must draw "
                    f"it right after {block.name!r}"
                )

    def step(stats: dict, rng) -> tuple[dict, dict]:
        stats, info = dict(stats), {}  # a new state: the one given is left as it was
        for update in sweep:
            changed, update_info = update(stats, rng)
            stats.update(changed)
            info.update(update_info)
        return stats, info

    def record(stats: dict) -> dict[str, np.ndarray]:
        values: dict = {}
        for block in blocks:
            values.update(block.record(stats[block.name]))
            values.update(block.sample_stats(stats[block.name]))
        return values

    return partial(dispersed_start, blocks), step, record


def _block_update(block, jumps: bool, moves: int | None):
    """``update(stats, rng) -> ({block.name: statistics}, info)``: the block's update
    (:meth:`~bayesvm.blocks.Block.sample_step`: a draw from its conditional, or a
    Metropolis-Hastings step and its acceptance), or its trans-dimensional moves (``jumps``)
    and their info.
    """
    if jumps and isinstance(block, JumpBlock):

        def jump(stats, rng):
            value, info = block.jump_step(block.conditional(stats), rng, moves=moves)
            return {block.name: value}, info

        return jump

    def draw(stats, rng):
        value, info = block.sample_step(block.conditional(stats), rng)
        return {block.name: value}, info

    return draw


@register("gibbs", block_driver("gibbs"))
def fit_gibbs(
    model,
    *,
    draws: int | None = None,
    tune: int | None = None,
    thin: int | None = None,
    chains: int = 4,
    seed=None,
    progressbar: bool = True,
) -> Fit:
    """Fit by Gibbs sampling over the model's blocks.

    Parameters
    ----------
    draws, tune : int, optional
        Kept draws and burn-in sweeps per chain; default ``model.gibbs_settings``
        (Luts-Ormerod section 4: 5000 + 5000 for the SVMs; 2000 + 500 for regression; Zhang et
        al. section 4: 1000 kept of 5000 after 5000 for the kernel models).
    thin : int, optional
        Keep every ``thin``-th sweep after burn-in (default ``model.gibbs_settings``, 1
        unless the paper thins: Zhang et al. keep every 5th).
    chains : int
        Independent chains, each from a dispersed start.
    seed : int or numpy.random.Generator, optional
        Same seed, same draws.
    progressbar : bool
        Show a progress bar.
    """
    kernel = make_gibbs_kernel(model.blocks)
    return _run_sweeps(model, kernel, "gibbs", draws, tune, thin, chains, seed, progressbar)


@register("rj", block_driver("rj"))
def fit_rj(
    model,
    *,
    draws: int | None = None,
    tune: int | None = None,
    thin: int | None = None,
    chains: int = 4,
    moves: int | None = None,
    seed=None,
    progressbar: bool = True,
) -> Fit:
    """Fit by reversible jump: the Gibbs sweep of :func:`fit_gibbs` with the model's
    inclusion vector moved by birth / death / swap proposals, its coefficients integrated out
    (:mod:`bayesvm.blocks.model_search`; Nott & Green 2004, Zhang et al. section 3.2).

    Parameters
    ----------
    moves : int, optional
        Proposals per sweep (default: the model's; one per switchable column for spike-and-slab
        variables, :data:`~bayesvm.models.kernel_gkm.DEFAULT_MOVES` for active kernel vectors,
        where Zhang et al. make one; the kernel model's proposals with ``s`` integrated out are
        its ``laplace_moves``). The model size and the acceptance rate of each sweep are kept
        in ``sample_stats`` (``n_active``, ``accept_rate``, and the moves' own, e.g.
        ``laplace_accept_rate``), and the fit's checks judge the model size as they judge the
        parameters (:mod:`bayesvm.samplers.diagnostics`).
    draws, tune, thin, chains, seed, progressbar
        As for :func:`fit_gibbs`.
    """
    kernel = make_gibbs_kernel(model.blocks, jumps=True, moves=moves)
    return _run_sweeps(model, kernel, "rj", draws, tune, thin, chains, seed, progressbar)


def _run_sweeps(model, kernel, method, draws, tune, thin, chains, seed, progressbar) -> Fit:
    init, step, record = kernel
    settings = model.gibbs_settings
    result = run_mcmc(
        init,
        step,
        record,
        rng=np.random.default_rng(seed),
        chains=chains,
        tune=settings["tune"] if tune is None else tune,
        draws=settings["draws"] if draws is None else draws,
        thin=settings.get("thin", 1) if thin is None else thin,
        progressbar=progressbar,
        description="Gibbs" if method == "gibbs" else "reversible jump",
    )
    return mcmc_fit(model, result, method)
