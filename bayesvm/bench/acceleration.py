"""VB's ascent with and without its accelerations: sweeps, seconds and how near the optimum.

Each problem of :data:`PROBLEMS` is ascended by every combination of VB's accelerations
(:class:`~bayesvm.vb.cavi.Acceleration`: SQUAREM's cycles, Varadhan & Roland 2008; Newton
steps in the coefficients' mean on the hinge, :mod:`bayesvm.vb.mean_newton`; neither is
Luts-Ormerod's Algorithms 1-2 as printed), from the papers' start and, where
:func:`~bayesvm.fit` would (:data:`~bayesvm.vb.cavi.SUBSAMPLE_MIN_ROWS` rows or more), from a
subsample's optimum. Every ascent stops on the model's own rule (1e-10 relative for the
SVMs). A row gives its sweeps (a SQUAREM cycle is three), its seconds (the ascent alone, not
the fit's checks; the median of ``repeats``) and the largest distance of ``q``'s means from
the optimum, in ``q``'s sds there: the optimum is the fully accelerated ascent from the
papers' start to a relative 1e-14. Newton steps need the hinge with Gaussian coefficients;
where a model has none (the spike-and-slab prior), only SQUAREM's rows are run.
``bayesvm bench --model acceleration`` prints the table (:func:`run`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

import bayesvm
from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.bench.peers import PeerData
from bayesvm.bench.spikeslab import spam_arrays
from bayesvm.case_studies.toenail import full_data_model
from bayesvm.linalg import blas_threads_for
from bayesvm.models import MixedSVM, SpikeSlabSVM
from bayesvm.vb.cavi import Acceleration, ascend
from bayesvm.vb.mean_newton import hinge_of
from bayesvm.vb.optima import q_moments

__all__ = ["run", "run_acceleration_bench", "PROBLEMS", "QUICK_PROBLEMS", "ACCELERATIONS"]

#: Each combination of the accelerations, by the name its rows give.
ACCELERATIONS = {
    "none (the papers')": Acceleration(squarem=False, newton=False),
    "SQUAREM": Acceleration(squarem=True, newton=False),
    "Newton": Acceleration(squarem=False, newton=True),
    "SQUAREM + Newton (default)": Acceleration(squarem=True, newton=True),
}
#: The ascent that finds each problem's optimum: to this relative increase of the bound.
OPTIMUM_TOL = 1e-14
#: Most sweeps of any ascent (plain CAVI on the spam data takes thousands).
MAX_ITER = 50_000


def _heart() -> MixedSVM:
    X, y, splits = bayesvm.data.load_benchmark("heart")
    train, _ = splits[0]
    return MixedSVM.penalized(X[train], y[train])


def _spam(make: Callable) -> Callable[[], object]:
    def model():
        D, labels, _ = spam_arrays()
        return make(D, np.where(labels == "spam", 1, -1))

    return model


def _simulated(n_samples: int, n_features: int) -> Callable[[], MixedSVM]:
    def model():
        data = PeerData.simulate(n_samples, n_features, np.random.default_rng(0))
        return data.penalized

    return model


#: The problems, by the name their rows give: ``name -> model()``.
PROBLEMS = {
    "heart (Rätsch's split 1), MixedSVM.penalized": _heart,
    "spam, standardised, MixedSVM.penalized": _spam(MixedSVM.penalized),
    "spam, standardised, SpikeSlabSVM.laplace_zero (rho = 0.01)": _spam(SpikeSlabSVM.laplace_zero),
    "toenail, MixedSVM.random_intercept": full_data_model,
    "simulated, 10,000 x 100, MixedSVM.penalized": _simulated(10_000, 100),
    "simulated, 100,000 x 100, MixedSVM.penalized": _simulated(100_000, 100),
}
#: The same code paths, the subsample's start included, in a few seconds.
QUICK_PROBLEMS = {
    "heart (Rätsch's split 1), MixedSVM.penalized": _heart,
    "simulated, 20,000 x 40, MixedSVM.penalized": _simulated(20_000, 40),
}


def run_acceleration_bench(
    problems: Sequence[str] | None = None,
    repeats: int | None = None,
    seed: int = 0,
    quick: bool = False,
) -> pd.DataFrame:
    """Ascend each problem by each acceleration (module docstring).

    Parameters
    ----------
    problems : sequence of str, optional
        Names in :data:`PROBLEMS` (default all; :data:`QUICK_PROBLEMS` when ``quick``).
    repeats : int, optional
        Timed ascents per row, the median reported (default 3; 1 when ``quick``).
    seed : int
        Unused: every ascent is deterministic, the simulated data fixed (seed 0).
    quick : bool
        Small problems, one repeat.

    Returns
    -------
    pandas.DataFrame
        One row per problem, start and acceleration: ``problem``, ``start`` (``"papers'"`` or
        ``"subsample"``), ``acceleration``, ``sweeps``, ``seconds``, ``means_off_sd`` and
        ``converged``.
    """
    catalogue = QUICK_PROBLEMS if quick else PROBLEMS
    repeats = repeats or (1 if quick else 3)
    rows = []
    for name in problems or list(catalogue):
        model = catalogue[name]()
        optimum = _ascent(model, Acceleration(), tol=OPTIMUM_TOL, subsample=False)[0]
        means, sds = q_moments(model, optimum.state[0])
        for start, subsample in (("papers'", False), ("subsample", True)):
            for label, acceleration in ACCELERATIONS.items():
                if acceleration.newton and hinge_of(model) is None:
                    continue
                if subsample and not (acceleration.squarem or acceleration.newton):
                    continue  # a subsample's start is one of the accelerations
                timed = [_ascent(model, acceleration, subsample=subsample) for _ in range(repeats)]
                result, sweeps, subsampled, _ = timed[0]
                if subsample and not subsampled:
                    break  # too small: fit_vb starts where the papers do
                rows.append(
                    {
                        "problem": name,
                        "start": start,
                        "acceleration": label,
                        "sweeps": sweeps,
                        "seconds": statistics.median(seconds for *_, seconds in timed),
                        "means_off_sd": _distance(model, result, means, sds),
                        "converged": result.converged,
                    }
                )
    return pd.DataFrame(rows)


def _ascent(model, acceleration: Acceleration, tol: float | None = None, subsample: bool = True):
    """:func:`~bayesvm.vb.cavi.ascend` of ``model`` with the BLAS threads :func:`bayesvm.fit`
    would give it, on the model's stopping rule (or to the relative ``tol``): the result, its
    sweeps, whether it started from a subsample and its seconds.
    """
    settings = dict(model.vb_settings, max_iter=MAX_ITER)
    if tol is not None:
        settings.update(tol=tol, relative=True)
    with blas_threads_for(model.flops_per_iteration):
        start = time.perf_counter()
        result, sweeps, subsampled = ascend(
            model, acceleration, **settings, subsample=subsample, progressbar=False
        )
        seconds = time.perf_counter() - start
    return result, sweeps, subsampled, seconds


def _distance(model, result, means: dict, sds: dict) -> float:
    """The largest distance of ``result``'s ``q`` means from ``means``, in the sds ``sds``."""
    found, _ = q_moments(model, result.state[0])
    distances = [
        np.max(np.abs(found[name] - mean)[sds[name] > 0] / sds[name][sds[name] > 0], initial=0.0)
        for name, mean in means.items()
    ]
    return float(max(distances))


def run(options: BenchOptions) -> Tables:
    """``acceleration``: :func:`run_acceleration_bench` with the ``options`` given."""
    return {"acceleration": run_acceleration_bench(**options.keywords("repeats"))}
