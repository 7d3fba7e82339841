"""Gibbs sampling for every model, one complete conditional per block.

A sweep visits the model's blocks in order and draws each from its complete conditional given
the other blocks' current values (:mod:`bayesvm.blocks.base`). For the SVMs this is the
three-block sampler of Polson-Scott (MCMC-SVM) and Luts-Ormerod (App. A): ``(beta, u) | a``,
``1/a | beta, u`` and the penalty's conditionals; for Drugowitsch's linear regression the
exact draw of ``(w, tau) | alpha`` followed by ``alpha | w, tau``. A chain starts from the
first block's dispersed value and the others drawn given it.
"""

from __future__ import annotations

import numpy as np

from bayesvm.drivers import run_mcmc
from bayesvm.registry import block_driver, register
from bayesvm.results import Fit
from bayesvm.samplers.diagnostics import mcmc_fit

__all__ = ["fit_gibbs", "make_gibbs_kernel"]


def make_gibbs_kernel(blocks):
    """``(init, step, record)`` over ``blocks`` for :func:`bayesvm.drivers.run_mcmc`."""

    def init(rng) -> dict:
        stats: dict = {}
        for block in blocks:
            stats[block.name] = block.initial_value(stats, rng)
        return stats

    def step(stats: dict, rng) -> dict:
        for block in blocks:
            stats[block.name] = block.sample(block.conditional(stats), rng)
        return stats

    def record(stats: dict) -> dict[str, np.ndarray]:
        values: dict = {}
        for block in blocks:
            values.update(block.record(stats[block.name]))
        return values

    return init, step, record


@register("gibbs", block_driver("gibbs"))
def fit_gibbs(
    model,
    *,
    draws: int | None = None,
    tune: int | None = None,
    chains: int = 4,
    seed=None,
    progressbar: bool = True,
) -> Fit:
    """Fit by Gibbs sampling over the model's blocks.

    Parameters
    ----------
    draws, tune : int, optional
        Kept draws and burn-in per chain; default ``model.gibbs_settings`` (Luts-Ormerod
        section 4: 5000 + 5000 for the SVMs; 2000 + 500 for regression).
    chains : int
        Independent chains, each from a dispersed start.
    seed : int or numpy.random.Generator, optional
        Same seed, same draws.
    progressbar : bool
        Show a progress bar.
    """
    init, step, record = make_gibbs_kernel(model.blocks)
    settings = model.gibbs_settings
    result = run_mcmc(
        init,
        step,
        record,
        rng=np.random.default_rng(seed),
        chains=chains,
        tune=settings["tune"] if tune is None else tune,
        draws=settings["draws"] if draws is None else draws,
        progressbar=progressbar,
        description="Gibbs",
    )
    return mcmc_fit(model, result, "gibbs")
