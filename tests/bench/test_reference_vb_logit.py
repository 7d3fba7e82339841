"""The numpy port of Drugowitsch's vb_logit_fit.m reaches our VB fit's posterior."""

import numpy as np
import pytest

import bayesvm
from bayesvm.bench.peers import PeerData
from bayesvm.bench.reference_vb_logit import vb_logit_fit
from bayesvm.models import LogisticRegression

from conftest import simulate_logistic


def test_port_reaches_the_posterior_of_our_vb_fit():
    X, y = simulate_logistic(200, 4, seed=1)
    reference = vb_logit_fit(X, y, rel_tol=1e-12)
    fit = bayesvm.fit(LogisticRegression.from_arrays(X, y), method="vb", tol=1e-12)
    q = fit.idata.variational
    assert reference.converged
    np.testing.assert_allclose(q["w_mean"].to_numpy(), reference.w, atol=1e-5)
    np.testing.assert_allclose(q["V"].to_numpy(), reference.V, atol=1e-7)
    # The script's last E(alpha) comes from the q(w) before its last update.
    assert float(q["E_a"]) == pytest.approx(reference.E_a, rel=1e-5)
    assert fit.lower_bound == pytest.approx(reference.L, rel=1e-9)
    np.testing.assert_allclose(reference.invV @ reference.V, np.eye(X.shape[1]), atol=1e-10)
    assert reference.logdetV == pytest.approx(np.linalg.slogdet(reference.V)[1])


def test_port_stops_at_max_iter_without_converging():
    X, y = simulate_logistic(200, 4, seed=1)
    reference = vb_logit_fit(X, y, max_iter=2)
    assert reference.n_iter == 2 and not reference.converged


def test_port_with_its_start_unchecked_runs_to_the_optimum_the_script_misses():
    # On these data the script's starting value exceeds its first bound: it stops there.
    data = PeerData.simulate(300, 200, np.random.default_rng(1))
    as_published = vb_logit_fit(data.design, data.y)
    unchecked = vb_logit_fit(data.design, data.y, check_start=False)
    assert as_published.n_iter == 1
    assert unchecked.converged and unchecked.n_iter > 1
    assert unchecked.L > as_published.L
    # Run to the end, both reach our VB fit's optimum.
    reference = vb_logit_fit(data.design, data.y, rel_tol=1e-12, check_start=False)
    fit = bayesvm.fit(data.logistic, method="vb", tol=1e-12)
    assert reference.L == pytest.approx(fit.lower_bound, rel=1e-9)
    sd = np.sqrt(np.diag(reference.V))
    assert np.max(np.abs(reference.w - fit.idata.variational["w_mean"].to_numpy()) / sd) < 1e-4
