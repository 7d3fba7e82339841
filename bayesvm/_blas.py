"""Choose the BLAS that PyTensor's C code links to, so that NUTS runs at full speed.

PyMC compiles NUTS's log density and gradient to C through PyTensor, whose matrix products call
the BLAS named by ``pytensor.config.blas__ldflags``. Left to itself, PyTensor 2.38 considers only
unversioned development files (``libopenblas.so``, ``libblas.so``), so on the many machines with
just the runtime library (``libopenblas.so.0``, which R, Octave and others install) it finds
nothing, and where it finds nothing it warns at length. :func:`pytensor_blas` chooses instead,
once per process, right before bayesvm's first NUTS compile:

1. A value the user gave (``PYTENSOR_FLAGS``, ``.pytensorrc``, or ``pytensor.config`` assigned in
   Python before the first fit) is kept, and so is one PyTensor has already worked out.
2. On Linux, optimised BLAS libraries are looked for, OpenBLAS first (``libopenblas.so.0``,
   ``libopenblas.so`` and Fedora's threaded ``libopenblasp``/``libopenblaso``), then
   ``libblas.so.3`` where it resolves to OpenBLAS, BLIS, MKL or ATLAS (Debian's alternatives),
   never the slow reference BLAS. The search covers ``LD_LIBRARY_PATH``, ``LIBRARY_PATH``, the
   Python prefix's ``lib``, the dynamic linker's cache (``ldconfig -p``) and the usual system
   directories; ``BAYESVM_BLAS_DIRS`` (directories separated by ``os.pathsep``) replaces all of
   them.
3. Each candidate is linked by its exact file name, ``-l:libopenblas.so.0``, with
   ``-L<dir> -Wl,-rpath,<dir>`` where the compiler does not search ``<dir>`` by itself, and is
   checked by PyTensor's own test (:func:`pytensor.link.c.cmodule.try_blas_flag`, which
   compiles and runs a program calling ``ddot_``). The first that passes is used, so the flags
   always link.
4. When none passes, the flags are empty: PyTensor then calls NumPy's C API for its matrix
   products, which is correct but slower for large matrices, and ``bayesvm info`` says so.

On other platforms PyTensor's own default is left in place. The choice is set in this process's
``pytensor.config`` only; the environment is not changed. A check costs a C compile (about half
a second) and runs only for files that exist, once per process.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BlasChoice", "choose_blas", "search_dirs", "pytensor_blas", "BLAS_DIRS_VARIABLE"]

# Directories searched instead of the usual ones (tests, unusual installs).
BLAS_DIRS_VARIABLE = "BAYESVM_BLAS_DIRS"

# File names of optimised BLAS libraries, in order of preference. ``libopenblas64*`` (64-bit
# integers) is left out on purpose: its ``ddot_`` does not take PyTensor's 32-bit ``int``.
_OPENBLAS = re.compile(r"libopenblas[po]?\.so(\.\d+)*")
_BLAS_ALTERNATIVE = re.compile(r"libblas\.so\.3")
# What ``libblas.so.3`` must resolve to for it to count as optimised.
_OPTIMISED = re.compile(r"openblas|blis|mkl|atlas", re.IGNORECASE)

# Library directories of the usual Linux layouts; Debian's multiarch ones are put first.
_SYSTEM_DIRS = ("/usr/local/lib", "/usr/lib64", "/lib64", "/usr/lib", "/lib")
_MULTIARCH_ROOTS = ("/usr/local/lib", "/usr/lib", "/lib")


@dataclass(frozen=True)
class BlasChoice:
    """The BLAS PyTensor links to, and how it was chosen.

    Attributes
    ----------
    ldflags : str
        ``pytensor.config.blas__ldflags``; empty means NumPy's C API.
    library : str or None
        The library file linked, where bayesvm chose it.
    origin : str
        ``"user"`` (``PYTENSOR_FLAGS`` or ``.pytensorrc``), ``"preset"`` (set in this process
        before bayesvm chose), ``"bayesvm"`` (chosen here) or ``"pytensor"`` (PyTensor's own
        default, off Linux).
    rejected : tuple of str
        Candidate files that failed the link check.
    """

    ldflags: str
    library: str | None
    origin: str
    rejected: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for people: the flags and file, or what NUTS does without a BLAS."""
        if self.ldflags:
            line = f"{self.library} ({self.ldflags})" if self.library else self.ldflags
        elif self.origin == "bayesvm":
            line = (
                "none found: NUTS uses NumPy's C API (slower); install OpenBLAS "
                "(e.g. apt-get install libopenblas0)"
            )
        else:
            line = "none: NUTS uses NumPy's C API (slower)"
        if self.rejected:
            line += f"; failed the link check: {', '.join(self.rejected)}"
        return f"{line}; {_ORIGINS[self.origin]}"


_ORIGINS = {
    "user": "set by PYTENSOR_FLAGS or .pytensorrc",
    "preset": "set in this process before bayesvm's first NUTS fit",
    "bayesvm": "chosen by bayesvm",
    "pytensor": "PyTensor's default",
}


# The choice :func:`pytensor_blas` made in this process, once made.
_CHOSEN: list[BlasChoice] = []


def pytensor_blas() -> BlasChoice:
    """The BLAS PyTensor links to in this process, choosing and setting it on the first call.

    See the module docstring for the order of choices.
    """
    from pytensor import config

    setting = type(config).blas__ldflags
    if not setting.is_default:
        return BlasChoice(config.blas__ldflags, None, "user")
    if _CHOSEN and config.blas__ldflags == _CHOSEN[0].ldflags:
        return _CHOSEN[0]
    if hasattr(setting, "val"):
        return BlasChoice(config.blas__ldflags, None, "preset")
    if not sys.platform.startswith("linux"):
        return BlasChoice(config.blas__ldflags, None, "pytensor")
    _CHOSEN[:] = [choose_blas(search_dirs())]
    config.blas__ldflags = _CHOSEN[0].ldflags
    return _CHOSEN[0]


def search_dirs() -> list[Path]:
    """The directories :func:`pytensor_blas` searches, in order: ``BAYESVM_BLAS_DIRS`` alone if
    set, otherwise the library paths of the environment, the Python prefix, the dynamic
    linker's cache and the system directories.
    """
    if BLAS_DIRS_VARIABLE in os.environ:
        return _split_paths(os.environ[BLAS_DIRS_VARIABLE])
    multiarch = sysconfig.get_config_var("MULTIARCH")
    system = [f"{root}/{multiarch}" for root in _MULTIARCH_ROOTS if multiarch] + list(_SYSTEM_DIRS)
    dirs = [
        *_split_paths(os.environ.get("LD_LIBRARY_PATH", "")),
        *_split_paths(os.environ.get("LIBRARY_PATH", "")),
        Path(sys.prefix) / "lib",
        *_linker_cache_dirs(),
        *map(Path, system),
    ]
    return list(dict.fromkeys(dirs))


def choose_blas(dirs) -> BlasChoice:
    """The first optimised BLAS in ``dirs`` that passes PyTensor's link check.

    Parameters
    ----------
    dirs : iterable of path-like
        Directories to search, in order of preference within each kind of library.

    Returns
    -------
    BlasChoice
        ``origin="bayesvm"``; empty ``ldflags`` when no candidate links (or no C compiler).
    """
    from pytensor import config
    from pytensor.link.c.cmodule import try_blas_flag

    if not config.cxx:
        return BlasChoice("", None, "bayesvm")
    candidates = _candidates([Path(d) for d in dirs])
    compiler_dirs = _compiler_library_dirs(config.cxx) if candidates else set()
    rejected = []
    for library in candidates:
        flags = [f"-l:{library.name}"]
        if library.parent.resolve() not in compiler_dirs:
            flags = [f"-Wl,-L{library.parent}", *flags, f"-Wl,-rpath,{library.parent}"]
        if try_blas_flag(flags):
            return BlasChoice(shlex.join(flags), str(library), "bayesvm", tuple(rejected))
        rejected.append(str(library))
    return BlasChoice("", None, "bayesvm", tuple(rejected))


def _candidates(dirs: list[Path]) -> list[Path]:
    """Existing optimised BLAS files in ``dirs``, OpenBLAS first, one path per resolved file."""
    files = [path for d in dirs for path in _listing(d)]
    openblas = [path for path in files if _OPENBLAS.fullmatch(path.name)]
    alternatives = [
        path
        for path in files
        if _BLAS_ALTERNATIVE.fullmatch(path.name) and _OPTIMISED.search(str(path.resolve()))
    ]
    unique = {}
    for path in openblas + alternatives:
        if path.is_file():  # a dangling symlink is no candidate
            unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _listing(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError:  # missing or unreadable
        return []


def _linker_cache_dirs() -> list[Path]:
    """Directories of BLAS libraries in the dynamic linker's cache (``ldconfig -p``)."""
    ldconfig = shutil.which("ldconfig") or next(
        (path for path in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if Path(path).exists()), None
    )
    if ldconfig is None:
        return []
    try:
        listing = subprocess.run(
            [ldconfig, "-p"], capture_output=True, text=True, check=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [
        Path(line.rpartition("=>")[2].strip()).parent
        for line in listing.splitlines()
        if "blas" in line and "=>" in line
    ]


def _compiler_library_dirs(compiler: str) -> set[Path]:
    """Directories ``compiler`` links from without ``-L`` (``-print-search-dirs``)."""
    try:
        listing = subprocess.run(
            [compiler, "-print-search-dirs"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {
        Path(entry).resolve()
        for line in listing.splitlines()
        if line.startswith("libraries: =")
        for entry in line.removeprefix("libraries: =").split(":")
        if entry
    }


def _split_paths(value: str) -> list[Path]:
    return [Path(entry) for entry in value.split(os.pathsep) if entry]
