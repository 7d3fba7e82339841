"""The Bayesian nonlinear SVM: a GP prior on the decision function (Wenzel et al. 2017).

Section 3: ``f ~ GP(0, k)`` with the RBF kernel ``k(x, x') = variance * exp(-||x - x'||^2 /
lengthscale^2)`` (:mod:`bayesvm.models.kernels`) and the hinge pseudo-likelihood ``exp(-2
max(0, 1 - y_i f_i))`` through Polson-Scott's augmentation ``lambda_i`` (eq. 3, 5). With
``inducing`` points ``Z`` (section 4.2) ``u = f(Z) ~ N(0, K_mm)`` and ``f | u ~
N(K_nm K_mm^-1 u, K~)`` (eq. 6); the variational bound (8) then only needs ``q(u)``.

The model is two blocks, :class:`~bayesvm.blocks.gp.GPValues` (``u``, whitened) and
:class:`~bayesvm.blocks.HingeAugmentation` (``lambda``), so:

* ``"vb"`` is B-BSVM (section 4.1; with inducing points, coordinate ascent on (8));
* ``"svi"`` is S-BSVM (Algorithm 1, :mod:`bayesvm.vb.svi`), with ML-II of the kernel's
  hyperparameters (section 4.3, :mod:`bayesvm.vb.ml2`) on request;
* ``"gibbs"`` draws ``f | lambda`` and ``lambda | f`` (eq. 5), ``"em"`` is the ECM of Henao
  et al. (the hinge's E-step, an exact M-step for ``f``), ``"nuts"`` is PyMC on
  :meth:`to_pymc`: the full GP only (``inducing=None``), small ``n``.

Class probabilities are section 4.4's ``p(y* = 1) = E Phi(f*) = Phi(m* / sqrt(1 + v*))`` for
``f* ~ N(m*, v*)``, the predictive of ``f`` at the new input (eq. 13, whose square root was
lost in print), averaged over draws for the samplers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

import numpy as np
from scipy.special import log_ndtr

from bayesvm.blocks import HingeAugmentation, block_drivers
from bayesvm.blocks.gp import gp_values
from bayesvm.linalg import automatic_threads, cholesky_lower, triangular_solve
from bayesvm.models.batches import RowSource, is_dask_array
from bayesvm.models.block_model import BlockModel
from bayesvm.models.gp_hyperparameters import hyperparameter_objective
from bayesvm.models.kernels import mean_distance, rbf_kernel
from bayesvm.models.linear_predictor import frame_to_arrays
from bayesvm.models.predictive import ClassPredictions
from bayesvm.models.validation import (
    as_design,
    check_positive_finite,
    design_and_names,
    encode_labels,
    feature_names_for,
)

__all__ = ["GPSVM", "select_inducing"]

INDUCING_METHODS = ("kmeans", "random")
#: ``K_ZZ + JITTER * variance * I`` is factored: the nugget every Cholesky of an RBF kernel
#: matrix needs (its smallest eigenvalues underflow).
JITTER = 1e-6
#: Rows k-means sees when choosing inducing points of a large data set.
KMEANS_SAMPLE = 20_000


def select_inducing(X: np.ndarray, m: int, method: str, rng: np.random.Generator) -> np.ndarray:
    """``m`` inducing locations: k-means centres with k-means++ seeding (section 4.2, 5.5),
    or a random subset of the rows.

    k-means runs with the threads :func:`~bayesvm.linalg.automatic_threads` gives a Lloyd
    iteration's work (BLAS and OpenMP alike): one, at the sizes it sees (at most
    :data:`KMEANS_SAMPLE` rows), where scikit-learn's default of every core was measured up to
    ten times slower on a loaded machine.
    """
    if method == "random":
        return X[np.sort(rng.choice(X.shape[0], m, replace=False))].copy()
    # imported here: scikit-learn's k-means costs about 1.5 s to import
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    seed = int(rng.integers(2**31 - 1))
    with threadpool_limits(limits=automatic_threads(float(X.shape[0]) * m * X.shape[1])):
        return KMeans(n_clusters=m, n_init=1, random_state=seed).fit(X).cluster_centers_


@dataclass(frozen=True, eq=False)
class GPSVM(ClassPredictions, BlockModel):
    """Bayesian nonlinear SVM with a GP prior, full or with inducing points.

    Build it with :meth:`from_arrays`, :meth:`from_frame` or (data on disk) :meth:`from_dask`.

    Attributes
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
    y : ndarray or dask array of shape (n_samples,)
        Labels coded -1/+1.
    classes : ndarray of shape (2,)
        Original labels; ``classes[1]`` is coded +1.
    feature_names : list of str
    lengthscale, variance : float
        The RBF kernel's hyperparameters.
    inducing_points : ndarray of shape (m, n_features) or None
        ``Z``; None for the full GP (``Z = X``).
    inducing_method : str
        How ``Z`` was chosen: "kmeans", "random", "given" or "none".
    """

    X: object
    y: object
    classes: np.ndarray
    feature_names: list
    lengthscale: float
    variance: float = 1.0
    inducing_points: np.ndarray | None = None
    inducing_method: str = "none"

    #: B-BSVM stops when the bound rises by less than 1e-8 of its size.
    vb_settings = {"tol": 1e-8, "max_iter": 10_000, "relative": True}
    #: Paper section 5.1: minibatches of 10.
    svi_settings = {"batch_size": 10}
    #: Section 5.4: ML-II of the length-scale (the hinge pseudo-likelihood's bound rises
    #: without end in the variance on well separated data: :func:`bayesvm.vb.svi.fit_svi`).
    default_learned = ("lengthscale",)
    gibbs_settings = {"draws": 2000, "tune": 1000}

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        *,
        lengthscale: float | None = None,
        variance: float = 1.0,
        inducing=None,
        inducing_method: Literal["kmeans", "random"] = "kmeans",
        seed=0,
        feature_names=None,
        positive_class=None,
    ) -> GPSVM:
        """Build the model from inputs and labels in memory.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes.
        lengthscale : float, optional
            Default: the mean Euclidean distance between training points (over 2,000 of
            them at most), as Zhang et al. section 4; ML-II (``fit(..., "svi",
            learn_hyperparameters=True)``) tunes it.
        variance : float
            The kernel's variance (the prior variance of ``f(x)``).
        inducing : None, int or array of shape (m, n_features)
            None: the full GP. An int: that many inducing points chosen by
            ``inducing_method`` (k-means, section 5.5's best, or a random subset of the rows).
            An array: the locations.
        seed : int or numpy Generator
            For k-means / the random subset.
        feature_names, positive_class
            Labels of the input columns; the class coded +1.
        """
        X, feature_names = design_and_names(X, feature_names)
        n_samples = X.shape[0]
        if n_samples < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={n_samples}")
        y_pm, classes = encode_labels(y, n_samples, positive_class)
        options = (feature_names, lengthscale, variance, inducing, inducing_method, seed)
        return cls._build(X, y_pm, classes, *options)

    @classmethod
    def from_frame(cls, df, target: str, features=None, **kwargs) -> GPSVM:
        """Build from a DataFrame: ``target`` is the label column, ``features`` the inputs
        (default: every other column); keyword arguments as :meth:`from_arrays`.
        """
        X, y, names = frame_to_arrays(df, target, features)
        return cls.from_arrays(X, y, feature_names=names, **kwargs)

    @classmethod
    def from_dask(
        cls,
        X,
        y,
        *,
        lengthscale: float | None = None,
        variance: float = 1.0,
        inducing=64,
        inducing_method: Literal["kmeans", "random"] = "kmeans",
        seed=0,
        feature_names=None,
    ) -> GPSVM:
        """Build the model on Dask arrays (e.g. ``dask.array.from_npy_stack``, ``from_zarr``
        or a Parquet frame's ``to_dask_array(lengths=True)``), chunked along the rows.

        Nothing is loaded but a sample for k-means (:data:`KMEANS_SAMPLE` rows) and the labels'
        distinct values; stochastic VI then reads one chunk at a time (``"svi"`` is the only
        method). Labels must be 0/1 or -1/+1. Other arguments as :meth:`from_arrays`;
        ``inducing`` is required.
        """
        if not (is_dask_array(X) and is_dask_array(y)):
            raise ValueError("from_dask takes Dask arrays; use from_arrays for NumPy arrays")
        if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
            raise ValueError(f"need X (n, d) and y (n,); got shapes {X.shape} and {y.shape}")
        if inducing is None:
            raise ValueError("from_dask needs inducing points (the full GP holds every row)")
        if len(X.chunks[1]) != 1:
            X = X.rechunk({1: -1})
        classes = _distinct(y)
        if classes.size != 2 or not ({*classes} <= {0, 1} or {*classes} <= {-1, 1}):
            raise ValueError(f"from_dask needs labels 0/1 or -1/+1 (two classes); got {classes}")
        y_pm = (2.0 * (y > 0) - 1.0).astype(float)
        options = (feature_names, lengthscale, variance, inducing, inducing_method, seed)
        return cls._build(X, y_pm, classes, *options)

    @classmethod
    def _build(
        cls, X, y, classes, feature_names, lengthscale, variance, inducing, method, seed
    ) -> GPSVM:
        source = RowSource(X, y)
        n_features = X.shape[1]
        check_positive_finite(variance=variance)
        if method not in INDUCING_METHODS:
            raise ValueError(f"inducing_method must be one of {INDUCING_METHODS}; got {method!r}")
        rng = np.random.default_rng(seed)
        sample = None
        if inducing is None:
            points, method = None, "none"
        elif isinstance(inducing, int | np.integer) and not isinstance(inducing, bool):
            if not 1 <= inducing <= source.n_rows:
                raise ValueError(
                    f"inducing must be in [1, n_samples={source.n_rows}]; got {inducing}"
                )
            sample = source.sample(KMEANS_SAMPLE, rng)
            points = select_inducing(sample, int(inducing), method, rng)
        else:
            points, method = as_design(inducing, "inducing"), "given"
            if points.shape[1] != n_features:
                raise ValueError(
                    f"inducing points have {points.shape[1]} columns; X has {n_features}"
                )
        if lengthscale is None:
            sample = source.sample(KMEANS_SAMPLE, rng) if sample is None else sample
            lengthscale = mean_distance(sample)
            if not lengthscale > 0.0:
                raise ValueError("every training point is the same: no default lengthscale")
        check_positive_finite(lengthscale=lengthscale)
        return cls(
            X=X,
            y=y,
            classes=classes,
            feature_names=feature_names_for(n_features, feature_names),
            lengthscale=float(lengthscale),
            variance=float(variance),
            inducing_points=points,
            inducing_method=method,
        )

    # -- the kernel -------------------------------------------------------------------------
    @property
    def full(self) -> bool:
        """Whether the GP is full (its values at the training points), not sparse."""
        return self.inducing_points is None

    @property
    def streamed(self) -> bool:
        """Whether the data are Dask arrays, read a chunk at a time."""
        return is_dask_array(self.X)

    @property
    def locations(self) -> np.ndarray:
        """``Z``: the inducing points, or the training inputs for the full GP."""
        return self.X if self.full else self.inducing_points

    @property
    def hyperparameters(self) -> dict[str, float]:
        """The kernel's ``lengthscale`` and ``variance``."""
        return {"lengthscale": self.lengthscale, "variance": self.variance}

    def with_hyperparameters(self, lengthscale: float, variance: float) -> GPSVM:
        """The same model at other kernel hyperparameters (ML-II's result)."""
        return replace(self, lengthscale=float(lengthscale), variance=float(variance))

    def hyperparameter_gradient(self, batch, blocks, params, stats) -> np.ndarray:
        """Gradient of the bound (8) in ``(log lengthscale, log variance)`` on the rows of
        ``batch``, counted as the hinge block of ``blocks`` scales them, at ``q(u) = N(mean,
        covariance)`` of the GP values' ``params`` and the weights ``E[1/lambda_i]`` (section
        4.3, eq. 12; :mod:`bayesvm.models.gp_hyperparameters`).
        """
        values, _, hinge = blocks
        scale = hinge.scale
        mean, covariance = values.moments(params[values.name])
        _, gradient = hyperparameter_objective(
            self.locations, batch.X, batch.y, stats[hinge.name].weights / scale, scale, mean,
            covariance, self.lengthscale, self.variance, JITTER,
        )  # fmt: skip
        return gradient

    def transfer_natural(self, natural: dict, blocks, model: GPSVM) -> dict:
        """``q(u)`` kept, ``q(v)`` re-expressed in ``model``'s whitening
        (:meth:`~bayesvm.blocks.gp.GPValues.rewhitened`).
        """
        values = blocks[0]
        return {**natural, values.name: values.rewhitened(natural[values.name], model.whitening)}

    def kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``k(a, b)`` between the rows of ``A`` and ``B``."""
        return rbf_kernel(A, B, self.lengthscale, self.variance)

    @cached_property
    def whitening(self) -> np.ndarray:
        """``L``, the lower Cholesky factor of ``K_ZZ + JITTER * variance * I``."""
        K = self.kernel(self.locations, self.locations)
        K.flat[:: K.shape[0] + 1] += JITTER * self.variance
        return cholesky_lower(K)

    def features(self, X_rows: np.ndarray, rows=None) -> tuple[np.ndarray, np.ndarray]:
        """``Psi = K_XZ L^-T`` and ``kt = k(x, x) - ||psi||^2`` at the rows ``X_rows``: for the
        full GP at training ``rows``, the rows of ``L`` and 0 (``f = L v`` exactly).
        """
        if self.full and rows is not None:
            return self.whitening[rows], np.zeros(len(rows))
        psi = triangular_solve(self.whitening, self.kernel(self.locations, X_rows)).T
        residual = np.maximum(self.variance - np.einsum("ij,ij->i", psi, psi), 0.0)
        return psi, residual

    # -- blocks -----------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """Number of training points."""
        return self.X.shape[0]

    @property
    def n_basis(self) -> int:
        """``m``: the number of GP values the model holds (``n`` for the full GP)."""
        return self.locations.shape[0]

    @property
    def var_name(self) -> str:
        """``f`` (full GP) or ``u_ind`` (inducing values)."""
        return "f" if self.full else "u_ind"

    @property
    def var_names(self) -> tuple[str, ...]:
        """``f`` or ``u_ind`` (without building the blocks, which may need every row)."""
        return (self.var_name,)

    @property
    def dims(self) -> dict[str, list[str]]:
        """``f`` over ``obs_id``, ``u_ind`` over ``inducing``."""
        return {self.var_name: ["obs_id" if self.full else "inducing"]}

    @property
    def flops_per_iteration(self) -> float:
        """Work of a B-BSVM iteration, ``n m^2 + m^3``."""
        return float(self.n_samples) * self.n_basis**2 + float(self.n_basis) ** 3

    @property
    def coords(self) -> dict[str, list]:
        """``obs_id`` or ``inducing`` (the GP's points) and ``basis`` (its whitened form)."""
        points = list(range(self.n_basis))
        return {("obs_id" if self.full else "inducing"): points, "basis": points}

    def batch_blocks(self, rows, X_rows, y_rows, scale: float = 1.0) -> list:
        """The blocks on some rows, their likelihood counted ``scale`` times (SVI's
        minibatch stands for ``n / |S|`` copies of itself).
        """
        features, residual = self.features(X_rows, rows)
        dim = "obs_id" if self.full else "inducing"
        values = gp_values(features, residual, self.whitening, self.var_name, dim)
        return [values, values.prior, HingeAugmentation(y_rows, scale=scale)]

    def report_blocks(self) -> list:
        """The blocks on one row: ``q(u)`` does not depend on the rows, and stochastic VI must
        not hold the design of every row.
        """
        n = self.n_samples
        return self.batch_blocks(np.arange(min(n, 1)), np.asarray(self.locations[:1]), np.ones(1))

    def build_blocks(self) -> list:
        """The GP values, their unit prior and the hinge augmentation, on every row."""
        if self.streamed:
            raise ValueError(
                "this model reads its rows from Dask chunks: only method='svi' can fit it"
            )
        return self.batch_blocks(np.arange(self.n_samples), self.X, self.y)

    @property
    def drivers(self) -> list[str]:
        """The blocks' drivers; ``"svi"`` alone when the rows stream from Dask.

        With inducing points they are read off the blocks on one row (the kernel's jitter
        keeps its ``kt`` positive even at an inducing point), not on every row: stochastic VI
        must not hold the ``n x m`` design ``Psi`` of the whole data set.
        """
        if self.full:
            return block_drivers(self.blocks)
        row = np.asarray(self.X[:1], dtype=float)
        drivers = block_drivers(self.batch_blocks(None, row, np.ones(1)))
        return [driver for driver in drivers if driver == "svi" or not self.streamed]

    def minibatches(self, batch_size: int, rng: np.random.Generator):
        """Endless random minibatches of training rows (:class:`~bayesvm.models.batches.
        RowSource`).
        """
        return RowSource(self.X, self.y).minibatches(batch_size, rng)

    @property
    def pymc_specified(self) -> bool:
        """Whether :meth:`to_pymc` states the model: the full GP in memory (with inducing
        points the bound (8) is not the posterior of a model).
        """
        return self.full and not self.streamed

    def to_pymc(self, noncentered: bool = False):
        """The full GP as a PyMC model (``f = L v``, ``v ~ N(0, I)``, the hinge potential)."""
        if not self.pymc_specified:
            raise ValueError("only the full GP in memory (inducing=None) has a PyMC statement")
        return super().to_pymc(noncentered)

    def pymc_blocks(self) -> list:
        """The GP values, then the hinge's potential (which reads ``f``)."""
        return sorted(self.blocks, key=lambda block: block.latent)

    # -- predictions ------------------------------------------------------------------------
    def latent_predictive(self, fit, X_new, max_draws: int = 1000):
        """Mean and variance of ``f(x_new)``: ``(n_new,)`` each under ``q`` (VB, SVI), or
        ``(draws, n_new)`` means and ``(n_new,)`` conditional variances over draws.
        """
        X_new = as_design(X_new, "X_new")
        if X_new.shape[1] != len(self.feature_names):
            raise ValueError(
                f"X_new has {X_new.shape[1]} columns; the model was built with "
                f"{len(self.feature_names)}"
            )
        psi, residual = self.features(X_new)
        L = self.whitening
        variational = getattr(fit.idata, "variational", None)
        name = self.var_name
        if variational is not None and f"{name}_mean" in variational:
            mean_v = triangular_solve(L, variational[f"{name}_mean"].values)
            half = triangular_solve(L, variational[f"{name}_covariance"].values)
            cov_v = triangular_solve(L, half.T)  # L^-1 S L^-T
            return psi @ mean_v, residual + np.einsum("ij,jk,ik->i", psi, cov_v, psi)
        return self._latent_means(fit, psi, max_draws), residual

    def _latent_means(self, fit, psi: np.ndarray, max_draws: int | None) -> np.ndarray:
        """``E(f | u) = psi^T L^-1 u`` at the rows of ``psi`` for up to ``max_draws`` posterior
        draws of ``u``: ``(draws, rows)``.
        """
        (values,) = fit.draws([self.var_name], max_draws)
        return triangular_solve(self.whitening, values.T).T @ psi.T

    def decision_function(self, fit, X_new) -> np.ndarray:
        """Posterior mean of ``f(x_new)``."""
        mean, _ = self.latent_predictive(fit, X_new)
        return mean if mean.ndim == 1 else mean.mean(axis=0)

    def predict(self, fit, X_new) -> np.ndarray:
        """Labels by the sign of ``p(y = +1) - 1/2``."""
        positive = self.predict_proba(fit, X_new)[:, 1] > 0.5
        return np.where(positive, self.classes[1], self.classes[0])

    def predict_proba(self, fit, X_new, max_draws: int = 1000) -> np.ndarray:
        """``[p(-1), p(+1)]`` with ``p(+1) = Phi(m / sqrt(1 + v))`` (module docstring)."""
        mean, var = self.latent_predictive(fit, X_new, max_draws)
        z = np.atleast_2d(mean / np.sqrt(1.0 + var))  # one row per draw (one under q)
        return np.column_stack(
            [np.exp(log_ndtr(-z)).mean(axis=0), np.exp(log_ndtr(z)).mean(axis=0)]
        )

    def training_log_probability(self, fit, labels) -> np.ndarray:
        """Section 4.4's ``log p(y_i = labels_i) = log Phi(labels_i m_i / sqrt(1 + v_i))`` at
        each training point for each posterior draw of ``u`` (VB and SVI: the draws from
        ``q``), with ``m_i`` and ``v_i`` the mean and variance of ``f_i`` given ``u`` (eq. 6;
        ``f_i`` itself and 0 for the full GP).
        """
        psi, residual = self.features(np.asarray(self.X), np.arange(self.n_samples))
        mean = self._latent_means(fit, psi, None)
        return log_ndtr(labels * mean / np.sqrt(1.0 + residual))

    def constant_data(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """The inducing points (the training inputs are in memory for a full GP only)."""
        if self.full:
            return {"X": (["obs_id", "input"], self.X)}
        return {"Z": (["inducing", "input"], self.inducing_points)}


def _distinct(y) -> np.ndarray:
    """The distinct values of a Dask array (one pass)."""
    import dask.array as da

    return da.unique(y).compute()
