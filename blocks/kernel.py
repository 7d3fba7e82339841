"""Kernel weights over active vectors with Silverman's g-prior (Zhang, Dai, Wang & Jordan 2010).

``f = u 1 + K_gamma beta_gamma`` (section 3.1), ``u ~ N(0, 1/eta)``, ``beta_gamma ~ N(0, (g
K_gamma,gamma)^-1)`` (section 2.2), and ``gamma`` the active vectors, Beta-Bernoulli (eq. 10)
with at most ``k_max`` ones. The block holds ``theta = (u, beta)``; ``eta`` and ``g`` are the
prior blocks of its two segments. Two representations serve the drivers:

* **Every vector active** (BGKM, section 4.1: Gibbs and VB). With ``K = U Lambda U^T``,
  ``b = Lambda^1/2 U^T beta`` has the prior ``N(0, I / g)`` and ``f = u + Psi b``, ``Psi = U
  Lambda^1/2``: the feature-space form of eq. (4), where the g-prior is a ridge. The block is
  then :class:`~bayesvm.blocks.GaussianCoefficients` on the design ``[1, Psi]`` with the
  priors ``eta`` and ``g``: Gibbs draws ``(u, b) | s`` (eq. 9), VB sets ``q(u, b)`` to the same
  Gaussian at the expected statistics. Eigenvalues below :data:`EIGEN_FLOOR` of the largest
  are raised to it (a numerically singular ``K`` gets the jitter every Cholesky of it needs).
* **Active vectors** (FBGKM, section 3.2 step (c): reversible jump). Birth / death / swap
  proposals on ``gamma`` with ``theta`` integrated out (:func:`~bayesvm.samplers.
  model_search.jump`; the marginal of eq. 8 through the ``(n_gamma + 1)``-sized ``Upsilon =
  Kt^T W Kt + Sigma`` of the identities after the acceptance probabilities, ``Kt = [1, K_gamma]``,
  ``Sigma = diag(eta, g K_gamma,gamma)``, rank-one updates of both factors between moves:
  :class:`~bayesvm.blocks.active_set.CollapsedGaussian`), then ``theta_gamma | s, gamma``
  (eq. 9). Entries of ``Kt^T W Kt`` and ``Sigma`` are computed only where the active set reads
  them, never the ``n x n`` matrices. ``g | beta_gamma ~ Ga((a_g + n_gamma) / 2, (b_g +
  beta^T K beta) / 2)``: the block shows the g block ``b_gamma = L^T beta_gamma`` (``L L^T =
  K_gamma,gamma``), whose squares sum to ``beta^T K beta``, and ``n_active``. With a probit
  likelihood, :attr:`~KernelCoefficients.laplace_moves` further proposals move ``(gamma, u,
  beta)`` with ``s`` integrated out, then draw ``s | f``
  (:class:`~bayesvm.blocks.laplace_jump.LaplaceJump`, :meth:`KernelCoefficients.jump_moves`):
  given ``s``, which pins ``f`` where the classes are nearly separable, few other active sets
  fit, and the model size moves only as fast as ``s``.

The order of a sweep (the model's blocks): the augmentation (with a probit likelihood,
Holmes-Held's update of ``s`` given ``gamma, eta, g`` with ``theta`` integrated out, which
reads :meth:`KernelCoefficients.marginal`), then ``gamma`` and ``theta`` (this block; by
reversible jump, then the jumps with ``s`` integrated out and ``s | f``), then ``eta | u`` and
``g | beta``. Zhang et al. update ``eta`` and ``g`` between the ``s`` and the
``theta`` steps, but after ``s`` is drawn with ``theta`` integrated out, ``theta`` must be drawn
before anything reads it (van Dyk & Park 2008); with ``theta`` drawn last in this block the
chain leaves the posterior invariant.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import NamedTuple

import numpy as np
from scipy.linalg.lapack import dpstrf
from scipy.special import betaln

from bayesvm.blocks.active_set import PIVOT_TOL, ActiveCholesky, CollapsedGaussian
from bayesvm.blocks.base import Block
from bayesvm.blocks.coefficients import GaussianCoefficients, Segment
from bayesvm.blocks.design import FeatureDesign
from bayesvm.blocks.gaussian_priors import GammaPrecision, PriorStats
from bayesvm.blocks.kernel_support import AdmittedSet
from bayesvm.blocks.laplace_jump import LaplaceJump
from bayesvm.blocks.model_search import JumpSettings, jump
from bayesvm.linalg import (
    cholesky_lower,
    cholesky_solve,
    inverse_diagonal,
    log_det_from_cholesky,
    triangular_solve,
)

__all__ = ["KernelCoefficients", "KernelStats", "PrecisionSolve", "SilvermanG", "EIGEN_FLOOR"]

#: Eigenvalues of ``K`` are raised to at least this share of the largest (every vector active).
EIGEN_FLOOR = 1e-10


class KernelStats(NamedTuple):
    """What the block shows the others (as :class:`~bayesvm.blocks.CoefficientStats`)."""

    mean: np.ndarray  # (u, b): b in the eigenbasis (all active), or L^T beta_gamma padded
    square: np.ndarray  # (u^2, b^2), or their expectations under q
    f_mean: np.ndarray  # f, or E f
    f_var: np.ndarray | float  # Var f (0 at a value)
    beta: np.ndarray | None  # the kernel weights at a value of the active-vector form
    inclusion: np.ndarray | None  # gamma (None: every vector active)
    n_active: int | None  # n_gamma for the g block (None: every vector, the segment's size)
    drawn: bool  # a value (Gibbs, RJ) rather than expectations under q (VB)
    log_scale: float = 0.0


class _Entries:
    """A matrix whose ``[rows, columns]`` is computed on demand: ``block(rows, columns)``
    gives the ``len(rows) x len(columns)`` block, shaped here as numpy's indexing would (an
    ``np.ix_`` pair, a list and an index, or two indices). Rows of one column, which every
    border of an active factor reads, are ``column(rows, j)``, in a third of the time.
    """

    def __getitem__(self, key):
        rows, columns = key
        if isinstance(columns, int | np.integer) and np.ndim(rows) == 1:
            return self.column(np.asarray(rows, dtype=int), int(columns))
        shape = np.broadcast_shapes(np.shape(rows), np.shape(columns))
        block = self.block(np.ravel(rows).astype(int), np.ravel(columns).astype(int))
        return block.reshape(shape)


class _Gram(_Entries):
    """``C^T W C`` for ``C = [1, K]``, its columns computed once each."""

    def __init__(self, design: np.ndarray, weights: np.ndarray | None = None):
        self.design = design
        self.weighted = design if weights is None else weights[:, None] * design
        size = design.shape[1]
        self.columns = np.empty((size, size))
        self.known = np.zeros(size, dtype=bool)

    def block(self, rows, columns):
        new = np.unique(columns[~self.known[columns]])
        if new.size:
            self.columns[:, new] = self.design.T @ self.weighted[:, new]
            self.known[new] = True
        return self.columns[np.ix_(rows, columns)]

    def column(self, rows, column: int):
        if not self.known[column]:
            self.columns[:, column] = self.design.T @ self.weighted[:, column]
            self.known[column] = True
        return self.columns[rows, column]


class _KernelPrior(_Entries):
    """``Sigma = diag(eta, g K)`` over the columns of ``[1, K]``."""

    def __init__(self, kernel: np.ndarray, eta: float, g: float):
        self.kernel, self.eta, self.g = kernel, eta, g

    def block(self, rows, columns):
        values = self.g * self.kernel[np.ix_(np.maximum(rows - 1, 0), np.maximum(columns - 1, 0))]
        values[rows == 0, :] = 0.0
        values[:, columns == 0] = 0.0
        values[np.ix_(rows == 0, columns == 0)] = self.eta
        return values

    def column(self, rows, column: int):
        if column == 0:
            return np.where(rows == 0, self.eta, 0.0)
        values = self.g * self.kernel[np.maximum(rows - 1, 0), column - 1]
        values[rows == 0] = 0.0
        return values


class _Sum(_Entries):
    """The sum of two matrices of entries on demand."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def block(self, rows, columns):
        return self.first.block(rows, columns) + self.second.block(rows, columns)

    def column(self, rows, column: int):
        return self.first.column(rows, column) + self.second.column(rows, column)


class _Linear:
    """``h = C^T r``, entries on demand."""

    def __init__(self, design: np.ndarray, response: np.ndarray):
        self.design, self.response = design, response

    def __getitem__(self, columns):
        return self.response @ self.design[:, columns]


class PrecisionSolve(NamedTuple):
    """``solve(R) = P_AA^-1 R`` by the factor of ``P_AA`` at ``key = (order, eta, g)``:
    :meth:`KernelCoefficients.marginal`'s, which the probit's Holmes-Held step uses and hands
    on in its statistics, so that the jump right after it starts from the same factor.
    """

    key: tuple
    factor: np.ndarray

    def __call__(self, right: np.ndarray) -> np.ndarray:
        """``P_AA^-1 right``."""
        return cholesky_solve(self.factor, right)


class Drawn(NamedTuple):
    """Gibbs and reversible jump: the other blocks' current statistics (drawn from later) and
    the likelihood's :class:`PrecisionSolve` (None: none to reuse).
    """

    stats: dict
    inclusion: np.ndarray | None
    solve: PrecisionSolve | None = None


class KernelCoefficients(Block):
    """``theta = (u, beta)`` and the active vectors ``gamma`` (module docstring).

    Parameters
    ----------
    kernel : ndarray of shape (n, n)
        The training kernel matrix ``K``.
    likelihood : str
        Name of the augmentation block (weights and responses).
    intercept_prior, weight_prior : Block
        Priors of ``u`` (precision ``eta``) and of ``b`` (precision ``g``): Gamma or fixed.
    k_max : int
        Most active vectors.
    a_alpha, b_alpha : float
        Beta-Bernoulli prior on ``gamma`` (eq. 10).
    moves : int
        Reversible-jump proposals per sweep given the likelihood's augmentation (Zhang et al.:
        one).
    fixed_weights : bool
        The likelihood's weights are always 1 (probit), so ``Kt^T Kt`` is computed once, and
        its statistics carry the :class:`PrecisionSolve` of its Holmes-Held step (``solve``).
    laplace_moves : int
        Reversible-jump proposals per sweep with the probit's ``s`` integrated out (probit
        only; :mod:`bayesvm.blocks.laplace_jump`); 0 in Zhang et al.'s sweep.
    """

    name = "theta"
    var_names = ("intercept", "beta", "gamma")
    supports = {"gamma": "binary"}
    dims = {"beta": ["vector"], "gamma": ["vector"]}

    def __init__(
        self,
        kernel: np.ndarray,
        likelihood: str,
        intercept_prior: Block,
        weight_prior: Block,
        *,
        k_max: int,
        a_alpha: float = 1.0,
        b_alpha: float = 1.0,
        moves: int = 1,
        fixed_weights: bool = True,
        laplace_moves: int = 0,
    ):
        n = kernel.shape[0]
        self.kernel = kernel
        self.n = n
        self.likelihood = likelihood
        self.intercept_prior, self.weight_prior = intercept_prior, weight_prior
        self.k_max = int(k_max)
        self.a_alpha, self.b_alpha = float(a_alpha), float(b_alpha)
        self.moves = int(moves)
        self.laplace_moves = int(laplace_moves)
        self.jump_settings = JumpSettings(max_active=self.k_max)
        self.switchable = np.arange(1, n + 1)
        self.design = np.hstack([np.ones((n, 1)), kernel])  # [1, K]
        self.fixed_weights = fixed_weights
        self._gram = _Gram(self.design) if fixed_weights else None
        # The factor kept between steps (module docstring): chol(K_AA) at the last active set.
        self._kernel_factor: tuple = ((), None)

    @cached_property
    def spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """``(Lambda, U)`` of ``K = U Lambda U^T`` (section 2.2), the eigenvalues raised to at least
        :data:`EIGEN_FLOOR` of the largest (computed on first use; reversible jump never needs
        them).
        """
        eigenvalues, eigenvectors = np.linalg.eigh(self.kernel)
        return np.maximum(eigenvalues, EIGEN_FLOOR * eigenvalues[-1]), eigenvectors

    @cached_property
    def log_sqrt_det(self) -> float:
        """``log |Lambda| / 2 = log |db / dbeta|`` with every vector active (section 2.2's ``b =
        Psi' beta``, ``Psi = U Lambda^1/2``).
        """
        return 0.5 * float(np.sum(np.log(self.spectrum[0])))

    @cached_property
    def eigenbasis(self) -> tuple[np.ndarray, np.ndarray]:
        """``(Psi, U Lambda^-1/2)``: the features ``f = Psi b`` and the map ``beta = U
        Lambda^-1/2 b``.
        """
        eigenvalues, eigenvectors = self.spectrum
        return eigenvectors * np.sqrt(eigenvalues), eigenvectors / np.sqrt(eigenvalues)

    @cached_property
    def all_active(self) -> GaussianCoefficients:
        """The coefficients with every vector active: :class:`~bayesvm.blocks.
        GaussianCoefficients` on ``[1, Psi]``.
        """
        n = self.n
        return GaussianCoefficients(
            FeatureDesign(self.eigenbasis[0]),
            [
                Segment("intercept", "offset", slice(0, 1), self.intercept_prior),
                Segment("feature_weight", "feature", slice(1, n + 1), self.weight_prior),
            ],
            likelihood=self.likelihood,
            coefficient_names=["intercept", *[f"feature_weight[{j}]" for j in range(n)]],
        )

    def log_prior(self, k: int) -> float:
        """``log p(gamma)`` of one vector with ``k`` ones: ``log Be(k + a, n - k + b) -
        log Be(a, b)`` (eq. 10).
        """
        return float(
            betaln(k + self.a_alpha, self.n - k + self.b_alpha) - betaln(self.a_alpha, self.b_alpha)
        )

    def precisions(self, stats) -> tuple[float, float]:
        """``(eta, g)`` at the prior blocks' current values."""
        return (
            float(stats[self.intercept_prior.name].precision[0]),
            float(stats[self.weight_prior.name].precision[0]),
        )

    # -- conditional ------------------------------------------------------------------------
    def conditional(self, stats):
        """Gibbs and RJ: the statistics the update reads (:class:`Drawn`). VB: ``q(u, b)``,
        the Gaussian of eq. (9) on ``[1, Psi]`` at the expected statistics.
        """
        previous = stats.get(self.name)
        if previous is not None and previous.drawn:
            names = (self.likelihood, self.intercept_prior.name, self.weight_prior.name)
            solve = stats[self.likelihood].solve if self.fixed_weights else None
            return Drawn({name: stats[name] for name in names}, previous.inclusion, solve)
        return self.all_active.conditional(stats)

    # -- Gibbs: every vector active -----------------------------------------------------------
    def _all_active_stats(self, coefficient_stats, drawn: bool) -> KernelStats:
        mean, square, f_mean, f_var = coefficient_stats[:4]
        return KernelStats(mean, square, f_mean, f_var, None, None, None, drawn)

    def initial_value(self, stats, rng) -> KernelStats:
        """A dispersed start: :meth:`start_size` vectors drawn at random (each independent of
        those before it) with ``u`` and their weights ``N(0, 1)``.

        A vector joins only where its Schur complement in those before it exceeds
        :data:`~bayesvm.blocks.active_set.PIVOT_TOL` of its diagonal entry both in ``K`` (its
        g-prior has a density) and in the unit-weight Gram ``[1, K]^T [1, K]`` of its column
        (it is not in their span). A Schur complement of a sum is at least the sum of theirs,
        so the start passes reversible jump's test of every birth on ``P = [1, K]^T [1, K] +
        diag(eta, g K)`` at any ``eta`` and ``g``: on a kernel of low numerical rank (two
        features, 200 rows) a start tested on ``K`` alone made ``P_gamma,gamma`` singular to
        round-off, and the first probit step broke down.

        The start then keeps the leading vectors of its :meth:`pivoted_factor`, as many as
        :meth:`active_factor` admits (the test of every set reversible jump enters):
        independent in the order drawn is not independent in every order (on banana's 400
        rows, starts of 116 to 121 vectors drawn so kept 114 to 120).
        """
        target = self.start_size(rng)
        factor = ActiveCholesky(self.kernel, [])
        gram = ActiveCholesky(self._gram if self.fixed_weights else _Gram(self.design), [0])
        for j in rng.permutation(self.n):
            border, schur = factor.border(int(j))
            gram_border, gram_schur = gram.border(int(j) + 1)
            if schur > PIVOT_TOL * self.kernel[j, j] and gram_schur > PIVOT_TOL * (
                gram_schur + gram_border @ gram_border
            ):
                factor.append(int(j), border, schur)
                gram.append(int(j) + 1, gram_border, gram_schur)
            if len(factor.order) == target:
                break
        positions, _ = self.pivoted_factor(np.asarray(factor.order, dtype=int))
        active = np.asarray(factor.order, dtype=int)[positions]
        while (found := self.active_factor(active)) is None:
            active = active[:-1]  # the last pivot: the vector nearest the others' span
        active = active[found[0]]
        theta = rng.standard_normal(active.size + 1)
        return self.at_active(active, theta, found[1].T @ theta[1:])

    def start_size(self, rng) -> int:
        """The size of a dispersed start: log-uniform between 1 and half of ``min(k_max, n)``
        (rounded), so that chains start at sizes of different orders.

        A chain far above the posterior's sizes comes down by a random walk of births and
        deaths, in a time that grows with the square of the distance, and its sweeps cost more
        the more vectors it holds: on ringnorm (posterior 1-21 vectors), chains started at 200
        took 1,000 to over 1,500 sweeps to come down, at up to 70 ms a sweep against 15 near
        the posterior (one core).
        """
        largest = max(1, min(self.k_max, self.n) // 2)
        return int(np.rint(np.exp(rng.uniform(0.0, np.log(largest)))))

    def sample(self, params: Drawn, rng) -> KernelStats:
        """BGKM: ``(u, b) | s`` with every vector active (eq. 9)."""
        conditional = self.all_active.conditional(params.stats)
        return self._all_active_stats(self.all_active.sample(conditional, rng), True)

    # -- reversible jump: active vectors ------------------------------------------------------
    def _matrices(self, eta: float, g: float, weights=None) -> tuple[_Sum, _KernelPrior]:
        """``P = [1, K]^T W [1, K] + Sigma`` and ``Sigma = diag(eta, g K)``, entries on demand
        (the probit's unit-weight Gram kept from sweep to sweep).
        """
        gram = self._gram if self.fixed_weights else _Gram(self.design, weights)
        prior = _KernelPrior(self.kernel, eta, g)
        return _Sum(gram, prior), prior

    def _collapsed(self, params: Drawn) -> CollapsedGaussian:
        likelihood = params.stats[self.likelihood]
        eta, g = self.precisions(params.stats)
        precision, prior = self._matrices(eta, g, likelihood.weights)
        order = self._order(params.inclusion)
        solve = params.solve  # the probit's step of this sweep
        if solve is not None and solve.key == (tuple(order), eta, g):
            factor = solve.factor
        else:
            factor = self._precision_cholesky(order, eta, g, likelihood.weights)
        return CollapsedGaussian.from_matrices(
            precision,
            prior,
            _Linear(self.design, likelihood.response),
            order,
            factors=(factor, self._prior_factor(order, eta, g)),
        )

    def _order(self, inclusion: np.ndarray) -> list[int]:
        """The columns of ``[1, K]`` in use, in the order of the kept ``chol(K_AA)`` when the
        active set is the last one's (a jump appends the vectors it adds), else in
        :meth:`pivoted_factor`'s order.
        """
        active = np.flatnonzero(inclusion)
        order = [0, *(active + 1).tolist()]
        kept = self._kernel_factor[0]
        if len(kept) == len(order) and set(kept) == set(order):
            return list(kept)
        positions, _ = self.pivoted_factor(active)
        return [0, *(active[positions] + 1).tolist()]

    def _prior_factor(self, order: list, eta: float, g: float) -> np.ndarray:
        """``chol(diag(eta, g K_AA)) = diag(sqrt(eta), sqrt(g) chol(K_AA))``, from the kept
        ``chol(K_AA)`` when the active set is the last one's.
        """
        key, kernel_factor = self._kernel_factor
        if key != tuple(order):
            active = np.asarray(order[1:], dtype=int) - 1
            kernel_factor = cholesky_lower(self.kernel[np.ix_(active, active)])
        factor = np.zeros((len(order), len(order)))
        factor[0, 0] = np.sqrt(eta)
        factor[1:, 1:] = np.sqrt(g) * kernel_factor
        return factor

    def _precision_cholesky(self, order: list, eta: float, g: float, weights=None) -> np.ndarray:
        """``chol(P_AA)``, ``P = [1, K]^T W [1, K] + diag(eta, g K)`` (unit weights: None), as
        ``diag(1, L) chol(Pw)`` with ``L = chol(K_AA)`` (:meth:`_prior_factor`) and ``Pw = [1,
        Psi]^T W [1, Psi] + diag(eta, g I)``, ``Psi = K_:A L^-T``: the precision of the whitened
        weights ``b = L^T beta_gamma`` (eq. 7), whose eigenvalues beside the intercept's lie
        between ``g`` and ``g + max W lambda_max(K)``. ``P_AA``'s condition is ``K_AA``'s times
        that, so a set that is nonsingular only to a few digits (on banana's 200 rows, a start
        of 100 vectors with ``K_AA`` of condition 4e15 and ``P_AA`` of 3e16) has a factor of
        ``P_AA`` only this way; a Cholesky of ``P_AA`` itself breaks down.
        """
        kernel_factor = self._prior_factor(order, eta, g)[1:, 1:] / np.sqrt(g)  # L
        active = np.asarray(order[1:], dtype=int) - 1
        features = self.whitened_design(active, kernel_factor)
        weighted = features if weights is None else weights[:, None] * features
        whitened = features.T @ weighted
        whitened[np.diag_indices_from(whitened)] += np.concatenate([[eta], np.full(active.size, g)])
        to_beta = np.eye(len(order))  # diag(1, L)
        to_beta[1:, 1:] = kernel_factor
        return to_beta @ cholesky_lower(whitened)

    def whitened_design(self, active: np.ndarray, kernel_factor: np.ndarray) -> np.ndarray:
        """``[1, Psi]``, ``Psi = K_:A L^-T`` with ``L = chol(K_AA)`` (``kernel_factor``, in the
        order of ``active``): the design of the whitened weights ``b = L^T beta_gamma`` (eq. 7),
        whose prior is ``N(0, I / g)``.
        """
        design = np.ones((self.n, active.size + 1))
        if active.size:
            design[:, 1:] = triangular_solve(kernel_factor, self.kernel[active]).T
        return design

    def jump_step(self, params: Drawn, rng, moves: int | None = None) -> tuple:
        """``moves`` birth / death / swap proposals (default :attr:`moves`), then
        ``theta_gamma | s, gamma`` from the active factor; the info is ``accept_rate``, the
        accepted share of the proposals.
        """
        if params.inclusion is None:
            raise ValueError("reversible jump needs an active set: start from initial_value")
        collapsed = self._collapsed(params)
        _, g = self.precisions(params.stats)
        support = AdmittedSet(
            self, np.asarray(collapsed.order[1:]) - 1, collapsed.prior.factor[1:, 1:] / np.sqrt(g)
        )
        moves = self.moves if moves is None else moves
        accepted = 0
        for _ in range(moves):
            collapsed, took = jump(
                collapsed, self.switchable, self.log_prior, rng, self.jump_settings, support.admits
            )
            accepted += took
        theta = collapsed.draw(rng)
        kernel_factor = collapsed.prior.factor[1:, 1:] / np.sqrt(g)
        self._kernel_factor = (tuple(collapsed.order), kernel_factor)
        whitened = kernel_factor.T @ theta[1:]  # L^T beta_gamma
        active = np.asarray(collapsed.order[1:], dtype=int) - 1
        info = {"accept_rate": accepted / max(moves, 1)}
        return self.at_active(active, theta, whitened), info

    def jump_moves(self, blocks) -> list:
        """The reversible-jump sweep's moves after :meth:`jump_step`: :attr:`laplace_moves`
        proposals with the probit's ``s`` integrated out, then ``s | f``
        (:class:`~bayesvm.blocks.laplace_jump.LaplaceJump`), if any.
        """
        if not self.laplace_moves:
            return []
        return [LaplaceJump(self, blocks[self.likelihood], self.laplace_moves)]

    def at_active(self, active, theta, whitened) -> KernelStats:
        """Statistics at ``theta = (u, beta_gamma)`` over the vectors ``active``, with
        ``whitened = L^T beta_gamma``.
        """
        k = active.shape[0]
        beta = np.zeros(self.n)
        beta[active] = theta[1:]
        mean = np.zeros(self.n + 1)
        mean[0] = theta[0]
        mean[1 : k + 1] = whitened
        inclusion = np.zeros(self.n)
        inclusion[active] = 1.0
        f = theta[0] + self.kernel[:, active] @ theta[1:]
        return KernelStats(mean, mean**2, f, 0.0, beta, inclusion, k, True)

    def marginal(self, stats) -> tuple[np.ndarray, Callable]:
        """Holmes-Held's ``(C, P^-1)``: the active design and a solve with ``P = C^T C +
        diag(eta, g K_gamma,gamma)`` (unit weights), for the probit block's collapsed update;
        with every vector active, ``C = [1, Psi]`` and ``P`` is an arrowhead (``O(n^2)``).
        Over active vectors the solve is a :class:`PrecisionSolve`.
        """
        theta = stats[self.name]
        eta, g = self.precisions(stats)
        if theta.inclusion is None:
            prior = np.concatenate([[eta], np.full(self.n, g)])
            design = self.all_active.design
            return design.matrix, design.gaussian(np.ones(self.n), prior).solve
        order = self._order(theta.inclusion)
        factor = self._precision_cholesky(order, eta, g)
        return self.design[:, order], PrecisionSolve((tuple(order), eta, g), factor)

    def record(self, stats: KernelStats) -> dict[str, np.ndarray]:
        """``u``, ``beta`` (zero where inactive) and ``gamma``."""
        if stats.n_active is None:
            beta, gamma = self._beta(stats.mean[1:]), np.ones(self.n)
        else:
            beta, gamma = stats.beta, stats.inclusion
        return {"intercept": stats.mean[0], "beta": beta, "gamma": gamma}

    def _beta(self, weights: np.ndarray) -> np.ndarray:
        """``beta = U Lambda^-1/2 b`` for ``b`` of shape ``(..., n)``."""
        return weights @ self.eigenbasis[1].T

    def sample_stats(self, stats: KernelStats) -> dict[str, float]:
        """``n_active``, the number of active vectors."""
        return {"n_active": float(self.n if stats.n_active is None else stats.n_active)}

    # -- VB: every vector active ------------------------------------------------------------
    def initial_stats(self, stats, start=None) -> KernelStats:
        """``E theta = 0``, so that the first update of the augmentation sees ``E f = 0``."""
        zeros = np.zeros(self.n + 1)
        return KernelStats(zeros, zeros, np.zeros(self.n), 0.0, None, None, None, False)

    def expected_stats(self, params) -> KernelStats:
        """Moments under ``q(u, b)`` (:meth:`~bayesvm.blocks.GaussianCoefficients.
        expected_stats`).
        """
        return self._all_active_stats(self.all_active.expected_stats(params), False)

    def bound_term(self, params, stats) -> float:
        """The entropy of ``q(u, b)``."""
        return self.all_active.bound_term(params, stats)

    def draw_q(self, params, rng, size: int) -> dict[str, np.ndarray]:
        """Draws of ``u``, ``beta = U Lambda^-1/2 b`` and ``gamma = 1`` from ``q``."""
        draws = self.all_active.draw_q(params, rng, size)
        return {
            "intercept": draws["intercept"][:, 0],
            "beta": self._beta(draws["feature_weight"]),
            "gamma": np.ones((size, self.n)),
        }

    def q_moments(self, params) -> dict:
        """Mean and sd of ``u`` and of ``beta = U Lambda^-1/2 b`` (a linear map of the
        Gaussian ``q(b)``); ``gamma = 1``.
        """
        gaussian, mean = params
        moments = self.all_active.q_moments(params)
        weights = slice(1, self.n + 1)  # the coefficients are (u, b)
        covariance = gaussian.covariance()[weights, weights]
        basis = self.eigenbasis[1]
        return {
            "intercept": tuple(value[0] for value in moments["intercept"]),
            "beta": (
                self._beta(mean[weights]),
                np.sqrt(np.sum((basis @ covariance) * basis, axis=1)),
            ),
            "gamma": (np.ones(self.n), np.zeros(self.n)),
        }

    def variational(self, params) -> dict:
        """Means, variances and covariance of ``q(u, b)``."""
        return self.all_active.variational(params)

    def variational_coords(self) -> dict:
        """Coordinates of the covariance."""
        return self.all_active.variational_coords()

    # -- the model's density (Zhang et al. section 3.1) ------------------------------------
    def point_stats(self, point, stats) -> KernelStats:
        """Statistics at ``(u, beta, gamma)``, the inverse of :meth:`record`: with every vector
        active, BGKM's ``b = Lambda^1/2 U^T beta`` in the floored eigenbasis (section 2.2's ``b
        = Psi' beta``; what Gibbs, VB and :meth:`to_pymc` hold, and where a singular ``K``
        leaves ``beta`` only its image of ``b``); otherwise FBGKM's ``b_gamma = L^T beta_gamma``,
        ``L L^T = K_gamma,gamma`` (eq. 7), left 0 where :meth:`active_factor` finds the set
        singular (:meth:`log_jacobian` is then ``-inf``). ``beta`` must be 0 off the active set.
        """
        gamma, beta = point["gamma"], point["beta"]
        if not np.all((gamma == 0.0) | (gamma == 1.0)):
            raise ValueError("gamma must hold 0s and 1s")
        if np.any(beta[gamma == 0.0] != 0.0):
            raise ValueError("beta must be 0 where gamma is 0 (eq. 7's point mass)")
        active = np.flatnonzero(gamma)
        if active.size == self.n:
            eigenvalues, eigenvectors = self.spectrum
            theta = np.concatenate(
                [[point["intercept"]], np.sqrt(eigenvalues) * (beta @ eigenvectors)]
            )
            return self._all_active_stats(self.all_active.at(theta), True)
        found = self.active_factor(active)
        whitened = np.zeros(active.size) if found is None else beta[active[found[0]]] @ found[1]
        return self.at_active(
            active, np.concatenate([[point["intercept"]], beta[active]]), whitened
        )

    def pivoted_factor(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(p, L)`` with ``L L^T = K[active[p], active[p]]``: Cholesky with complete pivoting
        (LAPACK ``dpstrf``), each step taking the vector with the largest Schur complement in
        those before it, so that a nearly dependent vector comes last. A set drawn one vector at
        a time, each more than :data:`~bayesvm.blocks.active_set.PIVOT_TOL` from the span of
        those before it, can be singular to round-off in another order: on banana's 200
        training rows, a dispersed start of 100 vectors so drawn had a Schur complement of
        4e-14 in index order, and ``P_AA`` (condition 3e16) then no Cholesky factor. A fresh
        factorisation of a set (:meth:`_order`, :meth:`active_factor`) takes this order.
        """
        factor, pivots, _, _ = dpstrf(self.kernel[np.ix_(active, active)], lower=1)
        return pivots - 1, np.tril(factor)

    def active_factor(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`pivoted_factor` ``(p, chol(K[active[p], active[p]]))``, or None where some
        vector's Schur complement in all the others, ``1 / (K_gamma,gamma^-1)_jj``, is at most
        :data:`~bayesvm.blocks.active_set.PIVOT_TOL` of its diagonal entry: the vector is in the
        others' span to working precision, the set's (Moore-Penrose, section 2.2) g-prior has no
        density on ``R^n_gamma``, and neither of reversible jump's moves enters it.

        The test is one of the set, not of an order: a Schur complement in all the others does
        not depend on the order of the factor, and it only grows when a vector leaves, so every
        subset of an admitted set is admitted and a death is never refused for it. (Testing
        each vector against those before it in one order admitted sets that another order
        rejects: on banana's 400 rows, the birth-and-death moves entered sets whose
        :meth:`pivoted_factor` the Laplace moves refused.)
        """
        positions, factor = self.pivoted_factor(active)
        diagonal = np.diag(self.kernel)[active[positions]]
        if not np.all(np.diag(factor) ** 2 > PIVOT_TOL * diagonal):
            return None  # a pivot before the others' already vanishes
        if active.size and not np.all(inverse_diagonal(factor) * diagonal < 1.0 / PIVOT_TOL):
            return None  # 1 / (K^-1)_jj <= PIVOT_TOL K_jj
        return positions, factor

    def log_density(self, stats) -> float:
        """``log p(gamma)`` (eq. 10; ``-inf`` beyond ``k_max``) and the point masses at
        ``beta_j = 0`` off the active set (eq. 7), which replace the ``N(0 | 0, 1 / g)`` factors
        that the prior of ``b`` writes for the whole segment padded with zeros: ``log p(gamma) -
        (n - n_gamma) log(g / 2 pi) / 2``. With the priors' ``log N(u | 0, 1 / eta)`` and ``log
        N(b_gamma | 0, I / g)`` and :meth:`log_jacobian` it makes section 3.1's ``p(beta_gamma |
        g, gamma) = N(0, (g K_gamma,gamma)^-1)``. A point with every vector active is BGKM's
        (section 4.1: what Gibbs, VB and NUTS fit, in its parametrisation, :meth:`point_stats`),
        whatever ``k_max``: its density is finite, ``log p(gamma)`` a constant there, so that
        a BGKM fit can be weighed against its own posterior (VB's Pareto k-hat); only an active
        set of more than ``k_max`` vectors is outside FBGKM's support.
        """
        n_active = stats[self.name].n_active
        if n_active is None:  # every vector active: BGKM
            return self.log_prior(self.n)
        if n_active > self.k_max:
            return -np.inf
        _, g = self.precisions(stats)
        return self.log_prior(n_active) - 0.5 * (self.n - n_active) * np.log(g / (2.0 * np.pi))

    def log_jacobian(self, stats) -> float:
        """``log |db / dbeta_gamma|``: ``log |L| = log |K_gamma,gamma| / 2`` over an active set
        (``-inf`` where :meth:`active_factor` finds it singular), ``log |Lambda| / 2`` with
        every vector active (section 2.2's ``b = Psi' beta``).
        """
        inclusion = stats[self.name].inclusion
        if inclusion is None:
            return self.log_sqrt_det
        found = self.active_factor(np.flatnonzero(inclusion))
        return -np.inf if found is None else 0.5 * log_det_from_cholesky(found[1])

    def pymc_log_jacobian(self, values) -> float:
        """:meth:`to_pymc` declares ``b`` (``feature_weight``) and ``beta = U Lambda^-1/2 b``
        with ``gamma = 1`` (BGKM, section 4.1): ``log |dbeta / db| = -log |Lambda| / 2``, a
        constant.
        """
        return -self.log_sqrt_det

    # -- PyMC (every vector active) -----------------------------------------------------------
    def to_pymc(self, variables: dict, noncentered: bool = False) -> None:
        """``u ~ N(0, 1/eta)``, ``b ~ N(0, I/g)`` (``feature_weight``), ``f = u + Psi b``,
        ``beta = U Lambda^-1/2 b`` and ``gamma = 1``: BGKM.
        """
        import pymc as pm
        import pytensor.tensor as pt

        intercept_variance = self.intercept_prior.declare(variables)
        weight_variance = self.weight_prior.declare(variables)
        intercept = pm.Normal("intercept", 0.0, sigma=pt.sqrt(pt.max(intercept_variance)))
        sd = pt.sqrt(pt.max(weight_variance))
        if noncentered:
            z = pm.Normal("feature_weight_standardized", 0.0, 1.0, dims="feature")
            weights = pm.Deterministic("feature_weight", sd * z, dims="feature")
        else:
            weights = pm.Normal("feature_weight", 0.0, sigma=sd, dims="feature")
        features, to_beta = self.eigenbasis
        variables["f"] = intercept + pt.dot(features, weights)
        pm.Deterministic("beta", pt.dot(to_beta, weights), dims="vector")
        pm.Deterministic("gamma", pt.ones(self.n), dims="vector")

    # -- VB's q at its draws (the importance weights of :mod:`bayesvm.checks.pareto`) ------------
    def q_log_density(self, params, draws) -> np.ndarray:
        """``log q(u, b) + log |db / dbeta|`` at draws of ``u`` and ``beta`` with every vector
        active (``b = Lambda^1/2 U^T beta``, :meth:`log_jacobian`'s map); ``q`` holds ``gamma
        = 1``, a point mass.
        """
        eigenvalues, eigenvectors = self.spectrum
        coefficients = {
            "intercept": np.reshape(draws["intercept"], (-1, 1)),
            "feature_weight": np.sqrt(eigenvalues) * (draws["beta"] @ eigenvectors),
        }
        return self.all_active.q_log_density(params, coefficients) + self.log_sqrt_det


class ActiveRate(NamedTuple):
    """The conditional of ``g`` over an active set: its rate and ``n_gamma``."""

    rate: float
    n_active: int


class SilvermanG(GammaPrecision):
    """``g ~ Ga(a_g / 2, b_g / 2)``, the precision of Silverman's g-prior (Zhang et al. section
    3.2): ``g | beta_gamma ~ Ga((a_g + n_gamma) / 2, (b_g + beta_gamma^T K_gamma,gamma
    beta_gamma) / 2)``. With every vector active this is :class:`~bayesvm.blocks.
    GammaPrecision` on ``b`` (``n_gamma = n``, ``||b||^2 = beta^T K beta``); over an active set
    the coefficient block shows ``n_active`` and ``b_gamma`` padded with zeros.
    """

    def conditional(self, stats):
        """The rate, and ``n_gamma`` when the coefficients are over an active set."""
        rate = super().conditional(stats)
        n_active = stats[self.coefficients].n_active
        return rate if n_active is None else ActiveRate(rate, n_active)

    def sample(self, params, rng) -> PriorStats:
        """``g ~ Ga(a_g / 2 + n_gamma / 2, rate)``."""
        if not isinstance(params, ActiveRate):
            return super().sample(params, rng)
        g = rng.gamma(self.shape + 0.5 * params.n_active, 1.0 / params.rate)
        return PriorStats(self._precision(g), g, np.log(g))
