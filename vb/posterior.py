"""What a variational fit stores of its ``q``: draws, parameters and exact moments.

Every variational backend (CAVI, SVI) ends with ``q`` given block by block; this module turns
it into the ``posterior`` group (draws from ``q``, so that ArviZ treats VB like the samplers)
and the ``variational`` group: each block's ``q`` parameters and, for every reported variable
whose ``q`` has them in closed form, its exact mean and sd as ``<name>_q_mean`` and
``<name>_q_sd`` (:meth:`~bayesvm.blocks.Block.q_moments`), which summaries use instead of the
draws' (:mod:`bayesvm.moments`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["q_groups", "Q_MEAN", "Q_SD"]

#: Names of a variable's exact mean and sd in the ``variational`` group.
Q_MEAN = "{}_q_mean"
Q_SD = "{}_q_sd"


def q_groups(model, fitted, rng: np.random.Generator, draws: int) -> tuple[dict, dict, dict]:
    """The ``posterior`` draws, the ``variational`` variables and their coordinates.

    Parameters
    ----------
    model
        The model (its ``dims`` and ``coords`` label the variables).
    fitted : iterable of (Block, params)
        Each block that holds a ``q`` and its parameters.
    rng : numpy.random.Generator
        For the draws.
    draws : int
        Draws from ``q`` (one chain).

    Returns
    -------
    posterior : dict
        Name to draws of shape ``(1, draws, *dims)``.
    variational : dict
        Name to ``(dims, value)``.
    coords : dict
        The model's coordinates and those the blocks' parameters add.
    """
    posterior: dict = {}
    variational: dict = {}
    coords = dict(model.coords)
    for block, q in fitted:
        posterior.update({name: value[None] for name, value in block.draw_q(q, rng, draws).items()})
        variational.update(block.variational(q))
        coords.update(block.variational_coords())
        for name, (mean, sd) in block.q_moments(q).items():
            dims = model.dims.get(name, [])
            variational[Q_MEAN.format(name)] = (dims, np.asarray(mean, dtype=float))
            variational[Q_SD.format(name)] = (dims, np.asarray(sd, dtype=float))
    return posterior, variational, coords
