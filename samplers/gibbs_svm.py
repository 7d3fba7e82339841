"""Block Gibbs samplers for the linear Bayesian SVM.

The data augmentation of Polson-Scott (2011) Theorem 1 gives every model of
:mod:`bayesvm.models` (``f = X beta + Z u``) the same three-block sweep:

1. ``(beta, u) | a, prior ~ N(P^-1 C^T Y (1 + 1/a), P^-1)`` with
   ``P = C^T diag(1/a) C + diag(prior precision)``                (Polson-Scott eq. 9-10;
   Luts-Ormerod Appendix A), factored by the model's design (:mod:`bayesvm.models.design`:
   dense Cholesky, or the Schur complement for a random intercept)
2. ``1/a_i | beta, u ~ InverseGaussian(|1 - y_i f_i|^-1, 1)``       (Polson-Scott Corollary 2)
3. the penalty's own conditionals:

   * learned Gaussian: ``s2 | u ~ IG(A + m/2, B + ||u / c||^2 / 2)`` (Luts-Ormerod App. A);
   * lasso: ``1/nu | u ~ Gamma(a + m, b + sum |u_j| / c_j)`` when learned (Polson-Scott
     MCMC-SVM step 4, drawn with omega marginalised), then
     ``1/omega_j | u, nu ~ InverseGaussian(nu c_j / |u_j|, 1)`` (Corollary 3, step 3).

Inverse-Gaussian draws use ``numpy.random.Generator.wald`` (vectorised).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayesvm.drivers import run_mcmc
from bayesvm.models.linear_predictor import LinearPredictorSVM
from bayesvm.models.penalties import FixedGaussian, Laplace, LearnedGaussian
from bayesvm.registry import register
from bayesvm.results import Fit
from bayesvm.samplers.diagnostics import mcmc_fit

__all__ = ["GibbsState", "make_gibbs_kernel", "fit_gibbs"]

# |1 - y f| below this is floored when it sets the inverse-Gaussian mean (probability ~0).
RESIDUAL_FLOOR = 1e-12


class GibbsState(NamedTuple):
    """Current values of the sampled blocks."""

    theta: np.ndarray  # (beta, u)
    inv_a: np.ndarray  # 1 / a_i, the augmentation of Theorem 1
    variance: float  # s2 of a learned Gaussian penalty (else nan)
    nu: float  # lasso scale (else nan)
    inv_omega: np.ndarray  # lasso mixing variables 1 / omega_j (else empty)


def _supports(model) -> bool:
    return isinstance(model, LinearPredictorSVM)


def make_gibbs_kernel(model):
    """Return ``(init, step)`` for ``model``; the design and its products are set up once."""
    design, y = model.design_operator, model.y
    p, m = model.n_fixed, model.n_effects
    penalty = model.penalty
    prior_precision = np.full(p + m, 1.0 / model.sigma2_beta)
    if isinstance(penalty, FixedGaussian):
        prior_precision[p:] = 1.0 / penalty.variance
    inv_scale2 = 1.0 / penalty.scale**2 if not isinstance(penalty, FixedGaussian) else None

    def draw_coefficients(state: GibbsState, rng) -> np.ndarray:
        precision_diag = prior_precision.copy()
        if isinstance(penalty, LearnedGaussian):
            precision_diag[p:] = inv_scale2 / state.variance
        elif isinstance(penalty, Laplace):
            precision_diag[p:] = state.inv_omega * inv_scale2 / state.nu**2
        gaussian = design.gaussian(state.inv_a, precision_diag)
        return gaussian.draw(gaussian.solve(design.transpose_times(y * (1.0 + state.inv_a))), rng)

    def draw_latents(theta: np.ndarray, state: GibbsState, rng) -> GibbsState:
        residual = np.maximum(np.abs(1.0 - y * design.predictor(theta)), RESIDUAL_FLOOR)
        inv_a = rng.wald(1.0 / residual, 1.0)
        variance, nu, inv_omega = state.variance, state.nu, state.inv_omega
        u = theta[p:]
        if isinstance(penalty, LearnedGaussian):
            rate = penalty.rate + 0.5 * np.sum(u**2 * inv_scale2)
            variance = rate / rng.gamma(penalty.shape + 0.5 * m)
        elif isinstance(penalty, Laplace):
            scaled = np.maximum(np.abs(u) / penalty.scale, RESIDUAL_FLOOR)
            if penalty.nu is None:
                nu = 1.0 / rng.gamma(penalty.shape + m, 1.0 / (penalty.rate + scaled.sum()))
            inv_omega = rng.wald(nu / scaled, 1.0)
        return GibbsState(theta, inv_a, variance, nu, inv_omega)

    def init(rng) -> GibbsState:
        """Dispersed start: ``(beta, u) ~ N(0, I)``, then the latents given it."""
        nu = penalty.nu if isinstance(penalty, Laplace) and penalty.nu is not None else 1.0
        start = GibbsState(np.zeros(p + m), np.ones(y.size), 1.0, nu, np.ones(m))
        return draw_latents(rng.standard_normal(p + m), start, rng)

    def step(state: GibbsState, rng) -> GibbsState:
        return draw_latents(draw_coefficients(state, rng), state, rng)

    return init, step


def _recorder(model):
    p = model.n_fixed
    penalty = model.penalty

    def record(state: GibbsState) -> dict[str, np.ndarray]:
        values = {"beta": state.theta[:p], "u": state.theta[p:]}
        if isinstance(penalty, LearnedGaussian):
            values.update(penalty.report_draws(state.variance))
        elif isinstance(penalty, Laplace) and penalty.nu is None:
            values["nu"] = state.nu
        return values

    return record


@register("gibbs", _supports)
def fit_gibbs(
    model,
    *,
    draws: int = 5000,
    tune: int = 5000,
    chains: int = 4,
    seed=None,
    progressbar: bool = True,
) -> Fit:
    """Fit by block Gibbs sampling (Luts-Ormerod App. A; Polson-Scott MCMC-SVM).

    Parameters
    ----------
    draws, tune : int
        Kept draws and burn-in per chain (Luts-Ormerod section 4: 5000 + 5000).
    chains : int
        Independent chains, each from a dispersed start.
    seed : int or numpy.random.Generator, optional
        Same seed, same draws.
    progressbar : bool
        Show a progress bar.
    """
    init, step = make_gibbs_kernel(model)
    result = run_mcmc(
        init,
        step,
        _recorder(model),
        rng=np.random.default_rng(seed),
        chains=chains,
        tune=tune,
        draws=draws,
        progressbar=progressbar,
        description="Gibbs",
    )
    return mcmc_fit(model, result, "gibbs")
