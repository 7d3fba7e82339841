"""The design ``C = [X, Z]`` of a linear-predictor SVM and the Gaussian it induces.

Every backend needs, at each iteration, the Gaussian over ``theta = (beta, u)`` with precision
``P = C^T diag(w) C + diag(prior precision)`` (Luts-Ormerod Algorithm 2 lines 2-3 for
``q(beta, u)``; Appendix A and Polson-Scott eq. 9-10 for the full conditional): its mean
``P^-1 r``, a draw, ``log |P|``, ``dg(Sigma)`` and ``dg(C Sigma C^T)``. Two structures:

* :class:`DenseDesign` -- ``C`` as one matrix; ``P`` by Cholesky, ``O(n K^2 + K^3)``.
* :class:`FeatureDesign` -- ``C = [1, Psi]`` with orthogonal columns ``Psi`` (a kernel's
  eigenfeatures, ``Psi^T Psi = Lambda``). With unit weights (the probit's) ``P`` is an
  arrowhead, ``[[n + p_0, c^T], [c, D]]`` with ``c = Psi^T 1`` and ``D = Lambda + diag(p)``, so
  every operation is ``O(n K)`` through the Schur complement ``s = n + p_0 - c^T D^-1 c``;
  other weights fall back to the dense Cholesky.
* :class:`GroupedDesign` -- ``Z`` the ``n x m`` indicator of a random intercept. The ``u``-block
  of ``P`` is diagonal, ``D = diag(sum_{i in g} w_i + prior_g)``, so ``P`` is handled through
  the Schur complement ``S = A - B D^-1 B^T`` (``A = X^T W X + prior``, ``B = X^T W Z``):
  ``O(n p^2 + m p^2 + p^3)`` per iteration instead of ``O((p + m)^3)``. With
  ``x~_i = x_i - b_g(i) / d_g(i)``, ``dg(C Sigma C^T)_i = x~_i^T S^-1 x~_i + 1 / d_g(i)``.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from bayesvm.linalg import (
    cholesky_lower,
    cholesky_solve,
    inverse_factor,
    log_det_from_cholesky,
    matrix_times,
    quadratic_forms,
    transpose_times,
    triangular_solve,
    weighted_gram,
)

__all__ = [
    "DenseDesign",
    "FeatureDesign",
    "GroupedDesign",
    "DenseGaussian",
    "ArrowheadGaussian",
    "GroupedGaussian",
]


class DenseDesign:
    """``C = [X, Z]`` stored as one dense ``n x K`` matrix."""

    def __init__(self, X: np.ndarray, Z: np.ndarray | None = None):
        self.matrix = X if Z is None else np.hstack([X, Z])
        self.matrix_t = np.asfortranarray(self.matrix.T)  # C^T, laid out for LAPACK solves
        self.n_fixed = X.shape[1]

    @property
    def n_coefficients(self) -> int:
        """``K = p + m``."""
        return self.matrix.shape[1]

    @property
    def flops_per_iteration(self) -> float:
        """Work of one iteration: ``C^T W C`` and ``L^-1 C^T`` (``n K^2`` each), the
        factorisation and the inverse factor (``K^3 / 3`` each).
        """
        n, k = self.matrix.shape
        return 2.0 * n * k**2 + k**3

    def predictor(self, theta: np.ndarray) -> np.ndarray:
        """``C theta`` for ``theta`` of shape ``(..., K)``; result ``(..., n)``."""
        return matrix_times(self.matrix_t, theta)

    def with_effects(self, Z: np.ndarray) -> DenseDesign:
        """``[X, Z]``: this design's ``X`` beside new ``Z`` (a design completed anew)."""
        return DenseDesign(self.matrix[:, : self.n_fixed], Z)

    def transpose_times(self, values: np.ndarray) -> np.ndarray:
        """``C^T v`` for ``v`` of shape ``(n,)``."""
        return transpose_times(self.matrix_t, values)

    def dense(self) -> np.ndarray:
        """``C`` itself."""
        return self.matrix

    def gram(self, weights: np.ndarray) -> np.ndarray:
        """``C^T diag(weights) C`` (:func:`~bayesvm.linalg.weighted_gram`)."""
        return weighted_gram(self.matrix_t, weights)

    def precision(
        self, weights: np.ndarray, prior_precision: np.ndarray, extra: np.ndarray | None = None
    ) -> np.ndarray:
        """``P = C^T diag(weights) C + diag(prior_precision)`` (``+ extra``), unfactored."""
        precision = self.gram(weights)
        precision.flat[:: precision.shape[0] + 1] += prior_precision  # the diagonal
        if extra is not None:
            precision += extra
        return precision

    def symbolic_predictor(self, parts: list):
        """``C theta`` in PyTensor, ``theta`` given as ``(slice, tensor)`` parts (``to_pymc``)."""
        import pytensor.tensor as pt

        return sum(pt.dot(self.matrix[:, where], part) for where, part in parts)

    def gaussian(
        self, weights: np.ndarray, prior_precision: np.ndarray, extra: np.ndarray | None = None
    ) -> DenseGaussian:
        """Factor ``P = C^T diag(weights) C + diag(prior_precision)`` (``+ extra``: a
        ``K x K`` matrix, e.g. the design's own uncertainty under VB).
        """
        return DenseGaussian(self, weights, prior_precision, extra)


class DenseGaussian:
    """Gaussian with precision ``P = C^T W C + diag(prior) [+ extra]``, held by its Cholesky
    factor.
    """

    def __init__(
        self,
        design: DenseDesign,
        weights: np.ndarray,
        prior_precision: np.ndarray,
        extra: np.ndarray | None = None,
    ):
        self.design = design
        self.precision_matrix = design.precision(weights, prior_precision, extra)
        self.factor = cholesky_lower(self.precision_matrix)

    @classmethod
    def from_precision(cls, design: DenseDesign, precision: np.ndarray) -> DenseGaussian:
        """The Gaussian with the given precision matrix (a stochastic step's), factored."""
        gaussian = cls.__new__(cls)
        gaussian.design = design
        gaussian.precision_matrix = precision
        gaussian.factor = cholesky_lower(precision)
        return gaussian

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``P^-1 rhs``."""
        return cholesky_solve(self.factor, rhs)

    def draw(self, mean: np.ndarray, rng: np.random.Generator, size: int | None = None):
        """Draws from ``N(mean, P^-1)``: shape ``(K,)``, or ``(size, K)``."""
        k = mean.shape[0]
        noise = rng.standard_normal(k if size is None else (k, size))
        deviation = triangular_solve(self.factor, noise, transpose=True)
        return mean + (deviation if size is None else deviation.T)

    def whiten(self, deviation: np.ndarray) -> np.ndarray:
        """The standard normals :meth:`draw` maps to ``deviation = draw - mean`` (rows):
        ``z = L^T deviation``, so that ``deviation^T P deviation = ||z||^2``.
        """
        return deviation @ self.factor

    def log_det_precision(self) -> float:
        """``log |P|``."""
        return log_det_from_cholesky(self.factor)

    @cached_property
    def inverse_factor(self) -> np.ndarray:
        """``L^-1`` (``K^3 / 3`` flops), shared by both variance diagonals."""
        return inverse_factor(self.factor)

    def coefficient_variance(self) -> np.ndarray:
        """``dg(P^-1)``: squared column norms of ``L^-1``."""
        return np.einsum("ij,ij->j", self.inverse_factor, self.inverse_factor)

    def predictor_variance(self) -> np.ndarray:
        """``dg(C P^-1 C^T)``, squared column norms of ``L^-1 C^T`` (``O(n K^2)``)."""
        return quadratic_forms(self.inverse_factor, self.design.matrix_t)

    def covariance(self) -> np.ndarray:
        """``P^-1`` (for storage, not for the hot loop)."""
        return cholesky_solve(self.factor, np.eye(self.factor.shape[0]))

    def precision(self) -> np.ndarray:
        """``P``."""
        return self.precision_matrix


class FeatureDesign(DenseDesign):
    """``C = [1, Psi]`` with ``Psi^T Psi`` diagonal (module docstring)."""

    def __init__(self, features: np.ndarray):
        super().__init__(np.ones((features.shape[0], 1)), features)
        self.squares = np.einsum("ij,ij->j", features, features)  # dg(Psi^T Psi)
        self.sums = features.sum(axis=0)  # c = Psi^T 1

    def gaussian(
        self, weights: np.ndarray, prior_precision: np.ndarray, extra: np.ndarray | None = None
    ) -> DenseGaussian | ArrowheadGaussian:
        """The arrowhead Gaussian with unit weights, else the dense one."""
        if extra is None and np.all(weights == 1.0):
            return ArrowheadGaussian(self, prior_precision)
        return DenseGaussian(self, weights, prior_precision, extra)


class ArrowheadGaussian:
    """Gaussian with precision ``P = [[n + p_0, c^T], [c, D]]`` (:class:`FeatureDesign`, unit
    weights), ``D`` diagonal: ``O(n K)`` through the Schur complement ``s = n + p_0 - c^T
    D^-1 c``. With ``a = D^-1 c``: ``P^-1 = [[1/s, -a^T/s], [-a/s, D^-1 + a a^T / s]]``, and
    ``P = L L^T`` in the order ``(b, u)`` with ``L = [[D^1/2, 0], [c^T D^-1/2, s^1/2]]``.
    """

    def __init__(self, design: FeatureDesign, prior_precision: np.ndarray):
        self.design = design
        n = design.matrix.shape[0]
        self.prior = np.asarray(prior_precision, dtype=float)
        self.diagonal = design.squares + self.prior[1:]  # D
        self.sums = design.sums
        self.ratio = self.sums / self.diagonal  # a = D^-1 c
        self.schur = n + self.prior[0] - float(self.sums @ self.ratio)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``P^-1 rhs`` for ``rhs`` of shape ``(K,)`` or ``(K, m)``."""
        first, rest = rhs[0], rhs[1:]
        offset = (first - self.ratio @ rest) / self.schur  # a scalar, or one per column
        diagonal = self.diagonal if rhs.ndim == 1 else self.diagonal[:, None]
        weights = (rest - np.multiply.outer(self.sums, offset)) / diagonal
        return np.vstack([offset, weights]) if rhs.ndim > 1 else np.append(offset, weights)

    def draw(self, mean: np.ndarray, rng: np.random.Generator, size: int | None = None):
        """Draws from ``N(mean, P^-1)`` by ``L^T x = z`` (class docstring)."""
        k = mean.shape[0]
        z = rng.standard_normal(k if size is None else (size, k))
        offset = z[..., :1] / np.sqrt(self.schur)
        root = np.sqrt(self.diagonal)
        weights = (z[..., 1:] - (self.sums / root) * offset) / root
        return mean + np.concatenate([offset, weights], axis=-1)

    def whiten(self, deviation: np.ndarray) -> np.ndarray:
        """The standard normals :meth:`draw` maps to ``deviation = draw - mean`` (rows),
        ``z = L^T deviation``.
        """
        offset, weights = deviation[..., :1], deviation[..., 1:]
        root = np.sqrt(self.diagonal)
        rest = weights * root + (self.sums / root) * offset
        return np.concatenate([offset * np.sqrt(self.schur), rest], axis=-1)

    def log_det_precision(self) -> float:
        """``log |P| = sum log D + log s``."""
        return float(np.sum(np.log(self.diagonal)) + np.log(self.schur))

    def coefficient_variance(self) -> np.ndarray:
        """``dg(P^-1)``: ``1/s``, and ``1/D_j + a_j^2 / s``."""
        return np.concatenate(
            [[1.0 / self.schur], 1.0 / self.diagonal + self.ratio**2 / self.schur]
        )

    def predictor_variance(self) -> np.ndarray:
        """``dg(C P^-1 C^T)_i = (1 - a^T psi_i)^2 / s + sum_j psi_ij^2 / D_j``."""
        features = self.design.matrix[:, 1:]
        return (1.0 - features @ self.ratio) ** 2 / self.schur + (features**2) @ (
            1.0 / self.diagonal
        )

    def covariance(self) -> np.ndarray:
        """``P^-1`` (for storage)."""
        k = self.diagonal.shape[0] + 1
        covariance = np.empty((k, k))
        covariance[0, 0] = 1.0 / self.schur
        covariance[0, 1:] = covariance[1:, 0] = -self.ratio / self.schur
        covariance[1:, 1:] = np.outer(self.ratio, self.ratio) / self.schur
        covariance[1:, 1:][np.diag_indices(k - 1)] += 1.0 / self.diagonal
        return covariance

    def precision(self) -> np.ndarray:
        """``P``."""
        k = self.diagonal.shape[0] + 1
        precision = np.zeros((k, k))
        precision[0, 0] = self.design.matrix.shape[0] + self.prior[0]
        precision[0, 1:] = precision[1:, 0] = self.sums
        precision[1:, 1:][np.diag_indices(k - 1)] = self.diagonal
        return precision


class GroupedDesign:
    """``C = [X, Z]`` with ``Z`` the indicator matrix of ``group_index`` (random intercept).

    ``group_index[i] = -1`` marks a row outside every group (an unseen group at prediction
    time), whose random intercept is 0.
    """

    def __init__(self, X: np.ndarray, group_index: np.ndarray, n_groups: int):
        self.X = X
        self.X_t = np.ascontiguousarray(X.T)
        self.group_index = np.asarray(group_index, dtype=np.intp)
        self.n_groups = int(n_groups)
        self.n_fixed = X.shape[1]

    @property
    def n_coefficients(self) -> int:
        """``K = p + m``."""
        return self.n_fixed + self.n_groups

    @property
    def flops_per_iteration(self) -> float:
        """Work of one iteration, ``O(n p^2 + m p^2 + p^3)`` (module docstring)."""
        n, p = self.X.shape
        return 2.0 * n * p**2 + self.n_groups * p**2 + p**3

    def predictor(self, theta: np.ndarray) -> np.ndarray:
        """``X beta + u[group]`` for ``theta`` of shape ``(..., K)``; result ``(..., n)``."""
        beta, u = theta[..., : self.n_fixed], theta[..., self.n_fixed :]
        padded = np.concatenate([u, np.zeros(u.shape[:-1] + (1,))], axis=-1)  # index -1 -> 0
        return beta @ self.X_t + padded[..., self.group_index]

    def transpose_times(self, values: np.ndarray) -> np.ndarray:
        """``C^T v = (X^T v, per-group sums of v)``."""
        return np.concatenate([self.X_t @ values, self._group_sums(values)])

    def dense(self) -> np.ndarray:
        """``C`` as a dense matrix (for algorithms without the structured path)."""
        Z = np.zeros((self.X.shape[0], self.n_groups))
        rows = np.flatnonzero(self.group_index >= 0)
        Z[rows, self.group_index[rows]] = 1.0
        return np.hstack([self.X, Z])

    def symbolic_predictor(self, parts: list):
        """``X beta + u[group]`` in PyTensor, ``parts = [(slice, beta), (slice, u)]``."""
        import pytensor.tensor as pt

        (_, beta), (_, u) = parts
        return pt.dot(self.X, beta) + u[self.group_index]

    def gaussian(self, weights: np.ndarray, prior_precision: np.ndarray) -> GroupedGaussian:
        """Factor ``P`` through its Schur complement (module docstring)."""
        return GroupedGaussian(self, weights, prior_precision)

    def _group_sums(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.group_index, weights=values, minlength=self.n_groups)


class GroupedGaussian:
    """Gaussian with precision ``[[A, B], [B^T, D]]``, ``D`` diagonal: ``S = A - B D^-1 B^T``."""

    def __init__(self, design: GroupedDesign, weights: np.ndarray, prior_precision: np.ndarray):
        p = design.n_fixed
        weighted = design.X * weights[:, None]
        A = design.X_t @ weighted
        A.flat[:: p + 1] += prior_precision[:p]  # the diagonal
        # B[:, g] = sum_{i in g} w_i x_i, one bincount per fixed effect (p is small).
        B = np.stack([design._group_sums(weighted[:, j]) for j in range(p)])
        self.d = design._group_sums(weights) + prior_precision[p:]
        self.B_over_d = B / self.d
        self.factor = cholesky_lower(A - self.B_over_d @ B.T)
        self.design = design

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """``P^-1 rhs`` by block elimination."""
        p = self.design.n_fixed
        rhs_beta, rhs_u = rhs[:p], rhs[p:]
        beta = cholesky_solve(self.factor, rhs_beta - self.B_over_d @ rhs_u)
        u = rhs_u / self.d - self.B_over_d.T @ beta
        return np.concatenate([beta, u])

    def draw(self, mean: np.ndarray, rng: np.random.Generator, size: int | None = None):
        """Draws from ``N(mean, P^-1)``: ``beta ~ N(., S^-1)``, then ``u | beta``."""
        p, m = self.design.n_fixed, self.design.n_groups
        shape = (p,) if size is None else (p, size)
        beta_dev = triangular_solve(self.factor, rng.standard_normal(shape), transpose=True)
        u_noise = rng.standard_normal((m,) if size is None else (m, size))
        u_dev = u_noise / np.sqrt(self.d if size is None else self.d[:, None])
        u_dev = u_dev - self.B_over_d.T @ beta_dev
        deviation = np.concatenate([beta_dev, u_dev])
        return mean + (deviation if size is None else deviation.T)

    def whiten(self, deviation: np.ndarray) -> np.ndarray:
        """The standard normals :meth:`draw` maps to ``deviation = draw - mean`` (rows):
        ``z_beta = L_S^T dev_beta`` and ``z_u = d^1/2 (dev_u + (D^-1 B^T dev_beta))``.
        """
        p = self.design.n_fixed
        beta, u = deviation[..., :p], deviation[..., p:]
        return np.concatenate(
            [beta @ self.factor, np.sqrt(self.d) * (u + beta @ self.B_over_d)], axis=-1
        )

    def log_det_precision(self) -> float:
        """``log |P| = log |S| + sum log d``."""
        return log_det_from_cholesky(self.factor) + float(np.sum(np.log(self.d)))

    def coefficient_variance(self) -> np.ndarray:
        """``dg(P^-1)``: ``dg(S^-1)`` and ``1/d_g + b_g^T S^-1 b_g / d_g^2``."""
        p = self.design.n_fixed
        inverse_factor = triangular_solve(self.factor, np.eye(p))
        half = triangular_solve(self.factor, self.B_over_d)
        return np.concatenate(
            [
                np.einsum("ij,ij->j", inverse_factor, inverse_factor),
                1.0 / self.d + np.einsum("ij,ij->j", half, half),
            ]
        )

    def predictor_variance(self) -> np.ndarray:
        """``dg(C P^-1 C^T)_i = x~_i^T S^-1 x~_i + 1 / d_g(i)`` (module docstring)."""
        index = self.design.group_index
        centred = self.design.X_t - self.B_over_d[:, index]
        half = triangular_solve(self.factor, centred)
        return np.einsum("ij,ij->j", half, half) + 1.0 / self.d[index]

    def fixed_covariance(self) -> np.ndarray:
        """``Cov(beta) = S^-1``."""
        return cholesky_solve(self.factor, np.eye(self.design.n_fixed))
