"""What Ctrl-C does: a fit keeps what it has, a study's task ends, and Ctrl-C is held where a
``KeyboardInterrupt`` would be lost or leave a process behind.

* :func:`interrupts_end_fits`: by default a fit interrupted by Ctrl-C returns the iterations or
  draws made so far (:func:`keeps_on_interrupt`, read by the drivers, SVI and NUTS); inside
  the block it ends with ``KeyboardInterrupt`` instead, as a case study's task must.
* :func:`interrupts_held`: Ctrl-C in the block is acted on when the block ends (Numba's
  compilation; a case study starting its worker processes); :func:`interrupts_blocked`:
  Ctrl-C is held there too, and a process started in the block begins with SIGINT blocked,
  to unblock it when it is ready (:func:`unblock_interrupts`; a case study's fork server).

This module imports the standard library only.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = [
    "interrupts_end_fits",
    "keeps_on_interrupt",
    "interrupts_held",
    "interrupts_blocked",
    "unblock_interrupts",
]

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
    held: list = []
    with _sigint_handled_by(lambda signum, frame: held.append(frame)) as previous:
        yield
    if held:
        if callable(previous):
            previous(signal.SIGINT, held[0])
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt


@contextmanager
def interrupts_blocked() -> Iterator[None]:
    """Hold Ctrl-C in the block (:func:`interrupts_held`) and block SIGINT in this thread, so
    that a process started in the block begins with SIGINT blocked (the signal mask is
    inherited through fork and exec) and calls :func:`unblock_interrupts` once it handles
    Ctrl-C as it should. As ``multiprocessing`` starts its resource tracker.

    Ignoring SIGINT while the process starts, the other way to keep Ctrl-C from it, lost a
    Ctrl-C that came meanwhile in this process too; a blocked one waits: this process acts on
    it when the block ends, the new one when it unblocks it (or drops it, ignoring SIGINT).
    """
    with interrupts_held():
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def unblock_interrupts() -> None:
    """Unblock SIGINT in this thread: in a process started in :func:`interrupts_blocked`, once
    it handles Ctrl-C; a Ctrl-C that came before is acted on now.
    """
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def _sigint_handled_by(handler) -> Iterator[object]:
    """SIGINT goes to ``handler`` in the block, which gets the handler before (Python's own
    where that one was set from C and so cannot be set back, or None off the main thread,
    where the block runs as it is).
    """
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    previous = signal.signal(signal.SIGINT, handler)
    if previous is None:
        previous = signal.default_int_handler
    try:
        yield previous
    finally:
        signal.signal(signal.SIGINT, previous)
