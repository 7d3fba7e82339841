"""A model is its blocks: a new one is a composition of existing blocks plus a constructor,
and every driver fits it without a line of its own (README, "Adding a model").
"""

import dataclasses
import pathlib
import re

import numpy as np
import pytest

import bayesvm
from bayesvm.blocks import GammaPrecision, capabilities
from bayesvm.models import MixedSVM

from conftest import assert_means_within, assert_never_decreases, simulate_logistic

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: What a driver may test a block for: the protocols of its capabilities.
PROTOCOLS = {name for name in capabilities.__all__ if isinstance(getattr(capabilities, name), type)}


@dataclasses.dataclass(frozen=True, eq=False)
class ARDPenalty:
    """``u_j ~ N(0, 1 / lambda_j)``, ``lambda_j ~ Gamma(1, 1)``: one learned penalty per
    feature (the README's worked example).
    """

    n_features: int

    def blocks(self, coefficients, segment, dim):
        prior = GammaPrecision(
            "u_prior",
            shape=1.0,
            rate=1.0,
            coefficients=coefficients,
            segment=segment,
            scale=np.ones(self.n_features),
            ard=True,
            report_name="lambda_u",
            dims=[dim],
        )
        return prior, [prior]


@pytest.fixture(scope="module")
def ard_svm():
    X, y = simulate_logistic(150, 4, seed=8)
    return dataclasses.replace(MixedSVM.penalized(X, y), penalty=ARDPenalty(4))


def test_a_new_model_gets_every_driver_from_its_blocks(ard_svm):
    assert set(bayesvm.methods(ard_svm)) == {"vb", "gibbs", "ecme", "nuts"}
    assert ard_svm.var_names == ("beta", "u", "lambda_u")
    with ard_svm.to_pymc() as pymc_model:
        assert pymc_model.named_vars_to_dims["lambda_u"] == ("effect",)


def test_a_new_model_by_vb_agrees_with_gibbs(ard_svm):
    vb = bayesvm.fit(ard_svm, method="vb")
    assert vb.converged
    assert_never_decreases(vb.lower_bound_trace)
    gibbs = bayesvm.fit(
        ard_svm, method="gibbs", seed=1, chains=2, draws=3000, tune=1000, progressbar=False
    )
    # VB's mean-field bias, up to a posterior sd, plus Gibbs's Monte Carlo error
    for var, vb_mean in zip(("beta", "u"), vb.coefficient_means(), strict=True):
        assert_means_within(vb_mean, gibbs, var, posterior_sds=1.0)


def test_drivers_know_blocks_not_models():
    """No driver chooses its updates by the type of a model, a prior or a block: only by the
    protocols a block implements (``bayesvm.blocks.capabilities``).
    """
    from bayesvm import blocks, models
    from bayesvm.models import penalties

    forbidden = {
        name
        for module in (blocks, models, penalties)
        for name in dir(module)
        if isinstance(getattr(module, name), type)
    } - PROTOCOLS
    for folder in ("vb", "samplers"):
        for path in (ROOT / folder).glob("*.py"):
            text = path.read_text()
            checked = re.findall(r"isinstance\([^,]+,\s*([^)]+)\)", text)
            checked += re.findall(r"type\([^)]*\) is (?:not )?(\w+)", text)
            types = {name.strip() for found in checked for name in re.split(r"[|,()]", found)}
            assert not types & forbidden, (path.name, types & forbidden)
            assert "from bayesvm.models" not in text, path.name
