"""How much posterior mass each mode that a sampler's chains found holds.

Chains that stay in different modes (:mod:`bayesvm.checks.modes`) say nothing about the
modes' weights: how many chains a mode caught depends on where they started. Each mode's mass
is estimated by importance sampling (the audit of the cardiac model did the same):

    ``log Z_k = log mean_s p(theta_s, y) / g_k(theta_s)``,  ``theta_s ~ g_k``,

with ``p`` the model's density (:meth:`~bayesvm.models.BlockModel.mass_log_density`, the
same unnormalised density for every mode, so ``Z_j / Z_k`` is the ratio of the masses) and
``g_k`` a multivariate t (:data:`T_DOF` degrees of freedom) with the mean and covariance of
the mode's draws in unconstrained coordinates (the log of a positive variable, the
log-diagonal Cholesky factor of a covariance; the Jacobian is added). The estimate is trusted
when every mode's Pareto k-hat of the log weights (Vehtari, Simpson, Gelman, Yao & Gabry
2024, "Pareto smoothed importance sampling", JMLR 25:72) is below :data:`KHAT_MAX`: then the
modes' weights can stack their chains (Yao, Vehtari & Gelman 2022, JMLR 23:79).

A proposal may also be fitted to draws other than a sampler's: VB weighs its optima with
proposals fitted to draws from each optimum's ``q`` and to the Laplace approximation at the
nearest mode of the density (:func:`laplace_draws`), trying them in turn until one's k-hat is
below :data:`KHAT_MAX` (:func:`masses_from_draws`; :mod:`bayesvm.vb.optima`).

A model with many variables per row (the cardiac model's missing cells) would need a proposal
in thousands of dimensions; such a model integrates them out analytically in its
``mass_log_density`` and names the variables left in ``mass_var_names``. A model with binary
or derived variables (inclusion indicators) is not estimated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, logsumexp

from bayesvm.linalg import from_log_cholesky, log_cholesky

__all__ = [
    "ModeMasses",
    "Basins",
    "mode_masses",
    "masses_from_draws",
    "unconstrained_draws",
    "laplace_draws",
    "KHAT_MAX",
    "MASS_DRAWS",
    "T_DOF",
    "MAX_DIMENSION",
]

#: Proposal draws per mode.
MASS_DRAWS = 2000
#: Degrees of freedom of each mode's t proposal (heavier tails than the mode's).
T_DOF = 5.0
#: Pareto k-hat above which an importance sampling estimate is not trusted.
KHAT_MAX = 0.7
#: Most unconstrained coordinates a proposal is fitted in.
MAX_DIMENSION = 200
#: Most of a mode's draws its proposal is fitted to (evenly thinned).
FIT_DRAWS = 4000
#: The Laplace approximation's Hessian: gradient steps of this many times each coordinate's
#: spread, and steps three times as large between gradients.
LAPLACE_STEP = 0.1
#: Most coordinates of a Laplace approximation (its Hessian costs ``4 k^2`` densities).
LAPLACE_MAX_DIMENSION = 50
#: Most BFGS iterations towards the mode (each ``k + 1`` densities or more; importance
#: sampling corrects a proposal centred short of the mode, and a hinge's kinks stall BFGS near
#: it anyway: on the cardiac model it stopped after 42-47 iterations for lost precision).
LAPLACE_ITERATIONS = 20


@dataclass
class ModeMasses:
    """Each mode's log mass (up to one shared constant), its Monte Carlo standard error and
    the Pareto k-hat of its importance weights.
    """

    log_mass: np.ndarray
    standard_error: np.ndarray
    khat: np.ndarray

    @property
    def reliable(self) -> bool:
        """Every mode's estimate is trusted (k-hat below :data:`KHAT_MAX`)."""
        return bool(np.all(self.khat < KHAT_MAX))

    @property
    def weights(self) -> np.ndarray:
        """The modes' shares of the posterior mass."""
        return np.exp(self.log_mass - logsumexp(self.log_mass))

    def log_rest(self, mode: int) -> float:
        """``log`` of the share of the mass the other modes hold."""
        others = np.delete(self.log_mass, mode)
        return float(logsumexp(others) - logsumexp(self.log_mass))

    def describe(self) -> str:
        """The heaviest mode, its share and its log mass over each other's, in words."""
        heaviest = int(np.argmax(self.log_mass))
        rest = self.log_rest(heaviest)
        share = f"all but e^{rest:.1f}" if rest < np.log(1e-4) else f"{self.weights[heaviest]:.1%}"
        ratios = ", ".join(
            f"{self.log_mass[heaviest] - value:.1f} over mode {mode + 1}"
            for mode, value in enumerate(self.log_mass)
            if mode != heaviest
        )
        verdict = "" if self.reliable else f", above {KHAT_MAX}: not trusted"
        return (
            f"mode {heaviest + 1} holds {share} of the posterior mass (importance sampling: "
            f"log mass ratio {ratios}; Pareto k-hat at most {np.max(self.khat):.2f}{verdict})"
        )


def mode_masses(model, posterior, labels: np.ndarray, rng: np.random.Generator):
    """The masses of the modes ``labels`` (chain, draw) assigns the draws of ``posterior``
    (:class:`ModeMasses`), or why they cannot be estimated (a ``str``).
    """
    names = model.mass_var_names
    shapes = {name: posterior[name].shape[2:] for name in names}
    fitted = []
    for mode in range(int(labels.max()) + 1):
        chains, draws = np.nonzero(labels == mode)
        keep = np.linspace(0, chains.size - 1, min(chains.size, FIT_DRAWS)).astype(int)
        values = {name: posterior[name].to_numpy()[chains[keep], draws[keep]] for name in names}
        fitted.append([unconstrained_draws(model, values)])
    return masses_from_draws(model, shapes, fitted, rng)


def masses_from_draws(model, shapes: dict, candidates: list, rng: np.random.Generator):
    """The masses of modes (:class:`ModeMasses`), or why they cannot be estimated (a
    ``str``), from draws of each mode in unconstrained coordinates
    (:func:`unconstrained_draws`).

    ``candidates[k]`` lists sources of draws ``(draws, coordinates)`` of mode ``k``, each an
    array or a function returning one (or None, where it has none); each fits one t proposal,
    tried in turn until one's k-hat is below :data:`KHAT_MAX` (each is a valid estimate;
    k-hat says which to trust), the best so far estimating the mode's mass. The first source
    of each mode places its basin. ``shapes`` gives each of ``model.mass_var_names``' shapes.
    """
    refusal = _refusal(model)
    if refusal:
        return refusal
    names, supports = model.mass_var_names, model.supports
    first = [sources[0] for sources in candidates]
    dimension = first[0].shape[1]
    fewest = min(draws.shape[0] for draws in first)
    if dimension > MAX_DIMENSION or dimension >= fewest:
        return (
            f"masses not estimated: {dimension} coordinates are too many for a proposal from "
            f"{fewest} draws"
        )
    basins = Basins(first)
    estimates = []
    for mode, sources in enumerate(candidates):
        best = (-np.inf, np.inf, np.inf)
        for source in sources:
            draws = source() if callable(source) else source
            if draws is None:
                continue
            estimate = _importance_sampling(
                model, names, shapes, supports, draws, basins, mode, rng
            )
            best = min(best, estimate, key=lambda tried: tried[2])
            if best[2] < KHAT_MAX:
                break
        estimates.append(best)
    lost = [mode + 1 for mode, (log_z, _, _) in enumerate(estimates) if not np.isfinite(log_z)]
    if lost:
        return f"masses not estimated: no proposal found the mass of mode {lost[0]}"
    return ModeMasses(*(np.array(values) for values in zip(*estimates, strict=True)))


def unconstrained_draws(model, values: dict) -> np.ndarray:
    """Draws ``values`` (name to ``(draws, *shape)``) of ``model.mass_var_names`` as
    unconstrained coordinates ``(draws, k)``.
    """
    supports = model.supports
    return np.hstack(
        [_unconstrained(values[name], supports.get(name)) for name in model.mass_var_names]
    )


def laplace_draws(model, shapes: dict, start: np.ndarray, scale: np.ndarray, rng, size: int):
    """Draws ``(size, k)`` of the Laplace approximation at the mode of the mass density
    nearest ``start`` (unconstrained coordinates; BFGS): Gaussian with the inverse of the
    density's Hessian there, by central differences with steps :data:`LAPLACE_STEP` times
    ``scale`` (a guess of each coordinate's spread), so that kinks of a hinge within the step
    average out. None where the dimension exceeds :data:`LAPLACE_MAX_DIMENSION` or the Hessian
    is not negative definite (the mode sits on a kink, e.g. a coefficient at 0).
    """
    from scipy.optimize import minimize  # imported here: optimize costs 0.1 s at startup

    dimension = start.size
    if dimension > LAPLACE_MAX_DIMENSION:
        return None
    names, supports = model.mass_var_names, model.supports

    def negative(z: np.ndarray) -> float:
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            point, log_jacobian = _constrained(z, names, shapes, supports)
            value = model.mass_log_density(point) + log_jacobian
        return -value if np.isfinite(value) else np.inf

    mode = minimize(negative, start, method="BFGS", options={"maxiter": LAPLACE_ITERATIONS}).x

    def gradient(z: np.ndarray, steps: np.ndarray) -> np.ndarray:
        shifts = np.diag(steps)
        return np.array(
            [
                (negative(z + shift) - negative(z - shift)) / (2.0 * h)
                for shift, h in zip(shifts, steps, strict=True)
            ]
        )

    fine, coarse = LAPLACE_STEP * scale, 3.0 * LAPLACE_STEP * scale
    hessian = np.array(
        [
            (gradient(mode + shift, fine) - gradient(mode - shift, fine)) / (2.0 * h)
            for shift, h in zip(np.diag(coarse), coarse, strict=True)
        ]
    )
    hessian = 0.5 * (hessian + hessian.T)
    if not np.all(np.isfinite(hessian)) or np.linalg.eigvalsh(hessian)[0] <= 0.0:
        return None
    factor = np.linalg.cholesky(hessian)  # hessian = L L^T, so covariance = L^-T L^-1
    noise = rng.standard_normal((size, dimension))
    return mode + np.linalg.solve(factor.T, noise.T).T


def _refusal(model) -> str | None:
    """Why the masses of ``model``'s modes cannot be estimated, or None."""
    supports = model.supports
    odd = sorted(
        {supports.get(name) for name in model.mass_var_names} - {None, "positive", "covariance"}
    )
    return f"masses not estimated: the model has {' and '.join(odd)} variables" if odd else None


class Basins:
    """Which mode a point belongs to: the nearest mode's mean in unconstrained coordinates,
    each scaled by its sd pooled within the modes (as draws are assigned to modes,
    :mod:`bayesvm.checks.modes`). Each mode's mass is the integral over its basin alone, so
    that a proposal reaching into another mode does not count that mode's mass twice.
    """

    def __init__(self, fitted: list[np.ndarray]):
        self.means = np.stack([draws.mean(axis=0) for draws in fitted])
        pooled = np.mean([draws.var(axis=0) for draws in fitted], axis=0)
        self.scale = np.sqrt(np.where(pooled > 0.0, pooled, 1.0))

    def of(self, points: np.ndarray) -> np.ndarray:
        """The mode of each point (rows)."""
        scaled = (points[:, None, :] - self.means[None]) / self.scale
        return np.argmin(np.sum(scaled**2, axis=-1), axis=1)


def _importance_sampling(model, names, shapes, supports, fitted, basins, mode, rng):
    """``(log Z, its standard error, k-hat)`` of the mass in ``mode``'s basin, with a t
    proposal fitted to its draws ``fitted``.
    """
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    mean = fitted.mean(axis=0)
    covariance = np.atleast_2d(np.cov(fitted, rowvar=False))
    covariance += 1e-9 * np.mean(np.diag(covariance)) * np.eye(mean.size)
    factor = np.linalg.cholesky(covariance)
    dimension = mean.size
    normal = rng.standard_normal((MASS_DRAWS, dimension))
    scale = np.sqrt(T_DOF / rng.chisquare(T_DOF, MASS_DRAWS))
    proposals = mean + scale[:, None] * (normal @ factor.T)
    squared = np.sum(normal**2, axis=1) * scale**2  # Mahalanobis distance squared
    log_proposal = (
        gammaln((T_DOF + dimension) / 2.0)
        - gammaln(T_DOF / 2.0)
        - 0.5 * dimension * np.log(T_DOF * np.pi)
        - np.sum(np.log(np.diag(factor)))
        - 0.5 * (T_DOF + dimension) * np.log1p(squared / T_DOF)
    )
    log_weights = np.full(MASS_DRAWS, -np.inf)
    inside = np.flatnonzero(basins.of(proposals) == mode)
    # A proposal in the tails may put a variance at 0 or infinity: its weight is then 0.
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        for s in inside:
            point, log_jacobian = _constrained(proposals[s], names, shapes, supports)
            log_weights[s] = model.mass_log_density(point) + log_jacobian - log_proposal[s]
    log_weights[~np.isfinite(log_weights)] = -np.inf
    if not np.isfinite(log_weights).any():  # no proposal found the mode's mass
        return -np.inf, np.inf, np.inf
    log_z = logsumexp(log_weights) - np.log(MASS_DRAWS)
    weights = np.exp(log_weights - log_z)
    standard_error = float(np.std(weights) / np.sqrt(MASS_DRAWS))
    _, khat = az.psislw(log_weights.copy())
    return float(log_z), standard_error, float(khat)


def _unconstrained(values: np.ndarray, support) -> np.ndarray:
    """Draws ``(draws, *shape)`` of one variable as unconstrained coordinates ``(draws, k)``."""
    draws = values.shape[0]
    if support == "positive":
        return np.log(values).reshape(draws, -1)
    if support == "covariance":
        return log_cholesky(values)
    return values.reshape(draws, -1)


def _constrained(z: np.ndarray, names, shapes, supports) -> tuple[dict, float]:
    """The point at unconstrained coordinates ``z`` and ``log |d point / d z|``."""
    point, log_jacobian, start = {}, 0.0, 0
    for name in names:
        shape, support = shapes[name], supports.get(name)
        if support == "covariance":
            d = shape[0]
            size = d * (d + 1) // 2
            point[name], jacobian = from_log_cholesky(z[start : start + size], d)
            log_jacobian += jacobian
            start += size
            continue
        size = int(np.prod(shape, dtype=int))
        part = z[start : start + size]
        if support == "positive":
            log_jacobian += float(np.sum(part))
            part = np.exp(part)
        point[name] = part.reshape(shape)
        start += size
    return point, log_jacobian
