"""Bayesian generalized kernel models with Silverman's g-prior (Zhang, Dai, Wang & Jordan 2010).

Section 3.1's hierarchy: ``s = u 1 + K_gamma beta_gamma + eps`` with ``eps ~ N(0, I)`` and
``y_i = 1{s_i > 0}`` (the probit link), ``beta_gamma ~ N(0, (g K_gamma,gamma)^-1)`` (the
Silverman g-prior, section 2.2), ``u ~ N(0, 1/eta)``, ``g ~ Ga(a_g/2, b_g/2)``, ``eta ~
Ga(a_eta/2, b_eta/2)``, and the Beta-Bernoulli prior of eq. (10) on the active vectors
``gamma``, at most ``k_max`` of them. Defaults are section 4's: ``a_eta = 1, b_eta = 0.1, a_g =
4, b_g = 0.1, a_alpha = b_alpha = 1`` and the kernel ``K(x, x') = exp(-||x - x'||^2 /
theta^2)`` with ``theta`` the mean Euclidean distance between training points.

``likelihood="hinge"`` puts the hinge pseudo-likelihood in place of the probit, through
Polson-Scott's augmentation (the SVM version the paper's conclusion proposes, after Mallick
et al. 2005): the same blocks as the linear SVMs.

``likelihood="gaussian"`` is the regression GKM of section 2.1 (``p(y | mu)`` normal, ``tau``
the identity): ``y = u 1 + K_gamma beta_gamma + eps`` with ``eps ~ N(0, I / tau)``, observed
rather than latent, and ``tau ~ Ga(a_tau/2, b_tau/2)`` (default ``Ga(0.01, 1e-4)``, the vague
prior of the library's linear regression, Drugowitsch 2019 section 2.5) or fixed
(:class:`~bayesvm.blocks.gaussian_noise.GaussianNoise`). Given ``tau`` the coefficients'
conditional is eq. (9) with weights ``tau``, so the reversible jump integrates them out exactly
(the marginal of eq. 8 with ``I / tau`` in place of ``I``) and there is no augmentation to
draw; ``decision_function`` is the posterior mean of ``f``, model-averaged over the active sets
(section 3.3).

The model is its blocks (:mod:`bayesvm.blocks.kernel`, :mod:`bayesvm.blocks.probit`), so:

* ``"rj"`` is FBGKM (section 3.2): Holmes-Held's ``s`` (probit), birth / death / swap moves
  on ``gamma`` with the coefficients integrated out, the coefficients, then ``eta`` and ``g``;
  by default :data:`DEFAULT_MOVES` proposals per sweep where the paper makes one, and then
  :data:`DEFAULT_LAPLACE_MOVES` proposals of ``(gamma, u, beta)`` with ``s`` integrated out
  followed by ``s | f`` (probit; :mod:`bayesvm.blocks.laplace_jump`), which the paper does not
  make: ``moves=1, laplace_moves=0`` is the paper's sweep;
* ``"gibbs"`` is BGKM (section 4.1: every vector active, step (c) left out);
* ``"vb"`` is mean-field VB for BGKM (closed form, monotone bound);
* ``"nuts"`` is PyMC on :meth:`to_pymc` (BGKM; small ``n``).

Predictions average over the kept draws (section 3.3's Bayesian model averaging; the paper
keeps every 5th of 5000 sweeps after 5000 of burn-in, the default here), or over draws from
``q`` for VB.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from scipy.special import log_ndtr

from bayesvm.blocks import FixedPrecision, GammaPrecision, HingeAugmentation
from bayesvm.blocks.gaussian_noise import GaussianNoise
from bayesvm.blocks.kernel import KernelCoefficients, SilvermanG
from bayesvm.blocks.probit import ProbitAugmentation
from bayesvm.models.block_model import BlockModel
from bayesvm.models.kernels import mean_distance, rbf_kernel
from bayesvm.models.linear_predictor import frame_to_arrays
from bayesvm.models.links import (
    central_tails,
    class_probabilities,
    draw_responses,
    gaussian_log_likelihood,
    log_normalized_pseudo_likelihood,
)
from bayesvm.models.predictive import ClassPredictions, no_class_probabilities
from bayesvm.models.validation import (
    as_design,
    check_positive_finite,
    design_and_names,
    encode_labels,
    real_response,
)

__all__ = ["KernelGKM", "rbf_kernel", "mean_distance", "DEFAULT_MOVES", "DEFAULT_LAPLACE_MOVES"]

KERNELS = ("rbf",)
LIKELIHOODS = ("probit", "hinge", "gaussian")
#: Reversible-jump proposals per sweep given ``s`` unless ``moves=`` is given: more than
#: section 3.2's one (``moves=1``). Where many active vectors are alike, a birth and a death
#: are accepted alike, so the model size random-walks one vector per accepted proposal; with
#: one per sweep a chain started at half of ``k_max`` (the largest dispersed start,
#: :meth:`~bayesvm.blocks.KernelCoefficients.start_size`) stays near it for the paper's
#: 10,000 sweeps. On ringnorm (realisation 1, ``k_max = 400``, four chains) one proposal per
#: sweep left the chains at 120-170 vectors (R-hat of ``n_active`` 1.92, bulk ESS 6, 600 s);
#: 20 bring every chain to the few vectors the posterior holds within the burn-in (a proposal
#: costs a fraction of Holmes-Held's sweep over the ``n`` latent ``s_i`` once the model is
#: small). There, given ``s``, the model size moves only at the pace of ``s`` (bulk ESS 22 of
#: 4000 kept draws, R-hat 1.12, whatever the number of proposals): the moves with ``s``
#: integrated out (:data:`DEFAULT_LAPLACE_MOVES`) make it mix.
DEFAULT_MOVES = 20
#: Proposals per sweep with ``s`` integrated out unless ``laplace_moves=`` is given
#: (:mod:`bayesvm.blocks.laplace_jump`; the paper makes none). On ringnorm (as above, with
#: :data:`DEFAULT_MOVES`) 10 accept 21 % of births, deaths and swaps and 60 % of the redraws of
#: ``(u, beta)``, and give a bulk ESS of ``n_active`` of 1273 of 4000 kept draws (R-hat 1.005,
#: model sizes 1-21), against 22 without them, in 1380 s on one core against 620 s (measured
#: earlier, under other load): about 25x the ESS per second. 5 such proposals with a t of 4
#: degrees of freedom gave 292 (1116 s), below the 100 per chain the fit's checks ask.
DEFAULT_LAPLACE_MOVES = 10
#: Section 4: 10,000 sweeps, the first 5,000 burn-in, every 5th kept.
CLASSIFIER_SWEEPS = {"draws": 1000, "tune": 5000, "thin": 5}
#: The Gaussian likelihood's sweeps: 4,000, the first 1,000 burn-in, every 3rd kept. Section
#: 4's lengths are set for the probit, whose model size moves at the pace of its latent ``s``;
#: the regression has no augmentation. On ``y = sin(2x) + 0.3 e``, ``n = 200`` (lengthscale
#: 0.7, default priors, four chains, one core of a 2-core machine shared with other work) these
#: gave bulk ESS 708 of ``n_active`` and 2283-3921 of ``g``, ``eta``, ``tau`` and ``u`` of 4000
#: kept draws, R-hat 1.00, no problem in the fit's checks, in 202 s; every sweep kept of 2,000
#: (1,000 burn-in) gave ESS 273 of ``n_active`` (R-hat 1.012), which the checks flag.
REGRESSION_SWEEPS = {"draws": 1000, "tune": 1000, "thin": 3}


@dataclass(frozen=True, eq=False)
class KernelGKM(ClassPredictions, BlockModel):
    """Bayesian generalized kernel model: probit (the paper's), hinge or Gaussian likelihood.

    Build it with :meth:`from_arrays` or :meth:`from_frame`.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs (the kernel's centres).
    y : ndarray of shape (n_samples,)
        Labels coded -1/+1, or the responses of a regression (Gaussian likelihood).
    classes : ndarray of shape (2,)
        Original labels; ``classes[1]`` is coded +1 (empty for a regression).
    feature_names : list of str
    lengthscale : float
        ``theta`` of the kernel.
    k_max : int
        Most active vectors.
    likelihood : {"probit", "hinge", "gaussian"}
    g, eta, tau : float or None
        Fixed precisions, or None to learn them under their Gamma priors (``tau``, the noise
        precision, with the Gaussian likelihood only).
    a_g, b_g, a_eta, b_eta, a_alpha, b_alpha : float
        Hyperparameters (section 4's defaults).
    a_tau, b_tau : float
        ``tau ~ Ga(a_tau/2, b_tau/2)`` (Gaussian likelihood).
    moves : int
        Reversible-jump proposals per sweep given ``s`` (:data:`DEFAULT_MOVES`; section 3.2's is
        one).
    laplace_moves : int
        Reversible-jump proposals per sweep with ``s`` integrated out
        (:data:`DEFAULT_LAPLACE_MOVES` with the probit, 0 with the hinge; the paper's: 0).
    """

    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    feature_names: list
    lengthscale: float
    k_max: int
    likelihood: Literal["probit", "hinge", "gaussian"] = "probit"
    g: float | None = None
    eta: float | None = None
    tau: float | None = None
    a_g: float = 4.0
    b_g: float = 0.1
    a_eta: float = 1.0
    b_eta: float = 0.1
    a_alpha: float = 1.0
    b_alpha: float = 1.0
    a_tau: float = 2e-2
    b_tau: float = 2e-4
    moves: int = DEFAULT_MOVES
    laplace_moves: int = DEFAULT_LAPLACE_MOVES

    @property
    def gibbs_settings(self) -> dict:
        """Chain lengths: :data:`CLASSIFIER_SWEEPS` (section 4's), or
        :data:`REGRESSION_SWEEPS` with the Gaussian likelihood.
        """
        return REGRESSION_SWEEPS if self.likelihood == "gaussian" else CLASSIFIER_SWEEPS

    #: Stop when the bound rises by less than 1e-8 of its size.
    vb_settings = {"tol": 1e-8, "max_iter": 10_000, "relative": True}

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        *,
        kernel: str = "rbf",
        lengthscale: float | None = None,
        k_max: int | None = None,
        likelihood: Literal["probit", "hinge", "gaussian"] = "probit",
        g: float | None = None,
        eta: float | None = None,
        tau: float | None = None,
        a_g: float = 4.0,
        b_g: float = 0.1,
        a_eta: float = 1.0,
        b_eta: float = 0.1,
        a_alpha: float = 1.0,
        b_alpha: float = 1.0,
        a_tau: float = 2e-2,
        b_tau: float = 2e-4,
        moves: int = DEFAULT_MOVES,
        laplace_moves: int = DEFAULT_LAPLACE_MOVES,
        feature_names=None,
        positive_class=None,
    ) -> KernelGKM:
        """Build the model from inputs and labels (or responses, for a regression).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs.
        y : array-like of shape (n_samples,)
            Two classes; real numbers with ``likelihood="gaussian"``.
        kernel : {"rbf"}
            ``exp(-||x - x'||^2 / lengthscale^2)`` (section 4).
        lengthscale : float, optional
            Default: the mean Euclidean distance between training points (section 4).
        k_max : int, optional
            Most active vectors (Table 1); default ``n_samples``. It bounds reversible jump
            (FBGKM); ``"gibbs"``, ``"vb"`` and ``"nuts"`` fit BGKM, every vector active.
        likelihood : {"probit", "hinge", "gaussian"}
            The paper's probit, the hinge pseudo-likelihood its conclusion proposes, or the
            normal of its regression GKM (section 2.1).
        g, eta : float, optional
            Fix the g-prior's and the offset's precisions instead of learning them.
        tau : float, optional
            Fix the noise precision of the Gaussian likelihood instead of learning it.
        a_g, b_g, a_eta, b_eta : float
            ``g ~ Ga(a_g/2, b_g/2)``, ``eta ~ Ga(a_eta/2, b_eta/2)`` (section 4: 4, 0.1, 1, 0.1).
        a_alpha, b_alpha : float
            Beta-Bernoulli prior on the active vectors (eq. 10; section 3.1: 1, 1).
        a_tau, b_tau : float
            ``tau ~ Ga(a_tau/2, b_tau/2)`` (Gaussian likelihood; default ``Ga(0.01, 1e-4)``,
            Drugowitsch section 2.5's vague prior).
        moves : int
            Reversible-jump proposals per sweep given the probit's ``s`` (FBGKM):
            :data:`DEFAULT_MOVES` by default, so that the model size leaves its start within
            the burn-in; ``moves=1`` is the paper's (section 3.2). 0 leaves the active set to
            ``laplace_moves``.
        laplace_moves : int
            Reversible-jump proposals per sweep with ``s`` integrated out, each with a refresh
            of ``(u, beta)``, then ``s | f`` (:mod:`bayesvm.blocks.laplace_jump`):
            :data:`DEFAULT_LAPLACE_MOVES` by default, so that the model size mixes; 0 is the
            paper's sweep. Probit only: the hinge and the Gaussian have no ``s`` to integrate
            out, and take 0.
        feature_names, positive_class
            Labels of the input columns; the class coded +1 (classifiers).
        """
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}; got {kernel!r}")
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {LIKELIHOODS}; got {likelihood!r}")
        X, names = design_and_names(X, feature_names)
        n_samples = X.shape[0]
        if n_samples < 2:
            raise ValueError(f"need at least 2 observations; got n_samples={n_samples}")
        if likelihood == "gaussian":
            if positive_class is not None:
                raise ValueError("positive_class names a class: a regression has none")
            y_coded, classes = real_response(y, n_samples), np.array([])
        else:
            if tau is not None:
                raise ValueError(f"tau is the Gaussian likelihood's; the {likelihood} has none")
            y_coded, classes = encode_labels(y, n_samples, positive_class)
        check_positive_finite(
            a_g=a_g,
            b_g=b_g,
            a_eta=a_eta,
            b_eta=b_eta,
            a_alpha=a_alpha,
            b_alpha=b_alpha,
            a_tau=a_tau,
            b_tau=b_tau,
        )
        precisions = (("g", g), ("eta", eta), ("tau", tau))
        fixed = {name: value for name, value in precisions if value is not None}
        check_positive_finite(**fixed)
        if lengthscale is None:
            lengthscale = mean_distance(X)
            if not lengthscale > 0.0:
                raise ValueError("every training point is the same: no default lengthscale")
        check_positive_finite(lengthscale=lengthscale)
        k_max = n_samples if k_max is None else k_max
        if isinstance(k_max, bool) or not isinstance(k_max, int | np.integer):
            raise ValueError(f"k_max must be an integer; got {k_max!r}")
        if not 1 <= k_max <= n_samples:
            raise ValueError(f"k_max must be in [1, n_samples={n_samples}]; got {k_max}")
        for name, value in (("moves", moves), ("laplace_moves", laplace_moves)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0; got {value!r}")
        if likelihood != "probit":
            laplace_moves = 0
        if moves + laplace_moves < 1:
            raise ValueError("moves and laplace_moves are both 0: the active set would never move")
        return cls(
            X=X,
            y=y_coded,
            classes=classes,
            feature_names=names,
            lengthscale=float(lengthscale),
            k_max=int(k_max),
            likelihood=likelihood,
            g=None if g is None else float(g),
            eta=None if eta is None else float(eta),
            tau=None if tau is None else float(tau),
            a_g=float(a_g),
            b_g=float(b_g),
            a_eta=float(a_eta),
            b_eta=float(b_eta),
            a_alpha=float(a_alpha),
            b_alpha=float(b_alpha),
            a_tau=float(a_tau),
            b_tau=float(b_tau),
            moves=int(moves),
            laplace_moves=int(laplace_moves),
        )

    @classmethod
    def from_frame(cls, df, target: str, features=None, **kwargs) -> KernelGKM:
        """Build from a DataFrame: ``target`` is the label (or response) column, ``features``
        the inputs (default: every other column); keyword arguments as :meth:`from_arrays`.
        """
        X, y, names = frame_to_arrays(df, target, features)
        return cls.from_arrays(X, y, feature_names=names, **kwargs)

    # -- the kernel -------------------------------------------------------------------------
    @cached_property
    def kernel_matrix(self) -> np.ndarray:
        """``K`` between the training points."""
        return rbf_kernel(self.X, self.X, self.lengthscale)

    def kernel_between(self, X_new) -> np.ndarray:
        """``K(x_new, x_j)`` for each new row and training point: ``(n_new, n_samples)``."""
        X_new = as_design(X_new, "X_new")
        if X_new.shape[1] != self.X.shape[1]:
            raise ValueError(
                f"X_new has {X_new.shape[1]} columns; the model was built with {self.X.shape[1]}"
            )
        return rbf_kernel(X_new, self.X, self.lengthscale)

    # -- blocks -----------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """Number of training points."""
        return self.y.shape[0]

    @property
    def flops_per_iteration(self) -> float:
        """Work of a sweep with every vector active (sets BLAS threading)."""
        return float(self.n_samples + 1) ** 3

    @property
    def coords(self) -> dict[str, list]:
        """``vector``: the training points; ``feature``: the eigenbasis of ``K``."""
        indices = list(range(self.n_samples))
        return {"vector": indices, "feature": indices}

    def build_blocks(self) -> list:
        """The likelihood, ``(u, beta, gamma)``, ``eta`` and ``g``: the probit's
        augmentation first (Holmes-Held's collapsed ``s`` precedes the coefficients, see
        :mod:`bayesvm.blocks.kernel`), the hinge's after the coefficients (Polson-Scott's
        order), as the Gaussian's noise precision ``tau`` (drawn given ``f``).
        """
        n = self.n_samples
        if self.eta is None:
            eta = GammaPrecision(
                "eta_prior",
                shape=self.a_eta / 2,
                rate=self.b_eta / 2,
                coefficients="theta",
                segment=slice(0, 1),
                scale=np.ones(1),
                report_name="eta",
            )
        else:
            eta = FixedPrecision("eta_prior", np.array([self.eta]), "theta", slice(0, 1))
        if self.g is None:
            g = SilvermanG(
                "g_prior",
                shape=self.a_g / 2,
                rate=self.b_g / 2,
                coefficients="theta",
                segment=slice(1, n + 1),
                scale=np.ones(n),
                report_name="g",
            )
        else:
            g = FixedPrecision("g_prior", np.full(n, self.g), "theta", slice(1, n + 1))
        probit = self.likelihood == "probit"
        theta = KernelCoefficients(
            self.kernel_matrix,
            self.likelihood,
            eta,
            g,
            k_max=self.k_max,
            a_alpha=self.a_alpha,
            b_alpha=self.b_alpha,
            moves=self.moves,
            fixed_weights=probit,
            laplace_moves=self.laplace_moves,
        )
        if probit:
            return [ProbitAugmentation(self.y, marginal=theta.marginal), theta, eta, g]
        if self.likelihood == "gaussian":
            noise = GaussianNoise(
                self.y, shape=self.a_tau / 2, rate=self.b_tau / 2, precision=self.tau
            )
            return [theta, noise, eta, g]
        return [theta, HingeAugmentation(self.y), eta, g]

    @property
    def coefficients(self) -> KernelCoefficients:
        """The coefficient block ``(u, beta, gamma)``."""
        return next(block for block in self.blocks if block.name == "theta")

    def pymc_blocks(self) -> list:
        """The coefficients and priors, then the likelihood's potential (which reads ``f``)."""
        return sorted(self.blocks, key=lambda block: block.latent)

    # -- predictions ------------------------------------------------------------------------
    def predictor(self, X_new, theta) -> np.ndarray:
        """``f = u + K(x_new, X) beta`` for ``theta = (u, beta)`` of shape ``(..., 1 + n)``."""
        return theta[..., :1] + theta[..., 1:] @ self.kernel_between(X_new).T

    def decision_function(self, fit, X_new) -> np.ndarray:
        """Posterior mean of ``f`` at new inputs (linear in the coefficients)."""
        posterior = fit.idata.posterior
        theta = np.concatenate(
            [[float(posterior["intercept"].mean())], posterior["beta"].mean(("chain", "draw"))]
        )
        return self.predictor(X_new, theta)

    def predict(self, fit, X_new) -> np.ndarray:
        """Labels by the sign of the model-averaged ``p(y = +1) - 1/2`` (section 3.3); for a
        regression, the posterior predictive mean of ``y``, :meth:`decision_function`.
        """
        if self.likelihood == "gaussian":
            return self.decision_function(fit, X_new)
        positive = self.predict_proba(fit, X_new)[:, 1] > 0.5
        return np.where(positive, self.classes[1], self.classes[0])

    def predict_proba(self, fit, X_new, max_draws: int = 1000) -> np.ndarray:
        """``[p(-1), p(+1)]`` averaged over up to ``max_draws`` kept draws (section 3.3):
        ``Phi(+-f)`` (probit) or the normalised hinge pseudo-likelihood.
        """
        if self.likelihood == "gaussian":
            no_class_probabilities(self)
        f = self._predictor_draws(fit, self.kernel_between(X_new), max_draws)
        if self.likelihood == "hinge":
            return class_probabilities(f)
        return np.column_stack(
            [np.exp(log_ndtr(-f)).mean(axis=0), np.exp(log_ndtr(f)).mean(axis=0)]
        )

    def training_log_probability(self, fit, labels) -> np.ndarray:
        """``log p(y_i = labels_i | f_i)`` for each posterior draw of ``f`` at the training
        points, as :meth:`predict_proba` averages it: ``log Phi(labels_i f_i)`` (probit), or
        the hinge pseudo-likelihood normalised over the two labels (Polson-Scott section 2, the
        normalised ``L~_i`` after eq. 3; Sollich 2001). A regression has none (``ValueError``).
        """
        if self.likelihood == "gaussian":
            no_class_probabilities(self)
        f = self._predictor_draws(fit, self.kernel_matrix, None)
        if self.likelihood == "hinge":
            return log_normalized_pseudo_likelihood(f, labels)
        return log_ndtr(labels * f)

    def training_log_likelihood(self, fit) -> np.ndarray:
        """``log N(y_i | f_i, 1 / tau)`` for each posterior draw of ``(f, tau)`` (regression),
        else :meth:`training_log_probability` of the labels.
        """
        if self.likelihood != "gaussian":
            return self.training_log_probability(fit, self.y)
        f = self._predictor_draws(fit, self.kernel_matrix, None)
        return gaussian_log_likelihood(self.y - f, self._noise_precision_draws(fit, f.shape[0]))

    def replicate(self, fit, rng: np.random.Generator) -> np.ndarray:
        """``y`` replicated at the training rows, one row per posterior draw: ``f_i + e_i``,
        ``e_i ~ N(0, 1 / tau)`` (regression), else labels drawn with their probabilities.
        """
        if self.likelihood != "gaussian":
            return super().replicate(fit, rng)
        f = self._predictor_draws(fit, self.kernel_matrix, None)
        return draw_responses(f, self._noise_precision_draws(fit, f.shape[0]), rng)

    def predictive_interval(self, fit, X_new, prob: float = 0.95, seed=0) -> tuple:
        """Central ``prob`` interval of the posterior predictive of ``y`` at new inputs
        (regression): quantiles of ``f + e``, ``e ~ N(0, 1 / tau)``, one ``e`` per posterior
        draw (seeded by ``seed``).

        Returns
        -------
        lower, upper : ndarray of shape (n,)
        """
        if self.likelihood != "gaussian":
            return super().predictive_interval(fit, X_new)
        tails = central_tails(prob)
        f = self._predictor_draws(fit, self.kernel_between(X_new), None)
        tau = self._noise_precision_draws(fit, f.shape[0])
        y = draw_responses(f, tau, np.random.default_rng(seed))
        lower, upper = np.quantile(y, tails, axis=0)
        return lower, upper

    def _noise_precision_draws(self, fit, size: int) -> np.ndarray:
        """``tau`` of each posterior draw (chains pooled), or the fixed ``tau`` repeated."""
        if self.tau is not None:
            return np.full(size, self.tau)
        return fit.draws(["tau"])[0]

    @staticmethod
    def _predictor_draws(fit, kernel: np.ndarray, max_draws: int | None) -> np.ndarray:
        """``f = u + K beta`` for up to ``max_draws`` posterior draws, ``kernel`` the rows of
        ``K`` at the inputs: ``(draws, rows)``.
        """
        intercept, beta = fit.draws(["intercept", "beta"], max_draws)
        return intercept[:, None] + beta @ kernel.T

    def constant_data(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """The training inputs."""
        return {"X": (["obs_id", "input"], self.X)}
