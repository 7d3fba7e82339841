"""PyMC NUTS on ``model.to_pymc()``: the MCMC baseline for every model PyMC can express.

Configured fairly: PyTensor is linked to an optimised BLAS where one is installed
(:func:`bayesvm._blas.pytensor_blas`, chosen before the first compile), the default
``target_accept`` is raised to 0.9 because the hinge potential has kinks, and only the
canonical variables are stored so the InferenceData matches every other backend.

A model with discrete variables (the inclusion indicators ``gamma`` of
:class:`~bayesvm.models.SpikeSlabSVM`) is not sampled by NUTS alone: PyMC assigns each
variable the step method most competent for it and alternates them in a compound step, NUTS
for the continuous variables and ``BinaryGibbsMetropolis`` for binary ones. Which method drew
each stored variable is kept in ``idata.attrs["step_methods"]`` (:func:`step_methods`), and
:func:`bayesvm.compare` shows it.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from bayesvm._blas import pytensor_blas
from bayesvm.catalogue import METHODS
from bayesvm.interrupts import keeps_on_interrupt
from bayesvm.registry import backend_for, register
from bayesvm.results import Fit, attach_data
from bayesvm.samplers.diagnostics import mcmc_checks
from bayesvm.samplers.gibbs import make_gibbs_kernel

__all__ = ["fit_nuts", "step_methods", "chain_starts", "NUTS_SAMPLERS"]

#: NUTS implementations ``fit_nuts`` runs: PyMC's own and nutpie's (an optional extra).
NUTS_SAMPLERS = METHODS["nuts"].options["sampler"].choices


def _supports(model) -> bool:
    """NUTS fits a model whose PyMC statement is its posterior
    (:attr:`~bayesvm.models.BlockModel.pymc_specified`).
    """
    return model.pymc_specified


def step_methods(pymc_model, var_names) -> dict[str, str]:
    """The PyMC step methods that draw each of ``var_names``, as ``pymc.sample`` assigns them.

    A free variable is drawn by one method (``"NUTS"``, ``"BinaryGibbsMetropolis"``, ...); a
    deterministic one (``u = gamma * v``) is computed from the draws of the free variables it
    depends on, and gets their methods joined by ``" + "``.
    """
    from pymc.sampling.mcmc import assign_step_methods
    from pymc.step_methods import STEP_METHODS
    from pytensor.graph.traversal import ancestors

    _, selected = assign_step_methods(pymc_model, methods=STEP_METHODS)
    method_of = {
        pymc_model.values_to_rvs[value]: method.__name__
        for method, values in selected.items()
        for value in values
    }
    methods = {}
    for name in var_names:
        variable = pymc_model[name]
        if variable in method_of:
            methods[name] = method_of[variable]
            continue
        used = {method_of[node] for node in ancestors([variable]) if node in method_of}
        methods[name] = " + ".join(sorted(used, key=lambda method: (method != "NUTS", method)))
    return methods


def chain_starts(model, pymc_model, chains: int, rng: np.random.Generator):
    """One start per chain for NUTS in PyMC's variables
    (:meth:`~bayesvm.models.BlockModel.pymc_values`), so that the chains begin in different
    basins rather than all at PyMC's start, where a multimodal posterior can hold them in one
    (the cardiac model's minor mode lies around ``u = 0``, ``x_mis = 0``): the first chain at
    VB's optimum (``q``'s means; where the model has VB), the others at the dispersed starts
    of Gibbs chains (the blocks' :meth:`~bayesvm.blocks.Block.initial_value`). Variables the
    blocks do not map, indicators, and values that are not finite (``q``'s mean of a variance
    whose inverse-gamma factor has shape at most 1 is infinite: a random intercept over one
    group) start where PyMC starts them; None for a model with neither VB nor Gibbs.
    """
    points = []
    if "vb" in model.drivers:
        fit_vb = backend_for(model, "vb").run
        optimum = fit_vb(model, starts=1, draws=1, progressbar=False).optima.isel(optimum=0)
        points.append({name: optimum[name].to_numpy() for name in optimum.data_vars})
    if "gibbs" in model.drivers:
        init, _, record = make_gibbs_kernel(model.blocks)
        for chain_rng in rng.spawn(chains - len(points)):
            values = record(init(chain_rng))
            points.append({name: values[name] for name in model.var_names})
    if not points:
        return None
    free = {rv.name for rv in pymc_model.free_RVs if rv.type.dtype.startswith("float")}
    starts = [
        {
            name: value
            for name, value in model.pymc_values(point).items()
            if name in free and np.all(np.isfinite(value))
        }
        for point in points[:chains]
    ]
    return starts + [{}] * (chains - len(starts))


def _nutpie_options(methods: dict[str, str], cores, sample_kwargs: dict) -> dict:
    """``sample_kwargs`` for nutpie, once it is known to be installed and the model to need
    NUTS alone (``methods``: :func:`step_methods`).
    """
    discrete = [name for name, method in methods.items() if "NUTS" not in method]
    if discrete:
        raise ValueError(
            f'sampler="nutpie" runs NUTS alone, which cannot draw the discrete variables '
            f'{discrete}; use sampler="pymc" (a compound step of NUTS and Gibbs steps)'
        )
    if importlib.util.find_spec("nutpie") is None:
        raise ImportError(
            'sampler="nutpie" needs the nutpie package: pip install "bayesvm[nutpie]"'
        )
    # Like PyMC's sampler: keep no warm-up draws; run chains on ``cores`` threads.
    nutpie_options = {"save_warmup": False, **({"cores": cores} if cores else {})}
    return {
        **sample_kwargs,
        "nuts_sampler_kwargs": {
            **nutpie_options,
            **sample_kwargs.get("nuts_sampler_kwargs", {}),
        },
    }


@register("nuts", _supports)
def fit_nuts(
    model,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    seed=None,
    target_accept: float = 0.9,
    progressbar: bool = True,
    noncentered: bool = False,
    sampler: str = "pymc",
    **sample_kwargs,
) -> Fit:
    """Fit by PyMC's NUTS, or by nutpie's.

    Discrete variables (a spike-and-slab's ``gamma``) cannot be drawn by NUTS: PyMC then
    samples by a compound step, NUTS for the continuous variables and
    ``BinaryGibbsMetropolis`` (a Metropolis flip of one indicator at a time) for the binary
    ones. The method of each variable is recorded in ``idata.attrs["step_methods"]`` (e.g.
    ``"beta: NUTS; v: NUTS; u: NUTS + BinaryGibbsMetropolis; gamma: BinaryGibbsMetropolis"``)
    and shown by :func:`bayesvm.compare`; nutpie runs NUTS alone and refuses such a model.

    Parameters
    ----------
    draws, tune, chains, cores, target_accept, progressbar
        As in ``pymc.sample``.
    seed : int, optional
        ``random_seed`` of ``pymc.sample``.
    noncentered : bool
        Write a learned Gaussian ``u`` as ``sqrt(sigma2_u) * z``, ``z ~ N(0, I)``
        (``model.to_pymc(noncentered=True)``). NUTS needs it for random intercepts with few
        rows per group, where the centred funnel between ``sigma2_u`` and ``u`` makes it
        diverge; the posterior (and the stored ``u``) is the same.
    sampler : {"pymc", "nutpie"}
        ``"pymc"``: PyMC's NUTS on the model compiled to C (linked to BLAS where one is
        installed). ``"nutpie"``: nutpie's NUTS (``pip install "bayesvm[nutpie]"``) on the model
        compiled by Numba (``nuts_sampler="nutpie"`` of ``pymc.sample``); ``initvals`` are not
        passed to it. The stored variables are the same either way. PyMC's is the default:
        nutpie compiles anew in every process (seconds more than PyMC's C code, which PyTensor
        caches on disk) and mixed far worse on the non-centred toenail random intercept, though
        once compiled it drew several times more effective draws per second on the SVMs.
    **sample_kwargs
        Passed to ``pymc.sample``. Without ``initvals``, each chain of PyMC's NUTS starts from
        its own point (:func:`chain_starts`: VB's optimum, then dispersed points drawn with
        ``seed``), not all from PyMC's start, so that chains in different basins can reveal
        several modes.
    """
    from bayesvm._arviz import pymc as pm  # imported here: PyMC and ArviZ cost 1 s at startup

    METHODS["nuts"].options["sampler"].check("sampler", sampler)
    pytensor_blas()  # nutpie compiles by Numba, but PyMC still compiles its start in C
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2**31))
    var_names = list(model.var_names)
    with model.to_pymc(noncentered=noncentered) as pymc_model:
        methods = step_methods(pymc_model, var_names)
        if sampler == "nutpie":
            sample_kwargs = _nutpie_options(methods, cores, sample_kwargs)
        elif "initvals" not in sample_kwargs:
            rng = np.random.default_rng(seed)
            sample_kwargs["initvals"] = chain_starts(model, pymc_model, chains, rng)
        try:
            idata = pm.sample(
                draws=draws,
                tune=tune,
                chains=chains,
                cores=cores,
                random_seed=seed,
                target_accept=target_accept,
                progressbar=progressbar,
                var_names=var_names,
                compute_convergence_checks=False,
                nuts_sampler=sampler,
                **sample_kwargs,
            )
        except ValueError as error:  # PyMC's answer to Ctrl-C before its first kept draw
            if "Not enough samples" not in str(error):
                raise
            raise KeyboardInterrupt("interrupted before any draw was kept") from None
    # nutpie also stores the unconstrained values (``nu_log__``): keep the canonical variables.
    idata.posterior = idata.posterior[var_names]
    # PyMC stores an observed variable's values as its likelihood takes them (a Bernoulli's
    # 0/1) on its own dimension: every backend's observed_data is attach_data's instead.
    if "observed_data" in idata.groups():
        del idata["observed_data"]
    attach_data(idata, model)
    idata.attrs["step_methods"] = "; ".join(f"{name}: {method}" for name, method in methods.items())
    idata, problems = mcmc_checks(idata, model)
    kept = idata.posterior.sizes["draw"]
    if kept < draws and not keeps_on_interrupt():
        raise KeyboardInterrupt(f"interrupted after {kept} of {draws} draws per chain")
    if kept < draws:  # PyMC keeps the draws made before Ctrl-C
        problems = [f"interrupted after {kept} of {draws} draws per chain", *problems]
    return Fit(model, idata, "nuts", "mcmc", n_iter=tune + draws, converged=True, problems=problems)
