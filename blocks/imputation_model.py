"""The imputation model of Luts-Ormerod (2014) section 3.3: ``d_i ~ N(mu_x, Sigma_x)``.

Priors ``mu_x ~ N(0, sigma2_mu I)`` and ``Sigma_x ~ IW(Psi, nu)`` (defaults ``sigma2_mu = 1e8``,
``Psi = 0.01 I``, ``nu = 3``). Both blocks read the completed rows from the
:class:`~bayesvm.blocks.missing_cells.MissingCells` block: their sum and ``S = sum_i
E[(d_i - mu_x)(d_i - mu_x)^T]``, which under ``q`` adds each row's ``Sigma_q(d_i)`` and
``n Sigma_q(mu)``.

* :class:`ImputationMean` ``mu_x``: Gaussian with precision ``n Lambda + I / sigma2_mu`` and
  mean ``precision^-1 Lambda sum_i d_i`` (``Lambda = Sigma_x^-1``): Appendix C (``mu | rest``),
  Algorithm 4 line 13.
* :class:`ImputationCovariance` ``Sigma_x``: ``IW(Psi + S, nu + n)``: Appendix C
  (``Sigma | rest``), Algorithm 4 line 14 (``mu_q(Sigma^-1) = (nu + n) Psi_q^-1``). It owns the
  factor ``prod_i N(d_i | mu_x, Sigma_x)`` as well as its prior.

With ``nu <= d - 1`` (the paper's ``nu = 3`` for ``d = 4`` predictors) the inverse Wishart is
improper: its density is used unnormalised (the bound then leaves out ``log Gamma_d(nu / 2)``,
which is infinite, a constant); the posterior, ``IW(Psi + S, nu + n)``, is proper.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import digamma, multigammaln

from bayesvm.blocks.base import Block
from bayesvm.blocks.coefficients import LOG_2PI, whitened_log_density
from bayesvm.linalg import (
    cholesky_lower,
    cholesky_solve,
    from_log_cholesky,
    log_cholesky,
    log_det_from_cholesky,
    triangular_solve,
)

__all__ = ["ImputationMean", "ImputationCovariance", "MeanStats", "CovarianceStats"]

LOG_2 = float(np.log(2.0))


class MeanStats(NamedTuple):
    """``E[mu_x]`` and ``Cov(mu_x)`` (0 at a value)."""

    mean: np.ndarray
    covariance: np.ndarray


class CovarianceStats(NamedTuple):
    """``E[Lambda]``, ``E log |Lambda|`` and ``Sigma_x`` (its value, or ``E_q``)."""

    precision: np.ndarray
    log_det_precision: float
    value: np.ndarray


def _row_moments(stats, cells: str, mean: str) -> tuple[int, np.ndarray]:
    """``n`` and ``S = sum_i E[(d_i - mu)(d_i - mu)^T]``."""
    rows, mu = stats[cells], stats[mean]
    n = rows.design.shape[0]
    total = rows.design.sum(axis=0)
    cross = np.outer(total, mu.mean)
    scatter = rows.scatter() - cross - cross.T + n * (np.outer(mu.mean, mu.mean) + mu.covariance)
    return n, scatter


class ImputationMean(Block):
    """``mu_x ~ N(0, sigma2_mu I)``, the mean of the rows (module docstring)."""

    name = "mu_x"
    var_names = ("mu_x",)

    def __init__(self, D, sigma2_mu: float, *, dim: str, cells="x_mis", covariance="Sigma_x"):
        self.start = np.nan_to_num(np.nanmean(D, axis=0))
        self.d = D.shape[1]
        self.sigma2_mu = float(sigma2_mu)
        self.cells, self.covariance = cells, covariance
        self.dims = {"mu_x": [dim]}

    def conditional(self, stats):
        """Factor of ``n Lambda + I / sigma2_mu`` and the mean."""
        precision = stats[self.covariance].precision
        design = stats[self.cells].design
        posterior = design.shape[0] * precision
        posterior.flat[:: self.d + 1] += 1.0 / self.sigma2_mu
        factor = cholesky_lower(posterior)
        return factor, cholesky_solve(factor, precision @ design.sum(axis=0))

    def initial_value(self, stats, rng) -> MeanStats:
        """The column means of the observed values."""
        return MeanStats(self.start, np.zeros((self.d, self.d)))

    def sample(self, params, rng) -> MeanStats:
        """``mu_x ~ N(mean, precision^-1)``."""
        factor, mean = params
        value = mean + triangular_solve(factor, rng.standard_normal(self.d), transpose=True)
        return MeanStats(value, np.zeros((self.d, self.d)))

    def record(self, stats: MeanStats) -> dict[str, np.ndarray]:
        """``mu_x``."""
        return {"mu_x": stats.mean}

    initial_stats = initial_value

    def expected_stats(self, params) -> MeanStats:
        """``q(mu_x)``'s mean and covariance."""
        factor, mean = params
        return MeanStats(mean, cholesky_solve(factor, np.eye(self.d)))

    def bound_term(self, params, stats) -> float:
        """``E log N(mu_x | 0, sigma2_mu I)`` plus the entropy of ``q(mu_x)``."""
        factor, mean = params
        covariance = stats[self.name].covariance
        return (
            -0.5 * self.d * np.log(self.sigma2_mu)
            - 0.5 * (mean @ mean + np.trace(covariance)) / self.sigma2_mu
            + 0.5 * self.d
            - 0.5 * log_det_from_cholesky(factor)
        )

    def draw_q(self, params, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``mu_x`` from ``q``."""
        factor, mean = params
        noise = rng.standard_normal((self.d, size))
        return {"mu_x": mean + triangular_solve(factor, noise, transpose=True).T}

    def q_log_density(self, params, draws) -> np.ndarray:
        """``log N(mu_x | mean, precision^-1)`` at the draws."""
        factor, mean = params
        whitened = (draws["mu_x"] - mean) @ factor
        return whitened_log_density(whitened, log_det_from_cholesky(factor))

    def q_moments(self, params) -> dict:
        """``q(mu_x)``'s mean and sd."""
        factor, mean = params
        inverse_factor = triangular_solve(factor, np.eye(self.d))
        return {"mu_x": (mean, np.sqrt(np.sum(inverse_factor**2, axis=0)))}

    def variational(self, params) -> dict:
        """``q(mu_x)``'s mean and covariance."""
        factor, mean = params
        (dim,) = self.dims["mu_x"]
        covariance = cholesky_solve(factor, np.eye(self.d))
        return {"mu_x_mean": ([dim], mean), "mu_x_covariance": ([dim, f"{dim}_"], covariance)}

    def point_stats(self, point, stats) -> MeanStats:
        """``mu_x`` from ``point``."""
        return MeanStats(point["mu_x"], np.zeros((self.d, self.d)))

    def log_density(self, stats) -> float:
        """``log N(mu_x | 0, sigma2_mu I) = -mu_x^T mu_x / (2 sigma2_mu)`` up to a constant
        (Luts-Ormerod section 3.3, the imputation model's prior on ``mu``).
        """
        mean = stats[self.name].mean
        return -0.5 * float(mean @ mean) / self.sigma2_mu

    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``mu_x ~ N(0, sigma2_mu I)``."""
        import pymc as pm

        variables["mu_x"] = pm.Normal(
            "mu_x", 0.0, sigma=np.sqrt(self.sigma2_mu), dims=self.dims["mu_x"]
        )


class ImputationCovariance(Block):
    """``Sigma_x ~ IW(Psi, nu)``, the covariance of the rows, and the rows' density
    ``prod_i N(d_i | mu_x, Sigma_x)`` (module docstring).
    """

    name = "Sigma_x"
    var_names = ("Sigma_x",)
    supports = {"Sigma_x": "covariance"}

    def __init__(self, D, psi: np.ndarray, nu: float, *, dims: list, cells="x_mis", mean="mu_x"):
        self.n, self.d = D.shape
        self.psi = np.asarray(psi, dtype=float)
        self.nu = float(nu)
        self.cells, self.mean = cells, mean
        self.dims = {"Sigma_x": list(dims)}
        variance = np.nanvar(D, axis=0)
        variance[~(variance > 0)] = 1.0  # a column observed once, or never
        self.start = np.diag(variance)
        self.proper = self.nu > self.d - 1
        self.psi_factor = cholesky_lower(self.psi)
        self.log_det_psi = log_det_from_cholesky(self.psi_factor)

    def conditional(self, stats):
        """``(factor of Psi + S, nu + n)``."""
        n, scatter = _row_moments(stats, self.cells, self.mean)
        return cholesky_lower(self.psi + scatter), self.nu + n

    def _at(self, sigma: np.ndarray) -> CovarianceStats:
        factor = cholesky_lower(sigma)
        return CovarianceStats(
            cholesky_solve(factor, np.eye(self.d)), -log_det_from_cholesky(factor), sigma
        )

    def initial_value(self, stats, rng) -> CovarianceStats:
        """The observed columns' variances, no correlation."""
        return self._at(self.start)

    initial_stats = initial_value

    def sample(self, params, rng) -> CovarianceStats:
        """``Lambda = Sigma_x^-1 ~ Wishart((Psi + S)^-1, nu + n)`` by Bartlett's decomposition."""
        factor, df = params
        return self._at(np.linalg.inv(_wishart_draws(factor, df, rng, 1)[0]))

    def record(self, stats: CovarianceStats) -> dict[str, np.ndarray]:
        """``Sigma_x``."""
        return {"Sigma_x": stats.value}

    def expected_stats(self, params) -> CovarianceStats:
        """``E[Lambda] = (nu + n) Psi_q^-1``, ``E log |Lambda| = sum_j psi((nu + n + 1 - j) / 2)
        + d log 2 - log |Psi_q|`` and ``E[Sigma_x] = Psi_q / (nu + n - d - 1)``.
        """
        factor, df = params
        psi_q = factor @ factor.T
        log_det = (
            float(digamma(0.5 * (df - np.arange(self.d))).sum())
            + self.d * LOG_2
            - log_det_from_cholesky(factor)
        )
        return CovarianceStats(
            df * cholesky_solve(factor, np.eye(self.d)), log_det, psi_q / (df - self.d - 1.0)
        )

    def bound_term(self, params, stats) -> float:
        """The rows' density, the prior and the entropy of ``q(Sigma_x)``.

        ``E log prod_i N(d_i | mu_x, Sigma_x) + E log IW(Sigma_x | Psi, nu) - E log q(Sigma_x)
        = -n d log(2 pi) / 2 + (n + nu - nu_q) E log |Lambda| / 2 - tr((S + Psi - Psi_q)
        E Lambda) / 2`` plus the prior's and ``q``'s normalisers, with ``E[Lambda]`` and ``E log
        |Lambda|`` of :meth:`expected_stats`; ``nu_q = nu + n`` and ``Psi_q = Psi + S`` cancel
        the middle terms at the update.
        """
        factor, df = params
        n, scatter = _row_moments(stats, self.cells, self.mean)
        current = stats[self.name]
        # E log |Lambda| coefficients: data n/2, prior (nu + d + 1)/2, q -(df + d + 1)/2.
        log_det_term = 0.5 * (n + self.nu - df) * current.log_det_precision
        trace = np.sum((scatter + self.psi - factor @ factor.T) * current.precision)
        q_normaliser = 0.5 * df * log_det_from_cholesky(factor) - 0.5 * df * self.d * LOG_2
        q_normaliser -= multigammaln(0.5 * df, self.d)
        prior_normaliser = 0.0
        if self.proper:
            prior_normaliser = (
                0.5 * self.nu * self.log_det_psi
                - 0.5 * self.nu * self.d * LOG_2
                - multigammaln(0.5 * self.nu, self.d)
            )
        return (
            -0.5 * n * self.d * LOG_2PI
            + log_det_term
            - 0.5 * trace
            + prior_normaliser
            - q_normaliser
        )

    def draw_q(self, params, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``Sigma_x`` from ``q = IW(Psi_q, nu + n)``."""
        factor, df = params
        return {"Sigma_x": np.linalg.inv(_wishart_draws(factor, df, rng, size))}

    def q_log_density(self, params, draws) -> np.ndarray:
        """``log IW(Sigma_x | Psi_q, nu_q) = (nu_q log |Psi_q| - nu_q d log 2) / 2 - log
        Gamma_d(nu_q / 2) - (nu_q + d + 1) log |Sigma_x| / 2 - tr(Psi_q Sigma_x^-1) / 2`` at
        the draws (over the entries on and below the diagonal, as the prior's density).
        """
        factor, df = params
        sigma_factors = np.linalg.cholesky(draws["Sigma_x"])  # (S, d, d)
        log_det = 2.0 * np.sum(np.log(np.diagonal(sigma_factors, axis1=1, axis2=2)), axis=1)
        half = np.linalg.solve(sigma_factors, np.broadcast_to(factor, sigma_factors.shape))
        normaliser = 0.5 * df * (log_det_from_cholesky(factor) - self.d * LOG_2) - multigammaln(
            0.5 * df, self.d
        )
        return normaliser - 0.5 * (df + self.d + 1.0) * log_det - 0.5 * np.sum(half**2, (1, 2))

    def q_moments(self, params) -> dict:
        """Mean and sd of each entry of ``Sigma_x`` under ``q = IW(Psi_q, nu)`` with ``d``
        rows: ``Psi_q / (nu - d - 1)``, and variance ``((nu - d + 1) psi_ij^2 + (nu - d - 1)
        psi_ii psi_jj) / ((nu - d) (nu - d - 1)^2 (nu - d - 3))`` (Press 1982, section 5.2);
        infinite where ``nu <= d + 1`` or ``nu <= d + 3``.
        """
        factor, df = params
        scale = factor @ factor.T
        excess = df - self.d
        mean = scale / (excess - 1.0) if excess > 1.0 else np.full_like(scale, np.inf)
        if excess <= 3.0:
            return {"Sigma_x": (mean, np.full_like(scale, np.inf))}
        diagonal = np.diag(scale)
        variance = ((excess + 1.0) * scale**2 + (excess - 1.0) * np.outer(diagonal, diagonal)) / (
            excess * (excess - 1.0) ** 2 * (excess - 3.0)
        )
        return {"Sigma_x": (mean, np.sqrt(variance))}

    def variational(self, params) -> dict:
        """``q(Sigma_x)``'s scale matrix and degrees of freedom."""
        factor, df = params
        return {"Sigma_x_scale": (self.dims["Sigma_x"], factor @ factor.T), "Sigma_x_df": ((), df)}

    def point_stats(self, point, stats) -> CovarianceStats:
        """``Lambda = Sigma_x^-1`` and ``log |Lambda|`` at ``Sigma_x`` from ``point``."""
        return self._at(point["Sigma_x"])

    def log_density(self, stats) -> float:
        """``log prod_i N(d_i | mu_x, Sigma_x) + log IW(Sigma_x | Psi, nu)`` over the completed
        rows, up to a constant: ``(n + nu + d + 1) log |Lambda| / 2 - tr((S + Psi) Lambda) / 2``
        with ``S = sum_i (d_i - mu_x)(d_i - mu_x)^T`` (Luts-Ormerod section 3.3, the
        imputation model ``d_i | mu, Sigma ~ N(mu, Sigma)``, ``Sigma ~ IW(Psi, nu)``).
        """
        n, scatter = _row_moments(stats, self.cells, self.mean)
        current = stats[self.name]
        return 0.5 * (n + self.nu + self.d + 1.0) * current.log_det_precision - 0.5 * float(
            np.sum((scatter + self.psi) * current.precision)
        )

    def pymc_log_jacobian(self, values) -> float:
        """``log |d Sigma_x / d(s, lower part)| = sum_j (d - j + 2) log L_jj`` up to a
        constant, ``j = 1..d``, ``L`` the Cholesky factor of ``Sigma_x`` and ``s = log dg(L)``:
        PyMC's free variables (:meth:`to_pymc`), whose ``Sigma_x_prior`` potential holds it.
        """
        coordinates = log_cholesky(np.asarray(values["Sigma_x"]))
        return from_log_cholesky(coordinates, self.d)[1]

    def pymc_values(self, point) -> dict[str, np.ndarray]:
        """PyMC's ``(s, lower part)`` of the Cholesky factor of ``Sigma_x`` (:meth:`to_pymc`)."""
        coordinates = log_cholesky(np.asarray(point["Sigma_x"]))
        return {
            "Sigma_x_log_diagonal": coordinates[: self.d],
            "Sigma_x_lower": coordinates[self.d :],
        }

    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``Sigma_x = L L^T`` with ``L`` lower triangular, its diagonal ``exp(s)``: flat
        ``(s, lower part)`` and the potentials ``Sigma_x_prior`` (the IW density with the
        Jacobian ``prod_j L_jj^(d - j + 2)``, ``j = 1..d``) and ``rows`` (``prod_i N(d_i |
        mu_x, Sigma_x)``).
        """
        import pymc as pm
        import pytensor.tensor as pt
        from pytensor.tensor.slinalg import solve_triangular

        d = self.d
        log_diagonal = pm.Flat("Sigma_x_log_diagonal", shape=d)
        rows, columns = np.tril_indices(d, -1)
        lower = pm.Flat("Sigma_x_lower", shape=rows.size)
        factor = pt.zeros((d, d))
        factor = pt.set_subtensor(factor[np.arange(d), np.arange(d)], pt.exp(log_diagonal))
        factor = pt.set_subtensor(factor[rows, columns], lower)
        pm.Deterministic("Sigma_x", factor @ factor.T, dims=self.dims["Sigma_x"])
        log_det = 2.0 * pt.sum(log_diagonal)
        psi_half = solve_triangular(factor, self.psi_factor, lower=True)
        jacobian = pt.sum((d - np.arange(d) + 1.0) * log_diagonal)
        pm.Potential(
            "Sigma_x_prior",
            -0.5 * (self.nu + d + 1.0) * log_det - 0.5 * pt.sum(psi_half**2) + jacobian,
        )
        design = variables["D"]
        residual = solve_triangular(factor, (design - variables["mu_x"]).T, lower=True)
        pm.Potential("rows", -0.5 * pt.sum(residual**2) - 0.5 * self.n * log_det)


def _wishart_draws(scale_factor: np.ndarray, df: float, rng, size: int) -> np.ndarray:
    """``size`` draws of ``Wishart(Psi_q^-1, df)`` given the lower factor of ``Psi_q``
    (Bartlett: ``W = L A A^T L^T``, ``L L^T = Psi_q^-1``, ``A`` lower triangular with
    ``A_jj^2 ~ chi2(df - j)``, ``j = 0..d-1``, and standard normals below).
    """
    d = scale_factor.shape[0]
    inverse = cholesky_solve(scale_factor, np.eye(d))
    factor = cholesky_lower(inverse)
    bartlett = np.zeros((size, d, d))
    rows, columns = np.tril_indices(d, -1)
    bartlett[:, rows, columns] = rng.standard_normal((size, rows.size))
    bartlett[:, np.arange(d), np.arange(d)] = np.sqrt(rng.chisquare(df - np.arange(d), (size, d)))
    half = factor @ bartlett
    return half @ np.swapaxes(half, -1, -2)
