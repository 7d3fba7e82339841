"""Gaussian coefficients over an active set of columns, integrated out: the collapsed model
search of spike-and-slab priors and of active kernel vectors.

Given the augmented likelihood's *complete-data sufficient statistics* ``G = C^T W C`` and
``h = C^T r`` (Polson-Scott section 4.2) and a prior precision ``R`` on the coefficients, the
coefficients of an active set ``A`` of columns have the complete conditional
``N(P_A^-1 h_A, P_A^-1)`` with ``P_A = G_AA + R_AA``, and integrating them out leaves

    ``log p(data | A) = const + log|R_AA| / 2 - log|P_A| / 2 + h_A^T P_A^-1 h_A / 2``,

which is Polson-Scott eq. (17) (expand their sum of squares with the identity that follows
it) and the marginal ``p(s | gamma)`` of Zhang, Dai & Jordan eq. (8). A model search changes
``A`` one column at a time, so :class:`ActiveCholesky` keeps the Cholesky factor of
``M_AA`` and changes it in ``O(k^2)``: a column joins by bordering (one triangular solve), a
column leaves by the Givens rotations of a rank-one downdate (``scipy.linalg.qr_delete``).
The gain in ``log p(data | A)`` of a proposed change is computed from the current factors,
without forming the proposal's (:class:`CollapsedGaussian`), so a rejected proposal costs one
triangular solve. The matrices are read only at the active rows and columns (``M[A, A]``,
``M[A, j]``, ``M[j, j]``), so they may be objects that compute those entries on demand
(:meth:`CollapsedGaussian.from_matrices`): a kernel model's ``n x n`` matrices are never formed.

A column whose residual in the active ones is below :data:`PIVOT_TOL` of its own size lies in
their span: its Gaussian prior (Zhang et al.'s Moore-Penrose g-prior) puts no mass off that
span, so it adds nothing and is never added.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import qr_delete

from bayesvm.linalg import cholesky_lower, log_det_from_cholesky, triangular_solve

__all__ = ["ActiveCholesky", "CollapsedGaussian", "Addition", "PIVOT_TOL"]

#: A column joins only if its Schur complement exceeds this share of its diagonal entry.
PIVOT_TOL = 1e-10


class ActiveCholesky:
    """Lower Cholesky factor of ``matrix[A, A]`` for an ordered list ``A`` of columns.

    Parameters
    ----------
    matrix : ndarray of shape (K, K)
        Symmetric positive definite.
    order : sequence of int
        The active columns, in the order of the factor's rows.
    factor : ndarray, optional
        The factor of ``matrix[order, order]`` if already known.
    """

    def __init__(self, matrix: np.ndarray, order, factor: np.ndarray | None = None):
        self.matrix = matrix
        self.order = list(order)
        if factor is None:
            block = matrix[np.ix_(self.order, self.order)]
            factor = cholesky_lower(block) if self.order else np.zeros((0, 0))
        self.factor = factor

    def copy(self) -> ActiveCholesky:
        """An independent copy."""
        other = object.__new__(ActiveCholesky)
        other.matrix, other.order, other.factor = self.matrix, list(self.order), self.factor
        return other

    def position(self, column: int) -> int:
        """Row of ``column`` in the factor."""
        return self.order.index(column)

    def border(self, column: int) -> tuple[np.ndarray, float]:
        """``(l, s)`` of the factor with ``column`` appended: ``l = L^-1 M_A,j`` and the Schur
        complement ``s = M_jj - l^T l``, so that the new factor is ``[[L, 0], [l^T, sqrt s]]``
        (``M_jj = s + l^T l``). The column's entries are read in one look-up.
        """
        entries = self.matrix[[*self.order, column], column]
        if not self.order:
            return entries[:0], float(entries[0])
        border = triangular_solve(self.factor, entries[:-1])
        return border, float(entries[-1] - border @ border)

    def append(self, column: int, border: np.ndarray, schur: float) -> None:
        """Append ``column`` given its :meth:`border` (``O(k^2)``)."""
        if not schur > 0.0:
            raise np.linalg.LinAlgError(f"column {column} makes the active block singular")
        k = len(self.order)
        factor = np.zeros((k + 1, k + 1))
        factor[:k, :k] = self.factor
        factor[k, :k] = border
        factor[k, k] = np.sqrt(schur)
        self.factor = factor
        self.order.append(column)

    def delete(self, column: int) -> None:
        """Remove ``column``: the rows below it are rotated back to triangular form by Givens
        rotations (a rank-one downdate of the trailing block, ``O(k^2)``).
        """
        position = self.position(column)
        k = len(self.order)
        _, upper = qr_delete(np.eye(k), self.factor.T, position, which="col", check_finite=False)
        upper = upper[: k - 1]
        self.factor = (upper * np.sign(np.diag(upper))[:, None]).T
        del self.order[position]

    def inverse_diagonal(self, column: int) -> float:
        """``(M_AA^-1)_jj``: ``||L^-1 e_p||^2``, a solve with the trailing block only."""
        position = self.position(column)
        trailing = self.factor[position:, position:]
        unit = np.zeros(trailing.shape[0])
        unit[0] = 1.0
        solution = triangular_solve(trailing, unit)
        return float(solution @ solution)

    def log_det(self) -> float:
        """``log |M_AA|``."""
        return log_det_from_cholesky(self.factor) if self.order else 0.0


class Addition:
    """A proposed addition of one column: the borders of both factors, for :meth:`
    CollapsedGaussian.add`.
    """

    __slots__ = ("column", "linear", "border", "schur", "prior_border", "prior_schur", "z_new")

    def __init__(self, column, linear, border, schur, prior_border, prior_schur, z_new):
        self.column, self.linear = column, linear
        self.border, self.schur = border, schur
        self.prior_border, self.prior_schur = prior_border, prior_schur
        self.z_new = z_new


class CollapsedGaussian:
    """``log p(data | A)`` (module docstring) and the conditional of the active coefficients.

    Parameters
    ----------
    gram : ndarray of shape (K, K)
        ``G = C^T W C``.
    linear : ndarray of shape (K,)
        ``h = C^T r``.
    prior_precision : ndarray of shape (K,) or (K, K)
        ``R``: its diagonal (independent priors, e.g. a spike-and-slab's slab) or the full
        matrix (a g-prior).
    order : sequence of int
        The active columns.
    """

    def __init__(self, gram, linear, prior_precision, order):
        self.linear = linear
        self.active_linear = self._entries(linear, order)
        self.diagonal_prior = np.ndim(prior_precision) == 1
        if self.diagonal_prior:
            self.prior_diagonal = np.asarray(prior_precision, dtype=float)
            precision = gram.copy()
            precision.flat[:: precision.shape[0] + 1] += self.prior_diagonal
            self.prior = None
        else:
            precision = gram + prior_precision
            self.prior = ActiveCholesky(prior_precision, order)
        self.precision = ActiveCholesky(precision, order)
        self._refresh()

    @classmethod
    def from_matrices(
        cls, precision, prior_precision, linear, order, factors=(None, None)
    ) -> CollapsedGaussian:
        """From ``P = G + R``, a full prior precision ``R`` and ``h``, each read only at the
        active rows and columns (module docstring): arrays, or objects whose ``[rows, columns]``
        computes the entries; ``factors``: those of ``P_AA`` and ``R_AA`` where known.
        """
        collapsed = object.__new__(cls)
        collapsed.linear = linear
        collapsed.active_linear = cls._entries(linear, order)
        collapsed.diagonal_prior = False
        collapsed.prior = ActiveCholesky(prior_precision, order, factors[1])
        collapsed.precision = ActiveCholesky(precision, order, factors[0])
        collapsed._refresh()
        return collapsed

    @staticmethod
    def _entries(linear, order) -> np.ndarray:
        """``h_A``, kept in the order of the factors as columns join and leave (so that ``h``
        is read once per column, however its entries are computed).
        """
        return np.asarray(linear[list(order)], dtype=float) if len(order) else np.zeros(0)

    def _refresh(self) -> None:
        order = self.precision.order
        self.z = triangular_solve(self.precision.factor, self.active_linear) if order else self.z0
        self._mean = None

    z0 = np.zeros(0)

    @property
    def order(self) -> list[int]:
        """The active columns, in the order of :meth:`mean` and :meth:`draw`."""
        return self.precision.order

    def _prior_log_det(self) -> float:
        if self.diagonal_prior:
            return float(np.sum(np.log(self.prior_diagonal[self.order])))
        return self.prior.log_det()

    def log_marginal(self) -> float:
        """``log |R_AA| / 2 - log |P_A| / 2 + h_A^T P_A^-1 h_A / 2``."""
        return 0.5 * (self._prior_log_det() - self.precision.log_det() + self.z @ self.z)

    # -- proposals --------------------------------------------------------------------------
    def propose_addition(self, column: int) -> tuple[float, Addition]:
        """Gain in ``log p(data | A)`` from adding ``column``, and the addition itself."""
        border, schur = self.precision.border(column)
        linear = float(self.linear[column])
        residual = linear - border @ self.z
        z_new = residual / np.sqrt(schur) if schur > 0 else 0.0
        if self.diagonal_prior:
            prior_border, prior_schur = None, float(self.prior_diagonal[column])
        else:
            prior_border, prior_schur = self.prior.border(column)
        if self._in_span(border, schur, prior_border, prior_schur):  # never accepted
            addition = Addition(column, linear, border, schur, prior_border, prior_schur, 0.0)
            return -np.inf, addition
        gain = 0.5 * (np.log(prior_schur) - np.log(schur) + z_new * z_new)
        addition = Addition(column, linear, border, schur, prior_border, prior_schur, z_new)
        return float(gain), addition

    def _in_span(self, border, schur: float, prior_border, prior_schur: float) -> bool:
        """Whether a column is numerically in the span of the active ones: its Schur complement
        in either matrix is at most :data:`PIVOT_TOL` of its diagonal entry ``s + l^T l``.
        """
        if not schur > PIVOT_TOL * (schur + border @ border):
            return True
        if self.diagonal_prior:
            return not prior_schur > 0.0
        return not prior_schur > PIVOT_TOL * (prior_schur + prior_border @ prior_border)

    def removal_gain(self, column: int) -> float:
        """Gain in ``log p(data | A)`` from removing ``column``: with ``theta_hat = P_A^-1 h_A``,
        minus the addition gain back, ``log s_R / 2 - log s_P / 2 + theta_hat_j^2 s_P / 2``
        where ``s = 1 / (M_AA^-1)_jj`` is the Schur complement of ``j`` in either matrix.
        """
        schur = 1.0 / self.precision.inverse_diagonal(column)
        if self.diagonal_prior:
            prior_schur = float(self.prior_diagonal[column])
        else:
            prior_schur = 1.0 / self.prior.inverse_diagonal(column)
        position = self.precision.position(column)
        theta_j = self.mean()[position]
        return -0.5 * float(np.log(prior_schur) - np.log(schur) + theta_j * theta_j * schur)

    # -- changes ----------------------------------------------------------------------------
    def add(self, addition: Addition) -> None:
        """Accept an addition (``O(k^2)``)."""
        self.precision.append(addition.column, addition.border, addition.schur)
        if not self.diagonal_prior:
            self.prior.append(addition.column, addition.prior_border, addition.prior_schur)
        self.z = np.append(self.z, addition.z_new)
        self.active_linear = np.append(self.active_linear, addition.linear)
        self._mean = None

    def remove(self, column: int) -> None:
        """Remove ``column`` (``O(k^2)``)."""
        self.active_linear = np.delete(self.active_linear, self.precision.position(column))
        self.precision.delete(column)
        if not self.diagonal_prior:
            self.prior.delete(column)
        self._refresh()

    def copy(self) -> CollapsedGaussian:
        """An independent copy (to try a change and keep or drop it)."""
        other = object.__new__(CollapsedGaussian)
        other.__dict__.update(self.__dict__)
        other.precision = self.precision.copy()
        other.prior = None if self.prior is None else self.prior.copy()
        return other

    # -- the conditional of the active coefficients ------------------------------------------
    def mean(self) -> np.ndarray:
        """``P_A^-1 h_A``, in the order of :attr:`order` (solved once per active set: every
        removal gain of a sweep reads it).
        """
        if not self.order:
            return self.z0
        if self._mean is None:
            self._mean = triangular_solve(self.precision.factor, self.z, transpose=True)
        return self._mean

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """A draw from ``N(P_A^-1 h_A, P_A^-1)``, in the order of :attr:`order`."""
        if not self.order:
            return self.z0
        noise = self.z + rng.standard_normal(len(self.order))
        return triangular_solve(self.precision.factor, noise, transpose=True)
