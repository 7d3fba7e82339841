"""Variational Bayes backends: CAVI over a model's blocks."""

from bayesvm.vb.cavi import fit_vb
from bayesvm.vb.linear_regression_vb import fit_linear_vb
from bayesvm.vb.logistic_regression_vb import fit_logit_vb
from bayesvm.vb.logistic_regression_vb_sequential import fit_logit_vb_sequential

__all__ = ["fit_vb", "fit_linear_vb", "fit_logit_vb", "fit_logit_vb_sequential"]
