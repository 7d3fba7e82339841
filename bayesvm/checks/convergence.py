"""Convergence statistics of MCMC draws, for every parameter at once.

Rank-normalised split R-hat and the bulk and tail effective sample sizes of Vehtari, Gelman,
Simpson, Carpenter & Buerkner (2021), "Rank-normalization, folding, and localization: an
improved R-hat for assessing convergence of MCMC", exactly as ArviZ 0.23 computes them
(``arviz.rhat(..., method="rank")``, ``arviz.ess(..., method="bulk" | "tail")``), but along
the (chain, draw) axes of all parameters together instead of one scalar parameter at a time:

* chains are split in halves (section 4.2; an odd draw count drops the middle draw) and the
  draws rank-normalised: average ranks r over all chains, z = Phi^-1((r - 3/8) / (S + 1/4))
  for S draws (eq. 14, Blom's offset 3/8);
* R-hat (eq. 3-4 on the rank-normalised split chains) is the larger of the bulk R-hat and the
  R-hat of the rank-normalised draws folded about their median (section 4.2);
* the effective sample size (eq. 10-11) is S / tau with the autocorrelations of the FFT
  autocovariance summed by Geyer's initial monotone sequence (section 3.2), with ArviZ's
  truncation and its floor tau >= 1 / log10(S);
* bulk ESS is that of the rank-normalised split chains; tail ESS the smaller of those of the
  indicators of the draws below their 5 % and 95 % quantiles (section 4.3, R's type 7
  quantiles as ``scipy.stats.mstats.mquantiles`` computes them).

As in ArviZ, a parameter with a NaN draw, fewer than :data:`MIN_DRAWS` draws or (R-hat)
fewer than two chains gets NaN; one whose split draws are all the same gets R-hat from 0 / 0
and S as its ESS. Variances of chains and of chain means use the one-pass formula of ArviZ's
Numba variance, so that even the round-off of a parameter stuck within each chain agrees.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

__all__ = ["rank_normalized_rhat", "bulk_ess", "tail_ess", "MIN_DRAWS", "TAIL_PROBABILITIES"]

#: Fewer draws per chain than this give NaN (ArviZ's shape check).
MIN_DRAWS = 4
#: The quantiles whose indicators define the tail ESS (section 4.3).
TAIL_PROBABILITIES = (0.05, 0.95)
#: Blom's (1958) fractional offset of the rank normalisation (eq. 14).
BLOM_OFFSET = 3 / 8
#: Parameters are processed in blocks of about this many draws, bounding the FFT's memory.
BLOCK_DRAWS = 2**21


def rank_normalized_rhat(draws) -> np.ndarray:
    """Rank-normalised split R-hat (section 4.2) of each parameter of ``draws``.

    Parameters
    ----------
    draws : array of shape ``(chain, draw, *shape)``

    Returns
    -------
    numpy.ndarray of shape ``shape``: the larger of the bulk and the folded R-hat; NaN with
    fewer than two chains or :data:`MIN_DRAWS` draws.
    """
    return _per_parameter(_rank_normalized_rhat, draws, min_chains=2)


def bulk_ess(draws) -> np.ndarray:
    """Bulk effective sample size (section 4.3) of each parameter of ``draws``
    ``(chain, draw, *shape)``: the ESS of its rank-normalised split chains.
    """
    return _per_parameter(_bulk_ess, draws, min_chains=1)


def tail_ess(draws) -> np.ndarray:
    """Tail effective sample size (section 4.3) of each parameter of ``draws``
    ``(chain, draw, *shape)``: the smaller ESS of the indicators of its draws below the
    quantiles :data:`TAIL_PROBABILITIES`.
    """
    return _per_parameter(_tail_ess, draws, min_chains=1)


def _per_parameter(statistic, draws, min_chains: int) -> np.ndarray:
    """``statistic`` of (parameter, chain, draw) blocks of ``draws`` ``(chain, draw, *shape)``,
    in an array of ``shape``; NaN where ArviZ's checks fail (too few chains or draws, a NaN).
    """
    draws = np.asarray(draws)
    n_chains, n_draws, *shape = draws.shape
    rows = np.moveaxis(draws.reshape(n_chains, n_draws, math.prod(shape)), -1, 0)
    values = np.full(rows.shape[0], np.nan)
    if n_chains < min_chains or n_draws < MIN_DRAWS:
        return values.reshape(shape)
    block = max(1, BLOCK_DRAWS // (n_chains * n_draws))
    for start in range(0, rows.shape[0], block):
        chains = np.ascontiguousarray(rows[start : start + block])
        without_nan = ~np.isnan(chains).any(axis=(1, 2))
        values[start : start + block][without_nan] = statistic(chains[without_nan])
    return values.reshape(shape)


def _rank_normalized_rhat(chains: np.ndarray) -> np.ndarray:
    """R-hat (section 4.2) of (parameter, chain, draw) ``chains``: the larger of the bulk R-hat
    and that of the draws folded about their median, both of the rank-normalised split chains.
    """
    split = _split_chains(chains)
    bulk = _rhat(_rank_normalize(split))
    tail = _rhat(_rank_normalize(np.abs(split - _median(split)[:, None, None])))
    return np.where(tail > bulk, tail, bulk)  # Python's max(bulk, tail), NaN as ArviZ's


def _bulk_ess(chains: np.ndarray) -> np.ndarray:
    """Bulk ESS (section 4.3): the ESS of the rank-normalised split ``chains``."""
    return _ess(_rank_normalize(_split_chains(chains)))


def _tail_ess(chains: np.ndarray) -> np.ndarray:
    """Tail ESS (section 4.3): the smaller ESS of the indicators of the draws below their
    :data:`TAIL_PROBABILITIES` quantiles.
    """
    low, high = (
        _ess(_split_chains(chains <= quantile[:, None, None]))
        for quantile in _type7_quantiles(chains, np.asarray(TAIL_PROBABILITIES))
    )
    return np.where(high < low, high, low)  # Python's min(low, high), NaN as ArviZ's


def _type7_quantiles(chains: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """The ``probabilities`` quantiles (R's type 7) of each parameter's draws, shape
    (probability, parameter), in ``scipy.stats.mstats.mquantiles``' arithmetic with
    ``alphap = betap = 1``: draws equal to an interpolated quantile must compare as there.
    """
    ordered = np.sort(_pooled(chains), axis=-1)
    n_values = ordered.shape[-1]
    plotting_offset = 1.0 + probabilities * (1.0 - 1.0 - 1.0)  # alphap + p (1 - alphap - betap)
    position = n_values * probabilities + plotting_offset
    index = np.floor(position.clip(1, n_values - 1)).astype(int)
    weight = (position - index).clip(0, 1)
    return (1.0 - weight[:, None]) * ordered[:, index - 1].T + weight[:, None] * ordered[:, index].T


def _median(chains: np.ndarray) -> np.ndarray:
    """Each parameter's median over all chains, as ``numpy.median`` computes it (the mean of
    the middle one or two draws) but from a sort, which is faster here than its partition.
    """
    ordered = np.sort(_pooled(chains), axis=-1)
    size = ordered.shape[-1]
    return ordered[:, (size - 1) // 2 : size // 2 + 1].mean(axis=-1)


def _split_chains(chains: np.ndarray) -> np.ndarray:
    """The first and last halves of each chain as chains, all first halves first (ArviZ's
    order); the middle draw of an odd count is dropped.
    """
    half = chains.shape[-1] // 2
    return np.concatenate((chains[..., :half], chains[..., -half:]), axis=1)


def _rank_normalize(chains: np.ndarray) -> np.ndarray:
    """Normal scores of the average ranks of each parameter's draws over all chains (eq. 14).

    Tied draws at sorted positions first .. last share the rank (first + last) / 2 + 1, as in
    ``scipy.stats.rankdata(method="average")``; ranks are half-integers, so the scores come
    from a table of the 2 S - 1 possible ones, the numbers ``scipy.stats.norm.ppf`` gives.
    """
    pooled = _pooled(chains)
    size = pooled.shape[-1]
    order = np.argsort(pooled, axis=-1)
    ordered = np.take_along_axis(pooled, order, axis=-1)
    position = np.arange(size)
    starts = np.ones(pooled.shape, dtype=bool)
    np.not_equal(ordered[:, 1:], ordered[:, :-1], out=starts[:, 1:])
    ends = np.ones(pooled.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    last = np.minimum.accumulate(np.where(ends, position, size)[:, ::-1], axis=-1)[:, ::-1]
    ranks = np.arange(2 * size - 1) / 2 + 1
    scores = ndtri((ranks - BLOM_OFFSET) / (size - 2 * BLOM_OFFSET + 1))
    normalized = np.empty(pooled.size)
    normalized[order + size * np.arange(len(pooled))[:, None]] = scores[first + last]
    return normalized.reshape(chains.shape)


def _pooled(chains: np.ndarray) -> np.ndarray:
    """Each parameter's draws of all chains in one row."""
    n_parameters, n_chains, n_draws = chains.shape
    return chains.reshape(n_parameters, n_chains * n_draws)


def _rhat(chains: np.ndarray) -> np.ndarray:
    """Potential scale reduction sqrt(var+ / W) (eq. 3-4) of (parameter, chain, draw)
    ``chains``: W the mean within-chain variance, var+ = (N - 1) / N W + B / N.
    """
    n_draws = chains.shape[-1]
    between = n_draws * _one_pass_variance(chains.mean(axis=-1))
    within = _one_pass_variance(chains).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n_draws - 1) / n_draws)


def _ess(chains: np.ndarray) -> np.ndarray:
    """Effective sample size S / tau (eq. 10-11) of (parameter, chain, draw) ``chains``.

    tau = -1 + 2 sum of the autocorrelation pairs rho_2k + rho_2k+1 (eq. 10 for several
    chains) up to the first pair that is not positive, each pair capped by the one before
    (Geyer's initial monotone sequence), plus ArviZ's improvement: the last even lag computed,
    where positive or its pair is not negative; tau >= 1 / log10(S). Draws that hardly move
    (range below float resolution) count as S independent ones.
    """
    chains = chains.astype(float)
    n_parameters, n_chains, n_draws = chains.shape
    size = n_chains * n_draws
    autocovariance = _autocovariance(chains)
    mean_variance = autocovariance[:, :, 0].mean(axis=1) * n_draws / (n_draws - 1.0)
    variance_plus = mean_variance * (n_draws - 1.0) / n_draws
    if n_chains > 1:
        variance_plus += _one_pass_variance(chains.mean(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_variance[:, None] - autocovariance.mean(axis=1)) / variance_plus[:, None]
    rho[:, 0] = 1.0
    # Pairs (rho_2k, rho_2k+1) for k = 0 .. last, the lags Geyer's loop can reach.
    last = max(0, (n_draws - 3) // 2)
    pair_sums = rho[:, : 2 * last + 2 : 2] + rho[:, 1 : 2 * last + 2 : 2]
    positive = pair_sums[:, :last] > 0
    n_pairs = np.logical_and.accumulate(positive, axis=1).sum(axis=1)
    monotone = np.minimum.accumulate(pair_sums[:, :last], axis=1)
    summed = np.where(np.arange(last) < n_pairs[:, None], monotone, 0.0).sum(axis=1)
    parameters = np.arange(n_parameters)
    even = rho[parameters, 2 * n_pairs]
    final = np.where((pair_sums[parameters, n_pairs] >= 0) | (even > 0), even, 0.0)
    tau = -1.0 + 2.0 * summed + final
    floor = 1 / np.log10(size)
    tau = np.where(floor > tau, floor, tau)
    ess = np.where(np.isnan(rho[:, 1]), np.nan, size / tau)
    still = chains.max(axis=(1, 2)) - chains.min(axis=(1, 2)) < np.finfo(float).resolution
    return np.where(still, size, ess)


def _autocovariance(chains: np.ndarray) -> np.ndarray:
    """Autocovariance of each chain at every lag (divisor N), by FFT of the centred draws
    zero-padded to a fast length of at least twice the draws (no circular wrap).
    """
    from scipy.fft import next_fast_len  # imported here: scipy.fft costs 40 ms at startup

    n_draws = chains.shape[-1]
    length = next_fast_len(2 * n_draws, real=True)
    centred = chains - chains.mean(axis=-1, keepdims=True)
    transform = np.fft.rfft(centred, n=length, axis=-1)
    transform *= np.conjugate(transform)
    return np.fft.irfft(transform, n=length, axis=-1)[..., :n_draws] / n_draws


def _one_pass_variance(values: np.ndarray) -> np.ndarray:
    """Sample variance (divisor n - 1) along the last axis by ArviZ's one-pass formula
    (``stats_variance_1d``: sums accumulated in order, then E[x^2] - E[x]^2).
    """
    n_values = values.shape[-1]
    total = np.cumsum(values, axis=-1)[..., -1]
    total_squares = np.cumsum(values * values, axis=-1)[..., -1]
    return (total_squares / n_values - (total / n_values) ** 2) * (n_values / (n_values - 1))
