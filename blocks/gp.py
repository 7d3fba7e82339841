"""Gaussian-process values at a set of points, whitened (Wenzel et al. 2017, sections 3-4).

The block holds ``u = f(Z)``, the GP at the points ``Z``: the training inputs (the full GP of
eq. 5) or ``m`` inducing points (section 4.2, eq. 6). With ``K_ZZ = L L^T`` it is written as
``u = L v``, ``v ~ N(0, I)``, so that the GP is a Gaussian coefficient block with a unit prior
and the design ``Psi = K_XZ L^-T`` (for the full GP ``Psi = L``): ``f_i | v ~ N(psi_i^T v,
kt_i)`` with ``kt_i = k(x_i, x_i) - ||psi_i||^2``, the diagonal of eq. (6)'s ``K~`` (0 for the
full GP). With the hinge augmentation's ``w = E[1/lambda] = alpha^-1/2`` and ``r = y (1 + w)``:

* Gibbs (full GP, eq. 5): ``v | lambda ~ N(P^-1 Psi^T r, P^-1)``, ``P = Psi^T W Psi + I``,
  which is ``f | lambda ~ N(C Y (lambda^-1 + 1), C)`` with ``C^-1 = A^-1 + K^-1``;
* B-BSVM (section 4.1): ``q(v) = N(P^-1 Psi^T r, P^-1)`` at ``w = alpha^-1/2``: the paper's
  ``zeta = (A^-1/2 + K^-1)^-1`` and ``mu = zeta Y (alpha^-1/2 + 1)``; with inducing points it
  is the optimum of the bound (8) in ``q(u)``, whose hinge term reads ``Var f_i = psi_i^T
  Sigma psi_i + kt_i``, so ``alpha_i = (1 - y_i kappa_i mu)^2 + kappa_i zeta kappa_i^T +
  K~_ii`` (Algorithm 1 line 7);
* S-BSVM (Algorithm 1 lines 9-14): the same conditional on a minibatch with its likelihood
  scaled by ``n / |S|`` gives ``eta-hat`` (eq. 9-10); :meth:`GPValues.conditional_natural` and
  :meth:`GPValues.from_natural` let the SVI driver take the step ``eta <- (1 - rho) eta + rho
  eta-hat`` in ``(P, P mean)``. The natural gradient is invariant to the linear map ``u = L v``,
  so the steps are the paper's in ``u``.

The bound's prior term, ``-KL(q(u) || N(0, K_ZZ)) = -KL(q(v) || N(0, I))``, is the unit
:class:`~bayesvm.blocks.FixedPrecision` prior's expectation plus this block's entropy.
"""

from __future__ import annotations

import numpy as np

from bayesvm.blocks.coefficients import (
    CoefficientStats,
    GaussianCoefficients,
    GaussianConditional,
    Segment,
)
from bayesvm.blocks.design import DenseDesign, DenseGaussian
from bayesvm.blocks.gaussian_priors import FixedPrecision
from bayesvm.linalg import triangular_solve

__all__ = ["GPValues", "InducingGPValues", "gp_values"]


class GPValues(GaussianCoefficients):
    """``u = f(Z) = L v`` with ``v ~ N(0, I)`` and the design ``Psi`` (module docstring).

    Parameters
    ----------
    features : ndarray of shape (n, m)
        ``Psi = K_XZ L^-T`` at the rows the block sees (training set or minibatch).
    residual_variance : ndarray of shape (n,)
        ``kt_i = k(x_i, x_i) - ||psi_i||^2``: 0 for the full GP, where ``f = L v`` exactly.
    whitening : ndarray of shape (m, m)
        ``L``, the lower Cholesky factor of ``K_ZZ``.
    var_name, dim : str
        The reported variable (``f`` at the training points, ``u_ind`` at inducing points)
        and its dimension.
    """

    def __init__(
        self,
        features: np.ndarray,
        residual_variance: np.ndarray,
        whitening: np.ndarray,
        var_name: str,
        dim: str,
    ):
        size = whitening.shape[0]
        prior = FixedPrecision("prior", np.ones(size), "theta", slice(0, size))
        super().__init__(
            DenseDesign(features),
            [Segment(f"{var_name}_whitened", "basis", slice(0, size), prior)],
            "hinge",
            list(range(size)),
        )
        self.prior = prior
        self.residual_variance = residual_variance
        self.whitening = whitening
        self.var_names = (var_name,)
        self.dims = {var_name: [dim]}
        self.var_name, self.dim = var_name, dim
        self.exact = not np.any(residual_variance > 0.0)

    def expected_stats(self, params: GaussianConditional) -> CoefficientStats:
        """Moments under ``q(v)``; ``Var f_i`` adds ``kt_i`` (eq. 6)."""
        stats = super().expected_stats(params)
        return stats._replace(f_var=stats.f_var + self.residual_variance)

    def record(self, stats: CoefficientStats) -> dict[str, np.ndarray]:
        """``u = L v``."""
        return {self.var_name: self.whitening @ stats.mean}

    def draw_q(self, params: GaussianConditional, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``u = L v`` from ``q``."""
        v = params.gaussian.draw(params.mean, rng, size=size)
        return {self.var_name: v @ self.whitening.T}

    def q_log_density(self, params: GaussianConditional, draws) -> np.ndarray:
        """``log q(u) = log q(v) - log |L|`` at ``v = L^-1 u`` (the change of variables of
        :meth:`log_jacobian`).
        """
        v = triangular_solve(self.whitening, draws[self.var_name].T).T
        whitened = {self.segments[0].name: v}
        return super().q_log_density(params, whitened) - self.log_det_whitening

    def moments(self, params: GaussianConditional) -> tuple[np.ndarray, np.ndarray]:
        """Mean and covariance of ``q(u)``: ``L mu_v`` and ``L Sigma_v L^T``."""
        L = self.whitening
        return L @ params.mean, L @ params.gaussian.covariance() @ L.T

    def q_moments(self, params: GaussianConditional) -> dict:
        """``q(u)``'s mean and sd."""
        mean, covariance = self.moments(params)
        return {self.var_name: (mean, np.sqrt(np.diag(covariance)))}

    def variational(self, params: GaussianConditional) -> dict:
        """``q(u)``'s mean and covariance."""
        mean, covariance = self.moments(params)
        return {
            f"{self.var_name}_mean": ([self.dim], mean),
            f"{self.var_name}_covariance": ([self.dim, f"{self.dim}_"], covariance),
        }

    def variational_coords(self) -> dict:
        """Coordinates of the covariance's second dimension."""
        return {f"{self.dim}_": np.arange(self.whitening.shape[0])}

    # -- SVI (a NaturalGradientBlock) --------------------------------------------------------
    def initial_natural(self) -> tuple[np.ndarray, np.ndarray]:
        """The prior ``q(v) = N(0, I)`` (Algorithm 1 line 2)."""
        size = self.whitening.shape[0]
        return np.eye(size), np.zeros(size)

    def conditional_natural(self, stats) -> tuple[np.ndarray, np.ndarray]:
        """The complete conditional's ``(P, P mean) = (Psi^T W Psi + I, Psi^T r)``: ``-2
        eta_2`` and ``eta_1`` of ``eta-hat`` (Algorithm 1 lines 9-10), without factoring ``P``
        (the step only averages it).
        """
        likelihood = stats[self.likelihood]
        precision = self.design.precision(likelihood.weights, stats[self.prior.name].precision)
        return precision, self.design.transpose_times(likelihood.response)

    def natural_mean(self, natural: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """``q(v)``'s mean ``P^-1 (P mean)``."""
        precision, linear = natural
        return np.linalg.solve(precision, linear)

    def from_natural(self, natural: tuple[np.ndarray, np.ndarray]) -> GaussianConditional:
        """``q(v)`` from ``(P, P mean)`` (Algorithm 1 lines 13-14), on this block's rows."""
        gaussian = DenseGaussian.from_precision(self.design, natural[0])
        return GaussianConditional(gaussian, gaussian.solve(natural[1]))

    def rewhitened(self, natural, whitening: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The same ``q(u)`` in the whitening ``L'`` of other hyperparameters: ``v = T v'``
        with ``T = L^-1 L'``, so ``P' = T^T P T`` and ``P' mean' = T^T P mean``.
        """
        transform = triangular_solve(self.whitening, whitening)
        precision, linear = natural
        return transform.T @ precision @ transform, transform.T @ linear

    # -- the model's density (full GP) ------------------------------------------------------
    def _theta(self, point) -> np.ndarray:
        """The whitened values ``v = L^-1 u`` at the GP values ``u`` (``f`` of eq. 5), whose
        statistics are :meth:`point_stats`. With inducing points the bound (8) is no model's
        posterior, which has no density.
        """
        if not self.exact:
            raise ValueError("with inducing points the bound (8) is no model: it has no density")
        return triangular_solve(self.whitening, point[self.var_name])

    @property
    def log_det_whitening(self) -> float:
        """``log |L| = log |K_ZZ| / 2`` (eq. 5's prior covariance ``K``, factored)."""
        return float(np.sum(np.log(np.diag(self.whitening))))

    def log_jacobian(self, stats) -> float:
        """``log |dv / du| = -log |L|``: the unit prior's density is written in ``v = L^-1 u``
        (eq. 5's ``u ~ N(0, K)`` whitened).
        """
        return -self.log_det_whitening

    def pymc_log_jacobian(self, values) -> float:
        """:meth:`to_pymc` declares ``v`` and ``u = L v``: ``log |du / dv| = log |L|``."""
        return self.log_det_whitening

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``v ~ N(0, I)``, ``u = L v`` (the non-centred GP NUTS needs); ``f = Psi v``."""
        import pymc as pm
        import pytensor.tensor as pt

        v = pm.Normal(self.segments[0].name, 0.0, 1.0, dims="basis")
        variables["f"] = pt.dot(self.design.matrix, v)
        values = variables["f"] if self.var_name == "f" else pt.dot(self.whitening, v)
        variables[self.var_name] = pm.Deterministic(self.var_name, values, dims=self.dim)


class InducingGPValues(GPValues):
    """:class:`GPValues` at inducing points on rows that are not all among them: there the
    bound (8) is no model's posterior, with no conditional to draw from or maximise, so
    Gibbs, EM and NUTS need the full GP (VB and stochastic VI only).
    """

    sample = mode = None


def gp_values(features, residual_variance, whitening, var_name: str, dim: str) -> GPValues:
    """The GP's coefficient block on some rows: :class:`InducingGPValues` where any row has
    a residual variance ``kt_i > 0``, else the full GP's :class:`GPValues`.
    """
    exact = not np.any(residual_variance > 0.0)
    block = GPValues if exact else InducingGPValues
    return block(features, residual_variance, whitening, var_name, dim)
