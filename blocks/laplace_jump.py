"""Reversible jump on the active kernel vectors with the probit's latent ``s`` integrated out.

Zhang et al.'s FBGKM (section 3.2) moves ``gamma`` given Holmes-Held's latent ``s``, with the
coefficients ``theta = (u, beta_gamma)`` integrated out (:func:`~bayesvm.blocks.model_search.
jump`). Where the classes are nearly separable under the kernel, ``s`` pins ``f = u 1 +
K_gamma beta_gamma``, so that few other active sets fit it, and the model size moves only as
fast as ``s`` does. This move integrates ``s`` out instead: it targets

    ``pi(gamma, theta) = p(gamma) N(u | 0, 1 / eta) N(beta_gamma | 0, (g K_gamma,gamma)^-1)
    prod_i Phi(y_i f_i)``

given ``g`` and ``eta`` (section 3.1's hierarchy with ``s`` integrated out: the probit
likelihood itself). A proposal chooses ``gamma'`` by the birth / death / swap moves of
:func:`~bayesvm.blocks.model_search.propose_change` and draws ``theta'`` from ``q_gamma'``, a
multivariate t with :data:`PROPOSAL_DOF` degrees of freedom around the Laplace approximation
of ``p(theta | gamma', y, g, eta)`` (:func:`probit_laplace`: the probit log likelihood is
concave, the prior Gaussian, so Newton's method finds the one mode); it is accepted with
probability

    ``min(1, pi(gamma', theta') q_gamma(theta) / (pi(gamma, theta) q_gamma'(theta')) x
    exp(log_ratio))``,

``log_ratio`` the prior and move probabilities of :func:`~bayesvm.blocks.model_search.
propose_change`. The proposal of ``(gamma', theta')`` does not depend on ``theta``, so this is
Metropolis-Hastings on the joint space of ``(gamma, theta)`` with no Jacobian (Green 1995:
the dimension-matching variables are all of ``theta'``). The t's tails matter: where some
``Phi(y_i f_i)`` tends to 1 the posterior's tail is the prior's, wider than the Laplace
approximation's, so ``pi / q`` is unbounded under a normal ``q`` and a chain that reaches such
a tail stays there (on six points, one of three runs put the intercept 4 Monte Carlo errors
off); under the t, ``pi / q`` is bounded (``pi`` has the prior's Gaussian tails), which makes
the refresh below uniformly ergodic (Mengersen & Tweedie 1996, Theorem 2.1). Each proposal is
followed by a refresh of ``theta`` at the current set, an independence proposal from
``q_gamma`` accepted with ``min(1, pi(gamma, theta') q_gamma(theta) / (pi(gamma, theta)
q_gamma(theta')))``: it reuses the set's approximation, so it costs no Newton step. Each
``q_gamma`` is a function of ``(gamma, g, eta)`` only: it is made in the whitened
coefficients of ``gamma``'s pivoted factor, and Newton starts from the current set's mode
restricted to ``gamma'``, from the projection of its fit where a vector leaves (to save
iterations) or from 0, and stops within :data:`NEWTON_TOL` of the mode, so the start changes
``q`` by less than a millionth of a standard deviation.

After the proposals, ``s`` is drawn from its complete conditional given the new ``f``, the
truncated normals of Albert & Chib (1993). The proposals leave ``p(gamma, theta | y, g, eta)``
invariant with ``s`` integrated out and the draw of ``s`` restores its conditional, so the pair
leaves the joint posterior invariant: a partially collapsed Gibbs step (van Dyk & Park 2008,
JASA 103, section 3), in which nothing reads ``s`` between the two.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import blas
from scipy.special import gammaln, log_ndtr

from bayesvm.blocks.model_search import propose_change
from bayesvm.blocks.probit_newton import NOT_CONVERGED, NOT_POSITIVE_DEFINITE, compiled_probit
from bayesvm.linalg import cholesky_lower, cholesky_solve, triangular_solve

__all__ = [
    "LaplaceJump",
    "ProbitLaplace",
    "probit_laplace",
    "NEWTON_TOL",
    "PROPOSAL_DOF",
    "CONTRACTION",
    "MANY_COLUMNS",
    "COMPILED_COLUMNS",
]

LOG_2PI = float(np.log(2.0 * np.pi))
LOG_HALF = float(np.log(0.5))
#: Newton stops once the decrement ``grad^T H^-1 grad`` is below this (a distance from the mode
#: of ``1e-6`` standard deviations at most).
NEWTON_TOL = 1e-12
#: Degrees of freedom of the proposal, a multivariate t around the Laplace approximation
#: (module docstring).
PROPOSAL_DOF = 10.0
#: More Newton iterations than this mean the start was far off or the problem ill-posed.
NEWTON_MAX_ITER = 100
#: Newton keeps its Hessian while each step cuts the decrement by this factor
#: (:func:`probit_laplace`).
CONTRACTION = 0.1
#: From this many columns on, a Hessian (``O(n k^2)``) outweighs the overhead of a Newton step:
#: it is a symmetric rank-k update (:func:`_hessian_factor`) kept while it contracts
#: (:func:`probit_laplace`), and a proposal makes no projected start (:meth:`LaplaceJump.
#: _candidate`).
MANY_COLUMNS = 48
#: Below this many columns, Newton's fits and the proposals' probit log likelihoods are
#: compiled loops (:mod:`bayesvm.blocks.probit_newton`; :func:`probit_laplace`): with 400
#: rows on one thread the log likelihood took 6.5 against 8.7 us at 6 columns, 8.5 against
#: 8.5 at 16, 10.3 against 8.9 at 21.
COMPILED_COLUMNS = 16
#: Laplace modes kept, by active set, as starts of the next Newton fits at the same set (the
#: oldest is forgotten first; :meth:`LaplaceJump._candidate`).
REMEMBERED_MODES = 1000


def _accept(log_ratio: float, rng: np.random.Generator) -> bool:
    return log_ratio >= 0.0 or rng.random() < np.exp(log_ratio)


class ProbitLaplace(NamedTuple):
    """``N(mode, H^-1)``: the Laplace approximation of a probit posterior, ``factor`` the
    lower Cholesky factor of ``H``, the negative Hessian of the log posterior at ``mode``.
    """

    mode: np.ndarray
    factor: np.ndarray


def _log_mills(z: np.ndarray, log_cdf: np.ndarray) -> np.ndarray:
    """``log(phi(z) / Phi(z))`` from ``log Phi(z)``: on the log scale, exact for large ``-z``."""
    return -0.5 * z * z - 0.5 * LOG_2PI - log_cdf


def _log_posterior(design, prior_precision, y, theta) -> tuple[np.ndarray, np.ndarray, float]:
    """``(z, log Phi(z), sum_i log Phi(z_i) - theta^T R theta / 2)``, ``z_i = y_i c_i^T theta``
    and ``R`` the prior precision.
    """
    z = y * (design @ theta)
    log_cdf = log_ndtr(z)
    return z, log_cdf, float(log_cdf.sum() - 0.5 * theta @ prior_precision @ theta)


def _hessian_factor(design, prior_precision, mills, z) -> np.ndarray:
    """``chol(H)``, ``H = C^T W C + R`` at ``z``, with ``W = diag(lambda_i (lambda_i + z_i))``,
    ``z_i = y_i f_i``, ``lambda_i = phi(z_i) / Phi(z_i)`` (``mills``): the probit's curvature,
    between 0 and 1.

    Far in the tail (``z_i`` below about -1e3) ``lambda_i + z_i`` loses its digits to
    cancellation and the computed curvature can leave ``[0, 1]``: it is clipped there, which
    keeps ``H`` positive definite (every step an ascent direction; at the mode no ``z_i`` is
    that far). From :data:`MANY_COLUMNS` columns on, ``C^T W C`` is BLAS ``dsyrk``'s lower
    triangle (half the flops of a product; the Cholesky factorisation reads no other), below
    it one matrix product, which then costs less than the call: with 400 rows on one thread,
    the product took 15 us against the update's 18 at 22 columns, 198 against 137 at 100.
    """
    weights = np.minimum(np.maximum(mills * (mills + z), 0.0), 1.0)
    if design.shape[1] < MANY_COLUMNS:
        gram = design.T @ (weights[:, None] * design)
    else:
        gram = blas.dsyrk(1.0, design.T * np.sqrt(weights), lower=1)
    return cholesky_lower(gram + prior_precision)


def probit_laplace(design, prior_precision, y, *starts) -> ProbitLaplace:
    """Newton's method for the mode of ``sum_i log Phi(y_i c_i^T theta) - theta^T R theta / 2``,
    halving steps that do not raise it enough (Armijo), and ``H = C^T W C + R`` at the mode
    (:func:`_hessian_factor`). Newton starts from whichever of ``starts`` and 0 the objective
    prefers (a start carried over from another active set can put some ``|z_i|`` at 1e4 or
    more).

    The Hessian is kept from step to step while each step cuts the decrement ``grad^T H^-1
    grad`` by :data:`CONTRACTION` (a chord method; a step costs ``O(n k)``, a Hessian ``O(n
    k^2)``), and made afresh where one does not. Newton stops only where the decrement under
    the Hessian at the point itself is below :data:`NEWTON_TOL`, as with a fresh Hessian at
    every step, so the approximation is the same to a millionth of a standard deviation. On
    220 fits of waveform's first sweeps (187 columns on average) this takes 2.3 Hessians per
    fit against 3.9, 1.8 against 3.7 ms (one thread); at 21 columns, as long as before. Below
    :data:`COMPILED_COLUMNS` columns the same steps, each with a fresh Hessian, run as one
    compiled loop (:func:`~bayesvm.blocks.probit_newton.compiled_probit`), where NumPy's call
    overheads outweigh the flops: with 400 rows on one thread, 63 against 151 us a fit at 6
    columns, 123 against 147 at 16; from 21 columns on the loop, without BLAS, is the slower.

    The objective is concave, so in exact arithmetic a short enough step along Newton's
    direction always raises it. Where ``H`` is ill-conditioned round-off can hold the
    decrement above :data:`NEWTON_TOL` (at ``3e-12``, ``2e-6`` standard deviations from the
    mode, on the scikit-learn checks' 20 points, with ``H`` in ``beta_gamma``'s coordinates)
    while no step raises the objective: Newton then stops there, at the mode to working
    precision.
    """
    if design.shape[1] < COMPILED_COLUMNS:
        return _few_columns(design, prior_precision, y, starts)
    theta, z = np.zeros(design.shape[1]), np.zeros(y.shape[0])  # log Phi(0) = log 1/2
    log_cdf = np.full(y.shape[0], LOG_HALF)
    objective = y.shape[0] * LOG_HALF
    for start in starts:
        evaluation = _log_posterior(design, prior_precision, y, start)
        if evaluation[2] > objective:
            theta, (z, log_cdf, objective) = np.asarray(start, dtype=float), evaluation
    factor, here, previous = None, False, np.inf  # the kept chol(H); whether H is at theta
    for _ in range(NEWTON_MAX_ITER):
        mills = np.exp(_log_mills(z, log_cdf))
        gradient = design.T @ (y * mills) - prior_precision @ theta
        if factor is None:
            factor, here = _hessian_factor(design, prior_precision, mills, z), True
        step = cholesky_solve(factor, gradient)
        decrement = float(gradient @ step)
        if decrement < NEWTON_TOL and not here:  # small under the kept H: test it under this one
            factor, here = _hessian_factor(design, prior_precision, mills, z), True
            step = cholesky_solve(factor, gradient)
            decrement = float(gradient @ step)
        if decrement < NEWTON_TOL:
            return ProbitLaplace(theta, factor)
        found = _line_search(design, prior_precision, y, theta, step, objective, decrement)
        if found is None:  # no step raises the objective
            if here:  # the mode to working precision
                return ProbitLaplace(theta, factor)
            factor = None  # along the kept H's direction only: take the one here
            continue
        theta, (z, log_cdf, objective) = found
        if design.shape[1] < MANY_COLUMNS or decrement > CONTRACTION * previous:
            factor = None
        here, previous = False, decrement
    raise np.linalg.LinAlgError(f"Newton's method did not converge in {NEWTON_MAX_ITER} steps")


def _few_columns(design, prior_precision, y, starts) -> ProbitLaplace:
    """:func:`probit_laplace` below :data:`COMPILED_COLUMNS` columns, compiled."""
    k = design.shape[1]
    newton, _ = compiled_probit()
    theta, factor, status = newton(
        np.ascontiguousarray(design, dtype=float),
        np.ascontiguousarray(prior_precision, dtype=float),
        np.ascontiguousarray(y, dtype=float),
        np.array(starts, dtype=float).reshape(len(starts), k),
        NEWTON_TOL,
        NEWTON_MAX_ITER,
    )
    if status == NOT_POSITIVE_DEFINITE:
        raise np.linalg.LinAlgError("the Hessian is not positive definite")
    if status == NOT_CONVERGED:
        raise np.linalg.LinAlgError(f"Newton's method did not converge in {NEWTON_MAX_ITER} steps")
    return ProbitLaplace(theta, factor)


def _line_search(design, prior_precision, y, theta, step, objective, decrement):
    """``(theta', _log_posterior(theta'))`` for the longest of ``theta + step / 2^j`` that
    raises the objective by a quarter of the decrement's promise (Armijo), or None where none
    longer than ``1e-12`` of the step raises it.
    """
    length = 1.0
    while length >= 1e-12:
        candidate = theta + length * step
        evaluation = _log_posterior(design, prior_precision, y, candidate)
        if evaluation[2] > objective and evaluation[2] >= objective + 0.25 * length * decrement:
            return candidate, evaluation
        length *= 0.5
    return None


def _log_normaliser(laplace: ProbitLaplace) -> float:
    """The log normalising constant of the multivariate t of :data:`PROPOSAL_DOF` degrees of
    freedom with scale matrix ``H^-1`` in ``d`` dimensions: ``log |L| + log Gamma((nu + d) /
    2) - log Gamma(nu / 2) - d log(nu pi) / 2``, ``L`` the factor of ``H``.
    """
    d, nu = laplace.mode.shape[0], PROPOSAL_DOF
    return (
        float(np.log(np.diag(laplace.factor)).sum())
        + float(gammaln(0.5 * (nu + d)) - gammaln(0.5 * nu))
        - 0.5 * d * math.log(nu * math.pi)
    )


class _Candidate(NamedTuple):
    """An active set in the order of its factor, ``L = chol(K_gamma,gamma)``, the design ``[1,
    K_:gamma L^-T]`` of the whitened coefficients ``(u, b = L^T beta_gamma)`` and the Laplace
    approximation of their posterior.
    """

    active: np.ndarray
    kernel_factor: np.ndarray
    design: np.ndarray
    laplace: ProbitLaplace
    log_normaliser: float  # of q_gamma (LaplaceJump._log_proposal)

    def whiten(self, theta: np.ndarray) -> np.ndarray:
        """``(u, L^T beta_gamma)`` from ``theta = (u, beta_gamma)``."""
        return np.concatenate([theta[:1], self.kernel_factor.T @ theta[1:]])

    def unwhiten(self, whitened: np.ndarray) -> np.ndarray:
        """``(u, beta_gamma) = (u, L^-T b)``."""
        if not self.active.size:
            return whitened
        beta = triangular_solve(self.kernel_factor, whitened[1:], transpose=True)
        return np.concatenate([whitened[:1], beta])


class LaplaceJump:
    """The move of the module docstring: ``moves`` proposals of ``(gamma', theta')``, then
    ``s | f``. A move of :func:`bayesvm.samplers.gibbs.make_gibbs_kernel`'s reversible-jump
    sweep, right after the coefficient block's jumps.

    Parameters
    ----------
    coefficients : KernelCoefficients
        The coefficient block (its kernel, prior on ``gamma``, move probabilities, ``eta`` and
        ``g``, and its statistics at a value).
    likelihood : ProbitAugmentation
        The probit block (labels, and the draw of ``s`` given ``f``).
    moves : int
        Proposals of a new active set per sweep, each followed by a refresh of ``theta``.
    """

    stale = None

    def __init__(self, coefficients, likelihood, moves: int):
        self.coefficients, self.likelihood = coefficients, likelihood
        self.moves = int(moves)
        self.y = likelihood.y
        self._modes: dict[tuple, np.ndarray] = {}  # the last mode found at each set

    def _candidate(self, active, start, eta: float, g: float, made: dict, leaving=None):
        """The :class:`_Candidate` at ``active``, Newton started from ``start = (u,
        beta_gamma)`` (None where :meth:`~bayesvm.blocks.kernel.KernelCoefficients.
        active_factor` refuses the set, one the g-prior gives no density).

        With ``leaving``, the current :class:`_Candidate` where a vector leaves it, Newton may
        also start from the projection of its mode's ``f``: the coefficients ``theta`` that
        minimise ``||C theta - f||^2 + theta^T R theta``, ``R`` the prior precision (the
        leaving vector's part of ``f`` is lost to the restricted mode but partly carried by
        the others). On ringnorm (3.6 vectors on average) this took
        Newton from 7.4 Hessians per proposal to 5.0 and a sweep from 13-15 to 11-14 ms (three
        runs each, one thread). From :data:`MANY_COLUMNS` columns on the projection, a product
        of the design's size, is not made: there the restricted mode is close.

        The approximation is made in the whitened coefficients, whose prior ``N(0, I / g)``
        keeps ``H`` within ``g`` and ``g + lambda_max(K)`` of the intercept's: in ``beta_gamma``
        it is ``K_gamma,gamma``'s condition times that, and a set admitted by a few digits (on
        banana's 400 rows) has no Cholesky factor of ``H`` there. The weights ``pi / q`` are the
        same in either coordinates (both densities change by one Jacobian).

        ``made`` holds the candidates of this step by set (``g`` and ``eta`` are fixed within
        it): a set proposed again is not fitted again, and every proposal to it sees the same
        ``q``. The last mode found at a set, in an earlier step, is one more start (its
        whitened coordinates are the same; kept across the chains of a fit, which run one after
        another): on ringnorm a quarter of the sets proposed had been fitted before, and a tenth
        within the same step, and a sweep took about 8 ms against 9 (three runs each).
        """
        order = np.argsort(active, kind="stable")  # the same factor whatever the proposal's order
        key = tuple(active[order].tolist())
        if key in made:
            return made[key]
        found = self.coefficients.active_factor(active[order])
        if found is None:
            made[key] = None
            return None
        positions, kernel_factor = found
        active = active[order][positions]
        beta_start = start[1:][order][positions]
        design = self.coefficients.whitened_design(active, kernel_factor)
        prior_precision = np.diag(np.concatenate([[eta], np.full(active.size, g)]))
        whitened_start = np.concatenate([start[:1], kernel_factor.T @ beta_start])
        starts = [whitened_start]
        if leaving is not None and design.shape[1] < MANY_COLUMNS:
            fitted = leaving.design @ leaving.laplace.mode
            projection = cholesky_lower(design.T @ design + prior_precision)
            starts.append(cholesky_solve(projection, design.T @ fitted))
        if key in self._modes:
            starts.append(self._modes.pop(key))
        elif len(self._modes) >= REMEMBERED_MODES:
            del self._modes[next(iter(self._modes))]
        laplace = probit_laplace(design, prior_precision, self.y, *starts)
        self._modes[key] = laplace.mode
        made[key] = _Candidate(active, kernel_factor, design, laplace, _log_normaliser(laplace))
        return made[key]

    def _log_target(self, candidate: _Candidate, theta: np.ndarray, eta: float, g: float):
        """``log pi(gamma, theta) - log p(gamma)`` (module docstring) in the whitened
        coefficients ``theta = (u, b)``: ``N(u | 0, 1 / eta) N(b | 0, I / g)`` and the probit
        likelihood (:func:`~bayesvm.blocks.model_search.propose_change`'s ratio holds that of
        ``p(gamma)``).
        """
        k = candidate.active.size
        log_prior = (
            0.5 * (math.log(eta) - eta * theta[0] ** 2)
            + 0.5 * (k * math.log(g) - g * theta[1:] @ theta[1:])
            - 0.5 * (k + 1) * LOG_2PI
        )
        if k + 1 < COMPILED_COLUMNS:  # NumPy's call overheads outweigh the flops
            _, log_likelihood = compiled_probit()
            return log_prior + log_likelihood(candidate.design, self.y, theta)
        return log_prior + float(log_ndtr(self.y * (candidate.design @ theta)).sum())

    @staticmethod
    def _log_proposal(candidate: _Candidate, theta: np.ndarray) -> float:
        """``log q_gamma(theta)``: the multivariate t of :data:`PROPOSAL_DOF` degrees of freedom
        at the Laplace approximation's mode, with its precision ``H`` as scale matrix.
        """
        laplace = candidate.laplace
        residual = laplace.factor.T @ (theta - laplace.mode)
        exponent = 0.5 * (PROPOSAL_DOF + theta.shape[0])
        return candidate.log_normaliser - exponent * math.log1p(residual @ residual / PROPOSAL_DOF)

    @staticmethod
    def _draw(candidate: _Candidate, rng) -> np.ndarray:
        """A draw from ``q_gamma``: the Laplace approximation's normal over the square root of
        an independent ``chi^2_nu / nu``.
        """
        laplace = candidate.laplace
        noise = rng.standard_normal(laplace.mode.shape[0])
        noise *= np.sqrt(PROPOSAL_DOF / rng.chisquare(PROPOSAL_DOF))
        return laplace.mode + triangular_solve(laplace.factor, noise, transpose=True)

    def _log_weight(self, candidate: _Candidate, theta: np.ndarray, eta: float, g: float):
        """``log pi(gamma, theta) - log q_gamma(theta)``."""
        return self._log_target(candidate, theta, eta, g) - self._log_proposal(candidate, theta)

    def step(self, stats, rng) -> tuple[dict, dict]:
        """``moves`` proposals, each followed by a refresh of ``theta`` from ``q_gamma`` at the
        current set, then ``s | f``; the info is ``laplace_accept_rate`` and
        ``refresh_accept_rate``, the accepted shares of each kind.
        """
        coefficients = self.coefficients
        current = stats[coefficients.name]
        eta, g = coefficients.precisions(stats)
        active = np.flatnonzero(current.inclusion)
        start = np.append(current.mean[0], current.beta[active])
        made = {}
        state = self._candidate(active, start, eta, g, made)
        if state is None:
            raise np.linalg.LinAlgError("the current active set has a singular kernel block")
        theta = state.whiten(np.append(current.mean[0], current.beta[state.active]))
        log_weight = self._log_weight(state, theta, eta, g)
        accepted = refreshed = 0
        for _ in range(self.moves):
            change = propose_change(
                state.active + 1,
                coefficients.switchable,
                coefficients.log_prior,
                rng,
                coefficients.jump_settings,
            )
            keep = state.active != (-1 if change.out is None else change.out - 1)
            start = state.unwhiten(state.laplace.mode)[np.concatenate([[True], keep])]
            proposed = state.active[keep]
            if change.into is not None:
                proposed = np.append(proposed, change.into - 1)
                start = np.append(start, 0.0)
            leaving = None if change.out is None else state
            candidate = self._candidate(proposed, start, eta, g, made, leaving)
            if candidate is not None:
                new_theta = self._draw(candidate, rng)
                new_log_weight = self._log_weight(candidate, new_theta, eta, g)
                if _accept(new_log_weight - log_weight + change.log_ratio, rng):
                    state, theta, log_weight = candidate, new_theta, new_log_weight
                    accepted += 1
            new_theta = self._draw(state, rng)
            new_log_weight = self._log_weight(state, new_theta, eta, g)
            if _accept(new_log_weight - log_weight, rng):
                theta, log_weight = new_theta, new_log_weight
                refreshed += 1
        value = coefficients.at_active(state.active, state.unwhiten(theta), theta[1:])
        s = self.likelihood.sample((value.f_mean, 0.0), rng)
        info = {
            "laplace_accept_rate": accepted / max(self.moves, 1),
            "refresh_accept_rate": refreshed / max(self.moves, 1),
        }
        return {coefficients.name: value, self.likelihood.name: s}, info
