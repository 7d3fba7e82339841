"""Which modes a sampler's chains found, when they disagree.

R-hat says that chains disagree, not why. When the posterior has several modes that a
sampler cannot cross (the cardiac model's two, issue of one density and all modes), chains
started in different basins stay in them, and a chain that crosses rarely spends long
stretches in each: R-hat fails, yet each stretch is a fine sample of its mode. This module
names the modes instead (Yao, Vehtari & Gelman 2022, "Stacking for non-mixing Bayesian
computations", JMLR 23:79, section 2: chains that do not mix are samples of different parts
of the posterior).

Each chain is cut into :data:`SEGMENTS` stretches; a stretch is summarised by each continuous
parameter's median, on the scale of the median spread within stretches (robust to the heavy
tails of variance parameters). Two stretches are in one mode when every median lies within
:data:`SEPARATION` such spreads of the other's, and modes are the connected groups
(single linkage, so that a chain drifting slowly through one mode stays one group). A stretch
that crosses from one mode to the other has the median of the mode it spends most of its
time in. Each draw then belongs to the mode whose centre is nearest on the parameters that
separate the modes.

Chains so slow that they have not met within the run (an effective sample size of one or
two per chain) cannot be told from chains in separate modes: either way they stay in regions
they do not leave, which is what the message says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Modes", "find_modes", "SEGMENTS", "SEPARATION"]

#: Stretches each chain is cut into.
SEGMENTS = 10
#: Spreads within stretches between the medians of stretches in different modes.
SEPARATION = 6.0
#: Fewest draws per stretch for a median and a spread.
MIN_STRETCH = 20
#: Parameters named as separating the modes.
NAMED = 3


@dataclass
class Modes:
    """The modes of a sampler's draws.

    ``labels`` (chain, draw) gives each draw's mode (0 holds the most draws); ``shares`` the
    share of all draws in each mode; ``chain_shares`` (chain, mode) the share of each chain's
    draws; ``separating`` the parameters that differ most between the modes, each with its
    mean in every mode, most separated first.
    """

    labels: np.ndarray
    shares: np.ndarray
    chain_shares: np.ndarray
    separating: list[tuple[str, np.ndarray]]

    @property
    def count(self) -> int:
        """The number of modes."""
        return self.shares.shape[0]

    def describe(self) -> str:
        """The modes in words: shares, chains, and the parameters that separate them."""
        parts = []
        for mode, share in enumerate(self.shares):
            chains = [
                f"{chain}" if fraction > 0.995 else f"{chain} ({fraction:.0%})"
                for chain, fraction in enumerate(self.chain_shares[:, mode])
                if fraction > 0.005
            ]
            chain_word = "chains" if len(chains) > 1 else "chain"
            parts.append(
                f"mode {mode + 1} holds {share:.0%} of the draws ({chain_word} {', '.join(chains)})"
            )
        differences = "; ".join(
            f"{label}: " + " against ".join(f"{value:.3g}" for value in means)
            for label, means in self.separating
        )
        return (
            f"chains found {self.count} modes (regions they do not leave): {', '.join(parts)}; "
            f"they differ in {differences}. "
            "R-hat across modes is no check of convergence, and the draws' mix of the modes is "
            "not their posterior mass"
        )


def find_modes(posterior) -> Modes | None:
    """The modes of the draws in ``posterior`` (an ``xarray.Dataset`` with dimensions
    ``chain`` and ``draw``), or None when they all lie in one.
    """
    labels, draws = _continuous_columns(posterior)
    n_chains, n_draws = draws.shape[:2]
    length = n_draws // SEGMENTS
    if not labels or length < MIN_STRETCH:
        return None
    stretches = draws[:, : SEGMENTS * length].reshape(n_chains * SEGMENTS, length, -1)
    medians = np.median(stretches, axis=1)
    quartiles = np.percentile(stretches, [25.0, 75.0], axis=1)
    spread = np.median(quartiles[1] - quartiles[0], axis=0) / 1.349
    spread = np.where(spread > 0.0, spread, np.inf)  # a parameter still within stretches
    groups = _linked_groups(medians / spread)
    if groups.max() == 0:
        return None
    centres = np.array([np.median(medians[groups == g], axis=0) for g in range(groups.max() + 1)])
    gaps = np.ptp(centres, axis=0) / spread
    separating = gaps > SEPARATION
    scaled = draws[..., separating] / spread[separating]
    distances = np.linalg.norm(
        scaled[..., None, :] - (centres[:, separating] / spread[separating]), axis=-1
    )
    mode_of_draw = np.argmin(distances, axis=-1)
    counts = np.bincount(mode_of_draw.ravel(), minlength=centres.shape[0])
    order = np.argsort(-counts, kind="stable")
    order = order[counts[order] > 0]
    if order.shape[0] < 2:
        return None
    relabel = np.empty(centres.shape[0], dtype=int)
    relabel[order] = np.arange(order.shape[0])
    mode_of_draw = relabel[mode_of_draw]
    chain_shares = np.stack(
        [np.mean(mode_of_draw == mode, axis=1) for mode in range(order.shape[0])], axis=1
    )
    means = np.stack([draws[mode_of_draw == mode].mean(axis=0) for mode in range(order.shape[0])])
    named = np.argsort(-gaps, kind="stable")[:NAMED]
    return Modes(
        labels=mode_of_draw,
        shares=counts[order] / mode_of_draw.size,
        chain_shares=chain_shares,
        separating=[(labels[j], means[:, j]) for j in named if separating[j]],
    )


def _continuous_columns(posterior) -> tuple[list[str], np.ndarray]:
    """Every scalar of every variable that takes more than integer values, as columns of a
    ``(chain, draw, column)`` array, with ArviZ-style labels (``u[x3]``); indicators and
    counts are left out (their switching is mixing, not a change of mode).
    """
    labels, columns = [], []
    for name, values in posterior.data_vars.items():
        array = values.to_numpy()
        coords = [values[dim].to_numpy() for dim in values.dims[2:]]
        flat = array.reshape(array.shape[0], array.shape[1], -1)
        for position, index in enumerate(np.ndindex(array.shape[2:])):
            column = flat[..., position]
            if np.all(column == np.round(column)):
                continue
            inner = ", ".join(str(coord[i]) for coord, i in zip(coords, index, strict=True))
            labels.append(f"{name}[{inner}]" if inner else name)
            columns.append(column)
    if not columns:
        return [], np.empty((0, 0, 0))
    return labels, np.stack(columns, axis=-1)


def _linked_groups(points: np.ndarray) -> np.ndarray:
    """Single-linkage groups of ``points`` (rows), two linked when every coordinate differs
    by less than :data:`SEPARATION`: each row's group number, by first appearance.
    """
    close = np.all(np.abs(points[:, None, :] - points[None, :, :]) < SEPARATION, axis=-1)
    groups = np.full(points.shape[0], -1)
    for start in range(points.shape[0]):
        if groups[start] >= 0:
            continue
        groups[start] = group = groups.max() + 1
        frontier = [start]
        while frontier:
            members = np.flatnonzero(close[frontier].any(axis=0) & (groups < 0))
            groups[members] = group
            frontier = list(members)
    return groups
