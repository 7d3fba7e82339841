"""The ``bayesvm`` command: ``fit``, ``compare``, ``bench`` and ``reproduce``.

Examples
--------
.. code-block:: console

    $ bayesvm fit data.csv --target y --model penalized --method vb --out vb.nc
    $ bayesvm fit data.csv --target y --model penalized --method gibbs --seed 1 --out gibbs.nc
    $ bayesvm compare vb.nc gibbs.nc --names VB,Gibbs --plot forest.png
    $ bayesvm bench --quick --methods vb,gibbs
    $ bayesvm reproduce simulated --quick --out results/simulated
    $ bayesvm reproduce toenail --scheduler tcp://10.0.0.5:8786 --resume
    $ bayesvm reproduce linlogit --quick --methods vb,ml
"""

from __future__ import annotations

import argparse
import importlib
import inspect
from pathlib import Path

import arviz as az
import pandas as pd

import bayesvm
from bayesvm.bench import run_bench
from bayesvm.case_studies.reporting import markdown_table
from bayesvm.compare import compare, plot_compare
from bayesvm.estimator import SAMPLING_METHODS
from bayesvm.models import LinearSVM, MixedSVM
from bayesvm.system_info import format_info

__all__ = ["main", "CASE_STUDIES"]

# ``bayesvm reproduce NAME`` runs ``run(out_dir=..., quick=..., workers=..., [methods=...,
# n_datasets=..., scheduler=..., resume=True])`` of these modules.
CASE_STUDIES = {
    "simulated": "bayesvm.case_studies.simulated",
    "toenail": "bayesvm.case_studies.toenail",
    "linlogit": "bayesvm.case_studies.linlogit",
}


# ``run()`` keyword -> command-line flag, where they differ.
OPTION_FLAGS = {"n_datasets": "datasets"}


class CommandError(Exception):
    """Bad input to a command: reported in one line with exit status 2, no traceback."""


def main(argv=None) -> int:
    """Run the ``bayesvm`` command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status 0. Bad input exits with status 2 (``SystemExit``) and a one-line message.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        args.command(args)
    except CommandError as error:
        parser.exit(2, f"bayesvm {args.command_name}: error: {error}\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesvm",
        description="Bayesian support vector machines fitted by VB, Gibbs, EM/ECME and NUTS.",
    )
    parser.add_argument("--version", action="version", version=f"bayesvm {bayesvm.__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    fit = commands.add_parser("fit", help="fit a model to a CSV file, write netCDF")
    fit.add_argument("data", type=Path, help="CSV file with a header row")
    fit.add_argument("--target", required=True, help="column of the two class labels")
    fit.add_argument(
        "--features", type=_names, help="comma-separated feature columns (default: all others)"
    )
    fit.add_argument("--model", choices=["linear", "penalized"], default="linear")
    fit.add_argument("--prior", choices=["ridge", "lasso"], help="linear model only")
    fit.add_argument("--alpha", type=float, help="fixed penalty (linear model only)")
    fit.add_argument("--nu", type=float, help="fixed Polson-Scott scale (linear model only)")
    fit.add_argument("--method", default="vb", help="vb, gibbs, em, ecme or nuts (default: vb)")
    fit.add_argument("--seed", type=int)
    fit.add_argument("--draws", type=int, help="vb, gibbs, nuts")
    fit.add_argument("--chains", type=int, help="gibbs, nuts")
    fit.add_argument("--tune", type=int, help="gibbs, nuts")
    fit.add_argument("--out", type=Path, required=True, help="netCDF file to write")
    fit.set_defaults(command=_fit, command_name="fit")

    compare = commands.add_parser("compare", help="compare fits saved by `bayesvm fit`")
    compare.add_argument("files", type=Path, nargs="+", help="netCDF files")
    compare.add_argument("--names", type=_names, help="comma-separated labels (default: stems)")
    compare.add_argument("--var-names", type=_names, help="comma-separated posterior variables")
    compare.add_argument("--hdi-prob", type=float, default=0.94)
    compare.add_argument("--plot", type=Path, help="write a forest plot to this image file")
    compare.set_defaults(command=_compare, command_name="compare")

    bench = commands.add_parser("bench", help="time each backend, with ratios to NUTS")
    bench.add_argument("--quick", action="store_true", help="short chains (smoke test)")
    bench.add_argument(
        "--sizes", type=_sizes, default=[(200, 10)], help="e.g. 200x10,500x50 (n x d)"
    )
    bench.add_argument("--methods", type=_names, default=["vb", "gibbs", "nuts"])
    bench.add_argument("--repeats", type=int, help="fits per method and size (default 3)")
    bench.add_argument("--seed", type=int, default=0)
    bench.set_defaults(command=_bench, command_name="bench")

    reproduce = commands.add_parser("reproduce", help="run a paper's experiment")
    reproduce.add_argument("name", choices=sorted(CASE_STUDIES))
    reproduce.add_argument("--quick", action="store_true", help="small version (smoke test)")
    reproduce.add_argument("--workers", type=int, default=1, help="parallel local workers")
    reproduce.add_argument("--out", type=Path, help="output folder (default: results/NAME)")
    reproduce.add_argument(
        "--methods", type=_names, help="comma-separated subset of the study's methods"
    )
    reproduce.add_argument(
        "--datasets", type=int, help="data sets (or splits) per cell instead of the paper's"
    )
    reproduce.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on this Dask cluster, e.g. tcp://host:8786 (needs bayesvm[distributed])",
    )
    reproduce.add_argument(
        "--resume",
        action="store_true",
        help="keep the tasks already in the output CSV (interrupted run) and run the others",
    )
    reproduce.set_defaults(command=_reproduce, command_name="reproduce")

    info = commands.add_parser("info", help="versions, BLAS libraries, threads and cores")
    info.set_defaults(command=_info, command_name="info")
    return parser


def _fit(args) -> None:
    linear_options = {"prior": args.prior, "alpha": args.alpha, "nu": args.nu}
    linear_options = {key: value for key, value in linear_options.items() if value is not None}
    if args.model == "penalized" and linear_options:
        given = ", ".join(f"--{key}" for key in linear_options)
        raise CommandError(f"{given}: linear model only (--model penalized infers its penalty)")
    options = {"seed": args.seed, "draws": args.draws, "chains": args.chains, "tune": args.tune}
    options = {key: value for key, value in options.items() if value is not None}
    takes = {"seed"}
    if args.method in SAMPLING_METHODS:
        takes |= {"draws", "chains", "tune"}
    elif args.method == "vb":
        takes.add("draws")
    if set(options) - takes:
        given = ", ".join(f"--{key}" for key in sorted(set(options) - takes))
        raise CommandError(f"method {args.method!r} takes no {given}")
    try:
        data = pd.read_csv(args.data)
        if args.model == "linear":
            model = LinearSVM.from_frame(data, args.target, args.features, **linear_options)
        else:
            model = MixedSVM.from_frame(data, args.target, args.features)
    except (OSError, ValueError) as error:
        raise CommandError(error) from error
    if args.method not in bayesvm.methods(model):
        raise CommandError(
            f"method {args.method!r} cannot fit this model; methods that can: "
            f"{', '.join(bayesvm.methods(model))}"
        )
    fit = bayesvm.fit(model, method=args.method, **options)
    fit.to_netcdf(args.out)
    print(fit.summary().to_string())
    print(f"\nmethod: {fit.method}   runtime: {fit.runtime_s:.3f} s   iterations: {fit.n_iter}")
    print(f"converged: {fit.converged}")
    if fit.lower_bound is not None:
        print(f"variational lower bound: {fit.lower_bound:.6f}")
    print(f"wrote {args.out}")


def _compare(args) -> None:
    names = args.names or [path.stem for path in args.files]
    if len(names) != len(args.files):
        raise CommandError(f"got {len(names)} names for {len(args.files)} files")
    if len(set(names)) != len(names):
        raise CommandError(f"labels must be unique; got {names} (use --names)")
    try:
        fits = {name: az.from_netcdf(path) for name, path in zip(names, args.files, strict=True)}
        table = compare(fits, var_names=args.var_names, hdi_prob=args.hdi_prob)
    except (OSError, ValueError) as error:
        raise CommandError(error) from error
    print(table.to_string(float_format=lambda value: f"{value:.4g}"))
    if args.plot is not None:
        figure = plot_compare(fits, var_names=args.var_names, hdi_prob=args.hdi_prob)
        figure.savefig(args.plot, bbox_inches="tight")
        print(f"wrote {args.plot}")


def _bench(args) -> None:
    try:
        table = run_bench(
            sizes=args.sizes,
            methods=args.methods,
            repeats=args.repeats,
            seed=args.seed,
            quick=args.quick,
        )
    except ValueError as error:
        raise CommandError(error) from error
    print(markdown_table(table))


def _reproduce(args) -> None:
    try:
        case_study = importlib.import_module(CASE_STUDIES[args.name])
    except ImportError as error:
        raise CommandError(f"case study {args.name!r} is not available: {error}") from error
    out_dir = args.out if args.out is not None else Path("results") / args.name
    options = {
        "methods": args.methods,
        "n_datasets": args.datasets,
        "scheduler": args.scheduler,
        "resume": args.resume or None,
    }
    options = {key: value for key, value in options.items() if value is not None}
    parameters = inspect.signature(case_study.run).parameters.values()
    accepted = {p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    unsupported = [key for key in options if key not in accepted and not takes_any]
    if unsupported:
        flags = ", ".join("--" + OPTION_FLAGS.get(key, key) for key in unsupported)
        raise CommandError(f"reproduce {args.name} takes no {flags}")
    unknown = sorted(set(args.methods) - set(case_study.METHODS)) if args.methods else []
    if unknown:
        choices = ", ".join(case_study.METHODS)
        raise CommandError(f"unknown methods {unknown} for {args.name}; choose from {choices}")
    case_study.run(out_dir=out_dir, quick=args.quick, workers=args.workers, **options)
    print(f"wrote {out_dir}")


def _info(args) -> None:
    print(format_info(bayesvm.info()))


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names; got {text!r}")
    return names


def _sizes(text: str) -> list[tuple[int, int]]:
    sizes = []
    for size in _names(text):
        try:
            n_samples, n_features = (int(part) for part in size.lower().split("x"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"size {size!r} is not NxD, e.g. 200x10") from None
        sizes.append((n_samples, n_features))
    return sizes
