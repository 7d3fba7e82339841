"""What S-BSVM's steps cost: no factorisation they do not need, no design of every row."""

import contextlib

import numpy as np
import pytest

import bayesvm
from bayesvm import registry
from bayesvm.models import GPSVM
from bayesvm.vb.svi import _local_step


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] * X[:, 1] > 0, 1, -1)


def test_conditional_natural_is_the_natural_form_of_the_conditional():
    X, y = _data()
    model = GPSVM.from_arrays(X, y, lengthscale=2.0, inducing=8, seed=0)
    blocks = model.batch_blocks(np.arange(10), X[:10], y[:10].astype(float), scale=6.0)
    values = blocks[0]
    start = {values.name: values.initial_natural()}
    _, stats = _local_step(blocks, start)
    precision, linear = values.conditional_natural(stats)
    conditional = values.conditional(stats)
    np.testing.assert_allclose(precision, conditional.gaussian.precision())
    np.testing.assert_allclose(np.linalg.solve(precision, linear), conditional.mean)


def test_methods_of_a_sparse_model_do_not_build_the_design_of_every_row():
    X, y = _data()
    model = GPSVM.from_arrays(X, y, lengthscale=2.0, inducing=X.shape[0], inducing_method="random")
    # Every row is an inducing point, yet the one-row blocks are not the exact (full) GP.
    assert bayesvm.methods(model) == ["vb", "svi"]
    assert "blocks" not in vars(model)  # the n x m design was never formed
    full = GPSVM.from_arrays(X, y, lengthscale=2.0)
    assert set(bayesvm.methods(full)) == {"vb", "gibbs", "em", "svi", "nuts"}


@pytest.mark.filterwarnings("ignore::bayesvm.exceptions.ConvergenceWarning")  # 3 steps
def test_svi_sets_the_blas_threads_by_a_step_s_work_not_a_pass_s(monkeypatch):
    X, y = _data()
    model = GPSVM.from_arrays(X, y, lengthscale=2.0, inducing=8, seed=0)
    works = []

    def record(work, threads):
        works.append(work)
        return contextlib.nullcontext()

    monkeypatch.setattr(registry, "blas_threads_for", record)
    bayesvm.fit(model, "svi", batch_size=6, max_iter=3, progressbar=False, draws=5)
    bayesvm.fit(model, "vb")
    assert works == [pytest.approx(model.flops_per_iteration * 6 / 60), model.flops_per_iteration]
