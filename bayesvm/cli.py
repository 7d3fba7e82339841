"""The ``bayesvm`` command: ``fit``, ``compare``, ``bench`` and ``reproduce``.

Examples
--------
.. code-block:: console

    $ bayesvm fit data.csv --target y --model penalized --method vb --out vb.nc
    $ bayesvm fit data.csv --target y --model penalized --method gibbs --seed 1 --out gibbs.nc
    $ bayesvm compare vb.nc gibbs.nc --names VB,Gibbs --plot forest.png
    $ bayesvm bench --quick --methods vb,gibbs
    $ bayesvm bench --model gpsvm --quick
    $ bayesvm bench --model peers --sizes 1000x10,10000x10 --plot scaling.png
    $ bayesvm bench --model targets --quick
    $ bayesvm reproduce simulated --quick --out results/simulated
    $ bayesvm reproduce toenail --scheduler tcp://10.0.0.5:8786 --resume
    $ bayesvm reproduce linlogit --quick --methods vb,ml
    $ bayesvm reproduce spam --quick --methods sparse_vb,lasso_ecme
    $ bayesvm reproduce cardiac --quick --workers 2
    $ bayesvm reproduce kernel --methods vb,svm,gpc --benchmarks ringnorm,waveform
    $ bayesvm reproduce gpsvm --quick --seed 3 --out results/gpsvm
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import bayesvm

if TYPE_CHECKING:
    import pandas as pd

# Each command imports what it runs (pandas, the models, the case studies, scikit-learn), so
# that ``bayesvm --help`` and a mistyped command answer at once.

__all__ = ["main", "CASE_STUDIES"]

# ``bayesvm reproduce NAME`` runs ``run(out_dir=..., quick=..., workers=..., [methods=...,
# n_datasets=..., benchmarks=..., scheduler=..., resume=True, seed=...])`` of these modules:
# every study takes these options (:class:`bayesvm.case_studies.study.Study`) and refuses one
# it has no use for with :class:`~bayesvm.case_studies.study.OptionNotTakenError`.
CASE_STUDIES = {
    "simulated": "bayesvm.case_studies.simulated",
    "toenail": "bayesvm.case_studies.toenail",
    "linlogit": "bayesvm.case_studies.linlogit",
    "spam": "bayesvm.case_studies.spam",
    "cardiac": "bayesvm.case_studies.cardiac",
    "kernel": "bayesvm.case_studies.kernel",
    "gpsvm": "bayesvm.case_studies.gpsvm",
}

# ``bayesvm bench --model NAME`` runs ``run(options) -> tables`` of these modules
# (:class:`bayesvm.bench.BenchOptions`) and prints the tables; ``--plot`` saves ``figure(tables)``
# of a module that has one.
BENCH_MODELS = {
    "penalized": "bayesvm.bench.penalized",
    "peers": "bayesvm.bench.peers",
    "targets": "bayesvm.bench.targets",
    "spikeslab": "bayesvm.bench.spikeslab",
    "missing": "bayesvm.bench.missing",
    "kernel": "bayesvm.bench.kernel",
    "gpsvm": "bayesvm.bench.gpsvm",
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
        Exit status 0. Bad input exits with status 2 (``SystemExit``) and a one-line message,
        before any fitting; Ctrl-C exits with status 130 (``128 + SIGINT``, as the shell
        reports a program it stopped) and a line saying what was kept. Warnings are printed in
        one line each, without source lines.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():  # restores the user's warnings.showwarning afterwards
        warnings.showwarning = _show_warning
        try:
            args.command(args)
        except CommandError as error:
            parser.exit(2, f"bayesvm {args.command_name}: error: {error}\n")
        except KeyboardInterrupt as interrupt:
            parser.exit(INTERRUPTED, f"bayesvm {args.command_name}: {_kept(args, interrupt)}\n")
    return 0


#: The exit status after Ctrl-C: 128 + SIGINT, what a shell reports for a program it stopped.
INTERRUPTED = 130


def _kept(args, interrupt: KeyboardInterrupt) -> str:
    """What an interrupted command leaves behind, in a line."""
    if args.command_name != "reproduce":
        output = getattr(args, "out", None) or getattr(args, "plot", None)
        if output is None:
            return "interrupted"
        written = "after writing" if getattr(args, "written", False) else "before writing"
        return f"interrupted {written} {output} (written whole or not at all)"
    from bayesvm.case_studies.runner import RunInterrupted
    from bayesvm.files import earlier_run_files

    if not isinstance(interrupt, RunInterrupted) or interrupt.csv_path is None:
        out_dir = _reproduce_folder(args)
        if not earlier_run_files(out_dir):
            return "interrupted before the run wrote any results"
        kept = f"what had finished is kept in {out_dir}"
    elif interrupt.finished == 0:
        kept = f"none of the {interrupt.total} tasks had finished"
    else:
        kept = (
            f"the rows of the {interrupt.finished} of {interrupt.total} tasks that finished are "
            f"kept in {interrupt.csv_path}"
        )
    return f"interrupted; {kept}: add --resume to the same command to go on"


class _Parser(argparse.ArgumentParser):
    """Reports a bad argument in one line, like :class:`CommandError`, without the usage."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"bayesvm: warning: {message}", file=sys.stderr if file is None else file)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
    fit.add_argument(
        "--model",
        choices=["linear", "penalized", "spikeslab", "missing", "kernel", "gpsvm"],
        default="linear",
        help="missing: the penalized model with missing predictor values (empty cells) imputed; "
        "kernel: Zhang et al.'s generalized kernel model (rj: FBGKM; gibbs, vb: BGKM); "
        "gpsvm: Wenzel et al.'s GP SVM (svi: S-BSVM, vb: B-BSVM)",
    )
    fit.add_argument(
        "--prior",
        choices=["ridge", "lasso", "laplace-zero", "gaussian-slab"],
        help="linear: ridge (default) or lasso; spikeslab: laplace-zero (default) or gaussian-slab",
    )
    fit.add_argument("--alpha", type=float, help="fixed penalty (linear model only)")
    fit.add_argument(
        "--nu", type=float, help="fixed Polson-Scott scale (linear) or slab scale (gaussian-slab)"
    )
    fit.add_argument(
        "--inclusion",
        type=_probability,
        help="prior inclusion probability (spikeslab: 0.01 laplace-zero, 0.5 gaussian-slab)",
    )
    fit.add_argument(
        "--likelihood", choices=["probit", "hinge"], help="kernel: probit (default) or hinge"
    )
    fit.add_argument("--k-max", type=_positive_int, help="kernel: most active vectors (default n)")
    fit.add_argument(
        "--lengthscale", type=float, help="gpsvm: the RBF length-scale (default: mean distance)"
    )
    fit.add_argument(
        "--inducing", type=_positive_int, help="gpsvm: k-means inducing points (default: full GP)"
    )
    fit.add_argument("--batch-size", type=_positive_int, help="svi: rows per step (default 10)")
    fit.add_argument(
        "--method", default="vb", help="vb, gibbs, rj, em, ecme, svi or nuts (default: vb)"
    )
    fit.add_argument(
        "--seed", type=_non_negative_int, help="every random number of the fit (default: 0)"
    )
    fit.add_argument("--draws", type=_positive_int, help="vb, gibbs, nuts")
    fit.add_argument("--chains", type=_positive_int, help="gibbs, nuts")
    fit.add_argument("--tune", type=_non_negative_int, help="gibbs, nuts")
    fit.add_argument("--thin", type=_positive_int, help="gibbs, rj: keep every thin-th sweep")
    fit.add_argument("--out", type=Path, required=True, help="netCDF file to write")
    fit.set_defaults(command=_fit, command_name="fit")

    compare = commands.add_parser("compare", help="compare fits saved by `bayesvm fit`")
    compare.add_argument("files", type=Path, nargs="+", help="netCDF files")
    compare.add_argument("--names", type=_names, help="comma-separated labels (default: stems)")
    compare.add_argument("--var-names", type=_names, help="comma-separated posterior variables")
    compare.add_argument("--hdi-prob", type=_probability, default=0.94)
    compare.add_argument("--plot", type=Path, help="write a forest plot to this image file")
    compare.set_defaults(command=_compare, command_name="compare")

    bench = commands.add_parser("bench", help="time each backend, with ratios to NUTS")
    bench.add_argument("--quick", action="store_true", help="short chains (smoke test)")
    bench.add_argument(
        "--sizes",
        type=_sizes,
        help="e.g. 200x10,500x50 (n x d); default 200x10 (penalized), n = 1e3 to 1e6 at d = 10 "
        "and 100 (peers)",
    )
    bench.add_argument(
        "--model",
        choices=list(BENCH_MODELS),
        default="penalized",
        help="penalized: every backend on simulated data (default); peers: our methods beside "
        "LIBLINEAR, LIBSVM, nutpie and scikit-learn's ARD and logistic regressions against n "
        "(two tables: timings and fitted slopes); targets: the speed targets, each a ratio "
        "with its goal, pass or fail; spikeslab: the model "
        "search (gibbs, rj, nuts) on the spam data; missing: the missing-data SVM (vb, gibbs, "
        "nuts) on a cardiac training split; kernel: the kernel models (FBGKM's paper run and "
        "time per sweep against n, BGKM by gibbs, vb, nuts) on simulated ringnorm data; "
        "gpsvm: the GP SVM (S-BSVM and B-BSVM on waveform by 10-fold cross-validation, S-BSVM's "
        "rows per second and memory in memory and from Dask, the full GP by vb, gibbs, nuts)",
    )
    bench.add_argument(
        "--prior",
        choices=["gaussian-slab", "laplace-zero"],
        default="gaussian-slab",
        help="spikeslab's prior",
    )
    bench.add_argument("--rows", type=_positive_int, help="spikeslab: a random subset of e-mails")
    bench.add_argument(
        "--methods",
        type=_names,
        help="default vb,gibbs,nuts (penalized, missing), every peer (peers), gibbs,rj,nuts "
        "(spikeslab), "
        "gibbs,vb,nuts (kernel: BGKM's comparison), vb,gibbs,nuts (gpsvm: the full GP's)",
    )
    bench.add_argument(
        "--repeats", type=_positive_int, help="fits per method and size (default 5; 1 with --quick)"
    )
    bench.add_argument(
        "--seed", type=_non_negative_int, default=0, help="the data and the fits (default: 0)"
    )
    bench.add_argument(
        "--threads",
        type=_thread_counts,
        default=[None],
        help="BLAS threads to time each fit with, e.g. 1,2 (default: automatic)",
    )
    bench.add_argument(
        "--plot", type=Path, help="peers: write seconds against n (log-log) to this image file"
    )
    bench.set_defaults(command=_bench, command_name="bench")

    reproduce = commands.add_parser("reproduce", help="run a paper's experiment")
    reproduce.add_argument("name", choices=sorted(CASE_STUDIES))
    reproduce.add_argument("--quick", action="store_true", help="small version (smoke test)")
    reproduce.add_argument(
        "--workers", type=_positive_int, default=1, help="parallel local workers"
    )
    reproduce.add_argument("--out", type=Path, help="output folder (default: results/NAME)")
    reproduce.add_argument(
        "--methods", type=_names, help="comma-separated subset of the study's methods"
    )
    reproduce.add_argument(
        "--datasets",
        type=_positive_int,
        help="data sets (or splits) per cell instead of the paper's",
    )
    reproduce.add_argument(
        "--benchmarks",
        type=_names,
        help="comma-separated subset of the study's benchmark data sets (kernel, gpsvm)",
    )
    reproduce.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on this Dask cluster, e.g. tcp://host:8786 (needs bayesvm[distributed])",
    )
    reproduce.add_argument(
        "--seed",
        type=_non_negative_int,
        help="seed of every split and fit (default: the study's own)",
    )
    again = reproduce.add_mutually_exclusive_group()
    again.add_argument(
        "--resume",
        action="store_true",
        help="keep the tasks already in the output CSV (interrupted run) and run the others; "
        "give the options of that run",
    )
    again.add_argument(
        "--replace",
        action="store_true",
        help="start afresh in an --out folder that holds an earlier run's results, writing over "
        "them (without --resume or --replace such a folder is refused)",
    )
    reproduce.set_defaults(command=_reproduce, command_name="reproduce")

    info = commands.add_parser("info", help="versions, BLAS libraries, threads and cores")
    info.set_defaults(command=_info, command_name="info")
    return parser


def _fit(args) -> None:
    from bayesvm.estimator import SAMPLING_METHODS
    from bayesvm.models import GPSVM
    from bayesvm.registry import check_fit

    model_options = {
        "prior": args.prior,
        "alpha": args.alpha,
        "nu": args.nu,
        "inclusion": args.inclusion,
        "likelihood": args.likelihood,
        "k_max": args.k_max,
        "lengthscale": args.lengthscale,
        "inducing": args.inducing,
    }
    model_options = {key: value for key, value in model_options.items() if value is not None}
    allowed = {
        "linear": {"prior", "alpha", "nu"},
        "penalized": set(),
        "spikeslab": {"prior", "nu", "inclusion"},
        "missing": set(),
        "kernel": {"likelihood", "k_max"},
        "gpsvm": {"lengthscale", "inducing"},
    }[args.model]
    if set(model_options) - allowed:
        given = ", ".join(
            f"--{key.replace('_', '-')}" for key in sorted(set(model_options) - allowed)
        )
        raise CommandError(f"--model {args.model} takes no {given}")
    options = {
        "seed": args.seed,
        "draws": args.draws,
        "chains": args.chains,
        "tune": args.tune,
        "thin": args.thin,
        "batch_size": args.batch_size,
    }
    options = {key: value for key, value in options.items() if value is not None}
    takes = {"seed"}
    if args.method in SAMPLING_METHODS:
        takes |= {"draws", "chains", "tune"} | (
            {"thin"} if args.method in ("gibbs", "rj") else set()
        )
    elif args.method in ("vb", "svi"):
        takes |= {"draws"} | ({"batch_size"} if args.method == "svi" else set())
    if set(options) - takes:
        given = ", ".join(f"--{key.replace('_', '-')}" for key in sorted(set(options) - takes))
        raise CommandError(f"method {args.method!r} takes no {given}")
    _check_output_file(args.out, "--out")
    _refuse_input_as_output(args.out, "--out", [args.data])
    try:
        data = _read_rows(args.data)
        model = _model_from_frame(args.model, data, args.target, args.features, model_options)
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
    from bayesvm.interrupts import interrupts_end_fits

    # Its problems are printed with the summary, not twice; Ctrl-C ends the command (exit 130)
    # instead of writing the draws made so far.
    with warnings.catch_warnings(), interrupts_end_fits():
        warnings.simplefilter("ignore", bayesvm.ConvergenceWarning)
        fit = bayesvm.fit(model, method=args.method, **options)
    fit.to_netcdf(_write_beside(args.out))
    args.written = True
    # one row per missing cell or per training point: counted, not listed
    long = {"missing_cell", "vector", "obs_id", "inducing"}
    shown = [name for name in model.var_names if not long & set(model.dims.get(name, []))]
    if shown:
        print(fit.summary(var_names=shown).to_string())
    if isinstance(model, GPSVM):
        print(
            f"{model.var_name}: the GP at {model.n_basis} points, in {args.out}; kernel "
            f"lengthscale {fit.model.lengthscale:.4g}, variance {fit.model.variance:.4g}"
        )
    if "x_mis" in model.var_names:
        print(f"x_mis: {model.missing.sum()} imputed cells, in {args.out} (posterior x_mis)")
    if "gamma" in model.var_names and "vector" in model.dims["gamma"]:
        active = float(fit.idata.posterior["gamma"].sum("vector").mean())
        print(
            f"beta, gamma: {model.n_samples} training points, {active:.1f} active on average, "
            f"in {args.out}"
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
    print(f"wrote {args.out}")


def _pareto_k_text(fit) -> str:
    """A variational fit's k-hat for the summary line, with its note where it has one
    (:attr:`bayesvm.Fit.pareto_k`).
    """
    note = f" ({fit.pareto_k_note})" if fit.pareto_k_note else ""
    return f"{fit.pareto_k:.2f}{note}"


def _model_from_frame(name: str, data, target: str, features, options: dict):
    """The model of ``bayesvm fit --model name`` with its command-line options."""
    from bayesvm.models import GPSVM, KernelGKM, LinearSVM, MissingDataSVM, MixedSVM, SpikeSlabSVM

    if name == "penalized":
        return MixedSVM.from_frame(data, target, features)
    if name == "missing":
        return MissingDataSVM.from_frame(data, target, features)
    if name == "kernel":
        return KernelGKM.from_frame(data, target, features, **options)
    if name == "gpsvm":
        return GPSVM.from_frame(data, target, features, **options)
    if name == "linear":
        if options.get("prior") in ("laplace-zero", "gaussian-slab"):
            raise ValueError(
                f"--prior {options['prior']} is a spikeslab prior: add --model spikeslab"
            )
        return LinearSVM.from_frame(data, target, features, **options)
    prior = options.pop("prior", "laplace-zero")
    if prior not in ("laplace-zero", "gaussian-slab"):
        raise ValueError(
            f"--model spikeslab takes --prior laplace-zero or gaussian-slab; got {prior}"
        )
    if prior == "laplace-zero" and "nu" in options:
        raise ValueError("--nu is the gaussian-slab's scale; laplace-zero learns sigma2_u")
    inclusion = options.pop("inclusion", None)
    if inclusion is not None:
        options["rho" if prior == "laplace-zero" else "pi"] = inclusion
    return SpikeSlabSVM.from_frame(data, target, features, prior=prior.replace("-", "_"), **options)


def _compare(args) -> None:
    from bayesvm.files import save_figure
    from bayesvm.method_comparison import compare, plot_compare

    names = args.names or [path.stem for path in args.files]
    if len(names) != len(args.files):
        raise CommandError(f"got {len(names)} names for {len(args.files)} files")
    if len(set(names)) != len(names):
        raise CommandError(f"labels must be unique; got {names} (use --names)")
    if args.plot is not None:
        _check_output_file(args.plot, "--plot")
        _refuse_input_as_output(args.plot, "--plot", args.files)
        _check_image_format(args.plot)
    fits = {name: _read_fit(path) for name, path in zip(names, args.files, strict=True)}
    try:
        table = compare(fits, var_names=args.var_names, hdi_prob=args.hdi_prob)
    except ValueError as error:
        raise CommandError(error) from error
    print(table.to_string(float_format=lambda value: f"{value:.4g}"))
    if args.plot is not None:
        figure = plot_compare(fits, var_names=args.var_names, hdi_prob=args.hdi_prob)
        save_figure(figure, _write_beside(args.plot), bbox_inches="tight")
        args.written = True
        print(f"wrote {args.plot}")


def _bench(args) -> None:
    """Run the benchmark ``--model`` (:data:`BENCH_MODELS`): print its tables, a single one
    without its name, and save its figure to ``--plot``.
    """
    # The benchmarks stand on the case studies: imported when they run, not with the CLI.
    from bayesvm.bench import BenchOptions
    from bayesvm.case_studies.reporting import markdown_table
    from bayesvm.files import save_figure

    benchmark = importlib.import_module(BENCH_MODELS[args.model])
    if args.plot is not None:
        if not hasattr(benchmark, "figure"):
            raise CommandError("--plot is for --model peers")
        _check_output_file(args.plot, "--plot")
        _check_image_format(args.plot)
    options = BenchOptions(
        quick=args.quick,
        seed=args.seed,
        methods=args.methods,
        sizes=args.sizes,
        repeats=args.repeats,
        threads=args.threads,
        prior=args.prior.replace("-", "_"),
        rows=args.rows,
    )
    try:
        tables = benchmark.run(options)
    except ValueError as error:
        raise CommandError(error) from error
    if len(tables) == 1:
        print(markdown_table(*tables.values()))
    else:
        print("\n\n".join(f"{name}\n\n{markdown_table(table)}" for name, table in tables.items()))
    if args.plot is not None:
        save_figure(benchmark.figure(tables), _write_beside(args.plot), bbox_inches="tight")
        args.written = True
        print(f"\nwrote {args.plot}")


def _reproduce(args) -> None:
    from bayesvm.files import EarlierResultsError, FolderInUseError, check_free, earlier_run_files

    out_dir = _reproduce_folder(args)
    if args.scheduler is not None and args.workers != 1:
        raise CommandError("give either --workers (local processes) or --scheduler (Dask)")
    _check_names(out_dir, "--out")
    _check_output_folder(out_dir, f"--out {out_dir}")
    # Before the study's imports (seconds): a folder in use, or one with results to keep.
    try:
        check_free(out_dir)
    except FolderInUseError as error:
        raise CommandError(_in_use_text(error)) from error
    earlier = earlier_run_files(out_dir)
    if earlier and not (args.resume or args.replace):
        raise CommandError(_earlier_results_text(EarlierResultsError(out_dir, earlier)))

    from bayesvm.case_studies.runner import ResumeMismatchError
    from bayesvm.case_studies.study import OptionNotTakenError
    from bayesvm.data import BENCHMARKS

    try:
        case_study = importlib.import_module(CASE_STUDIES[args.name])
    except ImportError as error:
        raise CommandError(f"case study {args.name!r} is not available: {error}") from error
    options = {
        "methods": args.methods,
        "n_datasets": args.datasets,
        "benchmarks": args.benchmarks,
        "scheduler": args.scheduler,
        "resume": args.resume or None,
        "replace": args.replace or None,
        "seed": args.seed,
    }
    options = {key: value for key, value in options.items() if value is not None}
    unknown = sorted(set(args.methods) - set(case_study.METHODS)) if args.methods else []
    if unknown:
        choices = ", ".join(case_study.METHODS)
        raise CommandError(f"unknown methods {unknown} for {args.name}; choose from {choices}")
    datasets = getattr(case_study, "DATASETS", BENCHMARKS)
    unknown = sorted(set(args.benchmarks) - set(datasets)) if args.benchmarks else []
    if unknown:
        raise CommandError(
            f"unknown benchmarks {unknown} for {args.name}; choose from {', '.join(datasets)}"
        )
    try:
        case_study.run(out_dir=out_dir, quick=args.quick, workers=args.workers, **options)
    except OptionNotTakenError as error:
        flags = ", ".join("--" + OPTION_FLAGS.get(name, name) for name in error.options)
        raise CommandError(f"reproduce {args.name} takes no {flags}") from error
    except ResumeMismatchError as error:
        raise CommandError(error) from error
    except FolderInUseError as error:
        raise CommandError(_in_use_text(error)) from error
    except EarlierResultsError as error:
        raise CommandError(_earlier_results_text(error)) from error
    print(f"wrote {out_dir}")


def _reproduce_folder(args) -> Path:
    """The output folder of ``bayesvm reproduce``: ``--out``, by default ``results/NAME``."""
    return args.out if args.out is not None else Path("results") / args.name


def _in_use_text(error) -> str:
    """The refusal of a folder another run holds (a :class:`~bayesvm.files.FolderInUseError`)."""
    return f"{error.reason}; wait for it or choose another --out"


def _earlier_results_text(error) -> str:
    """The refusal of a folder with an earlier run's results, with the two ways on."""
    return (
        f"{error}: add --resume to go on with that run (with its options), or --replace to "
        "start afresh and write over them"
    )


def _read_rows(path: Path) -> pd.DataFrame:
    """The rows of the CSV file ``path``; :class:`CommandError` if it has none."""
    import pandas as pd

    try:
        data = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise CommandError(f"{path} is empty: expected a CSV file with a header row") from None
    if data.empty:
        raise CommandError(f"{path} has a header but no rows of data")
    # pandas renames a repeated column name (x1, x1.1): the header as written must be unique
    header = pd.read_csv(path, header=None, nrows=1, dtype=str).iloc[0].tolist()
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise CommandError(f"{path}: the header names the columns {repeated} more than once")
    return data


def _read_fit(path: Path) -> bayesvm.Fit:
    """The fit saved by ``bayesvm fit`` in ``path`` (:func:`bayesvm.load`); :class:`CommandError`
    naming ``path`` if it is not one, or is cut short, or of a newer bayesvm.
    """
    if not path.is_file():
        raise CommandError(f"{path}: no such file" if not path.exists() else f"{path} is a folder")
    try:
        return bayesvm.load(path)
    except ValueError as error:
        raise CommandError(error) from error
    except OSError as error:  # permission denied, ...
        raise CommandError(f"{path} cannot be read: {error.strerror or error}") from error


def _check_names(path: Path, option: str) -> None:
    """Refuse an output path with a name longer than the system takes, before anything
    else looks at it (where ``Path.exists`` itself raises).
    """
    from bayesvm.files import check_name_length

    try:
        check_name_length(path)
    except OSError as error:
        raise CommandError(f"{option} {path}: {error.strerror}") from error


def _check_output_file(path: Path, option: str) -> None:
    """Check that the file ``path`` can be written, its missing folders created (they are
    made when it is written, by :func:`_write_beside`).
    """
    _check_names(path, option)
    if path.is_dir():
        raise CommandError(f"{option} {path} is a folder; give a file name in it")
    if path.exists() and not path.is_file():  # written by renaming a new file onto it
        raise CommandError(f"{option} {path} is not a regular file (a device, a pipe, ...)")
    _check_output_folder(path.parent, f"{option} {path}")
    if path.exists() and not os.access(path, os.W_OK):
        raise CommandError(f"{option} {path} is not writable")


def _write_beside(path: Path) -> Path:
    """``path``, its missing folders made (checked by :func:`_check_output_file`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _refuse_input_as_output(path: Path, option: str, inputs) -> None:
    """Refuse an output file ``path`` that is one of the ``inputs``: writing it would replace
    the data it is made from.
    """
    for given in inputs:
        if path.exists() and given.exists() and os.path.samefile(path, given):
            raise CommandError(
                f"{option} {path} is the input file {given}: writing it would replace the "
                "input; give another file name"
            )


def _check_image_format(path: Path) -> None:
    """Refuse an image file whose suffix matplotlib cannot write, before any work."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in formats:
        problem = f"matplotlib writes no .{suffix} images" if suffix else "the name has no suffix"
        raise CommandError(
            f"--plot {path}: {problem}; end the name in one of "
            + ", ".join(f".{name}" for name in sorted(formats))
        )


def _check_output_folder(path: Path, given: str) -> None:
    """Check that the folder ``path`` exists, or can be created, and can be written;
    ``given`` names the option in the error message. Where it is missing, a folder of a new
    name is made in its nearest existing folder, to see that one can be (a pseudo-file system
    such as ``/proc`` refuses), and removed at once: nothing is left before the command's own
    checks pass.
    """
    import tempfile

    existing = next(folder for folder in [path, *path.parents] if folder.exists())
    if not existing.is_dir():
        raise CommandError(f"{given}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CommandError(f"{given}: cannot write in {existing}")
    if existing == path:
        return
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".bayesvm-", dir=existing))
    except OSError as error:
        raise CommandError(
            f"{given}: cannot create folders in {existing}: {error.strerror}"
        ) from None


def _info(args) -> None:
    from bayesvm.system_info import format_info

    print(format_info(bayesvm.info()))


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names; got {text!r}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"{', '.join(repeated)} given more than once in {text!r}")
    return names


def _thread_counts(text: str) -> list[int]:
    return [_positive_int(count) for count in _names(text)]


def _sizes(text: str) -> list[tuple[int, int]]:
    sizes = []
    for size in _names(text):
        try:
            n_samples, n_features = (_positive_int(part) for part in size.lower().split("x"))
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(
                f"size {size!r} is not NxD with positive N and D, e.g. 200x10"
            ) from None
        sizes.append((n_samples, n_features))
    return sizes


def _positive_int(text: str) -> int:
    return _integer(text, minimum=1, expected="a positive integer")


def _non_negative_int(text: str) -> int:
    return _integer(text, minimum=0, expected="an integer >= 0")


def _integer(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}")
    return value


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability between 0 and 1; got {text!r}")
    return value
