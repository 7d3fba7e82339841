"""What a block can do: one protocol per driver family, and the drivers they make.

A block offers a driver by having that driver's methods (as PyMC's step methods declare
which variables they are competent for); nothing is declared beside the methods, and no
block carries stubs for the ones it lacks. The drivers test a block with ``isinstance`` on
these protocols. A subclass that inherits a method it cannot honour sets it to None (as
``__hash__ = None`` withdraws hashing), which the protocols read as absent: e.g. the
normalised hinge (:class:`~bayesvm.blocks.normalized_hinge.NormalizedHinge`) inherits the
hinge's expectations but has no mean-field ``q``.

A model's drivers follow from its blocks (:func:`block_drivers`):

* ``"gibbs"``: every block is a :class:`GibbsBlock`;
* ``"vb"``: every block is a :class:`MeanFieldBlock`, and every block but the first (which
  the first CAVI update sets) a :class:`VBStartBlock`;
* ``"em"``: every latent block has an E-step, its complete conditional's expectations (a
  :class:`GibbsBlock` that is also a :class:`MeanFieldBlock`: a variable with a distribution
  of its own, not a variational parameter such as Jaakkola-Jordan's ``xi``), every other
  block an M-step (:class:`ModeBlock`);
* ``"rj"``: Gibbs, and a block offers trans-dimensional moves (:class:`JumpBlock`);
* ``"svi"``: every block is a :class:`MeanFieldBlock`, a global one stepped by natural
  gradients (:class:`NaturalGradientBlock`) and each other one reporting no variable (an
  augmentation or a fixed prior, set in closed form on each minibatch).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = [
    "DRIVERS",
    "GibbsBlock",
    "MeanFieldBlock",
    "VBStartBlock",
    "ModeBlock",
    "JumpBlock",
    "NaturalGradientBlock",
    "PenaltyBlock",
    "ExactMStepBlock",
    "PointBlock",
    "QDensityBlock",
    "GaussianExpectationBlock",
    "block_drivers",
]

#: The drivers in the order a model lists them (:func:`block_drivers`).
DRIVERS = ("gibbs", "vb", "em", "rj", "svi")


@runtime_checkable
class GibbsBlock(Protocol):
    """A block drawn from its complete conditional (:mod:`bayesvm.samplers.gibbs`)."""

    def conditional(self, stats):
        """Parameters of the complete conditional given the other blocks' statistics."""

    def sample(self, params, rng):
        """Statistics of a draw from the conditional."""


@runtime_checkable
class MeanFieldBlock(Protocol):
    """A block whose ``q`` is its conditional at the others' expectations (CAVI,
    :mod:`bayesvm.vb.cavi`; EM's E-step for a latent block).
    """

    def conditional(self, stats):
        """Parameters of the complete conditional (of ``q``) given the others' statistics."""

    def expected_stats(self, params):
        """Statistics as expectations under ``q = params``."""


@runtime_checkable
class VBStartBlock(Protocol):
    """A block with expected statistics before the first CAVI update."""

    def initial_stats(self, stats, start=None):
        """Expected statistics before the first update (``start``: an alternative start)."""


@runtime_checkable
class ModeBlock(Protocol):
    """A block maximised over by EM's M- and CM-steps (:mod:`bayesvm.samplers.em`)."""

    def conditional(self, stats):
        """Parameters of the complete conditional given the other blocks' statistics."""

    def mode(self, params):
        """Statistics at the mode of the conditional."""


@runtime_checkable
class JumpBlock(Protocol):
    """A block with trans-dimensional moves (reversible jump, :func:`bayesvm.samplers.fit_rj`)."""

    def jump_step(self, params, rng, moves=None):
        """``(statistics, info)`` after ``moves`` trans-dimensional proposals and a draw given
        the result; ``info`` holds the step's diagnostics (e.g. ``accept_rate``), which the
        sampler keeps in ``sample_stats``.
        """


@runtime_checkable
class NaturalGradientBlock(Protocol):
    """A global block whose ``q`` stochastic VI moves by natural-gradient steps
    (:mod:`bayesvm.vb.svi`).
    """

    def initial_natural(self):
        """Natural parameters of ``q`` before the first step."""

    def conditional_natural(self, stats):
        """Natural parameters of the complete conditional given the others' statistics
        (``eta-hat``, on the rows the block sees, counted as the minibatch scales them): a
        tuple of arrays, which the step averages with the current ones element by element.
        """

    def natural_mean(self, natural):
        """``q``'s mean from natural parameters (the convergence check compares them)."""

    def from_natural(self, natural):
        """``q``'s parameters (as :meth:`conditional` gives them) from natural parameters."""


@runtime_checkable
class PenaltyBlock(Protocol):
    """A prior block that states its ``-log`` prior as a penalty (an exact M-step's input)."""

    def penalty(self, stats):
        """``(quadratic, l1)``: per coefficient ``P_j`` and ``L_j`` of ``sum_j P_j theta_j^2 /
        2 + L_j |theta_j|``, any latent block integrated out.
        """


@runtime_checkable
class ExactMStepBlock(Protocol):
    """A likelihood block offering the exact M-step of the coefficients (accelerated EM)."""

    def accelerated_m_step(self, coefficients):
        """``m_step(stats) -> (coefficient statistics, n_released)``, this block and the
        priors' latent blocks (through :meth:`PenaltyBlock.penalty`) integrated out.
        """


@runtime_checkable
class PointBlock(Protocol):
    """A block with statistics at the canonical values of a draw (the model's density,
    :meth:`bayesvm.models.BlockModel.log_density`); a block that reports no variable is an
    augmentation the density integrates out and has none.
    """

    def point_stats(self, point, stats):
        """The block's statistics at ``point`` given those of the blocks before it."""


@runtime_checkable
class QDensityBlock(Protocol):
    """A block that states ``log q`` of its reported variables (the importance weights of
    Pareto k-hat, :mod:`bayesvm.checks.pareto`); one that reports none adds 0.
    """

    def q_log_density(self, params, draws):
        """``log q`` of the block's factor at ``draws``, shape ``(S,)``."""


@runtime_checkable
class GaussianExpectationBlock(Protocol):
    """A latent likelihood block with a mean-field ``q`` whose expected log factor under a
    Gaussian ``f`` comes with its slope and curvature in ``f``'s mean (the hinge): what VB's
    Newton steps in the mean and the Gaussian family need (:mod:`bayesvm.vb.mean_newton`,
    :mod:`bayesvm.vb.gaussian_family`).
    """

    def conditional(self, stats):
        """Parameters of ``q`` given the other blocks' statistics."""

    def expected_stats(self, params):
        """Statistics as expectations under ``q = params``."""

    def gaussian_expectation(self, f_mean, f_var):
        """``E log factor`` over ``f_i ~ N(f_mean_i, f_var_i)``, its slope and curvature."""


def _has_e_step(block) -> bool:
    return isinstance(block, GibbsBlock) and isinstance(block, MeanFieldBlock)


def block_drivers(blocks) -> list[str]:
    """The drivers ``blocks`` support, in the order of :data:`DRIVERS` (module docstring)."""
    blocks = list(blocks)
    gibbs = all(isinstance(block, GibbsBlock) for block in blocks)
    mean_field = all(isinstance(block, MeanFieldBlock) for block in blocks)
    supported = {
        "gibbs": gibbs,
        "vb": mean_field and all(isinstance(block, VBStartBlock) for block in blocks[1:]),
        "em": all(
            _has_e_step(block) if block.latent else isinstance(block, ModeBlock) for block in blocks
        ),
        "rj": gibbs and any(isinstance(block, JumpBlock) for block in blocks),
        "svi": mean_field
        and all(isinstance(block, NaturalGradientBlock) or not block.var_names for block in blocks),
    }
    return [driver for driver in DRIVERS if supported[driver]]
