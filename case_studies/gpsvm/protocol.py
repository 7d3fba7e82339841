"""The design of Wenzel et al. (2017) section 5 (:mod:`bayesvm.case_studies.gpsvm`): its data
sets and methods, the paper's published numbers, the sizes of the experiments
(:class:`Protocol`) and the pooled rows and folds every experiment draws from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold

from bayesvm.case_studies.runner import task_seed
from bayesvm.data import load_benchmark

__all__ = [
    "DATASETS",
    "COMPARED",
    "EXPERIMENTS",
    "METHODS",
    "METHOD_LABELS",
    "PAPER_TABLE_1",
    "PAPER_N",
    "PAPER_LENGTHSCALES",
    "PAPER_MACHINE",
    "PAPER_MLII_SECONDS",
    "DEFAULT_SEED",
    "OUTPUT_FILES",
    "Protocol",
    "PAPER_PROTOCOL",
    "QUICK_PROTOCOL",
    "pooled_rows",
    "cv_folds",
    "folds_of",
    "inducing_count",
]

#: The Rätsch data sets of our Table 1: those of the paper's that are bundled, and banana.
DATASETS = ("breast_cancer", "heart", "banana", "waveform")
#: The methods of Table 1.
COMPARED = ("svi", "vb", "ecm", "gpc", "svm")
#: The other experiments, chosen like methods: Figures 1-3 and section 5.2.
EXPERIMENTS = ("runtime", "mlii", "inducing", "bigdata")
METHODS = (*COMPARED, *EXPERIMENTS)
METHOD_LABELS = {
    "svi": "S-BSVM",
    "vb": "B-BSVM",
    "ecm": "ECM",
    "gpc": "GPC",
    "svm": "SVM + Platt",
    "runtime": "error against training time (Figure 1)",
    "mlii": "ML-II against grid search (Figure 2)",
    "inducing": "inducing points (Figure 3)",
    "bigdata": "SUSY-sized data (section 5.2)",
}
#: Table 1: (error mean, sd, Brier score mean, sd, seconds per fit) by data set and method;
#: the paper has no banana row and no B-BSVM column.
PAPER_TABLE_1 = {
    "breast_cancer": {
        "svi": (0.26, 0.07, 0.18, 0.03, 0.32),
        "ecm": (0.27, 0.10, 0.19, 0.05, 1.4),
        "gpc": (0.27, 0.07, 0.18, 0.03, 6.7),
        "svm": (0.27, 0.09, 0.19, 0.04, 0.04),
    },
    "heart": {
        "svi": (0.16, 0.06, 0.13, 0.04, 0.34),
        "ecm": (0.19, 0.09, 0.14, 0.04, 2.2),
        "gpc": (0.16, 0.06, 0.12, 0.03, 6.0),
        "svm": (0.17, 0.07, 0.12, 0.04, 0.04),
    },
    "waveform": {
        "svi": (0.09, 0.02, 0.06, 0.01, 12.5),
        "ecm": (0.10, 0.02, 0.15, 0.01, 264.0),
        "gpc": (0.10, 0.02, 0.06, 0.01, 8691.0),
        "svm": (0.10, 0.02, 0.06, 0.01, 2.3),
    },
}
#: Table 1's n (breast cancer: the distinct rows of the 277 distributed).
PAPER_N = {"breast_cancer": 263, "heart": 270, "waveform": 5000}
#: Lengthscales the paper states: waveform's (section 5.3), used in place of ML-II.
PAPER_LENGTHSCALES = {"waveform": 5.0}
#: Section 5: where the paper's times were taken.
PAPER_MACHINE = "one CPU core at 2.9 GHz (386 GB RAM)"
#: Section 5.4: ML-II tuning took 0.3 s, the grid search (1000 lengthscales, 10 folds) 188 s.
PAPER_MLII_SECONDS = {"ml-ii": 0.3, "grid": 188.0}
DEFAULT_SEED = 2017
OUTPUT_FILES = (
    "gpsvm_lengthscale.csv",
    "gpsvm.csv",
    "gpsvm_runtime.csv",
    "gpsvm_runtime.png",
    "gpsvm_mlii.csv",
    "gpsvm_mlii.png",
    "gpsvm_inducing.csv",
    "gpsvm_inducing.png",
    "gpsvm_bigdata.csv",
    "report.md",
)
# First entries of the task seeds.
_ROWS, _FOLDS, _LENGTHSCALE, _FITS, _RUNTIME, _MLII, _INDUCING, _BIGDATA = range(8)


@dataclass(frozen=True)
class Protocol:
    """Sizes and settings of the experiments.

    Attributes
    ----------
    n_folds : int
        Folds of the cross-validation of Table 1 (stratified, shuffled).
    n_rows : int or None
        A random subset of this many pooled rows of each data set (a smoke test); None keeps
        them all.
    batch_size : int
        S-BSVM's minibatch (section 5.1: 10).
    svi_max_iter : int or None
        Steps of S-BSVM (None: its own stopping rule).
    inducing_fraction : float
        S-BSVM's inducing points as a share of the training rows (section 5.1: 20%).
    inducing_fixed : tuple of (str, int)
        Data sets with a fixed number of inducing points instead (section 5.1: waveform 100;
        banana, not in the paper, likewise, where 20% would be 954).
    full_gp_max_n : int
        Largest training part fitted with the full GP (B-BSVM) and by ECM.
    gpc_max_n : int
        Largest training part fitted by the GP classifier.
    mlii_hyper_every : int
        Variational steps between two hyperparameter steps of ML-II (section 5.4: 10).
    mlii_max_iter : int or None
        Steps of the ML-II fits (None: their own stopping rule).
    svm_log2_C : tuple of int
        The SVM's grid of ``C = 2**log2_C``.
    svm_folds : int
        Folds of its inner cross-validation.
    runtime_svi_steps, runtime_vb_iterations, runtime_train_rows : tuple of int
        Figure 1's budgets: S-BSVM's steps, B-BSVM's iterations, and the training rows of
        GPC and the SVM (capped at the training part).
    mlii_dataset : str
        Data set of Figure 2.
    mlii_grid : tuple of (float, float, int)
        Figure 2's lengthscales: ``numpy.geomspace(low, high, points)``.
    inducing_counts : tuple of int
        Figure 3's numbers of inducing points (capped at the training part).
    inducing_folds : int
        Folds of Figure 3's cross-validation used (the first ones of ``n_folds``).
    bigdata_rows, bigdata_test_rows : int
        Training and held-out rows of the simulated SUSY-sized data.
    bigdata_features : int
        Its features (SUSY has 18).
    bigdata_chunk : int
        Rows per chunk on disk.
    bigdata_inducing, bigdata_batch : int
        Inducing points and minibatch of its fit (section 5.2: 64 and 100).
    bigdata_mlii_rows : int
        Rows of the ML-II fit that chooses its kernel (not counted in the training time, as
        in the paper's footnote 7).
    """

    n_folds: int = 10
    n_rows: int | None = None
    batch_size: int = 10
    svi_max_iter: int | None = None
    inducing_fraction: float = 0.2
    inducing_fixed: tuple[tuple[str, int], ...] = (("banana", 100), ("waveform", 100))
    full_gp_max_n: int = 1000
    gpc_max_n: int = 5000
    mlii_hyper_every: int = 10
    mlii_max_iter: int | None = None
    svm_log2_C: tuple[int, ...] = tuple(range(-5, 16, 2))
    svm_folds: int = 5
    runtime_svi_steps: tuple[int, ...] = (10, 30, 100, 300, 1000, 3000, 10000)
    runtime_vb_iterations: tuple[int, ...] = (1, 2, 3, 5, 10, 20, 50)
    runtime_train_rows: tuple[int, ...] = (250, 500, 1000, 2000, 4500)
    mlii_dataset: str = "heart"
    mlii_grid: tuple[float, float, int] = (0.5, 50.0, 25)
    inducing_counts: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
    inducing_folds: int = 3
    bigdata_rows: int = 5_000_000
    bigdata_test_rows: int = 100_000
    bigdata_features: int = 18
    bigdata_chunk: int = 250_000
    bigdata_inducing: int = 64
    bigdata_batch: int = 100
    bigdata_mlii_rows: int = 20_000


#: Section 5's protocol (see :class:`Protocol` for the choices the paper leaves open).
PAPER_PROTOCOL = Protocol()
#: A smoke test: 100 rows of each data set, 2 folds, short budgets, 50,000 simulated rows.
QUICK_PROTOCOL = Protocol(
    n_folds=2,
    n_rows=100,
    svi_max_iter=200,
    inducing_fixed=(),
    mlii_max_iter=200,
    svm_log2_C=(-1, 3),
    svm_folds=2,
    runtime_svi_steps=(10, 100),
    runtime_vb_iterations=(1, 5),
    runtime_train_rows=(25, 50),
    mlii_grid=(1.0, 10.0, 3),
    inducing_counts=(4, 8),
    inducing_folds=2,
    bigdata_rows=50_000,
    bigdata_test_rows=5_000,
    bigdata_chunk=10_000,
    bigdata_mlii_rows=2_000,
)


def pooled_rows(name: str, protocol: Protocol, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The pooled rows of the data set ``name``, over which Table 1 cross-validates.

    Rätsch's realisations are partitions of the same rows; the paper's 10-fold
    cross-validation pools them. Exact duplicate rows ``(x, y)`` are dropped (first ones
    kept, in file order): breast_cancer's 277 rows hold 263 distinct ones, the paper's n; the
    other data sets have none. With ``protocol.n_rows`` a random subset of that many rows is
    kept, drawn from ``(seed, 0, data set)``.
    """
    X, y, _ = load_benchmark(name)
    _, first = np.unique(np.column_stack([X, y]), axis=0, return_index=True)
    keep = np.sort(first)
    if protocol.n_rows is not None and protocol.n_rows < keep.size:
        rng = np.random.default_rng(task_seed(seed, _ROWS, DATASETS.index(name)))
        keep = np.sort(rng.choice(keep, size=protocol.n_rows, replace=False))
    return X[keep], y[keep]


def cv_folds(y, n_folds: int, seed) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified, shuffled ``n_folds``-fold cross-validation of ``y``: (train, test) row
    indices of each fold, seeded by the :class:`numpy.random.SeedSequence` or int ``seed``.
    """
    random_state = int(np.random.default_rng(seed).integers(2**31 - 1))
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    return list(splitter.split(np.zeros((len(y), 1)), y))


def folds_of(name: str, protocol: Protocol, seed: int):
    """The pooled rows of ``name`` (:func:`pooled_rows`) and their cross-validation folds
    (:func:`cv_folds`), seeded from ``(seed, 1, data set)``.
    """
    X, y = pooled_rows(name, protocol, seed)
    folds = cv_folds(y, protocol.n_folds, task_seed(seed, _FOLDS, DATASETS.index(name)))
    return X, y, folds


def inducing_count(name: str, n_train: int, protocol: Protocol) -> int:
    """S-BSVM's inducing points: ``protocol.inducing_fixed`` for ``name`` if given, else
    ``inducing_fraction`` of the training rows (at least 1), never more than ``n_train``.
    """
    fixed = dict(protocol.inducing_fixed).get(name)
    count = fixed if fixed is not None else round(protocol.inducing_fraction * n_train)
    return int(min(max(count, 1), n_train))
