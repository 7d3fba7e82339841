"""Missing predictor values as a block (Luts-Ormerod 2014, section 3.3).

The linear predictor is ``f_i = x_i^T beta + d_i^T u`` (``x_i = 1`` in section 3.3), and the
rows of ``D`` have the imputation model ``d_i ~ N(mu_x, Sigma_x)``
(:mod:`bayesvm.blocks.imputation_model`). The missing cells ``D_mis`` are one more block; the
coefficient block reads the completed design from it. With ``Lambda = Sigma_x^-1``, ``w_i`` and
``r_i = y_i (1 + w_i)`` the hinge block's weight and response, and ``O_i`` / ``M_i`` the
observed and missing columns of row ``i``, the complete conditional of ``d_i,M`` is Gaussian:

    precision ``Lambda_MM + w_i [u u^T]_MM``,
    mean ``precision^-1 [Lambda mu_x + r_i u - w_i [u beta^T] x_i
    - (Lambda_MO + w_i [u u^T]_MO) d_i,O]_M``

* Gibbs: Luts-Ormerod Appendix C, last line (``u u^T`` and ``u beta`` at their values);
* VB: Algorithm 4 lines 6-9 (``E[u u^T] = Omega_q(u)``, ``E[u beta] = [Omega_q(beta, u)]_-1,1``,
  ``E[Lambda] = mu_q(Sigma^-1)``); the predictor's moments that the hinge block reads (line 10)
  add the design's uncertainty, ``Var f_i = c~_i^T Sigma_q(theta) c~_i + tr(Omega_q(u)
  Sigma_q(d_i))``, and the coefficient block's precision adds ``sum_i w_i Sigma_q(c_i)``
  (line 3).

One factorisation per missingness pattern, not per row: rows that miss the same columns share
``A = Lambda_MM`` and ``B = [u u^T]_MM`` and differ only in ``w_i``. With ``A = L L^T`` and the
eigendecomposition ``L^-1 B L^-T = V diag(e) V^T``, ``T = L^-T V`` gives
``(A + w_i B)^-1 = T diag(1 / (1 + w_i e)) T^T`` for every row at once (``O(m^3)`` per pattern,
``O(m^2)`` per row), ``log |A + w_i B| = log |A| + sum log(1 + w_i e)`` and
``tr(B (A + w_i B)^-1) = sum e / (1 + w_i e)``.

The block is the predictor the hinge reads: it is visited right after the coefficients (as in
Algorithm 4), so its ``f_mean`` / ``f_var`` combine both blocks' current ``q`` (or values).
Gibbs follows its draw with slice moves of the coefficients on the completed design, the
hinge's augmentation integrated out (:class:`ImputedCoefficientSlice`,
:mod:`bayesvm.blocks.marginal_slice`); the hinge block, next in the sweep, redraws it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayesvm.blocks.base import Block
from bayesvm.blocks.coefficients import (
    LOG_2PI,
    GaussianCoefficients,
    GaussianConditional,
    whitened_log_density,
)
from bayesvm.blocks.marginal_slice import CoefficientSlice
from bayesvm.linalg import cholesky_lower, triangular_solve

__all__ = [
    "MissingPattern",
    "missing_patterns",
    "imputation_conditionals",
    "mean_filled",
    "MissingCells",
    "CellStats",
    "ImputedCoefficients",
    "CoefficientMoments",
    "ImputedCoefficientSlice",
]


class MissingPattern(NamedTuple):
    """Rows that miss the same columns."""

    rows: np.ndarray  # row indices
    missing: np.ndarray  # missing columns (sorted)
    observed: np.ndarray  # observed columns (sorted)
    cells: np.ndarray  # (rows, missing): each cell's position in x_mis


def missing_patterns(mask: np.ndarray) -> list[MissingPattern]:
    """Group the rows of a missingness ``mask`` (True where missing) by pattern; complete
    rows are left out. Cells are numbered row by row (``D[mask]``'s order).
    """
    cell_index = np.full(mask.shape, -1)
    cell_index[mask] = np.arange(int(mask.sum()))
    incomplete = np.flatnonzero(mask.any(axis=1))
    patterns, inverse = np.unique(mask[incomplete], axis=0, return_inverse=True)
    columns = np.arange(mask.shape[1])
    groups = []
    for k, pattern in enumerate(patterns):
        rows = incomplete[inverse.ravel() == k]
        missing = columns[pattern]
        groups.append(
            MissingPattern(rows, missing, columns[~pattern], cell_index[np.ix_(rows, missing)])
        )
    return groups


def imputation_conditionals(D: np.ndarray, patterns, mean: np.ndarray, covariance: np.ndarray):
    """For each pattern of ``patterns`` (:func:`missing_patterns` of ``D``'s rows), the
    conditional of its rows' missing cells given their observed ones under ``N(mean,
    covariance)``, for a batch of ``mean`` ``(s, K)`` and ``covariance`` ``(s, K, K)``:
    ``(pattern, means (s, rows, m), covariances (s, m, m))``, the means ``mu_M + Sigma_MO
    Sigma_OO^-1 (d_O - mu_O)`` and covariance ``Sigma_MM - Sigma_MO Sigma_OO^-1 Sigma_OM``.
    ``D``'s missing cells are not read.
    """
    for pattern in patterns:
        gone, seen = pattern.missing, pattern.observed
        cross = covariance[:, gone][:, :, seen]  # Sigma_MO
        gain = np.swapaxes(
            np.linalg.solve(covariance[:, seen][:, :, seen], np.swapaxes(cross, 1, 2)), 1, 2
        )  # Sigma_MO Sigma_OO^-1
        centred = D[np.ix_(pattern.rows, seen)][None] - mean[:, None, seen]
        means = mean[:, None, gone] + np.einsum("smo,sro->srm", gain, centred)
        yield (
            pattern,
            means,
            covariance[:, gone][:, :, gone] - np.einsum("smo,sko->smk", gain, cross),
        )


def mean_filled(D: np.ndarray) -> np.ndarray:
    """``D`` with each missing (NaN) cell replaced by its column's observed mean."""
    return np.where(np.isnan(D), np.nanmean(D, axis=0), D)


class CoefficientMoments(NamedTuple):
    """A coefficient block's statistics with the full covariance (the cells' conditional
    needs ``E[theta theta^T]``).
    """

    mean: np.ndarray
    square: np.ndarray
    f_mean: np.ndarray
    f_var: np.ndarray | float
    log_scale: float
    covariance: np.ndarray  # Cov(theta) under q (0 at a value)

    @property
    def second_moment(self) -> np.ndarray:
        """``E[theta theta^T]``."""
        return self.covariance + np.outer(self.mean, self.mean)


class ImputedCoefficients(GaussianCoefficients):
    """Coefficients ``theta = (beta, u)`` on the design ``[X, D]`` completed by a
    :class:`MissingCells` block (Algorithm 4 line 3; Appendix C, first line).

    ``P = C~^T W C~ + sum_i w_i Sigma_q(c_i) + diag(prior)`` and mean ``P^-1 C~^T r``, with
    ``C~ = [X, E_q D]`` (the completed ``D`` for Gibbs, where the second term is 0).

    Parameters
    ----------
    design : DenseDesign
        ``[X, D]`` with the missing cells of ``D`` filled by a first guess (a Gibbs chain's
        start); each update replaces ``D`` by the cells block's completed design.
    cells : str
        Name of the :class:`MissingCells` block.
    segments, likelihood, coefficient_names
        As for :class:`~bayesvm.blocks.GaussianCoefficients`.
    """

    #: Its :meth:`conditional` takes no tilt: linear response VB is not offered here.
    takes_tilt = False
    #: The inherited mode withdrawn: the missing-data model offers no EM (its imputation
    #: blocks have no M-step), so no block of it claims one.
    mode = None

    def __init__(self, design, cells: str, segments, likelihood, coefficient_names):
        super().__init__(design, segments, likelihood, coefficient_names)
        self.cells = cells

    def gibbs_moves(self, blocks) -> list:
        """None: the likelihood reads ``f`` from the cells block, on the design completed by
        the last draw of the cells, which a rescaling of ``u`` here would leave behind.
        """
        return []

    def conditional(self, stats):
        """``P`` and the mean on the completed design (class docstring)."""
        cells, likelihood = stats[self.cells], stats[self.likelihood]
        design = self.design.with_effects(cells.design)
        precision = self.prior_precision(stats)
        extra = None
        if cells.patterns:
            p = self.design.n_fixed
            extra = np.zeros((self.size, self.size))
            extra[p:, p:] = cells.weighted_covariance(likelihood.weights)
        gaussian = design.gaussian(likelihood.weights, precision, extra)
        return GaussianConditional(
            gaussian, gaussian.solve(design.transpose_times(likelihood.response))
        )

    def _moments(self, theta, design, covariance) -> CoefficientMoments:
        f_var = 0.0 if not covariance.any() else _quadratic_forms(design.matrix, covariance)
        return CoefficientMoments(
            theta,
            theta**2 + np.diag(covariance),
            design.predictor(theta),
            f_var,
            0.0,
            covariance,
        )

    def at(self, theta: np.ndarray, completed: np.ndarray | None = None) -> CoefficientMoments:
        """Statistics at ``theta`` on the design completed by ``completed`` (the cells
        block's ``D``; default the initial design, a chain's start).
        """
        design = self.design if completed is None else self.design.with_effects(completed)
        return self._moments(theta, design, np.zeros((self.size, self.size)))

    def sample(self, params, rng) -> CoefficientMoments:
        """``theta ~ N(mean, P^-1)``."""
        gaussian, mean = params
        theta = gaussian.draw(mean, rng)
        return self._moments(theta, gaussian.design, np.zeros((self.size, self.size)))

    def expected_stats(self, params) -> CoefficientMoments:
        """Mean and covariance of ``q`` (``K`` is small: the covariance is formed)."""
        gaussian, mean = params
        return self._moments(mean, gaussian.design, gaussian.covariance())

    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """Declare each segment with its prior; the :class:`MissingCells` block states ``f``."""
        for s in self.segments:
            variables[s.name] = s.prior.declare_segment(s.name, s.dim, variables, noncentered)


class PatternConditional(NamedTuple):
    """The conditional of one pattern's cells: ``mean`` ``(rows, m)``, covariance of row
    ``i`` ``T diag(scales_i) T^T``.
    """

    mean: np.ndarray
    transform: np.ndarray  # T = L^-T V
    eigenvalues: np.ndarray  # e
    scales: np.ndarray  # 1 / (1 + w_i e), shape (rows, m)
    log_det_base: float  # log |Lambda_MM|


class CellsConditional(NamedTuple):
    """Every pattern's conditional, and the coefficients' moments it was computed from."""

    patterns: list
    theta: CoefficientMoments


class CellStats(NamedTuple):
    """What the cells show the others: the completed design and the predictor's moments."""

    design: np.ndarray  # D with its missing cells at their values / q means
    f_mean: np.ndarray | None
    f_var: np.ndarray | float
    patterns: tuple = ()  # (MissingPattern, PatternConditional) pairs under q; () at a value

    def weighted_covariance(self, weights: np.ndarray) -> np.ndarray:
        """``sum_i weights_i Cov_q(d_i)`` (``d x d``), one ``m x m`` product per pattern."""
        d = self.design.shape[1]
        total = np.zeros((d, d))
        for pattern, conditional in self.patterns:
            diagonal = weights[pattern.rows] @ conditional.scales
            block = (conditional.transform * diagonal) @ conditional.transform.T
            total[np.ix_(pattern.missing, pattern.missing)] += block
        return total

    def scatter(self) -> np.ndarray:
        """``sum_i E[d_i d_i^T]``."""
        return self.design.T @ self.design + self.weighted_covariance(np.ones(self.design.shape[0]))


class MissingCells(Block):
    """The missing cells ``x_mis`` of the predictors ``D`` (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_fixed)
        Design of the coefficients ``beta`` (complete).
    D : ndarray of shape (n_samples, n_features)
        Predictors, NaN where missing.
    coefficients, likelihood, mean, covariance : str
        Names of the coefficient, hinge, ``mu_x`` and ``Sigma_x`` blocks.
    segment_names : tuple of str
        The coefficient segments that multiply ``X`` and ``D`` (``("beta", "u")``), for PyMC.
    dim : str
        Dimension of ``x_mis``.
    """

    name = "x_mis"
    latent = True
    var_names = ("x_mis",)

    def __init__(
        self,
        X,
        D,
        *,
        coefficients: str = "theta",
        likelihood: str = "hinge",
        mean: str = "mu_x",
        covariance: str = "Sigma_x",
        segment_names: tuple = ("beta", "u"),
        dim: str = "missing_cell",
    ):
        self.X = X
        self.mask = np.isnan(D)
        self.patterns = missing_patterns(self.mask)
        self.first_guess = mean_filled(D)
        # What each pattern's conditional reads of the data, the same at every update.
        self.observed_values = [D[np.ix_(p.rows, p.observed)] for p in self.patterns]
        self.n_fixed = X.shape[1]
        self.coefficients, self.likelihood = coefficients, likelihood
        self.mean, self.covariance = mean, covariance
        self.segment_names = segment_names
        self.dims = {"x_mis": [dim]}

    @property
    def n_cells(self) -> int:
        """Number of missing cells."""
        return int(self.mask.sum())

    # -- conditional ------------------------------------------------------------------------
    def conditional(self, stats) -> CellsConditional:
        """Each pattern's Gaussian (module docstring), one factorisation per pattern."""
        theta = stats[self.coefficients]
        likelihood = stats[self.likelihood]
        precision = stats[self.covariance].precision
        prior_shift = precision @ stats[self.mean].mean
        moment = theta.second_moment
        p = self.n_fixed
        u_outer, u_beta = moment[p:, p:], moment[p:, :p]
        u_mean = theta.mean[p:]
        patterns = []
        for pattern, observed in zip(self.patterns, self.observed_values, strict=True):
            M, seen, rows = pattern.missing, pattern.observed, pattern.rows
            w, r = likelihood.weights[rows], likelihood.response[rows]
            rhs = (
                prior_shift[M]
                + r[:, None] * u_mean[M]
                - w[:, None] * (self.X[rows] @ u_beta[M].T)
                - observed @ precision[np.ix_(M, seen)].T
                - w[:, None] * (observed @ u_outer[np.ix_(M, seen)].T)
            )
            factor = cholesky_lower(precision[np.ix_(M, M)])
            half = triangular_solve(factor, u_outer[np.ix_(M, M)])
            eigenvalues, vectors = np.linalg.eigh(triangular_solve(factor, half.T))
            eigenvalues = np.maximum(eigenvalues, 0.0)  # B is positive semi-definite
            transform = triangular_solve(factor, vectors, transpose=True)
            scales = 1.0 / (1.0 + w[:, None] * eigenvalues)
            mean = ((rhs @ transform) * scales) @ transform.T
            log_det = 2.0 * float(np.sum(np.log(np.diag(factor))))
            patterns.append(PatternConditional(mean, transform, eigenvalues, scales, log_det))
        return CellsConditional(patterns, theta)

    def _filled(self, values: list) -> np.ndarray:
        design = self.first_guess.copy()
        for pattern, value in zip(self.patterns, values, strict=True):
            design[np.ix_(pattern.rows, pattern.missing)] = value
        return design

    def _predictor_mean(self, design, theta) -> np.ndarray:
        p = self.n_fixed
        return self.X @ theta.mean[:p] + design @ theta.mean[p:]

    # -- Gibbs ------------------------------------------------------------------------------
    def gibbs_moves(self, blocks) -> list:
        """The coefficients' slice moves on the completed design
        (:class:`ImputedCoefficientSlice`),
        where the likelihood integrates its augmentation out along a line of ``f`` (the
        hinge's ``log_likelihood_along``).
        """
        likelihood = blocks[self.likelihood]
        if not hasattr(likelihood, "log_likelihood_along"):
            return []
        return [ImputedCoefficientSlice(blocks[self.coefficients], self, likelihood)]

    def initial_value(self, stats, rng) -> CellStats:
        """The column means of the observed values (a first guess; the chain moves on)."""
        f_mean = self._predictor_mean(self.first_guess, stats[self.coefficients])
        return CellStats(self.first_guess, f_mean, 0.0)

    def sample(self, params: CellsConditional, rng) -> CellStats:
        """Each row's cells from their Gaussian, through ``T``."""
        values = [
            c.mean + (rng.standard_normal(c.mean.shape) * np.sqrt(c.scales)) @ c.transform.T
            for c in params.patterns
        ]
        design = self._filled(values)
        return CellStats(design, self._predictor_mean(design, params.theta), 0.0)

    def record(self, stats: CellStats) -> dict[str, np.ndarray]:
        """The cells' values, row by row."""
        return {"x_mis": stats.design[self.mask]}

    # -- VB ---------------------------------------------------------------------------------
    def initial_stats(self, stats, start=None) -> CellStats:
        """``q`` concentrated on the column means of the observed values."""
        return CellStats(self.first_guess, None, 0.0)

    def expected_stats(self, params: CellsConditional) -> CellStats:
        """Completed design ``E_q D`` and the predictor's moments (Algorithm 4 line 10)."""
        design = self._filled([c.mean for c in params.patterns])
        theta = params.theta
        f_var = _quadratic_forms(np.hstack([self.X, design]), theta.covariance)
        for pattern, c in zip(self.patterns, params.patterns, strict=True):
            f_var[pattern.rows] += c.scales @ c.eigenvalues  # tr(Omega_q(u) Sigma_q(d_i))
        return CellStats(
            design,
            self._predictor_mean(design, theta),
            f_var,
            tuple(zip(self.patterns, params.patterns, strict=True)),
        )

    def bound_term(self, params: CellsConditional, stats) -> float:
        """The entropy of ``q(D_mis)``: ``sum_i |M_i| (1 + log 2 pi) / 2 + log |Sigma_q(d_i,M)|
        / 2`` (the last line of section 3.3's bound); the factor ``p(D | mu_x, Sigma_x)`` is
        the covariance block's.
        """
        entropy = 0.5 * self.n_cells * (1.0 + LOG_2PI)
        for c in params.patterns:
            entropy += 0.5 * (float(np.log(c.scales).sum()) - c.scales.shape[0] * c.log_det_base)
        return entropy

    def draw_q(self, params: CellsConditional, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of the cells from ``q``."""
        draws = np.empty((size, self.n_cells))
        for pattern, c in zip(self.patterns, params.patterns, strict=True):
            noise = rng.standard_normal((size, *c.mean.shape)) * np.sqrt(c.scales)
            draws[:, pattern.cells] = c.mean + noise @ c.transform.T
        return {"x_mis": draws}

    def q_log_density(self, params: CellsConditional, draws) -> np.ndarray:
        """``sum_i log N(d_i,M | mean_i, T diag(scales_i) T^T)`` at the cells' draws: ``z =
        T^-1 (d_i,M - mean_i) / scales_i^1/2`` are the standard normals :meth:`draw_q` maps,
        and ``log |T diag(scales_i) T^T| = sum log scales_i - log |Lambda_MM|``.
        """
        cells = draws["x_mis"]
        log_q = np.zeros(cells.shape[0])
        for pattern, c in zip(self.patterns, params.patterns, strict=True):
            deviation = cells[:, pattern.cells] - c.mean  # (S, rows, m)
            m = deviation.shape[-1]
            scaled = np.linalg.solve(c.transform, deviation.reshape(-1, m).T).T
            whitened = scaled.reshape(deviation.shape) / np.sqrt(c.scales)
            log_det = c.scales.shape[0] * c.log_det_base - float(np.log(c.scales).sum())
            log_q += whitened_log_density(whitened.reshape(cells.shape[0], -1), log_det)
        return log_q

    def q_moments(self, params: CellsConditional) -> dict:
        """Each cell's mean and sd under ``q``."""
        mean, variance = self._cell_moments(params)
        return {"x_mis": (mean, np.sqrt(variance))}

    def variational(self, params: CellsConditional) -> dict:
        """Each cell's mean and variance under ``q``."""
        mean, variance = self._cell_moments(params)
        dim = self.dims["x_mis"]
        return {"x_mis_mean": (dim, mean), "x_mis_variance": (dim, variance)}

    def _cell_moments(self, params: CellsConditional) -> tuple[np.ndarray, np.ndarray]:
        mean, variance = np.empty(self.n_cells), np.empty(self.n_cells)
        for pattern, c in zip(self.patterns, params.patterns, strict=True):
            mean[pattern.cells] = c.mean
            variance[pattern.cells] = (c.scales[:, None, :] * c.transform**2).sum(axis=-1)
        return mean, variance

    # -- the model's density -----------------------------------------------------------------
    def point_stats(self, point, stats) -> CellStats:
        """The design ``D`` completed by the cells ``x_mis`` (row by row) and the predictor
        ``f = 1 beta + D u`` of Luts-Ormerod section 3.3's regression component, at the
        coefficient block's values. The cells' density, ``prod_i N(d_i | mu_x, Sigma_x)``, is
        the covariance block's (:mod:`bayesvm.blocks.imputation_model`).
        """
        design = self.first_guess.copy()
        design[self.mask] = point["x_mis"]
        return CellStats(design, self._predictor_mean(design, stats[self.coefficients]), 0.0)

    def integrated_hinge(self, point, y: np.ndarray) -> tuple[np.ndarray, float]:
        """The cells integrated out of the hinge pseudo-likelihood and the rows' density.

        Given ``mu_x``, ``Sigma_x`` and the coefficients in ``point``, row ``i``'s missing
        cells are ``d_M | d_O ~ N(m_i, S_i)`` (the imputation model's conditional), ``f_i`` is
        linear in them and ``z = y_i f_i ~ N(mu_z, s_z^2)`` with ``mu_z = y_i f_i(m_i)`` and
        ``s_z^2 = u_M^T S_i u_M``, so that ``E exp(-2 (1 - z)_+) = Phi((mu_z - 1) / s_z) +
        exp(2 mu_z + 2 s_z^2 - 2) Phi((1 - mu_z - 2 s_z^2) / s_z)`` in closed form. Returns
        the cells at ``m`` (``x_mis``'s order) and the correction that, added to the model's
        density at those cells, integrates them out: per incomplete row, that expectation's
        log, minus the hinge at ``m``, minus ``log N(m_i | m_i, S_i) = -log |2 pi S_i| / 2``
        (Luts-Ormerod section 3.3's model; the collapse is what makes the masses of the
        cardiac model's modes computable, :mod:`bayesvm.checks.mode_mass`).
        """
        from scipy.special import log_ndtr

        mean, covariance = np.asarray(point["mu_x"]), np.asarray(point["Sigma_x"])
        theta = np.concatenate([np.atleast_1d(point[name]) for name in self.segment_names])
        p, u = self.n_fixed, theta[self.n_fixed :]
        cells = np.empty(self.n_cells)
        correction = 0.0
        conditionals = imputation_conditionals(
            self.first_guess, self.patterns, mean[None], covariance[None]
        )
        for pattern, means, conditional in conditionals:
            gone, means, conditional = pattern.missing, means[0], conditional[0]
            cells[pattern.cells.ravel()] = means.ravel()
            design = self.first_guess[pattern.rows].copy()
            design[:, gone] = means
            margin = y[pattern.rows] * (self.X[pattern.rows] @ theta[:p] + design @ u)
            spread2 = float(u[gone] @ conditional @ u[gone])
            spread = max(np.sqrt(spread2), 1e-12)  # u_M = 0: the hinge at m, in the limit
            expectation = np.logaddexp(
                log_ndtr((margin - 1.0) / spread),
                2.0 * (margin + spread2 - 1.0) + log_ndtr((1.0 - margin - 2.0 * spread2) / spread),
            )
            log_det = np.linalg.slogdet(2.0 * np.pi * conditional)[1]
            correction += float(
                np.sum(expectation + 2.0 * np.maximum(0.0, 1.0 - margin))
                + 0.5 * log_det * pattern.rows.size
            )
        return cells, correction

    # -- PyMC -------------------------------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """The cells as free variables (their density is the covariance block's statement),
        the completed design ``D`` and the predictor ``f``.
        """
        import pymc as pm
        import pytensor.tensor as pt

        (dim,) = self.dims["x_mis"]
        rows, columns = np.nonzero(self.mask)
        if self.n_cells:
            cells = pm.Flat("x_mis", dims=dim)
            design = pt.set_subtensor(pt.as_tensor(self.first_guess)[rows, columns], cells)
        else:
            pm.Deterministic("x_mis", pt.zeros(0), dims=dim)
            design = pt.as_tensor(self.first_guess)
        variables["D"] = design
        beta, u = (variables[name] for name in self.segment_names)
        variables["f"] = pt.dot(self.X, beta) + pt.dot(design, u)


class ImputedCoefficientSlice(CoefficientSlice):
    """:class:`~bayesvm.blocks.marginal_slice.CoefficientSlice` on the design completed by
    the current cells; the cells' predictor follows the coefficients.
    """

    fixed_design = False

    def __init__(self, coefficients: ImputedCoefficients, cells: MissingCells, likelihood):
        super().__init__(coefficients, likelihood)
        self.cells = cells

    def design(self, stats) -> np.ndarray:
        """``[X, D]`` with the current cells."""
        return np.hstack([self.cells.X, stats[self.cells.name].design])

    def moved(self, theta: np.ndarray, f: np.ndarray, stats) -> dict:
        """The coefficients and the cells' predictor ``f``."""
        completed = stats[self.cells.name]
        return {
            self.coefficients.name: self.coefficients.at(theta, completed.design),
            self.cells.name: completed._replace(f_mean=f),
        }


def _quadratic_forms(C: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """``dg(C Sigma C^T)``, ``O(n K^2)``."""
    return np.einsum("ij,ij->i", C @ covariance, C)
