"""VB with a Gaussian ``q(theta)`` on the hinge itself, its augmentation integrated out.

The papers' mean-field ``q(theta) q(a)`` (Luts-Ormerod section 3) bounds the hinge by its
augmentation, and on the SVMs its sds are about half the posterior's; linear response on top of
it (:mod:`bayesvm.vb.lrvb`) leaves them 0.84-1.40 of Gibbs's on the standardised log spam data.
The Gaussian variational approximation (Opper & Archambeau 2009, "The variational Gaussian
approximation revisited", Neural Computation 21:786) keeps ``q(theta) = N(m, S)`` and takes
the pseudo-likelihood's expectation under it in closed form
(:meth:`~bayesvm.blocks.hinge.HingeAugmentation.gaussian_expectation`), so that the bound is

    ``E_q log p(y | theta) + E_q log p(theta | priors) + H[q(theta)] + (the priors' own terms)``,

with no ``q(a)``: for the same ``q(theta)`` it is at least mean-field's (Jensen's inequality
in ``a``), and ``q(theta)`` is the closest Gaussian to the posterior given the priors' ``q``.
Its optimum satisfies (their eq. 8-9)

    ``S^-1 = diag(prior precision) + C^T diag(w) C``,  ``w_i = 2 phi(z_i) / s_i``,
    ``E_q[d log p / d theta] = 0``.

One iteration (:func:`make_gaussian_step`) moves ``S^-1`` towards the first equation's right
side and then ``m`` by the Newton step for that ``S``, each halved until the bound does not
decrease (along both directions it increases: the first is ``S``'s natural gradient, the
second a positive definite scaling of ``m``'s gradient; Challis & Barber 2013, JMLR 14:2239,
show the bound concave in ``m`` and ``S``'s Cholesky factor for a log-concave likelihood such
as the hinge), then updates the priors' ``q`` by CAVI. ``S^-1`` is held as the sites
``(w, prior precision)`` that build it, so that the halving is linear in ``S^-1`` and the
state is a vector of statistics, as linear response needs: without the halving the step's
fixed points are the optimum, and its Jacobian there gives LRVB's covariance.

Against long Gibbs runs, the sds of this family's LRVB covariance are 0.97-1.00 of Gibbs's on
Rätsch's heart data (mean-field's LRVB: 0.83-0.96), 0.97-1.05 on the spam data (0.84-1.40) and
0.89-0.98 for toenail's fixed effects (0.52-0.86).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from bayesvm.blocks.coefficients import GaussianConditional
from bayesvm.catalogue import METHODS
from bayesvm.vb.mean_newton import halve, hinge_of, mean_move
from bayesvm.vb.state import VBState

__all__ = ["FAMILIES", "GaussianSites", "check_family", "gaussian_state", "make_gaussian_step"]

#: The values of :func:`~bayesvm.vb.cavi.fit_vb`'s ``family``: the papers' mean-field
#: ``q(theta) q(a)``, or a Gaussian ``q(theta)`` with ``a`` integrated out (this module).
FAMILIES = METHODS["vb"].options["family"].choices


class GaussianSites(NamedTuple):
    """What ``q(theta)``'s precision is built from: ``diag(prior_precision) + C^T diag(weights)
    C``.
    """

    weights: np.ndarray
    prior_precision: np.ndarray


def check_family(model, family: str) -> None:
    """Raise ``ValueError`` unless ``family`` is one of :data:`FAMILIES` and, for
    ``"gaussian"``, ``model`` is a Gaussian coefficient block, the hinge and priors without
    latent variables of their own.
    """
    METHODS["vb"].options["family"].check("family", family)
    if family == "gaussian" and hinge_of(model) is None:
        raise ValueError(
            "family='gaussian' needs a model of Gaussian coefficients, the hinge and priors "
            f"(LinearSVM with a ridge prior, MixedSVM); {type(model).__name__}'s blocks are "
            f"{[type(block).__name__ for block in model.blocks]}"
        )


def gaussian_state(model, state: VBState) -> VBState:
    """The Gaussian family's state at mean-field's ``state``: ``q(theta)``'s mean and
    precision kept (its sites: mean-field's ``E[1/a]`` and the priors' precision), the priors'
    ``q`` kept.
    """
    params, stats = dict(state[0]), dict(state[1])
    coefficients, hinge = model.coefficients, hinge_of(model)
    sites = GaussianSites(
        np.asarray(stats[hinge.name].weights, dtype=float), coefficients.prior_precision(stats)
    )
    q = _q(coefficients, sites, params[coefficients.name].mean)
    params[coefficients.name] = q
    stats[coefficients.name] = coefficients.expected_stats(q)
    stats[hinge.name] = sites
    params[hinge.name] = hinge.conditional(stats)
    return VBState(params, stats)


def make_gaussian_step(model, tilts: Mapping[str, np.ndarray] | None = None, search=True):
    """One iteration of the Gaussian family: ``step(state) -> (new state, bound)``, states
    :class:`~bayesvm.vb.state.VBState` (module docstring).

    ``tilts``: as :func:`~bayesvm.vb.cavi.make_cavi_step`'s, for the coefficient block.
    ``search=False`` takes the full steps, without halving (linear response: a smooth map
    whose fixed point is the optimum).
    """
    coefficients, hinge = model.coefficients, hinge_of(model)
    priors = [block for block in model.blocks if block is not coefficients and block is not hinge]
    tilt = (tilts or {}).get(coefficients.name)
    tilt = np.zeros(coefficients.size) if tilt is None else np.asarray(tilt, dtype=float)

    def bound_of(state) -> float:
        params, stats = state
        theta = stats[coefficients.name]
        bound = hinge.gaussian_expectation(theta.f_mean, theta.f_var).value
        bound += coefficients.bound_term(params[coefficients.name], stats)
        bound += sum(block.bound_term(params[block.name], stats) for block in priors)
        return bound + float(tilt @ theta.mean)

    def move(propose, state, bound):
        """The halved step (:func:`~bayesvm.vb.mean_newton.halve`), or the full one."""
        if not search:
            return propose(1.0), None
        return halve(propose, state, bound, bound_of)

    def step(state):
        params, stats = dict(state[0]), dict(state[1])
        theta, sites = stats[coefficients.name], stats[hinge.name]
        target = GaussianSites(
            hinge.gaussian_expectation(theta.f_mean, theta.f_var).curvature,
            coefficients.prior_precision(stats),
        )
        mean = theta.mean

        def with_precision(fraction):
            blend = GaussianSites(
                *(a + fraction * (b - a) for a, b in zip(sites, target, strict=True))
            )
            q = _q(coefficients, blend, mean)
            return VBState(
                {**params, coefficients.name: q},
                {**stats, coefficients.name: coefficients.expected_stats(q), hinge.name: blend},
            )

        bound = bound_of(VBState(params, stats)) if search else None
        state, bound = move(with_precision, VBState(params, stats), bound)
        q, theta = state[0][coefficients.name], state[1][coefficients.name]
        gradient = hinge.gaussian_expectation(theta.f_mean, theta.f_var).slope
        gradient = coefficients.design.transpose_times(gradient)
        gradient += tilt - target.prior_precision * mean  # the priors' q is the current one
        state, _ = move(mean_move(coefficients, state, q.gaussian.solve(gradient)), state, bound)
        params, stats = dict(state[0]), dict(state[1])
        for block in priors:
            params[block.name] = block.conditional(stats)
            stats[block.name] = block.expected_stats(params[block.name])
        params[hinge.name] = hinge.conditional(stats)  # E(1 - y f)^2, for the record
        state = VBState(params, stats)
        return state, bound_of(state)

    return step


def _q(coefficients, sites: GaussianSites, mean: np.ndarray) -> GaussianConditional:
    """``N(mean, (diag(prior precision) + C^T diag(weights) C)^-1)``."""
    return GaussianConditional(
        coefficients.design.gaussian(sites.weights, sites.prior_precision), mean
    )
