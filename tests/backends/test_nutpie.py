"""nutpie as the NUTS sampler: an optional extra, with the same stored variables as PyMC's."""

import importlib.util
import sys

import numpy as np
import pytest

import bayesvm
from bayesvm.models import LinearSVM


@pytest.fixture
def lasso_model(small_data):
    X, y = small_data
    return LinearSVM.from_arrays(X, y, prior="lasso")


@pytest.mark.skipif(
    importlib.util.find_spec("nutpie") is None,
    reason='nutpie is an optional extra (pip install "bayesvm[nutpie]")',
)
def test_nutpie_stores_the_canonical_variables(lasso_model):
    fit = bayesvm.fit(
        lasso_model, method="nuts", sampler="nutpie", draws=200, tune=200, chains=2, seed=1
    )
    gibbs = bayesvm.fit(lasso_model, method="gibbs", draws=200, tune=0, chains=2, seed=1)
    reference = gibbs.idata.posterior
    posterior = fit.idata.posterior
    assert posterior.attrs["inference_library"] == "nutpie"
    assert {name: values.dims[2:] for name, values in posterior.data_vars.items()} == {
        name: values.dims[2:] for name, values in reference.data_vars.items()
    }
    assert dict(posterior.sizes) == dict(reference.sizes)
    for name in reference.coords:
        if name not in ("chain", "draw"):
            np.testing.assert_array_equal(posterior[name], reference[name])
    assert {"observed_data", "constant_data"} <= set(fit.idata.groups())
    assert "warmup_posterior" not in fit.idata.groups()


def test_nutpie_missing_says_how_to_install_it(lasso_model, monkeypatch):
    monkeypatch.setitem(sys.modules, "nutpie", None)
    with pytest.raises(ImportError, match=r'pip install "bayesvm\[nutpie\]"'):
        bayesvm.fit(lasso_model, method="nuts", sampler="nutpie")


def test_unknown_nuts_sampler_is_rejected(lasso_model):
    with pytest.raises(ValueError, match="sampler must be one of"):
        bayesvm.fit(lasso_model, method="nuts", sampler="numpyro")


def test_nutpie_fits_choose_pytensors_blas_too(lasso_model, monkeypatch):
    # PyMC compiles the start of a nutpie fit in C: without a chosen BLAS PyTensor warns.
    from bayesvm.samplers import nuts

    chosen = []
    monkeypatch.setattr(nuts, "pytensor_blas", lambda: chosen.append(True))
    monkeypatch.setitem(sys.modules, "nutpie", None)
    with pytest.raises(ImportError):
        bayesvm.fit(lasso_model, method="nuts", sampler="nutpie")
    assert chosen == [True]
