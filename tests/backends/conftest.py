"""Fixtures shared by the backends' tests."""

from __future__ import annotations

import pytest

import bayesvm
from bayesvm.models import MixedSVM


@pytest.fixture(scope="module")
def heart_model():
    """Rätsch's heart data, realisation 1's training rows: 170 rows, 13 weights."""
    X, y, splits = bayesvm.data.load_benchmark("heart")
    train, _ = splits[0]
    return MixedSVM.penalized(X[train], y[train])
