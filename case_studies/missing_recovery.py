"""How well the missing-data SVM recovers its coefficients as values go missing (simulated).

Not in the paper. Rows of 4 predictors, equicorrelated (0.6), labels from a logistic model
``P(y = 1) = expit(0.3 + d^T (1, -1, 0.5, 0.8))``; values of the first two predictors go
missing completely at random with probability ``fraction``. Each data set is fitted by VB
three ways:

* ``"imputation"``: :class:`~bayesvm.models.MissingDataSVM` on every row (Luts-Ormerod 3.3);
* ``"complete_cases"``: :meth:`~bayesvm.models.MixedSVM.penalized` on the complete rows;
* ``"mean_imputation"``: the same model with each missing value replaced by its column's mean.

The reference is the penalised SVM fitted to the same rows before any value went missing.
Reported per fit (:func:`recovery_curve`): the relative error of ``(beta, u)``, the angle
between ``u`` and the reference's (the direction is what classifies), the norm of the weights of
the columns with missing values relative to the reference's, and the balanced error rate on
20,000 new complete rows.

What it shows (:func:`summary_table`; the README has the numbers): the imputation model
classifies as well as the complete-case fit and better than mean imputation, but its weights on
the incomplete columns grow with the missing fraction. The hinge pseudo-likelihood
``exp(-2 max(0, 1 - y f))`` is not normalised over ``y``: its normaliser, larger far from the
margin, is left out, so the imputed cells are drawn away from the margin on their label's side,
which makes those columns look more separating than they are. Gibbs sampling shows the same
(it is the model, not the mean-field approximation).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import bayesvm
from bayesvm.blocks.missing_cells import mean_filled
from bayesvm.case_studies.metrics import balanced_error_rate
from bayesvm.models import MissingDataSVM, MixedSVM

__all__ = ["recovery_curve", "summary_table", "simulate", "WEIGHTS", "INCOMPLETE_COLUMNS"]

WEIGHTS = np.array([1.0, -1.0, 0.5, 0.8])
INTERCEPT = 0.3
CORRELATION = 0.6
#: The columns whose values go missing.
INCOMPLETE_COLUMNS = np.array([0, 1])
METHODS = ("imputation", "complete_cases", "mean_imputation")


def simulate(n_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Equicorrelated Gaussian predictors and logistic labels (module docstring)."""
    d = WEIGHTS.size
    covariance = CORRELATION + (1.0 - CORRELATION) * np.eye(d)
    # Cholesky, not numpy's default SVD: the covariance's repeated eigenvalue leaves the SVD's
    # basis, hence the data, to the LAPACK build.
    D = rng.multivariate_normal(np.zeros(d), covariance, n_samples, method="cholesky")
    probability = 1.0 / (1.0 + np.exp(-(INTERCEPT + D @ WEIGHTS)))
    return D, np.where(rng.random(n_samples) < probability, 1, -1)


def _fits(D: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """``(beta, u)`` of each method by VB (``q``'s exact means). The curve reads nothing else,
    so each fit keeps one draw of ``q`` and weighs none for its k-hat, which would take two
    thirds of the curve's time.
    """
    complete = ~np.isnan(D).any(axis=1)
    models = {
        "imputation": MissingDataSVM.from_arrays(D, y),
        "complete_cases": MixedSVM.penalized(D[complete], y[complete]),
        "mean_imputation": MixedSVM.penalized(mean_filled(D), y),
    }
    return {
        name: np.concatenate(bayesvm.fit(model, method="vb", draws=1).coefficient_means())
        for name, model in models.items()
    }


def recovery_curve(
    fractions=(0.0, 0.2, 0.4, 0.6), n_seeds: int = 6, n_samples: int = 400, seed: int = 0
) -> pd.DataFrame:
    """One row per data set, missing fraction and method (module docstring).

    Columns: ``seed``, ``fraction``, ``method``, ``coefficient_error`` (``||theta -
    theta_ref|| / ||theta_ref||``), ``angle_deg`` (between ``u`` and ``u_ref``),
    ``incomplete_norm_ratio`` (``||u_J|| / ||u_ref,J||`` over the incomplete columns ``J``) and
    ``ber`` (on 20,000 new complete rows).
    """
    streams = np.random.SeedSequence(seed).spawn(n_seeds + 1)
    D_test, y_test = simulate(20_000, np.random.default_rng(streams[-1]))
    rows = []
    for k in range(n_seeds):
        rng = np.random.default_rng(streams[k])
        D, y = simulate(n_samples, rng)
        hide_draws = rng.random(D.shape)
        reference = _fits(D, y)["complete_cases"]
        u_ref = reference[1:]
        for fraction in fractions:
            hide = np.zeros(D.shape, dtype=bool)
            hide[:, INCOMPLETE_COLUMNS] = hide_draws[:, INCOMPLETE_COLUMNS] < fraction
            for method, theta in _fits(np.where(hide, np.nan, D), y).items():
                u = theta[1:]
                cosine = u @ u_ref / (np.linalg.norm(u) * np.linalg.norm(u_ref))
                predicted = np.where(theta[0] + D_test @ u > 0, 1, -1)
                rows.append(
                    {
                        "seed": k,
                        "fraction": fraction,
                        "method": method,
                        "coefficient_error": np.linalg.norm(theta - reference)
                        / np.linalg.norm(reference),
                        "angle_deg": float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0)))),
                        "incomplete_norm_ratio": np.linalg.norm(u[INCOMPLETE_COLUMNS])
                        / np.linalg.norm(u_ref[INCOMPLETE_COLUMNS]),
                        "ber": balanced_error_rate(y_test, predicted),
                    }
                )
    return pd.DataFrame(rows)


def summary_table(curve: pd.DataFrame) -> pd.DataFrame:
    """Means over the data sets: one row per missing fraction, a column per statistic and
    method.
    """
    statistics = ["coefficient_error", "angle_deg", "incomplete_norm_ratio", "ber"]
    table = curve.pivot_table(index="fraction", columns="method", values=statistics)
    return table.reindex(columns=pd.MultiIndex.from_product([statistics, METHODS]))
