"""Interweaving of a learned Gaussian scale (Yu & Meng 2011, JCGS 20(3), section 2).

A segment ``u`` of the coefficients with ``u_j | lambda ~ N(0, c_j^2 / lambda)`` can be
written two ways. The *sufficient* (centred) parameterisation is ``u`` itself: the Gibbs
sweep draws ``lambda | u`` (:class:`~bayesvm.blocks.GammaPrecision`), which moves little
when ``u`` pins ``lambda`` down. The *ancillary* (non-centred) one is ``z = u / (sigma c)``
with ``sigma = lambda^-1/2``, ``z ~ N(0, I)`` whatever ``sigma``: the data then tie ``sigma``
to ``z``, and draws of ``sigma | z`` move most where those of ``lambda | u`` move least. The
ancillarity-sufficiency interweaving strategy (ASIS, Yu & Meng's eq. 2.2-2.4, Theorem 1) makes
both draws in one sweep: ``lambda | u``, and, with ``z`` fixed, ``sigma | z, beta, y`` followed by
``u = sigma c z``. Here the ancillary draw comes right after the coefficients' draw, the
sufficient one (the prior block's) at the end of the sweep.

Here the ancillary draw also integrates the likelihood's augmentation out (the hinge's
``a``, Polson-Scott Theorem 1): with ``f = h + sigma g``, ``h = X beta`` and ``g = Z (c z)``,

    ``p(sigma | z, beta, y)  propto  p(sigma) exp(log L(h + sigma g))``,

``log L`` the pseudo-likelihood with ``a`` integrated out (``-2 sum_i max(0, 1 - y_i f_i)``
for the hinge: :meth:`~bayesvm.blocks.HingeAugmentation.log_likelihood_along`) and ``p(sigma)``
the ``IG(A, B)`` prior of ``sigma^2``: in ``s = log sigma`` the log density is ``-2 A s - B
exp(-2 s) + log L(h + exp(s) g)``. Given ``a`` instead, the likelihood would be Gaussian in
``sigma`` with a precision ``sum_i g_i^2 / a_i`` so large, at the support vectors' small ``a_i``,
that ``sigma`` could hardly move: on Luts-Ormerod's 2000 x 50 problem the smallest bulk ESS of
``u`` rose from 108 to 119 of 5000 draws given ``a``, and to 659 with ``a`` integrated out. The
draw is one slice-sampling update in ``s`` (:func:`~bayesvm.blocks.slice.slice_step`), ``O(n)``
per evaluation of the density, a handful of evaluations per sweep.

Integrating ``a`` out makes this a partially collapsed step (van Dyk & Park 2008, JASA 103,
section 3): ``a`` must be drawn next, given the new ``u``, before anything else reads it. The
move is visited right after the coefficient block, and the likelihood block comes next in the
sweep (:func:`bayesvm.samplers.gibbs.make_gibbs_kernel` checks). The whole is a sweep of
kernels each leaving the posterior invariant; VB and EM never visit it.
"""

from __future__ import annotations

import math

from bayesvm.blocks.slice import slice_step

__all__ = ["ScaleInterweaving", "LOG_SCALE_WIDTH"]

# Initial slice width in log sigma. The conditional spread of log sigma given z is about 0.03
# to 0.3 on Luts-Ormerod's problems (section 4.2-4.3); stepping out and shrinking take 6 to 7
# evaluations of the density per draw for any width from 0.1 to 1.
LOG_SCALE_WIDTH = 0.2


class ScaleInterweaving:
    """The ancillary draw of a segment's scale ``sigma = lambda^-1/2`` (module docstring).

    Parameters
    ----------
    coefficients : GaussianCoefficients
        The coefficient block, whose design gives the segment's part of ``f``.
    segment : Segment
        The segment, governed by a :class:`~bayesvm.blocks.GammaPrecision` prior with one
        ``lambda`` and ``Gamma(A, B)`` hyperprior (an ``IG(A, B)`` prior on ``sigma^2``).
    likelihood : Block
        The likelihood block, offering ``log_likelihood_along(offset, direction)``, the log
        pseudo-likelihood with its augmentation integrated out along a line of ``f``.
    """

    def __init__(self, coefficients, segment, likelihood):
        self.coefficients = coefficients
        self.segment = segment.slice
        self.prior = segment.prior
        self.likelihood = likelihood
        #: The block whose value this move integrates out and leaves behind.
        self.stale = likelihood.name

    def update(self, stats, rng) -> dict:
        """Draw ``sigma | z, beta, y``; the coefficients and ``lambda`` at ``u = sigma c z``."""
        current = stats[self.coefficients.name]
        sd = float(stats[self.prior.name].value) ** -0.5
        theta = current.mean.copy()
        segment_f = self.coefficients.segment_predictor(theta, self.segment)
        offset = current.f_mean - segment_f
        log_likelihood = self.likelihood.log_likelihood_along(offset, segment_f / sd)
        shape, rate = self.prior.shape, self.prior.rate

        def log_density(log_sd: float) -> float:
            return (
                -2.0 * shape * log_sd
                - rate * math.exp(-2.0 * log_sd)
                + log_likelihood(math.exp(log_sd))
            )

        new_log_sd = slice_step(log_density, math.log(sd), LOG_SCALE_WIDTH, rng)
        factor = math.exp(new_log_sd) / sd
        theta[self.segment] *= factor
        return {
            self.coefficients.name: current._replace(
                mean=theta, square=theta**2, f_mean=offset + factor * segment_f
            ),
            self.prior.name: self.prior.at(math.exp(-2.0 * new_log_sd)),
        }
