"""The numpy port of Drugowitsch's vb_logit_fit.m reaches our VB fit's posterior."""

import numpy as np
import pytest

import bayesvm
from bayesvm.models import LogisticRegression
from bayesvm.reference_vb_logit import vb_logit_fit

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
