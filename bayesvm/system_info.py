"""What bayesvm runs on: versions, the BLAS each part links to, threads and cores.

``bayesvm info`` prints :func:`info`; attach its output to a bug report or a timing.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata

from threadpoolctl import threadpool_info

from bayesvm._blas import pytensor_blas
from bayesvm.linalg import usable_cores
from bayesvm.version import __version__

__all__ = ["info", "format_info", "PACKAGES"]

#: Packages whose versions :func:`info` reports; ``nutpie`` only where it is installed.
PACKAGES = ("numpy", "scipy", "pymc", "pytensor", "arviz", "nutpie")


def info() -> dict:
    """Versions, BLAS libraries, thread counts and cores of this process.

    Choosing PyTensor's BLAS may compile a small test program (see :mod:`bayesvm._blas`), and
    sets ``pytensor.config.blas__ldflags`` as the first NUTS fit would.

    Returns
    -------
    dict
        ``bayesvm`` and ``python`` (versions); ``packages`` (name to version, installed
        packages of :data:`PACKAGES`); ``c_compiler`` (PyTensor's, or None: NUTS then runs in
        Python); ``pytensor_blas`` (``ldflags``, ``library``, ``origin``, ``rejected`` and a
        one-line ``summary``); ``numpy_blas`` (one dict per BLAS library NumPy and SciPy
        loaded: ``library``, ``version``, ``threading_layer``, ``num_threads``,
        ``filepath``); ``cores`` (the CPUs this process may run on).
    """
    import pytensor
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, so that threadpoolctl sees it)

    blas = pytensor_blas()
    return {
        "bayesvm": __version__,
        "python": f"{platform.python_version()} ({platform.system()} {platform.machine()})",
        "packages": {name: version for name in PACKAGES if (version := _version(name))},
        "c_compiler": pytensor.config.cxx or None,
        "pytensor_blas": {
            "ldflags": blas.ldflags,
            "library": blas.library,
            "origin": blas.origin,
            "rejected": list(blas.rejected),
            "summary": blas.describe(),
        },
        "numpy_blas": [
            {
                "library": pool.get("internal_api"),
                "version": pool.get("version"),
                "threading_layer": pool.get("threading_layer"),
                "num_threads": pool.get("num_threads"),
                "filepath": pool.get("filepath"),
            }
            for pool in threadpool_info()
            if pool.get("user_api") == "blas"
        ],
        "cores": usable_cores(),
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def format_info(facts: dict) -> str:
    """:func:`info` as lines of ``name: value`` for people."""
    lines = [
        f"bayesvm: {facts['bayesvm']}",
        f"python: {facts['python']} at {sys.executable}",
        *(f"{name}: {version}" for name, version in facts["packages"].items()),
        f"C compiler (PyTensor): {facts['c_compiler'] or 'none: NUTS runs in Python (slow)'}",
        f"BLAS of PyTensor (NUTS): {facts['pytensor_blas']['summary']}",
        *(
            f"BLAS of NumPy/SciPy: {pool['library']} {pool['version']} "
            f"({pool['threading_layer']}, {pool['num_threads']} threads) {pool['filepath']}"
            for pool in facts["numpy_blas"]
        ),
        f"cores available: {facts['cores']}",
    ]
    return "\n".join(lines)
