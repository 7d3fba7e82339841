"""SciPy's scalar special functions for loops compiled with Numba.

``scipy.special.cython_special`` exports its C functions; Numba calls one through its address
as a ``ctypes`` function, so that a compiled loop computes what the NumPy ufunc would
(:mod:`bayesvm.blocks.holmes_held`, :mod:`bayesvm.blocks.probit_newton`).
"""

from __future__ import annotations

import ctypes
import re

__all__ = ["real_function"]

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
