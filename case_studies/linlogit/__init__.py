"""Drugowitsch (2019) examples 2.6.1-2.6.4 and 3.6.1-3.6.3: ``bayesvm reproduce linlogit``.

Each example draws its data as the paper's MATLAB lines do (our own random numbers, seeded
per example) and fits the same data by variational Bayes, by the samplers of the same model
and by maximum likelihood:

* ``2.6.1``: ``X = [1, randn(100, 3)]``, ``w = (1, 2, 3, 5)``, unit noise; coefficients.
* ``2.6.2``: ``D = 100``, ``N = 150``, ``w ~ N(0, I)``, ``X ~ U(-1/2, 1/2)``; coefficients,
  test predictions and train/test MSE (Figure 1).
* ``2.6.3``: ``D = 1000`` of which 100 informative, ``N = 500``; without and with ARD
  (Figure 2). ``X`` has rank ``N < D``: maximum likelihood is the minimum-norm least-squares
  solution (MATLAB's ``regress`` returns another one of the same fit), without intervals.
* ``2.6.4``: a quadratic from ``N = 10`` noisy points on ``[-5, 5]``; the bound over
  polynomial orders 0-9 picks the order, maximum likelihood assumes order 5 (Figure 3).
* ``3.6.1``: ``D = 3`` (bias and two inputs, drawn so that about half the labels are +1),
  ``N = 100``; with and without the hyperprior (Figure 4).
* ``3.6.2``: ``D = 1000`` of which 100 informative, ``N = 2000``; shared shrinkage, the
  fixed prior ``N(0, I/D)`` and ARD (Figure 5).
* ``3.6.3``: labels from a quadratic logit, ``N = 50``; the bound over orders 0-9 (Figure 6).

Methods (``--methods`` picks families): ``vb`` (every prior the example uses), ``gibbs``
(exact conjugate sampler, linear examples), ``nuts`` (PyMC on the same ``to_pymc()``) and
``ml`` (least squares with t intervals; logistic maximum likelihood by scikit-learn with
Wald intervals). The paper's classical baseline for the logistic examples is Fisher's linear
discriminant; maximum likelihood is the likelihood-only counterpart of the Bayesian models
and is what we compare. Coefficient intervals are central 95 % intervals of each method's
draws (VB: of draws from ``Q``). Results go to CSV tables as each example finishes (so
``resume`` keeps them, after checking that they were run with the same settings), then to
Figures 1-6 and a markdown report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

import bayesvm
from bayesvm._arviz import arviz as az
from bayesvm.case_studies.linlogit.baselines import (
    MAXIMUM_LIKELIHOOD,
    LeastSquares,
    LogisticMaximumLikelihood,
)
from bayesvm.case_studies.linlogit.figures import FIGURE_FILES, linlogit_figures
from bayesvm.case_studies.metrics import predicts_single_class
from bayesvm.case_studies.reporting import markdown_table
from bayesvm.case_studies.runner import (
    check_resume_settings,
    run_tasks,
    task_seed,
    write_settings,
)
from bayesvm.case_studies.study import Study, StudyRun, keyed_task
from bayesvm.files import save_figure, write_csv
from bayesvm.models import LinearRegression, LogisticRegression

__all__ = [
    "EXAMPLES",
    "METHODS",
    "TABLES",
    "Protocol",
    "PAPER_PROTOCOL",
    "QUICK_PROTOCOL",
    "LeastSquares",
    "LogisticMaximumLikelihood",
    "run_example",
    "example_rows",
    "STUDY",
    "run",
]

EXAMPLES = ("2.6.1", "2.6.2", "2.6.3", "2.6.4", "3.6.1", "3.6.2", "3.6.3")
METHODS = ("vb", "gibbs", "nuts", "ml")
TABLES = ("coefficients", "predictions", "selection", "points", "scores", "timings")
PROB = 0.95  # interval coverage in every table and figure
ORDERS = range(10)  # polynomial orders tried by model selection (the paper's Ds = 1:10)


@dataclass(frozen=True)
class Protocol:
    """Sizes of the examples and the samplers' lengths."""

    linear_highdim: tuple[int, int, int] = (150, 100, 50)  # N, D, N_test (2.6.2)
    linear_sparse: tuple[int, int, int, int] = (500, 1000, 100, 50)  # N, D, D_eff, N_test
    logit_highdim: tuple[int, int, int, int] = (2000, 1000, 100, 10_000)  # (3.6.2)
    gibbs: tuple[int, int] = (5000, 1000)  # draws, tune (one chain)
    nuts: tuple[int, int, int] = (1000, 1000, 1)  # draws, tune, chains (run one by one)
    nuts_max_features: int = 1000  # NUTS is skipped above this many coefficients
    vb_draws: int = 4000


PAPER_PROTOCOL = Protocol()
QUICK_PROTOCOL = Protocol(
    linear_sparse=(100, 200, 20, 50),
    logit_highdim=(300, 100, 10, 2000),
    gibbs=(500, 200),
    nuts=(100, 100, 1),
    nuts_max_features=50,
    vb_draws=1000,
)


class _Recorder:
    """Rows of the long-format tables of one example, and what its fits need to know."""

    def __init__(self, example: str, methods: tuple[str, ...], protocol: Protocol, seed: int):
        self.example = example
        self.methods = methods
        self.protocol = protocol
        self.seed = seed
        self.frames: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLES}

    def add(self, table: str, **columns) -> None:
        """Append rows; scalar columns are repeated along the array ones."""
        size = max(np.size(value) for value in columns.values())
        frame = {name: np.broadcast_to(value, size) for name, value in columns.items()}
        self.frames[table].append(pd.DataFrame({"example": self.example, **frame}))

    def timed(self, label: str, fit: Callable):
        """``fit()``, its wall time recorded under ``label`` with, for samplers, the
        divergences and the smallest bulk ESS over all parameters.
        """
        start = time.perf_counter()
        result = fit()
        seconds = time.perf_counter() - start
        converged = getattr(result, "converged", True)  # least squares: closed form
        divergences, ess_bulk_min = np.nan, np.nan
        if getattr(result, "kind", None) == "mcmc":
            stats = getattr(result.idata, "sample_stats", None)
            diverging = stats.get("diverging") if stats is not None else None
            divergences = int(diverging.sum()) if diverging is not None else 0
            ess = az.ess(result.idata, method="bulk")
            ess_bulk_min = min(float(ess[name].min()) for name in ess.data_vars)
        self.add(
            "timings",
            method=label,
            seconds=seconds,
            converged=converged,
            divergences=divergences,
            ess_bulk_min=ess_bulk_min,
        )
        return result

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            name: pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
            for name, frames in self.frames.items()
        }


def n_coefficients(fit) -> int:
    """Coefficients of a Bayesian fit or a maximum-likelihood estimate."""
    return fit.w.size if isinstance(fit, MAXIMUM_LIKELIHOOD) else fit.model.n_features


def coefficient_intervals(fit, prob: float = PROB):
    """Mean and central ``prob`` interval of ``w``: from the draws for a Bayesian fit."""
    if isinstance(fit, MAXIMUM_LIKELIHOOD):
        return fit.coefficient_intervals(prob)
    w = fit.idata.posterior["w"].to_numpy().reshape(-1, fit.model.n_features)
    lower, upper = np.quantile(w, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    return w.mean(axis=0), lower, upper


# ------------------------------------------- fitting every chosen method


def _bayesian_fits(rec: _Recorder, model, label: str = "", *, samplers: bool = True) -> dict:
    """VB and, when chosen (and NUTS affordable), Gibbs and NUTS of ``model``, by label."""
    protocol, fits = rec.protocol, {}
    runs = {"vb": {"draws": protocol.vb_draws}}
    if samplers:
        draws, tune = protocol.gibbs
        runs["gibbs"] = {"draws": draws, "tune": tune, "chains": 1, "progressbar": False}
        draws, tune, chains = protocol.nuts
        if model.n_features <= protocol.nuts_max_features:
            runs["nuts"] = {
                "draws": draws,
                "tune": tune,
                "chains": chains,
                "cores": 1,
                "progressbar": False,
            }
    for method, options in runs.items():
        if method in rec.methods and method in bayesvm.methods(model):
            name = f"{'Gibbs' if method == 'gibbs' else method.upper()}{label}"
            fits[name] = rec.timed(
                name, partial(bayesvm.fit, model, method, seed=rec.seed, **options)
            )
    return fits


def _maximum_likelihood(rec: _Recorder, estimator, X, y) -> dict:
    return {"ML": rec.timed("ML", lambda: estimator.fit(X, y))} if "ml" in rec.methods else {}


# ------------------------------------------- recording what the figures and tables show


def _as_is(fit, inputs):
    return inputs


def _polynomial_design(fit, x):
    return polynomial_features(x, n_coefficients(fit) - 1)


def _record_coefficients(rec: _Recorder, fits: dict, truth: np.ndarray) -> None:
    for label, fit in fits.items():
        mean, lower, upper = coefficient_intervals(fit)
        rec.add(
            "coefficients",
            method=label,
            index=np.arange(truth.size),
            truth=truth,
            mean=mean,
            lower=lower,
            upper=upper,
        )


def _record_predictions(rec, label, x, truth, mean, lower=np.nan, upper=np.nan) -> None:
    rec.add(
        "predictions",
        method=label,
        index=np.arange(truth.size),
        x=x,
        truth=truth,
        mean=mean,
        lower=lower,
        upper=upper,
    )


def _record_linear(rec: _Recorder, fits: dict, train, test, design=_as_is, x=np.nan) -> None:
    """Test predictions with their 95 % intervals, and train/test MSE."""
    for label, fit in fits.items():
        X_test, y_test = design(fit, test[0]), test[1]
        lower, upper = fit.predictive_interval(X_test, prob=PROB, seed=rec.seed)
        _record_predictions(rec, label, x, y_test, fit.predict(X_test), lower, upper)
        for metric, (inputs, outputs) in {"train_mse": train, "test_mse": test}.items():
            error = outputs - fit.predict(design(fit, inputs))
            rec.add("scores", method=label, metric=metric, value=np.mean(error**2))


def _record_logistic(rec, fits: dict, train, test, shown, design=_as_is, x=np.nan) -> None:
    """``P(y = 1 | x)`` against the truth at the ``shown`` inputs; 0-1 and log losses."""
    shown_inputs, shown_truth = shown
    for label, fit in fits.items():
        p_shown = fit.predict_proba(design(fit, shown_inputs))[:, 1]
        _record_predictions(rec, label, x, shown_truth, p_shown)
        probability = partial(_positive_probability, fit, design)
        _record_logistic_scores(rec, label, probability, train, test)


def _positive_probability(fit, design, inputs) -> np.ndarray:
    return fit.predict_proba(design(fit, inputs))[:, 1]


TRUE_MODEL = "true model"  # scores of the true P(y = 1 | x): the floor no method beats


def _record_logistic_scores(rec: _Recorder, label: str, probability: Callable, train, test):
    """Training and test 0-1 loss, test log-loss of ``probability(inputs) = P(y = 1)``, and
    whether the test labels predicted (``P(y = 1) > 1/2``) are all of one class (1) or not (0).
    """
    (X, y), (X_test, y_test) = train, test
    p_test = np.clip(probability(X_test), 1e-15, 1 - 1e-15)
    scores = {
        "train_01": np.mean((probability(X) > 0.5) != (y > 0)),
        "test_01": np.mean((p_test > 0.5) != (y_test > 0)),
        "test_log_loss": -np.mean(np.where(y_test > 0, np.log(p_test), np.log1p(-p_test))),
        "test_single_class": float(predicts_single_class(p_test > 0.5)),
    }
    for metric, value in scores.items():
        rec.add("scores", method=label, metric=metric, value=value)


# ------------------------------------------- the examples


def _uniform_inputs(rng, n_samples: int, n_features: int) -> np.ndarray:
    return rng.random((n_samples, n_features)) - 0.5


def _sparse_weights(rng, n_features: int, n_informative: int) -> np.ndarray:
    return np.concatenate(
        [rng.standard_normal(n_informative), np.zeros(n_features - n_informative)]
    )


def _labels(rng, X: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.where(rng.random(X.shape[0]) < expit(X @ w), 1, -1)


def polynomial_features(x: np.ndarray, order: int) -> np.ndarray:
    """``[1, x, ..., x^order]`` (the paper's ``gen_X``)."""
    return x[:, None] ** np.arange(order + 1)


def example_2_6_1(rec: _Recorder, rng) -> None:
    """Coefficients of a four-coefficient regression (section 2.6.1)."""
    truth = np.array([1.0, 2.0, 3.0, 5.0])
    X = np.column_stack([np.ones(100), rng.standard_normal((100, 3))])
    y = X @ truth + rng.standard_normal(100)
    fits = _bayesian_fits(rec, LinearRegression.from_arrays(X, y))
    _record_coefficients(rec, fits | _maximum_likelihood(rec, LeastSquares, X, y), truth)


def _linear_highdim(rec: _Recorder, rng, N, D, D_eff, N_test, priors: dict) -> None:
    """Sections 2.6.2 (``D_eff = D``) and 2.6.3: regression on ``U(-1/2, 1/2)`` inputs."""
    truth = _sparse_weights(rng, D, D_eff)
    X, X_test = _uniform_inputs(rng, N, D), _uniform_inputs(rng, N_test, D)
    y = X @ truth + rng.standard_normal(N)
    y_test = X_test @ truth + rng.standard_normal(N_test)
    fits = {}
    for label, options in priors.items():
        fits |= _bayesian_fits(rec, LinearRegression.from_arrays(X, y, **options), label)
    fits |= _maximum_likelihood(rec, LeastSquares, X, y)
    _record_coefficients(rec, fits, truth)
    _record_linear(rec, fits, (X, y), (X_test, y_test))


def example_2_6_2(rec: _Recorder, rng) -> None:
    """100-dimensional regression from 150 observations (section 2.6.2, Figure 1)."""
    N, D, N_test = rec.protocol.linear_highdim
    _linear_highdim(rec, rng, N, D, D, N_test, {"": {}})


def example_2_6_3(rec: _Recorder, rng) -> None:
    """Sparse regression without and with ARD (section 2.6.3, Figure 2)."""
    _linear_highdim(rec, rng, *rec.protocol.linear_sparse, {"": {}, "-ARD": {"ard": True}})


ML_ORDER = 5  # the polynomial order maximum likelihood assumes (sections 2.6.4 and 3.6.3)


def _select_order(rec: _Recorder, model_for: Callable, losses: Callable, true_order: int):
    """VB at every order: record bound and losses; the model of the largest bound."""
    bounds = []
    for order in ORDERS:
        fit = bayesvm.fit(model_for(order), seed=rec.seed)
        bounds.append(fit.lower_bound)
        train_loss, test_loss = losses(fit)
        rec.add(
            "selection",
            order=order,
            true_order=true_order,
            bound=fit.lower_bound,
            train_loss=train_loss,
            test_loss=test_loss,
        )
    return model_for(ORDERS[int(np.argmax(bounds))])


def example_2_6_4(rec: _Recorder, rng) -> None:
    """The order of a polynomial from 10 noisy points, by the bound (section 2.6.4, Fig. 3)."""
    true_order, N = 2, 10
    truth = rng.standard_normal(true_order + 1)
    x, x_test = rng.uniform(-5, 5, N), np.linspace(-5, 5, 100)
    y = polynomial_features(x, true_order) @ truth + rng.standard_normal(N)
    train, test = (x, y), (x_test, polynomial_features(x_test, true_order) @ truth)
    rec.add("points", x=x, x2=np.nan, y=y)
    if "vb" not in rec.methods:
        return

    def mse(fit):
        return [
            np.mean((t - fit.predict(_polynomial_design(fit, s))) ** 2) for s, t in (train, test)
        ]

    best = _select_order(
        rec,
        lambda order: LinearRegression.from_arrays(polynomial_features(x, order), y),
        mse,
        true_order,
    )
    fits = _bayesian_fits(rec, best)
    fits |= _maximum_likelihood(rec, LeastSquares, polynomial_features(x, ML_ORDER), y)
    _record_linear(rec, fits, train, test, design=_polynomial_design, x=x_test)


def _logistic_fits(rec: _Recorder, X, y, priors: dict, sampled: Callable = lambda label: True):
    fits = {}
    for label, options in priors.items():
        model = LogisticRegression.from_arrays(X, y, **options)
        fits |= _bayesian_fits(rec, model, label, samplers=sampled(label))
    return fits | _maximum_likelihood(rec, LogisticMaximumLikelihood, X, y)


def example_3_6_1(rec: _Recorder, rng) -> None:
    """Three coefficients, with and without the hyperprior (section 3.6.1, Figure 4)."""
    N, N_test, scale = 100, 1000, 5.0
    truth = rng.standard_normal(3)

    def inputs(n):  # x3 chosen so that about half the labels are +1
        x2 = scale * (rng.random(n) - 0.5)
        x3 = scale * (rng.random(n) - 0.5) - (truth[0] + x2 * truth[1]) / truth[2]
        return np.column_stack([np.ones(n), x2, x3])

    X, X_test = inputs(N), inputs(N_test)
    y, y_test = _labels(rng, X, truth), _labels(rng, X_test, truth)
    rec.add("points", x=X[:, 1], x2=X[:, 2], y=y)
    fits = _logistic_fits(rec, X, y, {"": {}, " (fixed prior)": {"hyperprior": False}})
    _record_coefficients(rec, fits, truth)
    _record_logistic(rec, fits, (X, y), (X_test, y_test), shown=(X_test, expit(X_test @ truth)))
    _record_logistic_scores(rec, TRUE_MODEL, lambda X: expit(X @ truth), (X, y), (X_test, y_test))


def example_3_6_2(rec: _Recorder, rng) -> None:
    """1000 inputs, 100 informative: shared, fixed and ARD priors (section 3.6.2, Figure 5).

    Only the ARD model, the paper's point, is also sampled by NUTS: at D = 1000 that is the
    run that takes hours.
    """
    N, D, D_eff, N_test = rec.protocol.logit_highdim
    truth = _sparse_weights(rng, D, D_eff)
    X, X_test = _uniform_inputs(rng, N, D), _uniform_inputs(rng, N_test, D)
    y, y_test = _labels(rng, X, truth), _labels(rng, X_test, truth)
    priors = {"": {}, " (fixed prior)": {"hyperprior": False}, "-ARD": {"ard": True}}
    fits = _logistic_fits(rec, X, y, priors, sampled=lambda label: label == "-ARD")
    _record_coefficients(rec, fits, truth)
    shown = X[:200]
    _record_logistic(rec, fits, (X, y), (X_test, y_test), shown=(shown, expit(shown @ truth)))
    _record_logistic_scores(rec, TRUE_MODEL, lambda X: expit(X @ truth), (X, y), (X_test, y_test))


def example_3_6_3(rec: _Recorder, rng) -> None:
    """The order of a polynomial logit from 50 labels, by the bound (section 3.6.3, Fig. 6)."""
    true_order, N = 2, 50
    truth = rng.standard_normal(true_order + 1)
    x, x_test = rng.uniform(-5, 5, N), np.linspace(-5, 5, 300)
    y = _labels(rng, polynomial_features(x, true_order), truth)
    p_test = expit(polynomial_features(x_test, true_order) @ truth)
    train, test = (x, y), (x_test, np.where(rng.random(x_test.size) < p_test, 1, -1))
    rec.add("points", x=x, x2=np.nan, y=y)
    if "vb" not in rec.methods:
        return

    def zero_one(fit):
        return [np.mean(fit.predict(_polynomial_design(fit, s)) != t) for s, t in (train, test)]

    best = _select_order(
        rec,
        lambda order: LogisticRegression.from_arrays(polynomial_features(x, order), y),
        zero_one,
        true_order,
    )
    fits = _bayesian_fits(rec, best)
    design = polynomial_features(x, ML_ORDER)
    fits |= _maximum_likelihood(rec, LogisticMaximumLikelihood, design, y)
    _record_logistic(
        rec, fits, train, test, shown=(x_test, p_test), design=_polynomial_design, x=x_test
    )
    _record_logistic_scores(
        rec, TRUE_MODEL, lambda s: expit(polynomial_features(s, true_order) @ truth), train, test
    )


EXAMPLE_FUNCTIONS = {
    "2.6.1": example_2_6_1,
    "2.6.2": example_2_6_2,
    "2.6.3": example_2_6_3,
    "2.6.4": example_2_6_4,
    "3.6.1": example_3_6_1,
    "3.6.2": example_3_6_2,
    "3.6.3": example_3_6_3,
}


# ------------------------------------------- the study


def run_example(example: str, *, methods, protocol: Protocol, seed: int) -> dict[str, pd.DataFrame]:
    """One example's tables (see :data:`TABLES`), seeded by ``seed`` and the example alone."""
    _warm_up()
    key = EXAMPLES.index(example)
    rng = np.random.default_rng(task_seed(seed, key))
    recorder = _Recorder(example, tuple(methods), protocol, seed + key)
    EXAMPLE_FUNCTIONS[example](recorder, rng)
    return recorder.tables()


DEFAULT_SEED = 2019


def _warm_up() -> None:
    """Pay the first-call costs (lazy imports, caches) outside the timed fits."""
    X = np.column_stack([np.ones(4), np.arange(4.0)])
    bayesvm.fit(LinearRegression.from_arrays(X, np.arange(4.0)), draws=2)
    bayesvm.fit(LogisticRegression.from_arrays(X, [1, -1, 1, -1]), draws=2)
    LeastSquares.fit(X, np.arange(4.0)).predictive_interval(X, PROB)
    LogisticMaximumLikelihood.fit(X, np.array([1, -1, 1, -1]))


# What the paper printed for its own draw of each example (section 2.6 and 3.6); its
# classical baseline for classification is Fisher's linear discriminant ("FLD").
PAPER_SCORES = pd.DataFrame(
    [
        ("2.6.2", "ML", "train_mse", 0.363473),
        ("2.6.2", "VB", "train_mse", 0.446073),
        ("2.6.2", "ML", "test_mse", 3.622844),
        ("2.6.2", "VB", "test_mse", 3.221452),
        ("2.6.3", "ML", "train_mse", 0.0),
        ("2.6.3", "VB", "train_mse", 0.270214),
        ("2.6.3", "VB-ARD", "train_mse", 0.0),
        ("2.6.3", "ML", "test_mse", 277.108556),
        ("2.6.3", "VB", "test_mse", 7.164384),
        ("2.6.3", "VB-ARD", "test_mse", 3.230588),
        ("3.6.1", "FLD", "train_01", 0.14),
        ("3.6.1", "VB", "train_01", 0.14),
        ("3.6.1", "VB (fixed prior)", "train_01", 0.16),
        ("3.6.1", "FLD", "test_01", 0.142),
        ("3.6.1", "VB", "test_01", 0.143),
        ("3.6.1", "VB (fixed prior)", "test_01", 0.149),
        ("3.6.2", "FLD", "train_01", 0.0415),
        ("3.6.2", "VB", "train_01", 0.0655),
        ("3.6.2", "VB (fixed prior)", "train_01", 0.1125),
        ("3.6.2", "VB-ARD", "train_01", 0.066),
        ("3.6.2", "FLD", "test_01", 0.2826),
        ("3.6.2", "VB", "test_01", 0.2603),
        ("3.6.2", "VB (fixed prior)", "test_01", 0.2802),
        ("3.6.2", "VB-ARD", "test_01", 0.2035),
        ("3.6.3", "FLD", "train_01", 0.10),
        ("3.6.3", "VB", "train_01", 0.10),
        ("3.6.3", "FLD", "test_01", 0.19),
        ("3.6.3", "VB", "test_01", 0.183333),
    ],
    columns=["example", "method", "metric", "value"],
)


STUDY = Study("linlogit", METHODS, PAPER_PROTOCOL, QUICK_PROTOCOL, DEFAULT_SEED, distributed=False)


def example_rows(*, example: str, out_dir: str, methods, protocol: Protocol, seed: int):
    """The task of one example: :func:`run_example`, its tables written to
    ``out_dir/examples/<example>/`` as it finishes; one row, its ``seconds``.
    """
    start = time.perf_counter()
    tables = run_example(example, methods=methods, protocol=protocol, seed=seed)
    _save_example(tables, Path(out_dir) / "examples" / example)
    return [{"seconds": time.perf_counter() - start}]


def _execute(run: StudyRun) -> tuple[dict[str, pd.DataFrame], str]:
    example_dir = run.out_dir / "examples"
    if run.resume:
        finished = [example for example in EXAMPLES if _load_example(example_dir / example)]
        if finished:
            check_resume_settings(example_dir, run.settings)
    else:
        finished = []
        for example in EXAMPLES:
            _delete_example(example_dir / example)
    write_settings(example_dir, run.settings)
    options = {"methods": run.methods, "protocol": run.protocol, "seed": run.seed}
    tasks = [
        keyed_task({"example": example}, example_rows, out_dir=str(run.out_dir), **options)
        for example in EXAMPLES
        if example not in finished
    ]
    run_tasks(
        tasks, workers=run.workers, description="linlogit examples", progressbar=run.progressbar
    )
    examples = [_load_example(example_dir / example) for example in EXAMPLES]
    tables = {
        name: pd.concat([tables[name] for tables in examples], ignore_index=True) for name in TABLES
    }
    for name, table in tables.items():
        write_csv(table, run.out_dir / f"linlogit_{name}.csv", index=False)
    for file_name, figure in linlogit_figures(tables).items():
        save_figure(figure, run.out_dir / file_name, dpi=120, bbox_inches="tight")
    return tables, _report(
        tables, run.protocol, quick=run.quick, seed=run.seed, run_line=run.run_line()
    )


run = STUDY.entry_point(
    _execute,
    summary="Run the seven examples and write tables, Figures 1-6 and ``report.md`` to "
    "``out_dir``.",
    outputs="Receives ``examples/<example>/<table>.csv`` as each example finishes (its "
    "settings in ``examples.settings.json``; ``resume`` keeps the examples written there, and "
    "a run without it deletes them first), ``linlogit_<table>.csv`` (all examples) and the "
    "figures of :func:`~bayesvm.case_studies.linlogit.figures.linlogit_figures`.",
    scheduler_text="Not taken by this study: its examples write their tables into "
    "``out_dir`` as they finish, so they run on this machine.",
    methods_text='(families of methods; model selection needs ``"vb"``)',
    returns="dict of pandas.DataFrame\n    The tables of ``TABLES``, all examples together.",
)


def _save_example(tables: dict[str, pd.DataFrame], folder: Path) -> None:
    """Write the example's tables, each whole or not at all: an example is finished (and
    resumed) only when all of them are there (:func:`_load_example`).
    """
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        write_csv(table, folder / f"{name}.csv", index=False)


def _delete_example(folder: Path) -> None:
    """Delete the tables of an example of an earlier run (so that none is resumed later)."""
    for name in TABLES:
        (folder / f"{name}.csv").unlink(missing_ok=True)


def _load_example(folder: Path) -> dict[str, pd.DataFrame] | None:
    paths = {name: folder / f"{name}.csv" for name in TABLES}
    if not all(path.exists() for path in paths.values()):
        return None
    return {name: _read_table(path) for name, path in paths.items()}


def _read_table(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype={"example": str})
    except pd.errors.EmptyDataError:  # a table this example has no rows for
        return pd.DataFrame()


EXAMPLE_TITLES = {
    "2.6.1": "Estimation of regression coefficients",
    "2.6.2": "100-dimensional linear regression and predictive accuracy (Figure 1)",
    "2.6.3": "Sparse high-dimensional regression, without and with ARD (Figure 2)",
    "2.6.4": "Polynomial order by the variational bound (Figure 3)",
    "3.6.1": "Logistic coefficients and separating hyperplane (Figure 4)",
    "3.6.2": "High-dimensional logistic regression, shared, fixed and ARD priors (Figure 5)",
    "3.6.3": "Polynomial order of the logit by the variational bound (Figure 6)",
}


def speed_ratios(timings: pd.DataFrame) -> pd.DataFrame:
    """Seconds of each sampler over those of VB on the same model and example."""
    rows = []
    for (example, method), seconds in timings.set_index(["example", "method"])["seconds"].items():
        for sampler in ("NUTS", "Gibbs"):
            if method.startswith(sampler):
                vb = timings[
                    (timings["example"] == example)
                    & (timings["method"] == "VB" + method[len(sampler) :])
                ]
                if len(vb):
                    vb_seconds = float(vb["seconds"].iloc[0])
                    rows.append(
                        {
                            "example": example,
                            "sampler": method,
                            "sampler_s": seconds,
                            "vb_s": vb_seconds,
                            "sampler_over_vb": seconds / vb_seconds,
                        }
                    )
    return pd.DataFrame(
        rows, columns=["example", "sampler", "sampler_s", "vb_s", "sampler_over_vb"]
    )


def _report(tables, protocol: Protocol, *, quick: bool, seed: int, run_line: str) -> str:
    scores, timings, selection = tables["scores"], tables["timings"], tables["selection"]
    sections = [
        "# Drugowitsch (2019): VB linear and logistic regression, examples 2.6 and 3.6",
        _protocol_text(protocol, quick=quick, seed=seed),
        run_line,
        "## Speed: samplers against VB on the same model",
        markdown_table(speed_ratios(timings)),
        "A sampler is a reference for VB only where it converged (R-hat < 1.01 for every "
        "parameter; one chain is judged by its two halves) with a bulk ESS in the hundreds: "
        "see `converged`, `divergences` and `ess_bulk_min` in each example's table.",
    ]
    for example in EXAMPLES:
        sections.append(f"## {example}: {EXAMPLE_TITLES[example]}")
        ours = scores[scores["example"] == example]
        if len(ours):
            table = ours.pivot_table(index="method", columns="metric", values="value", sort=False)
            sections += ["Ours:", markdown_table(table.reset_index())]
            sections += _single_class_sentences(ours)
        paper = PAPER_SCORES[PAPER_SCORES["example"] == example]
        if len(paper):
            table = paper.pivot_table(index="method", columns="metric", values="value", sort=False)
            sections += ["The paper's draw:", markdown_table(table.reset_index())]
        chosen = selection[selection["example"] == example] if len(selection) else selection
        if len(chosen):
            best = int(chosen.loc[chosen["bound"].idxmax(), "order"])
            sections.append(
                f"Largest bound at polynomial order {best} (true order "
                f"{int(chosen['true_order'].iloc[0])}; the paper found the true order)."
            )
        columns = ["method", "seconds", "converged", "divergences", "ess_bulk_min"]
        seconds = timings[timings["example"] == example][columns]
        sections += ["Seconds per fit:", markdown_table(seconds)]
        sections.append(f"![{example}]({FIGURE_FILES[example]})")
    return "\n\n".join(sections) + "\n"


def _single_class_sentences(scores: pd.DataFrame) -> list[str]:
    """A sentence for each method that predicted one class for every test point."""
    flagged = scores[(scores["metric"] == "test_single_class") & (scores["value"] == 1)]
    return [
        f"{method} predicted a single class for every test point: its test 0-1 loss is the "
        "share of the other class, that of a constant classifier."
        for method in flagged["method"]
    ]


def _protocol_text(protocol: Protocol, *, quick: bool, seed: int) -> str:
    gibbs_draws, gibbs_tune = protocol.gibbs
    nuts_draws, nuts_tune, nuts_chains = protocol.nuts
    return (
        f"{'Quick smoke-test version' if quick else 'Sizes of the paper'} (seed {seed}). "
        f"2.6.2: N, D, N_test = {protocol.linear_highdim}; 2.6.3: N, D, D_eff, N_test = "
        f"{protocol.linear_sparse}; 3.6.2: N, D, D_eff, N_test = {protocol.logit_highdim}; the "
        "other examples as the paper. Data are drawn as the paper's MATLAB code draws them, "
        "from our own random numbers, so the numbers differ from the paper's draw. VB stops "
        "when the bound changes by less than 0.001 % (at most 500 iterations; section 2.5). "
        f"Gibbs (exact conjugate blocks, linear model): {gibbs_tune} burn-in + {gibbs_draws} "
        f"draws, one chain. NUTS (PyMC): {nuts_tune} tuning + {nuts_draws} draws, "
        f"{nuts_chains} chain(s) run one after the other, for models of at most "
        f"{protocol.nuts_max_features} coefficients (in 3.6.2 for the ARD model only). "
        "ML: least squares with t intervals (minimum-norm when X is rank deficient, no "
        "interval), logistic maximum likelihood (scikit-learn, no penalty) with Wald "
        "intervals. Intervals are central 95 %; losses use the posterior predictive (VB: "
        "the paper's eq. 23 and 65-68) and, for maximum likelihood, the plug-in estimate."
    )
