"""Gaussian priors on a segment of coefficients: a fixed precision, or a learned Gamma one.

Both show the coefficient block one statistic, the expected prior ``precision`` of each
coefficient of their segment, and own the prior factor of the segment (module docstring of
:mod:`bayesvm.blocks.base`).

* :class:`FixedPrecision` -- ``theta_j ~ N(0, 1 / precision_j)``: the vague prior on
  ``beta`` (Luts-Ormerod eq. 5) and the ridge with a fixed penalty (section 2.3).
* :class:`GammaPrecision` -- ``theta_j | lambda ~ N(0, c_j^2 / (lambda t))``, ``lambda ~
  Gamma(A, B)`` with one ``lambda`` for the segment or one per coefficient (ARD), and ``t``
  the coefficient block's own scale (the noise precision ``tau`` of Drugowitsch's eq. 3, else
  1). It is the learned penalty ``s2 = 1 / lambda ~ IG(A, B)`` of Luts-Ormerod section 3.1 and
  Polson-Scott's ridge, and Drugowitsch's ``alpha`` (eq. 4, 24, 40, 69). Its conditional,
  for Gibbs and VB alike, is ``Gamma(A + k/2, B + sum_j E[t theta_j^2] / (2 c_j^2))`` over the
  ``k`` coefficients sharing a ``lambda``: Luts-Ormerod App. A / Algorithm 2 line 4 (``s2``),
  Drugowitsch eq. 11-15 / 31-32 / 52-55 / 74-75 (``alpha``). Under a scale mixture
  (``mixing``: Luts-Ormerod section 3.2's ``v_k | b_k, sigma2_u ~ N(0, sigma2_u / b_k)``) the
  sum weighs each coefficient by ``E[b_k]``: App. B / Algorithm 3 line 11, ``B_u +
  v^T diag(b) v / 2``; the mixing block then owns the segment's prior factor.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from scipy.special import digamma, gammaln

from bayesvm.blocks.base import Block

__all__ = [
    "FixedPrecision",
    "GammaPrecision",
    "MixedGammaPrecision",
    "PriorStats",
    "PRECISION_STARTS",
]

LOG_2PI = float(np.log(2.0 * np.pi))


class PriorStats(NamedTuple):
    """What a prior shows the coefficient block, and its own value (Gibbs, EM)."""

    precision: np.ndarray  # (expected) prior precision of each coefficient of the segment
    value: object = None  # lambda (Gibbs draw, EM mode) or E[lambda] (VB); None if fixed
    log_value: object = None  # log lambda, or E[log lambda] (VB)


def _segment_log_prior(precision, log_precision_sum, coefficient_stats, segment) -> float:
    """``E log N(theta_s | 0, 1 / (precision t))`` summed over the segment, given
    ``sum_j E log precision_j``.
    """
    square = coefficient_stats.square[segment]
    k = square.shape[0]
    return 0.5 * (log_precision_sum + k * coefficient_stats.log_scale - k * LOG_2PI) - 0.5 * float(
        precision @ square
    )


class FixedPrecision(Block):
    """``theta_s ~ N(0, diag(1 / precision))`` with a known precision (no variables)."""

    learned = False

    def __init__(self, name: str, precision: np.ndarray, coefficients: str, segment: slice):
        self.name = name
        self.coefficients = coefficients
        self.segment = segment
        self.stats = PriorStats(np.asarray(precision, dtype=float))
        self.log_precision_sum = float(np.sum(np.log(self.stats.precision)))

    def conditional(self, stats):
        """Nothing to condition on."""
        return None

    def sample(self, params, rng):
        """The constant precision."""
        return self.stats

    initial_value = sample

    def initial_stats(self, stats, start=None):
        """The constant precision."""
        return self.stats

    def expected_stats(self, params):
        """The constant precision."""
        return self.stats

    mode = expected_stats

    def bound_term(self, params, stats) -> float:
        """``E log N(theta_s | 0, 1 / precision)``."""
        return _segment_log_prior(
            self.stats.precision, self.log_precision_sum, stats[self.coefficients], self.segment
        )

    def log_density(self, stats) -> float:
        """``log N(theta_s | 0, 1 / (precision t))`` up to a constant (``t`` the coefficient
        block's own scale, 1 but for Drugowitsch's ``tau``).
        """
        coefficients = stats[self.coefficients]
        square = coefficients.square[self.segment]
        return 0.5 * square.shape[0] * coefficients.log_scale - 0.5 * float(
            np.sum(self.stats.precision * square)
        )

    def point_stats(self, point, stats) -> PriorStats:
        """The constant precision."""
        return self.stats

    def penalty(self, stats) -> tuple[np.ndarray, np.ndarray]:
        """``(precision, 0)``."""
        return self.stats.precision, np.zeros_like(self.stats.precision)

    def declare(self, variables: dict) -> np.ndarray:
        """The prior variances ``1 / precision`` (constants: nothing to declare)."""
        return 1.0 / self.stats.precision

    def declare_segment(self, name, dims, variables, noncentered=False, scale=1.0):
        """``name ~ N(0, scale^2 / precision)`` in the current PyMC model."""
        import pymc as pm

        return pm.Normal(name, 0.0, sigma=scale / np.sqrt(self.stats.precision), dims=dims)


#: VB's starts of ``E[lambda]`` for a learned shrinkage whose start matters (Drugowitsch's
#: ``alpha``): its prior mean (None, the papers' start) and 1 (unit prior variance); VB keeps
#: the ascent with the larger bound (:func:`bayesvm.drivers.run_ascent_from`).
PRECISION_STARTS = (None, 1.0)


def _log_derivative(parameterisation: str, log_lam):
    """``log |d m(lambda) / d lambda|`` for ``m`` the precision ``lambda``, the variance
    ``1 / lambda`` or the sd ``lambda^-1/2``, up to a constant.
    """
    return {"precision": 0.0 * log_lam, "variance": -2.0 * log_lam}.get(
        parameterisation, -1.5 * log_lam
    )


class GammaPrecision(Block):
    """A learned prior precision ``lambda ~ Gamma(shape, rate)``, shared or per coefficient.

    Parameters
    ----------
    name : str
        Block name (its statistics' key).
    shape, rate : float
        ``A``, ``B`` of the Gamma prior on ``lambda`` (an ``IG(A, B)`` prior on ``1/lambda``).
    coefficients : str
        Name of the coefficient block whose segment this is the prior of.
    segment : slice
        The coefficients governed.
    scale : ndarray
        ``c_j``: the prior variance of ``theta_j`` is ``c_j^2 / lambda``.
    ard : bool
        One ``lambda`` per coefficient instead of one for the segment.
    report : {"precision", "variance", "sd"}
        Reported as ``lambda``, ``1 / lambda`` or ``lambda^-1/2``, under ``report_name``.
    report_name : str
        The posterior variable: ``alpha`` (Drugowitsch), ``sigma2_u`` (Luts-Ormerod), ``nu``
        (Polson-Scott's ridge scale).
    dims : list of str
        Dimensions of the reported variable with ARD.
    mode_of : {"precision", "variance"}
        The parameterisation whose mode the ECME CM-step takes (and whose density EM's
        objective uses): Polson-Scott section 3.3 takes the mode of ``s2 = 1 / lambda``.
    starts : tuple
        VB's initial ``E[lambda]`` values (None: the prior mean ``A / B``); VB keeps the ascent
        with the larger bound (:func:`bayesvm.drivers.run_ascent_from`).
    q_names : tuple of str
        Names of ``q(lambda)``'s shape, rate and (or None) mean in the ``variational`` group.
    mixing : str, optional
        Name of a scale-mixture block (:class:`~bayesvm.blocks.laplace.LaplaceMixing`) whose
        ``value`` ``b_j`` multiplies each coefficient's precision: ``theta_j ~ N(0, c_j^2 /
        (lambda b_j))``. That block is then the segment's prior and owns its factor; this one
        owns the hyperprior of ``lambda`` only (build :class:`MixedGammaPrecision` then).
    interweave : bool
        Gibbs also redraws the scale ``lambda^-1/2`` in the ancillary parameterisation
        ``z = sqrt(lambda) theta_s / c`` after each draw of the coefficients
        (:class:`~bayesvm.blocks.interweaving.ScaleInterweaving`); one ``lambda`` for the
        segment and no ``mixing`` only. Other drivers are unaffected.
    """

    learned = True

    def __init__(
        self,
        name: str,
        *,
        shape: float,
        rate: float,
        coefficients: str,
        segment: slice,
        scale: np.ndarray,
        ard: bool = False,
        report: Literal["precision", "variance", "sd"] = "precision",
        report_name: str = "alpha",
        dims: list | None = None,
        mode_of: Literal["precision", "variance"] = "precision",
        starts: tuple = (None,),
        q_names: tuple = ("shape", "rate", None),
        mixing: str | None = None,
        interweave: bool = False,
    ):
        if interweave and (ard or mixing is not None):
            raise ValueError("interweave needs one lambda for the segment and no mixing")
        self.name = name
        self.interweave = interweave
        self.shape, self.rate = float(shape), float(rate)
        self.coefficients = coefficients
        self.segment = segment
        self.inv_scale2 = 1.0 / np.asarray(scale, dtype=float) ** 2
        self.size = self.inv_scale2.shape[0]
        self.ard = ard
        self.report, self.mode_of = report, mode_of
        self.var_names = (report_name,)
        self.supports = {report_name: "positive"}
        self.dims = {report_name: list(dims or [])} if ard else {}
        self.starts = starts
        self.q_names = q_names
        self.mixing = mixing
        n_groups = self.size if ard else 1
        self.n_groups = n_groups
        self.multiplicity = 1.0 if ard else float(self.size)  # coefficients sharing a lambda
        self.shape_q = self.shape + (0.5 if ard else 0.5 * self.size)
        self.digamma_q = float(digamma(self.shape_q))
        # sum_j log c_j^-2, and the part of the bound free of q's rate (see bound_term)
        self.log_inv_scale2_sum = float(np.sum(np.log(self.inv_scale2)))
        self.bound_constant = n_groups * (
            self.shape * np.log(self.rate)
            - gammaln(self.shape)
            + gammaln(self.shape_q)
            + self.shape_q
            + (self.shape - self.shape_q) * digamma(self.shape_q)
        )

    # -- conditional ------------------------------------------------------------------------
    def conditional(self, stats):
        """Rate of ``Gamma(A + k/2, B + sum_j E[t theta_j^2] / (2 c_j^2))`` (shape fixed): a
        float, or one per coefficient with ARD.
        """
        scaled = stats[self.coefficients].square[self.segment] * self.inv_scale2
        if self.mixing is not None and self.mixing in stats:  # b = 1 before its first draw
            scaled = scaled * stats[self.mixing].value
        if self.ard:
            return self.rate + 0.5 * scaled
        return self.rate + 0.5 * float(np.sum(scaled))

    def _precision(self, lam) -> np.ndarray:
        return lam * self.inv_scale2

    def _reported(self, lam):
        if self.report == "variance":
            return 1.0 / lam
        if self.report == "sd":
            return np.sqrt(1.0 / lam)
        return lam

    # -- Gibbs ------------------------------------------------------------------------------
    def sample(self, rate, rng) -> PriorStats:
        """``lambda ~ Gamma(A + k/2, rate)``."""
        return self.at(rng.gamma(self.shape_q, 1.0 / rate))

    def at(self, lam) -> PriorStats:
        """Statistics at the value ``lambda``."""
        return PriorStats(self._precision(lam), lam, np.log(lam))

    def record(self, stats: PriorStats) -> dict[str, np.ndarray]:
        """The reported variable at ``lambda``."""
        return {self.var_names[0]: self._reported(stats.value)}

    # -- VB ---------------------------------------------------------------------------------
    def initial_stats(self, stats, start=None) -> PriorStats:
        """``E[lambda] = start``, or the prior mean ``A / B``."""
        mean = self.shape / self.rate if start is None else start
        return PriorStats(mean * self.inv_scale2, mean, np.log(mean))

    def expected_stats(self, rate) -> PriorStats:
        """``E[lambda] = (A + k/2) / rate`` and ``E[log lambda] = psi(A + k/2) - log rate``."""
        mean = self.shape_q / rate
        return PriorStats(self._precision(mean), mean, self.digamma_q - np.log(rate))

    def bound_term(self, rate, stats) -> float:
        """``E log p(theta_s | lambda) + E log Gamma(lambda | A, B) - E log q(lambda)``.

        With ``q = Gamma(A_q, B_q)``, ``E log lambda = psi(A_q) - log B_q`` and ``E lambda =
        A_q / B_q``, the last two terms are, per ``lambda``, ``A log B - log Gamma(A) +
        log Gamma(A_q) + A_q + (A - A_q) psi(A_q) - A log B_q - B A_q / B_q``.
        """
        inverse_rate = np.reciprocal(rate)  # a NumPy scalar or array: .sum() either way
        log_rate_sum = float(np.log(rate).sum())
        hyperprior = (
            self.bound_constant
            - self.shape * log_rate_sum
            - self.rate * self.shape_q * float(inverse_rate.sum())
        )
        if self.mixing is not None:  # the mixing block owns the segment's factor
            return hyperprior
        log_precision_sum = (
            self.multiplicity * (self.n_groups * self.digamma_q - log_rate_sum)
            + self.log_inv_scale2_sum
        )
        return hyperprior + _segment_log_prior(
            self._precision(self.shape_q * inverse_rate),
            log_precision_sum,
            stats[self.coefficients],
            self.segment,
        )

    def draw_q(self, rate, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of the reported variable from ``q(lambda)``."""
        lam = rng.gamma(self.shape_q, 1.0 / rate, size=(size, *np.shape(rate)))
        return {self.var_names[0]: self._reported(lam)}

    def q_log_density(self, rate, draws) -> np.ndarray:
        """``log Gamma(lambda | A + k/2, rate)`` at the reported draws ``r``, less ``log |dr /
        dlambda|`` for a reported variance or sd (the map of :meth:`log_jacobian`).
        """
        lam = self._from_reported(np.asarray(draws[self.var_names[0]], dtype=float))
        log_lam = np.log(lam)
        a = self.shape_q
        log_q = a * np.log(rate) - gammaln(a) + (a - 1.0) * log_lam - rate * lam
        log_q = log_q - _log_derivative(self.report, log_lam)
        return log_q.reshape(log_q.shape[0], -1).sum(axis=1)

    def q_moments(self, rate) -> dict:
        """Mean and sd of the reported variable under ``q(lambda) = Gamma(a, r)``: of
        ``lambda`` (``a / r`` and ``sqrt(a) / r``), of ``1 / lambda`` (inverse gamma: ``r /
        (a - 1)``, variance ``r^2 / ((a - 1)^2 (a - 2))``) or of ``lambda^-1/2`` (``sqrt(r)
        Gamma(a - 1/2) / Gamma(a)``, second moment ``r / (a - 1)``); infinite where the
        moment does not exist (``a <= 1`` or ``a <= 2`` for the inverse gamma's).
        """
        a, r = self.shape_q, np.asarray(rate, dtype=float)
        infinite = np.full_like(r, np.inf)
        if self.report == "precision":
            mean, variance = a / r, a / r**2
        elif self.report == "variance":
            mean = r / (a - 1.0) if a > 1.0 else infinite
            variance = r**2 / ((a - 1.0) ** 2 * (a - 2.0)) if a > 2.0 else infinite
        else:
            mean = np.sqrt(r) * np.exp(gammaln(a - 0.5) - gammaln(a)) if a > 0.5 else infinite
            variance = r / (a - 1.0) - mean**2 if a > 1.0 else infinite
        return {self.var_names[0]: (mean, np.sqrt(variance))}

    def variational(self, rate) -> dict:
        """``q(lambda)``'s shape, rate(s) and mean(s)."""
        dims = self.dims.get(self.var_names[0], [])
        shape_name, rate_name, mean_name = self.q_names
        group = {shape_name: ((), self.shape_q), rate_name: (dims, rate)}
        if mean_name is not None:
            group[mean_name] = (dims, self.shape_q / rate)
        return group

    # -- EM ---------------------------------------------------------------------------------
    def mode(self, rate) -> PriorStats:
        """Mode of ``lambda``, or of the variance ``1 / lambda`` (``mode_of``), under the
        conditional: ``(A + k/2 - 1) / rate``, or ``rate / (A + k/2 + 1)`` (inverse gamma).
        """
        if self.mode_of == "variance":
            variance = rate / (self.shape_q + 1.0)
            return PriorStats(self.inv_scale2 / variance, 1.0 / variance)
        lam = (self.shape_q - 1.0) / rate
        return PriorStats(self._precision(lam), lam)

    def log_density(self, stats) -> float:
        """``log N(theta_s | 0, c^2 / lambda) + log p(lambda)`` in ``mode_of``'s
        parameterisation, up to a constant (``log p(lambda)`` alone under a ``mixing`` block,
        which owns the segment's factor).
        """
        lam = stats[self.name].value
        # log Gamma(lambda | A, B), or log IG(1/lambda | A, B) = (A + 1) log lambda - B lambda
        exponent = self.shape + 1.0 if self.mode_of == "variance" else self.shape - 1.0
        hyperprior = float(np.sum(exponent * np.log(lam) - self.rate * lam))
        if self.mixing is not None:
            return hyperprior
        coefficients = stats[self.coefficients]
        square = coefficients.square[self.segment]
        return (
            hyperprior
            + 0.5 * self.multiplicity * float(np.sum(np.log(lam)))
            + 0.5 * square.shape[0] * coefficients.log_scale
            - 0.5 * float(np.sum(self._precision(lam) * square))
        )

    def point_stats(self, point, stats) -> PriorStats:
        """Statistics at the reported variable's value: ``lambda``, ``1 / lambda`` or
        ``lambda^-1/2``.
        """
        return self.at(self._from_reported(point[self.var_names[0]]))

    def _from_reported(self, reported):
        """``lambda`` from the reported ``lambda``, ``1 / lambda`` or ``lambda^-1/2``."""
        if self.report == "precision":
            return reported
        return 1.0 / reported if self.report == "variance" else reported**-2.0

    def log_jacobian(self, stats) -> float:
        """``log |dm / dr|`` from the reported ``r`` to ``mode_of``'s ``m``, through
        ``lambda``: ``log |dm / dlambda| - log |dr / dlambda|``.
        """
        log_lam = np.log(stats[self.name].value)
        return float(
            np.sum(_log_derivative(self.mode_of, log_lam) - _log_derivative(self.report, log_lam))
        )

    def pymc_log_jacobian(self, values) -> float:
        """PyMC declares the square of a reported sd: ``-log 2r`` (``dr^2 / dr = 2r``)."""
        if self.report != "sd":
            return 0.0
        return -float(np.sum(np.log(values[self.var_names[0]])))

    def penalty(self, stats) -> tuple[np.ndarray, np.ndarray]:
        """``(lambda / c^2, 0)`` at the current ``lambda``."""
        precision = stats[self.name].precision
        return precision, np.zeros_like(precision)

    # -- PyMC -------------------------------------------------------------------------------
    def pymc_values(self, point) -> dict[str, np.ndarray]:
        """The reported variable, or the square PyMC declares of a reported sd."""
        reported = self.var_names[0]
        if self.report == "sd":
            return {f"{reported}_squared": np.asarray(point[reported]) ** 2}
        return {reported: point[reported]}

    def declare(self, variables: dict):
        """Declare ``lambda`` as the reported variable (once); returns ``1 / lambda``."""
        import pymc as pm

        reported = self.var_names[0]
        if reported in variables:
            return variables[reported]
        ard_dims = self.dims.get(reported)
        if self.report == "precision":
            lam = pm.Gamma(reported, alpha=self.shape, beta=self.rate, dims=ard_dims)
            variance = 1.0 / lam
        elif self.report == "variance":
            variance = pm.InverseGamma(reported, alpha=self.shape, beta=self.rate, dims=ard_dims)
        else:
            variance = pm.InverseGamma(
                f"{reported}_squared", alpha=self.shape, beta=self.rate, dims=ard_dims
            )
            pm.Deterministic(reported, pm.math.sqrt(variance), dims=ard_dims)
        variables[reported] = variance
        return variance

    def declare_segment(self, name, dims, variables, noncentered=False, scale=1.0):
        """Declare ``lambda`` (:meth:`declare`) and the segment ``name``; ``noncentered``
        writes ``name = sd * z`` with ``z ~ N(0, I)``.
        """
        import pymc as pm

        variance = self.declare(variables)
        sd = scale * pm.math.sqrt(variance / self.inv_scale2)
        if noncentered:
            z = pm.Normal(f"{name}_standardized", 0.0, 1.0, dims=dims)
            return pm.Deterministic(name, sd * z, dims=dims)
        return pm.Normal(name, 0.0, sigma=sd, dims=dims)


class MixedGammaPrecision(GammaPrecision):
    """:class:`GammaPrecision` under a ``mixing`` block (Luts-Ormerod section 3.2's
    ``v_k | b_k, sigma2_u ~ N(0, sigma2_u / b_k)``): Gibbs and VB only, as the papers fit it;
    EM is not offered (no M-step).
    """

    mode = None
