"""Import ArviZ without its banner, before anything else in bayesvm imports it.

ArviZ 0.23 warns (a ``FutureWarning`` of four lines about its coming 1.0) on its first import
of each day. That one warning is silenced while ArviZ is imported here; the filter goes with
the ``catch_warnings`` block, so every other warning, and the user's own filters, still apply.
"""

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings(
        "ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning
    )
    import arviz  # noqa: F401
