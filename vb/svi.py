"""Stochastic variational inference over a model's blocks (Hoffman, Blei, Wang & Paisley 2013).

Each step takes a minibatch ``S`` of rows (Wenzel et al. Algorithm 1, line 6). The model's
blocks on those rows count each row ``n / |S|`` times; the driver then

1. sets every *global* block's ``q`` from its natural parameters, on the minibatch's rows;
2. sets every *latent* block (local: one variable per row) to its complete conditional given
   the others, in closed form (line 7: ``alpha_i``);
3. computes each global block's conditional given those statistics: the natural parameters
   ``eta-hat`` the whole data set would give if it were ``n / |S|`` copies of the minibatch
   (lines 9-10, eq. 9-10), and steps ``eta <- (1 - rho_t) eta + rho_t eta-hat`` (lines 11-12),
   a natural-gradient step of length ``rho_t`` on the bound.

The step sizes are Robbins-Monro's ``rho_t = (t + tau)^-kappa`` (Hoffman et al. eq. 26):
``sum rho_t = inf`` and ``sum rho_t^2 < inf`` for ``kappa`` in ``(1/2, 1]``, so the iterates
converge to a local optimum of the bound. (Wenzel et al. use Ranganath et al.'s adaptive rate;
the schedule here is the simpler one their convergence argument rests on.) With the whole data
set as the batch and ``kappa = 0`` each step is a CAVI sweep.

Stopping (the shared loop, :func:`bayesvm.drivers.run_stochastic_ascent`): at the end of each
*check period* (an epoch, at most :data:`CHECK_STEPS` steps) the driver compares ``q``'s mean
with the previous check's; it stops when the relative change is below ``tol``. The bound's
minibatch estimates (the blocks' terms, the likelihood counted ``n / |S|`` times) are averaged
over each period into the ``lower_bound`` trace and shown on the progress bar. ML-II
(section 4.3; the model's ``hyperparameter_gradient``) adds an ascent step in the model's
hyperparameters (the GP's kernel's) every ``hyper_every`` steps, with ``q`` held fixed (eq. 12),
on the log scale with Adam's per-coordinate step sizes (Kingma & Ba 2015), because the
gradients in the length-scale and the variance differ by orders of magnitude.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from bayesvm.blocks import NaturalGradientBlock
from bayesvm.checks.pareto import check_q
from bayesvm.drivers import StochasticResult, run_stochastic_ascent
from bayesvm.registry import block_driver, register
from bayesvm.results import Fit, build_idata
from bayesvm.vb.posterior import q_groups

__all__ = ["fit_svi", "step_flops", "CHECK_STEPS"]

#: Most steps between two convergence checks (one epoch when that is shorter).
CHECK_STEPS = 2000


def step_flops(model, options: dict) -> float:
    """A step's work: the model's iteration over every row, scaled to the minibatch's share
    (a lower bound: the part of an iteration that does not grow with the rows is scaled too).
    Steps are small; the work of a whole pass over millions of rows would choose more BLAS
    threads, which were measured to slow them down about a hundredfold on a busy machine.
    """
    n = model.n_samples
    batch_size = options.get("batch_size") or model.svi_settings["batch_size"]
    return model.flops_per_iteration * min(batch_size, n) / n


@register("svi", block_driver("svi"), work=step_flops)
def fit_svi(
    model,
    *,
    batch_size: int | None = None,
    max_iter: int | None = None,
    epochs: int = 50,
    tol: float = 1e-2,
    step: tuple[float, float] = (1.0, 0.75),
    learn_hyperparameters: bool | tuple = False,
    hyper_every: int = 10,
    hyper_rate: float = 0.05,
    seed=None,
    progressbar: bool = True,
    draws: int = 1000,
) -> Fit:
    """Fit by stochastic VI: natural-gradient steps on minibatches (module docstring).

    Parameters
    ----------
    batch_size : int, optional
        Rows per step; default the model's paper's (``model.svi_settings``: 10).
    max_iter : int, optional
        Most steps; default ``epochs`` passes over the data.
    epochs : int
        Most passes over the data when ``max_iter`` is not given.
    tol : float
        Stop when ``q``'s mean moves by less than this, relative to its size, over a check
        period. The minibatches' noise keeps the mean moving as ``rho_t`` shrinks: on the paper's
        waveform setting (100 inducing points, minibatches of 10) it moves by more than 1e-3
        per epoch after 50 epochs, while at 1e-2 (about 16 epochs) the held-out error is
        already that of the bound's optimum (B-BSVM).
    step : (tau, kappa)
        ``rho_t = (t + tau)^-kappa``; ``tau >= 1``, ``kappa`` in ``(1/2, 1]`` for minibatches
        (``kappa = 0`` with full batches is coordinate ascent).
    learn_hyperparameters : bool or tuple of str
        ML-II: also ascend the bound in the model's log hyperparameters
        (:attr:`~bayesvm.models.BlockModel.hyperparameters`), one step every ``hyper_every``
        variational steps, Adam's step size ``hyper_rate``. True learns the model's
        ``default_learned`` (the GP's length-scale, section 5.4); a tuple names them (the GP's
        ``("lengthscale", "variance")``: both). (The hinge pseudo-likelihood is not
        normalised, and on well separated data its bound rises without end in the variance,
        as a larger ``f`` pays less hinge loss.) The fit's ``model`` is then the model at the
        learned values.
    seed : int or numpy Generator, optional
        Minibatch order and the draws from ``q``.
    progressbar : bool
        Show the steps and the running bound.
    draws : int
        Draws from ``q`` stored as the posterior; their importance weights give
        ``fit.pareto_k`` where the model has a density (the full GP; :mod:`bayesvm.checks.pareto`).
    """
    tau, kappa = _check_step(step)
    n = model.n_samples
    batch_size = model.svi_settings["batch_size"] if batch_size is None else batch_size
    if not (isinstance(hyper_rate, float | int) and hyper_rate > 0):
        raise ValueError(f"hyper_rate must be a number > 0; got {hyper_rate!r}")
    learned = _learned(model, learn_hyperparameters)
    batch_size = min(batch_size, n)
    steps_per_epoch = math.ceil(n / batch_size)
    max_iter = epochs * steps_per_epoch if max_iter is None else max_iter
    check_every = min(steps_per_epoch, CHECK_STEPS)
    rng = np.random.default_rng(seed)
    batches = model.minibatches(batch_size, rng)
    adam = Adam(rate=hyper_rate, size=learned.size)

    def step(state: SVIState, t: int) -> tuple[SVIState, float]:
        """Step ``t``: ``q`` of the global blocks a natural-gradient step of length ``rho_t``
        toward their conditionals on a minibatch, then, every ``hyper_every`` steps, ML-II's
        step; the estimate is the bound on the minibatch (scaled to all rows).
        """
        batch, model = next(batches), state.model
        blocks = model.batch_blocks(batch.rows, batch.X, batch.y, n / batch.y.shape[0])
        params, stats = _local_step(blocks, state.natural)
        estimate = sum(b.bound_term(params[b.name], stats) for b in blocks)
        rho = 1.0 if kappa == 0.0 else (t + tau) ** -kappa
        natural = dict(state.natural)
        for block in blocks:
            if block.name in natural:
                target = block.conditional_natural(stats)
                natural[block.name] = tuple(
                    (1.0 - rho) * old + rho * new
                    for old, new in zip(natural[block.name], target, strict=True)
                )
        hyper_trace = state.hyper_trace
        if learned.any() and t % hyper_every == 0:
            model, natural = _hyper_step(
                model, blocks, params, stats, batch, natural, adam, learned
            )
            hyper_trace += ((t, *model.hyperparameters.values()),)
        return SVIState(model, natural, blocks, hyper_trace), estimate

    start = model.report_blocks()
    natural = {b.name: b.initial_natural() for b in start if isinstance(b, NaturalGradientBlock)}
    result = run_stochastic_ascent(
        SVIState(model, natural, start, ()),
        step,
        location=_q_mean,
        tol=tol,
        max_iter=max_iter,
        check_every=check_every,
        progressbar=progressbar,
    )
    if result.steps == 0:
        raise KeyboardInterrupt("interrupted before the first step")
    return _result(result, tol, rng, draws)


class SVIState(NamedTuple):
    """What a step of stochastic VI hands the next: the model (at its current
    hyperparameters), the natural parameters of ``q`` of its global blocks, the blocks of the
    last minibatch and the ML-II steps so far, rows ``(t, *hyperparameters)``.
    """

    model: object
    natural: dict
    blocks: list
    hyper_trace: tuple


def _q_mean(state: SVIState) -> np.ndarray:
    """``q``'s mean over the global blocks (what the convergence check compares)."""
    return np.concatenate(
        [b.natural_mean(state.natural[b.name]) for b in state.blocks if b.name in state.natural]
    )


def _local_step(blocks, natural):
    """``q`` of the global blocks from their natural parameters, the others in closed form."""
    params, stats = {}, {}
    for block in blocks:
        if block.name in natural:
            q = block.from_natural(natural[block.name])
        else:
            q = block.conditional(stats)
        params[block.name] = q
        stats[block.name] = block.expected_stats(q)
    return params, stats


def _learned(model, learn) -> np.ndarray:
    """Which of the model's :attr:`~bayesvm.models.BlockModel.hyperparameters` ML-II moves."""
    names = tuple(model.hyperparameters)
    if learn is False:
        return np.zeros(len(names), dtype=bool)
    if not names:
        raise ValueError(f"{type(model).__name__} has no hyperparameters to learn")
    chosen = model.default_learned if learn is True else tuple(learn)
    unknown = set(chosen) - set(names)
    if unknown or not chosen:
        raise ValueError(
            f"learn_hyperparameters must be True, False or names among {names}; got {learn!r}"
        )
    return np.isin(names, chosen)


def _hyper_step(model, blocks, params, stats, batch, natural, adam, learned):
    """One ML-II step (Wenzel et al. eq. 12) with ``q`` fixed, carried to the new model's
    parameterisation (:meth:`~bayesvm.models.BlockModel.transfer_natural`).
    """
    gradient = model.hyperparameter_gradient(batch, blocks, params, stats)
    change = np.exp(adam.step(np.where(learned, gradient, 0.0)))
    current = model.hyperparameters
    new = model.with_hyperparameters(
        **{
            name: value * factor
            for (name, value), factor in zip(current.items(), change, strict=True)
        }
    )
    return new, model.transfer_natural(natural, blocks, new)


def _result(result: StochasticResult, tol: float, rng, draws: int) -> Fit:
    """The :class:`~bayesvm.Fit` of a stochastic ascent's result: draws from ``q`` of the
    global blocks, its k-hat, the bound's trace and the ML-II steps.
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup

    model, natural, hyper_trace = result.state.model, result.state.natural, result.state.hyper_trace
    trace, n_steps, converged, interrupted = (
        result.trace,
        result.steps,
        result.converged,
        result.interrupted,
    )

    fitted = [
        (block, block.from_natural(natural[block.name]))
        for block in model.report_blocks()
        if block.name in natural
    ]
    posterior, variational, coords = q_groups(model, fitted, rng, draws)
    check = check_q(model, fitted, posterior)
    variational.update(check.variational())
    variational["lower_bound"] = (["check"], np.asarray(trace))
    for name, value in model.hyperparameters.items():
        variational[name] = ((), value)
    if hyper_trace:
        history = np.asarray(hyper_trace)
        variational["hyper_step"] = (["hyper_iteration"], history[:, 0].astype(int))
        for column, name in enumerate(model.hyperparameters, start=1):
            variational[f"{name}_trace"] = (["hyper_iteration"], history[:, column])
    problems = []
    if interrupted:
        problems.append(f"interrupted after {n_steps} steps, before converging")
    elif not converged:
        problems.append(
            f"stopped after {n_steps} steps with q's mean still moving by more than "
            f"tol={tol:g} per check: raise max_iter or epochs"
        )
    if check.problem():
        problems.append(check.problem())
    idata = build_idata(model, posterior, variational=xr.Dataset(variational, coords=coords))
    idata.attrs.update(check.attrs())
    return Fit(
        model,
        idata,
        "svi",
        "variational",
        n_iter=n_steps,
        converged=converged and not interrupted,
        problems=problems,
        lower_bound_trace=np.asarray(trace),
    )


def _check_step(step) -> tuple[float, float]:
    try:
        tau, kappa = (float(value) for value in step)
    except (TypeError, ValueError):
        raise ValueError(f"step must be a pair (tau, kappa); got {step!r}") from None
    if not (tau >= 1.0 and 0.0 <= kappa <= 1.0):
        raise ValueError(f"step needs tau >= 1 and 0 <= kappa <= 1; got {step!r}")
    return tau, kappa


@dataclass
class Adam:
    """Adam's ascent on a parameter vector (Kingma & Ba 2015, Algorithm 1)."""

    rate: float = 0.05
    size: int = 2
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8
    steps: int = 0
    first: np.ndarray = field(init=False)
    second: np.ndarray = field(init=False)

    def __post_init__(self):
        self.first, self.second = np.zeros(self.size), np.zeros(self.size)

    def step(self, gradient: np.ndarray) -> np.ndarray:
        """The change of the parameters for an ascent along ``gradient``."""
        self.steps += 1
        self.first = self.beta1 * self.first + (1 - self.beta1) * gradient
        self.second = self.beta2 * self.second + (1 - self.beta2) * gradient**2
        first = self.first / (1 - self.beta1**self.steps)
        second = self.second / (1 - self.beta2**self.steps)
        return self.rate * first / (np.sqrt(second) + self.epsilon)
