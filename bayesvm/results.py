"""The result every backend returns: :class:`Fit`, holding an ArviZ ``InferenceData``."""

from __future__ import annotations

import arviz as az
import numpy as np
import xarray as xr
from arviz.data.base import make_attrs

from bayesvm._arviz import quiet_arviz_log

__all__ = [
    "Fit",
    "RegressionFit",
    "LogisticFit",
    "build_idata",
    "attach_data",
    "normalized_pseudo_likelihood",
]

KINDS = ("mcmc", "variational", "point")


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
    """Add ``observed_data`` (y as -1/+1) and ``constant_data`` (designs) groups."""
    obs = {"obs_id": np.arange(model.n_samples)}
    observed = xr.Dataset({"y": (["obs_id"], model.y)}, coords=obs)
    constant = xr.Dataset(
        {name: (dims, values) for name, (dims, values) in model.constant_data().items()},
        coords={**obs, **model.coords},
    )
    if hasattr(model, "classes"):
        constant.attrs["classes"] = [str(c) for c in model.classes]
    groups = {"observed_data": observed, "constant_data": constant}
    idata.add_groups({k: v for k, v in groups.items() if k not in idata.groups()})
    return idata


def normalized_pseudo_likelihood(f: np.ndarray) -> np.ndarray:
    """``p(y = +1 | f)`` from the hinge pseudo-likelihood normalised over the two labels.

    ``L(+1) / (L(+1) + L(-1))`` with ``L(y) = exp(-2 (1 - y f)_+)`` (Polson-Scott section 2,
    remark after eq. 3): 1/2 at ``f = 0``, ``1 / (1 + e^-4)`` on the margin ``f = 1`` and
    ``1 / (1 + e^(-2 (1 + f)))`` beyond it.
    """
    log_plus = -2.0 * np.maximum(0.0, 1.0 - f)
    log_minus = -2.0 * np.maximum(0.0, 1.0 + f)
    return 1.0 / (1.0 + np.exp(log_minus - log_plus))


class Fit:
    """A fitted model: posterior (or mode) as InferenceData plus predictions.

    Attributes
    ----------
    idata : arviz.InferenceData
        ``posterior`` with ``(chain, draw, *dims)`` and the model's canonical names; VB adds a
        ``variational`` group with q's parameters; EM/ECME hold the mode as a single draw.
    method : str
    kind : {"mcmc", "variational", "point"}
    runtime_s : float
        Wall time of the fit (set by :func:`bayesvm.fit`).
    n_iter : int
    converged : bool
        False when anything says the fit should not be trusted (see ``problems``).
    problems : list of str
        Why the fit should not be trusted, in words: VB or EM stopped at ``max_iter``, a
        sampler's R-hat, effective sample size or divergences (:mod:`bayesvm.samplers.
        diagnostics`). Empty for a fit that passed every check; :func:`bayesvm.fit` issues a
        :class:`~bayesvm.ConvergenceWarning` listing them otherwise.
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

    def coefficient_means(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior means of ``beta`` and ``u``: q's means for VB, draw averages otherwise."""
        if "variational" in self.idata.groups():
            group = self.idata["variational"]
            return group["beta_mean"].to_numpy(), group["u_mean"].to_numpy()
        post = self.idata.posterior
        return (
            post["beta"].mean(("chain", "draw")).to_numpy(),
            post["u"].mean(("chain", "draw")).to_numpy(),
        )

    def decision_function(self, X_new, **kwargs) -> np.ndarray:
        """Posterior mean of the linear predictor ``f = X beta + Z u`` at new inputs.

        Exact for VB (q's mean) and EM/ECME (the mode); the Monte Carlo average for samplers.
        Extra keyword arguments (e.g. ``groups=``) go to ``model.design_for``.
        """
        beta, u = self.coefficient_means()
        return self.model.design_for(X_new, **kwargs).predictor(np.concatenate([beta, u]))

    def predict(self, X_new, **kwargs) -> np.ndarray:
        """Class labels by the sign of :meth:`decision_function` (Luts-Ormerod section 4)."""
        positive = self.decision_function(X_new, **kwargs) > 0
        return np.where(positive, self.model.classes[1], self.model.classes[0])

    def predict_proba(self, X_new, max_draws: int = 1000, **kwargs) -> np.ndarray:
        """Posterior predictive class probabilities, shape ``(n, 2)`` ordered as ``classes``.

        The normalised pseudo-likelihood (:func:`normalized_pseudo_likelihood`) averaged over
        up to ``max_draws`` posterior draws (the mode alone for EM/ECME).
        """
        design = self.model.design_for(X_new, **kwargs)
        post = self.idata.posterior
        theta = np.concatenate(
            [
                post["beta"].to_numpy().reshape(-1, self.model.n_fixed),
                post["u"].to_numpy().reshape(-1, self.model.n_effects),
            ],
            axis=1,
        )
        keep = np.linspace(0, theta.shape[0] - 1, min(max_draws, theta.shape[0])).astype(int)
        f = design.predictor(theta[keep])
        # Each class's probability is averaged on its own (p(-1 | f) is p(+1 | -f)), so that a
        # probability near 0 is not lost to the cancellation in 1 - p.
        return np.column_stack(
            [
                normalized_pseudo_likelihood(-f).mean(axis=0),
                normalized_pseudo_likelihood(f).mean(axis=0),
            ]
        )

    def summary(self, var_names=None, **kwargs):
        """``arviz.summary`` of the posterior: diagnostics for MCMC, the mode for EM/ECME."""
        if self.kind == "point":
            stat_funcs = {"mode": np.mean}  # the single draw
            return az.summary(
                self.idata, var_names, stat_funcs=stat_funcs, extend=False, round_to="none"
            )
        kind = "all" if self.kind == "mcmc" else "stats"
        with quiet_arviz_log():
            return az.summary(self.idata, var_names=var_names, kind=kind, **kwargs)

    def to_netcdf(self, path) -> str:
        """Write the fit to netCDF; :func:`bayesvm.load` reads it back.

        The file is the InferenceData (with method and runtime in its attributes), readable by
        ``arviz.from_netcdf``, plus the groups ``model`` and ``traces`` of
        :mod:`bayesvm.persistence`.
        """
        from bayesvm.persistence import save

        self.idata.attrs["runtime_s"] = self.runtime_s
        return save(self, path)


class RegressionFit(Fit):
    """A fitted regression model: :class:`Fit` with the predictive density of the outputs."""

    def predictive(self, X_new) -> tuple[np.ndarray, np.ndarray, float]:
        """Student-t predictive density of ``y`` at new inputs (Drugowitsch eq. 23).

        Returns
        -------
        mean, precision : ndarray of shape (n,)
            ``w_N^T x`` and ``(1 + x^T V_N x)^-1 a_N / b_N``.
        dof : float
            ``2 a_N``.
        """
        if "variational" not in self.idata.groups():
            raise ValueError(
                f"the closed-form predictive needs the VB posterior; this fit is "
                f"{self.method!r} (predictive_interval works for every method)"
            )
        X_new = self.model.design_for(X_new)
        q = self.idata["variational"]
        V = q["V"].to_numpy()
        an, bn = float(q["an"]), float(q["bn"])
        spread = 1.0 + np.sum((X_new @ V) * X_new, axis=1)
        return X_new @ q["w_mean"].to_numpy(), an / bn / spread, 2.0 * an

    def predictive_interval(self, X_new, prob: float = 0.95, seed=0) -> tuple[np.ndarray, ...]:
        """Central ``prob`` interval of the posterior predictive of ``y``, for every method.

        VB: quantiles of the Student-t of :meth:`predictive`. Samplers: quantiles of
        ``y = w^T x + e``, ``e ~ N(0, 1/tau)``, one ``e`` per posterior draw (seeded by
        ``seed``).

        Returns
        -------
        lower, upper : ndarray of shape (n,)
        """
        from scipy.stats import t as student_t

        if not 0.0 < prob < 1.0:
            raise ValueError(f"prob must be in (0, 1); got {prob}")
        tails = [(1.0 - prob) / 2.0, (1.0 + prob) / 2.0]
        if "variational" in self.idata.groups():
            mean, precision, dof = self.predictive(X_new)
            lower, upper = (mean + student_t.ppf(q, dof) / np.sqrt(precision) for q in tails)
            return lower, upper
        X_new = self.model.design_for(X_new)
        posterior = self.idata.posterior
        w = posterior["w"].to_numpy().reshape(-1, self.model.n_features)
        noise_sd = 1.0 / np.sqrt(posterior["tau"].to_numpy().reshape(-1))
        rng = np.random.default_rng(seed)
        y = X_new @ w.T + noise_sd * rng.standard_normal((X_new.shape[0], noise_sd.size))
        lower, upper = np.quantile(y, tails, axis=1)
        return lower, upper

    def predict(self, X_new) -> np.ndarray:
        """Posterior predictive mean of ``y`` (``w_N^T x`` for VB, the draws' mean otherwise)."""
        X_new = self.model.design_for(X_new)
        if "variational" in self.idata.groups():
            return X_new @ self.idata["variational"]["w_mean"].to_numpy()
        return X_new @ self.idata.posterior["w"].mean(("chain", "draw")).to_numpy()


class LogisticFit(Fit):
    """A fitted logistic regression: :class:`Fit` with Drugowitsch's predictive probabilities."""

    def predict_proba(self, X_new, n_iter: int = 100) -> np.ndarray:
        """``P(y | x, D)``, shape ``(n, 2)`` ordered as ``classes``.

        VB: the variational predictive of Drugowitsch section 3.3 (eq. 65-68), the bound
        parameter ``xi`` of every point optimised at once. With ``m = x^T w_N``,
        ``s = x^T V_N x`` and ``k = 1 + 2 lambda(xi) s`` (Sherman-Morrison on eq. 66):
        ``xi^2 = s / k + ((m + s/2) / k)^2`` and ``ln P(y = 1) = -ln(k)/2 + (m + s/4 -
        2 lambda (m + s/2)^2 / k)/2 + ln sigma(xi) - xi/2 + lambda xi^2``. Other methods:
        ``sigma(w^T x)`` averaged over the posterior draws.
        """
        from scipy.special import expit, log_expit

        from bayesvm.vb.logistic_regression_vb import jaakkola_lambda

        X_new = self.model.design_for(X_new)
        if "variational" not in self.idata.groups():
            w = self.idata.posterior["w"].to_numpy().reshape(-1, self.model.n_features)
            p_plus = expit(X_new @ w.T).mean(axis=1)
            return np.column_stack([1.0 - p_plus, p_plus])
        q = self.idata["variational"]
        m = X_new @ q["w_mean"].to_numpy()
        s = np.sum((X_new @ q["V"].to_numpy()) * X_new, axis=1)
        xi = np.sqrt(s + m**2)
        for _ in range(n_iter):
            k = 1.0 + 2.0 * jaakkola_lambda(xi) * s
            xi = np.sqrt(s / k + ((m + s / 2.0) / k) ** 2)
        lam = jaakkola_lambda(xi)
        k = 1.0 + 2.0 * lam * s
        log_p = (
            -0.5 * np.log(k)
            + 0.5 * (m + s / 4.0 - 2.0 * lam * (m + s / 2.0) ** 2 / k)
            + log_expit(xi)
            - xi / 2.0
            + lam * xi**2
        )
        p_plus = np.exp(log_p)
        return np.column_stack([1.0 - p_plus, p_plus])

    def predict(self, X_new) -> np.ndarray:
        """The more probable class under :meth:`predict_proba`."""
        positive = self.predict_proba(X_new)[:, 1] > 0.5
        return np.where(positive, self.model.classes[1], self.model.classes[0])
