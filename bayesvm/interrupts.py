"""What Ctrl-C does: a fit keeps what it has, a study's task ends, and Ctrl-C is held where a
``KeyboardInterrupt`` would be lost or leave a process behind.

* :func:`interrupts_end_fits`: by default a fit interrupted by Ctrl-C returns the iterations or
  draws made so far (:func:`keeps_on_interrupt`, read by the drivers, SVI and NUTS); inside
  the block it ends with ``KeyboardInterrupt`` instead, as a case study's task must.
* :func:`interrupts_held`: Ctrl-C in the block is acted on when the block ends (Numba's
  compilation; a case study starting its worker processes).

This module imports the standard library only.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["interrupts_end_fits", "keeps_on_interrupt", "interrupts_held"]

# Whether a fit interrupted by Ctrl-C returns what it has (False inside interrupts_end_fits), in
# the thread (or asyncio task) that runs it: a Dask worker runs tasks in several threads.
_KEEP_ON_INTERRUPT: ContextVar[bool] = ContextVar("keep_on_interrupt", default=True)


@contextmanager
def interrupts_end_fits() -> Iterator[None]:
    """In the block, Ctrl-C ends every fit with ``KeyboardInterrupt``, where by default a fit
    keeps the iterations or draws made so far and returns them (:func:`keeps_on_interrupt`).
    """
    token = _KEEP_ON_INTERRUPT.set(False)
    try:
        yield
    finally:
        _KEEP_ON_INTERRUPT.reset(token)


def keeps_on_interrupt() -> bool:
    """Whether a fit interrupted by Ctrl-C returns what it has (:func:`interrupts_end_fits`)."""
    return _KEEP_ON_INTERRUPT.get()


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C until the block ends, then act on it as the handler before would have
    (raise ``KeyboardInterrupt``, by default).

    For work that Ctrl-C must not cut in the middle:

    * Numba's compilation calls back into Python from LLVM through ``ctypes``; a
      ``KeyboardInterrupt`` raised in such a callback is printed ("Exception ignored on
      calling ctypes callback function", a long traceback) and lost, and the compilation goes
      on. So Ctrl-C during a compilation (up to about 5 s, once per process) is acted on when
      it ends.
    * A process pool's worker started through a fork server: cut while the server forks it, it
      is not yet the pool's to end, and fails after the main process has gone, printing a
      traceback.

    Only the main thread handles signals; elsewhere the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    if previous is None:  # a handler set from C, which cannot be set back: Python's own
        previous = signal.default_int_handler
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        if callable(previous):
            previous(signal.SIGINT, held[0])
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt
