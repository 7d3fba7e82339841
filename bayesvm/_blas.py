"""Link PyTensor to OpenBLAS when it is installed, so that NUTS runs at full speed.

PyTensor looks for BLAS through ``PYTENSOR_FLAGS=blas__ldflags=...``; without it, it warns and
falls back to slow NumPy C-API calls. If the user set ``blas__ldflags`` we keep theirs;
otherwise, when the OpenBLAS shared library is found (Debian: ``libopenblas-dev``), we add
``blas__ldflags=-lopenblas`` before PyTensor is first imported.
"""

import ctypes.util
import os

_flags = os.environ.get("PYTENSOR_FLAGS", "")
if "blas__ldflags" not in _flags and ctypes.util.find_library("openblas"):
    os.environ["PYTENSOR_FLAGS"] = ",".join(filter(None, [_flags, "blas__ldflags=-lopenblas"]))
