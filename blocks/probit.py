"""The probit likelihood and its data augmentation (Albert & Chib 1993; Holmes & Held 2006).

``y_i = +1`` if ``s_i > 0``, else ``-1``, with ``s_i = f_i + eps_i``, ``eps_i ~ N(0, 1)``:
``p(y_i = +1 | f_i) = Phi(f_i)``, the probit link of Zhang et al. section 3.1. Given ``s`` the
likelihood is Gaussian in ``f`` with unit weights, so the coefficient block reads
``weights = 1`` and ``response = s`` (its Gaussian conditional is Zhang et al. eq. 9).

* Gibbs, given the coefficients (Albert-Chib): ``s_i ~ N(f_i, 1)`` truncated to
  ``y_i s_i > 0``, all ``i`` at once.
* Gibbs with the coefficients integrated out (Holmes-Held section 3.1, Zhang et al. section
  3.2 step (a)): with ``P = C^T C + prior precision`` (``C`` the active design), ``S = P^-1 C^T``
  and the leverages ``h_i = C_i P^-1 C_i^T``, each ``s_i`` in turn from ``p(s_i | s_-i, y_i)``,
  the normal ``N(m_i - w_i (s_i - m_i), 1 + w_i)`` truncated to ``y_i s_i > 0``, where ``m_i =
  C_i B``, ``B = S s`` and ``w_i = h_i / (1 - h_i)``; ``B`` follows each change of ``s_i``
  by ``S_i``. The coefficient block provides ``C`` and ``P``'s factor (``marginal=``), which
  the block's statistics hand back to it (``solve``), and it must be drawn from its
  conditional after this block (the partially collapsed order of van Dyk &
  Park 2008: nothing reads the coefficients between).
* VB: ``q(s_i) = N(E f_i, 1)`` truncated to ``y_i s_i > 0``, with mean ``E f_i + y_i
  phi(E f_i) / Phi(y_i E f_i)``; the block's bound term is ``sum_i log Phi(y_i E f_i) - Var
  f_i / 2`` right after its update (``E log p(y, s | f) - E log q(s)``; Consonni & Marin
  2007 section 2).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import log_ndtr, ndtri_exp

from bayesvm.blocks.base import Block
from bayesvm.blocks.holmes_held import holmes_held_sweep

__all__ = ["ProbitAugmentation", "ProbitStats", "truncated_normal"]

LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))


def truncated_normal(mean, sd, sign, log_uniform):
    """``N(mean, sd^2)`` truncated to ``sign * s > 0``, by inversion of uniform draws ``u``
    given as ``log u``.

    With ``a = sign * mean / sd``, ``t = -Phi^-1(u Phi(a))`` is a standard normal truncated to
    ``t > -a``, and ``s = mean + sign * sd * t``; the inverse is taken on the log scale
    (``ndtri_exp``), so ``a`` far in the lower tail stays exact.
    """
    a = sign * mean / sd
    return mean - sign * sd * ndtri_exp(log_uniform + log_ndtr(a))


class ProbitStats(NamedTuple):
    """What the block shows the coefficient block (as :class:`~bayesvm.blocks.hinge.
    LikelihoodStats`): unit weights and ``s``, or ``E s``.
    """

    weights: np.ndarray
    response: np.ndarray
    drawn: bool  # a value (Gibbs) rather than an expectation under q (VB)
    solve: object = None  # the marginal's solve Holmes-Held used (None: Albert-Chib, VB)


class ProbitAugmentation(Block):
    """The latent ``s_i`` of the probit likelihood of labels ``y`` (-1/+1).

    Parameters
    ----------
    y : ndarray
        Labels coded -1/+1.
    coefficients : str
        Name of the coefficient block whose ``f_mean`` / ``f_var`` the block reads.
    marginal : callable, optional
        ``marginal(stats) -> (C, solve)``: the active design and ``solve(R) = P^-1 R`` for
        ``P = C^T C + prior precision`` at the other blocks' current values. Given, Gibbs
        draws ``s`` with the coefficients integrated out (Holmes-Held); otherwise given them.
    """

    name = "probit"
    latent = True

    def __init__(self, y: np.ndarray, coefficients: str = "theta", marginal=None):
        self.y = np.asarray(y, dtype=float)
        self.coefficients = coefficients
        self.marginal = marginal

    # -- conditional ------------------------------------------------------------------------
    def conditional(self, stats):
        """Gibbs with ``marginal``: ``(C, solve, current s)``; otherwise ``(E f, Var f)``."""
        previous = stats.get(self.name)
        if self.marginal is not None and previous is not None and previous.drawn:
            design, solve = self.marginal(stats)
            return design, solve, previous.response
        coefficients = stats[self.coefficients]
        return coefficients.f_mean, coefficients.f_var

    # -- Gibbs ------------------------------------------------------------------------------
    def _stats(self, s: np.ndarray, drawn: bool, solve=None) -> ProbitStats:
        return ProbitStats(np.ones_like(s), s, drawn, solve)

    def initial_value(self, stats, rng) -> ProbitStats:
        """A dispersed start: ``s_i = y_i |z_i|``, ``z_i ~ N(0, 1)``."""
        return self._stats(self.y * np.abs(rng.standard_normal(self.y.shape[0])), True)

    def sample(self, params, rng) -> ProbitStats:
        """Albert-Chib (all ``s_i`` given ``f``) or Holmes-Held (each ``s_i`` given the others,
        coefficients integrated out), by the shape of ``params``.
        """
        log_uniform = np.log(rng.random(self.y.shape[0]))
        if len(params) == 2:
            return self._stats(truncated_normal(params[0], 1.0, self.y, log_uniform), True)
        return self._stats(self._holmes_held(*params, log_uniform), True, params[1])

    def _holmes_held(self, design, solve, s, log_uniform) -> np.ndarray:
        """One sweep of Holmes-Held's ``s_i | s_-i, y`` (module docstring), compiled
        (:func:`~bayesvm.blocks.holmes_held.holmes_held_sweep`).
        """
        transposed = np.asfortranarray(design.T)  # C^T for LAPACK; its transpose is C by rows
        solved = solve(transposed).T  # S^T = C P^-1
        return holmes_held_sweep(transposed.T, solved, s, self.y, log_uniform)

    # -- VB ---------------------------------------------------------------------------------
    def initial_stats(self, stats, start=None) -> ProbitStats:
        """``E s`` at ``E f = 0``: ``y_i phi(0) / Phi(0)``."""
        return self.expected_stats((np.zeros(self.y.shape[0]), 0.0))

    def expected_stats(self, params) -> ProbitStats:
        """``E s_i = E f_i + y_i phi(E f_i) / Phi(y_i E f_i)`` (the ratio on the log scale)."""
        f_mean = params[0]
        a = self.y * f_mean
        ratio = np.exp(-0.5 * a * a - LOG_SQRT_2PI - log_ndtr(a))
        return self._stats(f_mean + self.y * ratio, False)

    def bound_term(self, params, stats) -> float:
        """``E log p(y, s | f) - E log q(s)``: with ``q(s_i)`` located at ``l_i`` and the
        coefficients' current ``E f_i = m_i``, ``Var f_i = v_i``, ``sum_i log Phi(y_i l_i) -
        (2 (l_i - m_i)(E s_i - l_i) + (l_i - m_i)^2 + v_i) / 2``; ``log Phi(y_i m_i) - v_i / 2``
        right after this block's update (module docstring).
        """
        location = params[0]
        coefficients = stats[self.coefficients]
        shift = location - coefficients.f_mean
        spread = 2.0 * shift * (stats[self.name].response - location) + shift**2
        return float(
            np.sum(log_ndtr(self.y * location)) - 0.5 * np.sum(spread + coefficients.f_var)
        )

    def variational(self, params) -> dict:
        """The location ``E f_i`` of every ``q(s_i)``."""
        return {"s_location": (["obs_id"], params[0])}

    # -- the model's density ----------------------------------------------------------------
    def log_density(self, stats) -> float:
        """``sum_i log Phi(y_i f_i)``: the probit likelihood with ``s`` integrated out (Zhang et
        al. section 3.1, ``y_i = 1`` iff ``s_i = f_i + eps_i > 0``; Albert & Chib 1993).
        """
        return float(np.sum(log_ndtr(self.y * stats[self.coefficients].f_mean)))

    def simulate_response(self, stats, rng: np.random.Generator) -> np.ndarray:
        """Labels drawn given the coefficients' ``f`` in ``stats``: ``y_i = +1`` if ``f_i +
        eps_i > 0``, else ``-1``, ``eps_i ~ N(0, 1)`` (Zhang et al. section 3.1).
        """
        f = stats[self.coefficients].f_mean
        return np.where(f + rng.standard_normal(f.shape) > 0.0, 1.0, -1.0)

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``sum_i log Phi(y_i f_i)`` as the potential ``probit``."""
        import pymc as pm

        f = variables["f"]
        pm.Potential("probit", pm.math.sum(pm.logcdf(pm.Normal.dist(0.0, 1.0), self.y * f)))
