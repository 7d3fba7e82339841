"""What the MCMC backends share: the checks a chain must pass, and the result they build.

A sampler's draws are trusted when (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021,
"Rank-normalization, folding, and localization: an improved R-hat"):

* every parameter's rank-normalised split R-hat is below :data:`RHAT_MAX` (1.01);
* every parameter's bulk and tail effective sample sizes reach :data:`ESS_PER_CHAIN`
  (100) per chain, enough for R-hat and the Monte Carlo errors themselves to be reliable;
* parameters whose every draw is the same (an inclusion indicator that never switched, and
  the weight it holds at zero) have no Monte Carlo error and are not checked;
* NUTS made no divergent transition (a divergence means a region of the posterior the
  sampler could not explore, so the draws can be biased whatever R-hat says);
* a trans-dimensional fit (reversible jump, spike-and-slab) is judged also on the model size
  :data:`MODEL_SIZE` of its ``sample_stats``, a quantity that means the same in every model
  (Brooks & Giudici 2000, "Markov chain Monte Carlo convergence assessment via two-way
  analysis of variance"): its R-hat and bulk ESS pass as a parameter's, and a failure names
  it. The indicators alone can pass where the size does not: each of many rarely active
  vectors switches often enough while the number of them drifts.

A single chain is judged by cutting it into halves taken as two chains, so that a chain that
drifts, or sits in one mode for half the run and in another for the rest, fails as it should.
Where R-hat fails because the chains found several modes (:mod:`bayesvm.checks.modes`), the
problem names the modes, their shares of the draws and the parameters that separate them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from bayesvm.checks.convergence import bulk_ess, rank_normalized_rhat, tail_ess
from bayesvm.checks.mode_mass import mode_masses
from bayesvm.checks.modes import find_modes
from bayesvm.results import Fit, build_idata

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "mcmc_problems",
    "mcmc_checks",
    "mcmc_converged",
    "mcmc_fit",
    "RHAT_MAX",
    "ESS_PER_CHAIN",
    "MODEL_SIZE",
]

RHAT_MAX = 1.01
ESS_PER_CHAIN = 100
#: The effective sample sizes the checks can ask for, by ArviZ's name of their method.
ESS_BY_METHOD = {"bulk": bulk_ess, "tail": tail_ess}
#: The model size in ``sample_stats`` (active vectors or included columns), checked with the
#: posterior's variables.
MODEL_SIZE = "n_active"


def mcmc_problems(idata, model=None) -> list[str]:
    """Why the draws of ``idata`` should not be trusted, in words; empty if they pass
    (:func:`mcmc_checks`' problems).
    """
    return mcmc_checks(idata, model)[1]


def mcmc_checks(idata, model=None):
    """The draws to keep and why they should not be trusted, in words (empty if they pass).

    Where the chains found several modes (:mod:`bayesvm.checks.modes`) and ``model`` is
    given, the modes' masses are estimated (:mod:`bayesvm.checks.mode_mass`) and the problem
    says which holds the posterior mass. Where the estimate is trusted, one mode holds all but
    :data:`NEGLIGIBLE_MASS` of it and some chains stay in that mode throughout, the draws kept
    are those chains': the stacking of non-mixing chains (Yao, Vehtari & Gelman 2022) with
    weights 1 and 0. They are checked on their own, and ``idata.attrs["modes"]`` says which
    chains were left out and why.
    """
    problems, modes, at = _checks(idata)
    if modes is None or model is None:
        return idata, problems
    masses = mode_masses(model, idata.posterior, modes.labels, np.random.default_rng(0))
    found = f"{modes.describe()}; {masses if isinstance(masses, str) else masses.describe()}"
    problems[at] = found
    if isinstance(masses, str):
        return idata, problems
    heaviest = int(np.argmax(masses.log_mass))
    kept = np.flatnonzero(modes.chain_shares[:, heaviest] >= WHOLE_CHAIN)
    if not (masses.reliable and masses.log_rest(heaviest) < np.log(NEGLIGIBLE_MASS) and kept.size):
        return idata, problems
    stacked = idata.isel(chain=kept)
    kept_problems, kept_modes, _ = _checks(stacked)
    if kept_modes is not None:
        return idata, problems
    stacked.attrs["modes"] = (
        f"{found}: the draws kept are those of chain(s) "
        f"{', '.join(str(chain) for chain in kept)}, in mode {heaviest + 1}"
    )
    return stacked, [stacked.attrs["modes"], *kept_problems] if kept_problems else []


#: A mode's chains stand for the posterior where the other modes hold less mass than this.
NEGLIGIBLE_MASS = 1e-3
#: A chain is in a mode when this share of its draws is.
WHOLE_CHAIN = 0.995


def _checks(idata) -> tuple[list[str], object, int | None]:
    """The problems of ``idata``'s draws, the modes its chains found (None where R-hat passes
    or no modes are found) and the position of their problem.
    """
    posterior = idata.posterior
    n_chains = posterior.sizes["chain"]
    problems = []
    modes = at = None
    draws, label = _parameters(posterior)
    chains, rhat_values, ess_values, constant = _statistics(draws, ("bulk", "tail"))
    if rhat_values is None:
        problems.append(f"a single chain of {posterior.sizes['draw']} draws is too short to check")
    else:
        problem = _rhat_problem(chains, rhat_values, constant, n_chains, label)
        modes = None if problem is None else find_modes(posterior)
        if modes is not None:
            at = len(problems)
            problems.append(modes.describe())
        elif problem is not None:
            problems.append(problem)
    problems.extend(_ess_problems(ess_values, constant, n_chains, label))
    problems.extend(_model_size_problems(idata))
    if "sample_stats" in idata.groups() and "diverging" in idata.sample_stats:
        divergences = int(idata.sample_stats["diverging"].sum())
        if divergences:
            problems.append(
                f"{divergences} divergent transitions: NUTS could not explore part of the "
                "posterior (try noncentered=True or a higher target_accept)"
            )
    return problems, modes, at


def _parameters(draws: xr.Dataset) -> tuple[np.ndarray, Callable[[int], str]]:
    """Every scalar parameter of the variables of ``draws``, in order: their draws as one
    (chain, draw, parameter) array, and the ArviZ label (e.g. ``u[x3]``) of a parameter's index.
    """
    variables = [values.transpose("chain", "draw", ...) for values in draws.data_vars.values()]
    n_chains, n_draws = draws.sizes["chain"], draws.sizes["draw"]
    flat = [
        values.to_numpy().reshape(n_chains, n_draws, math.prod(values.shape[2:]))
        for values in variables
    ]
    starts = np.cumsum([0, *(values.shape[-1] for values in flat)])

    def label(index: int) -> str:
        position = int(np.searchsorted(starts, index, side="right")) - 1
        values = variables[position]
        element = np.unravel_index(index - starts[position], values.shape[2:])
        coords = ", ".join(
            str(values[dim].to_numpy()[i]) for dim, i in zip(values.dims[2:], element, strict=True)
        )
        return f"{values.name}[{coords}]" if coords else str(values.name)

    return np.concatenate(flat, axis=-1), label


def _statistics(draws: np.ndarray, ess_methods: tuple[str, ...]):
    """``(chains, R-hat, {method: ESS}, constant)`` of each parameter of ``draws`` (chain,
    draw, parameter), by :mod:`bayesvm.checks.convergence`: the chains R-hat compares (a
    single chain's halves; None where too short to halve), and which parameters hold one
    value in every draw (not checked).
    """
    chains = _halves_as_chains(draws) if draws.shape[0] < 2 else draws
    constant = draws.max(axis=(0, 1)) == draws.min(axis=(0, 1))
    rhat_values = None if chains is None else rank_normalized_rhat(chains)
    ess_values = {method: ESS_BY_METHOD[method](draws) for method in ess_methods}
    return chains, rhat_values, ess_values, constant


def _rhat_problem(
    chains: np.ndarray, rhat_values, constant, n_chains: int, label: Callable[[int], str]
):
    """The R-hat failure of the worst parameter, in words (None where every one passes);
    ``chains`` are a single chain's halves where ``n_chains`` is 1.
    """
    disagree = "the chains disagree" if n_chains > 1 else "the chain's halves disagree"
    # A parameter that never moves within any chain but differs between them (an indicator
    # kept in by one chain and out by another) has no within-chain variance: R-hat is 0 / 0,
    # NaN or, after round-off, a huge number.
    stuck = (chains.max(axis=1) == chains.min(axis=1)).all(axis=0) & ~constant
    if stuck.any():
        name = label(int(np.argmax(stuck)))
        return f"R-hat of {name} is undefined: {disagree}, each staying at one value"
    name, rhat = _worst(rhat_values, constant, largest=True, label=label)
    if not rhat < RHAT_MAX:
        return f"R-hat {rhat:.4f} of {name} exceeds {RHAT_MAX}: {disagree}"
    return None


def _ess_problems(
    ess_values: dict, constant, n_chains: int, label: Callable[[int], str]
) -> list[str]:
    """The ESS of the worst parameter by each method, where below the floor, in words."""
    floor = ESS_PER_CHAIN * n_chains
    problems = []
    for method, values in ess_values.items():
        name, ess = _worst(values, constant, largest=False, label=label)
        if not ess >= floor:
            problems.append(
                f"{method} ESS {ess:.0f} of {name} is below {floor} ({ESS_PER_CHAIN} per chain): "
                "draw more"
            )
    return problems


def _model_size_problems(idata) -> list[str]:
    """R-hat and bulk ESS of :data:`MODEL_SIZE` (module docstring), where it is in
    ``sample_stats`` and changes.
    """
    if "sample_stats" not in idata.groups() or MODEL_SIZE not in idata.sample_stats:
        return []
    size, label = _parameters(idata.sample_stats[[MODEL_SIZE]])
    chains, rhat_values, ess_values, constant = _statistics(size, ("bulk",))
    if constant.all():
        return []
    n_chains = size.shape[0]
    problems = []
    if rhat_values is not None:  # a chain too short to halve is reported with the posterior
        problems.append(_rhat_problem(chains, rhat_values, constant, n_chains, label))
    problems.extend(_ess_problems(ess_values, constant, n_chains, label))
    return [problem for problem in problems if problem is not None]


def mcmc_converged(idata) -> bool:
    """True when the draws pass every check of :func:`mcmc_problems`."""
    return not mcmc_problems(idata)


def mcmc_fit(model, result, method: str):
    """The :class:`~bayesvm.Fit` from :func:`~bayesvm.drivers.run_mcmc`'s draws."""
    posterior = {name: result.samples[name] for name in model.var_names}
    sample_stats = {
        **{name: values for name, values in result.samples.items() if name not in posterior},
        **result.stats,
    }
    idata = build_idata(model, posterior, sample_stats=sample_stats)
    idata, problems = mcmc_checks(idata, model)
    if result.interrupted:
        problems.insert(0, "interrupted: the draws stop where the sampler was stopped")
    return Fit(
        model, idata, method, "mcmc", n_iter=result.n_iter, converged=True, problems=problems
    )


def _halves_as_chains(draws: np.ndarray) -> np.ndarray | None:
    """One chain's two halves as two chains (None when too short to halve)."""
    half = draws.shape[1] // 2
    if half < 4:
        return None
    return draws[0, : 2 * half].reshape(2, half, *draws.shape[2:])


def _worst(
    statistics: np.ndarray, constant: np.ndarray, largest: bool, label: Callable[[int], str]
) -> tuple[str, float]:
    """The label of the parameter with the largest or smallest statistic, and the statistic,
    those ``constant`` in every draw left out; NaN (undefined, e.g. for draws that never move
    in some chain) is the worst of all; the first in order wins a tie.
    """
    checked = np.flatnonzero(~constant)
    if not checked.size:
        return "", -np.inf if largest else np.inf
    values = statistics[checked]
    undefined = np.isnan(values)
    if undefined.any():
        worst = checked[np.argmax(undefined)]
    else:
        worst = checked[np.argmax(values) if largest else np.argmin(values)]
    return label(int(worst)), float(statistics[worst])
