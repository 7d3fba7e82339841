"""Moved to :mod:`bayesvm.blocks.hinge_mode` (0.2.0): this alias goes in 0.3.0."""

from bayesvm.moved import moved_to

__getattr__ = moved_to(__name__, "bayesvm.blocks.hinge_mode")
