"""The hinge pseudo-likelihood and its data augmentation (Polson-Scott 2011, Theorem 1).

``exp(-2 max(0, 1 - y_i f_i)) = int_0^inf (2 pi a_i)^-1/2 exp(-(1 + a_i - y_i f_i)^2 /
(2 a_i)) da_i``, so with ``a`` the likelihood is Gaussian in ``f`` and each ``a_i`` has the
complete conditional ``GIG(1/2, 1, chi_i)`` with ``chi_i = E[(1 - y_i f_i)^2]``:

* Gibbs: ``1/a_i ~ InverseGaussian(chi_i^-1/2, 1)`` with ``chi_i = (1 - y_i f_i)^2``
  (Polson-Scott Corollary 2; Luts-Ormerod App. A), drawn by ``Generator.wald``;
* VB: ``q(a_i) = GIG(1/2, 1, chi_i)`` with ``chi_i = (1 - y_i E f_i)^2 + Var f_i`` and
  ``E_q[1/a_i] = chi_i^-1/2`` (Luts-Ormerod Algorithm 1 line 3 / Algorithm 2 line 3);
* EM: the E-step weight ``1 / |1 - y_i f_i|`` (Polson-Scott eq. 14), floored like VB's; or
  an exact M-step: :mod:`bayesvm.blocks.hinge_mode`, where support vectors, whose weight is
  infinite, become equality constraints, or for a prior with an L1 part (the lasso) the linear
  program of :mod:`bayesvm.blocks.hinge_lp`.

The coefficient block reads ``weights = 1/a`` and ``response = y (1 + 1/a)``.

Support-vector guard: ``E_q[1/a_i] = chi_i^-1/2`` explodes as ``chi_i -> 0``. VB uses
``chi_i* = max(chi_i, CHI_FLOOR)``, which is the optimal ``q(a_i)`` within the GIG family with
``chi >= CHI_FLOOR``; the bound uses the matching exact term
``y_i E f_i - 1 - (sqrt(chi*) + chi / sqrt(chi*)) / 2`` (with ``log K_1/2(x) = log(pi / (2x))
/ 2 - x``, the data part of Luts-Ormerod section 2.3's bound), so coordinate ascent stays
monotone. Gibbs floors ``|1 - y_i f_i|`` at :data:`RESIDUAL_FLOOR` (probability ~0).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import ndtr

from bayesvm.blocks.base import Block
from bayesvm.blocks.hinge_mode import make_hinge_mode_step

__all__ = [
    "HingeAugmentation",
    "LikelihoodStats",
    "GaussianExpectation",
    "CHI_FLOOR",
    "RESIDUAL_FLOOR",
    "MARGIN_TOL",
]

# Smallest chi used in E_q[1/a] = chi^-1/2, so that weights stay below 1e5.
CHI_FLOOR = 1e-10
# |1 - y f| below this is floored when it sets the inverse-Gaussian mean (probability ~0).
RESIDUAL_FLOOR = 1e-12
# |1 - y f| below this counts as on the margin in a mode's statistics.
MARGIN_TOL = 1e-8


class LikelihoodStats(NamedTuple):
    """What a likelihood block shows the coefficient block: ``P = C^T diag(weights) C + ...``
    and the mean ``P^-1 C^T response``.
    """

    weights: np.ndarray
    response: np.ndarray


class GaussianExpectation(NamedTuple):
    """A bound on the log pseudo-likelihood over ``f_i ~ N(m_i, s_i^2)``, summed, and its
    derivatives in each ``m_i``: ``slope`` (the first) and ``curvature`` (minus the second).
    For the Gaussian family's ``E[-2 max(0, 1 - y_i f_i)]``
    (:meth:`HingeAugmentation.gaussian_expectation`) the curvature is also ``-2`` times the
    derivative in ``s_i^2``.
    """

    value: float
    slope: np.ndarray
    curvature: np.ndarray


SQRT_2PI = np.sqrt(2.0 * np.pi)


class HingeAugmentation(Block):
    """The augmentation ``a_i`` of the hinge pseudo-likelihood of labels ``y`` (-1/+1).

    ``scale``: how many times each row counts (stochastic VI's minibatch of ``s`` rows out of
    ``n`` counts ``n / s`` times, Hoffman et al. 2013 eq. 23; Wenzel et al. eq. 9-10): it
    multiplies the weights, the responses and the bound term.
    """

    name = "hinge"
    latent = True

    def __init__(self, y: np.ndarray, coefficients: str = "theta", scale: float = 1.0):
        self.y = y
        self.coefficients = coefficients
        self.scale = scale

    def conditional(self, stats) -> np.ndarray:
        """``chi_i = E[(1 - y_i f_i)^2]`` of ``GIG(1/2, 1, chi_i)``."""
        coefficients = stats[self.coefficients]
        return (1.0 - self.y * coefficients.f_mean) ** 2 + coefficients.f_var

    def subsample_stats(self, chi: np.ndarray, stats, fraction: float) -> LikelihoodStats:
        """Every row's ``E_q[1/a_i]`` from ``q(a_i)`` given the transferred ``q(f_i)``: the
        update :meth:`conditional` makes, for rows a subsample did not see.
        """
        return self.expected_stats(self.conditional(stats))

    def _stats(self, inv_a: np.ndarray) -> LikelihoodStats:
        weights = inv_a if self.scale == 1.0 else self.scale * inv_a
        return LikelihoodStats(weights, self.y * (self.scale + weights))

    def sample(self, chi: np.ndarray, rng) -> LikelihoodStats:
        """``1/a_i ~ InverseGaussian(|1 - y_i f_i|^-1, 1)``; a ``FloatingPointError`` where
        ``f`` has run off to where ``(1 - y_i f_i)^2`` overflows (a fit's numerical breakdown).
        """
        if not np.all(np.isfinite(chi)):
            raise FloatingPointError(
                "the linear predictor ran off: (1 - y f)^2 is not finite at "
                f"{int(np.sum(~np.isfinite(chi)))} of {chi.shape[0]} rows"
            )
        return self._stats(rng.wald(1.0 / np.maximum(np.sqrt(chi), RESIDUAL_FLOOR), 1.0))

    def initial_stats(self, stats, start=None) -> LikelihoodStats:
        """``E_q[1/a] = 1`` (Luts-Ormerod Algorithm 1/2 initialisation)."""
        return self._stats(np.ones(self.y.shape[0]))

    def expected_stats(self, chi: np.ndarray) -> LikelihoodStats:
        """``E_q[1/a_i] = max(chi_i, CHI_FLOOR)^-1/2`` (module docstring)."""
        return self._stats(1.0 / np.sqrt(np.maximum(chi, CHI_FLOOR)))

    def bound_term(self, chi: np.ndarray, stats) -> float:
        """``E log p(y, a | f) - E log q(a)``, summed over observations."""
        root = np.sqrt(np.maximum(chi, CHI_FLOOR))
        f_mean = stats[self.coefficients].f_mean
        return self.scale * float((self.y * f_mean - 1.0 - 0.5 * (root + chi / root)).sum())

    def variational(self, chi: np.ndarray) -> dict:
        """``chi`` of every ``q(a_i)``."""
        return {"chi": (["obs_id"], chi)}

    def log_density(self, stats) -> float:
        """``-2 sum_i max(0, 1 - y_i f_i)``: the hinge with ``a`` integrated out."""
        margin = self.y * stats[self.coefficients].f_mean
        np.subtract(1.0, margin, out=margin)  # in place: a weighed draw of q is one pass
        return -2.0 * float(np.maximum(margin, 0.0, out=margin).sum())

    def gaussian_expectation(self, f_mean: np.ndarray, f_var: np.ndarray) -> GaussianExpectation:
        """The pseudo-likelihood's expectation over a Gaussian ``f``, ``a`` integrated out.

        With ``r_i = 1 - y_i f_i ~ N(mu_i, s_i^2)`` and ``z_i = mu_i / s_i``, ``E max(0, r_i) =
        mu_i Phi(z_i) + s_i phi(z_i)``, whose derivative in ``mu_i`` is ``Phi(z_i)`` and second
        derivative ``phi(z_i) / s_i`` (Opper & Archambeau 2009, eq. 8-9: the Gaussian
        variational approximation's gradient and curvature). ``s_i`` is floored at
        ``sqrt(CHI_FLOOR)``, as VB floors ``chi``.
        """
        sd = np.sqrt(np.maximum(f_var, CHI_FLOOR))
        margin = 1.0 - self.y * f_mean
        z = margin / sd
        density = np.exp(-0.5 * z * z) / SQRT_2PI
        below = ndtr(z)
        value = -2.0 * self.scale * float(np.sum(margin * below + sd * density))
        return GaussianExpectation(
            value, 2.0 * self.scale * self.y * below, 2.0 * self.scale * density / sd
        )

    def mean_field_expectation(self, f_mean: np.ndarray, f_var: np.ndarray) -> GaussianExpectation:
        """Mean-field's bound on the pseudo-likelihood with ``q(a)`` at its optimum given
        ``q(f)``, and its derivatives in each ``E f_i`` with ``Var f_i`` held.

        With ``r_i = 1 - y_i E f_i`` and ``chi_i = r_i^2 + Var f_i`` (:meth:`conditional`),
        :meth:`bound_term` at the optimal ``q(a)`` is ``sum_i -r_i - sqrt(chi_i)`` (``chi_i``
        floored as there): smooth and concave in ``E f``, with slope ``y_i (1 + r_i /
        sqrt(chi_i))`` and curvature ``Var f_i / chi_i^3/2``, where CAVI's update of the mean
        curves it by ``chi_i^-1/2`` (the weight ``E_q[1/a_i]``): far more at rows far from the
        margin, which is why CAVI's means creep (:mod:`bayesvm.vb.mean_newton`).
        """
        margin = 1.0 - self.y * f_mean
        chi = margin**2 + f_var
        kept = np.maximum(chi, CHI_FLOOR)
        root = np.sqrt(kept)
        value = -self.scale * float(np.sum(margin + 0.5 * (root + chi / root)))
        slope = self.scale * self.y * (1.0 + margin / root)
        floored = chi < CHI_FLOOR  # there the term is quadratic in the margin
        curvature = self.scale * np.where(floored, 1.0, f_var / kept) / root
        return GaussianExpectation(value, slope, curvature)

    def log_likelihood_along(self, offset: np.ndarray, direction: np.ndarray):
        """The pseudo-likelihood with ``a`` integrated out along the line ``f = offset + t
        direction``: ``t -> -2 sum_i max(0, 1 - y_i (offset_i + t direction_i))``, ``O(n)`` per
        evaluation (a move that redraws ``t`` given ``y`` alone, e.g.
        :class:`~bayesvm.blocks.interweaving.ScaleInterweaving`).
        """
        margin = 1.0 - self.y * offset
        slope = self.y * direction

        def log_likelihood(t: float) -> float:
            return -2.0 * float(np.maximum(margin - t * slope, 0.0).sum())

        return log_likelihood

    def accelerated_m_step(self, coefficients):
        """The exact M-step on ``coefficients``' dense design, given the priors'
        :meth:`~bayesvm.blocks.PenaltyBlock.penalty`: where the penalties have an L1 part (a lasso),
        the mode by the linear program of :mod:`bayesvm.blocks.hinge_lp`, which does not
        depend on the current value; otherwise the step of :mod:`bayesvm.blocks.hinge_mode`
        from it (support vectors as the equality constraints of Polson-Scott eq. (15), an
        active-set rule and a Newton step).
        """
        rows = self.y[:, None] * coefficients.design.dense()
        newton = make_hinge_mode_step(rows)
        linear_program = []  # built on the first lasso step: a ridge's EM never needs it

        def m_step(stats):
            quadratic, l1 = coefficients.penalties(stats)
            if np.any(l1 > 0.0):
                if not linear_program:
                    # imported here: scipy.optimize would add a quarter of a second to
                    # ``import bayesvm``
                    from bayesvm.blocks.hinge_lp import make_hinge_lp_mode

                    linear_program.append(make_hinge_lp_mode(rows))
                return coefficients.at(linear_program[0](quadratic, l1)), 0
            theta, released = newton(stats[coefficients.name].mean, quadratic)
            return coefficients.at(theta), released

        return m_step

    def mode_stats(self, stats) -> dict[str, int]:
        """``n_support_vectors``, on the margin or violating it (LIBSVM's count: generically
        the points with a positive dual coefficient), and ``n_margin``, on it (``|1 - y_i f_i|``
        at most :data:`MARGIN_TOL`).
        """
        residual = 1.0 - self.y * stats[self.coefficients].f_mean
        return {
            "n_support_vectors": int(np.sum(residual >= -MARGIN_TOL)),
            "n_margin": int(np.sum(np.abs(residual) <= MARGIN_TOL)),
        }

    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """The hinge pseudo-likelihood as the potential ``hinge``."""
        import pymc as pm
        import pytensor.tensor as pt

        f = variables["f"]
        pm.Potential("hinge", -2.0 * pt.sum(pt.maximum(0.0, 1.0 - self.y * f)))
