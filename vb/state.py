"""The state a variational ascent hands from one iteration to the next (BlackJAX's ``State``).

Every VB step (:func:`~bayesvm.vb.cavi.make_cavi_step`, the Gaussian family's
:func:`~bayesvm.vb.gaussian_family.make_gaussian_step`, SQUAREM's extrapolation and the
mean-Newton moves) takes a :class:`VBState` and returns a new one with the bound, leaving the
one it was given as it was.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["VBState"]


class VBState(NamedTuple):
    """Each block's ``q`` and the statistics the other blocks read from it, by block name."""

    #: ``q``'s parameters, as each block's ``conditional`` gives them (empty before a sweep).
    params: dict
    #: Each block's expected statistics under its ``q``.
    stats: dict
