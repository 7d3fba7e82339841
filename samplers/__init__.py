"""Gibbs and EM over a model's blocks, and the PyMC NUTS runner."""

from bayesvm.samplers.em_svm import fit_ecme, fit_em  # noqa: F401  (register em/ecme)
from bayesvm.samplers.gibbs import fit_gibbs
from bayesvm.samplers.nuts import fit_nuts

__all__ = ["fit_gibbs", "fit_nuts"]
