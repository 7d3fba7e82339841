"""Which sets of active kernel vectors reversible jump may enter, tested one move at a time.

The support of Zhang et al.'s g-prior (section 2.2) is the sets whose kernel block ``K_AA`` is
nonsingular to working precision: :meth:`~bayesvm.blocks.kernel.KernelCoefficients.
active_factor`, a pivoted Cholesky factorisation and a triangular inverse of the block. Given
the probit's ``s``, reversible jump makes about twenty births, deaths and swaps a sweep, each
one vector from the last set admitted; :class:`AdmittedSet` tests those in ``O(k^2)``.
"""

from __future__ import annotations

import numpy as np

from bayesvm.blocks.active_set import PIVOT_TOL, ActiveCholesky
from bayesvm.linalg import inverse_diagonal, triangular_solve

__all__ = ["AdmittedSet", "UPDATE_MARGIN"]

#: A set one birth, death or swap from an admitted one is admitted without a fresh factorisation
#: where each vector's Schur complement in the others, updated in ``O(k^2)``, exceeds
#: :data:`~bayesvm.blocks.active_set.PIVOT_TOL` by this factor (:class:`AdmittedSet`).
UPDATE_MARGIN = 1e3


class AdmittedSet:
    """The last set of active vectors found admitted (:meth:`~bayesvm.blocks.kernel.
    KernelCoefficients.active_factor`, the support of the g-prior), with ``L = chol(K_AA)``
    and ``diag(K_AA^-1)``: reversible jump's test of the sets it enters, one birth, death or
    swap at a time.

    A set one such move away is tested from these in ``O(k^2)``: a vector ``j`` joining adds
    ``v_i^2 / s_j`` to each ``(K^-1)_ii``, with ``v = K_AA^-1 k_Aj`` and ``s_j`` its Schur
    complement in ``A``, and gives ``(K^-1)_jj = 1 / s_j``; a vector ``p`` leaving subtracts
    ``c_i^2 / c_p``, with ``c = K_AA^-1 e_p``. The set is admitted where every ``1 /
    (K^-1)_ii`` so found exceeds :data:`~bayesvm.blocks.active_set.PIVOT_TOL` of ``K_ii`` by
    :data:`UPDATE_MARGIN`, far beyond the round-off of either computation; otherwise, and for
    a set further away, the fresh test decides, as before. A set admitted becomes the last one.
    At waveform's 190 vectors a fresh test (a pivoted Cholesky factorisation and a triangular
    inverse) took about 1 ms in a chain, 0.4 ms alone, and an update 0.2 ms; the 18 tests of a
    sweep given ``s`` took its jumps from 26 to 15 ms.

    Parameters
    ----------
    coefficients : KernelCoefficients
        Its kernel and fresh test.
    active : ndarray of int
        An admitted set (the chain's current one).
    factor : ndarray
        ``chol(K[active, active])``, in the order of ``active``.
    """

    def __init__(self, coefficients, active, factor):
        self.coefficients = coefficients
        self.diagonal = np.diag(coefficients.kernel)
        self._keep(ActiveCholesky(coefficients.kernel, list(active), factor))

    def _keep(self, cholesky: ActiveCholesky, inverse=None) -> None:
        self.cholesky = cholesky
        if inverse is None:
            inverse = inverse_diagonal(cholesky.factor) if cholesky.order else np.zeros(0)
        self.inverse = inverse

    def admits(self, order: list) -> bool:
        """Whether the columns ``order`` of ``[1, K]`` (0 the intercept's) form an admitted
        set.
        """
        active = [column - 1 for column in order[1:]]
        left = set(self.cholesky.order).difference(active)
        joined = set(active).difference(self.cholesky.order)
        if len(left) <= 1 and len(joined) <= 1:
            trial, inverse = self.cholesky.copy(), self.inverse
            for column in left:
                inverse = self._without(trial, inverse, column)
            for column in joined:
                inverse = self._with(trial, inverse, column)
            limit = 1.0 / (PIVOT_TOL * UPDATE_MARGIN)
            if inverse is not None and np.all(inverse * self.diagonal[trial.order] < limit):
                self._keep(trial, inverse)
                return True
        found = self.coefficients.active_factor(np.asarray(active, dtype=int))
        if found is None:
            return False
        positions, factor = found
        self._keep(ActiveCholesky(self.coefficients.kernel, [active[p] for p in positions], factor))
        return True

    @staticmethod
    def _without(trial: ActiveCholesky, inverse: np.ndarray, column: int) -> np.ndarray:
        position = trial.position(column)
        unit = np.zeros(len(trial.order))
        unit[position] = 1.0
        solved = triangular_solve(trial.factor, triangular_solve(trial.factor, unit), True)
        trial.delete(column)
        return np.delete(inverse - solved**2 / solved[position], position)

    @staticmethod
    def _with(trial: ActiveCholesky, inverse: np.ndarray, column: int):
        border, schur = trial.border(column)
        if not schur > 0.0:
            return None
        solved = triangular_solve(trial.factor, border, True) if border.size else border
        trial.append(column, border, schur)
        return np.append(inverse + solved**2 / schur, 1.0 / schur)
