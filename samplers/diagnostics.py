"""What the MCMC backends share: the convergence verdict and the result they build."""

from __future__ import annotations

import arviz as az
import numpy as np

from bayesvm.results import build_idata

__all__ = ["mcmc_converged", "mcmc_fit", "RHAT_MAX"]

# Vehtari et al. (2021): rank-normalised split R-hat below 1.01 for every parameter.
RHAT_MAX = 1.01


def mcmc_converged(idata) -> bool:
    """True when every posterior variable has R-hat < 1.01 (True for a single chain)."""
    if idata.posterior.sizes["chain"] < 2:
        return True
    rhat = az.rhat(idata)
    return bool(all(np.all(rhat[name].to_numpy() < RHAT_MAX) for name in rhat.data_vars))


def mcmc_fit(model, result, method: str):
    """The model's Fit (``model.result_class``) from :func:`~bayesvm.drivers.run_mcmc`'s draws."""
    idata = build_idata(model, result.samples)
    converged = not result.interrupted and mcmc_converged(idata)
    return model.result_class(
        model, idata, method, "mcmc", n_iter=result.n_iter, converged=converged
    )
