"""Wenzel, Galy-Fajou, Deutsch & Kloft (2017), "Bayesian nonlinear support vector machines for
big data", section 5: Table 1, Figures 1-3 and the SUSY-sized experiment of section 5.2.

The model is :class:`~bayesvm.models.GPSVM`: a Gaussian process prior on the SVM's latent
function with Polson & Scott's hinge pseudo-likelihood, RBF kernel
``variance * exp(-||x - x'||^2 / lengthscale^2)``. Experiments (:data:`METHODS`):

* Table 1 (:func:`fold_rows`): 10-fold cross-validation over the pooled rows of Rätsch's
  breast_cancer, heart, banana and waveform (:data:`DATASETS`; exact duplicate rows dropped,
  which gives the paper's n = 263 for breast cancer), error rate and Brier score on each
  held-out fold and seconds per fit, for the methods of :data:`COMPARED`:

  - ``"svi"``: S-BSVM, stochastic variational inference with inducing points (Algorithm 1):
    20% of the training rows as inducing points, 100 for waveform (and banana), chosen by
    k-means; minibatches of 10;
  - ``"vb"``: B-BSVM, batch coordinate ascent (section 4.1): the full GP where the training
    part has at most ``full_gp_max_n`` rows, otherwise the inducing points of S-BSVM;
  - ``"ecm"``: Henao et al.'s expectation conditional maximisation on the full GP
    (``bayesvm.fit(model, "em")``), only up to ``full_gp_max_n`` rows (O(n^3) per iteration);
  - ``"gpc"``: scikit-learn's Gaussian process classifier (Laplace) with the same kernel,
    hyperparameters fixed, up to ``gpc_max_n`` rows;
  - ``"svm"``: LIBSVM's C-SVC (scikit-learn's ``SVC``) with the same RBF kernel
    (``gamma = lengthscale**-2``), ``C`` chosen by an inner cross-validation, then refitted
    with Platt scaling for the Brier score.

  The kernel is fixed per data set (section 5.1, "RBF kernel with fixed parameters for all
  methods"): unit variance and the lengthscale learned once by ML-II on the whole data set
  (:func:`lengthscale_rows`; S-BSVM with ``learn_hyperparameters=True``, section 4.3), for
  waveform the paper's 5.0 (section 5.3).
* ``"runtime"`` (Figure 1, :func:`runtime_rows`): held-out error on waveform's first fold
  against training time: S-BSVM stopped after increasing numbers of steps, B-BSVM after
  increasing numbers of iterations, GPC and the SVM trained on increasing subsets.
* ``"mlii"`` (Figure 2, :func:`mlii_rows`): on heart, the 10-fold validation error and Brier
  score of S-BSVM over a log grid of lengthscales, beside the ML-II lengthscale.
* ``"inducing"`` (Figure 3, :func:`inducing_rows`): error and time of S-BSVM against the
  number of inducing points, k-means against a random subset, on waveform (the paper uses
  USPS 3-vs-5, which is not bundled).
* ``"bigdata"`` (section 5.2, :func:`bigdata_rows`): a simulated SUSY-sized problem, 5,000,000
  rows of 18 features with a nonlinear Bayes-optimal boundary (:func:`simulated_susy`),
  written to disk chunk by chunk as a Dask ``npy`` stack and fitted from it by
  :meth:`GPSVM.from_dask` with 64 inducing points, minibatches of 100 and one pass; AUC and
  Brier score on held-out rows, rows per second and peak memory.

:func:`run` is the entry point of ``bayesvm reproduce gpsvm``.
"""

from __future__ import annotations

import time
from functools import cache

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import bayesvm
from bayesvm.case_studies.gpsvm import figures as gpsvm_figures
from bayesvm.case_studies.gpsvm.baselines import (
    fit_platt_svm,
    gp_classifier,
    mlii_fit,
    platt_svm,
    sklearn_seed,
)
from bayesvm.case_studies.gpsvm.big_data import (
    PAPER_BIGDATA,
    bigdata_rows,
    bigdata_table,
    simulated_susy,
    write_simulated_susy,
)
from bayesvm.case_studies.gpsvm.protocol import (
    _FITS,
    _INDUCING,
    _LENGTHSCALE,
    _MLII,
    _RUNTIME,
    COMPARED,
    DATASETS,
    DEFAULT_SEED,
    EXPERIMENTS,
    METHOD_LABELS,
    METHODS,
    OUTPUT_FILES,
    PAPER_LENGTHSCALES,
    PAPER_MACHINE,
    PAPER_N,
    PAPER_PROTOCOL,
    PAPER_TABLE_1,
    QUICK_PROTOCOL,
    Protocol,
    cv_folds,
    folds_of,
    inducing_count,
    pooled_rows,
)
from bayesvm.case_studies.gpsvm.report import (
    gpsvm_report,
    inducing_table,
    mlii_summary,
    runtime_summary,
    table_1,
    timing_table,
    validation_at,
)
from bayesvm.case_studies.metrics import brier_score
from bayesvm.case_studies.runner import Task, task_seed, trust_notes
from bayesvm.case_studies.study import Study, StudyRun, keyed_task
from bayesvm.data import load_benchmark
from bayesvm.files import save_figure
from bayesvm.models import GPSVM

__all__ = [
    "DATASETS",
    "COMPARED",
    "EXPERIMENTS",
    "METHODS",
    "METHOD_LABELS",
    "PAPER_TABLE_1",
    "PAPER_N",
    "PAPER_LENGTHSCALES",
    "PAPER_BIGDATA",
    "PAPER_MACHINE",
    "OUTPUT_FILES",
    "Protocol",
    "PAPER_PROTOCOL",
    "QUICK_PROTOCOL",
    "pooled_rows",
    "cv_folds",
    "brier_score",
    "inducing_count",
    "gp_classifier",
    "platt_svm",
    "fit_platt_svm",
    "lengthscale_rows",
    "fold_rows",
    "runtime_rows",
    "mlii_rows",
    "inducing_rows",
    "simulated_susy",
    "write_simulated_susy",
    "bigdata_rows",
    "table_1",
    "timing_table",
    "mlii_summary",
    "validation_at",
    "inducing_table",
    "runtime_summary",
    "bigdata_table",
    "STUDY",
    "run",
]


def lengthscale_rows(*, dataset: str, seed: int, protocol: Protocol) -> list[dict]:
    """The kernel of ``dataset`` in Table 1: ML-II (section 4.3) of the lengthscale once on
    all its pooled rows, S-BSVM with its inducing points and minibatches, one hyperparameter
    step every ``protocol.mlii_hyper_every`` variational steps; where the paper states a
    lengthscale (:data:`PAPER_LENGTHSCALES`) that one is used, and ML-II's is kept for
    comparison. The variance is 1 throughout: the hinge pseudo-likelihood is not normalised
    and its bound rises without end in the variance (:func:`bayesvm.vb.fit_svi`).

    Returns
    -------
    list of dict
        One row: ``lengthscale`` and ``variance`` used, ``source`` (``"ML-II"`` or
        ``"paper"``), ``mlii_lengthscale``, ``mlii_seconds``, ``n_iter``, ``converged``,
        ``warnings``.
    """
    X, y = pooled_rows(dataset, protocol, seed)
    rng = np.random.default_rng(task_seed(seed, _LENGTHSCALE, DATASETS.index(dataset)))
    with trust_notes() as notes, threadpool_limits(limits=1):
        fitted, model = mlii_fit(X, y, inducing_count(dataset, y.size, protocol), protocol, rng)
    paper = PAPER_LENGTHSCALES.get(dataset)
    return [
        {
            "lengthscale": model.lengthscale if paper is None else paper,
            "variance": model.variance,
            "source": "ML-II" if paper is None else "paper",
            "mlii_lengthscale": model.lengthscale,
            "mlii_seconds": fitted.runtime_s,
            "n_iter": fitted.n_iter,
            "converged": fitted.converged,
            "warnings": " | ".join(notes),
        }
    ]


def _sbsvm(X, y, protocol: Protocol, rng, **model_options):
    """S-BSVM with the protocol's minibatches and steps on ``X, y``; ``model_options`` go to
    :meth:`GPSVM.from_arrays`. Returns the fit and the seconds spent building the model
    (choosing its inducing points).
    """
    start = time.perf_counter()
    model = GPSVM.from_arrays(X, y, seed=sklearn_seed(rng), **model_options)
    build_seconds = time.perf_counter() - start
    fitted = bayesvm.fit(
        model,
        "svi",
        batch_size=protocol.batch_size,
        **_max_iter(protocol.svi_max_iter),
        seed=rng,
        progressbar=False,
    )
    return fitted, build_seconds


def _max_iter(max_iter: int | None) -> dict:
    return {} if max_iter is None else {"max_iter": max_iter}


def _scores(y_test, predicted, probability_positive) -> dict:
    return {
        "error": float(np.mean(np.asarray(predicted) != y_test)),
        "brier": brier_score(y_test, probability_positive),
    }


def _bayesian_row(fitted, X_test, y_test, inducing: str) -> dict:
    return {
        **_scores(y_test, fitted.predict(X_test), fitted.predict_proba(X_test)[:, 1]),
        "seconds": fitted.runtime_s,
        "inducing": inducing,
        "n_iter": fitted.n_iter,
        "converged": fitted.converged,
    }


def _fit_compared(method, dataset, X, y, X_test, y_test, protocol, rng, kernel) -> dict | None:
    """One method of Table 1 on one fold: its row, or None where it is skipped for size."""
    n_train = y.size
    m = inducing_count(dataset, n_train, protocol)
    full = n_train <= protocol.full_gp_max_n
    if method == "svi":
        fitted, _ = _sbsvm(X, y, protocol, rng, **kernel, inducing=m)
        return _bayesian_row(fitted, X_test, y_test, str(m))
    if method == "vb" and not full:
        model = GPSVM.from_arrays(X, y, **kernel, inducing=m, seed=sklearn_seed(rng))
        fitted = bayesvm.fit(model, "vb", seed=rng)
        return _bayesian_row(fitted, X_test, y_test, str(m))
    if method in ("vb", "ecm"):
        if not full:
            return None
        model = GPSVM.from_arrays(X, y, **kernel)
        fitted = bayesvm.fit(model, "vb" if method == "vb" else "em", seed=rng)
        return _bayesian_row(fitted, X_test, y_test, "full")
    if method == "gpc":
        if n_train > protocol.gpc_max_n:
            return None
        start = time.perf_counter()
        gpc = gp_classifier(**kernel).fit(X, y)
        seconds = time.perf_counter() - start
        row = _scores(y_test, gpc.predict(X_test), gpc.predict_proba(X_test)[:, 1])
        return {**row, "seconds": seconds, "inducing": "full"}
    if method == "svm":
        svm, platt, seconds, tuning_seconds = fit_platt_svm(
            X,
            y,
            lengthscale=kernel["lengthscale"],
            log2_C=protocol.svm_log2_C,
            folds=protocol.svm_folds,
            seed=rng,
        )
        row = _scores(y_test, svm.predict(X_test), platt.predict_proba(X_test)[:, 1])
        return {**row, "seconds": seconds, "tuning_seconds": tuning_seconds, "C": svm.C}
    raise ValueError(f"method must be one of {COMPARED}; got {method!r}")


def fold_rows(
    *,
    dataset: str,
    split: int,
    seed: int,
    methods,
    protocol: Protocol,
    lengthscale: float,
    variance: float,
) -> list[dict]:
    """Table 1 on fold ``split`` of ``dataset``: fit each method of :data:`COMPARED` among
    ``methods`` to the other folds and score it on this one, one core per fit (as the paper).

    Each method draws from its own stream spawned from ``(seed, 3, data set, split)``.

    Returns
    -------
    list of dict
        One row per method fitted (methods skipped for size give none): ``method``;
        ``error`` (a fraction, as the paper's) and ``brier``; ``seconds``, the wall time of
        the fit (the SVM: its refit with Platt scaling; ``tuning_seconds`` its
        cross-validation over ``C``, chosen ``C`` in ``C``); ``inducing``, the inducing points
        (``"full"`` for the full GP); ``n_iter``, ``converged`` of the Bayesian fits;
        ``lengthscale``, ``variance``, ``n_train``, ``n_test`` and ``warnings``.
    """
    X, y, folds = folds_of(dataset, protocol, seed)
    train, test = folds[split]
    streams = task_seed(seed, _FITS, DATASETS.index(dataset), split).spawn(len(COMPARED))
    rngs = dict(zip(COMPARED, map(np.random.default_rng, streams), strict=True))
    kernel = {"lengthscale": lengthscale, "variance": variance}
    rows = []
    for method in (method for method in COMPARED if method in methods):
        with trust_notes() as notes, threadpool_limits(limits=1):
            row = _fit_compared(
                method,
                dataset,
                X[train],
                y[train],
                X[test],
                y[test],
                protocol,
                rngs[method],
                kernel,
            )
        if row is not None:
            rows.append({"method": method, **row, **kernel, "warnings": " | ".join(notes)})
    sizes = {"n_train": train.size, "n_test": test.size}
    return [{**row, **sizes} for row in rows]


def runtime_rows(
    *, method: str, budget: int, seed: int, protocol: Protocol, lengthscale: float, variance: float
) -> list[dict]:
    """Figure 1 (section 5.3): one fit of ``method`` on waveform's first training fold under
    ``budget``, scored on the held-out fold: S-BSVM (``"svi"``) stopped after ``budget``
    steps, B-BSVM (``"vb"``, with S-BSVM's inducing points) after ``budget`` iterations, GPC
    and the SVM (``C = 1``, Platt scaling) trained on a random ``budget`` of the training
    rows. One core per fit.

    Returns
    -------
    list of dict
        One row: ``seconds``, ``error``, ``brier``, ``n_train``.
    """
    X, y, folds = folds_of("waveform", protocol, seed)
    train, test = folds[0]
    rng = np.random.default_rng(task_seed(seed, _RUNTIME, COMPARED.index(method), budget))
    _warm_up(method)
    kernel = {"lengthscale": lengthscale, "variance": variance}
    with trust_notes(), threadpool_limits(limits=1):
        if method in ("svi", "vb"):
            m = inducing_count("waveform", train.size, protocol)
            model = GPSVM.from_arrays(
                X[train], y[train], **kernel, inducing=m, seed=sklearn_seed(rng)
            )
            options = {"batch_size": protocol.batch_size, "progressbar": False}
            fitted = bayesvm.fit(
                model,
                method,
                max_iter=budget,
                tol=0.0,
                seed=rng,
                **(options if method == "svi" else {}),
            )
            seconds, classifier = fitted.runtime_s, fitted
        else:
            subset = np.sort(rng.choice(train, size=min(budget, train.size), replace=False))
            classifier = (
                gp_classifier(**kernel) if method == "gpc" else platt_svm(1.0, lengthscale, rng)
            )
            start = time.perf_counter()
            classifier.fit(X[subset], y[subset])
            seconds = time.perf_counter() - start
            train = subset
    scores = _scores(y[test], classifier.predict(X[test]), classifier.predict_proba(X[test])[:, 1])
    return [{"seconds": seconds, **scores, "n_train": train.size}]


@cache
def _warm_up(method: str) -> None:
    """Fit ``method`` once to 40 rows of waveform in this process, so that one-off costs (lazy
    imports, first calls) are not counted in the times of Figure 1's small budgets.
    """
    X, y, _ = load_benchmark("waveform")
    X, y = X[:40], y[:40]
    with trust_notes(), threadpool_limits(limits=1):
        if method in ("svi", "vb"):
            model = GPSVM.from_arrays(X, y, lengthscale=5.0, inducing=8, seed=0)
            options = {"batch_size": 10, "progressbar": False} if method == "svi" else {}
            bayesvm.fit(model, method, max_iter=5, seed=0, **options).predict_proba(X)
        else:
            classifier = gp_classifier(5.0, 1.0) if method == "gpc" else platt_svm(1.0, 5.0, 0)
            classifier.fit(X, y).predict_proba(X)


def _runtime_budgets(protocol: Protocol) -> dict[str, tuple[int, ...]]:
    rows = protocol.runtime_train_rows
    return {
        "svi": protocol.runtime_svi_steps,
        "vb": protocol.runtime_vb_iterations,
        "gpc": rows,
        "svm": rows,
    }


def mlii_rows(
    *, lengthscale_index: int, seed: int, protocol: Protocol, variance: float
) -> list[dict]:
    """Figure 2 (section 5.4): S-BSVM with the ``lengthscale_index``-th lengthscale of
    ``protocol.mlii_grid`` (and ``variance``) on each fold of
    ``protocol.mlii_dataset``, scored on the held-out fold.

    Returns
    -------
    list of dict
        One row per fold: ``lengthscale``, ``fold``, ``error``, ``brier``, ``seconds``.
    """
    dataset = protocol.mlii_dataset
    X, y, folds = folds_of(dataset, protocol, seed)
    lengthscale = float(_mlii_grid(protocol)[lengthscale_index])
    rng = np.random.default_rng(task_seed(seed, _MLII, lengthscale_index))
    rows = []
    for fold, (train, test) in enumerate(folds):
        m = inducing_count(dataset, train.size, protocol)
        with trust_notes(), threadpool_limits(limits=1):
            fitted, _ = _sbsvm(
                X[train], y[train], protocol, rng, lengthscale=lengthscale, variance=variance,
                inducing=m,
            )  # fmt: skip
        row = _bayesian_row(fitted, X[test], y[test], str(m))
        rows.append({"lengthscale": lengthscale, "fold": fold, **row})
    return rows


def _mlii_grid(protocol: Protocol) -> np.ndarray:
    low, high, points = protocol.mlii_grid
    return np.geomspace(low, high, int(points))


def inducing_rows(
    *, inducing: int, inducing_method: str, seed: int, protocol: Protocol, **kernel
) -> list[dict]:
    """Figure 3 (section 5.5): S-BSVM on waveform with ``inducing`` points chosen by
    ``inducing_method`` (``"kmeans"`` or ``"random"``) on the first
    ``protocol.inducing_folds`` folds, scored on each held-out fold.

    Returns
    -------
    list of dict
        One row per fold: ``fold``, ``error``, ``brier``, ``seconds`` (the fit),
        ``select_seconds`` (building the model: choosing the inducing points), ``n_iter``.
    """
    X, y, folds = folds_of("waveform", protocol, seed)
    rng = np.random.default_rng(
        task_seed(seed, _INDUCING, inducing, ("kmeans", "random").index(inducing_method))
    )
    rows = []
    for fold, (train, test) in enumerate(folds[: protocol.inducing_folds]):
        with trust_notes(), threadpool_limits(limits=1):
            fitted, select_seconds = _sbsvm(
                X[train], y[train], protocol, rng, **kernel,
                inducing=min(inducing, train.size), inducing_method=inducing_method,
            )  # fmt: skip
        row = _bayesian_row(fitted, X[test], y[test], str(min(inducing, train.size)))
        del row["inducing"]  # the task's key holds the number asked for
        rows.append({"fold": fold, **row, "select_seconds": select_seconds})
    return rows


def _kernel_datasets(methods, benchmarks, protocol: Protocol) -> list[str]:
    """The data sets whose kernel the requested experiments need, in order."""
    needed = [*(benchmarks if any(m in COMPARED for m in methods) else ())]
    if "runtime" in methods or "inducing" in methods:
        needed.append("waveform")
    if "mlii" in methods:
        needed.append(protocol.mlii_dataset)
    return list(dict.fromkeys(needed))


STUDY = Study("gpsvm", METHODS, PAPER_PROTOCOL, QUICK_PROTOCOL, DEFAULT_SEED, benchmarks=DATASETS)


def _execute(run: StudyRun) -> tuple[pd.DataFrame, str]:
    methods, benchmarks, protocol, out_dir = run.methods, run.benchmarks, run.protocol, run.out_dir
    compared = [method for method in methods if method in COMPARED]
    csv_runs = {
        "gpsvm_lengthscale.csv": bool(_kernel_datasets(methods, benchmarks, protocol)),
        "gpsvm.csv": bool(compared),
        **{f"gpsvm_{experiment}.csv": experiment in methods for experiment in EXPERIMENTS},
    }
    run.check_resume(*(name for name, runs in csv_runs.items() if runs))
    common = {"seed": run.seed, "protocol": protocol}
    kernels = pd.DataFrame(columns=["dataset", "lengthscale", "variance"])
    if csv_runs["gpsvm_lengthscale.csv"]:
        kernels = run.run_tasks(
            [
                keyed_task({"dataset": name}, lengthscale_rows, **common)
                for name in _kernel_datasets(methods, benchmarks, protocol)
            ],
            "gpsvm_lengthscale.csv",
            "gpsvm kernels (ML-II)",
        )
    kernel_of = {
        row.dataset: {"lengthscale": float(row.lengthscale), "variance": float(row.variance)}
        for row in kernels.itertuples()
    }
    results = pd.DataFrame(columns=["dataset", "split", "method", "error", "brier", "seconds"])
    if compared:
        results = run.run_tasks(
            [
                keyed_task(
                    {"dataset": name, "split": split},
                    fold_rows,
                    methods=compared,
                    **common,
                    **kernel_of[name],
                )
                for name in benchmarks
                for split in range(protocol.n_folds)
            ],
            "gpsvm.csv",
            "gpsvm Table 1 folds",
        )
    outputs = {}
    if "runtime" in methods:
        outputs["runtime"] = run.run_tasks(
            [
                keyed_task(
                    {"method": method, "budget": budget},
                    runtime_rows,
                    **common,
                    **kernel_of["waveform"],
                )
                for method, budgets in _runtime_budgets(protocol).items()
                for budget in budgets
            ],
            "gpsvm_runtime.csv",
            "gpsvm Figure 1 budgets",
        )
        save_figure(
            gpsvm_figures.runtime_figure(outputs["runtime"], METHOD_LABELS),
            out_dir / "gpsvm_runtime.png",
            dpi=120,
            bbox_inches="tight",
        )
    if "mlii" in methods:
        mlii_kernel = kernel_of[protocol.mlii_dataset]
        outputs["mlii"] = run.run_tasks(
            [
                keyed_task(
                    {"lengthscale_index": index},
                    mlii_rows,
                    **common,
                    variance=mlii_kernel["variance"],
                )
                for index in range(len(_mlii_grid(protocol)))
            ],
            "gpsvm_mlii.csv",
            "gpsvm Figure 2 grid",
        )
        learned = float(kernels.set_index("dataset").loc[protocol.mlii_dataset, "mlii_lengthscale"])
        figure = gpsvm_figures.mlii_figure(
            outputs["mlii"],
            learned,
            validation_at(outputs["mlii"], learned),
            protocol.mlii_dataset,
        )
        save_figure(figure, out_dir / "gpsvm_mlii.png", dpi=120, bbox_inches="tight")
    if "inducing" in methods:
        outputs["inducing"] = run.run_tasks(
            [
                keyed_task(
                    {"inducing": count, "inducing_method": selection},
                    inducing_rows,
                    **common,
                    **kernel_of["waveform"],
                )
                for selection in ("kmeans", "random")
                for count in protocol.inducing_counts
            ],
            "gpsvm_inducing.csv",
            "gpsvm Figure 3 inducing points",
        )
        save_figure(
            gpsvm_figures.inducing_figure(outputs["inducing"]),
            out_dir / "gpsvm_inducing.png",
            dpi=120,
            bbox_inches="tight",
        )
    if "bigdata" in methods:
        outputs["bigdata"] = run.run_tasks(
            [
                Task(
                    key={"rows": protocol.bigdata_rows},
                    function=bigdata_rows,
                    kwargs={
                        "out_dir": str(out_dir.resolve()),
                        "fresh_process": run.scheduler is None,
                        **common,
                    },
                )
            ],
            "gpsvm_bigdata.csv",
            "gpsvm SUSY-sized data",
        )
    report = gpsvm_report(
        kernels,
        results,
        outputs,
        protocol,
        methods,
        benchmarks,
        quick=run.quick,
        seed=run.seed,
        run_line=run.run_line(),
    )
    return results, report


run = STUDY.entry_point(
    _execute,
    summary="Run the section 5 experiments and write them to ``out_dir``.",
    outputs="Receives ``gpsvm_lengthscale.csv`` (the kernel of each data set), ``gpsvm.csv`` "
    "(Table 1: one row per data set, fold and method; see :func:`fold_rows`), "
    "``gpsvm_runtime.csv`` / ``.png`` (Figure 1), ``gpsvm_mlii.csv`` / ``.png`` (Figure 2), "
    "``gpsvm_inducing.csv`` / ``.png`` (Figure 3), ``gpsvm_bigdata.csv`` (section 5.2) and "
    "the simulated data in ``gpsvm_bigdata_data/`` (kept by ``resume``); the files of an "
    "experiment not run are not written.",
    scheduler_text="The big-data experiment then writes and reads its data in ``out_dir`` "
    "from a worker, which must see the same file system.",
    methods_text="(the methods of Table 1 and the experiments ``EXPERIMENTS``)",
    returns="pandas.DataFrame\n    The rows of ``gpsvm.csv`` (empty when no method of Table 1 is "
    "run).",
)
