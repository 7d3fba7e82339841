"""Variational Bayes backends: CAVI over a model's blocks, and stochastic VI on minibatches."""

from bayesvm.vb.cavi import fit_vb
from bayesvm.vb.svi import fit_svi

__all__ = ["fit_vb", "fit_svi"]
