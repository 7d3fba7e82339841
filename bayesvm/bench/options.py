"""What every benchmark takes and gives: ``run(options) -> tables``.

Each benchmark module of :mod:`bayesvm.bench` has ``run(options: BenchOptions) -> Tables``,
its measurements as named tables; ``bayesvm bench --model NAME`` prints them (a single table
without its name). A benchmark that draws its tables also has ``figure(tables)``
(``--plot``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = ["BenchOptions", "Tables"]

#: A benchmark's measurements: table name -> table.
Tables = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class BenchOptions:
    """The options of ``bayesvm bench``; each benchmark reads those it has.

    Parameters
    ----------
    quick : bool
        Small sizes and short runs: a smoke test.
    seed : int
        Seeds the data and the fits.
    methods, sizes, repeats, threads, prior, rows, draws, tune : optional
        The benchmark's parameters of these names; None: its own default.
    """

    quick: bool = False
    seed: int = 0
    methods: Sequence[str] | None = None
    sizes: Sequence[tuple[int, int]] | None = None
    repeats: int | None = None
    threads: Sequence[int | None] | None = None
    prior: str | None = None
    rows: int | None = None
    draws: int | None = None
    tune: int | None = None

    def keywords(self, *names: str) -> dict:
        """``seed``, ``quick`` and the options ``names`` that were given (not None), as the
        keyword arguments of a benchmark's function.
        """
        given = {name: getattr(self, name) for name in names if getattr(self, name) is not None}
        return {"seed": self.seed, "quick": self.quick, **given}
