"""The fits the experiments of Wenzel et al. (2017) section 5 share beside their own loops.

scikit-learn's baselines of Table 1 and Figure 1, with the same RBF kernel as the GP SVM:
the GP classifier (Laplace approximation, hyperparameters fixed) and LIBSVM's C-SVC with
Platt scaling; and S-BSVM with ML-II of the kernel (section 4.3), which chooses the kernel of
Table 1's data sets and of the big-data experiment (:mod:`bayesvm.case_studies.gpsvm.big_data`).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

import bayesvm
from bayesvm.models import GPSVM

__all__ = ["gp_classifier", "platt_svm", "fit_platt_svm", "sklearn_seed", "mlii_fit"]


def gp_classifier(lengthscale: float, variance: float) -> GaussianProcessClassifier:
    """scikit-learn's GP classifier (Laplace) with our RBF kernel, hyperparameters fixed:
    ``ConstantKernel(variance) * RBF(lengthscale / sqrt(2))`` (scikit-learn's RBF is
    ``exp(-d^2 / (2 l^2))``).
    """
    kernel = ConstantKernel(variance, constant_value_bounds="fixed") * RBF(
        lengthscale / np.sqrt(2.0), length_scale_bounds="fixed"
    )
    return GaussianProcessClassifier(kernel, optimizer=None)


def platt_svm(C: float, lengthscale: float, seed) -> CalibratedClassifierCV:
    """LIBSVM's C-SVC with the RBF kernel ``exp(-||x - x'||^2 / lengthscale^2)`` (``gamma =
    lengthscale**-2``) and Platt scaling (Platt 1999): a sigmoid fitted to its decision values
    on 5 cross-validation folds, then the SVC refitted on all rows, as LIBSVM's
    ``-b 1`` (scikit-learn's ``CalibratedClassifierCV(..., ensemble=False)``).
    """
    rng = np.random.default_rng(seed)
    return CalibratedClassifierCV(
        SVC(kernel="rbf", gamma=lengthscale**-2.0, C=C, random_state=sklearn_seed(rng)),
        method="sigmoid",
        ensemble=False,
        cv=StratifiedKFold(n_splits=5, shuffle=True, random_state=sklearn_seed(rng)),
    )


def fit_platt_svm(
    X, y, *, lengthscale: float, log2_C, folds: int, seed
) -> tuple[SVC, CalibratedClassifierCV, float, float]:
    """The SVM of Table 1: ``C`` chosen by stratified ``folds``-fold cross-validation accuracy
    over ``2**log2_C`` (RBF kernel of ``lengthscale``), then :func:`platt_svm` fitted.

    Returns
    -------
    svm : sklearn.svm.SVC
        The SVC with the chosen ``C`` refitted on all of ``X`` (its labels are the SVM's).
    platt : sklearn.calibration.CalibratedClassifierCV
        :func:`platt_svm` fitted to ``X`` (its probabilities are the SVM's).
    seconds : float
        Wall time of fitting ``platt`` (the paper's SVM + Platt at fixed parameters).
    tuning_seconds : float
        Wall time of the cross-validation over ``C``.
    """
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    search = GridSearchCV(
        SVC(kernel="rbf", gamma=lengthscale**-2.0),
        {"C": 2.0 ** np.asarray(log2_C)},
        cv=StratifiedKFold(n_splits=folds, shuffle=True, random_state=sklearn_seed(rng)),
    ).fit(X, y)
    tuning_seconds = time.perf_counter() - start
    start = time.perf_counter()
    platt = platt_svm(search.best_params_["C"], lengthscale, rng).fit(X, y)
    return search.best_estimator_, platt, time.perf_counter() - start, tuning_seconds


def sklearn_seed(rng: np.random.Generator) -> int:
    """A seed for scikit-learn's ``random_state`` drawn from ``rng``."""
    return int(rng.integers(2**31 - 1))


def mlii_fit(X, y, inducing: int, protocol, rng, *, batch_size=None):
    """S-BSVM with ML-II of the lengthscale, started at the mean distance between rows (the
    model's default), unit variance; the fit and the model at the learned lengthscale.
    """
    model = GPSVM.from_arrays(X, y, variance=1.0, inducing=inducing, seed=sklearn_seed(rng))
    fitted = bayesvm.fit(
        model,
        "svi",
        batch_size=batch_size or protocol.batch_size,
        learn_hyperparameters=True,
        hyper_every=protocol.mlii_hyper_every,
        **({} if protocol.mlii_max_iter is None else {"max_iter": protocol.mlii_max_iter}),
        seed=rng,
        progressbar=False,
    )
    return fitted, fitted.model
