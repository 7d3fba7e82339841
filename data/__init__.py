"""Bundled real data sets (see ``PROVENANCE.md`` beside this module) and their loaders."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_heart", "load_toenail", "load_spam", "load_cardiac", "data_path"]


def data_path(name: str):
    """Path of a bundled file, e.g. ``data_path("heart.csv")``."""
    return resources.files("bayesvm.data").joinpath(name)


def load_heart() -> pd.DataFrame:
    """Rätsch's ``heart`` benchmark (Statlog heart disease): 270 rows, features ``x1..x13``
    (already normalised by the benchmark authors) and label ``y`` in {-1, +1}.
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
