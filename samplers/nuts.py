"""PyMC NUTS on ``model.to_pymc()``: the MCMC baseline for every model PyMC can express.

Configured fairly: PyTensor is linked to an optimised BLAS where one is installed
(:func:`bayesvm._blas.pytensor_blas`, chosen before the first compile), the default
``target_accept`` is raised to 0.9 because the hinge potential has kinks, and only the
canonical variables are stored so the InferenceData matches every other backend.
"""

from __future__ import annotations

import numpy as np

from bayesvm._blas import pytensor_blas
from bayesvm.registry import register
from bayesvm.results import Fit, attach_data
from bayesvm.samplers.diagnostics import mcmc_converged

__all__ = ["fit_nuts"]


def _supports(model) -> bool:
    return hasattr(model, "to_pymc")


@register("nuts", _supports)
def fit_nuts(
    model,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    seed=None,
    target_accept: float = 0.9,
    progressbar: bool = True,
    noncentered: bool = False,
    **sample_kwargs,
) -> Fit:
    """Fit by PyMC's NUTS.

    Parameters
    ----------
    draws, tune, chains, cores, target_accept, progressbar
        As in ``pymc.sample``.
    seed : int, optional
        ``random_seed`` of ``pymc.sample``.
    noncentered : bool
        Write a learned Gaussian ``u`` as ``sqrt(sigma2_u) * z``, ``z ~ N(0, I)``
        (``model.to_pymc(noncentered=True)``). NUTS needs it for random intercepts with few
        rows per group, where the centred funnel between ``sigma2_u`` and ``u`` makes it
        diverge; the posterior (and the stored ``u``) is the same.
    **sample_kwargs
        Passed to ``pymc.sample``.
    """
    import pymc as pm

    pytensor_blas()
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2**31))
    with model.to_pymc(noncentered=noncentered):
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=seed,
            target_accept=target_accept,
            progressbar=progressbar,
            var_names=list(model.var_names),
            compute_convergence_checks=False,
            **sample_kwargs,
        )
    attach_data(idata, model)
    return model.result_class(
        model, idata, "nuts", "mcmc", n_iter=tune + draws, converged=mcmc_converged(idata)
    )
