"""What the commands of ``bayesvm`` share: one-line errors (:class:`CommandError`), the types
of their arguments, reading their input files and checking, before any work, that their
output files can be written.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import bayesvm
from bayesvm.files import check_name_length

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CommandError",
    "read_rows",
    "read_fit",
    "check_names",
    "check_output_file",
    "write_beside",
    "refuse_input_as_output",
    "check_image_format",
    "check_output_folder",
    "name_list",
    "thread_counts",
    "sizes",
    "positive_int",
    "non_negative_int",
    "probability",
    "finite_float",
    "FORMER_PRIORS",
    "current_spelling",
]

#: ``--prior`` spellings before 0.3.0 (``fit`` and ``bench``).
FORMER_PRIORS = {"gaussian-slab": "gaussian_slab", "laplace-zero": "laplace_zero"}


def current_spelling(option: str, given, former: dict):
    """``given``, or its new spelling where ``former`` has it (warning, ``FutureWarning``,
    that the old one goes in 0.4.0).
    """
    if given not in former:
        return given
    warnings.warn(
        f"--{option} {given} is now {former[given]}; the old name goes in 0.4.0",
        FutureWarning,
        stacklevel=2,
    )
    return former[given]


class CommandError(Exception):
    """Bad input to a command: reported in one line with exit status 2, no traceback."""


def read_rows(path: Path) -> pd.DataFrame:
    """The rows of the CSV file ``path``; :class:`CommandError` if it has none."""
    import pandas as pd

    try:
        data = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise CommandError(f"{path} is empty: expected a CSV file with a header row") from None
    if data.empty:
        raise CommandError(f"{path} has a header but no rows of data")
    # pandas renames a repeated column name (x1, x1.1): the header as written must be unique
    header = pd.read_csv(path, header=None, nrows=1, dtype=str).iloc[0].tolist()
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise CommandError(f"{path}: the header names the columns {repeated} more than once")
    return data


def read_fit(path: Path) -> bayesvm.Fit:
    """The fit saved by ``bayesvm fit`` in ``path`` (:func:`bayesvm.load`); :class:`CommandError`
    naming ``path`` if it is not one, or is cut short, or of a newer bayesvm.
    """
    if not path.is_file():
        raise CommandError(f"{path}: no such file" if not path.exists() else f"{path} is a folder")
    try:
        return bayesvm.load(path)
    except ValueError as error:
        raise CommandError(error) from error
    except OSError as error:  # permission denied, ...
        raise CommandError(f"{path} cannot be read: {error.strerror or error}") from error


def check_names(path: Path, option: str) -> None:
    """Refuse an output path with a name longer than the system takes, before anything
    else looks at it (where ``Path.exists`` itself raises).
    """
    try:
        check_name_length(path)
    except OSError as error:
        raise CommandError(f"{option} {path}: {error.strerror}") from error


def check_output_file(path: Path, option: str) -> None:
    """Check that the file ``path`` can be written, its missing folders created (they are
    made when it is written, by :func:`write_beside`).
    """
    check_names(path, option)
    if path.is_dir():
        raise CommandError(f"{option} {path} is a folder; give a file name in it")
    if path.exists() and not path.is_file():  # written by renaming a new file onto it
        raise CommandError(f"{option} {path} is not a regular file (a device, a pipe, ...)")
    check_output_folder(path.parent, f"{option} {path}")
    if path.exists() and not os.access(path, os.W_OK):
        raise CommandError(f"{option} {path} is not writable")


def write_beside(path: Path) -> Path:
    """``path``, its missing folders made (checked by :func:`check_output_file`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def refuse_input_as_output(path: Path, option: str, inputs) -> None:
    """Refuse an output file ``path`` that is one of the ``inputs``: writing it would replace
    the data it is made from.
    """
    for given in inputs:
        if path.exists() and given.exists() and os.path.samefile(path, given):
            raise CommandError(
                f"{option} {path} is the input file {given}: writing it would replace the "
                "input; give another file name"
            )


def check_image_format(path: Path) -> None:
    """Refuse an image file whose suffix matplotlib cannot write, before any work."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in formats:
        problem = f"matplotlib writes no .{suffix} images" if suffix else "the name has no suffix"
        raise CommandError(
            f"--plot {path}: {problem}; end the name in one of "
            + ", ".join(f".{name}" for name in sorted(formats))
        )


def check_output_folder(path: Path, given: str) -> None:
    """Check that the folder ``path`` exists, or can be created, and can be written;
    ``given`` names the option in the error message. Where it is missing, a folder of a new
    name is made in its nearest existing folder, to see that one can be (a pseudo-file system
    such as ``/proc`` refuses), and removed at once: nothing is left before the command's own
    checks pass.
    """
    existing = next(folder for folder in [path, *path.parents] if folder.exists())
    if not existing.is_dir():
        raise CommandError(f"{given}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CommandError(f"{given}: cannot write in {existing}")
    if existing == path:
        return
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".bayesvm-", dir=existing))
    except OSError as error:
        raise CommandError(
            f"{given}: cannot create folders in {existing}: {error.strerror}"
        ) from None


def name_list(text: str) -> list[str]:
    """Comma-separated names, none empty or given twice."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names; got {text!r}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"{', '.join(repeated)} given more than once in {text!r}")
    return names


def thread_counts(text: str) -> list[int]:
    """Comma-separated positive thread counts."""
    return [positive_int(count) for count in name_list(text)]


def sizes(text: str) -> list[tuple[int, int]]:
    """Comma-separated problem sizes ``NxD``."""
    sizes = []
    for size in name_list(text):
        try:
            n_samples, n_features = (positive_int(part) for part in size.lower().split("x"))
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(
                f"size {size!r} is not NxD with positive N and D, e.g. 200x10"
            ) from None
        sizes.append((n_samples, n_features))
    return sizes


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _integer(text, minimum=1, expected="a positive integer")


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    return _integer(text, minimum=0, expected="an integer >= 0")


def _integer(text: str, minimum: int, expected: str) -> int:
    return _parsed(text, int, lambda value: value >= minimum, expected)


def finite_float(text: str) -> float:
    """A finite number."""
    return _parsed(text, float, math.isfinite, "a finite number")


def probability(text: str) -> float:
    """A number strictly between 0 and 1."""
    return _parsed(text, float, lambda value: 0.0 < value < 1.0, "a probability between 0 and 1")


def _parsed(text: str, kind, allowed, expected: str):
    """``text`` read as ``kind``, refused unless ``allowed`` (``expected`` says what is)."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not allowed(value):
        raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}")
    return value
