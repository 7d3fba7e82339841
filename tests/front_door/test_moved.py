"""Modules that moved in 0.2.0 keep their old paths for one release, with a warning."""

import importlib

import pytest

MOVED = {
    "bayesvm.samplers.hinge_mode": ("bayesvm.blocks.hinge_mode", "make_hinge_mode_step"),
    "bayesvm.samplers.model_search": ("bayesvm.blocks.model_search", "jump"),
    "bayesvm.samplers.slice": ("bayesvm.blocks.slice", "slice_step"),
    "bayesvm.models.design": ("bayesvm.blocks.design", "DenseDesign"),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_gives_the_new_modules_names_and_warns(old):
    new, name = MOVED[old]
    alias = importlib.import_module(old)
    with pytest.warns(FutureWarning, match=f"{old} moved to {new}"):
        value = getattr(alias, name)
    assert value is getattr(importlib.import_module(new), name)


def test_a_name_the_new_module_lacks_is_an_attribute_error():
    alias = importlib.import_module("bayesvm.models.design")
    with pytest.warns(FutureWarning), pytest.raises(AttributeError):
        alias.no_such_name  # noqa: B018
