"""The Laplace (lasso) prior as a scale mixture of normals (Polson-Scott 2011, eq. 5, alpha = 1).

``u_j | nu ~ Laplace(0, nu c_j)`` is ``u_j | omega_j ~ N(0, omega_j nu^2 c_j^2)`` with
``omega_j ~ Exp(1/2)``, so that given ``omega`` the prior is Gaussian and the coefficient block
stays conjugate. Two blocks:

* :class:`LaplaceMixing` -- ``omega``. Its complete conditional is ``GIG(1/2, 1, chi_j)`` with
  ``chi_j = E[u_j^2] / (nu c_j)^2``, the same family as the hinge's augmentation:

  - Gibbs: ``1/omega_j ~ InverseGaussian(nu c_j / |u_j|, 1)`` (Polson-Scott Corollary 3,
    MCMC-SVM step 3);
  - VB (``nu`` fixed): ``q(omega_j) = GIG(1/2, 1, chi_j)``, ``E_q[1/omega_j] = chi_j^-1/2``,
    guarded like the hinge (:data:`~bayesvm.blocks.hinge.CHI_FLOOR`); its bound term is
    ``-log(2 nu c_j) - (sqrt(chi*) + chi / sqrt(chi*)) / 2``, which at the optimum is
    ``E log Laplace`` with ``E|u_j|`` replaced by ``sqrt(E u_j^2)`` (Jensen: a lower bound);
  - EM: the E-step weight ``1/omega_j = nu c_j / |u_j|`` (Polson-Scott Corollary 4).

  The coefficient block reads the prior precision ``E[1/omega_j] / (nu c_j)^2``.
* :class:`LaplaceScale` -- a learned ``t = 1/nu ~ Gamma(a, b)`` (section 3.3). Its conditional
  with ``omega`` integrated out is ``Gamma(a + m, b + sum_j |u_j| / c_j)``: Gibbs draws it
  (MCMC-SVM step 4), ECME takes its mode (the CME step). Given ``omega`` instead, the
  conditional of ``t`` has the non-conjugate kernel ``t^(a+m-1) exp(-b t - t^2 S / 2)``, so
  mean-field VB over ``(omega, nu)`` is not closed-form: this block supports Gibbs and EM only,
  and a lasso with a learned scale is fitted by Gibbs, ECME or NUTS.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayesvm.blocks.base import Block
from bayesvm.blocks.gaussian_priors import PriorStats
from bayesvm.blocks.hinge import CHI_FLOOR, RESIDUAL_FLOOR

__all__ = ["LaplaceMixing", "LaplaceScale", "ScaleStats"]


class ScaleStats(NamedTuple):
    """The Laplace scale ``nu`` (a value: this block is drawn or maximised, never averaged)."""

    nu: float


class LaplaceScale(Block):
    """``t = 1/nu ~ Gamma(shape, rate)``: the learned scale of a Laplace prior."""

    name = "nu"
    drivers = frozenset({"gibbs", "em"})
    learned = True
    var_names = ("nu",)

    def __init__(
        self, shape: float, rate: float, coefficients: str, segment: slice, scale: np.ndarray
    ):
        self.shape, self.rate = float(shape), float(rate)
        self.coefficients = coefficients
        self.segment = segment
        self.scale = np.asarray(scale, dtype=float)
        self.shape_q = self.shape + self.scale.shape[0]

    def conditional(self, stats) -> float:
        """Rate of ``t | u ~ Gamma(a + m, b + sum_j |u_j| / c_j)`` (``omega`` integrated out)."""
        u = stats[self.coefficients].mean[self.segment]
        return self.rate + float(np.sum(np.maximum(np.abs(u) / self.scale, RESIDUAL_FLOOR)))

    def sample(self, rate: float, rng) -> ScaleStats:
        """``nu = 1/t``, ``t ~ Gamma(a + m, rate)``."""
        return ScaleStats(1.0 / rng.gamma(self.shape_q, 1.0 / rate))

    def record(self, stats: ScaleStats) -> dict[str, float]:
        """``nu``."""
        return {"nu": stats.nu}

    def mode(self, rate: float) -> ScaleStats:
        """``nu = 1 / mode(t) = rate / (a + m - 1)`` (Polson-Scott section 3.3; the formula
        printed there is the reciprocal of this mode, see :mod:`bayesvm.samplers.em`).
        """
        return ScaleStats(rate / (self.shape_q - 1.0))

    def log_density(self, stats) -> float:
        """``log Gamma(t | a, b)`` at ``t = 1/nu``, up to a constant."""
        nu = stats[self.name].nu
        return -(self.shape - 1.0) * np.log(nu) - self.rate / nu

    def declare(self, variables: dict):
        """``nu ~ IG(a, b)`` in the current PyMC model (once)."""
        import pymc as pm

        if "nu" not in variables:
            variables["nu"] = pm.InverseGamma("nu", self.shape, self.rate)
        return variables["nu"]


class MixingParams(NamedTuple):
    """``q(omega_j) = GIG(1/2, 1, (scaled_j / nu)^2)``."""

    scaled: np.ndarray  # sqrt(E u_j^2) / c_j
    nu: float


class LaplaceMixing(Block):
    """The mixing variances ``omega`` of a Laplace prior on a segment of coefficients.

    Parameters
    ----------
    coefficients : str
        Name of the coefficient block.
    segment : slice
        The coefficients governed.
    scale : ndarray
        ``c_j``.
    dim : str
        Dimension of the segment.
    nu : float or None
        A fixed scale; None reads it from ``scale_block``.
    scale_block : LaplaceScale, optional
        The learned scale.
    """

    name = "u_prior"
    latent = True

    def __init__(
        self, coefficients: str, segment: slice, scale, dim: str, nu=None, scale_block=None
    ):
        self.coefficients = coefficients
        self.dim = dim
        self.segment = segment
        self.scale = np.asarray(scale, dtype=float)
        self.fixed_nu = nu
        self.scale_block = scale_block
        self.inv_scale2 = 1.0 / self.scale**2

    def _nu(self, stats) -> float:
        return self.fixed_nu if self.scale_block is None else stats[self.scale_block.name].nu

    def conditional(self, stats) -> MixingParams:
        """``chi_j = E[u_j^2] / (nu c_j)^2`` of ``GIG(1/2, 1, chi_j)``, held as
        ``sqrt(E u_j^2) / c_j`` (floored at ``RESIDUAL_FLOOR``) and ``nu``.
        """
        square = stats[self.coefficients].square[self.segment]
        scaled = np.maximum(np.sqrt(square) / self.scale, RESIDUAL_FLOOR)
        return MixingParams(scaled, self._nu(stats))

    def _stats(self, inv_omega: np.ndarray, nu: float) -> PriorStats:
        return PriorStats(inv_omega * self.inv_scale2 / nu**2, inv_omega)

    # -- Gibbs ------------------------------------------------------------------------------
    def sample(self, params: MixingParams, rng) -> PriorStats:
        """``1/omega_j ~ InverseGaussian(nu c_j / |u_j|, 1)``."""
        return self._stats(rng.wald(params.nu / params.scaled, 1.0), params.nu)

    # -- VB ---------------------------------------------------------------------------------
    def initial_stats(self, stats, start=None) -> PriorStats:
        """``E_q[1/omega] = 1``: the Gaussian with the Laplace's scale."""
        return self._stats(np.ones(self.scale.shape[0]), self._nu(stats))

    def _chi(self, params: MixingParams) -> tuple[np.ndarray, np.ndarray]:
        chi = (params.scaled / params.nu) ** 2
        return chi, np.sqrt(np.maximum(chi, CHI_FLOOR))

    def expected_stats(self, params: MixingParams) -> PriorStats:
        """``E_q[1/omega_j] = max(chi_j, CHI_FLOOR)^-1/2``."""
        _, root = self._chi(params)
        return self._stats(1.0 / root, params.nu)

    def bound_term(self, params: MixingParams, stats) -> float:
        """``E log N(u | 0, omega nu^2 c^2) + E log Exp(omega | 1/2) - E log q(omega)``."""
        chi, root = self._chi(params)
        return -float(np.sum(np.log(2.0 * params.nu * self.scale))) - 0.5 * float(
            np.sum(root + chi / root)
        )

    def variational(self, params: MixingParams) -> dict:
        """``chi`` of every ``q(omega_j)``."""
        return {"omega_chi": ([self.dim], self._chi(params)[0])}

    # -- EM ---------------------------------------------------------------------------------
    def log_density(self, stats) -> float:
        """``log Laplace(u | 0, nu c)`` (``omega`` integrated out), up to a constant: with
        a fixed ``nu`` the normaliser ``-m log nu`` is that constant and is left out, so the
        objective is Polson-Scott's ``-2 sum hinge - sum |u_j| / (nu c_j)`` (section 3.1).
        """
        nu = self._nu(stats)
        u = stats[self.coefficients].mean[self.segment]
        normaliser = u.shape[0] * np.log(nu) if self.scale_block is not None else 0.0
        return -float(np.sum(np.abs(u) / self.scale)) / nu - normaliser

    def penalty(self, stats) -> tuple[np.ndarray, np.ndarray]:
        """``(0, 1 / (nu c))``: the Laplace's ``|u_j| / (nu c_j)`` (``omega`` integrated out)."""
        return np.zeros_like(self.scale), 1.0 / (self._nu(stats) * self.scale)

    # -- PyMC -------------------------------------------------------------------------------
    def declare_segment(self, name, dims, variables, noncentered=False, scale=1.0):
        """``name ~ Laplace(0, nu c)`` (``omega`` integrated out)."""
        import pymc as pm

        nu = self.fixed_nu if self.scale_block is None else self.scale_block.declare(variables)
        return pm.Laplace(name, 0.0, b=scale * nu * self.scale, dims=dims)
