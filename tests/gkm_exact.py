"""The exact posterior of KernelGKM over active sets, by enumeration (small ``n``).

Zhang, Dai, Wang & Jordan (2010) section 3.1 with ``g`` and ``eta`` fixed: integrating ``(u,
beta_gamma)`` out of ``s = u 1 + K_gamma beta_gamma + eps`` gives ``s | gamma ~ N(0,
Q_gamma)``, ``Q_gamma = I + Kt Sigma^-1 Kt'``, ``Kt = [1, K_gamma]``, ``Sigma = diag(eta, g
K_gamma,gamma)`` (eq. 8), that is ``Q_gamma = I + 1 1' / eta + K_gamma (g K_gamma,gamma)^-1
K_gamma'``. The labels are ``y_i = sign(s_i)``, so ``p(y | gamma) = P(y_i s_i > 0 for all i)``,
an orthant probability of ``N(0, D Q_gamma D)`` with ``D = diag(y)``. With the
Beta-Bernoulli prior of eq. (10) restricted to ``n_gamma <= k_max``, ``p(gamma | y)`` follows
by summing over every such ``gamma``.

A new point's ``s* = u + k*' beta_gamma + eps*`` is jointly Gaussian with ``s`` given
``gamma`` (the same formula with the test row appended to ``K_gamma``), and section 3.3's
Bayesian model average is

    p(y* = +1 | y) = sum_gamma p(gamma | y) P(s* > 0 | y, gamma)
                   = sum_gamma p(gamma) P(y_i s_i > 0 for all i, s* > 0) / p(y),

an ``(n + 1)``-dimensional orthant over the ``n``-dimensional one. The second form shows how
the integration error enters: an absolute error ``epsilon`` in each orthant probability moves
the predictive by at most about ``epsilon / p(y)``.
"""

import itertools
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import betaln, logsumexp
from scipy.stats import multivariate_normal

__all__ = ["ExactGKM", "orthant_probability", "marginal_covariance", "all_active_sets"]

#: Absolute error of each orthant probability (scipy's randomized quasi-Monte Carlo). The
#: evidence ``p(y)`` of the test problems is about 1e-2, so posterior probabilities and
#: predictives are exact to about 1e-4 relative, far below the Monte Carlo errors they are
#: compared with (1e-2 and more).
ORTHANT_TOLERANCE = 1e-6
#: Integration points allowed per orthant probability (scipy's default is 1e6 per dimension).
ORTHANT_MAX_POINTS = 10**7


def orthant_probability(covariance: np.ndarray, seed: int = 0) -> float:
    """``P(z_i > 0 for all i)`` for ``z ~ N(0, covariance)``: by symmetry the normal CDF at 0."""
    dimension = covariance.shape[0]
    return float(
        multivariate_normal.cdf(
            np.zeros(dimension),
            cov=covariance,
            abseps=ORTHANT_TOLERANCE,
            releps=ORTHANT_TOLERANCE,
            maxpts=ORTHANT_MAX_POINTS,
            rng=np.random.default_rng(seed),
        )
    )


def marginal_covariance(
    rows: np.ndarray, kernel: np.ndarray, active: np.ndarray, g: float, eta: float
) -> np.ndarray:
    """``Q = I + 1 1' / eta + R_gamma (g K_gamma,gamma)^-1 R_gamma'`` (eq. 8): the covariance of
    ``s`` at the points whose kernel rows against the training points are ``rows``.

    Parameters
    ----------
    rows : ndarray of shape (m, n)
        ``K(x, x_j)`` for each point ``x`` and training point ``x_j``.
    kernel : ndarray of shape (n, n)
        The training kernel matrix ``K``.
    active : ndarray of int
        The active vectors (indices of the ones in ``gamma``).
    g, eta : float
        The g-prior's and the offset's precisions.
    """
    m = rows.shape[0]
    covariance = np.eye(m) + 1.0 / eta
    if active.size:
        columns = rows[:, active]
        gram = g * kernel[np.ix_(active, active)]
        covariance += columns @ np.linalg.solve(gram, columns.T)
    return covariance


def all_active_sets(n: int, k_max: int) -> np.ndarray:
    """Every ``gamma`` of length ``n`` with at most ``k_max`` ones; row ``i`` is ordered as the
    binary digits of its :func:`ExactGKM.index` (first vector the most significant).
    """
    models = np.array(list(itertools.product([0, 1], repeat=n)), dtype=int)
    return models[models.sum(axis=1) <= k_max]


@dataclass(frozen=True, eq=False)
class ExactGKM:
    """``p(gamma | y)`` and the model-averaged predictive of KernelGKM (module docstring).

    Parameters
    ----------
    kernel : ndarray of shape (n, n)
        The training kernel matrix (``model.kernel_matrix``).
    y : ndarray of shape (n,)
        Labels coded -1/+1.
    g, eta : float
        Fixed precisions.
    k_max : int
        Most active vectors.
    a_alpha, b_alpha : float
        Beta-Bernoulli prior on ``gamma`` (eq. 10).
    """

    kernel: np.ndarray
    y: np.ndarray
    g: float
    eta: float
    k_max: int
    a_alpha: float = 1.0
    b_alpha: float = 1.0

    @property
    def n(self) -> int:
        """Number of training points."""
        return self.y.shape[0]

    @cached_property
    def models(self) -> np.ndarray:
        """Every allowed ``gamma``, shape ``(n_models, n)``."""
        return all_active_sets(self.n, self.k_max)

    def index(self, gamma: np.ndarray) -> np.ndarray:
        """Row of :attr:`models` of each ``gamma`` (rows of a 2-d array of 0/1)."""
        gamma = np.atleast_2d(np.asarray(gamma)).astype(int)
        codes = self.models @ 2 ** np.arange(self.n)[::-1]
        lookup = np.full(2**self.n, -1)
        lookup[codes] = np.arange(codes.shape[0])
        rows = lookup[gamma @ 2 ** np.arange(self.n)[::-1]]
        if np.any(rows < 0):
            raise ValueError("an active set with more than k_max vectors")
        return rows

    @cached_property
    def log_prior(self) -> np.ndarray:
        """``log p(gamma)`` of eq. (10), renormalized over ``n_gamma <= k_max``."""
        k = self.models.sum(axis=1)
        log_prior = betaln(k + self.a_alpha, self.n - k + self.b_alpha)
        return log_prior - logsumexp(log_prior)

    def _covariance(self, gamma: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return marginal_covariance(rows, self.kernel, np.flatnonzero(gamma), self.g, self.eta)

    @cached_property
    def likelihoods(self) -> np.ndarray:
        """``p(y | gamma)`` for each of :attr:`models`: the orthant of ``N(0, D Q D)``."""
        signs = np.outer(self.y, self.y)
        return np.array(
            [
                orthant_probability(signs * self._covariance(gamma, self.kernel))
                for gamma in self.models
            ]
        )

    @cached_property
    def evidence(self) -> float:
        """``p(y) = sum_gamma p(gamma) p(y | gamma)``."""
        return float(np.exp(self.log_prior) @ self.likelihoods)

    @cached_property
    def probabilities(self) -> np.ndarray:
        """``p(gamma | y)`` for each of :attr:`models`."""
        weights = np.exp(self.log_prior) * self.likelihoods
        return weights / weights.sum()

    def inclusion_probabilities(self) -> np.ndarray:
        """``p(gamma_j = 1 | y)`` for each vector."""
        return self.probabilities @ self.models

    def model_size_distribution(self) -> np.ndarray:
        """``p(n_gamma = k | y)`` for ``k = 0 .. k_max``."""
        return np.bincount(
            self.models.sum(axis=1), weights=self.probabilities, minlength=self.k_max + 1
        )

    def predictive(self, kernel_rows: np.ndarray) -> np.ndarray:
        """``p(y* = +1 | y)`` at each new point (section 3.3's model average; module docstring).

        Parameters
        ----------
        kernel_rows : ndarray of shape (n_new, n)
            ``K(x*, x_j)`` for each new point and training point (``model.kernel_between``).
        """
        signs = np.append(self.y, 1.0)
        prior = np.exp(self.log_prior)
        probabilities = np.empty(kernel_rows.shape[0])
        for point, row in enumerate(kernel_rows):
            rows = np.vstack([self.kernel, row])
            joint = np.array(
                [
                    orthant_probability(np.outer(signs, signs) * self._covariance(gamma, rows))
                    for gamma in self.models
                ]
            )
            probabilities[point] = prior @ joint / self.evidence
        return probabilities
