"""Moved to :mod:`bayesvm.case_studies.gpsvm.baselines` (0.3.0): this alias goes in 0.4.0."""

from bayesvm.moved import moved_to

__getattr__ = moved_to(__name__, "bayesvm.case_studies.gpsvm.baselines", moved_in="0.3.0")
