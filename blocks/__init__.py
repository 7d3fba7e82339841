"""Blocks: the conditionally conjugate pieces every model is composed of (:mod:`.base`)."""

from bayesvm.blocks.base import Block, dispersed_start
from bayesvm.blocks.capabilities import (
    DRIVERS,
    ExactMStepBlock,
    GaussianExpectationBlock,
    GibbsBlock,
    JumpBlock,
    MeanFieldBlock,
    ModeBlock,
    NaturalGradientBlock,
    PenaltyBlock,
    PointBlock,
    QDensityBlock,
    VBStartBlock,
    block_drivers,
)
from bayesvm.blocks.coefficients import CoefficientStats, GaussianCoefficients, Segment
from bayesvm.blocks.gaussian_priors import FixedPrecision, GammaPrecision, PriorStats
from bayesvm.blocks.hinge import HingeAugmentation, LikelihoodStats
from bayesvm.blocks.interweaving import ScaleInterweaving
from bayesvm.blocks.jaakkola_jordan import (
    JaakkolaJordan,
    SequentialJaakkolaJordan,
    jaakkola_lambda,
)
from bayesvm.blocks.laplace import LaplaceMixing, LaplaceScale
from bayesvm.blocks.normal_gamma import NormalGammaCoefficients, NormalGammaStats

__all__ = [
    "Block",
    "dispersed_start",
    "DRIVERS",
    "block_drivers",
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
    "CoefficientStats",
    "GaussianCoefficients",
    "Segment",
    "FixedPrecision",
    "GammaPrecision",
    "PriorStats",
    "HingeAugmentation",
    "LikelihoodStats",
    "ScaleInterweaving",
    "JaakkolaJordan",
    "SequentialJaakkolaJordan",
    "jaakkola_lambda",
    "LaplaceMixing",
    "LaplaceScale",
    "NormalGammaCoefficients",
    "NormalGammaStats",
]
