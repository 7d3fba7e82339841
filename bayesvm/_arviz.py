"""Import ArviZ without its banner, before anything else in bayesvm imports it.

ArviZ 0.23 warns (a ``FutureWarning`` of four lines about its coming 1.0) on its first import
of each day. That one warning is silenced while ArviZ is imported here; the filter goes with
the ``catch_warnings`` block, so every other warning, and the user's own filters, still apply.
:func:`quiet_arviz_log` likewise mutes ArviZ's log while a summary of one chain is made.
"""

import logging
import warnings
from contextlib import contextmanager

__all__ = ["quiet_arviz_log"]

with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning
    )
    import arviz  # noqa: F401


@contextmanager
def quiet_arviz_log():
    """Mute ArviZ's log warnings inside the block (its own level is restored afterwards).

    ``arviz.summary`` of a single chain logs "Shape validation failed" because R-hat needs two
    chains: the table shows that R-hat as NaN, and bayesvm judges one chain by its two halves
    (:mod:`bayesvm.samplers.diagnostics`), so the line only adds noise.
    """
    logger = arviz._log  # ArviZ's own Logger instance, not registered with logging.getLogger
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
