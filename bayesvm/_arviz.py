"""ArviZ and PyMC, imported on first use without ArviZ's banner.

ArviZ 0.23 warns (a ``FutureWarning`` of four lines about its coming 1.0) on its first import
of each day. The module attributes ``arviz`` and ``pymc`` (PEP 562; PyMC imports ArviZ) import
their module with that one warning silenced; the filter goes with the ``catch_warnings`` block,
so every other warning, and the user's own filters, still apply. ArviZ brings SciPy's
statistics, matplotlib and xarray (about a second), PyMC more: bayesvm imports them only where
a fit, a comparison or a file needs them, and always this way::

    from bayesvm._arviz import arviz as az
    from bayesvm._arviz import pymc as pm

:func:`quiet_arviz_log` likewise mutes ArviZ's log while a summary of one chain is made.
"""

import logging
import warnings
from contextlib import contextmanager

__all__ = ["arviz", "pymc", "quiet_arviz_log"]


def __getattr__(name: str):
    """``arviz`` or ``pymc``: the module, imported without ArviZ's banner on first access."""
    if name not in ("arviz", "pymc"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    global arviz, pymc  # bound here: later accesses find the modules without coming here
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning
        )
        import arviz

        if name == "pymc":
            import pymc
    return globals()[name]


@contextmanager
def quiet_arviz_log():
    """Mute ArviZ's log warnings inside the block (its own level is restored afterwards).

    ``arviz.summary`` of a single chain logs "Shape validation failed" because R-hat needs two
    chains: the table shows that R-hat as NaN, and bayesvm judges one chain by its two halves
    (:mod:`bayesvm.samplers.diagnostics`), so the line only adds noise.
    """
    from bayesvm._arviz import arviz

    logger = arviz._log  # ArviZ's own Logger instance, not registered with logging.getLogger
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
