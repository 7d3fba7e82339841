"""SciPy's scalar special functions for loops compiled with Numba, and Ctrl-C held while they
compile.

``scipy.special.cython_special`` exports its C functions; Numba calls one through its address
as a ``ctypes`` function, so that a compiled loop computes what the NumPy ufunc would
(:mod:`bayesvm.blocks.holmes_held`, :mod:`bayesvm.blocks.probit_newton`).
"""

from __future__ import annotations

import ctypes
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["real_function", "interrupts_held"]

_SPECIAL = "scipy.special.cython_special"
#: ``double f(double x, int skip_dispatch)``: a real function of ``cython_special`` (the flag,
#: for Python overrides, is meaningless for a module's functions; 1 skips the check).
_REAL_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_int)


def _real_variant(name: str) -> str:
    """The exported name of ``cython_special``'s ``double -> double`` variant of ``name``
    (``name`` itself, or one of its fused variants ``__pyx_fuse_<i>name``).
    """
    from scipy.special import cython_special

    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    for exported, capsule in cython_special.__pyx_capi__.items():
        variant = exported == name or re.fullmatch(rf"__pyx_fuse_\d+{name}", exported)
        if variant and get_name(capsule).startswith(b"double (double,"):
            return exported
    raise ImportError(f"scipy.special.cython_special exports no real {name}")


def real_function(name: str):
    """``cython_special``'s ``name`` as a ``ctypes`` function ``f(x, 1)`` of a double, which a
    function compiled with ``numba.njit`` can call.
    """
    from numba.extending import get_cython_function_address

    return _REAL_SIGNATURE(get_cython_function_address(_SPECIAL, _real_variant(name)))


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C until the block ends, then act on it as the handler before would have
    (raise ``KeyboardInterrupt``, by default).

    Numba's compilation calls back into Python from LLVM through ``ctypes``; a
    ``KeyboardInterrupt`` raised in such a callback is printed ("Exception ignored on calling
    ctypes callback function", a long traceback) and lost, and the compilation goes on. So the
    few seconds of a compilation take Ctrl-C when they end. Only the main thread handles
    signals; elsewhere the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        if callable(previous):
            previous(signal.SIGINT, held[0])
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt
