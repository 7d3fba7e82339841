"""One catalogue of what can be asked for: the models by name and the methods with their
options, read by every front door (``BayesianSVC(model=...)``, ``from_formula(model=...)``,
``bayesvm fit --model ... --method ...``) and by :func:`bayesvm.fit`'s checks.

* :data:`MODELS`: each model's one name, its constructor ``constructor(X, y, **options)`` and
  what a formula needs to know of it. Names used before are accepted for one release with a
  ``FutureWarning`` naming the new one (:func:`model_kind`).
* :data:`METHODS`: each method's kind and its options with the values each takes
  (:class:`Option`), as scikit-learn declares ``_parameter_constraints``. :func:`bayesvm.fit`
  checks a call's options against them before any work, and the command line offers each
  option that a value on the command line can give. A test holds them to the backends'
  signatures.

This module imports no model and no backend: the command line builds its options from it at
start-up.
"""

from __future__ import annotations

import importlib
import inspect
import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Option", "MethodKind", "ModelKind", "METHODS", "MODELS", "model_kind"]


@dataclass(frozen=True)
class Option:
    """The values one option of a method takes.

    ``kind`` is ``"count"`` (an integer at or above ``low``), ``"real"`` (a finite number in
    ``[low, high]``, or the open interval where ``open``), ``"choice"`` (one of ``choices``),
    ``"flag"`` (True or False), ``"seed"`` or ``"python"`` (any value a Python caller gives,
    not offered on the command line). ``none``: None is allowed too (the backend's default
    taken from the model); ``points``: a count, or points, which the backend checks itself
    (VB's ``starts``).
    """

    kind: str
    help: str
    low: float | None = None
    high: float | None = None
    open: bool = False
    choices: tuple = ()
    none: bool = False
    points: bool = False

    def check(self, name: str, value) -> None:
        """Raise ``ValueError`` naming ``name`` unless ``value`` is allowed."""
        if value is None and (self.none or self.kind == "seed"):
            return
        if self.points:  # the backend checks its counts and points itself
            return
        if self.kind == "count":
            if not isinstance(value, numbers.Integral) or isinstance(value, bool | np.bool_):
                raise ValueError(f"{name} must be an integer >= {self.low}; got {value!r}")
            if value < self.low:
                raise ValueError(f"{name} must be >= {self.low}; got {value}")
        elif self.kind == "real" and not self._real_ok(value):
            raise ValueError(f"{name} must be {self._real_range()}; got {value!r}")
        elif self.kind == "choice" and not _among(value, self.choices):
            raise ValueError(f"{name} must be one of {self.choices}; got {value!r}")
        elif self.kind == "flag" and not isinstance(value, bool | np.bool_):
            raise ValueError(f"{name} must be True or False; got {value!r}")
        elif self.kind == "seed":
            _check_seed(value)

    @property
    def on_command_line(self) -> bool:
        """Whether ``bayesvm fit`` offers it (a count, real number or choice)."""
        return self.kind in ("count", "real", "choice")

    def _real_ok(self, value) -> bool:
        if not isinstance(value, numbers.Real) or isinstance(value, bool | np.bool_):
            return False
        if not math.isfinite(value):
            return False
        if self.open:
            return self.low < value < self.high
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def _real_range(self) -> str:
        if self.open:
            return f"in ({self.low:g}, {self.high:g})"
        return f"a finite number >= {self.low:g}"


def _among(value, choices: tuple) -> bool:
    return isinstance(value, str) and value in choices


def _check_seed(seed) -> None:
    if isinstance(seed, np.random.Generator | np.random.SeedSequence):
        return
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return
    raise ValueError(
        f"seed must be None, an integer >= 0 or a numpy Generator/SeedSequence; got {seed!r}"
    )


def _count(low: int, help: str, none: bool = False) -> Option:
    return Option("count", help, low=low, none=none)


SEED = Option("seed", "every random number of the fit (default 0)")
PROGRESSBAR = Option("flag", "show a progress bar")
TOL = Option("real", "tolerance of the stopping rule", low=0.0)
MAX_ITER = _count(1, "most iterations", none=True)
ACCELERATE = Option("flag", "accelerate the ascent (SQUAREM)")
CHAINS = _count(1, "independent chains, each from its own start")
SWEEP_DRAWS = _count(1, "kept draws per chain (default: the paper's)", none=True)
SWEEP_TUNE = _count(0, "burn-in sweeps per chain (default: the paper's)", none=True)
THIN = _count(1, "keep every thin-th sweep (default: the paper's)", none=True)
Q_DRAWS = _count(1, "draws from q stored as the posterior")


@dataclass(frozen=True)
class MethodKind:
    """A method: ``kind`` "mcmc", "variational" or "point", and its options."""

    kind: str
    description: str
    options: Mapping[str, Option] = field(default_factory=dict)


_SWEEPS = {
    "draws": SWEEP_DRAWS,
    "tune": SWEEP_TUNE,
    "thin": THIN,
    "chains": CHAINS,
    "seed": SEED,
    "progressbar": PROGRESSBAR,
}
_EM = {
    "accelerate": ACCELERATE,
    "tol": TOL,
    "max_iter": _count(1, "most iterations"),
    "seed": SEED,
    "progressbar": PROGRESSBAR,
}

#: Every method by name, with its options (the keyword parameters of its backend).
METHODS = {
    "vb": MethodKind(
        "variational",
        "mean-field variational Bayes by coordinate ascent (CAVI)",
        {
            "tol": Option(
                "real", "tolerance of the stopping rule (default: the paper's)", 0.0, none=True
            ),
            "relative": Option(
                "flag", "a relative stopping rule (default: the paper's)", none=True
            ),
            "max_iter": MAX_ITER,
            "accelerate": ACCELERATE,
            "subsample": Option("flag", "start a large data set's ascent from a subsample's"),
            "starts": Option(
                "count",
                "ascents from different starts (default: the model's)",
                low=1,
                none=True,
                points=True,
            ),
            "draws": Q_DRAWS,
            "seed": SEED,
            "progressbar": PROGRESSBAR,
            "covariance": Option(
                "choice", "the coefficients' covariance", choices=("mean-field", "lrvb")
            ),
            "family": Option(
                "choice", "q of the coefficients and the hinge", choices=("mean-field", "gaussian")
            ),
        },
    ),
    "svi": MethodKind(
        "variational",
        "stochastic variational inference on minibatches",
        {
            "batch_size": _count(1, "rows per step (default: the paper's)", none=True),
            "max_iter": MAX_ITER,
            "epochs": _count(1, "most passes over the data without max_iter"),
            "tol": TOL,
            "step": Option("python", "the step size schedule (a, kappa)"),
            "learn_hyperparameters": Option("python", "learn the kernel's hyperparameters"),
            "hyper_every": _count(1, "steps between hyperparameter updates"),
            "hyper_rate": Option("real", "step of the hyperparameter updates", low=0.0),
            "seed": SEED,
            "progressbar": PROGRESSBAR,
            "draws": Q_DRAWS,
        },
    ),
    "gibbs": MethodKind("mcmc", "Gibbs sampling over the model's blocks", dict(_SWEEPS)),
    "rj": MethodKind(
        "mcmc",
        "reversible-jump MCMC over inclusion indicators or active vectors",
        {
            **_SWEEPS,
            "moves": _count(1, "model-space moves per sweep (default: the paper's)", none=True),
        },
    ),
    "em": MethodKind("point", "the posterior mode by EM", dict(_EM)),
    "ecme": MethodKind("point", "the posterior mode by ECME, the penalty learned", dict(_EM)),
    "nuts": MethodKind(
        "mcmc",
        "PyMC's NUTS on to_pymc()",
        {
            "draws": _count(1, "kept draws per chain"),
            "tune": _count(0, "tuning steps per chain"),
            "chains": CHAINS,
            "cores": _count(1, "chains run at once (default: PyMC's)", none=True),
            "seed": SEED,
            "target_accept": Option(
                "real", "NUTS's target acceptance rate", low=0.0, high=1.0, open=True
            ),
            "progressbar": PROGRESSBAR,
            "noncentered": Option("flag", "write the random effects non-centred"),
            "sampler": Option("choice", "the NUTS implementation", choices=("pymc", "nutpie")),
            "sample_kwargs": Option("python", "more arguments of pymc.sample"),
        },
    ),
}


@dataclass(frozen=True)
class ModelKind:
    """A model by name: its constructor in :mod:`bayesvm.models` (``"Class.method"``, called
    as ``constructor(X, y, **options)``), what it is, whether it classifies or regresses,
    whether it carries its own intercept (a formula's then leaves the design), and whether it
    takes ``groups`` (a random intercept).
    """

    name: str
    constructor: str
    description: str
    classifier: bool = True
    own_intercept: bool = True
    grouped: bool = False
    #: Where ``constructor`` hands an option (spike-and-slab's ``prior``) to one of several
    #: constructors: the option, and the constructor of each of its values.
    variants: tuple[str, Mapping[str, str]] | None = None

    def build(self, X, y, **options):
        """The model of ``X``, ``y`` and ``options``."""
        return _resolve(self.constructor)(X, y, **options)

    def options(self, given: Mapping) -> list[str]:
        """The options it takes (keyword-only parameters), given those ``given`` (the
        constructor that a variant option chooses; default its first value).
        """
        names = [] if self.variants is None else [self.variants[0]]
        constructor = _resolve(self.constructor)
        if self.variants is not None:
            option, constructors = self.variants
            chosen = given.get(option, next(iter(constructors)))
            constructor = _resolve(constructors.get(chosen, next(iter(constructors.values()))))
        return names + [
            name
            for name, parameter in inspect.signature(constructor).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY
        ]


def _resolve(constructor: str):
    """``"Class.method"`` of :mod:`bayesvm.models` (importing the models)."""
    class_name, method = constructor.split(".")
    return getattr(getattr(importlib.import_module("bayesvm.models"), class_name), method)


#: Every model by its one name, as every front door takes it.
MODELS = {
    kind.name: kind
    for kind in (
        ModelKind("linear", "LinearSVM.from_arrays", "the linear SVM, ridge or lasso prior"),
        ModelKind("penalized", "MixedSVM.penalized", "the linear SVM, its penalty inferred"),
        ModelKind(
            "random_intercept",
            "MixedSVM.random_intercept",
            "the SVM with a random intercept per group",
            grouped=True,
        ),
        ModelKind(
            "spike_slab",
            "SpikeSlabSVM.from_arrays",
            "the spike-and-slab SVM",
            variants=(
                "prior",
                {
                    "laplace_zero": "SpikeSlabSVM.laplace_zero",
                    "gaussian_slab": "SpikeSlabSVM.gaussian_slab",
                },
            ),
        ),
        ModelKind("missing", "MissingDataSVM.from_arrays", "the SVM imputing missing predictors"),
        ModelKind("kernel", "KernelGKM.from_arrays", "Zhang et al.'s generalised kernel model"),
        ModelKind("gp", "GPSVM.from_arrays", "Wenzel et al.'s Gaussian-process SVM"),
        ModelKind(
            "logistic",
            "LogisticRegression.from_arrays",
            "Drugowitsch's logistic regression",
            own_intercept=False,
        ),
        ModelKind(
            "regression",
            "LinearRegression.from_arrays",
            "Drugowitsch's linear regression",
            classifier=False,
            own_intercept=False,
        ),
    )
}

#: Names used before, by front door, with the name and options they stand for now.
FORMER_NAMES = {
    "svm": ("linear", {}),
    "gaussian_slab": ("spike_slab", {"prior": "gaussian_slab"}),
    "spikeslab": ("spike_slab", {}),
    "gpsvm": ("gp", {}),
}


def model_kind(name: str, asked_by: str) -> tuple[ModelKind, dict]:
    """The model ``name`` stands for and the options a former name implies; a former name
    warns (``FutureWarning``) naming the new one; an unknown one raises ``ValueError`` listing
    the names (``asked_by``: the front door, for the message).
    """
    if name in MODELS:
        return MODELS[name], {}
    if isinstance(name, str) and name in FORMER_NAMES:
        new, implied = FORMER_NAMES[name]
        spelled = ", ".join([repr(new), *(f"{key}={value!r}" for key, value in implied.items())])
        warnings.warn(
            f"{asked_by}: the model {name!r} is now {spelled}; the old name goes in 0.4.0",
            FutureWarning,
            stacklevel=3,
        )
        return MODELS[new], dict(implied)
    known = ", ".join(f"{kind.name!r} ({kind.description})" for kind in MODELS.values())
    raise ValueError(f"{asked_by}: unknown model {name!r}; the models are {known}")
