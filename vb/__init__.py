"""Closed-form variational Bayes backends."""

from bayesvm.vb.svm_mfvb import fit_vb

__all__ = ["fit_vb"]
