"""Benchmarks: timings of the backends and of their peers, one module per benchmark.

Each module's ``run(options)`` (:class:`BenchOptions`) returns its tables; ``bayesvm bench
--model NAME`` runs one. They stand on the models, the drivers and the case studies' data, and
nothing in the front door imports them.
"""

from bayesvm.bench.options import BenchOptions, Tables

__all__ = ["BenchOptions", "Tables"]
