"""The Gaussian coefficient block ``theta``, whose design does the linear algebra.

Given the likelihood block's weights ``w_i`` and responses ``r_i`` and the prior blocks'
precisions, the complete conditional of ``theta`` is Gaussian with

    ``P = C^T diag(w) C + diag(prior precision)``,  mean ``P^-1 C^T r``:

* hinge (Polson-Scott eq. 9-10, Luts-Ormerod App. A / Algorithm 2 lines 2-3):
  ``w = 1/a`` and ``r = y (1 + 1/a)``, values for Gibbs, ``E_q[1/a]`` for VB;
* Jaakkola-Jordan (Drugowitsch eq. 49-50 / 72-73, VB): ``w = 2 lambda(xi)``, ``r = y / 2``.

The design (:mod:`bayesvm.blocks.design`: one dense Cholesky, or the Schur complement of a
random intercept) factors ``P`` and gives draws, ``dg(P^-1)`` and ``dg(C P^-1 C^T)``; no driver
sees the structure. The block's statistics are the mean (or value) of ``theta``, its second
moments, and the mean and variance of the linear predictor ``f = C theta``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

from bayesvm.blocks.base import Block
from bayesvm.blocks.interweaving import ScaleInterweaving
from bayesvm.blocks.marginal_slice import CoefficientSlice

__all__ = [
    "GaussianCoefficients",
    "CoefficientStats",
    "Segment",
    "LOG_2PI",
    "whitened_log_density",
]

LOG_2PI = float(np.log(2.0 * np.pi))


def whitened_log_density(whitened: np.ndarray, log_det_precision) -> np.ndarray:
    """``log N(x | m, P^-1)`` of draws given as ``z = L^T (x - m)`` (``P = L L^T``; rows of the
    last axis): ``(log |P| - K log 2 pi - ||z||^2) / 2``. ``log_det_precision`` is a float, or
    one per draw.
    """
    size = whitened.shape[-1]
    return 0.5 * (log_det_precision - size * LOG_2PI - np.sum(whitened**2, axis=-1))


class CoefficientStats(NamedTuple):
    """What a coefficient block shows the others."""

    mean: np.ndarray  # E[theta] (the value for Gibbs and EM)
    square: np.ndarray  # E[t theta_j^2], t the block's own scale (1 here)
    f_mean: np.ndarray  # E[f], f = C theta
    f_var: np.ndarray | float  # Var[f_i] (0 at a value)
    log_scale: float = 0.0  # E log t


class Segment(NamedTuple):
    """A named part of ``theta`` and the prior block that governs it."""

    name: str  # posterior variable, e.g. "beta", "u", "w"
    dim: str  # its dimension
    slice: slice
    prior: Block


class GaussianConditional(NamedTuple):
    """``N(mean, P^-1)`` with ``P`` held factored by the design."""

    gaussian: object  # DenseGaussian or GroupedGaussian
    mean: np.ndarray


class GaussianCoefficients(Block):
    """Coefficients ``theta = (segments...)`` with Gaussian priors and a linear predictor.

    Parameters
    ----------
    design : DenseDesign or GroupedDesign
        The training design ``C``.
    segments : list of Segment
        The parts of ``theta`` in order, each with its prior block.
    likelihood : str
        Name of the block whose ``weights`` and ``response`` statistics enter ``P`` and the
        mean.
    coefficient_names : list of str
        Labels of the entries of ``theta`` (the covariance's coordinates).
    """

    name = "theta"

    def __init__(self, design, segments, likelihood: str, coefficient_names: list):
        self.design = design
        self.segments = list(segments)
        self.likelihood = likelihood
        self.var_names = tuple(segment.name for segment in self.segments)
        self.dims = {segment.name: [segment.dim] for segment in self.segments}
        self.coefficient_names = list(coefficient_names)
        self.size = design.n_coefficients

    # -- conditional ------------------------------------------------------------------------
    #: :meth:`conditional` takes a ``tilt`` (linear response VB, :mod:`bayesvm.vb.lrvb`).
    takes_tilt = True

    def conditional(self, stats, tilt: np.ndarray | None = None) -> GaussianConditional:
        """``P = C^T diag(w) C + diag(prior precision)`` and the mean ``P^-1 C^T r``.

        ``tilt``: a vector ``t`` by which the log joint is tilted, ``+ t^T theta``, for linear
        response VB (Giordano, Broderick & Jordan 2018): it adds ``t`` to the linear natural
        parameter, so the mean is ``P^-1 (C^T r + t)``.
        """
        likelihood = stats[self.likelihood]
        gaussian = self.design.gaussian(likelihood.weights, self.prior_precision(stats))
        linear = self.design.transpose_times(likelihood.response)
        if tilt is not None:
            linear = linear + tilt
        return GaussianConditional(gaussian, gaussian.solve(linear))

    def prior_precision(self, stats) -> np.ndarray:
        """Each coefficient's prior precision (its segment's prior block's)."""
        return np.concatenate([stats[s.prior.name].precision for s in self.segments])

    def at(self, theta: np.ndarray) -> CoefficientStats:
        """Statistics at the value ``theta``."""
        return CoefficientStats(theta, theta**2, self.design.predictor(theta), 0.0)

    # -- Gibbs ------------------------------------------------------------------------------
    def initial_value(self, stats, rng) -> CoefficientStats:
        """A dispersed start, ``theta ~ N(0, I)`` (Polson-Scott section 5)."""
        return self.at(rng.standard_normal(self.size))

    def sample(self, params: GaussianConditional, rng) -> CoefficientStats:
        """``theta ~ N(mean, P^-1)`` through the factor of ``P``."""
        return self.at(params.gaussian.draw(params.mean, rng))

    def record(self, stats: CoefficientStats) -> dict[str, np.ndarray]:
        """Each segment's value."""
        return {s.name: stats.mean[s.slice] for s in self.segments}

    def gibbs_moves(self, blocks) -> list:
        """The interweaving of each segment whose prior asks for it (``interweave``):
        :class:`~bayesvm.blocks.interweaving.ScaleInterweaving`; and, where a prior mixes over
        latent variances (a lasso's ``omega``, ``latent``), slice moves of the coefficients
        with those and the augmentation integrated out
        (:class:`~bayesvm.blocks.marginal_slice.CoefficientSlice`). Both integrate the
        likelihood block's augmentation out (its ``log_likelihood_along``), so that block
        must follow this one.
        """
        likelihood = blocks[self.likelihood]
        segments = self.segments
        moves = [ScaleInterweaving(self, s, likelihood) for s in segments if s.prior.interweave]
        mixing = [s.prior for s in segments if s.prior.latent]
        if mixing and hasattr(likelihood, "log_likelihood_along"):
            moves.append(CoefficientSlice(self, likelihood, mixing))
        return moves

    def segment_predictor(self, theta: np.ndarray, segment: slice) -> np.ndarray:
        """The part of ``f = C theta`` from the coefficients ``theta[segment]``."""
        part = np.zeros_like(theta)
        part[segment] = theta[segment]
        return self.design.predictor(part)

    # -- VB ---------------------------------------------------------------------------------
    def expected_stats(self, params: GaussianConditional) -> CoefficientStats:
        """Moments under ``q = N(mean, P^-1)``: ``dg(P^-1)`` and ``dg(C P^-1 C^T)`` from the
        factor (``O(n K^2)``, no inverse of ``P``).
        """
        gaussian, mean = params
        variance = gaussian.coefficient_variance()
        return CoefficientStats(
            mean,
            mean**2 + variance,
            self.design.predictor(mean),
            gaussian.predictor_variance(),
        )

    def subsample_stats(self, params: GaussianConditional, stats, fraction: float):
        """Moments on this block's design of ``q`` fitted to a ``fraction`` of its rows, its
        precision divided by ``fraction`` (the data's part grows with the rows): the
        subsample's mean with about the spread a fit to all rows has.
        """
        gaussian, mean = params
        precision = gaussian.precision() / fraction
        return self.expected_stats(
            GaussianConditional(type(gaussian).from_precision(self.design, precision), mean)
        )

    def bound_term(self, params: GaussianConditional, stats) -> float:
        """The entropy of ``q``, ``K (1 + log 2 pi) / 2 - log |P| / 2``."""
        return 0.5 * self.size * (1.0 + LOG_2PI) - 0.5 * params.gaussian.log_det_precision()

    def draw_q(self, params: GaussianConditional, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of every segment from ``q``."""
        theta = params.gaussian.draw(params.mean, rng, size=size)
        return {s.name: theta[:, s.slice] for s in self.segments}

    def q_log_density(self, params: GaussianConditional, draws) -> np.ndarray:
        """``log N(theta | mean, P^-1)`` at the segments' draws."""
        gaussian, mean = params
        theta = np.concatenate([draws[s.name] for s in self.segments], axis=-1)
        return whitened_log_density(gaussian.whiten(theta - mean), gaussian.log_det_precision())

    def q_moments(self, params: GaussianConditional) -> dict:
        """Each segment's mean and sd under the Gaussian ``q``."""
        gaussian, mean = params
        sd = np.sqrt(gaussian.coefficient_variance())
        return {s.name: (mean[s.slice], sd[s.slice]) for s in self.segments}

    def variational(self, params: GaussianConditional) -> dict:
        """Each segment's mean and variance; the covariance where the design is dense
        (``V``, ``invV`` and ``logdetV`` of a single segment as in Drugowitsch's code, else
        ``covariance`` over all coefficients).
        """
        gaussian, mean = params
        variance = gaussian.coefficient_variance()
        group = {}
        for s in self.segments:
            group[f"{s.name}_mean"] = ([s.dim], mean[s.slice])
            group[f"{s.name}_variance"] = ([s.dim], variance[s.slice])
        if not hasattr(gaussian, "covariance"):  # structured q: the covariance is not formed
            return group
        if len(self.segments) == 1:
            dim = self.segments[0].dim
            group["V"] = ([dim, f"{dim}_"], gaussian.covariance())
            group["invV"] = ([dim, f"{dim}_"], gaussian.precision())
            group["logdetV"] = ((), -gaussian.log_det_precision())
        else:
            group["covariance"] = (["coefficient", "coefficient_"], gaussian.covariance())
        return group

    def variational_coords(self) -> dict:
        """Coordinates of the covariance's second dimension (or of both)."""
        if len(self.segments) == 1:
            return {f"{self.segments[0].dim}_": self.coefficient_names}
        return {"coefficient": self.coefficient_names, "coefficient_": self.coefficient_names}

    # -- EM ---------------------------------------------------------------------------------
    def mode(self, params: GaussianConditional) -> CoefficientStats:
        """The conditional's mode, its mean."""
        return self.at(params.mean)

    def penalties(self, stats) -> tuple[np.ndarray, np.ndarray]:
        """``(P, L)`` of every coefficient: the segments' priors' :meth:`~bayesvm.blocks.
        PenaltyBlock.penalty` at the current values.
        """
        parts = [s.prior.penalty(stats) for s in self.segments]
        return (
            np.concatenate([quadratic for quadratic, _ in parts]),
            np.concatenate([l1 for _, l1 in parts]),
        )

    def mode_stats(self, stats) -> dict[str, int]:
        """``n_zero``: coefficients exactly 0 (a lasso's E-step weight ``1/omega_j`` is then
        infinite and holds them there, Polson-Scott section 3.2).
        """
        return {"n_zero": int(np.sum(stats[self.name].mean == 0.0))}

    # -- the model's density -----------------------------------------------------------------
    def point_stats(self, point, stats) -> CoefficientStats:
        """Statistics at the segments' values in ``point`` (the linear predictor from
        :meth:`batched`'s products where it holds this value).
        """
        theta = self._theta(point)
        predictor = self._predictors.get(theta.tobytes())
        if predictor is None:
            return self.at(theta)
        return CoefficientStats(theta, theta**2, predictor, 0.0)

    def _theta(self, point) -> np.ndarray:
        """The coefficients at the canonical values ``point``: its segments', joined."""
        return np.concatenate([np.atleast_1d(point[s.name]) for s in self.segments])

    _predictors: dict = {}

    @contextmanager
    def batched(self, points) -> Iterator[None]:
        """The linear predictors of all ``points`` in one matrix product: ``C theta`` for one
        ``theta`` streams all of ``C`` from memory for ``2 n K`` flops (at n = 1e5, K = 100,
        11 ms each, most of a VB fit's time when it weighs its draws for k-hat); for a block of
        draws it is a matrix product at the BLAS's full rate.
        """
        thetas = np.stack([self._theta(point) for point in points])
        products = self.design.predictor(thetas)
        self._predictors = {theta.tobytes(): f for theta, f in zip(thetas, products, strict=True)}
        try:
            yield
        finally:
            del self._predictors

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """Declare each segment with its prior; ``f`` is the linear predictor."""
        for s in self.segments:
            variables[s.name] = s.prior.declare_segment(s.name, s.dim, variables, noncentered)
        parts = [(s.slice, variables[s.name]) for s in self.segments]
        variables["f"] = self.design.symbolic_predictor(parts)
