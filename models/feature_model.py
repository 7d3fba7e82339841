"""What Drugowitsch's regression models share: a design ``X`` whose columns are the features,
the blocks' model interface (:class:`~bayesvm.models.block_model.BlockModel`) and the paper's
stopping rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesvm.blocks.gaussian_priors import PRECISION_STARTS, GammaPrecision
from bayesvm.models.block_model import BlockModel
from bayesvm.models.identification import design_problems, warn_if_not_identified
from bayesvm.models.validation import as_design

__all__ = ["FeatureModel"]


@dataclass(frozen=True, eq=False)
class FeatureModel(BlockModel):
    """A model of ``y`` on the inputs ``X`` with weights ``w`` over the ``feature`` dimension."""

    #: Drugowitsch sections 2.5 and 3.5: stop when the bound rises by less than 0.001 %, or
    #: after 500 iterations.
    vb_settings = {"tol": 1e-5, "max_iter": 500, "relative": True}
    #: Gibbs chain length per chain (the exact sampler mixes fast).
    gibbs_settings = {"draws": 2000, "tune": 500}

    X: np.ndarray
    y: np.ndarray
    feature_names: list

    def __post_init__(self):
        warn_if_not_identified(design_problems(self.X, self.feature_names), type(self).__name__)

    @property
    def n_samples(self) -> int:
        """Number of observations ``N``."""
        return self.y.shape[0]

    @property
    def n_features(self) -> int:
        """Number of coefficients ``D``."""
        return self.X.shape[1]

    @property
    def flops_per_iteration(self) -> float:
        """Work of one iteration, ``X^T Lambda X`` and the ``D x D`` factorisation (sets BLAS
        threading).
        """
        return 2.0 * self.n_samples * self.n_features**2 + self.n_features**3

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

    def predictor(self, X_new, theta) -> np.ndarray:
        """``f = X w`` at new inputs for weights ``theta`` of shape ``(..., D)``."""
        return theta @ self.design_for(X_new).T

    def constant_data(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """Arrays stored in the ``constant_data`` group of every fit."""
        return {"X": (["obs_id", "feature"], self.X)}

    def shrinkage_block(
        self, coefficients: str, shape: float, rate: float, q_names: tuple
    ) -> GammaPrecision:
        """Drugowitsch's ``alpha ~ Gam(shape, rate)`` on every weight: one shared precision
        (eq. 4, 40) or one per weight with ARD (eq. 24, 69, ``self.ard``), VB started from its
        prior mean and from 1 (:data:`~bayesvm.blocks.gaussian_priors.PRECISION_STARTS`);
        ``q_names`` are the names of ``q(alpha)``'s parameters in the paper's code.
        """
        return GammaPrecision(
            "alpha",
            shape=shape,
            rate=rate,
            coefficients=coefficients,
            segment=slice(0, self.n_features),
            scale=np.ones(self.n_features),
            ard=self.ard,
            report="precision",
            report_name="alpha",
            dims=["feature"],
            starts=PRECISION_STARTS,
            q_names=q_names,
        )
