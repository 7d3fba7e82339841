"""Luts-Ormerod (2014) section 4.2: penalty parameter inference on simulated data (Figure 1).

For each cell ``n x d`` with ``n in {100, 200, 500}`` and ``d in {10, 50, 100}``, 200 training
sets are drawn as ``beta ~ N(0, 1)``, ``u ~ N(0, I_d)``, ``d_i ~ N(0, I_d)``,
``q_i ~ Bernoulli(expit(beta + d_i^T u))``, ``y_i = 2 q_i - 1``, each with 1000 independent
test points from the same ``beta`` and ``u``. Three methods are compared by their balanced
error rate (BER) on the test points and by their fitting time:

* ``"svm"``: the default SVM of section 4.1 (:func:`~bayesvm.case_studies.default_svm.
  fit_default_svm`);
* ``"vb"``: :meth:`~bayesvm.models.MixedSVM.penalized` fitted by Algorithm 2 (section 3.1);
* ``"gibbs"``: the same model by block Gibbs sampling (appendix A), 5000 burn-in and 5000
  kept draws, one chain.

Classification uses the posterior mean of the coefficients (section 4). :func:`run` is the
entry point of ``bayesvm reproduce simulated``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy.special import expit

import bayesvm
from bayesvm.case_studies.default_svm import fit_default_svm
from bayesvm.case_studies.metrics import balanced_error_rate, predicts_single_class
from bayesvm.case_studies.reporting import (
    PAPER_MACHINE,
    ber_boxplot,
    breakdown_note,
    default_svm_description,
    markdown_table,
    paper_timing_table,
    single_class_counts,
    single_class_note,
    unconverged_note,
)
from bayesvm.case_studies.runner import task_seed, trust_notes
from bayesvm.case_studies.study import Study, StudyRun, keyed_task
from bayesvm.exceptions import NumericalBreakdownError
from bayesvm.files import save_figure, write_csv
from bayesvm.models import MixedSVM

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "PAPER_CELL",
    "PAPER_SECONDS",
    "Protocol",
    "PAPER_PROTOCOL",
    "QUICK_PROTOCOL",
    "simulate_dataset",
    "replicate_rows",
    "timing_table",
    "STUDY",
    "run",
]

METHODS = ("svm", "vb", "gibbs")
METHOD_LABELS = {"svm": "Default SVM", "vb": "VB", "gibbs": "MCMC"}
#: The cell whose mean fitting times section 4.2 publishes, and those times in seconds.
PAPER_CELL = (200, 10)
PAPER_SECONDS = {"svm": 571.75, "vb": 1.68, "gibbs": 82.31}
DEFAULT_SEED = 2014
OUTPUT_FILES = (
    "simulated.csv",
    "simulated.settings.json",
    "simulated_ber.png",
    "timing.csv",
    "report.md",
)


@dataclass(frozen=True)
class Protocol:
    """Sizes of the experiment.

    Attributes
    ----------
    sample_sizes, dimensions : tuple of int
        The cells ``n x d``.
    n_datasets : int
        Training sets per cell.
    n_test : int
        Test points per training set.
    n_holdouts : int
        Hold-out splits scoring each ``alpha`` of the default SVM's grids.
    gibbs_tune, gibbs_draws : int
        Burn-in and kept draws of the one Gibbs chain.
    """

    sample_sizes: tuple[int, ...] = (100, 200, 500)
    dimensions: tuple[int, ...] = (10, 50, 100)
    n_datasets: int = 200
    n_test: int = 1000
    n_holdouts: int = 100
    gibbs_tune: int = 5000
    gibbs_draws: int = 5000


#: Section 4.2 as published.
PAPER_PROTOCOL = Protocol()
#: A smoke test: one cell, 3 data sets, 5 hold-outs, 500 + 500 Gibbs iterations.
QUICK_PROTOCOL = Protocol(
    sample_sizes=(100,),
    dimensions=(10,),
    n_datasets=3,
    n_holdouts=5,
    gibbs_tune=500,
    gibbs_draws=500,
)


def simulate_dataset(n: int, d: int, n_test: int, rng: np.random.Generator):
    """One training set of size ``n`` and its test set of size ``n_test`` (section 4.2).

    Returns
    -------
    D, y, D_test, y_test : ndarray
        Inputs of shapes ``(n, d)`` and ``(n_test, d)``; labels coded -1/+1.
    """
    beta = rng.standard_normal()
    u = rng.standard_normal(d)
    inputs = rng.standard_normal((n + n_test, d))
    labels = np.where(rng.random(n + n_test) < expit(beta + inputs @ u), 1, -1)
    return inputs[:n], labels[:n], inputs[n:], labels[n:]


def replicate_rows(
    *, n: int, d: int, replicate: int, seed: int, methods, protocol: Protocol
) -> list[dict]:
    """Simulate replicate ``replicate`` of cell ``n x d`` and fit each of ``methods`` to it.

    Data and every method draw from streams spawned from ``(seed, n, d, replicate)``, so a
    replicate's results depend neither on the other replicates nor on ``methods``.

    Returns
    -------
    list of dict
        One row per method: ``method``, ``ber`` (on the test set), ``seconds`` (wall time
        of the fit; for the default SVM tuning included), ``alpha`` (the default SVM's
        tuned penalty; NaN for the Bayesian fits, which infer it), ``single_class``
        (whether it predicted one class for every test point), ``converged`` (the Bayesian
        fit passed its checks, :attr:`bayesvm.Fit.converged`; None for the default SVM) and
        ``warnings`` (what :func:`~bayesvm.case_studies.runner.trust_notes` collected). A
        Bayesian fit that breaks down numerically (:class:`~bayesvm.NumericalBreakdownError`)
        leaves a row with its error in ``warnings``, ``converged`` False and no ``ber``,
        ``seconds`` or ``alpha``.
    """
    data_seed, svm_seed, vb_seed, gibbs_seed = task_seed(seed, n, d, replicate).spawn(4)
    D, y, D_test, y_test = simulate_dataset(n, d, protocol.n_test, np.random.default_rng(data_seed))
    options = {
        "vb": {"seed": vb_seed},
        "gibbs": {
            "draws": protocol.gibbs_draws,
            "tune": protocol.gibbs_tune,
            "chains": 1,
            "seed": gibbs_seed,
            "progressbar": False,
        },
    }
    rows = []
    for method in methods:
        with trust_notes() as notes:  # recorded in the row, not printed per data set
            if method == "svm":
                fitted = fit_default_svm(D, y, n_holdouts=protocol.n_holdouts, seed=svm_seed)
            else:
                try:
                    fitted = bayesvm.fit(MixedSVM.penalized(D, y), method=method, **options[method])
                except NumericalBreakdownError as error:
                    # (nearly) separable classes leave sigma2_u to its heavy-tailed prior, which
                    # a chain can follow until f overflows: the data set keeps its row, no BER
                    notes.append(f"{type(error).__name__}: {error}")
                    fitted = None
        row = {"method": method, "ber": np.nan, "seconds": np.nan, "alpha": np.nan}
        row |= {"single_class": False, "converged": False, "warnings": " | ".join(notes)}
        if fitted is not None:
            predicted = fitted.predict(D_test)
            row |= {
                "ber": balanced_error_rate(y_test, predicted),
                "seconds": fitted.runtime_s,
                "alpha": fitted.alpha if method == "svm" else np.nan,
                "single_class": predicts_single_class(predicted),
                "converged": getattr(fitted, "converged", None),
            }
        rows.append(row)
    return rows


STUDY = Study(
    "simulated",
    METHODS,
    PAPER_PROTOCOL,
    QUICK_PROTOCOL,
    DEFAULT_SEED,
    n_datasets_field="n_datasets",
    n_datasets_text="Data sets per cell",
)


def _execute(run: StudyRun) -> tuple[pd.DataFrame, str]:
    protocol = run.protocol
    tasks = [
        keyed_task(
            {"n": n, "d": d, "replicate": replicate},
            replicate_rows,
            seed=run.seed,
            methods=run.methods,
            protocol=protocol,
        )
        for n in protocol.sample_sizes
        for d in protocol.dimensions
        for replicate in range(protocol.n_datasets)
    ]
    results = run.run_tasks(tasks, "simulated.csv", "simulated data sets")
    timing = timing_table(results)
    write_csv(timing, run.out_dir / "timing.csv", index=False)
    save_figure(_plot_ber(results, protocol), run.out_dir / "simulated_ber.png", dpi=120)
    report = _report(
        results, timing, protocol, quick=run.quick, seed=run.seed, run_line=run.run_line()
    )
    return results, report


run = STUDY.entry_point(
    _execute,
    summary="Run the section 4.2 experiment and write its results to ``out_dir``.",
    outputs="Receives ``simulated.csv`` (one row per data set and method), "
    "``simulated_ber.png`` (BER boxplots per cell, like Figure 1) and ``timing.csv`` "
    "(seconds per fit by cell and method, with the paper's published times).",
    methods_text='(``"svm"``, ``"vb"``, ``"gibbs"``)',
    returns="pandas.DataFrame\n    The rows of ``simulated.csv``: ``n, d, replicate, method, ber, "
    "seconds, alpha,\n    single_class, converged, warnings``.",
)


def timing_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and median seconds per fit by cell and method, with the paper's published mean.

    Returns
    -------
    pandas.DataFrame
        Columns ``n, d, method, fits`` (those that finished), ``mean_seconds,
        median_seconds, paper_seconds`` (the last only at :data:`PAPER_CELL`, else NaN).
    """
    timing = (
        results.groupby(["n", "d", "method"], sort=False)["seconds"]
        .agg(fits="count", mean_seconds="mean", median_seconds="median")
        .reset_index()
    )
    at_paper_cell = (timing["n"] == PAPER_CELL[0]) & (timing["d"] == PAPER_CELL[1])
    timing["paper_seconds"] = timing["method"].map(PAPER_SECONDS).where(at_paper_cell)
    return timing


def _plot_ber(results: pd.DataFrame, protocol: Protocol) -> Figure:
    methods = list(dict.fromkeys(results["method"]))
    rows, columns = protocol.sample_sizes, protocol.dimensions
    figure = Figure(
        figsize=(1.0 + max(4.0, 0.9 * len(methods)) * len(columns), 0.8 + 2.6 * len(rows))
    )
    axes = figure.subplots(len(rows), len(columns), squeeze=False, sharey=True)
    for row, n in enumerate(rows):
        for column, d in enumerate(columns):
            cell = results[(results["n"] == n) & (results["d"] == d)]
            ax = axes[row, column]
            ber_boxplot(ax, cell, {method: METHOD_LABELS[method] for method in methods})
            ax.set_title(f"n = {n}, d = {d}", fontsize=10)
            if column == 0:
                ax.set_ylabel("balanced error rate")
    figure.suptitle("Simulated data (Luts-Ormerod 2014, Figure 1)", fontsize=11)
    figure.tight_layout()
    return figure


def _report(results, timing, protocol, *, quick, seed, run_line) -> str:
    labels = {method: METHOD_LABELS[method] for method in dict.fromkeys(results["method"])}
    cells = set(zip(results["n"], results["d"], strict=True))
    ber = results.groupby(["n", "d", "method"], sort=False)["ber"].agg(["mean", "median"])
    ber_text = ber.apply(lambda row: f"{row['mean']:.3f} ({row['median']:.3f})", axis=1)
    ber_table = ber_text.unstack("method")[list(labels)].rename(columns=labels)
    single_class = single_class_counts(results, ["n", "d", "method"]).unstack("method")
    ber_table["single-class fits"] = single_class.apply(_named_counts, axis=1, labels=labels)
    seconds = timing.set_index(["n", "d", "method"])["mean_seconds"].unstack("method")
    seconds_table = seconds[list(labels)].rename(columns=labels).reset_index()
    return (
        "\n\n".join(
            [
                "# Simulated data: penalty parameter inference (Luts-Ormerod 2014, section 4.2)",
                _protocol_text(protocol, quick=quick, seed=seed),
                run_line,
                "## Balanced error rate on the test sets: mean (median)",
                "Single-class fits: data sets of the cell on which a method predicted one "
                "class for every test point.",
                markdown_table(ber_table.reset_index()),
                *filter(
                    None,
                    [
                        single_class_note(results, labels, "data sets"),
                        unconverged_note(results, labels, "data sets"),
                        breakdown_note(results, labels, "data sets"),
                    ],
                ),
                "## Mean seconds per fit",
                "Default SVM: tuning on both grids and the final fit. With several workers the "
                "fits share the machine, so a fit can take longer than it would alone.",
                markdown_table(seconds_table),
                f"## Timing against the paper at n = {PAPER_CELL[0]}, d = {PAPER_CELL[1]}",
                f"The paper's times are means on an {PAPER_MACHINE} (section 4)."
                + ("" if PAPER_CELL in cells else " This run did not include that cell."),
                markdown_table(_paper_comparison(timing, labels)),
                "![Balanced error rate by method and cell](simulated_ber.png)",
            ]
        )
        + "\n"
    )


def _named_counts(counts: pd.Series, labels: dict[str, str]) -> str:
    """``"Default SVM: 3, MCMC: 1"`` from counts by method, or ``"none"``."""
    named = [f"{labels[method]}: {counts[method]:.0f}" for method in labels if counts[method] > 0]
    return ", ".join(named) or "none"


def _protocol_text(protocol: Protocol, *, quick: bool, seed: int) -> str:
    settings = asdict(protocol)
    return (
        f"{'Quick smoke-test version' if quick else 'Protocol of the paper'} (seed {seed}): "
        f"n in {settings['sample_sizes']}, d in {settings['dimensions']}, "
        f"{protocol.n_datasets} training sets per cell, {protocol.n_test} test points each. "
        f"{default_svm_description(protocol.n_holdouts)} VB: Algorithm 2 until the lower bound "
        f"rises by less than 1e-10. MCMC: block Gibbs, {protocol.gibbs_tune} burn-in and "
        f"{protocol.gibbs_draws} kept draws, one chain."
    )


def _paper_comparison(timing: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    at_cell = timing[(timing["n"] == PAPER_CELL[0]) & (timing["d"] == PAPER_CELL[1])]
    return paper_timing_table(at_cell.set_index("method")["mean_seconds"], PAPER_SECONDS, labels)
