"""Files that appear whole or not at all, and folders that one run uses at a time.

Every file bayesvm writes (netCDF fits, CSV results, JSON settings, markdown reports, PNG
figures) goes through :func:`atomic_path`: the writer fills a temporary file beside the target,
which is flushed to disk and then renamed onto it with :func:`os.replace`, the idea of pip's
``adjacent_tmp_file`` and ``replace`` (``pip/_internal/utils/filesystem.py``). A rename within
one folder is atomic, so a reader, or a run killed midway, finds the old file or the new one,
never a part of either. :func:`write_text`, :func:`write_csv` and :func:`save_figure` are the
writers bayesvm uses.

A case study's output folder is held by :func:`locked_folder` while a run writes it: a lock file
inside it, created with ``O_CREAT | O_EXCL`` (only one process can create it), records who holds
it, so that a second run into the folder stops at once with :class:`FolderInUseError` instead
of mixing its rows with the first run's.

This module imports the standard library only: ``import bayesvm`` stays fast.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import socket
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

__all__ = [
    "atomic_path",
    "write_text",
    "write_csv",
    "save_figure",
    "check_name_length",
    "locked_folder",
    "check_free",
    "FolderInUseError",
    "LOCK_FILE_NAME",
    "earlier_run_files",
    "EarlierResultsError",
    "SETTINGS_SUFFIX",
    "REPORT_NAME",
]

#: The lock file that :func:`locked_folder` creates in the folder it holds.
LOCK_FILE_NAME = ".bayesvm.lock"
#: What a run writes into its folder first, beside each of its CSVs of results (what the rows
#: depend on), and last (its report): :func:`earlier_run_files` looks for them.
SETTINGS_SUFFIX, REPORT_NAME = ".settings.json", "report.md"
# How long a lock file without a record is given to receive it (it is written right after it
# is created) before it counts as unreadable, and how often it is read meanwhile.
_RECORD_WAIT_S, _RECORD_POLL_S = 1.0, 0.05
# Characters of a long target's name kept in its temporary file's, which adds 18 to them
# (``.``, ``.1a2b3c4d.tmp`` and the suffix again): names may have 255 bytes on most systems.
_NAME_KEPT = 200


@contextmanager
def atomic_path(path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends, it becomes ``path``.

    The temporary file has a unique name in the target's folder and ends in the target's
    suffix (``.png``, ``.nc``, ...), so that writers choosing their format by the suffix
    (matplotlib, h5netcdf) choose the target's. When the block completes, the file is
    synced to disk and renamed onto ``path`` at once; when it raises (KeyboardInterrupt
    included), the temporary file is removed and ``path``, if it existed, is left as it was.

    Parameters
    ----------
    path : str or path-like
        The file to write; its folder must exist.

    Yields
    ------
    pathlib.Path
        The temporary file (created empty) for the writer to fill by its path.

    Examples
    --------
    >>> with atomic_path("fit.nc") as temporary:  # doctest: +SKIP
    ...     idata.to_netcdf(temporary)
    """
    target = Path(path)
    check_name_length(target)
    if target.is_dir():
        raise IsADirectoryError(
            errno.EISDIR, "is a folder, not a file: give a file name", os.fspath(path)
        )
    if target.exists() and not target.is_file():  # a device or a pipe: the rename would replace it
        raise OSError(
            errno.EEXIST, "is not a regular file (a device, a pipe, ...): give a file name",
            os.fspath(path),
        )  # fmt: skip
    try:
        temporary = _create_unique(target)
    except OSError as error:
        raise _about_target(error, path) from None
    try:
        yield temporary
        _sync(temporary)
        os.replace(temporary, target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError) and temporary.name in f"{error} {error.filename}":
            raise _about_target(error, path) from error
        raise


def write_text(path, text: str, *, newline: str | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (:func:`atomic_path`).

    ``newline`` is that of :func:`open`: ``""`` writes line endings as they are in ``text``.
    """
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8", newline=newline)


def write_csv(frame, path, **kwargs) -> None:
    """``frame.to_csv(path, **kwargs)`` whole or not at all (:func:`atomic_path`)."""
    with atomic_path(path) as temporary:
        frame.to_csv(temporary, **kwargs)


def save_figure(figure, path, **kwargs) -> None:
    """``figure.savefig(path, **kwargs)`` whole or not at all (:func:`atomic_path`); the
    format comes from the suffix of ``path`` unless ``format`` is given.
    """
    with atomic_path(path) as temporary:
        figure.savefig(temporary, **kwargs)


class FolderInUseError(RuntimeError):
    """A folder is held by another run (:func:`locked_folder`).

    Attributes
    ----------
    folder : pathlib.Path
        The folder asked for.
    holder : dict
        The lock file's record of the run holding it: ``pid``, ``hostname``, ``command``
        (its command line) and ``started`` (ISO 8601); empty when the file cannot be read.
    reason : str
        One line saying who holds the folder, without advice: the command line adds its own
        (``choose another --out``).
    """

    def __init__(self, folder, holder: dict):
        self.folder = Path(folder)
        self.holder = dict(holder)
        if holder:
            self.reason = f"{folder} is in use by {_describe(holder)}"
        else:
            lock = self.folder / LOCK_FILE_NAME
            self.reason = (
                f"{folder} is in use by another run: its lock file {lock} cannot be read (delete "
                "it if no run uses the folder)"
            )
        super().__init__(f"{self.reason}; wait for it or choose another folder")


@contextmanager
def locked_folder(path) -> Iterator[Path]:
    """Create the folder ``path`` if needed and hold it, against other processes, in the block.

    The lock is the file :data:`LOCK_FILE_NAME` in the folder, created with ``O_CREAT |
    O_EXCL`` and holding JSON: this process's ``pid``, ``hostname``, ``command`` (command line)
    and ``started`` time. It is removed when the block ends, also on an error or Ctrl-C. A lock
    whose process no longer runs on this host (killed with ``kill -9``, or the machine
    restarted) is taken over with a warning. A lock of another host counts as held, since its
    process cannot be checked from here; so does a lock file that cannot be read.

    Parameters
    ----------
    path : str or path-like
        The folder.

    Yields
    ------
    pathlib.Path
        The folder.

    Raises
    ------
    FolderInUseError
        When another process (or another block of this one) holds the folder.

    Warns
    -----
    UserWarning
        When a lock left by a process that no longer runs is taken over.

    Notes
    -----
    A lock is stale when ``os.kill(pid, 0)`` (POSIX) finds no process of its pid; should the
    system have given that pid to another process since, the lock counts as held (the message
    names the command line it records, so that one can tell).
    """
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / LOCK_FILE_NAME
    record = json.dumps(
        {
            "pid": os.getpid(),
            "hostname": socket.gethostname(),
            "command": _command_line(),
            "started": datetime.now().astimezone().isoformat(timespec="seconds"),
        }
    )
    _acquire(lock, record)
    try:
        yield folder
    finally:
        _release(lock, record)


def _about_target(error: OSError, path) -> OSError:
    """``error``, raised while writing the temporary file of ``path``, as an error about
    ``path`` itself (the temporary file's name would mean nothing to the user).
    """
    return type(error)(error.errno, error.strerror or str(error), os.fspath(path))


def check_name_length(path) -> None:
    """Raise the system's "File name too long" (``OSError``, before any writing) where a name
    in ``path`` is longer than its file system takes (``NAME_MAX``, typically 255 bytes), or
    the whole path (``PATH_MAX``, typically 4096); unchecked where the system does not say.
    """
    path = Path(path)
    limits = _path_limits(path)
    if limits is None:
        return
    longest_name, longest_path = limits
    too_long = [name for name in path.parts if len(os.fsencode(name)) > longest_name]
    whole = len(os.fsencode(os.path.abspath(path)))
    if too_long or whole >= longest_path:
        said = (
            f"{len(os.fsencode(too_long[0]))} bytes in one name, at most {longest_name}"
            if too_long
            else f"{whole} bytes in all, at most {longest_path - 1}"
        )
        raise OSError(
            errno.ENAMETOOLONG, f"{os.strerror(errno.ENAMETOOLONG)} ({said})", os.fspath(path)
        )


def _path_limits(path: Path) -> tuple[int, int] | None:
    """``(NAME_MAX, PATH_MAX)`` of the file system of the folder nearest to ``path`` that
    exists, or None where the system does not say.
    """
    for folder in [path.parent, *path.parents]:
        try:
            return os.pathconf(folder, "PC_NAME_MAX"), os.pathconf(folder, "PC_PATH_MAX")
        except OSError as error:
            if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
                continue  # not there (nor can be): its parent's file system is the one
            return None
        except (AttributeError, ValueError):  # no pathconf, or no such limit, here
            return None
    return None


def check_free(path) -> None:
    """Raise :class:`FolderInUseError` if another run holds the folder ``path``
    (:func:`locked_folder`): a look, which takes nothing (a stale lock is left for
    :func:`locked_folder` to take over), so that a command can refuse before its imports.
    """
    lock = Path(path) / LOCK_FILE_NAME
    try:
        _, holder = _read_record(lock)
    except (FileNotFoundError, NotADirectoryError):
        return
    if holder is None or _is_running(holder):
        raise FolderInUseError(path, holder or {})


class EarlierResultsError(FileExistsError):
    """A run was asked to start in a folder that holds an earlier run's results, which it
    would write over (:func:`earlier_run_files`).

    Attributes
    ----------
    folder : pathlib.Path
    files : list of str
        The earlier run's settings files and report found there.
    """

    def __reduce__(self):
        return type(self), (self.folder, self.files)

    def __init__(self, folder, files: list[str]):
        self.folder, self.files = Path(folder), list(files)
        super().__init__(
            f"{folder} holds the results of an earlier run ({', '.join(self.files)}), which a new "
            "run would write over"
        )


def earlier_run_files(path) -> list[str]:
    """The names of the files in the folder ``path`` that show an earlier run's results: the
    settings beside each CSV (``*.settings.json``, written before any task runs) and the
    report (:data:`REPORT_NAME`, written last); empty for a new folder.
    """
    folder = Path(path)
    if not folder.is_dir():
        return []
    found = sorted(candidate.name for candidate in folder.glob(f"*{SETTINGS_SUFFIX}"))
    return found + [REPORT_NAME] * (folder / REPORT_NAME).is_file()


def _create_unique(target: Path) -> Path:
    """Create an empty file of a new name beside ``target``, ending in its suffix (the name
    shortened where the target's is long, so that it fits wherever the target's does).
    """
    stem = target.name[: _NAME_KEPT - len(target.suffix)] if len(target.name) > _NAME_KEPT else ""
    stem = stem or target.name
    while True:
        candidate = target.with_name(f".{stem}.{os.urandom(4).hex()}.tmp{target.suffix}")
        try:  # mode 0o666 less the umask, as for a file that open() creates
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            continue
        return candidate


def _sync(path: Path) -> None:
    """Flush the data of the file ``path`` to disk (the writer has closed it)."""
    descriptor = os.open(path, os.O_RDWR)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _acquire(lock: Path, record: str) -> None:
    """Create ``lock`` holding ``record``, taking over a stale lock; else FolderInUseError."""
    while True:
        try:
            descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            _take_over_if_stale(lock)
            continue
        try:
            os.write(descriptor, record.encode())
            os.fsync(descriptor)
        except BaseException:
            lock.unlink(missing_ok=True)
            raise
        finally:
            os.close(descriptor)
        return


def _take_over_if_stale(lock: Path) -> None:
    """Remove ``lock`` if its process no longer runs; FolderInUseError if it does.

    The stale lock is first renamed to a name of this process's own, so that of two processes
    taking it over at once only one removes it: the other finds it gone, or finds (and puts
    back) the new lock created meanwhile, and tries again.
    """
    try:
        text, holder = _read_record(lock)
    except FileNotFoundError:  # released meanwhile: try again
        return
    if holder is None or _is_running(holder):
        raise FolderInUseError(lock.parent, holder or {})
    claimed = lock.with_name(f"{lock.name}.{os.getpid()}.stale")
    try:
        os.replace(lock, claimed)
    except FileNotFoundError:
        return
    if claimed.read_text() != text:
        os.replace(claimed, lock)
        return
    claimed.unlink()
    warnings.warn(
        f"{lock.parent} was locked by {_describe(holder)}, which no longer runs: taking it over",
        stacklevel=5,
    )


def _release(lock: Path, record: str) -> None:
    """Remove ``lock`` if it still holds this run's ``record``."""
    try:
        if lock.read_text() == record:
            lock.unlink()
    except FileNotFoundError:
        pass


def _read_record(lock: Path) -> tuple[str, dict | None]:
    """The text of ``lock`` and its record (None if it has none after :data:`_RECORD_WAIT_S`
    seconds: its process died before writing it, or it was edited).
    """
    deadline = time.monotonic() + _RECORD_WAIT_S
    while True:
        text = lock.read_text()
        holder = _parse_record(text)
        if holder is not None or time.monotonic() > deadline:
            return text, holder
        time.sleep(_RECORD_POLL_S)


def _parse_record(text: str) -> dict | None:
    """The lock file's record, or None if it is not one (empty, cut short, edited)."""
    try:
        holder = json.loads(text)
        datetime.fromisoformat(holder["started"])
    except (ValueError, TypeError, KeyError):
        return None
    expected = {"pid": int, "hostname": str, "command": str}
    if not all(isinstance(holder.get(key), kind) for key, kind in expected.items()):
        return None
    return holder


def _is_running(holder: dict) -> bool:
    """Whether the lock's process may still run: on this host, whether its pid exists."""
    if holder["hostname"] != socket.gethostname():
        return True
    try:
        os.kill(int(holder["pid"]), 0)  # signal 0: nothing is sent, the pid is only checked
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user
        return True
    return True


def _describe(holder: dict) -> str:
    """``process 1234 (bayesvm reproduce ...), started 18:02:11`` (with the date and host
    where they are not today's and this one's).
    """
    started = datetime.fromisoformat(holder["started"])
    shown = "%H:%M:%S" if started.date() == datetime.now().date() else "%Y-%m-%d %H:%M:%S"
    host = "" if holder["hostname"] == socket.gethostname() else f" on {holder['hostname']}"
    return f"process {holder['pid']}{host} ({holder['command']}), started {started.strftime(shown)}"


def _command_line() -> str:
    """The command line of this process as typed: ``bayesvm reproduce simulated --out x``."""
    program, *arguments = sys.argv or [""]
    words = ["python", program] if program in ("", "-c") else [os.path.basename(program)]
    return shlex.join([word for word in words if word] + arguments)
