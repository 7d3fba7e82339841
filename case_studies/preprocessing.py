"""Preparing the predictors of the case studies' real data sets."""

from __future__ import annotations

import numpy as np

__all__ = ["standardize"]


def standardize(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Centre and scale ``train`` and each of ``others`` by the columns' mean and sd in
    ``train``.

    Both papers standardise their predictors before fitting (Luts-Ormerod sections 4.3-4.5,
    Polson-Scott section 5); a test part is scaled with its training part's moments. Missing
    cells (NaN, e.g. the cardiac data's cholesterol, section 4.5) stay missing and are left out
    of the moments. A column that is constant in ``train`` (sd 0, e.g. a rare word in a small
    sample) is only centred: it becomes 0 there and carries no information, rather than NaN.

    Parameters
    ----------
    train : ndarray of shape (n_samples, n_features)
    *others : ndarray of shape (n_other, n_features)

    Returns
    -------
    list of ndarray
        ``train`` and each of ``others``, transformed, in that order.
    """
    mean, sd = np.nanmean(train, axis=0), np.nanstd(train, axis=0)
    sd = np.where(sd > 0.0, sd, 1.0)
    return [(values - mean) / sd for values in (train, *others)]
