"""Bundled real data sets (see ``PROVENANCE.md`` beside this module) and their loaders."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pandas as pd

__all__ = [
    "load_heart",
    "load_toenail",
    "load_spam",
    "load_cardiac",
    "load_benchmark",
    "BENCHMARKS",
    "data_path",
]

#: Rätsch's benchmark data sets bundled with their train/test splits (``load_benchmark``).
BENCHMARKS = ("ringnorm", "twonorm", "waveform", "heart", "breast_cancer", "banana")


def data_path(name: str):
    """Path of a bundled file, e.g. ``data_path("heart.csv")``."""
    return resources.files("bayesvm.data").joinpath(name)


def load_heart() -> pd.DataFrame:
    """Rätsch's ``heart`` benchmark (Statlog heart disease): 270 rows, features ``x1..x13``
    (already normalised by the benchmark authors) and label ``y`` in {-1, +1}; with its
    splits from ``load_benchmark("heart")``.
    """
    with data_path("heart.csv").open() as handle:
        return pd.read_csv(handle)


def load_toenail() -> pd.DataFrame:
    """De Backer et al. (1998) toenail trial (``HSAUR3::toenail``), the data of Luts-Ormerod
    section 4.3: 1908 visits of 294 patients, as bundled (strings kept as they are).

    Returns
    -------
    pandas.DataFrame
        Columns, in file order:

        * ``patientID`` (int): patient identifier, not consecutive (1 to 383);
        * ``outcome`` (str): dichotomised onycholysis, ``"none or mild"`` (1500 rows) or
          ``"moderate or severe"`` (408 rows);
        * ``treatment`` (str): ``"itraconazole"`` (200 mg/day) or ``"terbinafine"``
          (250 mg/day);
        * ``time`` (float): months since baseline at which the visit actually took place;
        * ``visit`` (int): number of the visit attended, 1 to 7 (planned at weeks 0, 4, 8,
          12, 24, 36 and 48).
    """
    with data_path("toenail.csv").open() as handle:
        return pd.read_csv(handle)


def load_spam() -> pd.DataFrame:
    """UCI Spambase (``kernlab::spam``), the data of Luts-Ormerod section 4.4 and Polson-Scott
    section 5: 4601 e-mails, 57 predictors and the label ``type`` (``"spam"``: 1813 rows,
    ``"nonspam"``: 2788), spam rows first.

    Returns
    -------
    pandas.DataFrame
        48 word frequencies (``make`` ... ``conference``, percentages of words; ``numXXX`` is
        the token "XXX"), 6 character frequencies (``charSemicolon`` ... ``charHash``),
        ``capitalAve``, ``capitalLong`` and ``capitalTotal`` (runs of capital letters), and
        ``type``. Unstandardised: both papers standardise the predictors before fitting.
    """
    with data_path("spam.csv").open() as handle:
        return pd.read_csv(handle)


def load_cardiac() -> pd.DataFrame:
    """Duke cardiac catheterization data (Harrell's ``acath``), the data of Luts-Ormerod
    section 4.5: 3504 patients referred for chest pain, with cholesterol missing for 1246.

    Returns
    -------
    pandas.DataFrame
        Columns, in file order:

        * ``sex`` (int): 0 = male (2405 rows), 1 = female (1099);
        * ``age`` (int): age in years;
        * ``cad.dur`` (int): duration of symptoms of coronary artery disease, in days (0 for
          123 patients);
        * ``choleste`` (float): serum cholesterol in mg/dl, NaN where missing (1246 rows);
        * ``sigdz`` (int): significant coronary disease found by catheterization (1: 2334
          rows, 0: 1170), the outcome of section 4.5;
        * ``tvdlm`` (float): three-vessel or left main disease (1 = yes, 0 = no), NaN for 3
          rows; not used by the paper.
    """
    with data_path("acath.csv").open() as handle:
        return pd.read_csv(handle)


def load_benchmark(name: str) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """One of Rätsch's benchmark data sets (Rätsch, Onoda & Müller 2001) with its bundled
    train/test splits, as used by Zhang et al. (2010) section 4.2 (Table 1) and Wenzel et al.
    (2017) section 5.1 (Table 1).

    Parameters
    ----------
    name : {"ringnorm", "twonorm", "waveform", "heart", "breast_cancer", "banana"}
        ``ringnorm`` and ``twonorm``: 7400 rows, 20 features, 400 training and 7000 test rows
        per split; ``waveform``: 5000 rows, 21 features, 400 training and 4600 test rows;
        ``heart``: 270 rows, 13 features, 170 / 100; ``breast_cancer``: 277 rows (263
        distinct), 9 features, 200 / 77; ``banana``: 5300 rows, 2 features, 400 / 4900.

    Returns
    -------
    X : ndarray of shape (n_rows, n_features)
        Features as distributed (the benchmark authors normalised them once, over all rows).
    y : ndarray of int, shape (n_rows,)
        Labels in {-1, +1}.
    splits : list of (train, test)
        The bundled realisations in the order of their numbers: 10 for each data set but
        ``twonorm``, which has only realisation 1 (see ``PROVENANCE.md``). Each is a
        pair of sorted 0-based row indices; as in the benchmark, the test part is every row
        not in the training part.
    """
    if name not in BENCHMARKS:
        raise ValueError(f"name must be one of {BENCHMARKS}; got {name!r}")
    with data_path(f"{name}.csv").open() as handle:
        frame = pd.read_csv(handle)
    with data_path(f"{name}_splits.json").open() as handle:
        stored = json.load(handle)
    splits = [
        (np.sort(stored["train"][str(k)]), np.sort(stored["test"][str(k)]))
        for k in stored["realisations"]
    ]
    X = frame.drop(columns="y").to_numpy(dtype=float)
    return X, frame["y"].to_numpy(dtype=int), splits
