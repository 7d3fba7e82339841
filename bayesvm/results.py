"""The result every backend returns: :class:`Fit`, holding an ArviZ ``InferenceData``."""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING

import numpy as np

from bayesvm._arviz import quiet_arviz_log

if TYPE_CHECKING:
    import arviz as az
    import pandas as pd
    import xarray as xr

__all__ = [
    "Fit",
    "build_idata",
    "attach_data",
    "add_posterior_predictive",
    "add_log_likelihood",
    "predictive_rng",
    "khat_threshold",
    "LOG_WEIGHT",
    "PREDICTIVE_MAX_DRAWS",
    "PREDICTIVE_MAX_VALUES",
]

KINDS = ("mcmc", "variational", "point")
#: Most posterior draws (chains pooled) the ``posterior_predictive`` group replicates ``y`` for,
#: and most values it holds (draws times observations): beyond either, each chain is thinned.
PREDICTIVE_MAX_DRAWS = 1000
PREDICTIVE_MAX_VALUES = 4_000_000
#: The spawn key that sets the posterior predictive's random stream apart from the fit's own
#: (which a backend draws from the same ``seed``).
PREDICTIVE_STREAM = 0x505043
#: Name of a variational fit's importance log weights ``log p - log q`` of its draws in the
#: ``variational`` group (:mod:`bayesvm.checks.pareto`).
LOG_WEIGHT = "log_weight"


def khat_threshold(draws: int) -> float:
    """The largest Pareto k-hat whose importance sampling is trusted with ``draws`` draws:
    ArviZ's ``min(1 - 1 / log10(draws), 0.7)`` (0.667 at 1000 draws; Vehtari, Simpson,
    Gelman, Yao & Gabry 2024).
    """
    return float(min(1.0 - 1.0 / np.log10(draws), 0.7))


def build_idata(
    model,
    posterior: dict[str, np.ndarray],
    *,
    sample_stats: dict[str, np.ndarray] | None = None,
    variational: xr.Dataset | None = None,
) -> az.InferenceData:
    """InferenceData with the model's canonical names, dims and coords.

    ``posterior`` maps each of ``model.var_names`` to draws of shape ``(chain, draw, *dims)``;
    ``sample_stats`` maps names to arrays of shape ``(chain, draw)``. The datasets are built
    with xarray directly (``arviz.from_dict`` costs ten times more, which matters for a VB fit
    that takes milliseconds).
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup

    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    make_attrs = az.data.base.make_attrs
    missing = set(model.var_names) - set(posterior)
    if missing:
        raise KeyError(f"backend did not return {sorted(missing)}")
    n_chains, n_draws = np.shape(posterior[model.var_names[0]])[:2]
    coords = {"chain": np.arange(n_chains), "draw": np.arange(n_draws), **model.coords}
    sample_dims = ["chain", "draw"]
    groups = {
        "posterior": xr.Dataset(
            {
                name: (sample_dims + model.dims.get(name, []), posterior[name])
                for name in model.var_names
            },
            coords=coords,
            attrs=make_attrs(),
        )
    }
    if sample_stats:
        groups["sample_stats"] = xr.Dataset(
            {name: (sample_dims, values) for name, values in sample_stats.items()},
            coords={"chain": coords["chain"], "draw": coords["draw"]},
            attrs=make_attrs(),
        )
    if variational is not None:
        groups["variational"] = variational
    return attach_data(az.InferenceData(**groups), model)


def attach_data(idata: az.InferenceData, model) -> az.InferenceData:
    """Add ``observed_data`` (y as -1/+1, when it is in memory) and ``constant_data``
    (designs) groups.
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup

    in_memory = isinstance(model.y, np.ndarray)
    obs = {"obs_id": np.arange(model.n_samples)} if in_memory else {}
    constant = xr.Dataset(
        {name: (dims, values) for name, (dims, values) in model.constant_data().items()},
        coords={**obs, **model.coords},
    )
    if hasattr(model, "classes"):
        constant.attrs["classes"] = [str(c) for c in model.classes]
    groups = {"constant_data": constant}
    if in_memory:
        groups["observed_data"] = xr.Dataset({"y": (["obs_id"], model.y)}, coords=obs)
    idata.add_groups({k: v for k, v in groups.items() if k not in idata.groups()})
    return idata


def predictive_rng(seed) -> np.random.Generator:
    """The posterior predictive's generator, derived from the fit's ``seed`` (None, an int, a
    ``SeedSequence`` or a ``Generator``) on a stream of its own, so that the same seed gives the
    same replicated data and the draws do not repeat the numbers the fit drew.
    """
    if isinstance(seed, np.random.Generator):
        return seed.spawn(1)[0]
    sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    child = np.random.SeedSequence(
        sequence.entropy,
        spawn_key=(*sequence.spawn_key, PREDICTIVE_STREAM),
        pool_size=sequence.pool_size,
    )
    return np.random.default_rng(child)


def add_posterior_predictive(fit: Fit, seed=None) -> None:
    """Fill ``fit.idata.posterior_predictive["y"]``: ``y`` replicated at the training rows from
    the model's predictive distribution given each posterior draw (``model.replicate``).

    Dims ``(chain, draw, obs_id)``; a classifier's labels are coded -1/+1 as in
    ``observed_data["y"]`` (stored as ``int8``, so that ArviZ treats them as discrete). A VB
    fit's draws are the draws from ``q`` in its ``posterior`` group; an EM/ECME fit has the mode
    as its single draw. When the posterior has more than :data:`PREDICTIVE_MAX_DRAWS` draws,
    or draws times observations exceed :data:`PREDICTIVE_MAX_VALUES`, every chain is thinned
    by one stride; the ``draw`` coordinate then names the posterior draws kept. Nothing is
    added when the labels are not in memory (a model on a Dask array) or the group exists.

    ``arviz.plot_ppc(fit.idata, kind="cumulative")`` sets the observed share of each label
    against the replicated ones (``kind="scatter"`` and the default ``"kde"`` run too: ArviZ
    draws the integer replicates as histograms, but the observed ``y``, stored as floats, as
    a histogram over its own bins).

    Parameters
    ----------
    fit : Fit
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The fit's seed; the replicated data are drawn on a stream of their own
        (:func:`predictive_rng`).
    """
    _add_per_observation(
        fit,
        "posterior_predictive",
        PREDICTIVE_MAX_DRAWS,
        lambda thinned: fit.model.replicate(thinned, predictive_rng(seed)),
    )


def add_log_likelihood(fit: Fit) -> None:
    """Fill ``fit.idata.log_likelihood["y"]``: ``log p(y_i | theta)`` of each training label
    given each posterior draw (``model.training_log_likelihood``), what ArviZ's ``loo``,
    ``waic`` and ``compare`` read.

    Dims ``(chain, draw, obs_id)``: every draw, unless draws times observations exceed
    :data:`PREDICTIVE_MAX_VALUES`, then every chain thinned by one stride (the ``draw``
    coordinate names the draws kept). A VB fit's draws are those from ``q``. Nothing is added
    for a point estimate (EM, ECME: one draw, nothing to average over), when the labels are
    not in memory, or when the group exists.
    """
    if fit.kind == "point":
        return
    _add_per_observation(fit, "log_likelihood", None, fit.model.training_log_likelihood)


def _add_per_observation(fit: Fit, group: str, most_draws: int | None, values_of) -> None:
    """Add ``group`` with the variable ``y`` of dims ``(chain, draw, obs_id)``:
    ``values_of(thinned)``, one row per draw of ``thinned`` (chains pooled), where
    ``thinned`` is ``fit`` with each chain thinned by the one stride that keeps at most
    ``most_draws`` draws (None: no limit) and :data:`PREDICTIVE_MAX_VALUES` values.
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup

    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    groups = fit.idata.groups()
    if "observed_data" not in groups or group in groups:
        return
    posterior = fit.idata.posterior
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    n_samples = fit.idata.observed_data.sizes["obs_id"]
    most_values = max(1, PREDICTIVE_MAX_VALUES // n_samples)
    most = most_values if most_draws is None else min(most_draws, most_values)
    stride = math.ceil(n_chains * n_draws / most)
    thinned = copy.copy(fit)
    thinned.idata = az.InferenceData(
        **{name: fit.idata[name] for name in groups if name != "posterior"},
        posterior=posterior.isel(draw=slice(None, None, stride)),
    )
    values = values_of(thinned)
    kept = thinned.idata.posterior["draw"].to_numpy()
    fit.idata.add_groups(
        {
            group: xr.Dataset(
                {"y": (["chain", "draw", "obs_id"], values.reshape(n_chains, kept.size, -1))},
                coords={
                    "chain": posterior["chain"].to_numpy(),
                    "draw": kept,
                    "obs_id": fit.idata.observed_data["obs_id"].to_numpy(),
                },
            )
        }
    )


class Fit:
    """A fitted model: posterior (or mode) as InferenceData plus predictions.

    Attributes
    ----------
    idata : arviz.InferenceData
        ``posterior`` with ``(chain, draw, *dims)`` and the model's canonical names; VB adds a
        ``variational`` group with q's parameters; EM/ECME hold the mode as a single draw.
        A fit by :func:`bayesvm.fit` also holds ``posterior_predictive["y"]``
        (:func:`add_posterior_predictive`).
    method : str
    kind : {"mcmc", "variational", "point"}
    runtime_s : float
        Wall time of the fit (set by :func:`bayesvm.fit`).
    n_iter : int
    converged : bool
        False when anything says the fit should not be trusted (see ``problems``).
    problems : list of str
        Why the fit should not be trusted, in words: VB or EM stopped at ``max_iter``, VB's
        ``q`` far from the posterior (:attr:`pareto_k`), a sampler's R-hat, effective sample
        size or divergences (:mod:`bayesvm.samplers.diagnostics`). Empty for a fit that passed
        every check; :func:`bayesvm.fit` issues a :class:`~bayesvm.ConvergenceWarning` listing
        them otherwise.
    lower_bound_trace : ndarray or None
        VB only: the variational lower bound after every iteration.
    objective_trace : ndarray or None
        EM/ECME: the log pseudo-posterior after every iteration.
    """

    def __init__(
        self,
        model,
        idata: az.InferenceData,
        method: str,
        kind: str,
        *,
        n_iter: int,
        converged: bool,
        problems=(),
        lower_bound_trace: np.ndarray | None = None,
        objective_trace: np.ndarray | None = None,
    ):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        self.model = model
        self.idata = idata
        self.method = method
        self.kind = kind
        self.n_iter = int(n_iter)
        self.problems = list(problems) or ([] if converged else ["did not converge"])
        self.converged = not self.problems
        self.lower_bound_trace = lower_bound_trace
        self.objective_trace = objective_trace
        self.runtime_s = float("nan")
        idata.attrs.update(
            method=method,
            kind=kind,
            n_iter=self.n_iter,
            converged=int(self.converged),
            problems="\n".join(self.problems),
        )

    def __repr__(self) -> str:
        return (
            f"Fit(method={self.method!r}, model={type(self.model).__name__}, "
            f"runtime_s={self.runtime_s:.3g}, converged={self.converged})"
        )

    @property
    def lower_bound(self) -> float | None:
        """Final variational lower bound (VB only, else None)."""
        return None if self.lower_bound_trace is None else float(self.lower_bound_trace[-1])

    @property
    def optima(self):
        """VB only (else None): every distinct optimum of the bound that VB's starts reached
        (:mod:`bayesvm.vb.optima`), as an ``xarray.Dataset`` along ``optimum`` (0: this fit's):
        ``bound``, ``log_mass`` (up to a constant shared by the optima; NaN unless several
        were weighed), ``khat`` (the Pareto k-hat of that estimate) and ``q``'s mean of each
        variable. Several optima mean several modes, which the bound cannot rank by posterior
        mass: the heaviest comes first.
        """
        if not self.is_variational or "optimum_bound" not in self.idata["variational"]:
            return None
        group = self.idata["variational"]
        names = {
            f"optimum_{field}": field
            for field in ("bound", "log_mass", "khat")
            if f"optimum_{field}" in group
        }
        names.update(
            {
                name: name.removeprefix("optimum_mean_")
                for name in group.data_vars
                if name.startswith("optimum_mean_")
            }
        )
        return group[list(names)].rename(names)

    @property
    def pareto_k(self) -> float:
        """How close a variational fit's ``q`` is to the posterior: the Pareto k-hat of the
        importance weights ``p(theta, y) / q(theta)`` of its draws (Yao, Vehtari, Simpson &
        Gelman 2018; :mod:`bayesvm.checks.pareto`). Below 0.5 ``q`` is close; above ArviZ's
        threshold ``min(1 - 1 / log10(draws), 0.7)`` it misses posterior mass and
        ``problems`` says so. 0 where ``q`` is exact (the weights are one constant); NaN for
        other fits, and where it was not computed (``pareto_k_note`` says why).
        """
        return float(self.idata.attrs.get("pareto_k", np.nan))

    @property
    def pareto_k_note(self) -> str:
        """How :attr:`pareto_k` was found, where not by PSIS ("q is exact ...", "not computed:
        ..."); empty otherwise.
        """
        return str(self.idata.attrs.get("pareto_k_note", ""))

    def psis_moments(self, var_names=None) -> pd.DataFrame:
        """A variational fit's means and sds corrected by Pareto-smoothed importance sampling:
        ``q``'s draws weighted by ``p / q`` (Yao et al. 2018; the draws weighed, the first
        :data:`~bayesvm.checks.pareto.MAX_WEIGHED_DRAWS`), one row per scalar (ArviZ's labels,
        ``"u[age]"``), for ``var_names`` (default all).

        Raises
        ------
        ValueError
            Where :attr:`pareto_k` is above the threshold for the fit's draws (or was not
            computed): the reweighted draws would not be trusted either.
        """
        import pandas as pd  # imported here: pandas costs 0.1 s at startup
        from arviz.labels import BaseLabeller
        from arviz.sel_utils import xarray_var_iter

        from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

        if not self.is_variational or LOG_WEIGHT not in self.idata["variational"]:
            reason = self.pareto_k_note or "it holds no importance weights of q's draws"
            raise ValueError(f"no PSIS-corrected moments for this fit: {reason}")
        log_weights = self.idata["variational"][LOG_WEIGHT].to_numpy()
        threshold = khat_threshold(log_weights.size)
        if not self.pareto_k <= threshold:
            raise ValueError(
                f"no PSIS-corrected moments: the Pareto k-hat of q's importance weights is "
                f"{self.pareto_k:.2f}, above {threshold:.2f} for {log_weights.size} draws "
                "(Yao et al. 2018): importance sampling cannot correct q"
            )
        if self.pareto_k == 0.0:  # q is exact: the weights are one constant
            smoothed = np.zeros_like(log_weights)
        else:
            smoothed, _ = az.psislw(log_weights.copy())  # psislw shifts its argument in place
        weights = np.exp(smoothed - np.logaddexp.reduce(smoothed))
        posterior = self.idata.posterior.isel(draw=slice(0, log_weights.size))
        if var_names is not None:
            posterior = posterior[[var_names] if isinstance(var_names, str) else list(var_names)]
        rows, labeller = {}, BaseLabeller()
        for name, selection, positions, values in xarray_var_iter(posterior, combined=True):
            draws = np.ravel(values)
            mean = float(weights @ draws)
            rows[labeller.make_label_flat(name, selection, positions)] = (
                mean,
                float(np.sqrt(weights @ (draws - mean) ** 2)),
            )
        return pd.DataFrame.from_dict(rows, orient="index", columns=["mean", "sd"])

    @property
    def is_variational(self) -> bool:
        """Whether the fit holds ``q``'s parameters (a VB fit)."""
        return "variational" in self.idata.groups()

    def coefficient_means(self) -> tuple[np.ndarray, ...]:
        """Posterior means of the model's coefficient variables (``(beta, u)`` for the SVMs,
        ``(w,)`` for the regressions): ``q``'s means for VB, the mode for EM/ECME, draw
        averages otherwise.
        """
        names = self.model.coefficient_var_names
        if self.is_variational:
            group = self.idata["variational"]
            return tuple(group[f"{name}_mean"].to_numpy() for name in names)
        post = self.idata.posterior
        return tuple(post[name].mean(("chain", "draw")).to_numpy() for name in names)

    def inclusion_probabilities(self) -> pd.Series:
        """Posterior inclusion probability of each feature, ``P(gamma_k = 1 | y)``, by feature
        name: ``E_q[gamma_k]`` for VB, the share of draws with ``gamma_k = 1`` otherwise.
        """
        import pandas as pd  # imported here: pandas costs 0.1 s at startup

        if "gamma" not in self.idata.posterior:
            raise ValueError(
                f"{type(self.model).__name__} has no inclusion indicators gamma (SpikeSlabSVM has)"
            )
        if self.is_variational:
            values = self.idata["variational"]["gamma_probability"]
        else:
            values = self.idata.posterior["gamma"].mean(("chain", "draw"))
        (dim,) = values.dims
        return pd.Series(
            values.to_numpy(),
            index=pd.Index(values[dim].to_numpy(), name=dim),
            name="inclusion_probability",
        )

    def draws(self, var_names, max_draws: int | None = None) -> list[np.ndarray]:
        """Posterior draws of each of ``var_names`` with chains pooled, shape ``(draws,
        *dims)``; at most ``max_draws`` of them, evenly spaced, the same for every variable.
        """
        post = self.idata.posterior
        total = post.sizes["chain"] * post.sizes["draw"]
        keep = slice(None)
        if max_draws is not None:
            keep = np.linspace(0, total - 1, min(max_draws, total)).astype(int)
        return [
            post[name].to_numpy().reshape(total, *post[name].shape[2:])[keep] for name in var_names
        ]

    def coefficient_draws(self, max_draws: int | None = None) -> np.ndarray:
        """Posterior draws of the coefficients, concatenated: shape ``(draws, K)``; at most
        ``max_draws`` of them, evenly spaced.
        """
        parts = self.draws(self.model.coefficient_var_names, max_draws)
        return np.concatenate([part.reshape(part.shape[0], -1) for part in parts], axis=1)

    def decision_function(self, X_new, **kwargs) -> np.ndarray:
        """Posterior mean of the linear predictor ``f`` at new inputs.

        Exact for VB (``q``'s mean) and EM/ECME (the mode); the Monte Carlo average for
        samplers; a model whose new inputs may be incomplete (:class:`~bayesvm.models.
        MissingDataSVM`) averages over their missing part. Extra keyword arguments (e.g.
        ``groups=``) go to ``model.design_for``. A model built by :func:`bayesvm.from_formula`
        also takes a data frame of new rows, here and in the other prediction methods.
        """
        X_new, kwargs = self._inputs(X_new, kwargs)
        return self.model.decision_function(self, X_new, **kwargs)

    def predict(self, X_new, **kwargs) -> np.ndarray:
        """Point predictions: class labels for the classifiers (by the sign of
        :meth:`decision_function`, Luts-Ormerod section 4, or the more probable class), the
        predictive mean for a regression.
        """
        X_new, kwargs = self._inputs(X_new, kwargs)
        return self.model.predict(self, X_new, **kwargs)

    def predict_proba(self, X_new, max_draws: int = 1000, **kwargs) -> np.ndarray:
        """Posterior predictive class probabilities, shape ``(n, 2)`` ordered as ``classes``.

        Averaged over up to ``max_draws`` posterior draws (the mode alone for EM/ECME), or in
        closed form where the model has one for ``q`` (Drugowitsch's logistic regression).
        A regression has no class probabilities: see :meth:`predictive_interval`.
        """
        X_new, kwargs = self._inputs(X_new, kwargs)
        return self.model.predict_proba(self, X_new, max_draws=max_draws, **kwargs)

    def predictive(self, X_new):
        """The closed-form predictive density of a VB regression fit (Drugowitsch eq. 23)."""
        X_new, _ = self._inputs(X_new, {})
        return self.model.predictive(self, X_new)

    def predictive_interval(self, X_new, prob: float = 0.95, seed=0):
        """Central ``prob`` interval of the posterior predictive of ``y`` (regressions)."""
        X_new, _ = self._inputs(X_new, {})
        return self.model.predictive_interval(self, X_new, prob=prob, seed=seed)

    def _inputs(self, X_new, kwargs: dict) -> tuple[object, dict]:
        """New inputs for the model (:meth:`~bayesvm.models.BlockModel.prediction_inputs`): a
        data frame through the formula of a model built by :func:`bayesvm.from_formula`, any
        other data frame by its column names, in the training order.
        """
        return self.model.prediction_inputs(X_new, kwargs)

    def summary(self, var_names=None, **kwargs):
        """``arviz.summary`` of the posterior: diagnostics for MCMC, the mode for EM/ECME.

        For VB, ``mean`` and ``sd`` are ``q``'s exact moments wherever ``q``'s family gives
        them (:mod:`bayesvm.moments`; an ``sd`` is ``inf`` where ``q``'s variance does not
        exist), and the HDI comes from the fit's seeded draws from ``q``: the same call gives
        the same numbers.
        """
        from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup
        from bayesvm.moments import with_exact_moments

        if self.kind == "point":
            stat_funcs = {"mode": np.mean}  # the single draw
            return az.summary(
                self.idata, var_names, stat_funcs=stat_funcs, extend=False, round_to="none"
            )
        kind = kwargs.pop("kind", "all" if self.kind == "mcmc" else "stats")
        if self.kind == "mcmc" or kwargs.get("fmt", "wide") != "wide":
            with quiet_arviz_log():
                table = az.summary(self.idata, var_names=var_names, kind=kind, **kwargs)
            return _without_negative_zeros(table)
        round_to = kwargs.pop("round_to", None)
        with quiet_arviz_log():
            table = az.summary(
                self.idata, var_names=var_names, kind=kind, round_to="none", **kwargs
            )
        table = with_exact_moments(table, self.idata)
        return (
            table
            if round_to in ("none", "None")
            else _without_negative_zeros(table.round(3 if round_to is None else round_to))
        )

    def to_netcdf(self, path) -> str:
        """Write the fit to netCDF; :func:`bayesvm.load` reads it back.

        The file is the InferenceData (with method, runtime and the bayesvm version in its
        attributes), readable by ``arviz.from_netcdf``, plus the groups ``model`` and
        ``traces`` of :mod:`bayesvm.fit_file`. It is written whole or not at all: an
        interrupted write leaves the old file at ``path`` as it was.
        """
        from bayesvm.fit_file import save  # imported here: the file's layout loads the models

        self.idata.attrs["runtime_s"] = self.runtime_s
        return save(self, path)


def _without_negative_zeros(table):
    """``table`` with each ``-0.0`` of its number columns (a small negative value rounded)
    written as ``0.0``, which it equals.
    """
    if not hasattr(table, "select_dtypes"):  # ``fmt="xarray"``: a Dataset, as ArviZ gives it
        return table
    numbers = table.select_dtypes("number").columns
    table[numbers] = table[numbers] + 0.0
    return table
