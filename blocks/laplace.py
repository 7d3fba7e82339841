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

  With a learned variance ``nu^2 = sigma2_u ~ IG(A_u, B_u)`` instead (``variance_block``, a
  :class:`~bayesvm.blocks.GammaPrecision` over ``lambda = 1 / sigma2_u``), ``b = 1/omega`` is
  Luts-Ormerod section 3.2's ``b_k ~ IG(1, 1/2)`` and ``nu^-2`` is replaced by ``lambda`` (its
  value, or ``E_q[lambda]``): Gibbs ``b_k ~ InverseGaussian(sigma_u / |v_k|, 1)`` (App. B),
  VB ``mu_q(b_k) = [E(sigma2_u^-1) E(v_k^2)]^-1/2`` (Algorithm 3 line 5), and the bound term
  ``E log lambda / 2 - log(2 c_j) - (sqrt(chi*) + chi / sqrt(chi*)) / 2`` (the fixed-``nu``
  term with ``-log nu`` replaced by ``E log lambda / 2``; VB over a learned ``sigma2_u`` is
  conjugate, unlike over a learned ``nu``).
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
from bayesvm.blocks.coefficients import LOG_2PI
from bayesvm.blocks.gaussian_priors import PriorStats
from bayesvm.blocks.hinge import CHI_FLOOR, RESIDUAL_FLOOR

__all__ = ["LaplaceMixing", "LaplaceScale", "ScaleStats"]


class ScaleStats(NamedTuple):
    """The Laplace scale ``nu`` (a value: this block is drawn or maximised, never averaged)."""

    nu: float


class LaplaceScale(Block):
    """``t = 1/nu ~ Gamma(shape, rate)``: the learned scale of a Laplace prior."""

    name = "nu"
    learned = True
    var_names = ("nu",)
    supports = {"nu": "positive"}

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

    def point_stats(self, point, stats) -> ScaleStats:
        """``nu`` from ``point``."""
        return ScaleStats(float(point["nu"]))

    def log_jacobian(self, stats) -> float:
        """``log |dt / dnu| = -2 log nu``: :meth:`log_density` is written in ``t = 1/nu``."""
        return -2.0 * float(np.log(stats[self.name].nu))

    def declare(self, variables: dict):
        """``nu ~ IG(a, b)`` in the current PyMC model (once)."""
        import pymc as pm

        if "nu" not in variables:
            variables["nu"] = pm.InverseGamma("nu", self.shape, self.rate)
        return variables["nu"]


class MixingParams(NamedTuple):
    """``q(omega_j) = GIG(1/2, 1, scaled_j^2 lambda)``, ``lambda = nu^-2``."""

    scaled: np.ndarray  # sqrt(E u_j^2) / c_j
    precision: float  # lambda = nu^-2, or E[lambda]
    log_precision: float  # log lambda, or E[log lambda]


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
    variance_block : GammaPrecision, optional
        A learned variance ``nu^2 = sigma2_u`` (Luts-Ormerod section 3.2); its ``mixing`` is
        this block.
    report_name : str, optional
        Report ``b = 1/omega`` under this name (Luts-Ormerod's ``b``); by default nothing.
    """

    name = "u_prior"
    latent = True

    def __init__(
        self,
        coefficients: str,
        segment: slice,
        scale,
        dim: str,
        nu=None,
        scale_block=None,
        variance_block=None,
        report_name: str | None = None,
    ):
        self.coefficients = coefficients
        self.dim = dim
        self.segment = segment
        self.scale = np.asarray(scale, dtype=float)
        self.fixed_nu = nu
        self.scale_block = scale_block
        self.variance_block = variance_block
        self.inv_scale2 = 1.0 / self.scale**2
        self.log_2_scale_sum = float(np.sum(np.log(2.0 * self.scale)))
        if report_name is not None:
            self.var_names = (report_name,)
            self.supports = {report_name: "positive"}
            self.dims = {report_name: [dim]}
            self.latent = False  # reported, so drawn rather than integrated out

    def _nu(self, stats) -> float:
        return self.fixed_nu if self.scale_block is None else stats[self.scale_block.name].nu

    def _inverse_square_scale(self, stats) -> tuple[float, float]:
        """``(lambda, log lambda)`` for ``lambda = nu^-2``: values, or ``q``'s expectations."""
        if self.variance_block is not None:
            variance = stats[self.variance_block.name]
            return float(variance.value), float(variance.log_value)
        nu = self._nu(stats)
        return nu**-2, -2.0 * np.log(nu)

    def conditional(self, stats) -> MixingParams:
        """``chi_j = E[u_j^2] lambda / c_j^2`` of ``GIG(1/2, 1, chi_j)``, held as
        ``sqrt(E u_j^2) / c_j`` (floored at ``RESIDUAL_FLOOR``) and ``lambda = nu^-2``.
        """
        square = stats[self.coefficients].square[self.segment]
        scaled = np.maximum(np.sqrt(square) / self.scale, RESIDUAL_FLOOR)
        return MixingParams(scaled, *self._inverse_square_scale(stats))

    def _stats(self, inv_omega: np.ndarray, precision: float) -> PriorStats:
        return PriorStats(inv_omega * self.inv_scale2 * precision, inv_omega)

    # -- Gibbs ------------------------------------------------------------------------------
    def sample(self, params: MixingParams, rng) -> PriorStats:
        """``1/omega_j ~ InverseGaussian(nu c_j / |u_j|, 1)``."""
        mean = 1.0 / (params.scaled * np.sqrt(params.precision))
        return self._stats(rng.wald(mean, 1.0), params.precision)

    def record(self, stats: PriorStats) -> dict[str, np.ndarray]:
        """``b = 1/omega`` where reported."""
        return {name: stats.value for name in self.var_names}

    # -- VB ---------------------------------------------------------------------------------
    def initial_stats(self, stats, start=None) -> PriorStats:
        """``E_q[1/omega] = 1``: the Gaussian with the Laplace's scale."""
        return self._stats(np.ones(self.scale.shape[0]), self._inverse_square_scale(stats)[0])

    def _chi(self, params: MixingParams) -> tuple[np.ndarray, np.ndarray]:
        chi = params.scaled**2 * params.precision
        return chi, np.sqrt(np.maximum(chi, CHI_FLOOR))

    def expected_stats(self, params: MixingParams) -> PriorStats:
        """``E_q[1/omega_j] = max(chi_j, CHI_FLOOR)^-1/2``."""
        _, root = self._chi(params)
        return self._stats(1.0 / root, params.precision)

    def bound_term(self, params: MixingParams, stats) -> float:
        """``E log N(u | 0, omega nu^2 c^2) + E log Exp(omega | 1/2) - E log q(omega)``:
        ``E log lambda / 2 - log(2 c_j) - (sqrt(chi*) + chi / sqrt(chi*)) / 2`` per
        coefficient (module docstring).
        """
        chi, root = self._chi(params)
        m = chi.shape[0]
        return (
            0.5 * m * params.log_precision
            - self.log_2_scale_sum
            - 0.5 * float(np.sum(root + chi / root))
        )

    def draw_q(self, params: MixingParams, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``b = 1/omega ~ InverseGaussian(chi^-1/2, 1)`` where reported."""
        _, root = self._chi(params)
        return {
            name: rng.wald(1.0 / root, 1.0, size=(size, root.shape[0])) for name in self.var_names
        }

    def q_log_density(self, params: MixingParams, draws) -> np.ndarray | float:
        """``log InverseGaussian(b | mu = chi^-1/2, 1) = -(log 2 pi b^3 + (b - mu)^2 / (mu^2
        b)) / 2`` summed over the coefficients, where ``b`` is reported (else 0: ``omega`` is
        integrated out of the model's density).
        """
        if not self.var_names:
            return 0.0
        b = np.asarray(draws[self.var_names[0]], dtype=float)
        mean = 1.0 / self._chi(params)[1]
        log_q = -0.5 * (LOG_2PI + 3.0 * np.log(b) + (b - mean) ** 2 / (mean**2 * b))
        return log_q.sum(axis=1)

    def q_moments(self, params: MixingParams) -> dict:
        """``b ~ InverseGaussian(mu = chi^-1/2, 1)`` where reported: mean ``mu``, variance
        ``mu^3``.
        """
        mean = 1.0 / self._chi(params)[1]
        return {name: (mean, mean**1.5) for name in self.var_names}

    def variational(self, params: MixingParams) -> dict:
        """``chi`` of every ``q(omega_j)``."""
        return {"omega_chi": ([self.dim], self._chi(params)[0])}

    # -- EM ---------------------------------------------------------------------------------
    def log_density(self, stats) -> float:
        """``log Laplace(u | 0, nu c)`` (``omega`` integrated out), up to a constant: with
        a fixed ``nu`` the normaliser ``-m log nu`` is that constant and is left out, so the
        objective is Polson-Scott's ``-2 sum hinge - sum |u_j| / (nu c_j)`` (section 3.1).
        Where ``b = 1/omega`` is reported it is not integrated out: ``log N(u | 0, c^2 /
        (lambda b)) + log IG(b | 1, 1/2)``, ``lambda = nu^-2`` (Luts-Ormerod section 3.2).
        """
        u = stats[self.coefficients].mean[self.segment]
        lam, log_lam = self._inverse_square_scale(stats)
        if self.var_names:
            b = stats[self.name].value
            return float(
                np.sum(
                    0.5 * (log_lam + np.log(b))
                    - 0.5 * lam * b * u**2 * self.inv_scale2
                    - 2.0 * np.log(b)
                    - 0.5 / b
                )
            )
        learned = self.scale_block is not None or self.variance_block is not None
        normaliser = 0.5 * u.shape[0] * log_lam if learned else 0.0
        return normaliser - float(np.sum(np.abs(u) / self.scale)) * np.sqrt(lam)

    def point_stats(self, point, stats) -> PriorStats | None:
        """``b = 1/omega`` where reported (else integrated out: None)."""
        if not self.var_names:
            return None
        return self._stats(
            np.asarray(point[self.var_names[0]]), self._inverse_square_scale(stats)[0]
        )

    def penalty(self, stats) -> tuple[np.ndarray, np.ndarray]:
        """``(0, 1 / (nu c))``: the Laplace's ``|u_j| / (nu c_j)`` (``omega`` integrated out)."""
        return np.zeros_like(self.scale), 1.0 / (self._nu(stats) * self.scale)

    # -- PyMC -------------------------------------------------------------------------------
    def declare_segment(self, name, dims, variables, noncentered=False, scale=1.0):
        """``name ~ Laplace(0, nu c)`` (``omega`` integrated out)."""
        import pymc as pm

        if self.variance_block is not None:
            variance = self.variance_block.declare(variables)
            if not self.var_names:
                return pm.Laplace(
                    name, 0.0, b=scale * pm.math.sqrt(variance) * self.scale, dims=dims
                )
            b = pm.InverseGamma(self.var_names[0], 1.0, 0.5, dims=dims)
            variables[self.var_names[0]] = b
            sd = scale * pm.math.sqrt(variance / b) * self.scale
            if noncentered:
                z = pm.Normal(f"{name}_standardized", 0.0, 1.0, dims=dims)
                return pm.Deterministic(name, sd * z, dims=dims)
            return pm.Normal(name, 0.0, sigma=sd, dims=dims)
        nu = self.fixed_nu if self.scale_block is None else self.scale_block.declare(variables)
        return pm.Laplace(name, 0.0, b=scale * nu * self.scale, dims=dims)
