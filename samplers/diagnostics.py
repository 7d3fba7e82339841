"""Convergence verdict shared by the MCMC backends."""

from __future__ import annotations

import arviz as az
import numpy as np

__all__ = ["mcmc_converged", "RHAT_MAX"]

# Vehtari et al. (2021): rank-normalised split R-hat below 1.01 for every parameter.
RHAT_MAX = 1.01


def mcmc_converged(idata) -> bool:
    """True when every posterior variable has R-hat < 1.01 (True for a single chain)."""
    if idata.posterior.sizes["chain"] < 2:
        return True
    rhat = az.rhat(idata)
    return bool(all(np.all(rhat[name].to_numpy() < RHAT_MAX) for name in rhat.data_vars))
