"""Wenzel et al. (2017) section 5.2 on simulated SUSY-sized data: the big-data experiment.

5,000,000 rows of 18 features with a nonlinear Bayes-optimal boundary
(:func:`simulated_susy`), written to disk chunk by chunk as a Dask ``npy`` stack
(:func:`write_simulated_susy`) and fitted from it by :meth:`GPSVM.from_dask` with 64 inducing
points, minibatches of 100 and one pass (:func:`bigdata_rows`); AUC and Brier score on
held-out rows, rows per second and peak memory, beside the paper's SUSY run
(:func:`bigdata_table`). The sizes come from :class:`bayesvm.case_studies.gpsvm.Protocol`'s
``bigdata_*`` fields.
"""

from __future__ import annotations

import json
import multiprocessing
import resource
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

import bayesvm
from bayesvm.case_studies.gpsvm.baselines import mlii_fit, sklearn_seed
from bayesvm.case_studies.gpsvm.protocol import _BIGDATA
from bayesvm.case_studies.metrics import brier_score
from bayesvm.case_studies.runner import task_seed, trust_notes
from bayesvm.files import write_text
from bayesvm.models import GPSVM

__all__ = [
    "PAPER_BIGDATA",
    "simulated_susy",
    "write_simulated_susy",
    "bigdata_rows",
    "bigdata_table",
]

#: Section 5.2 on SUSY (5,000,000 rows, 18 columns in the file): AUC, Brier score, seconds of
#: one training run with 64 inducing points and minibatches of 100; the best published AUC
#: (a five-layer neural network, Baldi et al. 2014).
PAPER_BIGDATA = {"auc": 0.84, "brier": 0.22, "n": 5_000_000, "seconds": 600.0, "best_auc": 0.88}
# The simulated SUSY-sized data: features x_0 .. x_{d-1} ~ N(0, 1), P(y = +1 | x) =
# expit(_SUSY_SCALE * g(x)), g below; the scale puts the Bayes-optimal AUC near 0.88 (the best
# published SUSY AUC).
_SUSY_SCALE = 1.2
_SUSY_FEATURES = 10  # features g reads; the others are noise


def simulated_susy(n_rows: int, n_features: int, rng: np.random.Generator):
    """Rows of the simulated SUSY-sized problem: features ``x ~ N(0, I)``, labels drawn.

    ``P(y = +1 | x) = expit(1.2 * g(x))`` with
    ``g(x) = x0 x1 + (x2^2 + x3^2 - x4^2 - x5^2) / 2 + sin(1.5 x6) + (x7 + x8 + x9) / 2``;

    the other features are noise. The boundary ``g = 0`` (Bayes-optimal) is nonlinear; the
    Bayes-optimal AUC is about 0.88 and its Brier score about 0.14.

    Returns
    -------
    X : ndarray of float32, shape (n_rows, n_features)
    y : ndarray of int8, shape (n_rows,)
        Labels in {-1, +1}.
    probability : ndarray of float64
        ``P(y = +1 | x)``, the Bayes-optimal prediction.
    """
    if n_features < _SUSY_FEATURES:
        raise ValueError(f"n_features must be at least {_SUSY_FEATURES}; got {n_features}")
    X = rng.standard_normal((n_rows, n_features))
    probability = _bayes_probability(X)
    y = np.where(rng.random(n_rows) < probability, 1, -1).astype(np.int8)
    return X.astype(np.float32), y, probability


def _susy_block(block_id, *, chunk: int, n_rows: int, n_features: int, seed: int, part: int):
    """Chunk ``block_id[0]`` of a simulated stack: features and label in one float32 array,
    drawn from its own stream ``(seed, 7, part, chunk number)``.
    """
    number = block_id[0]
    size = min(chunk, n_rows - number * chunk)
    rng = np.random.default_rng(task_seed(seed, _BIGDATA, part, number))
    X, y, _ = simulated_susy(size, n_features, rng)
    return np.column_stack([X, y.astype(np.float32)])


def write_simulated_susy(folder, *, n_rows: int, n_features: int, chunk: int, seed: int, part: int):
    """Write :func:`simulated_susy` rows to ``folder`` as a Dask ``npy`` stack, chunk by chunk.

    Each chunk of ``chunk`` rows (the last may be shorter) is drawn from its own stream, so
    memory stays bounded by a few chunks whatever ``n_rows``; the stack holds the features
    then the label (as float32) in its last column. Read it back with
    ``dask.array.from_npy_stack(folder)``. ``part`` tells the training stack (0) from the
    held-out one (1).
    """
    import dask
    import dask.array as da

    n_chunks = -(-n_rows // chunk)
    chunks = (tuple(min(chunk, n_rows - k * chunk) for k in range(n_chunks)), (n_features + 1,))
    stack = da.map_blocks(
        _susy_block,
        chunks=chunks,
        dtype=np.float32,
        chunk=chunk,
        n_rows=n_rows,
        n_features=n_features,
        seed=seed,
        part=part,
    )
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with dask.config.set(scheduler="threads", num_workers=1):
        da.to_npy_stack(folder, stack, axis=0)


def _bigdata_folder(out_dir: Path, protocol, seed: int) -> tuple[Path, dict]:
    settings = {
        "rows": protocol.bigdata_rows,
        "test_rows": protocol.bigdata_test_rows,
        "features": protocol.bigdata_features,
        "chunk": protocol.bigdata_chunk,
        "seed": seed,
    }
    return out_dir / "gpsvm_bigdata_data", settings


def _ensure_simulated_susy(folder: Path, settings: dict) -> float:
    """Write the training and held-out stacks to ``folder`` unless those of ``settings`` are
    there already (a resumed run); the seconds spent writing (0 when reused).
    """
    marker = folder / "settings.json"
    if marker.exists() and json.loads(marker.read_text(encoding="utf-8")) == settings:
        return 0.0
    start = time.perf_counter()
    shutil.rmtree(folder, ignore_errors=True)
    for part, (name, rows) in enumerate(
        [("train", settings["rows"]), ("test", settings["test_rows"])]
    ):
        write_simulated_susy(
            folder / name,
            n_rows=rows,
            n_features=settings["features"],
            chunk=settings["chunk"],
            seed=settings["seed"],
            part=part,
        )
    write_text(marker, json.dumps(settings))
    return time.perf_counter() - start


def bigdata_rows(*, out_dir: str, seed: int, protocol, fresh_process: bool) -> list[dict]:
    """Section 5.2 on the simulated SUSY-sized data (:func:`simulated_susy`).

    The data are written to ``out_dir/gpsvm_bigdata_data`` (reused when there with the same
    sizes and seed). The kernel is chosen by ML-II on the first ``bigdata_mlii_rows`` training
    rows (not counted in the training time, as the paper's footnote 7); then
    :meth:`GPSVM.from_dask` on the whole stack, ``bigdata_inducing`` k-means inducing points,
    S-BSVM with minibatches of ``bigdata_batch`` for one whole pass (no early stop, so the
    fit says it did not meet its convergence rule), one core. With
    ``fresh_process`` the work runs in a new process so that its peak memory is its own.

    Returns
    -------
    list of dict
        One row: sizes; ``lengthscale``, ``variance``, ``mlii_seconds``; ``write_seconds``
        (0 when the data were reused); ``seconds`` of the fit (building the model, inducing
        points included, and training), ``rows_per_second``; held-out ``auc``, ``brier`` and
        the Bayes-optimal ``bayes_auc``, ``bayes_brier``; ``peak_memory_mb`` (the process's
        maximum resident set size) and ``memory_at_start_mb`` (the same before the data were
        touched: the interpreter and its imports); ``n_iter``, ``converged``.
    """
    if fresh_process:
        context = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            future = pool.submit(
                bigdata_rows, out_dir=out_dir, seed=seed, protocol=protocol, fresh_process=False
            )
            return future.result()
    try:
        import dask.array as da
    except ImportError as error:
        raise ImportError(
            'the big-data experiment reads its data with Dask: pip install "bayesvm[distributed]"'
        ) from error
    memory_at_start = _peak_memory_mb()
    folder, settings = _bigdata_folder(Path(out_dir), protocol, seed)
    write_seconds = _ensure_simulated_susy(folder, settings)
    train = da.from_npy_stack(folder / "train")
    test = da.from_npy_stack(folder / "test").compute()
    d = protocol.bigdata_features
    X_test, y_test = test[:, :d].astype(float), test[:, d].astype(int)
    rng = np.random.default_rng(task_seed(seed, _BIGDATA, 2))
    with trust_notes() as notes, threadpool_limits(limits=1):
        first = train[: protocol.bigdata_mlii_rows].compute()
        mlii, tuned = mlii_fit(
            first[:, :d].astype(float),
            first[:, d].astype(int),
            protocol.bigdata_inducing,
            protocol,
            rng,
            batch_size=protocol.bigdata_batch,
        )
        del first
        start = time.perf_counter()
        model = GPSVM.from_dask(
            train[:, :d],
            train[:, d].astype(np.int8),
            lengthscale=tuned.lengthscale,
            variance=tuned.variance,
            inducing=protocol.bigdata_inducing,
            seed=sklearn_seed(rng),
        )
        fitted = bayesvm.fit(
            model,
            "svi",
            batch_size=protocol.bigdata_batch,
            epochs=1,
            tol=0.0,  # the whole pass: no early stop
            seed=rng,
            progressbar=False,
        )
        seconds = time.perf_counter() - start
    probability = fitted.predict_proba(X_test)[:, 1]
    bayes = _bayes_probability(X_test)
    return [
        {
            "n_train": protocol.bigdata_rows,
            "n_test": protocol.bigdata_test_rows,
            "features": d,
            "inducing": protocol.bigdata_inducing,
            "batch_size": protocol.bigdata_batch,
            "lengthscale": tuned.lengthscale,
            "variance": tuned.variance,
            "mlii_seconds": mlii.runtime_s,
            "write_seconds": write_seconds,
            "seconds": seconds,
            "fit_seconds": fitted.runtime_s,
            "rows_per_second": protocol.bigdata_rows / seconds,
            "auc": float(roc_auc_score(y_test, probability)),
            "brier": brier_score(y_test, probability),
            "error": float(np.mean(fitted.predict(X_test) != y_test)),
            "bayes_auc": float(roc_auc_score(y_test, bayes)),
            "bayes_brier": brier_score(y_test, bayes),
            "peak_memory_mb": _peak_memory_mb(),
            "memory_at_start_mb": memory_at_start,
            "n_iter": fitted.n_iter,
            "converged": fitted.converged,
            "warnings": " | ".join(notes),
        }
    ]


def _peak_memory_mb() -> float:
    """Maximum resident set size of this process in MiB (``ru_maxrss``: KiB on Linux, bytes
    on macOS).
    """
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def _bayes_probability(X) -> np.ndarray:
    """``P(y = +1 | x)`` of :func:`simulated_susy` at the rows of ``X``."""
    X = np.asarray(X, dtype=float)
    g = (
        X[:, 0] * X[:, 1]
        + 0.5 * (X[:, 2] ** 2 + X[:, 3] ** 2 - X[:, 4] ** 2 - X[:, 5] ** 2)
        + np.sin(1.5 * X[:, 6])
        + 0.5 * (X[:, 7] + X[:, 8] + X[:, 9])
    )
    return expit(_SUSY_SCALE * g)


def bigdata_table(bigdata: pd.DataFrame) -> pd.DataFrame:
    """Section 5.2, ours against the paper's SUSY run: AUC, Brier score, rows, training
    seconds, rows per second, the seconds 5,000,000 rows would take at our rate and its
    ratio to the paper's 10 minutes, peak memory.
    """
    row = bigdata.iloc[0]
    paper_rate = PAPER_BIGDATA["n"] / PAPER_BIGDATA["seconds"]
    ours_at_5m = PAPER_BIGDATA["n"] / row["rows_per_second"]
    return pd.DataFrame(
        [
            {
                "run": "ours (simulated)",
                "AUC": row["auc"],
                "Brier score": row["brier"],
                "Bayes-optimal AUC": row["bayes_auc"],
                "Bayes-optimal Brier": row["bayes_brier"],
                "training rows": float(row["n_train"]),
                "training s": row["seconds"],
                "rows / s": row["rows_per_second"],
                "s for 5M rows": ours_at_5m,
                "ours / paper (5M)": ours_at_5m / PAPER_BIGDATA["seconds"],
                "peak memory MiB": row["peak_memory_mb"],
                "of which at start MiB": row.get("memory_at_start_mb", np.nan),
            },
            {
                "run": "paper (SUSY)",
                "AUC": PAPER_BIGDATA["auc"],
                "Brier score": PAPER_BIGDATA["brier"],
                "Bayes-optimal AUC": np.nan,
                "Bayes-optimal Brier": np.nan,
                "training rows": float(PAPER_BIGDATA["n"]),
                "training s": PAPER_BIGDATA["seconds"],
                "rows / s": paper_rate,
                "s for 5M rows": PAPER_BIGDATA["seconds"],
                "ours / paper (5M)": 1.0,
                "peak memory MiB": np.nan,
                "of which at start MiB": np.nan,
            },
        ]
    )
