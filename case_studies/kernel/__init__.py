"""Zhang, Dai, Wang & Jordan (2010), "Bayesian generalized kernel models", section 4: the
Rätsch benchmarks of Table 5, with the comparisons of Tables 2-4 and Figure 1 on them.

Data (:func:`bayesvm.data.load_benchmark`): ringnorm, twonorm and waveform, 400 training rows
each and 7000, 7000 and 4600 test rows (Table 1). The paper uses twenty random partitions of
each data set; we take Rätsch's bundled realisations first (10 for ringnorm and waveform, 1 for
twonorm) and draw the others at random with the same sizes (:func:`partition`). Every method
sees the same partitions; the features are used as distributed (already normalised).

Methods of the comparison (:data:`COMPARED`), each fitted to a training part and scored by its
error rate (%) on the test part:

* ``"rj"``: FBGKM, :class:`~bayesvm.models.KernelGKM` (probit link, Silverman g-prior, active
  vectors chosen by reversible jump, section 3.2) with ``k_max = 400`` (Table 1);
* ``"gibbs"``: BGKM, the same model with every vector active, by Gibbs sampling (steps (a)-(b)
  of section 3.2; section 4.1);
* ``"vb"``: BGKM by mean-field variational Bayes (not in the paper);
* ``"svm"``: LIBSVM's C-SVC with an RBF kernel, ``(C, gamma)`` chosen by 5-fold
  cross-validation over a grid (:func:`fit_rbf_svm`; the paper cites Zhu & Hastie's SVM
  numbers instead);
* ``"gpc"``: scikit-learn's Gaussian process classifier (Laplace approximation) with an RBF
  kernel whose amplitude and length scale maximise the marginal likelihood (ML-II), in place of
  the paper's IVM (an approximation to the same GP classifier).

Both samplers follow section 4: RBF kernel ``exp(-||x - x'||^2 / theta^2)`` with ``theta`` the
mean Euclidean distance between training points, ``a_eta = 1``, ``b_eta = 0.1``, ``a_g = 4``,
``b_g = 0.1`` (:data:`PRIOR`), 10,000 sweeps of which 5,000 are burn-in and every 5th after it
is kept; predictions average the class probabilities of the kept draws (section 3.3).

Two more FBGKM experiments, chosen like methods: ``"trace"``, the number of active vectors over
the first 6000 sweeps of one chain per data set (no burn-in, every sweep kept; Figure 1), and
``"kmax"``, the comparison's FBGKM refitted with smaller ``k_max`` on one data set (Table 4).
:func:`run` is the entry point of ``bayesvm reproduce kernel``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

import bayesvm
from bayesvm.case_studies.kernel import figures as kernel_figures
from bayesvm.case_studies.reporting import markdown_table, unconverged_note
from bayesvm.case_studies.runner import split_tasks, task_seed, trust_notes
from bayesvm.case_studies.study import Study, StudyRun, keyed_task
from bayesvm.data import BENCHMARKS, load_benchmark
from bayesvm.files import save_figure
from bayesvm.models import KernelGKM
from bayesvm.models.kernel_gkm import mean_distance

__all__ = [
    "DATASETS",
    "METHODS",
    "COMPARED",
    "METHOD_LABELS",
    "PRIOR",
    "PAPER_TABLE_5",
    "PAPER_SECONDS",
    "PAPER_TABLE_4",
    "PAPER_MACHINE",
    "OUTPUT_FILES",
    "Protocol",
    "PAPER_PROTOCOL",
    "QUICK_PROTOCOL",
    "partition",
    "svm_grid",
    "fit_rbf_svm",
    "split_rows",
    "trace_rows",
    "kmax_rows",
    "mean_sd",
    "table_5",
    "sampler_table",
    "kmax_table",
    "timing_table",
    "STUDY",
    "run",
]

#: The data sets of Table 5 (Zhang et al.'s Table 1), a subset of
#: :data:`~bayesvm.data.BENCHMARKS`.
DATASETS = ("ringnorm", "twonorm", "waveform")
#: The methods of the comparison (Tables 2, 3 and 5).
COMPARED = ("rj", "gibbs", "vb", "svm", "gpc")
#: Everything ``methods`` may name: the comparison, then Figure 1 and Table 4.
METHODS = (*COMPARED, "trace", "kmax")
METHOD_LABELS = {
    "rj": "FBGKM",
    "gibbs": "BGKM (Gibbs)",
    "vb": "BGKM (VB)",
    "svm": "SVM",
    "gpc": "GPC",
    "trace": "FBGKM trace (Figure 1)",
    "kmax": "FBGKM k_max (Table 4)",
}
#: Section 4's fixed hyperparameters of the samplers (``a_alpha = b_alpha = 1``, section 3.1,
#: are the model's defaults).
PRIOR = {"a_eta": 1.0, "b_eta": 0.1, "a_g": 4.0, "b_g": 0.1}
#: Table 5: test error (%) mean and sd over twenty partitions; SVM and IVM cited from Zhu &
#: Hastie (2005).
PAPER_TABLE_5 = {
    "ringnorm": {"SVM": (2.03, 0.19), "IVM": (1.97, 0.29), "FBGKM": (1.51, 0.10)},
    "twonorm": {"SVM": (2.90, 0.25), "IVM": (2.45, 0.15), "FBGKM": (2.86, 0.21)},
    "waveform": {"SVM": (9.98, 0.43), "IVM": (10.13, 0.47), "FBGKM": (9.80, 0.31)},
}
#: The paper gives no times for these data sets. Its nearest setting is Table 3's NewsGroups
#: row with n = 400 training points (893 features, k_max = 200): seconds per fit.
PAPER_SECONDS = {"rj": 2804.0, "gibbs": 4674.0}
#: Table 4 (NewsGroups, n = 800): k_max -> (error %, sd, seconds).
PAPER_TABLE_4 = {
    300: (4.55, 0.46, 6522.0),
    400: (4.62, 0.45, 7189.0),
    500: (4.64, 0.37, 8536.0),
    600: (4.75, 0.48, 10330.0),
    700: (4.72, 0.28, 11700.0),
}
#: Seconds of one partition's fits with ``--workers 2`` (means of the full run's 20 partitions,
#: all methods): the runner starts the costliest tasks first (:class:`~bayesvm.case_studies.
#: runner.Task`), so that a run does not end on one long waveform fit while the other worker
#: idles. Figure 1's chains are weighed alike.
TASK_SECONDS = {"ringnorm": 85.0, "twonorm": 126.0, "waveform": 296.0}
#: Where the paper's experiments ran (section 4).
PAPER_MACHINE = "Matlab on a Pentium 4 (2.80 GHz, 2 GB RAM)"
DEFAULT_SEED = 2010
OUTPUT_FILES = (
    "kernel.csv",
    "kernel.settings.json",
    "kernel_trace.csv",
    "kernel_trace.settings.json",
    "kernel_trace.png",
    "kernel_kmax.csv",
    "kernel_kmax.settings.json",
    "report.md",
)
# First entries of the task seeds: partitions are keyed (PARTITION, data set, split), the
# comparison's fits (SPLITS, data set, split), the traces (TRACE, data set), the k_max fits
# (KMAX, k_max, split).
_PARTITION, _SPLITS, _TRACE, _KMAX = 0, 1, 2, 3


@dataclass(frozen=True)
class Protocol:
    """Sizes of the experiment.

    Attributes
    ----------
    n_splits : int
        Partitions of each data set (Rätsch's bundled ones first, then random ones).
    n_train, n_test : int or None
        Random subsets of this many training / test rows of each partition (a smoke test);
        None keeps them all.
    draws, tune, thin : int
        Kept draws, burn-in sweeps and thinning of the samplers: ``tune + draws * thin``
        sweeps in all.
    k_max : int
        Largest number of active vectors of FBGKM in the comparison (at most the training
        size).
    trace_sweeps : int
        Sweeps of the chains of Figure 1.
    kmax_dataset : str
        Data set of the k_max experiment.
    kmax_values : tuple of int
        Values of ``k_max`` refitted there (``k_max`` itself comes from the comparison).
    svm_log2_C, svm_log2_gamma : tuple of int
        The SVM's grid, as powers of 2 (:func:`svm_grid`).
    svm_folds : int
        Folds of its cross-validation.
    gpc_restarts : int
        Restarts of the GP classifier's marginal likelihood optimiser from random
        hyperparameters.
    """

    n_splits: int = 20
    n_train: int | None = None
    n_test: int | None = None
    draws: int = 1000
    tune: int = 5000
    thin: int = 5
    k_max: int = 400
    trace_sweeps: int = 6000
    kmax_dataset: str = "ringnorm"
    kmax_values: tuple[int, ...] = (50, 100, 200)
    svm_log2_C: tuple[int, ...] = tuple(range(-5, 16, 2))
    svm_log2_gamma: tuple[int, ...] = tuple(range(-15, 4, 2))
    svm_folds: int = 5
    gpc_restarts: int = 2

    @property
    def sweeps(self) -> int:
        """Sweeps of each chain of the comparison."""
        return self.tune + self.draws * self.thin


#: Section 4: 20 partitions, 10,000 sweeps (5,000 burn-in, every 5th kept), k_max = 400,
#: Figure 1's 6000 sweeps; Table 4's k_max below 400. The SVM's grid is that of the LIBSVM
#: guide (Hsu, Chang & Lin): C = 2^-5, 2^-3, ..., 2^15 and gamma = 2^-15, 2^-13, ..., 2^3.
PAPER_PROTOCOL = Protocol()
#: A smoke test: 2 partitions, 60 training and 600 test rows, chains of 50 + 50 sweeps (of 20
#: reversible-jump proposals each), k_max 30 (10 and 20 in the k_max experiment), a 3 x 3 SVM
#: grid with 3 folds.
QUICK_PROTOCOL = Protocol(
    n_splits=2,
    n_train=60,
    n_test=600,
    draws=50,
    tune=50,
    thin=1,
    k_max=30,
    trace_sweeps=150,
    kmax_values=(10, 20),
    svm_log2_C=(-1, 1, 3),
    svm_log2_gamma=(-7, -5, -3),
    svm_folds=3,
    gpc_restarts=0,
)


def partition(
    name: str, split: int, protocol: Protocol, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """Partition ``split`` of the data set ``name``: training and test rows.

    Splits ``0 .. r - 1`` are Rätsch's bundled realisations ``1 .. r``; later ones are random
    partitions with the same training size (the rest is the test part), drawn from ``(seed,
    0, data set, split)``, as the paper's twenty random partitions. With ``protocol.n_train``
    or ``n_test`` a random subset of each part is kept, drawn from the same stream.

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
    source : str
        ``"bundled"`` or ``"drawn"``.
    """
    X, y, bundled = load_benchmark(name)
    rng = np.random.default_rng(task_seed(seed, _PARTITION, BENCHMARKS.index(name), split))
    if split < len(bundled):
        train, test = bundled[split]
        source = "bundled"
    else:
        train = np.sort(rng.choice(y.size, size=bundled[0][0].size, replace=False))
        test = np.setdiff1d(np.arange(y.size), train)
        source = "drawn"
    if protocol.n_train is not None:
        train = np.sort(rng.choice(train, size=protocol.n_train, replace=False))
    if protocol.n_test is not None:
        test = np.sort(rng.choice(test, size=protocol.n_test, replace=False))
    return X[train], y[train], X[test], y[test], source


def svm_grid(log2_C, log2_gamma) -> dict[str, np.ndarray]:
    """The SVM's grid of ``C = 2**log2_C`` by ``gamma = 2**log2_gamma``, as
    :class:`~sklearn.model_selection.GridSearchCV` takes it; ``gamma`` is LIBSVM's, the
    kernel being ``exp(-gamma ||x - x'||^2)`` (the paper's ``theta`` is ``gamma**-0.5``).
    """
    log2_C, log2_gamma = np.asarray(log2_C), np.asarray(log2_gamma)
    if log2_C.size == 0 or log2_gamma.size == 0:
        raise ValueError("the SVM's grid needs at least one C and one gamma")
    return {"C": 2.0**log2_C, "gamma": 2.0**log2_gamma}


def fit_rbf_svm(X, y, *, log2_C, log2_gamma, folds: int, seed) -> GridSearchCV:
    """LIBSVM's C-SVC with an RBF kernel, ``(C, gamma)`` chosen by stratified ``folds``-fold
    cross-validation accuracy over :func:`svm_grid` (ties go to the first in grid order:
    the smallest ``C``, then the smallest ``gamma``), refitted on all of ``X``.

    Parameters
    ----------
    X, y : array-like
        Training data.
    log2_C, log2_gamma : sequence of int
        The grid, as powers of 2.
    folds : int
        Folds of the cross-validation, shuffled.
    seed : int or numpy.random.Generator
        Seeds the shuffling of the folds.

    Returns
    -------
    sklearn.model_selection.GridSearchCV
        Fitted; ``best_params_`` holds the chosen ``C`` and ``gamma``.
    """
    random_state = int(np.random.default_rng(seed).integers(2**31 - 1))
    search = GridSearchCV(
        SVC(kernel="rbf"),
        svm_grid(log2_C, log2_gamma),
        cv=StratifiedKFold(n_splits=folds, shuffle=True, random_state=random_state),
    )
    return search.fit(X, y)


def _gp_classifier(X, restarts: int, rng: np.random.Generator) -> GaussianProcessClassifier:
    """The GP classifier, its RBF kernel started at the paper's ``theta`` (scikit-learn's
    length scale is ``theta / sqrt(2)``) with unit amplitude.
    """
    theta = mean_distance(X)
    return GaussianProcessClassifier(
        ConstantKernel(1.0) * RBF(length_scale=theta / np.sqrt(2.0)),
        n_restarts_optimizer=restarts,
        random_state=int(rng.integers(2**31 - 1)),
    )


def _kernel_model(X, y, k_max: int) -> KernelGKM:
    return KernelGKM.from_arrays(X, y, kernel="rbf", k_max=min(k_max, y.size), **PRIOR)


def _sampled(model: KernelGKM, method: str, rng, *, draws: int, tune: int, thin: int):
    return bayesvm.fit(
        model,
        method=method,
        draws=draws,
        tune=tune,
        thin=thin,
        chains=1,
        seed=rng,
        progressbar=False,
    )


def _fitted(classifier, seconds: float, tuned: str, **details) -> dict:
    """A fitted method of the comparison and the columns of its row (see :func:`split_rows`);
    ``details`` it does not give are blank.
    """
    row = {"classifier": classifier, "seconds": seconds, "k_max": None, "n_active": None}
    row |= {"accept_rate": None, "tuned": tuned, "converged": None}
    return row | details


def _fit_compared(method: str, X, y, protocol: Protocol, rng, k_max: int) -> dict:
    """Fit one method of the comparison (:func:`_fitted`)."""
    if method in ("rj", "gibbs", "vb"):
        model = _kernel_model(X, y, k_max)
        tuned = f"theta={model.lengthscale:.4g}"
        if method == "vb":
            fitted = bayesvm.fit(model, method="vb", seed=rng)
            return _fitted(
                fitted, fitted.runtime_s, tuned, n_active=float(y.size), converged=fitted.converged
            )
        chain = {"draws": protocol.draws, "tune": protocol.tune, "thin": protocol.thin}
        fitted = _sampled(model, method, rng, **chain)
        stats = fitted.idata.sample_stats
        details = {"n_active": float(stats["n_active"].mean()), "converged": fitted.converged}
        if method == "rj":
            details |= {"k_max": model.k_max, "accept_rate": float(stats["accept_rate"].mean())}
        return _fitted(fitted, fitted.runtime_s, tuned, **details)
    start = time.perf_counter()
    if method == "svm":
        search = fit_rbf_svm(
            X,
            y,
            log2_C=protocol.svm_log2_C,
            log2_gamma=protocol.svm_log2_gamma,
            folds=protocol.svm_folds,
            seed=rng,
        )
        best = search.best_params_
        return _fitted(
            search,
            time.perf_counter() - start,
            f"C={best['C']:.4g}, gamma={best['gamma']:.4g}",
            n_active=float(search.best_estimator_.n_support_.sum()),
        )
    if method == "gpc":
        gpc = _gp_classifier(X, protocol.gpc_restarts, rng).fit(X, y)
        return _fitted(gpc, time.perf_counter() - start, str(gpc.kernel_))
    raise ValueError(f"method must be one of {COMPARED}; got {method!r}")


def _scored_rows(methods, X, y, X_test, y_test, protocol, rngs, k_max) -> list[dict]:
    rows = []
    for method in methods:
        with trust_notes() as notes:  # recorded in the row, not printed per split
            fitted = _fit_compared(method, X, y, protocol, rngs[method], k_max)
        predicted = fitted.pop("classifier").predict(X_test)
        rows.append(
            {
                "method": method,
                "error": 100.0 * float(np.mean(predicted != y_test)),
                **fitted,
                "warnings": " | ".join(notes),
            }
        )
    return rows


def _task_cost(dataset: str) -> float:
    """:data:`TASK_SECONDS` of ``dataset`` (a data set not listed: as the slowest)."""
    return TASK_SECONDS.get(dataset, max(TASK_SECONDS.values()))


def split_rows(*, dataset: str, split: int, seed: int, methods, protocol: Protocol) -> list[dict]:
    """Fit and score each method of the comparison among ``methods`` on partition ``split``
    of ``dataset`` (:func:`partition`).

    Each method draws from its own stream spawned from ``(seed, 1, data set, split)``, so a
    row depends neither on the other splits nor on the other methods.

    Returns
    -------
    list of dict
        One row per method: ``method``; ``error``, the test error rate in %; ``seconds``, the
        wall time of the fit (SVM: cross-validation and refit; GPC: marginal likelihood
        optimisation); ``k_max`` of FBGKM; ``n_active``, the kernel vectors the classifier
        uses (FBGKM: mean over the kept draws; BGKM: every training row; SVM: support
        vectors; blank for GPC);
        ``accept_rate`` of the reversible jump moves (FBGKM); ``tuned``, the kernel's
        hyperparameters; ``converged`` (the Bayesian fit passed its checks; blank for SVM and
        GPC); ``warnings``; ``n_train``, ``n_test`` and ``partition`` (``"bundled"`` or
        ``"drawn"``).
    """
    X, y, X_test, y_test, source = partition(dataset, split, protocol, seed)
    streams = task_seed(seed, _SPLITS, BENCHMARKS.index(dataset), split).spawn(len(COMPARED))
    rngs = dict(zip(COMPARED, map(np.random.default_rng, streams), strict=True))
    compared = [method for method in methods if method in COMPARED]
    rows = _scored_rows(compared, X, y, X_test, y_test, protocol, rngs, protocol.k_max)
    sizes = {"n_train": y.size, "n_test": y_test.size, "partition": source}
    return [{**row, **sizes} for row in rows]


def trace_rows(*, dataset: str, seed: int, protocol: Protocol) -> list[dict]:
    """Figure 1: one FBGKM chain on partition 0 of ``dataset`` for ``protocol.trace_sweeps``
    sweeps with no burn-in and every sweep kept; one row per sweep, ``sweep`` (from 1) and
    ``n_active``. The chain keeps its start on purpose, so its convergence checks, which
    would fail on it, are dropped.
    """
    X, y, _, _, _ = partition(dataset, 0, protocol, seed)
    rng = np.random.default_rng(task_seed(seed, _TRACE, BENCHMARKS.index(dataset)))
    model = _kernel_model(X, y, protocol.k_max)
    with trust_notes():
        fitted = _sampled(model, "rj", rng, draws=protocol.trace_sweeps, tune=0, thin=1)
    n_active = fitted.idata.sample_stats["n_active"].isel(chain=0).to_numpy()
    return [
        {"sweep": sweep, "n_active": int(count)} for sweep, count in enumerate(n_active, start=1)
    ]


def kmax_rows(*, k_max: int, split: int, seed: int, protocol: Protocol) -> list[dict]:
    """Table 4: FBGKM with ``k_max`` on partition ``split`` of ``protocol.kmax_dataset``;
    one row as :func:`split_rows`'s, from the stream ``(seed, 3, k_max, split)``.
    """
    X, y, X_test, y_test, _ = partition(protocol.kmax_dataset, split, protocol, seed)
    rngs = {"rj": np.random.default_rng(task_seed(seed, _KMAX, k_max, split))}
    return _scored_rows(["rj"], X, y, X_test, y_test, protocol, rngs, k_max)


def mean_sd(values) -> str:
    """``"mean (sd)"`` to two decimals, as the paper's tables; the mean alone for one value."""
    values = pd.Series(values, dtype=float).dropna()
    if values.empty:
        return ""
    if values.size == 1:
        return f"{values.iloc[0]:.2f}"
    return f"{values.mean():.2f} ({values.std():.2f})"


def _present(results: pd.DataFrame, among) -> list[str]:
    present = set(results["method"])
    return [method for method in among if method in present]


def table_5(results: pd.DataFrame) -> pd.DataFrame:
    """Table 5 with ours beside it: test error (%) mean (sd) over the partitions.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`split_rows` with ``dataset``: columns ``dataset``, ``method`` and
        ``error``.

    Returns
    -------
    pandas.DataFrame
        One row per data set in ``results``: ``data set``, ``partitions``, the paper's
        ``SVM (paper)``, ``IVM (paper)`` and ``FBGKM (paper)``, then one column per method
        present, labelled as :data:`METHOD_LABELS`.
    """
    rows = []
    for dataset, rows_of_dataset in results.groupby("dataset", sort=False):
        errors = rows_of_dataset.groupby("method")["error"]
        paper = PAPER_TABLE_5[dataset]
        row = {"data set": dataset, "partitions": rows_of_dataset["split"].nunique()}
        row |= {f"{name} (paper)": f"{m:.2f} ({s:.2f})" for name, (m, s) in paper.items()}
        for method in _present(results, COMPARED):
            row[METHOD_LABELS[method]] = (
                mean_sd(errors.get_group(method)) if method in errors.groups else ""
            )
        rows.append(row)
    return pd.DataFrame(rows)


def sampler_table(results: pd.DataFrame) -> pd.DataFrame:
    """Tables 2 and 3's layout for the kernel models: for each data set, the error (%) mean
    (sd) and mean seconds per fit of BGKM (Gibbs), BGKM (VB) and FBGKM, those present.
    """
    methods = _present(results, ("gibbs", "vb", "rj"))
    rows = []
    for dataset, rows_of_dataset in results.groupby("dataset", sort=False):
        by_method = rows_of_dataset.groupby("method")
        row = {"data set": dataset}
        for method in methods:
            label = METHOD_LABELS[method]
            if method in by_method.groups:
                group = by_method.get_group(method)
                row[f"{label} err"] = mean_sd(group["error"])
                row[f"{label} time (s)"] = group["seconds"].mean()
                row[f"{label} fits"] = len(group)
        rows.append(row)
    return pd.DataFrame(rows)


def kmax_table(kmax_results: pd.DataFrame, results: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Table 4's layout: FBGKM on ``dataset`` by ``k_max``, error (%) mean (sd), mean
    seconds, mean active vectors and acceptance rate; the comparison's FBGKM rows on
    ``dataset`` (its ``k_max``, given in ``results`` by ``k_max``) join those of the k_max
    experiment.
    """
    compared = results[(results["method"] == "rj") & (results["dataset"] == dataset)]
    frames = [kmax_results[["k_max", "split", "error", "seconds", "n_active", "accept_rate"]]]
    if not compared.empty:
        frames.append(compared[["k_max", "split", "error", "seconds", "n_active", "accept_rate"]])
    rows = pd.concat(frames, ignore_index=True)
    grouped = rows.groupby("k_max")
    return pd.DataFrame(
        {
            "k_max": list(grouped.groups),
            "partitions": grouped["split"].nunique().to_numpy(),
            "err": grouped["error"].agg(mean_sd).to_numpy(),
            "time (s)": grouped["seconds"].mean().to_numpy(),
            "mean active vectors": grouped["n_active"].mean().to_numpy(),
            "acceptance rate": grouped["accept_rate"].mean().to_numpy(),
        }
    )


def timing_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean seconds per fit of each method by data set, and for the samplers the ratio of
    ours to the paper's nearest published time (:data:`PAPER_SECONDS`).
    """
    methods = _present(results, COMPARED)
    seconds = results.pivot_table(index="method", columns="dataset", values="seconds")
    seconds = seconds.reindex(index=methods, columns=list(dict.fromkeys(results["dataset"])))
    table = seconds.rename(index=METHOD_LABELS).rename_axis("method").reset_index()
    table.columns = ["method", *(f"{name} s" for name in seconds.columns)]
    paper = pd.Series(PAPER_SECONDS).reindex(methods)
    table["paper s (NewsGroups, n = 400)"] = paper.to_numpy()
    table["ours / paper"] = (seconds.mean(axis=1) / paper).to_numpy()
    return table


STUDY = Study(
    "kernel",
    METHODS,
    PAPER_PROTOCOL,
    QUICK_PROTOCOL,
    DEFAULT_SEED,
    n_datasets_field="n_splits",
    n_datasets_text="Partitions of each data set",
    benchmarks=DATASETS,
)


def _execute(run: StudyRun) -> tuple[pd.DataFrame, str]:
    methods, protocol, seed, benchmarks = run.methods, run.protocol, run.seed, run.benchmarks
    compared = any(method in COMPARED for method in methods)
    csv_paths = {
        "kernel.csv": compared,
        "kernel_trace.csv": "trace" in methods,
        "kernel_kmax.csv": "kmax" in methods,
    }
    run.check_resume(*(name for name, runs in csv_paths.items() if runs))
    results = pd.DataFrame(columns=["dataset", "split", "method", "error", "seconds"])
    if compared:
        tasks = split_tasks(
            split_rows,
            protocol.n_splits,
            datasets=benchmarks,
            seed=seed,
            methods=methods,
            protocol=protocol,
        )
        tasks = [replace(task, cost=_task_cost(task.key["dataset"])) for task in tasks]
        results = run.run_tasks(tasks, "kernel.csv", "kernel partitions")
    traces = kmax = None
    if "trace" in methods:
        tasks = [
            replace(
                keyed_task({"dataset": name}, trace_rows, seed=seed, protocol=protocol),
                cost=_task_cost(name),
            )
            for name in benchmarks
        ]
        traces = run.run_tasks(tasks, "kernel_trace.csv", "kernel traces")
        save_figure(
            kernel_figures.trace_figure(traces, protocol.k_max),
            run.out_dir / "kernel_trace.png",
            dpi=120,
            bbox_inches="tight",
        )
    if "kmax" in methods:
        tasks = [
            keyed_task({"k_max": k_max, "split": split}, kmax_rows, seed=seed, protocol=protocol)
            for k_max in protocol.kmax_values
            for split in range(protocol.n_splits)
        ]
        kmax = run.run_tasks(tasks, "kernel_kmax.csv", "kernel k_max")
    report = _report(
        results,
        traces,
        kmax,
        protocol,
        benchmarks,
        quick=run.quick,
        seed=seed,
        run_line=run.run_line(),
    )
    return results, report


run = STUDY.entry_point(
    _execute,
    summary="Run the section 4 experiments on the Rätsch benchmarks and write them to ``out_dir``.",
    outputs="Receives ``kernel.csv`` (one row per data set, partition and method of the "
    "comparison; see :func:`split_rows`), ``kernel_trace.csv`` and ``kernel_trace.png`` "
    "(Figure 1) and ``kernel_kmax.csv`` (Table 4); the files of an experiment not run are not "
    "written.",
    methods_text='(the methods of the comparison, ``"trace"`` for Figure 1 and ``"kmax"`` for '
    "Table 4)",
    returns="pandas.DataFrame\n    The rows of ``kernel.csv`` (empty when no method of the "
    "comparison is run).",
)


def _report(results, traces, kmax, protocol, benchmarks, *, quick, seed, run_line) -> str:
    sections = [
        "# Rätsch benchmarks: Bayesian generalized kernel models (Zhang et al. 2010, section 4)",
        _protocol_text(protocol, benchmarks, quick=quick, seed=seed),
        run_line,
    ]
    if not results.empty:
        labels = {method: METHOD_LABELS[method] for method in _present(results, COMPARED)}
        sections += [
            "## Test error (%) against Table 5",
            "Mean (sd) over the partitions. The paper's SVM and IVM columns are cited from Zhu "
            "& Hastie (2005); our SVM is tuned by cross-validation here, and the GP "
            "classifier (ML-II) stands in for the IVM, a sparse approximation to it.",
            markdown_table(table_5(results)),
            *filter(None, [unconverged_note(results, labels, "partitions")]),
        ]
        if _present(results, ("gibbs", "vb", "rj")):
            sections += [
                "## FBGKM against BGKM (the layout of Tables 2 and 3)",
                "The paper compares them on other data sets (Table 2: FBGKM about as accurate "
                "as BGKM and 1.2 to 2.2 times faster); BGKM by VB is not in the paper. Time: "
                "mean seconds per fit.",
                markdown_table(sampler_table(results)),
            ]
        sections += [
            "## Time per fit",
            f"Mean seconds per fit. The paper ran {PAPER_MACHINE} and "
            "gives no times for these data sets; the nearest is Table 3's NewsGroups row with "
            "n = 400 training points (893 features, k_max = 200): FBGKM "
            f"{PAPER_SECONDS['rj']:,.0f} s, BGKM {PAPER_SECONDS['gibbs']:,.0f} s per fit, "
            "10,000 sweeps each. With several workers the fits share the machine.",
            markdown_table(timing_table(results)),
            "Per-fit details (SVM: its tuned C and gamma; FBGKM: mean active vectors, "
            "acceptance rate of the moves) are in `kernel.csv`.",
        ]
    if traces is not None:
        sections += [
            "## Active vectors over the sweeps (Figure 1)",
            f"One FBGKM chain per data set on its first partition, {protocol.trace_sweeps} "
            f"sweeps from the start, k_max = {protocol.k_max} (dashed). The paper shows "
            "BCI, Digit1, Letters and NewsGroups.",
            markdown_table(_trace_summary(traces)),
            "![Active vectors over the sweeps](kernel_trace.png)",
        ]
    if kmax is not None:
        sections += [
            f"## Sensitivity to k_max on {protocol.kmax_dataset} (Table 4)",
            "FBGKM with smaller k_max on the comparison's partitions; the row of the "
            "comparison's k_max comes from the comparison, when it ran there.",
            markdown_table(kmax_table(kmax, results, protocol.kmax_dataset)),
            "The paper's Table 4 (NewsGroups, n = 800): error (%) and seconds per fit.",
            markdown_table(_paper_table_4()),
        ]
    return "\n\n".join(sections) + "\n"


def _trace_summary(traces: pd.DataFrame) -> pd.DataFrame:
    """Per chain: active vectors at the first sweep, and over the second half of the sweeps
    their mean, range and the share of sweeps where the number changed.
    """
    rows = []
    for name, trace in traces.groupby("dataset", sort=False):
        counts = trace.sort_values("sweep")["n_active"].to_numpy()
        later = counts[counts.size // 2 :]
        rows.append(
            {
                "data set": name,
                "sweeps": counts.size,
                "first sweep": int(counts[0]),
                "second half: mean": later.mean(),
                "min": int(later.min()),
                "max": int(later.max()),
                "share of sweeps that change it": float(np.mean(np.diff(later) != 0)),
            }
        )
    return pd.DataFrame(rows)


def _paper_table_4() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"k_max": k_max, "err": f"{err:.2f} ({sd:.2f})", "time (s)": seconds}
            for k_max, (err, sd, seconds) in PAPER_TABLE_4.items()
        ]
    )


def _protocol_text(protocol: Protocol, benchmarks, *, quick: bool, seed: int) -> str:
    sizes = []
    for name in benchmarks:
        _, y, bundled = load_benchmark(name)
        n_train = protocol.n_train or bundled[0][0].size
        n_test = protocol.n_test or y.size - bundled[0][0].size
        drawn = max(protocol.n_splits - len(bundled), 0)
        sizes.append(
            f"{name}: {n_train} training and {n_test} test rows, "
            f"{min(protocol.n_splits, len(bundled))} bundled and {drawn} drawn partitions"
        )
    svm_C, svm_gamma = protocol.svm_log2_C, protocol.svm_log2_gamma
    return (
        f"{'Quick smoke-test version' if quick else 'Protocol of the paper'} (seed {seed}): "
        f"{protocol.n_splits} partitions of each data set ({'; '.join(sizes)}); Rätsch's "
        "bundled realisations come first, the others are random partitions of the same "
        "sizes. Kernel models: RBF kernel exp(-||x - x'||^2 / theta^2), theta the mean "
        "distance between training points; probit link; a_eta = 1, b_eta = 0.1, a_g = 4, "
        f"b_g = 0.1, a_alpha = b_alpha = 1; samplers: {protocol.sweeps:,} sweeps, "
        f"{protocol.tune:,} burn-in, every {protocol.thin} kept ({protocol.draws:,} draws), "
        f"one chain; FBGKM k_max = {protocol.k_max} (at most the training size). BGKM: "
        "every vector active, by Gibbs sampling or VB. Prediction by averaging the class "
        "probabilities of the kept draws (section 3.3). SVM: LIBSVM C-SVC with an RBF "
        f"kernel, C = 2^{svm_C[0]} ... 2^{svm_C[-1]} and gamma = 2^{svm_gamma[0]} ... "
        f"2^{svm_gamma[-1]} ({len(svm_C)} x {len(svm_gamma)}) chosen by "
        f"{protocol.svm_folds}-fold cross-validation. GPC: scikit-learn's Gaussian process "
        "classifier (Laplace), amplitude x RBF kernel started at theta, its hyperparameters "
        f"maximising the marginal likelihood ({protocol.gpc_restarts} random restarts)."
    )
