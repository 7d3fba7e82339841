"""Our methods beside their peers, timed against the problem size.

Every problem is simulated as in Luts-Ormerod (2014) section 4.2 (:func:`~bayesvm.case_studies.
simulated.simulate_dataset`: ``n`` rows of ``d`` standard normal inputs ``D`` and labels
``y``), with a real response for the regressions, ``D w + e``, ``e ~ N(0, 1)``, every other
weight ``N(0, 1)`` and the rest zero (inputs that automatic relevance determination should
prune). The methods, in :data:`PEERS`' groups:

* linear SVM: VB, Gibbs and ECME of :meth:`~bayesvm.models.MixedSVM.penalized` and EM of
  :class:`~bayesvm.models.LinearSVM` (``alpha = 0.5``; EM needs a fixed penalty), as
  ``bayesvm bench`` fits them (:func:`bayesvm.bench.penalized.svm_model_for`), beside
  LIBLINEAR (``sklearn.svm.LinearSVC(C=1)``, scikit-learn's defaults otherwise: squared hinge
  loss, the primal or dual problem chosen by the data's shape) and LIBSVM
  (``sklearn.svm.SVC(kernel="linear", C=1)``);
* NUTS: PyMC's NUTS and nutpie's (``sampler="nutpie"``) on the penalized SVM;
* linear regression with ARD: Drugowitsch's VB (:class:`~bayesvm.models.LinearRegression`
  with ``ard=True``) beside ``sklearn.linear_model.ARDRegression``;
* logistic regression: Drugowitsch's VB (:class:`~bayesvm.models.LogisticRegression`) beside
  ``sklearn.linear_model.LogisticRegression`` and the numpy port of his ``vb_logit_fit.m``
  (:mod:`bayesvm.bench.reference_vb_logit`), as published and with its start unchecked (it
  then runs to its optimum where the published script stops after one iteration).

Drugowitsch's models and his script get a column of ones for the bias, as his examples do;
scikit-learn fits its intercept itself. The samplers run Luts-Ormerod's Gibbs settings and
PyMC's usual NUTS settings (:data:`bayesvm.bench.penalized.SETTINGS`), one chain. A peer from
outside bayesvm runs with as many BLAS threads as :func:`bayesvm.fit` would give our model of
the same data (:func:`bayesvm.linalg.automatic_threads`), in every BLAS (it calls one), so
that all are timed alike.

A method is timed up to its size limit (:data:`SIZE_LIMITS`), where its time would explode;
above it, and where an optional package is missing, its row has no time and a note says why.
:func:`fit_slopes` fits ``seconds ~ n^a`` per method and ``d``; :func:`plot_scaling` draws the
timings. ``bayesvm bench --model peers [--plot FILE]`` prints both tables (:func:`run`) and
draws them (:func:`figure`).
"""

from __future__ import annotations

import importlib.util
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.linear_model import ARDRegression
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression
from sklearn.svm import SVC, LinearSVC

from bayesvm.bench.options import BenchOptions, Tables
from bayesvm.bench.penalized import QUICK_SETTINGS, SETTINGS, svm_model_for
from bayesvm.bench.reference_vb_logit import vb_logit_fit
from bayesvm.bench.timing import load_average, measure_fit, power_law_exponent
from bayesvm.case_studies.simulated import simulate_dataset
from bayesvm.linalg import blas_threads_for
from bayesvm.models import LinearRegression, LogisticRegression

__all__ = [
    "run",
    "figure",
    "run_peer_bench",
    "time_peer",
    "missing_package",
    "fit_slopes",
    "plot_scaling",
    "PeerData",
    "Peer",
    "SizeLimit",
    "PEERS",
    "UNCHECKED_SCRIPT",
    "SIZE_LIMITS",
    "PEER_SIZES",
    "QUICK_PEER_SIZES",
]

#: n = 1e3 ... 1e6 at d = 10 and 100.
PEER_SIZES = tuple((n, d) for d in (10, 100) for n in (1_000, 10_000, 100_000, 1_000_000))
#: The same code paths in a minute or so.
QUICK_PEER_SIZES = tuple((n, d) for d in (3, 6) for n in (100, 200, 400))


@dataclass(frozen=True)
class PeerData:
    """One simulated problem (module docstring): inputs ``D``, labels ``y`` (-1/+1) and the
    regressions' real ``response``; our models of it are built once, on first use.
    """

    D: np.ndarray
    y: np.ndarray
    response: np.ndarray

    @classmethod
    def simulate(cls, n_samples: int, n_features: int, rng: np.random.Generator) -> PeerData:
        """``n_samples`` rows of ``n_features`` inputs (module docstring)."""
        D, y, _, _ = simulate_dataset(n_samples, n_features, 0, rng)
        weights = np.where(np.arange(n_features) % 2 == 0, rng.standard_normal(n_features), 0.0)
        return cls(D, y, D @ weights + rng.standard_normal(n_samples))

    @cached_property
    def design(self) -> np.ndarray:
        """``D`` after a column of ones (the bias of Drugowitsch's models)."""
        return np.column_stack([np.ones(self.D.shape[0]), self.D])

    @cached_property
    def penalized(self):
        """:meth:`~bayesvm.models.MixedSVM.penalized` of ``D`` and ``y``."""
        return svm_model_for(self.D, self.y, "vb")

    @cached_property
    def ard_regression(self) -> LinearRegression:
        """Drugowitsch's linear regression with ARD of the response."""
        return LinearRegression.from_arrays(self.design, self.response, ard=True)

    @cached_property
    def logistic(self) -> LogisticRegression:
        """Drugowitsch's logistic regression of ``y``."""
        return LogisticRegression.from_arrays(self.design, self.y)


@dataclass(frozen=True)
class SizeLimit:
    """The largest problem a method is timed on: at most ``max_samples`` rows and
    ``max_cells`` inputs (``n * d``); None: no limit. ``reason`` says why.
    """

    max_samples: int | None = None
    max_cells: int | None = None
    reason: str = ""

    def allows(self, n_samples: int, n_features: int) -> bool:
        """Whether an ``n_samples x n_features`` problem is within the limit."""
        return (self.max_samples is None or n_samples <= self.max_samples) and (
            self.max_cells is None or n_samples * n_features <= self.max_cells
        )

    def describe(self) -> str:
        """The limit in words, e.g. ``"n <= 10,000: ..."``."""
        bounds = []
        if self.max_samples is not None:
            bounds.append(f"n <= {self.max_samples:,}")
        if self.max_cells is not None:
            bounds.append(f"n d <= {self.max_cells:,}")
        return " and ".join(bounds or ["no limit"]) + (f": {self.reason}" if self.reason else "")


_SAMPLER_LIMIT = SizeLimit(
    max_cells=1_000_000, reason="2,000 draws of up to 1,023 gradients, O(n d) each"
)
#: Where each method's time would explode; the others run at every size.
SIZE_LIMITS = {
    "libsvm": SizeLimit(max_samples=10_000, reason="SMO's kernel evaluations grow as n^2"),
    "gibbs": SizeLimit(max_cells=1_000_000, reason="10,000 sweeps, O(n d^2) each"),
    "nuts": _SAMPLER_LIMIT,
    "nutpie": _SAMPLER_LIMIT,
}


@dataclass(frozen=True)
class Peer:
    """A timed method: its ``group`` (what it is compared within), ``run(data, settings,
    seed)`` returning ``seconds``, ``n_iter``, ``ess_min`` and ``ess_per_s``, and the package
    it ``requires`` beyond bayesvm's dependencies.
    """

    group: str
    run: Callable[[PeerData, dict, int], dict]
    requires: str | None = None


def _ours(model: Callable[[PeerData], object], method: str, sampler: str | None = None):
    """A fit by :func:`bayesvm.fit` of ``model(data)``, with the ``settings`` of ``method``
    (and NUTS's ``sampler``).
    """

    def run(data: PeerData, settings: dict, seed: int) -> dict:
        options = dict(settings.get(method, {}))
        if sampler is not None:
            options["sampler"] = sampler
        return measure_fit(model(data), method, options, seed)[1]

    return run


def _svm(method: str) -> Callable[[PeerData], object]:
    return lambda data: svm_model_for(data.D, data.y, method)


def _external(fit: Callable[[PeerData, int], object], counterpart: str):
    """A fit from outside bayesvm, timed with the BLAS threads of our model ``counterpart`` (a
    :class:`PeerData` property); its iterations are its ``n_iter_`` or ``n_iter``.
    """

    def run(data: PeerData, settings: dict, seed: int) -> dict:
        work = getattr(data, counterpart).flops_per_iteration
        with warnings.catch_warnings(), blas_threads_for(work, every_blas=True):
            warnings.simplefilter("ignore", SklearnConvergenceWarning)
            start = time.perf_counter()
            fitted = fit(data, seed)
            seconds = time.perf_counter() - start
        n_iter = getattr(fitted, "n_iter_", getattr(fitted, "n_iter", np.nan))
        return {
            "seconds": seconds,
            "n_iter": int(np.max(n_iter)),
            "ess_min": np.nan,
            "ess_per_s": np.nan,
        }

    return run


#: The port of ``vb_logit_fit.m`` run to its optimum: its stopping rule applies from the
#: second iteration on (``check_start=False`` of
#: :func:`~bayesvm.bench.reference_vb_logit.vb_logit_fit`).
UNCHECKED_SCRIPT = "vb_logit_fit.m, start unchecked"

#: Every timed method, by name (module docstring).
PEERS = {
    "vb": Peer("linear SVM", _ours(_svm("vb"), "vb")),
    "gibbs": Peer("linear SVM", _ours(_svm("gibbs"), "gibbs")),
    "em": Peer("linear SVM", _ours(_svm("em"), "em")),
    "ecme": Peer("linear SVM", _ours(_svm("ecme"), "ecme")),
    "liblinear": Peer(
        "linear SVM",
        _external(
            lambda data, seed: LinearSVC(C=1.0, random_state=seed).fit(data.D, data.y), "penalized"
        ),
    ),
    "libsvm": Peer(
        "linear SVM",
        _external(lambda data, seed: SVC(kernel="linear", C=1.0).fit(data.D, data.y), "penalized"),
    ),
    "nuts": Peer("NUTS", _ours(_svm("nuts"), "nuts")),
    "nutpie": Peer("NUTS", _ours(_svm("nuts"), "nuts", sampler="nutpie"), requires="nutpie"),
    "vb_ard": Peer("linear regression, ARD", _ours(lambda data: data.ard_regression, "vb")),
    "sklearn_ard": Peer(
        "linear regression, ARD",
        _external(lambda data, seed: ARDRegression().fit(data.D, data.response), "ard_regression"),
    ),
    "vb_logit": Peer("logistic regression", _ours(lambda data: data.logistic, "vb")),
    "sklearn_logit": Peer(
        "logistic regression",
        _external(
            lambda data, seed: SklearnLogisticRegression(random_state=seed).fit(data.D, data.y),
            "logistic",
        ),
    ),
    "vb_logit_fit.m": Peer(
        "logistic regression",
        _external(lambda data, seed: vb_logit_fit(data.design, data.y), "logistic"),
    ),
    UNCHECKED_SCRIPT: Peer(
        "logistic regression",
        _external(
            lambda data, seed: vb_logit_fit(data.design, data.y, check_start=False), "logistic"
        ),
    ),
}


def missing_package(method: str) -> str:
    """The package the peer ``method`` requires and this installation lacks; "" if none."""
    package = PEERS[method].requires
    return package if package and importlib.util.find_spec(package) is None else ""


def time_peer(method: str, data: PeerData, settings: Mapping, seed: int) -> dict:
    """Fit ``data`` by the peer ``method`` of :data:`PEERS` with the samplers' ``settings``.

    Returns
    -------
    dict
        ``seconds`` (wall time of the fit), ``n_iter``, ``ess_min`` (smallest bulk ESS over the
        posterior, samplers only) and ``ess_per_s``.
    """
    return PEERS[method].run(data, dict(settings), seed)


def run_peer_bench(
    sizes: Sequence[tuple[int, int]] | None = None,
    methods: Sequence[str] | None = None,
    seed: int = 0,
    quick: bool = False,
    limits: Mapping[str, SizeLimit] | None = None,
) -> dict[str, pd.DataFrame]:
    """Time each method at each size (module docstring).

    Parameters
    ----------
    sizes : sequence of (n_samples, n_features), optional
        Default :data:`PEER_SIZES`, or :data:`QUICK_PEER_SIZES` when ``quick``.
    methods : sequence of str, optional
        Names in :data:`PEERS` (default all).
    seed : int
        Seeds the data and the fits.
    quick : bool
        Short chains (:data:`bayesvm.bench.penalized.QUICK_SETTINGS`) and small sizes.
    limits : mapping of str to SizeLimit, optional
        Size limits replacing those of :data:`SIZE_LIMITS` for these methods.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``timings``: one row per size and method: ``n_samples``, ``n_features``, ``method``,
        ``group``, ``seconds`` (wall time, compilation included), ``n_iter``, ``ess_min``,
        ``ess_per_s`` (samplers), ``load_1min`` and ``note`` (why a method was not timed, where
        it was not); ``slopes``: :func:`fit_slopes` of it.
    """
    sizes = (QUICK_PEER_SIZES if quick else PEER_SIZES) if sizes is None else sizes
    methods = list(PEERS) if methods is None else list(methods)
    unknown = sorted(set(methods) - set(PEERS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose among {', '.join(PEERS)}")
    limits = {**SIZE_LIMITS, **(limits or {})}
    settings = QUICK_SETTINGS if quick else SETTINGS
    missing = {
        method: f"not timed: {package} is not installed"
        for method in methods
        if (package := missing_package(method))
    }
    warm_up = PeerData.simulate(50, 2, np.random.default_rng(seed))
    for method in methods:  # untimed: imports and other first-call costs
        if method not in missing:
            time_peer(method, warm_up, QUICK_SETTINGS, seed)
    rng = np.random.default_rng(seed)
    rows = []
    for n_samples, n_features in sizes:
        data = PeerData.simulate(n_samples, n_features, rng)
        for method in methods:
            limit = limits.get(method, SizeLimit())
            row = {"seconds": np.nan, "n_iter": np.nan, "ess_min": np.nan, "ess_per_s": np.nan}
            note = missing.get(method, "")
            if not note and not limit.allows(n_samples, n_features):
                note = f"not timed: above its size limit, {limit.describe()}"
            if not note:
                row = time_peer(method, data, settings, seed)
            rows.append(
                {
                    "n_samples": n_samples,
                    "n_features": n_features,
                    "method": method,
                    "group": PEERS[method].group,
                    **row,
                    "load_1min": load_average(),
                    "note": note,
                }
            )
    timings = pd.DataFrame(rows)
    return {"timings": timings, "slopes": fit_slopes(timings)}


def run(options: BenchOptions) -> Tables:
    """:func:`run_peer_bench` with the ``options`` given: ``timings`` and ``slopes``."""
    return run_peer_bench(**options.keywords("sizes", "methods"))


def figure(tables: Tables) -> Figure:
    """:func:`plot_scaling` of :func:`run`'s tables."""
    return plot_scaling(tables["timings"], tables["slopes"])


def fit_slopes(timings: pd.DataFrame) -> pd.DataFrame:
    """The exponent ``a`` of ``seconds ~ n^a`` per method and ``n_features``, by least squares
    on the log-log points of the timed sizes
    (:func:`~bayesvm.bench.timing.power_law_exponent`).

    Returns
    -------
    pandas.DataFrame
        One row per method and ``n_features``: ``method``, ``group``, ``n_features``,
        ``slope`` (NaN with fewer than two timed sizes), ``n_from``, ``n_to`` and ``sizes``
        (how many were timed).
    """
    rows = []
    for (method, n_features), group in timings.groupby(["method", "n_features"], sort=False):
        timed = group[group["seconds"].notna()]
        n = timed["n_samples"]
        enough = n.nunique() >= 2
        rows.append(
            {
                "method": method,
                "group": group["group"].iloc[0],
                "n_features": n_features,
                "slope": power_law_exponent(n, timed["seconds"]) if enough else np.nan,
                "n_from": n.min() if len(n) else np.nan,
                "n_to": n.max() if len(n) else np.nan,
                "sizes": len(n),
            }
        )
    return pd.DataFrame(rows)


def plot_scaling(timings: pd.DataFrame, slopes: pd.DataFrame) -> Figure:
    """Seconds against ``n`` for each method (log-log), one panel per ``n_features``, each
    method's fitted slope in the legend.
    """
    panels = sorted(timings["n_features"].unique())
    figure = Figure(figsize=(6.0 * len(panels), 4.5), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(panels), sharey=True))
    slope = slopes.set_index(["method", "n_features"])["slope"]
    # One colour per method and one marker per group, the same in every panel.
    methods = list(timings["method"].unique())
    groups = list(timings["group"].unique())
    colours = matplotlib.colormaps["tab20"].colors
    for ax, n_features in zip(axes, panels, strict=True):
        for method, group in timings[timings["n_features"] == n_features].groupby(
            "method", sort=False
        ):
            timed = group[group["seconds"].notna()]
            if timed.empty:
                continue
            fitted = slope[(method, n_features)]
            label = f"{method} (slope {fitted:.2f})" if np.isfinite(fitted) else method
            ax.plot(
                timed["n_samples"],
                timed["seconds"],
                color=colours[methods.index(method) % len(colours)],
                marker="osD^v"[groups.index(group["group"].iloc[0]) % 5],
                label=label,
            )
        ax.set(xscale="log", yscale="log", xlabel="n (rows)", title=f"d = {n_features}")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("seconds (wall time)")
    return figure
