"""Priors on the penalised coefficients ``u`` of a linear-predictor SVM.

Every model in :mod:`bayesvm.models` writes its linear predictor as ``f = X beta + Z u``
(Luts-Ormerod eq. 5): ``beta`` has a vague Gaussian prior and ``u`` carries the penalty.
Each penalty is a specification that builds its blocks (:mod:`bayesvm.blocks`); the
backends see only the blocks:

* :class:`FixedGaussian` -- ``u_j ~ N(0, v_j)``: ridge with a fixed penalty
  (Luts-Ormerod section 2.3; Polson-Scott eq. 9-10 with ``omega = 1``).
* :class:`LearnedGaussian` -- ``u_j | s2 ~ N(0, s2 * c_j^2)``, ``s2 ~ IG(A, B)``: the
  penalty inferred (Luts-Ormerod section 3.1; Polson-Scott ridge with ``nu^2 = s2``).
* :class:`Laplace` -- ``u_j | nu ~ Laplace(0, nu * c_j)``, ``nu`` fixed or
  ``1/nu ~ Gamma(a, b)``: the Polson-Scott lasso (eq. 5 with alpha = 1, Corollary 1).
* :class:`LaplaceSlab` -- ``v_k ~ Laplace(0, sigma_u)`` as a normal scale mixture with
  ``sigma2_u ~ IG(A, B)``: the slab of Luts-Ormerod's Laplace-zero prior (section 3.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from bayesvm.blocks import FixedPrecision, GammaPrecision
from bayesvm.blocks.gaussian_priors import MixedGammaPrecision
from bayesvm.blocks.laplace import LaplaceMixing, LaplaceScale

__all__ = ["FixedGaussian", "LearnedGaussian", "Laplace", "LaplaceSlab", "Penalty"]


@dataclass(frozen=True, eq=False)
class FixedGaussian:
    """Gaussian prior with fixed variances, ``u_j ~ N(0, variance_j)``."""

    variance: np.ndarray

    def blocks(self, coefficients: str, segment: slice, dim: str) -> tuple:
        """``(the segment's prior, blocks to visit)``: one constant-precision block."""
        prior = FixedPrecision("u_prior", 1.0 / np.asarray(self.variance), coefficients, segment)
        return prior, [prior]


@dataclass(frozen=True, eq=False)
class LearnedGaussian:
    """Gaussian prior whose common variance is learned.

    ``u_j | s2 ~ N(0, s2 * scale_j^2)`` with ``s2 ~ IG(shape, rate)``. The variance is reported
    as ``sigma2_u`` (Luts-Ormerod's mixed model) or as ``nu = sqrt(s2)`` (Polson-Scott's ridge
    scale), chosen by ``report``. With ``interweave`` (the default) Gibbs follows each draw
    of the coefficients by a draw of ``sqrt(s2)`` given ``u / sqrt(s2)``, ``beta`` and ``y``
    (:class:`~bayesvm.blocks.interweaving.ScaleInterweaving`), which mixes ``s2`` and the
    scale of ``u`` several times faster; the other backends do not read it.
    """

    scale: np.ndarray
    shape: float
    rate: float
    report: Literal["sigma2_u", "nu"] = "sigma2_u"
    interweave: bool = True

    def blocks(self, coefficients: str, segment: slice, dim: str) -> tuple:
        """``(the segment's prior, blocks to visit)``: the Gamma precision ``1 / s2``."""
        prior = self.precision_block("u_prior", coefficients, segment)
        return prior, [prior]

    def precision_block(
        self, name: str, coefficients: str, segment: slice, mixing: str | None = None
    ) -> GammaPrecision:
        """The Gamma precision ``1 / s2`` (``mixing``: of a scale mixture, see
        :class:`~bayesvm.blocks.GammaPrecision`). VB starts from ``E[1/s2] = 1``
        (Luts-Ormerod Algorithms 2-3); ECME takes the mode of ``s2`` (Polson-Scott 3.3).
        """
        block = GammaPrecision if mixing is None else MixedGammaPrecision
        return block(
            name,
            shape=self.shape,
            rate=self.rate,
            coefficients=coefficients,
            segment=segment,
            scale=self.scale,
            report="variance" if self.report == "sigma2_u" else "sd",
            report_name=self.report,
            mode_of="variance",
            starts=(1.0,),
            q_names=("variance_shape", "variance_rate", None),
            mixing=mixing,
            interweave=self.interweave and mixing is None,
        )


@dataclass(frozen=True, eq=False)
class Laplace:
    """Polson-Scott lasso prior, ``u_j | nu ~ Laplace(0, nu * scale_j)`` (eq. 5, alpha = 1).

    With ``nu=None`` the scale is learned under ``1/nu ~ Gamma(shape, rate)``, the
    conjugate prior of section 3.3 (``p(nu^-alpha)`` inverse gamma in ``nu``).
    """

    scale: np.ndarray
    nu: float | None
    shape: float
    rate: float

    def blocks(self, coefficients: str, segment: slice, dim: str) -> tuple:
        """``(the segment's prior, blocks to visit)``: the mixing variances ``omega``, after
        the learned scale ``nu`` when there is one (Polson-Scott's MCMC-SVM order: ``nu``
        with ``omega`` integrated out, then ``omega``).
        """
        scale_block = None
        if self.nu is None:
            scale_block = LaplaceScale(self.shape, self.rate, coefficients, segment, self.scale)
        mixing = LaplaceMixing(
            coefficients, segment, self.scale, dim, nu=self.nu, scale_block=scale_block
        )
        return mixing, [block for block in (scale_block, mixing) if block is not None]


@dataclass(frozen=True, eq=False)
class LaplaceSlab:
    """Luts-Ormerod's Laplace slab with a learned scale: ``v_k | b_k, sigma2_u ~ N(0,
    sigma2_u / b_k)``, ``b_k ~ IG(1, 1/2)``, ``sigma2_u ~ IG(shape, rate)``.
    """

    shape: float
    rate: float

    def blocks(self, coefficients: str, segment: slice, dim: str) -> tuple:
        """``(the segment's prior, blocks to visit)``: ``sigma2_u`` (as the Gamma precision
        ``1 / sigma2_u``, VB's start ``E[1/sigma2_u] = 1``), then the mixing ``b`` that is the
        segment's prior. Luts-Ormerod update ``b`` before ``sigma2_u`` (Algorithm 3 lines 5 and
        11); here ``b`` follows, so that the precision ``b_k / sigma2_u`` the coefficients read
        is current in both factors.
        """
        size = segment.stop - segment.start
        learned = LearnedGaussian(scale=np.ones(size), shape=self.shape, rate=self.rate)
        variance = learned.precision_block("sigma2_u_prior", coefficients, segment, "v_prior")
        mixing = LaplaceMixing(
            coefficients, segment, np.ones(size), dim, variance_block=variance, report_name="b"
        )
        mixing.name = "v_prior"
        return mixing, [variance, mixing]


Penalty = FixedGaussian | LearnedGaussian | Laplace | LaplaceSlab
