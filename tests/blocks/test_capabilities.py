"""What a block can do is what it has: the protocols of ``bayesvm.blocks.capabilities``.

The methods each model variant supports are derived from its blocks' protocols; they are
held here to the list the blocks declared by name before the protocols existed.
"""

import ast
import pathlib

import numpy as np
import pytest

import bayesvm
from bayesvm.blocks import (
    Block,
    GibbsBlock,
    JumpBlock,
    MeanFieldBlock,
    ModeBlock,
    NaturalGradientBlock,
    PointBlock,
    QDensityBlock,
    capabilities,
)
from bayesvm.blocks.gaussian_priors import MixedGammaPrecision
from bayesvm.blocks.gp import InducingGPValues
from bayesvm.blocks.normalized_hinge import NormalizedHinge
from bayesvm.models import GPSVM

from model_variants import VARIANTS

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: ``bayesvm.methods(model)`` for every variant.
METHODS = {
    "ridge-fixed": ["em", "gibbs", "nuts", "vb"],
    "ridge-learned": ["ecme", "gibbs", "nuts", "vb"],
    "ridge-learned-std": ["ecme", "gibbs", "nuts", "vb"],
    "lasso-fixed": ["em", "gibbs", "nuts", "vb"],
    "lasso-learned": ["ecme", "gibbs", "nuts"],
    "mixed-penalized": ["ecme", "gibbs", "nuts", "vb"],
    "mixed-random-intercept": ["ecme", "gibbs", "nuts", "vb"],
    "mixed-general": ["ecme", "gibbs", "nuts", "vb"],
    "spike-slab-laplace-zero": ["gibbs", "rj", "nuts", "vb"],
    "spike-slab-gaussian": ["gibbs", "rj", "nuts", "vb"],
    "missing-data": ["gibbs", "nuts", "vb"],
    "missing-data-normalized": ["gibbs", "nuts"],
    "kernel-probit": ["gibbs", "rj", "nuts", "vb"],
    "kernel-hinge": ["gibbs", "rj", "nuts", "vb"],
    "kernel-gaussian": ["gibbs", "rj", "nuts", "vb"],
    "kernel-gaussian-fixed-tau": ["gibbs", "rj", "nuts", "vb"],
    "gp-full": ["em", "gibbs", "nuts", "vb", "svi"],
    "linear-regression-shared": ["gibbs", "nuts", "vb"],
    "linear-regression-ard": ["gibbs", "nuts", "vb"],
    "linear-regression-fixed": ["gibbs", "nuts", "vb"],
    "logistic-shared": ["nuts", "vb"],
    "logistic-ard": ["nuts", "vb"],
    "logistic-fixed": ["nuts", "vb"],
}
MODELS = {name: make() for name, make in VARIANTS.items()}
PROTOCOL_METHODS = {
    name
    for protocol in (getattr(capabilities, name) for name in capabilities.__all__)
    if isinstance(protocol, type)
    for name in protocol.__dict__
    if not name.startswith("_")
}


def test_every_variant_is_held():
    assert set(METHODS) == set(VARIANTS)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_the_methods_follow_from_the_blocks_protocols(name):
    assert list(bayesvm.methods(MODELS[name])) == METHODS[name]


def test_an_inducing_point_gp_offers_vb_and_svi_only():
    X = np.random.default_rng(0).normal(size=(40, 2))
    model = GPSVM.from_arrays(X, np.where(X[:, 0] > 0, 1, -1), inducing=8)
    assert list(bayesvm.methods(model)) == ["vb", "svi"]
    assert isinstance(model.report_blocks()[0], InducingGPValues)


def test_the_base_block_holds_no_driver_method():
    """No stubs: ``Block`` has none of the protocols' methods, and no block names drivers."""
    assert not PROTOCOL_METHODS & set(vars(Block))
    for model in MODELS.values():
        for block in model.blocks:
            assert not hasattr(block, "drivers"), type(block).__name__


def test_no_block_or_model_method_raises_not_implemented():
    for folder in ("blocks", "models"):
        for path in (ROOT / folder).glob("*.py"):
            tree = ast.parse(path.read_text())
            names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
            assert "NotImplementedError" not in names, path.name


def test_a_withdrawn_method_withdraws_the_protocol():
    """A subclass sets an inherited method it cannot honour to None (``__hash__ = None``)."""
    assert not issubclass(NormalizedHinge, MeanFieldBlock)
    assert issubclass(NormalizedHinge, GibbsBlock)
    assert not issubclass(InducingGPValues, GibbsBlock)
    assert not issubclass(InducingGPValues, ModeBlock)
    assert issubclass(InducingGPValues, NaturalGradientBlock)
    assert not issubclass(MixedGammaPrecision, ModeBlock)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_reported_variable_has_a_density_and_a_q_density(name):
    """The model's density needs each reporting block's statistics at a point; Pareto k-hat
    needs ``log q`` of each reporting block of a VB model.
    """
    model = MODELS[name]
    for block in model.blocks:
        if block.var_names:
            assert isinstance(block, PointBlock), type(block).__name__
            if "vb" in model.drivers:
                assert isinstance(block, QDensityBlock), type(block).__name__


def test_only_jump_blocks_make_reversible_jump():
    for model in MODELS.values():
        jumps = any(isinstance(block, JumpBlock) for block in model.blocks)
        assert ("rj" in model.drivers) == (jumps and "gibbs" in model.drivers)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_the_newton_steps_find_the_hinge_by_its_protocol(name):
    """VB's mean-Newton steps and the Gaussian family apply where the one latent block is the
    plain hinge (not the normalised one, which has no mean-field ``q``).
    """
    from bayesvm.blocks import HingeAugmentation
    from bayesvm.vb.mean_newton import hinge_of

    model = MODELS[name]
    latent = [block for block in model.blocks if block.latent]
    plain_hinge = len(latent) == 1 and type(latent[0]) is HingeAugmentation
    tilted = getattr(model.coefficients, "takes_tilt", False)
    assert (hinge_of(model) is not None) == (plain_hinge and tilted)
