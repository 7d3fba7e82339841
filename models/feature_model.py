"""What Drugowitsch's regression models share: a design ``X`` whose columns are the features."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesvm.models.validation import as_design

__all__ = ["FeatureModel"]


@dataclass(frozen=True, eq=False)
class FeatureModel:
    """A model of ``y`` on the inputs ``X`` with weights ``w`` over the ``feature`` dimension."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list

    @property
    def n_samples(self) -> int:
        """Number of observations ``N``."""
        return self.y.shape[0]

    @property
    def n_features(self) -> int:
        """Number of coefficients ``D``."""
        return self.X.shape[1]

    @property
    def factored_size(self) -> int:
        """Order of the matrix factored each iteration (sets BLAS threading)."""
        return self.n_features

    @property
    def coords(self) -> dict[str, list]:
        """Coordinates of the posterior dimensions."""
        return {"feature": list(self.feature_names)}

    def design_for(self, X_new) -> np.ndarray:
        """New inputs, checked against the number of features."""
        X_new = as_design(X_new)
        if X_new.shape[1] != self.n_features:
            raise ValueError(
                f"X has {X_new.shape[1]} features; the model was built with {self.n_features}"
            )
        return X_new

    def constant_data(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """Arrays stored in the ``constant_data`` group of every fit."""
        return {"X": (["obs_id", "feature"], self.X)}
