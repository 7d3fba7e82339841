"""Is VB good enough? The Pareto k-hat of ``q``'s importance weights.

Yao, Vehtari, Simpson & Gelman (2018, "Yes, but did it work?: Evaluating variational
inference", section 2) judge a variational ``q`` by the importance ratios of its own draws,
``log r_s = log p(theta_s, y) - log q(theta_s)``, ``theta_s ~ q``: the shape ``k`` of the
generalised Pareto distribution fitted to the largest ratios (Pareto-smoothed importance
sampling, Vehtari, Simpson, Gelman, Yao & Gabry 2024) says how heavy their tail is. Below 0.5
``q`` is close to the posterior and importance sampling corrects what is left; up to 0.7 the
corrected estimates are still usable; above, ``q`` misses posterior mass in some direction
(mean-field ``q`` is too narrow there) and neither ``q`` nor its reweighting can be trusted.
With ``S`` draws the threshold is ArviZ's ``min(1 - 1 / log10 S, 0.7)``
(:func:`~bayesvm.results.khat_threshold`).

``p`` is the model's density over every reported variable
(:meth:`~bayesvm.models.BlockModel.log_density`, augmentation variables integrated out) and
``log q`` the sum of the blocks' :meth:`~bayesvm.blocks.QDensityBlock.q_log_density` in the same
variables and measure; both are known up to constants, which do not change ``k``. Where ``q``
is the posterior (Drugowitsch's regression with a fixed prior precision: the normal-gamma
``q`` is exact) the log ratios are one constant up to round-off and PSIS has no tail to fit:
k-hat is reported as 0 (:data:`CONSTANT_ROUNDOFF`).

Every variational fit (:func:`~bayesvm.vb.cavi.fit_vb`, :func:`~bayesvm.vb.svi.fit_svi`)
stores k-hat in ``idata.attrs["pareto_k"]`` (``fit.pareto_k``), a note on how it was found in
``idata.attrs["pareto_k_note"]``, the log ratios of its first :data:`MAX_WEIGHED_DRAWS`
draws in the ``variational`` group (``log_weight``, along ``draw``), and a problem when k-hat
exceeds the threshold (:class:`QCheck`); ``fit.psis_moments()`` gives the moments that the
smoothed weights correct (:meth:`~bayesvm.Fit.psis_moments`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesvm.results import LOG_WEIGHT, khat_threshold

__all__ = [
    "QCheck",
    "check_q",
    "pareto_k",
    "CONSTANT_ROUNDOFF",
    "MIN_DRAWS",
    "MAX_WEIGHED_DRAWS",
]

#: Log ratios whose range is below this share of the log densities' size (``1 + max |log p|
#: + max |log q|``) are one constant up to round-off: ``q`` is exact and k-hat is 0. (A log
#: density sums O(n) terms, so its round-off is some 1e-15 of its size; this leaves a factor
#: of 1e6 for ill-conditioned factors, and a ``q`` that is off anywhere moves the ratios by
#: far more.)
CONSTANT_ROUNDOFF = 1e-8
#: Fewest draws from ``q`` for a k-hat: PSIS fits the largest ``min(S / 5, 3 sqrt(S))`` ratios,
#: and ArviZ's threshold ``1 - 1 / log10 S`` is 0.5 at 100 draws (Yao et al. use 1000 or more,
#: the drivers' default).
MIN_DRAWS = 100
#: Most draws from ``q`` weighed, each costing one evaluation of the model's density: from
#: about 2,200 draws ArviZ's threshold is 0.7 whatever their number, and 4,000 estimate k-hat
#: well (Yao et al. use a few thousand); a fit that keeps more draws of ``q`` (for smooth
#: plots) has its first 4,000 weighed.
MAX_WEIGHED_DRAWS = 4000


@dataclass(frozen=True)
class QCheck:
    """The Pareto k-hat of a variational fit, how it was found (``note``: empty for PSIS's
    own estimate) and the log ratios it was found from (None where not computed).
    """

    pareto_k: float
    note: str
    log_weights: np.ndarray | None

    @property
    def threshold(self) -> float:
        """:func:`~bayesvm.results.khat_threshold` for the number of draws (NaN where none were
        weighed).
        """
        return np.nan if self.log_weights is None else khat_threshold(self.log_weights.size)

    def attrs(self) -> dict:
        """The fit's attributes ``pareto_k`` and ``pareto_k_note``."""
        return {"pareto_k": float(self.pareto_k), "pareto_k_note": self.note}

    def variational(self) -> dict:
        """The ``variational`` group's log ratios, ``log_weight`` along ``draw`` (none where
        not computed).
        """
        return {} if self.log_weights is None else {LOG_WEIGHT: (["draw"], self.log_weights)}

    def problem(self) -> str | None:
        """The fit's problem where k-hat exceeds the threshold, else None (one sentence
        without ``"; "``, which joins a fit's problems in its warning).
        """
        if not self.pareto_k > self.threshold:
            return None
        digits = 2 if round(self.pareto_k, 2) > round(self.threshold, 2) else 3
        return (
            f"the Pareto k-hat of q's importance weights is {self.pareto_k:.{digits}f}, above "
            f"{self.threshold:.{digits}f} (ArviZ's threshold for {self.log_weights.size} "
            "draws, Yao et al. 2018): q misses posterior mass in some direction, so its sds "
            "are likely too small and its means may be off, which importance sampling cannot "
            "correct: fit by Gibbs or NUTS" + (f" ({self.note})" if self.note else "")
        )


def check_q(model, fitted, posterior: dict) -> QCheck:
    """k-hat of ``q`` (:class:`QCheck`) from its first :data:`MAX_WEIGHED_DRAWS` draws in
    ``posterior`` (name to ``(1, S, *dims)``, :func:`~bayesvm.vb.posterior.q_groups`) and
    ``fitted``, each block holding a ``q`` with its parameters.
    """
    if not model.pymc_specified:  # the bound is no model's posterior: there is no p
        return QCheck(np.nan, "not computed: the bound is no model's posterior", None)
    draws = {name: np.asarray(value[0, :MAX_WEIGHED_DRAWS]) for name, value in posterior.items()}
    size = next(iter(draws.values())).shape[0]
    if size < MIN_DRAWS:
        return QCheck(
            np.nan, f"not computed: {size} draws from q, k-hat needs {MIN_DRAWS} or more", None
        )
    log_q = np.zeros(size)
    for block, params in fitted:
        if block.var_names:  # a block reporting nothing is integrated out: it adds 0
            log_q += block.q_log_density(params, draws)
    log_p = model.log_densities(draws)
    log_weights = log_p - log_q
    magnitude = 1.0 + np.max(np.abs(log_p[np.isfinite(log_p)]), initial=0.0)
    magnitude += np.max(np.abs(log_q))
    khat, note = pareto_k(log_weights, CONSTANT_ROUNDOFF * magnitude)
    return QCheck(khat, note, log_weights)


def pareto_k(log_weights: np.ndarray, roundoff: float) -> tuple[float, str]:
    """PSIS's k-hat of ``log_weights`` (ArviZ's ``psislw``) and a note: 0 where their range
    is below ``roundoff`` (one constant: PSIS, which would return ``inf``, has no tail to fit),
    ``inf`` where every weight is 0.
    """
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    if not np.any(np.isfinite(log_weights)):
        return np.inf, "q's draws all have zero posterior density"
    if np.ptp(log_weights) < roundoff:
        return 0.0, "q is exact: its log weights are one constant up to round-off"
    _, khat = az.psislw(log_weights.copy())  # psislw shifts its argument in place
    return float(khat), ""
