"""``bayesvm fit``: a model of a CSV file's columns, fitted by one method and written to a
netCDF file, its summary printed.

Its options come from the catalogue (:mod:`bayesvm.catalogue`): ``--model`` takes the names
that ``BayesianSVC(model=...)`` and ``from_formula(model=...)`` take, and every option of every
method that a value on the command line can give is an option here (``--family``,
``--covariance``, ``--starts``, ``--target-accept``, ...), checked against the method before
any work. The options that take Python values only (SVI's ``step`` and
``learn_hyperparameters``, NUTS's ``sample_kwargs``) are not offered.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

import bayesvm
from bayesvm.catalogue import METHODS, model_kind
from bayesvm.command_line import (
    FORMER_PRIORS,
    CommandError,
    check_output_file,
    current_spelling,
    finite_float,
    name_list,
    non_negative_int,
    positive_int,
    probability,
    read_rows,
    refuse_input_as_output,
    write_beside,
)
from bayesvm.interrupts import interrupts_end_fits

__all__ = ["add_fit_command", "run_fit", "METHOD_ARGUMENTS", "MODEL_ARGUMENTS"]

#: The priors of the linear SVM and of the spike-and-slab SVM.
LINEAR_PRIORS = ("ridge", "lasso")
SPIKE_SLAB_PRIORS = ("laplace_zero", "gaussian_slab")
#: Model options of the command line (constructor keyword arguments), with their arguments.
MODEL_ARGUMENTS = {
    "prior": {
        "choices": [*LINEAR_PRIORS, *SPIKE_SLAB_PRIORS, *FORMER_PRIORS],
        "metavar": "PRIOR",
        "help": "linear: ridge (default) or lasso; spike_slab: laplace_zero (default) or "
        "gaussian_slab",
    },
    "alpha": {"type": float, "help": "fixed penalty (linear)"},
    "nu": {
        "type": float,
        "help": "fixed Polson-Scott scale (linear) or slab scale (gaussian_slab)",
    },
    "inclusion": {
        "type": probability,
        "help": "prior inclusion probability (spike_slab: 0.01 laplace_zero, 0.5 gaussian_slab)",
    },
    "likelihood": {
        "choices": ["probit", "hinge", "normalized"],
        "help": "kernel: probit (default) or hinge; missing: hinge (default) or normalized",
    },
    "k_max": {"type": positive_int, "help": "kernel: most active vectors (default n)"},
    "lengthscale": {"type": float, "help": "gp: the RBF length-scale (default: mean distance)"},
    "inducing": {"type": positive_int, "help": "gp: k-means inducing points (default: full GP)"},
}
#: The options of :func:`bayesvm.fit` itself, with their arguments.
FIT_ARGUMENTS = {
    "seed": {"type": non_negative_int, "help": "every random number of the fit (default: 0)"},
    "threads": {"type": positive_int, "help": "BLAS threads (default: from the problem's size)"},
}


def _method_arguments() -> dict[str, tuple[object, str]]:
    """Each method option offered: the option (its first method's) and its help, naming the
    methods that take it.
    """
    offers: dict[str, list[tuple[str, object]]] = {}
    for method, kind in METHODS.items():
        for name, option in kind.options.items():
            if option.kind in ("count", "real", "choice", "flag") and name not in FIT_ARGUMENTS:
                offers.setdefault(name, []).append((method, option))
    arguments = {}
    for name, offered in offers.items():
        first = offered[0][1]
        if any(_values(option) != _values(first) for _, option in offered):
            raise TypeError(f"the methods' option {name} takes different values")
        helps: dict[str, list[str]] = {}
        for method, option in offered:
            helps.setdefault(option.help, []).append(method)
        arguments[name] = (first, "; ".join(f"{h} ({', '.join(m)})" for h, m in helps.items()))
    return arguments


def _values(option) -> tuple:
    return option.kind, option.low, option.choices


#: Method options of the command line: the option and its help.
METHOD_ARGUMENTS = _method_arguments()


def add_fit_command(commands) -> None:
    """The ``fit`` command's parser, on the subparsers ``commands``."""
    fit = commands.add_parser("fit", help="fit a model to a CSV file, write netCDF")
    fit.add_argument("data", type=Path, help="CSV file with a header row")
    fit.add_argument(
        "--target", required=True, help="column of the response: two classes (regression: numbers)"
    )
    fit.add_argument(
        "--features", type=name_list, help="comma-separated feature columns (default: all others)"
    )
    fit.add_argument(
        "--model",
        default="linear",
        help="linear (default), penalized, random_intercept (with --groups), spike_slab, "
        "missing (empty cells imputed), kernel (Zhang et al.'s: rj is FBGKM, gibbs and vb "
        "BGKM), gp (Wenzel et al.'s: svi is S-BSVM, vb B-BSVM), logistic, regression (a "
        "numeric target)",
    )
    fit.add_argument("--groups", help="random_intercept: the column of each row's group")
    for name, argument in MODEL_ARGUMENTS.items():
        fit.add_argument(_flag(name), **argument)
    fit.add_argument(
        "--method", default="vb", help=f"{', '.join(METHODS)} (default: vb; see --help)"
    )
    for name, argument in FIT_ARGUMENTS.items():
        fit.add_argument(_flag(name), **argument)
    for name, (option, methods) in METHOD_ARGUMENTS.items():
        fit.add_argument(
            _flag(name), help=f"{option.help} ({', '.join(methods)})", **_parse(option)
        )
    fit.add_argument("--out", type=Path, required=True, help="netCDF file to write")
    fit.set_defaults(command=run_fit, command_name="fit")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _parse(option) -> dict:
    """The ``add_argument`` keywords reading ``option`` (a count's range is checked here; the
    rest by the method's own check, :meth:`bayesvm.catalogue.Option.check`).
    """
    if option.kind == "flag":
        return {"action": argparse.BooleanOptionalAction, "default": None}
    if option.kind == "choice":
        return {"choices": list(option.choices)}
    if option.kind == "real":
        return {"type": finite_float}
    return {"type": positive_int if option.low == 1 else non_negative_int}


def method_options(args) -> dict:
    """The options of :func:`bayesvm.fit` given on the command line; :class:`CommandError`
    naming those that ``--method`` does not take.
    """
    given = {name: getattr(args, name) for name in [*FIT_ARGUMENTS, *METHOD_ARGUMENTS]}
    given = {name: value for name, value in given.items() if value is not None}
    taken = METHODS[args.method].options
    refused = sorted(name for name in given if name not in taken and name not in FIT_ARGUMENTS)
    if refused:
        raise CommandError(f"method {args.method!r} takes no {', '.join(map(_flag, refused))}")
    return given


def model_options(args, kind) -> dict:
    """The constructor's options given on the command line (``--inclusion`` read as the
    prior's ``rho`` or ``pi``); :class:`CommandError` naming those that ``kind`` does not take.
    """
    given = {name: getattr(args, name) for name in MODEL_ARGUMENTS}
    given = {name: value for name, value in given.items() if value is not None}
    if "prior" in given:
        given["prior"] = current_spelling("prior", given["prior"], FORMER_PRIORS)
    prior = given.get("prior")
    if prior in SPIKE_SLAB_PRIORS and kind.name != "spike_slab":
        raise CommandError(f"--prior {prior} is a spike_slab prior: add --model spike_slab")
    if kind.name == "spike_slab" and prior not in (None, *SPIKE_SLAB_PRIORS):
        raise CommandError(
            f"--model spike_slab takes --prior laplace_zero or gaussian_slab; got {prior}"
        )
    takes = kind.options(given)
    if "inclusion" in given:
        inclusion = given.pop("inclusion")
        name = next((name for name in ("rho", "pi") if name in takes), "inclusion")
        given[name] = inclusion
    refused = sorted(name for name in given if name not in takes)
    if refused:
        shown = ["inclusion" if name in ("rho", "pi") else name for name in refused]
        prior = prior or (kind.variants and next(iter(kind.variants[1])))
        setting = f" --prior {prior}" if prior else ""
        raise CommandError(f"--model {kind.name}{setting} takes no {', '.join(map(_flag, shown))}")
    return given


def run_fit(args) -> None:
    """``bayesvm fit``: every check before any work, then the fit, its file and summary."""
    # imported here: the registry's checks load the models, which `bayesvm --help` does not need
    from bayesvm.registry import check_fit

    if args.method not in METHODS:
        raise CommandError(f"unknown method {args.method!r}; the methods are {', '.join(METHODS)}")
    try:
        kind, implied = model_kind(args.model, "--model")
    except ValueError as error:
        raise CommandError(str(error)) from None
    options = method_options(args)
    constructor_options = {**implied, **model_options(args, kind)}
    if (args.groups is not None) != kind.grouped:
        raise CommandError(
            "--model random_intercept needs --groups COLUMN"
            if kind.grouped
            else f"--groups is for --model random_intercept, not {kind.name}"
        )
    check_output_file(args.out, "--out")
    refuse_input_as_output(args.out, "--out", [args.data])
    try:
        data = read_rows(args.data)
        model = model_from_frame(kind, data, args, constructor_options)
    except (OSError, ValueError) as error:
        hint = " (bayesvm fit --model missing)" if "MissingDataSVM" in str(error) else ""
        raise CommandError(f"{error}{hint}") from error
    if args.method not in bayesvm.methods(model):
        raise CommandError(
            f"method {args.method!r} cannot fit this model; methods that can: "
            f"{', '.join(bayesvm.methods(model))}"
        )
    try:
        check_fit(model, args.method, **options)
    except ValueError as error:
        raise CommandError(str(error)) from error
    # Its problems are printed with the summary, not twice; Ctrl-C ends the command (exit 130)
    # instead of writing the draws made so far.
    with warnings.catch_warnings(), interrupts_end_fits():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        fit = bayesvm.fit(model, method=args.method, **options)
    fit.to_netcdf(write_beside(args.out))
    args.written = True
    print_summary(fit, args.out)


def model_from_frame(kind, data, args, options: dict):
    """The model of ``kind`` on the columns of ``data``: ``--target``, ``--features`` (default
    every other column but ``--groups``), with formulae's ``Intercept`` column first where the
    model has no intercept of its own (as :func:`bayesvm.from_formula` builds it).
    """
    # imported here: the models load SciPy, which `bayesvm --help` does not need
    from bayesvm.models.linear_predictor import frame_to_arrays

    features = args.features
    if features is None and args.groups is not None:
        features = [name for name in data.columns if name not in (args.target, args.groups)]
    X, y, names = frame_to_arrays(data, args.target, features)
    if args.groups is not None:
        if args.groups not in data.columns:
            raise ValueError(f"the groups column {args.groups!r} is not in the data")
        options["groups"] = data[args.groups].to_numpy()
    if not kind.own_intercept:
        X, names = np.column_stack([np.ones(X.shape[0]), X]), ["Intercept", *names]
    return kind.build(X, y, feature_names=names, **options)


def print_summary(fit, out: Path) -> None:
    """The summary of ``fit`` (written to ``out``): its variables but those with a value per
    row or per missing cell (counted instead), the runtime, its checks and its bound.
    """
    model = fit.model
    long = {"missing_cell", "vector", "obs_id", "inducing"}
    shown = [name for name in model.var_names if not long & set(model.dims.get(name, []))]
    if shown:
        print(fit.summary(var_names=shown).to_string())
    from bayesvm.models import GPSVM  # imported here: the models load SciPy

    if isinstance(model, GPSVM):
        print(
            f"{model.var_name}: the GP at {model.n_basis} points, in {out}; kernel "
            f"lengthscale {model.lengthscale:.4g}, variance {model.variance:.4g}"
        )
    if "x_mis" in model.var_names:
        print(f"x_mis: {model.missing.sum()} imputed cells, in {out} (posterior x_mis)")
    if "gamma" in model.var_names and "vector" in model.dims["gamma"]:
        active = float(fit.idata.posterior["gamma"].sum("vector").mean())
        print(
            f"beta, gamma: {model.n_samples} training points, {active:.1f} active on average, "
            f"in {out}"
        )
    quality = "" if not fit.is_variational else f"   Pareto k-hat: {_pareto_k_text(fit)}"
    print(
        f"\nmethod: {fit.method}   runtime: {fit.runtime_s:.3f} s   iterations: {fit.n_iter}"
        + quality
    )
    print(f"converged: {fit.converged}")
    if "modes" in fit.idata.attrs and not fit.problems:  # stacked: the chains of one mode
        print(f"  modes: {fit.idata.attrs['modes']}")
    for problem in fit.problems:  # the ConvergenceWarning's reasons, with the summary
        print(f"  not to be trusted: {problem}")
    if fit.lower_bound is not None:
        print(f"variational lower bound: {fit.lower_bound:.6f}")
    print(f"wrote {out}")


def _pareto_k_text(fit) -> str:
    """A variational fit's k-hat for the summary line, with its note where it has one
    (:attr:`bayesvm.Fit.pareto_k`).
    """
    note = f" ({fit.pareto_k_note})" if fit.pareto_k_note else ""
    return f"{fit.pareto_k:.2f}{note}"
