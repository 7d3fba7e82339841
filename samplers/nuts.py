"""PyMC NUTS on ``model.to_pymc()``: the MCMC baseline for every model PyMC can express.

Configured fairly: PyTensor is linked to an optimised BLAS where one is installed
(:func:`bayesvm._blas.pytensor_blas`, chosen before the first compile), the default
``target_accept`` is raised to 0.9 because the hinge potential has kinks, and only the
canonical variables are stored so the InferenceData matches every other backend.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from bayesvm._blas import pytensor_blas
from bayesvm.registry import register
from bayesvm.results import Fit, attach_data
from bayesvm.samplers.diagnostics import mcmc_problems

__all__ = ["fit_nuts", "NUTS_SAMPLERS"]

#: NUTS implementations ``fit_nuts`` runs: PyMC's own and nutpie's (an optional extra).
NUTS_SAMPLERS = ("pymc", "nutpie")


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
    sampler: str = "pymc",
    **sample_kwargs,
) -> Fit:
    """Fit by PyMC's NUTS, or by nutpie's.

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
    sampler : {"pymc", "nutpie"}
        ``"pymc"``: PyMC's NUTS on the model compiled to C (linked to BLAS where one is
        installed). ``"nutpie"``: nutpie's NUTS (``pip install "bayesvm[nutpie]"``) on the model
        compiled by Numba (``nuts_sampler="nutpie"`` of ``pymc.sample``); ``initvals`` are not
        passed to it. The stored variables are the same either way. PyMC's is the default:
        nutpie compiles anew in every process (seconds more than PyMC's C code, which PyTensor
        caches on disk) and mixed far worse on the non-centred toenail random intercept, though
        once compiled it drew several times more effective draws per second on the SVMs.
    **sample_kwargs
        Passed to ``pymc.sample``.
    """
    import pymc as pm

    if sampler not in NUTS_SAMPLERS:
        raise ValueError(f"sampler must be one of {NUTS_SAMPLERS}; got {sampler!r}")
    if sampler == "nutpie":
        if importlib.util.find_spec("nutpie") is None:
            raise ImportError(
                'sampler="nutpie" needs the nutpie package: pip install "bayesvm[nutpie]"'
            )
        # Like PyMC's sampler: keep no warm-up draws; run chains on ``cores`` threads.
        nutpie_options = {"save_warmup": False, **({"cores": cores} if cores else {})}
        sample_kwargs["nuts_sampler_kwargs"] = {
            **nutpie_options,
            **sample_kwargs.get("nuts_sampler_kwargs", {}),
        }
    else:
        pytensor_blas()
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2**31))
    var_names = list(model.var_names)
    with model.to_pymc(noncentered=noncentered):
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=seed,
            target_accept=target_accept,
            progressbar=progressbar,
            var_names=var_names,
            compute_convergence_checks=False,
            nuts_sampler=sampler,
            **sample_kwargs,
        )
    # nutpie also stores the unconstrained values (``nu_log__``): keep the canonical variables.
    idata.posterior = idata.posterior[var_names]
    attach_data(idata, model)
    return Fit(
        model,
        idata,
        "nuts",
        "mcmc",
        n_iter=tune + draws,
        converged=True,
        problems=mcmc_problems(idata),
    )
