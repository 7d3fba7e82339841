"""What the MCMC backends share: the convergence verdict and the result they build."""

from __future__ import annotations

import arviz as az
import numpy as np
import xarray as xr

from bayesvm.results import build_idata

__all__ = ["mcmc_converged", "mcmc_fit", "RHAT_MAX"]

# Vehtari et al. (2021): rank-normalised split R-hat below 1.01 for every parameter.
RHAT_MAX = 1.01


def mcmc_converged(idata) -> bool:
    """True when every posterior variable has R-hat < 1.01.

    A single chain is judged by cutting it into halves taken as two chains (so R-hat compares
    four quarters): a chain that drifts, or sits in one mode for half the run and another
    for the rest, fails as it should.
    """
    posterior = idata.posterior
    if posterior.sizes["chain"] < 2:
        half = posterior.sizes["draw"] // 2
        if half < 4:
            return False
        posterior = xr.Dataset(
            {
                name: (
                    ["chain", "draw", *values.dims[2:]],
                    values.to_numpy()[0, : 2 * half].reshape(2, half, *values.shape[2:]),
                )
                for name, values in posterior.data_vars.items()
            }
        )
    rhat = az.rhat(posterior)
    return bool(all(np.all(rhat[name].to_numpy() < RHAT_MAX) for name in rhat.data_vars))


def mcmc_fit(model, result, method: str):
    """The model's Fit (``model.result_class``) from :func:`~bayesvm.drivers.run_mcmc`'s draws."""
    idata = build_idata(model, result.samples)
    converged = not result.interrupted and mcmc_converged(idata)
    return model.result_class(
        model, idata, method, "mcmc", n_iter=result.n_iter, converged=converged
    )
