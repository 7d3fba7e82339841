""":class:`ConvergenceWarning`, apart from :mod:`bayesvm.exceptions` because its base class is
scikit-learn's, whose import takes about as long as the rest of ``import bayesvm``: the
exceptions module imports it from here when the name is first used.
"""

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = ["ConvergenceWarning"]


class ConvergenceWarning(_SklearnConvergenceWarning):
    """A fit ended without the evidence that it converged.

    Issued by :func:`bayesvm.fit` when VB or EM stops at ``max_iter`` or is interrupted, or
    when a sampler's chains fail the checks of :mod:`bayesvm.samplers.diagnostics` (R-hat,
    effective sample size, divergences). The reasons are in ``fit.problems``. A subclass of
    scikit-learn's ``ConvergenceWarning``, so filters written for scikit-learn catch it too.
    """


ConvergenceWarning.__module__ = "bayesvm.exceptions"  # where users import it from
