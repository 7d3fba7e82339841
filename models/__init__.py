"""Bayesian SVM models: data, priors with the papers' defaults, and the PyMC specification."""

from bayesvm.models.gp_svm import GPSVM
from bayesvm.models.kernel_gkm import KernelGKM
from bayesvm.models.linear_predictor import LinearPredictorSVM
from bayesvm.models.linear_regression import LinearRegression
from bayesvm.models.linear_svm import LinearSVM
from bayesvm.models.logistic_regression import LogisticRegression
from bayesvm.models.missing_data import MissingDataSVM
from bayesvm.models.mixed_svm import MixedSVM
from bayesvm.models.penalties import FixedGaussian, Laplace, LaplaceSlab, LearnedGaussian
from bayesvm.models.spike_slab import SpikeSlabSVM

__all__ = [
    "GPSVM",
    "KernelGKM",
    "LinearPredictorSVM",
    "LinearRegression",
    "LinearSVM",
    "LogisticRegression",
    "MixedSVM",
    "MissingDataSVM",
    "SpikeSlabSVM",
    "FixedGaussian",
    "LearnedGaussian",
    "Laplace",
    "LaplaceSlab",
]
