"""Gaussian coefficients whose switchable columns an inclusion vector turns on (spike-and-slab).

``theta = (beta, v)`` and ``f = C diag(gamma~) theta`` with ``gamma~ = (1_p, gamma)``,
``gamma_k ~ Bernoulli(rho)`` independently: Luts-Ormerod section 3.2 (``u = Gamma v``) and
Polson-Scott section 4.2 (``u_gamma`` nonzero, eq. 16). The priors on ``beta`` and ``v`` are the
segments' prior blocks: a fixed slab precision (Polson-Scott's Gaussian slab) or the Laplace
mixture with a learned ``sigma2_u`` (Luts-Ormerod's Laplace-zero). Inactive ``v_k`` keep their
prior, so the reported ``u = gamma * v`` is zero where a column is off.

With the likelihood block's weights ``w`` and responses ``r``, everything below reads the
complete-data sufficient statistics ``G = C^T diag(w) C`` and ``h = C^T r`` (Polson-Scott's
remark after eq. 17) and the prior precisions ``d``:

* Gibbs, ``update="collapsed"`` (Polson-Scott MCMC-SVM spike-and-slab, steps 2-3):
  ``gamma_k | gamma_-k`` with ``theta`` integrated out (eq. 17) for each ``k``
  (:func:`~bayesvm.blocks.model_search.gibbs_sweep`, ``O(k^2)`` per column on the active
  block's Cholesky factor), then ``theta_A | gamma`` from that factor;
* Gibbs, ``update="conditional"`` (Luts-Ormerod App. B): ``theta | gamma`` (inactive ``v_k``
  from their prior), then ``gamma_k | theta`` Bernoulli with ``logit = logit(rho) -
  G_kk v_k^2 / 2 + v_k (h_k - sum_{j != k} G_kj gamma~_j theta_j)``;
* reversible jump: birth / death / swap moves with ``theta`` integrated out
  (:func:`~bayesvm.blocks.model_search.jump`), then ``theta_A | gamma``;
* VB (Luts-Ormerod Algorithm 3): ``q(theta) = N(P^-1 diag(mu~) h, P^-1)`` with ``P = G o
  Omega_gamma~ + diag(d)`` (lines 2-3; ``Omega = mu~ mu~^T + diag(mu~ (1 - mu~))``), then
  each ``q(gamma_k) = Bernoulli(expit(eta_k))`` in turn with ``eta_k = logit(rho) + h_k E v_k -
  G_kk E v_k^2 / 2 - sum_{j != k} G_kj mu~_j E[theta_j v_k]`` (lines 6-7). The linear
  predictor's moments, which the hinge reads (line 10), are ``E f = C (mu~ o E theta)`` and
  ``Var f_i = (c_i o mu~)^T Sigma (c_i o mu~) + sum_j c_ij^2 mu~_j (1 - mu~_j) E theta_j^2``.
  The block's bound term is the entropy of ``q(theta)`` plus ``E log p(gamma) - E log
  q(gamma)``, the last line of the paper's bound.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import expit, logit, xlogy

from bayesvm.blocks.active_set import CollapsedGaussian
from bayesvm.blocks.base import Block
from bayesvm.blocks.coefficients import LOG_2PI, whitened_log_density
from bayesvm.blocks.model_search import DEFAULT_JUMPS, JumpSettings, gibbs_sweep, jump
from bayesvm.linalg import (
    cholesky_lower,
    inverse_factor,
    log_det_from_cholesky,
    triangular_solve,
)

__all__ = ["InclusionCoefficients", "InclusionStats"]

UPDATES = ("collapsed", "conditional")


class InclusionStats(NamedTuple):
    """What the block shows the others (as :class:`~bayesvm.blocks.CoefficientStats`), and
    the inclusion vector.
    """

    mean: np.ndarray  # theta = (beta, v), or E[theta]
    square: np.ndarray  # theta^2, or E[theta^2]
    f_mean: np.ndarray  # f = C (gamma~ theta), or E[f]
    f_var: np.ndarray | float  # Var f (0 at a value)
    inclusion: np.ndarray  # gamma, or E[gamma]
    drawn: bool = False  # a value (Gibbs, RJ) rather than expectations under q (VB)
    log_scale: float = 0.0


class Statistics(NamedTuple):
    """The complete-data sufficient statistics and prior precisions (Gibbs and RJ)."""

    gram: np.ndarray  # G = C^T W C
    linear: np.ndarray  # h = C^T r
    prior: np.ndarray  # d
    inclusion: np.ndarray  # the current gamma


class VariationalParams(NamedTuple):
    """``q(theta) = N(mean, P^-1)`` (``P`` by its factor) and ``q(gamma) = Bernoulli``."""

    factor: np.ndarray
    mean: np.ndarray
    covariance: np.ndarray
    inclusion: np.ndarray  # E[gamma]


class InclusionCoefficients(Block):
    """Coefficients ``(beta, v)`` and inclusion indicators ``gamma`` on the ``v`` columns.

    Parameters
    ----------
    design : DenseDesign
        The training design ``C = [X, Z]``.
    segments : list of Segment
        ``beta`` and ``v`` with their prior blocks.
    likelihood : str
        Name of the likelihood block (weights and responses).
    coefficient_names : list of str
        Labels of ``theta``.
    inclusion_prior : float
        ``rho`` (Luts-Ormerod) or ``pi`` (Polson-Scott): ``gamma_k ~ Bernoulli(rho)``.
    update : {"collapsed", "conditional"}
        Gibbs update of ``gamma`` (module docstring).
    jump_settings : JumpSettings
        Move probabilities of reversible jump.
    """

    name = "theta"

    def __init__(
        self,
        design,
        segments,
        likelihood: str,
        coefficient_names: list,
        inclusion_prior: float,
        update: str = "collapsed",
        jump_settings: JumpSettings = DEFAULT_JUMPS,
    ):
        if update not in UPDATES:
            raise ValueError(f"update must be one of {UPDATES}; got {update!r}")
        self.design = design
        self.C = design.dense()
        self.C_squared = self.C**2
        self.segments = list(segments)
        fixed, switched = self.segments
        self.fixed, self.switched = fixed, switched
        self.likelihood = likelihood
        self.coefficient_names = list(coefficient_names)
        self.size = self.C.shape[1]
        self.switchable = np.arange(self.size)[switched.slice]
        self.n_fixed = self.size - self.switchable.shape[0]
        self.rho = float(inclusion_prior)
        self.logit_rho = float(logit(self.rho))
        self.update = update
        self.jump_settings = jump_settings
        self.var_names = (fixed.name, switched.name, "u", "gamma")
        self.supports = {"u": "derived", "gamma": "binary"}
        self.dims = {
            fixed.name: [fixed.dim],
            switched.name: [switched.dim],
            "u": [switched.dim],
            "gamma": [switched.dim],
        }

    def log_prior(self, k: int) -> float:
        """``log p(gamma)`` of one vector with ``k`` ones: ``k log rho + (m - k) log(1 - rho)``."""
        m = self.switchable.shape[0]
        return k * np.log(self.rho) + (m - k) * np.log1p(-self.rho)

    def _prior_precision(self, stats) -> np.ndarray:
        return np.concatenate([stats[s.prior.name].precision for s in self.segments])

    def _with_fixed(self, inclusion: np.ndarray) -> np.ndarray:
        """``gamma~ = (1_p, gamma)``."""
        return np.concatenate([np.ones(self.n_fixed), inclusion])

    def _at(self, theta: np.ndarray, inclusion: np.ndarray) -> InclusionStats:
        gamma = self._with_fixed(inclusion)
        f = self.C @ (gamma * theta)
        return InclusionStats(theta, theta**2, f, 0.0, inclusion, True)

    # -- conditional ------------------------------------------------------------------------
    def conditional(self, stats):
        """Gibbs / RJ: the sufficient statistics and the current ``gamma``. VB: ``q(theta)``
        and then each ``q(gamma_k)`` (Algorithm 3 lines 2-9).
        """
        likelihood = stats[self.likelihood]
        gram = self.design.gram(likelihood.weights)
        linear = self.design.transpose_times(likelihood.response)
        prior = self._prior_precision(stats)
        previous = stats.get(self.name)
        if previous is not None and previous.drawn:  # Gibbs or RJ
            return Statistics(gram, linear, prior, previous.inclusion)
        if previous is None:  # VB's first update: every column in (the full model)
            inclusion = np.ones(self.switchable.shape[0])
        else:
            inclusion = previous.inclusion.copy()
        return self._variational_update(gram, linear, prior, inclusion)

    def _variational_update(self, gram, linear, prior, inclusion) -> VariationalParams:
        mu = self._with_fixed(inclusion)
        precision = gram * np.outer(mu, mu)
        precision.flat[:: self.size + 1] += np.diag(gram) * mu * (1.0 - mu) + prior
        factor = cholesky_lower(precision)
        half_inverse = inverse_factor(factor)
        covariance = half_inverse.T @ half_inverse
        mean = covariance @ (mu * linear)
        second = covariance + np.outer(mean, mean)  # Omega_q(theta)
        for offset, k in enumerate(self.switchable):
            mu[k] = 1.0  # sum over j != k below
            cross = float((gram[k] * second[:, k]) @ mu) - gram[k, k] * second[k, k]
            eta = self.logit_rho + linear[k] * mean[k] - 0.5 * gram[k, k] * second[k, k] - cross
            mu[k] = inclusion[offset] = expit(eta)
        return VariationalParams(factor, mean, covariance, inclusion)

    # -- Gibbs and reversible jump ----------------------------------------------------------
    def initial_value(self, stats, rng) -> InclusionStats:
        """A dispersed start: ``theta ~ N(0, I)``, ``gamma ~ Bernoulli(1/2)``."""
        inclusion = (rng.random(self.switchable.shape[0]) < 0.5).astype(float)
        return self._at(rng.standard_normal(self.size), inclusion)

    def _collapsed(self, params: Statistics) -> CollapsedGaussian:
        active = self.switchable[params.inclusion > 0.5]
        order = [*range(self.n_fixed), *active.tolist()]
        return CollapsedGaussian(params.gram, params.linear, params.prior, order)

    def _draw(self, collapsed: CollapsedGaussian, prior, rng) -> InclusionStats:
        """``theta_A | gamma`` from the active factor; inactive ``v_k`` from their prior."""
        theta = rng.standard_normal(self.size) / np.sqrt(prior)
        theta[collapsed.order] = collapsed.draw(rng)
        inclusion = np.zeros(self.switchable.shape[0])
        inclusion[np.asarray(collapsed.order[self.n_fixed :], dtype=int) - self.n_fixed] = 1.0
        return self._at(theta, inclusion)

    def sample(self, params: Statistics, rng) -> InclusionStats:
        """One Gibbs update of ``(gamma, theta)`` (``update``, module docstring)."""
        collapsed = self._collapsed(params)
        if self.update == "collapsed":
            gibbs_sweep(collapsed, self.switchable, self.log_prior, rng)
            return self._draw(collapsed, params.prior, rng)
        theta = self._draw(collapsed, params.prior, rng).mean
        return self._at(theta, self._conditional_inclusion(params, theta, rng))

    def _conditional_inclusion(self, params: Statistics, theta, rng) -> np.ndarray:
        """Luts-Ormerod App. B: each ``gamma_k | theta, gamma_-k`` in turn."""
        gram, linear = params.gram, params.linear
        inclusion = params.inclusion.copy()
        effective = self._with_fixed(inclusion) * theta
        fitted = gram @ effective  # G (gamma~ o theta)
        for offset, k in enumerate(self.switchable):
            v = theta[k]
            others = fitted[k] - gram[k, k] * effective[k]
            eta = self.logit_rho - 0.5 * gram[k, k] * v * v + v * (linear[k] - others)
            new = float(rng.random() < expit(eta))
            if new != inclusion[offset]:
                fitted += gram[:, k] * v * (new - inclusion[offset])
                inclusion[offset] = new
                effective[k] = new * v
        return inclusion

    def jump_step(self, params: Statistics, rng, moves: int | None = None) -> tuple:
        """``moves`` reversible-jump proposals (default: one per switchable column), then
        ``theta_A | gamma``; the info is ``accept_rate``, the accepted share of the proposals.
        """
        collapsed = self._collapsed(params)
        moves = self.switchable.shape[0] if moves is None else moves
        accepted = 0
        for _ in range(moves):
            collapsed, took = jump(
                collapsed, self.switchable, self.log_prior, rng, self.jump_settings
            )
            accepted += took
        info = {"accept_rate": accepted / max(moves, 1)}
        return self._draw(collapsed, params.prior, rng), info

    def record(self, stats: InclusionStats) -> dict[str, np.ndarray]:
        """``beta``, ``v``, ``u = gamma v`` and ``gamma``."""
        theta = stats.mean
        v = theta[self.switched.slice]
        return {
            self.fixed.name: theta[self.fixed.slice],
            self.switched.name: v,
            "u": stats.inclusion * v,
            "gamma": stats.inclusion,
        }

    def sample_stats(self, stats: InclusionStats) -> dict[str, float]:
        """``n_active``, the model size."""
        return {"n_active": float(stats.inclusion.sum())}

    # -- VB ---------------------------------------------------------------------------------
    def expected_stats(self, params: VariationalParams) -> InclusionStats:
        """Moments of ``theta`` and of ``f`` under ``q(theta) q(gamma)`` (module docstring)."""
        mu = self._with_fixed(params.inclusion)
        mean = params.mean
        square = mean**2 + np.diag(params.covariance)
        scaled_covariance = params.covariance * np.outer(mu, mu)  # of C (mu~ o theta)
        f_var = np.einsum("ij,ij->i", self.C @ scaled_covariance, self.C)
        f_var += self.C_squared @ (mu * (1.0 - mu) * square)
        return InclusionStats(mean, square, self.C @ (mu * mean), f_var, params.inclusion)

    def bound_term(self, params: VariationalParams, stats) -> float:
        """Entropy of ``q(theta)`` plus ``E log p(gamma) - E log q(gamma)``."""
        mu = params.inclusion
        entropy = 0.5 * self.size * (1.0 + LOG_2PI) - 0.5 * log_det_from_cholesky(params.factor)
        return entropy + float(
            np.sum(
                mu * np.log(self.rho)
                - xlogy(mu, mu)
                + (1.0 - mu) * np.log1p(-self.rho)
                - xlogy(1.0 - mu, 1.0 - mu)
            )
        )

    def draw_q(self, params: VariationalParams, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``beta``, ``v``, ``u`` and ``gamma`` from ``q``."""
        noise = rng.standard_normal((self.size, size))
        theta = params.mean + triangular_solve(params.factor, noise, transpose=True).T
        gamma = (rng.random((size, params.inclusion.shape[0])) < params.inclusion).astype(float)
        v = theta[:, self.switched.slice]
        return {
            self.fixed.name: theta[:, self.fixed.slice],
            self.switched.name: v,
            "u": gamma * v,
            "gamma": gamma,
        }

    def q_log_density(self, params: VariationalParams, draws) -> np.ndarray:
        """``log N(theta | mean, P^-1) + sum_k log Bernoulli(gamma_k | E gamma_k)`` at draws
        of ``theta = (beta, v)``, every ``v_k`` included, and ``gamma``: the variables of the
        model's density (:meth:`point_stats`; ``u = gamma v`` is derived from them).
        """
        theta = np.concatenate([draws[s.name] for s in self.segments], axis=-1)
        whitened = (theta - params.mean) @ params.factor
        gaussian = whitened_log_density(whitened, log_det_from_cholesky(params.factor))
        gamma, p = draws["gamma"], params.inclusion
        return gaussian + np.sum(xlogy(gamma, p) + xlogy(1.0 - gamma, 1.0 - p), axis=1)

    def q_moments(self, params: VariationalParams) -> dict:
        """Means and sds of ``beta`` and ``v`` (Gaussian), ``gamma`` (Bernoulli) and ``u =
        gamma v`` (``gamma`` and ``v`` independent under ``q``: ``E u = p m``, ``E u^2 = p (m^2
        + s^2)``).
        """
        sd = np.sqrt(np.diag(params.covariance))
        moments = {s.name: (params.mean[s.slice], sd[s.slice]) for s in self.segments}
        p = params.inclusion
        m, s = moments[self.switched.name]
        moments["u"] = (p * m, np.sqrt(p * (m**2 + s**2) - (p * m) ** 2))
        moments["gamma"] = (p, np.sqrt(p * (1.0 - p)))
        return moments

    def variational(self, params: VariationalParams) -> dict:
        """Means and variances of ``q(theta)``, ``E[u] = E[gamma] E[v]`` and ``E[gamma]``."""
        variance = np.diag(params.covariance)
        group = {}
        for s in self.segments:
            group[f"{s.name}_mean"] = ([s.dim], params.mean[s.slice])
            group[f"{s.name}_variance"] = ([s.dim], variance[s.slice])
        dim = self.switched.dim
        group["u_mean"] = ([dim], params.inclusion * params.mean[self.switched.slice])
        group["gamma_probability"] = ([dim], params.inclusion)
        group["covariance"] = (["coefficient", "coefficient_"], params.covariance)
        return group

    def variational_coords(self) -> dict:
        """Coordinates of the covariance."""
        return {"coefficient": self.coefficient_names, "coefficient_": self.coefficient_names}

    # -- the model's density -----------------------------------------------------------------
    def point_stats(self, point, stats) -> InclusionStats:
        """Statistics at ``theta = (beta, v)`` and ``gamma`` (``u = gamma v`` follows), with
        ``f = C (gamma~ o theta)``: the linear predictor ``X beta + Z Gamma v`` of
        Luts-Ormerod section 3.2's likelihood; the priors read ``v`` in every column.
        """
        theta = np.concatenate([np.atleast_1d(point[s.name]) for s in self.segments])
        return self._at(theta, np.asarray(point["gamma"], dtype=float))

    def log_density(self, stats) -> float:
        """``log p(gamma) = sum_k gamma_k log rho + (1 - gamma_k) log(1 - rho)``, ``gamma_k ~
        Bernoulli(rho)`` (Luts-Ormerod section 3.2; Polson-Scott section 4.2, ``p(gamma)``
        of eq. 16); the priors of ``beta`` and of ``v`` in every column, inactive ones
        included, are their blocks'.
        """
        return float(self.log_prior(stats[self.name].inclusion.sum()))

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``beta`` and ``v`` with their priors, ``gamma ~ Bernoulli(rho)``, ``u = gamma v``."""
        import pymc as pm

        for s in self.segments:
            variables[s.name] = s.prior.declare_segment(s.name, s.dim, variables, noncentered)
        dim = self.switched.dim
        gamma = pm.Bernoulli("gamma", p=self.rho, dims=dim)
        u = pm.Deterministic("u", gamma * variables[self.switched.name], dims=dim)
        variables["gamma"], variables["u"] = gamma, u
        variables["f"] = self.design.symbolic_predictor(
            [(self.fixed.slice, variables[self.fixed.name]), (self.switched.slice, u)]
        )
