"""Variational Bayes backends: CAVI over a model's blocks."""

from bayesvm.vb.cavi import fit_vb

__all__ = ["fit_vb"]
