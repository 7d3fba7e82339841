"""The Jaakkola-Jordan bound on the logistic likelihood (Drugowitsch 2019, sections 3.2-3.5).

``sigma(z) >= sigma(xi) exp((z - xi)/2 - lambda(xi) (z^2 - xi^2))`` with ``lambda(xi) =
tanh(xi/2) / (4 xi)`` (eq. 45). With ``z = y_n f_n``, ``f_n = w^T x_n`` and labels ``y_n`` of
-1/+1, the bound ``h(f_n, xi_n)`` is Gaussian in ``f_n``, and VB maximises the bound
``L~(Q, xi)`` (eq. 47) over ``Q`` and the ``xi_n``:

* :class:`JaakkolaJordan` -- the ``xi_n`` as a block updated in a batch (``vb_logit_fit.m``,
  ``vb_logit_fit_ard.m``). VB: ``xi_n^2 = E[f_n^2]`` (eq. 63), and the coefficient block reads
  ``weights = 2 lambda(xi)`` and ``response = y / 2``, which make ``q(w)`` eq. 49-50 (72-73
  with ARD).
* :class:`SequentialJaakkolaJordan` -- ``q(w)`` and the ``xi_n`` updated together, one
  observation at a time, under a fixed prior (section 3.5.1, ``vb_logit_fit_iter.m``). VB:
  eq. 82-91 (class docstring).

Gibbs and EM: none. The ``xi_n`` are parameters of a bound, not random variables, so they have
no conditional to draw from or maximise over; the models with these blocks are sampled by NUTS
on the exact likelihood (the blocks' ``to_pymc``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import blas
from scipy.special import log_expit

from bayesvm.blocks.base import Block
from bayesvm.blocks.coefficients import GaussianCoefficients, Segment
from bayesvm.blocks.gaussian_priors import FixedPrecision
from bayesvm.blocks.hinge import LikelihoodStats

__all__ = [
    "JaakkolaJordan",
    "SequentialJaakkolaJordan",
    "SequentialState",
    "jaakkola_lambda",
    "optimal_xi",
]

# The scalar fixed point for one xi_j is iterated to this relative precision (cheap: no
# matrix work), or at most this many times.
XI_TOL = 1e-10
XI_MAX_ITER = 500


def jaakkola_lambda(xi: np.ndarray) -> np.ndarray:
    """``lambda(xi) = tanh(xi / 2) / (4 xi)`` (eq. 45), with its limit 1/8 at ``xi = 0``."""
    xi = np.abs(xi)
    small = xi < 1e-6
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125, np.tanh(safe / 2.0) / (4.0 * safe))


class JaakkolaJordan(Block):
    """The bound parameters ``xi_n`` of the logistic likelihood of labels ``y`` (-1/+1).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels coded -1/+1.
    X : ndarray of shape (n_samples, n_features)
        Inputs, for the first ``xi`` under the prior.
    prior : str
        Name of the block of the prior precision of the coefficients, whose initial value
        sets the first ``xi``.
    coefficients : str
        Name of the coefficient block whose linear predictor ``f`` the bound is on.
    """

    name = "jaakkola_jordan"
    latent = True

    def __init__(self, y: np.ndarray, X: np.ndarray, prior: str, coefficients: str = "theta"):
        self.y, self.X = y, X
        self.prior = prior
        self.coefficients = coefficients
        self.half_y = y / 2.0

    def conditional(self, stats) -> np.ndarray:
        """``xi_n = E[f_n^2]^1/2 = (E[f_n]^2 + Var[f_n])^1/2`` (eq. 63)."""
        coefficients = stats[self.coefficients]
        return np.sqrt(coefficients.f_mean**2 + coefficients.f_var)

    def initial_stats(self, stats, start=None) -> LikelihoodStats:
        """``xi`` from ``q(w)`` at the prior ``N(0, diag(1 / E(alpha)))`` before the first
        update: ``xi_n^2 = sum_d x_nd^2 / E(alpha_d)``.
        """
        xi = np.sqrt(self.X**2 @ (1.0 / stats[self.prior].precision))
        return self.expected_stats(xi)

    def expected_stats(self, xi: np.ndarray) -> LikelihoodStats:
        """``weights = 2 lambda(xi)`` and ``response = y / 2`` (eq. 49-50)."""
        return LikelihoodStats(2.0 * jaakkola_lambda(xi), self.half_y)

    def bound_term(self, xi: np.ndarray, stats) -> float:
        """``E ln h(f, xi) = sum_n ln sigma(xi_n) + y_n E[f_n] / 2 - xi_n / 2 -
        lambda(xi_n) (E[f_n^2] - xi_n^2)`` (the data terms of eq. 56-61 / 76-79); the last
        term vanishes right after the update.
        """
        coefficients = stats[self.coefficients]
        second_moment = coefficients.f_mean**2 + coefficients.f_var
        return float(
            self.half_y @ coefficients.f_mean
            + np.sum(log_expit(xi) - xi / 2.0 - jaakkola_lambda(xi) * (second_moment - xi**2))
        )

    def variational(self, xi: np.ndarray) -> dict:
        """The ``xi_n``."""
        return {"xi": (["obs_id"], xi)}

    def log_density(self, stats) -> float:
        """The exact log likelihood ``sum_n ln sigma(y_n f_n)`` (eq. 38-39) that the bound
        bounds: the model's density (``xi`` is no variable of the model).
        """
        return float(np.sum(log_expit(self.y * stats[self.coefficients].f_mean)))

    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """The exact likelihood, ``y_n ~ Bernoulli(sigma(f_n))`` (eq. 38-39)."""
        import pymc as pm

        pm.Bernoulli("y", logit_p=variables["f"], observed=(self.y > 0).astype(int))


def _lambda(xi: float) -> float:
    """Scalar :func:`jaakkola_lambda`, for the sequential sweep's inner loop."""
    return 0.125 if xi < 1e-6 else math.tanh(xi / 2.0) / (4.0 * xi)


def optimal_xi(a: float, u: float, lam: float) -> tuple[float, float]:
    """Maximise ``L_j(xi)`` (:class:`SequentialJaakkolaJordan`) by its fixed point, starting
    from ``lam``; return ``xi`` and ``lambda(xi)``.
    """
    xi = math.inf
    for _ in range(XI_MAX_ITER):
        k = 1.0 + 2.0 * lam * a
        xi_new = math.sqrt(a / k + (u / k) ** 2)
        lam = _lambda(xi_new)
        if abs(xi_new - xi) <= XI_TOL * xi_new:
            break
        xi = xi_new
    return xi_new, lam


class SequentialState(NamedTuple):
    """``q(w)`` and the bound parameters after a sweep (names as ``vb_logit_fit_iter.m``)."""

    w: np.ndarray
    V: np.ndarray
    xi: np.ndarray
    lam: np.ndarray  # lambda(xi_n); 0 for observations not yet in the posterior
    entered: bool  # every observation is in the posterior (after the first sweep)


class SequentialQ(NamedTuple):
    """``q(w)`` recomputed after a sweep (a Gaussian block's conditional) and the ``xi_n``."""

    coefficients: object  # GaussianConditional of the coefficient block
    xi: np.ndarray
    lam: np.ndarray


class SequentialJaakkolaJordan(Block):
    """``q(w)`` and the ``xi_n`` under the fixed prior ``w ~ N(0, diag(1 / prior_precision))``,
    updated one observation at a time (Drugowitsch section 3.5.1, ``vb_logit_fit_iter.m``).

    ``q(w) = N(w_N, V_N)`` with ``V_N^-1 = diag(prior) + 2 sum_n lambda(xi_n) x_n x_n^T`` and
    ``w_N = V_N t``, ``t = sum_n y_n x_n / 2``. A sweep (the block's conditional) visits the
    observations in order. For observation ``j`` let ``C`` be the covariance without its term,
    ``a = x_j^T C x_j`` and ``u = x_j^T C t``. By Sherman-Morrison (eq. 85-87) the bound depends
    on ``xi_j`` only through

        ``L_j(xi) = -lambda u^2 / k - ln(k) / 2 + ln sigma(xi) - xi/2 + lambda xi^2``,
        ``k = 1 + 2 lambda(xi) a``   (eq. 91 up to terms free of ``xi_j``),

    which the fixed point ``xi^2 = x_j^T (V_j + w_j w_j^T) x_j = a / k + (u / k)^2`` climbs (eq.
    63 for a single point), so ``xi_j`` is optimised with scalars; then ``V_N`` and ``w_N`` take a
    rank-one update (eq. 82-85). The first sweep starts from the prior and lets each
    observation enter the posterior as it is visited: it is exactly the single pass of
    ``vb_logit_fit_iter.m`` (eq. 82-90). Later sweeps revisit each ``xi_j`` with the others
    fixed, which is coordinate ascent on ``L~(Q, xi)`` over all data; ``max_iter=1`` stops after
    the paper's pass. After every sweep ``q(w)`` is recomputed exactly, as the Gaussian block's
    conditional given ``weights = 2 lambda(xi)`` (so rank-one round-off never accumulates).

    There is no Gibbs or EM counterpart (module docstring). The block owns every factor: its
    bound term is ``L~ = w_N^T t / 2 + ln|V_N| / 2 - ln|V_0| / 2 + sum_n (ln sigma(xi_n) -
    xi_n/2 + lambda(xi_n) xi_n^2)``, eq. 56-61 with ``q(w)`` optimal given ``xi``.

    Parameters
    ----------
    design : DenseDesign
        The inputs ``X`` (:mod:`bayesvm.blocks.design`).
    y : ndarray of shape (n_samples,)
        Labels coded -1/+1.
    prior_precision : ndarray of shape (n_features,)
        ``dg(V_0^-1)``: ``D`` for every weight in Drugowitsch's eq. 81.
    coefficient_names : list of str
        Coordinates of ``w``.
    dim : str
        Dimension of ``w``.
    """

    name = "w_xi"
    var_names = ("w",)

    def __init__(self, design, y, prior_precision, coefficient_names, dim: str = "feature"):
        self.X, self.y = design.dense(), y
        segment = slice(0, design.n_coefficients)
        self.prior = FixedPrecision("w_prior", prior_precision, self.name, segment)
        self.likelihood = JaakkolaJordan(y, self.X, self.prior.name, coefficients=self.name)
        self.coefficients = GaussianCoefficients(
            design,
            [Segment("w", dim, segment, self.prior)],
            likelihood=self.likelihood.name,
            coefficient_names=coefficient_names,
        )
        self.dims = self.coefficients.dims
        self.half_Xty = self.coefficients.design.transpose_times(self.likelihood.half_y)

    def _prior_state(self) -> SequentialState:
        """The prior, no observation in the posterior yet (eq. 81)."""
        n_samples = self.y.shape[0]
        return SequentialState(
            w=np.zeros(self.coefficients.size),
            V=np.diag(1.0 / self.prior.stats.precision),
            xi=np.zeros(n_samples),
            lam=np.zeros(n_samples),
            entered=False,
        )

    def conditional(self, stats) -> SequentialQ:
        """One sweep from the block's current ``q`` (the prior before the first)."""
        state = stats.get(self.name)
        if state is None:
            state = self._prior_state()
        X, y = self.X, self.y
        V = np.array(state.V, order="F")  # only its upper triangle is kept up to date
        w = state.w.copy()
        lam, xi = state.lam.copy(), state.xi.copy()
        entering = 0.0 if state.entered else 1.0
        for j in range(y.shape[0]):
            x, y_j = X[j], y[j]
            s = blas.dsymv(1.0, V, x)  # V x
            v, m = float(x @ s), float(x @ w)
            # Without observation j's own term (eq. 85 backwards): C x = s / k_old.
            k_old = 1.0 - 2.0 * lam[j] * v
            a = v / k_old
            u = (m + entering * y_j * v / 2.0) / k_old
            xi[j], lam_j = optimal_xi(a, u, lam[j] if state.entered else 0.125)
            delta = lam_j - lam[j]
            g = 2.0 * delta / (1.0 + 2.0 * delta * v)
            # w_j = V_j (V_{j-1}^-1 w_{j-1} + y_j x_j / 2) (eq. 84) and V_j (eq. 85).
            w += s * (entering * y_j / 2.0 - g * (m + entering * y_j * v / 2.0))
            V = blas.dsyr(-g, s, a=V, overwrite_a=1)
            lam[j] = lam_j
        exact = {
            self.likelihood.name: LikelihoodStats(2.0 * lam, self.likelihood.half_y),
            self.prior.name: self.prior.stats,
        }
        return SequentialQ(self.coefficients.conditional(exact), xi, lam)

    def expected_stats(self, params: SequentialQ) -> SequentialState:
        """The state the next sweep starts from."""
        gaussian, mean = params.coefficients
        return SequentialState(mean, gaussian.covariance(), params.xi, params.lam, entered=True)

    def bound_term(self, params: SequentialQ, stats) -> float:
        """``L~`` of the class docstring."""
        gaussian, mean = params.coefficients
        xi = params.xi
        return float(
            0.5 * mean @ self.half_Xty
            + 0.5 * (self.prior.log_precision_sum - gaussian.log_det_precision())
            + np.sum(log_expit(xi) - xi / 2.0 + params.lam * xi**2)
        )

    def draw_q(self, params: SequentialQ, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``w`` from ``q``."""
        return self.coefficients.draw_q(params.coefficients, rng, size)

    def q_log_density(self, params: SequentialQ, draws) -> np.ndarray:
        """``log q(w)``, the Gaussian's (``xi`` is no variable of the model)."""
        return self.coefficients.q_log_density(params.coefficients, draws)

    def q_moments(self, params: SequentialQ) -> dict:
        """``q(w)``'s mean and sd."""
        return self.coefficients.q_moments(params.coefficients)

    def variational(self, params: SequentialQ) -> dict:
        """``q(w)``'s parameters (``w_mean``, ``V``, ``invV``, ``logdetV``) and the ``xi_n``."""
        return self.coefficients.variational(params.coefficients) | self.likelihood.variational(
            params.xi
        )

    def variational_coords(self) -> dict:
        """Coordinates of the covariance's second dimension."""
        return self.coefficients.variational_coords()

    def point_stats(self, point, stats):
        """The coefficient block's statistics at ``w``."""
        return self.coefficients.point_stats(point, stats)

    def log_density(self, stats) -> float:
        """``log N(w | 0, V_0)`` and the exact logistic log likelihood, up to a constant."""
        inner = {self.name: stats[self.name], self.prior.name: self.prior.stats}
        return self.prior.log_density(inner) + self.likelihood.log_density(inner)

    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``w ~ N(0, V_0)`` (eq. 81) and the exact logistic likelihood."""
        self.coefficients.to_pymc(variables, noncentered)
        self.likelihood.to_pymc(variables, noncentered)
