"""Moves on an inclusion vector with the Gaussian coefficients integrated out.

Both move sets act on a :class:`~bayesvm.blocks.active_set.CollapsedGaussian` (the active
columns and ``log p(data | A)``) and on a prior over the inclusion vector that depends on the
number ``k`` of switched-on columns only (``log_prior(k)`` of one vector with ``k`` ones:
independent ``Bernoulli(pi)`` gives ``k log pi + (m - k) log(1 - pi)``; Zhang et al.'s
Beta-Bernoulli eq. 10 another). Each leaves ``p(A | data) ~ p(data | A) p(A)`` invariant:

* :func:`gibbs_sweep` -- each switchable column in turn from its conditional given the others,
  Polson-Scott's MCMC-SVM (spike-and-slab) step 2 with eq. (17);
* :func:`jump` -- birth / death / swap proposals accepted by Metropolis-Hastings with the
  proposal ratio of Nott & Green (2004) as Zhang, Dai & Jordan section 3.2 state it: birth
  (``b_k``) switches on a random inactive column, death (``d_k``) switches off a random
  active one, swap exchanges one of each, ``b_0 = 1``, ``d_{k_max} = 1`` and
  ``b_k = d_k = 0.3`` between. The choice and its ratio (:func:`propose_change`) also serve
  moves that do not integrate the coefficients out (:mod:`bayesvm.blocks.laplace_jump`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.special import expit

__all__ = [
    "gibbs_sweep",
    "jump",
    "propose_change",
    "InclusionChange",
    "JumpSettings",
    "DEFAULT_JUMPS",
]


def _accept(log_ratio: float, rng: np.random.Generator) -> bool:
    return log_ratio >= 0.0 or rng.random() < np.exp(log_ratio)


def gibbs_sweep(
    collapsed, switchable, log_prior: Callable[[int], float], rng: np.random.Generator
) -> int:
    """Draw each column of ``switchable`` in order from ``p(gamma_j | gamma_-j, data)``.

    ``log odds(gamma_j = 1) = log p(data | A + j) - log p(data | A - j) + log_prior(k + 1) -
    log_prior(k)``, ``k`` the active switchable columns other than ``j``; one of the two sets
    is the current one, the other's gain is computed from the current factor. Returns the
    number of columns that changed.
    """
    active = set(collapsed.order)
    k = sum(1 for j in switchable if j in active)
    changes = 0
    for j in switchable:
        if j in active:
            gain = -collapsed.removal_gain(j)  # log p(data | A) - log p(data | A - j)
            k -= 1
        else:
            gain, addition = collapsed.propose_addition(j)
        log_odds = gain + log_prior(k + 1) - log_prior(k)
        include = bool(rng.random() < expit(log_odds))
        if include and j not in active:
            collapsed.add(addition)
            active.add(j)
            changes += 1
        elif not include and j in active:
            collapsed.remove(j)
            active.discard(j)
            changes += 1
        k += include
    return changes


class JumpSettings(NamedTuple):
    """Move probabilities of :func:`jump` (Zhang et al. section 3.2)."""

    birth: float = 0.3  # b_k for 1 <= k < k_max
    death: float = 0.3  # d_k for 1 <= k < k_max
    max_active: int | None = None  # k_max (None: every switchable column)


#: Zhang et al.'s move probabilities over every switchable column.
DEFAULT_JUMPS = JumpSettings()


def _move_probabilities(k: int, k_max: int, settings: JumpSettings) -> tuple[float, float]:
    """``(b_k, d_k)``: ``b_0 = 1``, ``d_k = 1`` from ``k_max`` on, else the settings'."""
    if k == 0:
        return 1.0, 0.0
    if k >= k_max:
        return 0.0, 1.0
    return settings.birth, settings.death


def _is_active(order, switchable: np.ndarray) -> np.ndarray:
    """Whether each switchable column is in ``order`` (a look-up table: no sort)."""
    table = np.zeros(max(int(switchable.max(initial=-1)), max(order, default=-1)) + 1, bool)
    table[order] = True
    return table[switchable]


def _pick(columns: np.ndarray, rng: np.random.Generator) -> int:
    """One of ``columns`` uniformly at random (the draw ``rng.choice(columns)`` makes)."""
    return int(columns[rng.integers(columns.shape[0])])


class InclusionChange(NamedTuple):
    """A proposed birth, death or swap: the column leaving (``out``) and the one joining
    (``into``), None where none does, and ``log_ratio = log p(A') - log p(A) + log q(A | A') -
    log q(A' | A)``, the prior and proposal part of the acceptance probability.
    """

    out: int | None
    into: int | None
    log_ratio: float


def propose_change(
    order,
    switchable,
    log_prior: Callable[[int], float],
    rng: np.random.Generator,
    settings: JumpSettings = DEFAULT_JUMPS,
) -> InclusionChange:
    """Choose a birth, death or swap of the active columns ``order`` (Zhang et al. section 3.2).

    ``m`` switchable columns, ``k`` of them active: birth (``b_k``) switches on a random
    inactive column, with ``log_ratio = log(p(k+1) d_{k+1} (m - k) / (p(k) b_k (k + 1)))``;
    death (``d_k``) switches off a random active one, ``log(p(k-1) b_{k-1} k / (p(k) d_k (m - k
    + 1)))``; a swap exchanges one of each, ``0``. ``p(k)`` is the prior of one vector with
    ``k`` ones. Every move that uses these proposals accepts with ``min(1, exp(log_ratio) x``
    the ratio of its target's other factors``)``.
    """
    switchable = np.asarray(switchable)
    m = switchable.shape[0]
    k_max = m if settings.max_active is None else min(settings.max_active, m)
    active_mask = _is_active(order, switchable)
    active, inactive = switchable[active_mask], switchable[~active_mask]
    k = active.shape[0]
    birth, death = _move_probabilities(k, k_max, settings)
    move = rng.random()
    if move < birth:
        death_back = _move_probabilities(k + 1, k_max, settings)[1]
        log_ratio = (
            log_prior(k + 1) - log_prior(k) + np.log(death_back * (m - k) / (birth * (k + 1)))
        )
        return InclusionChange(None, _pick(inactive, rng), float(log_ratio))
    if move < birth + death:
        birth_back = _move_probabilities(k - 1, k_max, settings)[0]
        log_ratio = log_prior(k - 1) - log_prior(k) + np.log(birth_back * k / (death * (m - k + 1)))
        return InclusionChange(_pick(active, rng), None, float(log_ratio))
    out = _pick(active, rng)
    return InclusionChange(out, _pick(inactive, rng), 0.0)


def jump(
    collapsed,
    switchable,
    log_prior: Callable[[int], float],
    rng: np.random.Generator,
    settings: JumpSettings = DEFAULT_JUMPS,
    admits: Callable[[list], bool] | None = None,
) -> tuple[object, bool]:
    """One birth, death or swap proposal (:func:`propose_change`, whose ``log_ratio`` gives the
    prior and proposal factors); returns the (possibly new) state and acceptance. The
    acceptance probability is ``min(1, exp(log_ratio) L' / L)`` with ``L = p(data | A)``, the
    coefficients integrated out (Zhang et al. section 3.2).

    ``admits(order)``, where given, says whether the target has mass on the active columns
    ``order``: a proposal outside is refused (its target density is 0), tested only once the
    ratio would accept it.
    """
    change = propose_change(collapsed.order, switchable, log_prior, rng, settings)
    if change.out is None:
        gain, addition = collapsed.propose_addition(change.into)
        if _accept(gain + change.log_ratio, rng) and _admitted(
            admits, [*collapsed.order, change.into]
        ):
            collapsed.add(addition)
            return collapsed, True
        return collapsed, False
    if change.into is None:
        if _accept(collapsed.removal_gain(change.out) + change.log_ratio, rng) and _admitted(
            admits, [column for column in collapsed.order if column != change.out]
        ):
            collapsed.remove(change.out)
            return collapsed, True
        return collapsed, False
    removal = collapsed.removal_gain(change.out)
    proposal = collapsed.copy()
    proposal.remove(change.out)
    gain, addition = proposal.propose_addition(change.into)
    if _accept(removal + gain, rng) and _admitted(admits, [*proposal.order, change.into]):
        proposal.add(addition)
        return proposal, True
    return collapsed, False


def _admitted(admits: Callable[[list], bool] | None, order: list) -> bool:
    return admits is None or admits(order)
