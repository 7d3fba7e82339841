"""SQUAREM: squared extrapolation of a monotone fixed-point iteration (Varadhan & Roland 2008).

A CAVI sweep is a map ``x -> F(x)`` of the blocks' expected statistics, and near its fixed point
it converges linearly, slowly where blocks are strongly coupled (a learned penalty and the
coefficients it shrinks: hundreds of sweeps). SQUAREM's cycle takes two sweeps,
``x1 = F(x0)``, ``x2 = F(x1)``, and extrapolates along ``r = x1 - x0``, ``v = x2 - 2 x1 + x0``:

    ``x' = x0 - 2 alpha r + alpha^2 v``,  ``alpha = -||r|| / ||v||``  (their scheme S3),

then sweeps once more from ``x'``, so that the cycle ends on a state a sweep made (a proper
``q`` whose bound is the sum of the blocks' terms). ``alpha = -1`` gives ``x' = x2``, the plain
third sweep; larger steps are allowed gradually: the step bound starts at 1 and grows fourfold
each time a step reaches it (their ``step.max``, ``mstep = 4``).

Monotonicity safeguard: the cycle keeps ``F(x')`` only when its bound is at least that of
``x2``; otherwise (or when ``x'`` is not a valid input, e.g. a precision that is not positive
definite) it keeps ``x2``, and a step that had reached the step bound shrinks it fourfold. The
bound therefore never decreases from cycle to cycle, as in plain CAVI, and the fixed points are
CAVI's own.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from bayesvm.vb.state import VBState

__all__ = ["Squarem", "StatsVector"]

# Varadhan & Roland's default growth factor of the step bound.
STEP_GROWTH = 4.0


class StatsVector:
    """The floating-point fields of a dict of blocks' statistics (NamedTuples) as one vector.

    Fields that are not floating point (counts, flags, ``None``) are left out and taken from
    the statistics the vector is put back into.
    """

    def __init__(self, stats: dict):
        self.layout = [
            (name, field, np.shape(value))
            for name in stats
            for field, value in enumerate(stats[name])
            if _is_float(value)
        ]

    def flatten(self, stats: dict) -> np.ndarray:
        """The fields in one vector."""
        return np.concatenate([np.ravel(stats[name][field]) for name, field, _ in self.layout])

    def unflatten(self, vector: np.ndarray, like: dict) -> dict:
        """``like`` with its floating-point fields taken from ``vector``."""
        stats = dict(like)
        fields = {name: list(like[name]) for name, _, _ in self.layout}
        start = 0
        for name, field, shape in self.layout:
            size = int(np.prod(shape))
            part = vector[start : start + size]
            fields[name][field] = part.reshape(shape) if shape else float(part[0])
            start += size
        for name, values in fields.items():
            stats[name] = type(like[name])(*values)
        return stats


def _is_float(value) -> bool:
    if isinstance(value, float | np.floating):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


class Squarem:
    """One SQUAREM cycle per call: ``cycle(state) -> (state, bound)`` (module docstring).

    Parameters
    ----------
    sweep : callable
        ``sweep(state) -> (new state, bound)``, one CAVI sweep over
        :class:`~bayesvm.vb.state.VBState`.

    Attributes
    ----------
    sweeps : int
        CAVI sweeps made so far (three per cycle; the first call, from a start, makes one).
    """

    def __init__(self, sweep: Callable):
        self.sweep = sweep
        self.step_bound = 1.0
        self.sweeps = 0

    def __call__(self, state):
        """Sweep twice, extrapolate, sweep from there; the better safe state and its bound."""
        first, first_bound = self._sweep(state)
        layout = StatsVector(state[1]).layout
        if layout != StatsVector(first[1]).layout:  # a start, not yet a sweep's statistics
            return first, first_bound
        second, second_bound = self._sweep(first)
        vector = StatsVector(second[1])
        if vector.layout != layout:  # e.g. an active set changed size
            return second, second_bound
        x0, x1, x2 = (vector.flatten(s[1]) for s in (state, first, second))
        # Infinite entries (a precision that holds an excluded coefficient at 0) stay as x2.
        finite = np.isfinite(x0) & np.isfinite(x1) & np.isfinite(x2)
        r, v = x1[finite] - x0[finite], x2[finite] - 2.0 * x1[finite] + x0[finite]
        r_norm, v_norm = np.linalg.norm(r), np.linalg.norm(v)
        alpha = -r_norm / v_norm if v_norm > 0.0 else -1.0
        alpha = float(np.clip(alpha, -self.step_bound, -1.0))
        x2[finite] = x0[finite] - 2.0 * alpha * r + alpha**2 * v
        extrapolated = vector.unflatten(x2, second[1])
        third, third_bound = self._try_sweep(VBState(second.params, extrapolated))
        if third is None or third_bound < second_bound:
            if alpha == -self.step_bound:
                self.step_bound = max(1.0, self.step_bound / STEP_GROWTH)
            return second, second_bound
        if alpha == -self.step_bound:
            self.step_bound *= STEP_GROWTH
        return third, third_bound

    def _sweep(self, state):
        self.sweeps += 1
        return self.sweep(state)

    def _try_sweep(self, state):
        """A sweep from an extrapolated state, or ``(None, -inf)`` where it is not valid."""
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                new_state, bound = self._sweep(state)
        except (np.linalg.LinAlgError, FloatingPointError, ValueError, ZeroDivisionError):
            return None, -np.inf
        bound = float(bound)
        return (new_state, bound) if np.isfinite(bound) else (None, -np.inf)
