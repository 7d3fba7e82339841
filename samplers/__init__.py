"""Gibbs and EM over a model's blocks, and the PyMC NUTS runner."""

from bayesvm.samplers.em import fit_ecme, fit_em
from bayesvm.samplers.gibbs import fit_gibbs
from bayesvm.samplers.nuts import fit_nuts

__all__ = ["fit_em", "fit_ecme", "fit_gibbs", "fit_nuts"]
