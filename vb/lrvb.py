"""Linear response VB: covariances of the coefficients corrected for mean-field's factorisation.

Mean-field ``q`` treats the coefficients and the augmentation (or the penalty) as independent
and so understates the coefficients' spread: its sds are 0.44-0.58 of Gibbs's on Rätsch's heart
data, 0.10-0.64 on the standardised spam data. Linear response VB (Giordano, Broderick & Jordan
2018, "Covariances, robustness, and variational Bayes", JMLR 19:51, section 3) estimates the
posterior covariance of ``theta`` as the sensitivity of ``q``'s mean to a tilt of the log joint
by ``t^T theta``:

    ``Cov_LRVB(theta) = d E_{q_t}[theta] / dt`` at ``t = 0``,

``q_t`` the VB optimum of the tilted model (exact for a multivariate normal posterior, their
section 3). The tilt adds ``t`` to the coefficient block's linear natural parameter
(:meth:`~bayesvm.blocks.GaussianCoefficients.conditional`).

CAVI's optimum is a fixed point ``x = F(x, t)`` of one sweep ``F`` over the blocks' expected
statistics ``x``, so (Giordano, Broderick & Jordan 2015, "Linear response methods for accurate
covariance estimates from mean field variational Bayes", section 2: the fixed-point form)

    ``dx/dt = (I - J)^-1 B``,  ``J = dF/dx`` (the sweep's Jacobian),  ``B = dF/dt``,

and the LRVB covariance is the rows of ``dx/dt`` that hold ``E[theta]``. Neither ``J`` nor
``B`` is formed: ``B``'s columns and products ``J v`` are central differences of sweeps
(:data:`STEP`: each statistic moves by at most that share of its size), and the ``K`` systems
are solved together by block GMRES, least squares over the Krylov space grown block by block
from ``B`` (:func:`linear_response`), which shares the work between the columns: on the spam
data's 58 coefficients five blocks reach a relative residual of 6e-9 (696 sweeps, 9 s), where
GMRES column by column needs some 50 products per column for 1e-6 (6,000 sweeps). Each block
costs ``2 K`` sweeps, ``B`` another ``2 K``: about ``10 K`` sweeps in all, from the optimum,
with no ascent. The error is negligible beside LRVB's own: on spam a tenth of :data:`STEP`
changes the sds by 7e-7, and the optimum at VB's tolerance (1e-10 relative) rather than
converged to round-off by 4e-4.

LRVB is exact where the posterior is Gaussian and mean-field's means are right (their
section 3; tests/backends/test_lrvb.py checks it on a Gaussian latent model). The hinge's
posterior is not Gaussian: against long Gibbs runs the LRVB sds are 0.84-0.96 of Gibbs's on
heart, 0.68-1.26 on spam and, where the optimum itself is off (toenail's random intercept
model, whose mean-field ``sigma2_u`` is too small), 0.51-0.85 (mean-field: 0.33-0.50).
Most of that error is the augmentation's: at the optimum of the Gaussian family, which
integrates it out (:mod:`bayesvm.vb.gaussian_family`, whose iteration is the sweep here), the
LRVB sds are 0.97-1.00 of Gibbs's on heart, 0.97-1.05 on the standardised log spam data and
0.89-0.98 for toenail's fixed effects.
Only the coefficients are corrected; the other blocks keep mean-field ``q``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesvm.blocks.design import DenseGaussian
from bayesvm.catalogue import METHODS
from bayesvm.vb.squarem import StatsVector

__all__ = [
    "COVARIANCES",
    "LinearResponse",
    "check_covariance",
    "linear_response",
    "STEP",
    "RTOL",
    "MAX_BLOCKS",
]

#: The values of :func:`~bayesvm.vb.cavi.fit_vb`'s ``covariance``: mean-field ``q``'s own (the
#: papers'), or linear response VB's for the coefficients.
COVARIANCES = METHODS["vb"].options["covariance"].choices
#: Central differences move each statistic (and the coefficients' means, through the tilt) by
#: at most this share of its size (or of its field's root mean square, for entries near 0):
#: small enough that the truncation error (of order ``STEP^2``) is negligible, large enough that
#: round-off (``1e-16 / STEP``) is too: a tenth of it changes spam's sds by 7e-7.
STEP = 1e-4
#: Block GMRES stops when every column's residual, relative to ``B``'s, is below this.
RTOL = 1e-6
#: Most Krylov blocks (each ``2 K`` sweeps); the fit's problems say when it stops there.
MAX_BLOCKS = 20
#: Krylov directions whose share of a new block's norm is below this are dropped (the space is
#: exhausted along them).
RANK_TOL = 1e-10


@dataclass
class LinearResponse:
    """The LRVB covariance of a coefficient block and how it was computed.

    Attributes
    ----------
    covariance : ndarray of shape (K, K)
        ``d E[theta] / dt``, symmetrised.
    mean_field_variance : ndarray of shape (K,)
        Mean-field ``q``'s variances, for comparison.
    smallest_eigenvalue : float
        Of ``covariance``: it is a covariance only where this is positive.
    asymmetry : float
        Largest ``|C_jk - C_kj|`` of the unsymmetrised derivative, relative to
        ``sqrt(C_jj C_kk)``: the solve's and the differences' error (and the optimum's distance
        from a fixed point); it should be far below 1.
    residual : float
        Largest relative residual of block GMRES.
    blocks : int
        Krylov blocks.
    sweeps : int
        CAVI sweeps made.
    """

    covariance: np.ndarray
    mean_field_variance: np.ndarray
    smallest_eigenvalue: float
    asymmetry: float
    residual: float
    blocks: int
    sweeps: int

    def problems(self) -> list[str]:
        """What makes the covariance untrustworthy: the solve stopped short of :data:`RTOL`,
        or the covariance is not positive definite.
        """
        problems = []
        if not self.residual <= RTOL:
            problems.append(
                f"the LRVB solve stopped at a relative residual of {self.residual:.2g} after "
                f"{self.blocks} Krylov blocks (target {RTOL:g})"
            )
        if not self.smallest_eigenvalue > 0.0:
            problems.append(
                f"the LRVB covariance is not positive definite (smallest eigenvalue "
                f"{self.smallest_eigenvalue:.3g}): the optimum is not a strict maximum of the "
                "bound, or the coefficients are not identified; the draws and summaries keep "
                "mean-field q"
            )
        return problems

    def corrected(self, block, params):
        """``q`` of the coefficient ``block`` (``params``: its mean-field ``q``,
        :class:`~bayesvm.blocks.coefficients.GaussianConditional`) with the LRVB covariance:
        ``N(mean, Cov_LRVB)``; the mean-field ``q`` where that is not positive definite.
        """
        if not self.smallest_eigenvalue > 0.0:
            return params
        precision = np.linalg.inv(self.covariance)
        precision = 0.5 * (precision + precision.T)
        return params._replace(gaussian=DenseGaussian.from_precision(block.design, precision))

    def variational(self, block) -> tuple[dict, dict]:
        """The ``variational`` group's record and its coordinates: ``lrvb_covariance``, the
        ``mean_field_variance`` it corrects (both over the coefficient block's
        ``coefficient``), and the solve's ``lrvb_residual``, ``lrvb_asymmetry`` and
        ``lrvb_sweeps``.
        """
        names = list(block.coefficient_names)
        group = {
            "lrvb_covariance": (["coefficient", "coefficient_"], self.covariance),
            "mean_field_variance": (["coefficient"], self.mean_field_variance),
            "lrvb_residual": ((), self.residual),
            "lrvb_asymmetry": ((), self.asymmetry),
            "lrvb_sweeps": ((), self.sweeps),
        }
        return group, {"coefficient": names, "coefficient_": names}


def check_covariance(model, covariance: str) -> None:
    """Raise ``ValueError`` unless ``covariance`` is one of :data:`COVARIANCES` and, for
    ``"lrvb"``, ``model``'s coefficient block takes a tilt.
    """
    METHODS["vb"].options["covariance"].check("covariance", covariance)
    coefficients = getattr(model, "coefficients", None)
    if covariance == "lrvb" and not getattr(coefficients, "takes_tilt", False):
        raise ValueError(
            f"covariance='lrvb' needs a Gaussian coefficient block that takes a tilt; "
            f"{type(model).__name__}'s {type(coefficients).__name__} does not"
        )


def linear_response(sweep_for, state, tilted: str, *, step: float = STEP) -> LinearResponse:
    """The LRVB covariance of block ``tilted``'s variables at the CAVI optimum ``state``.

    Parameters
    ----------
    sweep_for : callable
        ``sweep_for(tilts) -> sweep``: a CAVI sweep over the model's blocks with the given
        tilts by block name (:func:`~bayesvm.vb.cavi.make_cavi_step`).
    state : tuple
        ``(params, stats)`` at the optimum (the last sweep's).
    tilted : str
        Name of the block whose conditional takes the tilt; its statistics have ``mean`` and
        ``square`` (``E[theta]`` and ``E[theta^2]``).
    step : float
        :data:`STEP`.
    """
    params, stats = state
    vector = StatsVector(stats)
    x0 = vector.flatten(stats)
    free = np.isfinite(x0)  # an infinite precision holds its coefficient: a constant
    scale = _scales(vector, x0)[free]
    sweeps = 0

    def scaled_sweep(z, tilt=None):
        """``F`` in scaled coordinates ``z = x / scale``."""
        nonlocal sweeps
        sweeps += 1
        x = x0.copy()
        x[free] = z * scale
        (_, new), _ = sweep_for({} if tilt is None else {tilted: tilt})(
            (params, vector.unflatten(x, stats))
        )
        if StatsVector(new).layout != vector.layout:
            raise ValueError("LRVB needs a sweep whose statistics keep their shapes")
        return vector.flatten(new)[free] / scale

    z0 = x0[free] / scale
    mean, square = stats[tilted].mean, stats[tilted].square
    variance = np.maximum(square - mean**2, 0.0)
    sd = np.where(variance > 0.0, np.sqrt(variance), 1.0)
    size = mean.size
    rhs = np.empty((z0.size, size))
    for j in range(size):
        tilt = np.zeros(size)
        tilt[j] = step / sd[j]  # moves E[theta_j] directly by `step` of its sd
        rhs[:, j] = (scaled_sweep(z0, tilt) - scaled_sweep(z0, -tilt)) / (2.0 * tilt[j])

    def operator(directions):
        """``(I - J) v`` of each column ``v``."""
        out = np.empty_like(directions)
        for k, v in enumerate(directions.T):
            d = step / np.max(np.abs(v))
            out[:, k] = v - (scaled_sweep(z0 + d * v) - scaled_sweep(z0 - d * v)) / (2.0 * d)
        return out

    solution, residual, blocks = _block_gmres(operator, rhs, RTOL)
    rows = _rows(vector, free, tilted, type(stats[tilted])._fields.index("mean"))
    derivative = solution[rows] * scale[rows, None]
    covariance = 0.5 * (derivative + derivative.T)
    spread = np.sqrt(np.abs(np.outer(np.diag(derivative), np.diag(derivative))))
    spread = np.where(spread > 0.0, spread, np.inf)
    asymmetry = float(np.max(np.abs(derivative - derivative.T) / spread))
    smallest = float(np.linalg.eigvalsh(covariance)[0])
    return LinearResponse(covariance, variance, smallest, asymmetry, residual, blocks, sweeps)


def _block_gmres(operator, rhs: np.ndarray, rtol: float):
    """Solve ``A X = rhs`` for every column at once: least squares over the block Krylov space
    ``span(rhs, A rhs, A^2 rhs, ...)``, grown until every column's relative residual is below
    ``rtol`` (or :data:`MAX_BLOCKS`). ``operator(V) = A V``. Returns the solution, the largest
    relative residual and the blocks used.

    ``A V_all = W`` is kept as ``W = U R`` (``U`` orthonormal), so the least squares solution
    is ``R^-1 U^T rhs`` and each residual ``rhs - U U^T rhs``.
    """
    norms = np.linalg.norm(rhs, axis=0)
    norms = np.where(norms > 0.0, norms, 1.0)
    basis = _orthonormal(rhs, np.empty((rhs.shape[0], 0)))
    directions = np.empty((rhs.shape[0], 0))
    U = np.empty((rhs.shape[0], 0))
    R = np.empty((0, 0))
    residual = 0.0 if not basis.shape[1] else np.inf  # no basis: rhs is 0, and so is X
    projection = np.empty((0, rhs.shape[1]))
    blocks = 0
    while basis.shape[1] and blocks < MAX_BLOCKS:
        blocks += 1
        image = operator(basis)
        directions = np.hstack([directions, basis])
        coupling = U.T @ image
        rest = image - U @ coupling
        coupling2 = U.T @ rest  # Gram-Schmidt twice: "twice is enough" (Parlett 1980)
        rest -= U @ coupling2
        new_U, new_R = np.linalg.qr(rest)
        R = np.block([[R, coupling + coupling2], [np.zeros((new_R.shape[0], R.shape[1])), new_R]])
        U = np.hstack([U, new_U])
        projection = U.T @ rhs
        residual = float(np.max(np.linalg.norm(rhs - U @ projection, axis=0) / norms))
        if residual < rtol:
            break
        basis = _orthonormal(image, directions)
    if not blocks:
        return np.zeros_like(rhs), residual, blocks
    coefficients = np.linalg.lstsq(R, projection, rcond=None)[0]
    return directions @ coefficients, residual, blocks


def _orthonormal(block: np.ndarray, against: np.ndarray) -> np.ndarray:
    """An orthonormal basis of ``block``'s columns orthogonalised against ``against``'s
    (orthonormal) columns, without the directions below :data:`RANK_TOL` of its norm.
    """
    total = np.linalg.norm(block)
    for _ in range(2):
        block = block - against @ (against.T @ block)
    left, singular, _ = np.linalg.svd(block, full_matrices=False)
    return left[:, singular > RANK_TOL * total]


def _scales(vector: StatsVector, x: np.ndarray) -> np.ndarray:
    """Each statistic's size for the differences: its own, floored at 1e-3 of its field's root
    mean square (1 for a field of zeros), so that a step moves every statistic alike.
    """
    scales = np.empty_like(x)
    start = 0
    for _, _, shape in vector.layout:
        part = x[start : start + int(np.prod(shape))]
        finite = part[np.isfinite(part)]
        typical = float(np.sqrt(np.mean(finite**2))) if finite.size else 0.0
        floor = 1e-3 * typical if typical > 0.0 else 1.0
        scales[start : start + part.size] = np.maximum(np.abs(part), floor)
        start += part.size
    return scales


def _rows(vector: StatsVector, free: np.ndarray, name: str, field: int) -> np.ndarray:
    """Positions of block ``name``'s statistic ``field`` among the ``free`` entries."""
    start = 0
    for block, index, shape in vector.layout:
        size = int(np.prod(shape))
        if (block, index) == (name, field):
            positions = np.cumsum(free) - 1
            return positions[start : start + size]
        start += size
    raise KeyError(f"no statistic {field} of block {name!r}")
