"""One-dimensional slice sampling (Neal 2003, Ann. Statist. 31(3), section 4).

A Markov kernel that leaves a univariate density invariant knowing it only up to a constant:
draw a level under the density at the current point, place an interval of ``width`` at
random around the point, step it out until both ends lie below the level ("stepping out",
Neal's Fig. 3) and draw uniformly from it, shrinking it towards the current point after each
draw outside the slice (Fig. 5). It needs no tuning beyond a width of the order of the
density's spread, and a width too small or too large costs evaluations, not validity.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["slice_step"]


def slice_step(
    log_density: Callable[[float], float],
    x: float,
    width: float,
    rng: np.random.Generator,
    max_steps: int = 32,
) -> float:
    """One slice-sampling update of ``x`` under ``exp(log_density)`` (Neal 2003, Fig. 3, 5).

    Parameters
    ----------
    log_density : callable
        The log density up to a constant; ``-inf`` outside the support.
    x : float
        The current point (where ``log_density`` is finite).
    width : float
        Width of the initial interval, the density's scale or so.
    rng : numpy.random.Generator
    max_steps : int
        Most widths the interval grows by when stepping out (Neal's ``m``), split at random
        between its two ends as Fig. 3 does, so the kernel stays reversible.

    Returns
    -------
    float
        The new point.
    """
    level = log_density(x) - rng.standard_exponential()
    left = x - width * rng.random()
    right = left + width
    steps_left = int(max_steps * rng.random())
    steps_right = max_steps - 1 - steps_left
    while steps_left > 0 and log_density(left) > level:
        left -= width
        steps_left -= 1
    while steps_right > 0 and log_density(right) > level:
        right += width
        steps_right -= 1
    while True:
        proposal = left + (right - left) * rng.random()
        if log_density(proposal) > level:
            return proposal
        if proposal < x:
            left = proposal
        else:
            right = proposal
