"""The ``bayesvm`` command: ``fit``, ``compare``, ``bench`` and ``reproduce``.

Examples
--------
.. code-block:: console

    $ bayesvm fit data.csv --target y --model penalized --method vb --out vb.nc
    $ bayesvm fit data.csv --target y --model penalized --method gibbs --seed 1 --out gibbs.nc
    $ bayesvm compare vb.nc gibbs.nc --names VB,Gibbs --plot forest.png
    $ bayesvm bench --quick --methods vb,gibbs
    $ bayesvm bench --model gp --quick
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
import shlex
import sys
import warnings
from pathlib import Path

import bayesvm
from bayesvm.command_line import (
    FORMER_PRIORS,
    CommandError,
    check_image_format,
    check_names,
    check_output_file,
    check_output_folder,
    current_spelling,
    name_list,
    non_negative_int,
    positive_int,
    probability,
    read_fit,
    refuse_input_as_output,
    sizes,
    thread_counts,
    write_beside,
)
from bayesvm.files import (
    EarlierResultsError,
    FolderInUseError,
    check_free,
    earlier_run_files,
    save_figure,
)
from bayesvm.fit_command import add_fit_command

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
    "acceleration": "bayesvm.bench.acceleration",
    "spread": "bayesvm.bench.spread",
    "spike_slab": "bayesvm.bench.spikeslab",
    "missing": "bayesvm.bench.missing",
    "kernel": "bayesvm.bench.kernel",
    "gp": "bayesvm.bench.gpsvm",
}
#: ``bayesvm bench --model`` names before 0.3.0 (the models' names of the catalogue now).
FORMER_BENCH_MODELS = {"spikeslab": "spike_slab", "gpsvm": "gp"}

# ``run()`` keyword -> command-line flag, where they differ.
OPTION_FLAGS = {"n_datasets": "datasets"}


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
    args.argv = sys.argv[1:] if argv is None else [str(arg) for arg in argv]
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
        output = next(
            (path for name in ("out", "save", "plot") if (path := getattr(args, name, None))),
            None,
        )
        if output is None:
            return "interrupted"
        written = "after writing" if getattr(args, "written", False) else "before writing"
        return f"interrupted {written} {output} (written whole or not at all)"
    # imported here: the case studies load the models and the inference methods
    from bayesvm.case_studies.runner import RunInterrupted

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

    add_fit_command(commands)

    compare = commands.add_parser("compare", help="compare fits saved by `bayesvm fit`")
    compare.add_argument("files", type=Path, nargs="+", help="netCDF files")
    compare.add_argument("--names", type=name_list, help="comma-separated labels (default: stems)")
    compare.add_argument("--var-names", type=name_list, help="comma-separated posterior variables")
    compare.add_argument("--hdi-prob", type=probability, default=0.94)
    compare.add_argument("--plot", type=Path, help="write a forest plot to this image file")
    compare.set_defaults(command=_compare, command_name="compare")

    bench = commands.add_parser("bench", help="time each backend, with ratios to NUTS")
    bench.add_argument("--quick", action="store_true", help="short chains (smoke test)")
    bench.add_argument(
        "--sizes",
        type=sizes,
        help="e.g. 200x10,500x50 (n x d); default 200x10 (penalized), n = 1e3 to 1e6 at d = 10 "
        "and 100 (peers)",
    )
    bench.add_argument(
        "--model",
        choices=[*BENCH_MODELS, *FORMER_BENCH_MODELS],
        default="penalized",
        help="penalized: every backend on simulated data (default); peers: our methods beside "
        "LIBLINEAR, LIBSVM, nutpie and scikit-learn's ARD and logistic regressions against n "
        "(two tables: timings and fitted slopes); targets: the speed targets, each a ratio "
        "with its goal, pass or fail; acceleration: VB's ascent with and without SQUAREM and "
        "Newton steps (sweeps, seconds, distance from the optimum); spread: VB's sds (mean-field, "
        "LRVB, Gaussian family) over a long Gibbs run's on the papers' data; spike_slab: the model "
        "search (gibbs, rj, nuts) on the spam data; missing: the missing-data SVM (vb, gibbs, "
        "nuts) on a cardiac training split; kernel: the kernel models (FBGKM's paper run and "
        "time per sweep against n, BGKM by gibbs, vb, nuts) on simulated ringnorm data; "
        "gp: the GP SVM (S-BSVM and B-BSVM on waveform by 10-fold cross-validation, S-BSVM's "
        "rows per second and memory in memory and from Dask, the full GP by vb, gibbs, nuts)",
    )
    bench.add_argument(
        "--prior",
        choices=["gaussian_slab", "laplace_zero", *FORMER_PRIORS],
        default="gaussian_slab",
        help="spike_slab's prior",
    )
    bench.add_argument("--rows", type=positive_int, help="spike_slab: a random subset of e-mails")
    bench.add_argument(
        "--methods",
        type=name_list,
        help="default vb,gibbs,nuts (penalized, missing), every peer (peers), gibbs,rj,nuts "
        "(spike_slab), "
        "gibbs,vb,nuts (kernel: BGKM's comparison), vb,gibbs,nuts (gp: the full GP's)",
    )
    bench.add_argument(
        "--repeats", type=positive_int, help="fits per method and size (default 5; 1 with --quick)"
    )
    bench.add_argument(
        "--draws", type=positive_int, help="penalized: the samplers' kept draws (default: SETTINGS)"
    )
    bench.add_argument(
        "--tune",
        type=non_negative_int,
        help="penalized: the samplers' burn-in or tuning iterations (default: SETTINGS)",
    )
    bench.add_argument(
        "--seed", type=non_negative_int, default=0, help="the data and the fits (default: 0)"
    )
    bench.add_argument(
        "--threads",
        type=thread_counts,
        default=[None],
        help="BLAS threads to time each fit with, e.g. 1,2 (default: automatic)",
    )
    bench.add_argument(
        "--plot", type=Path, help="peers: write seconds against n (log-log) to this image file"
    )
    bench.add_argument(
        "--save",
        type=Path,
        help="also write the tables, with the command, machine, load and date, to this JSON "
        "file (what the docs' measured tables are made from)",
    )
    bench.set_defaults(command=_bench, command_name="bench")

    reproduce = commands.add_parser("reproduce", help="run a paper's experiment")
    reproduce.add_argument("name", choices=sorted(CASE_STUDIES))
    reproduce.add_argument("--quick", action="store_true", help="small version (smoke test)")
    reproduce.add_argument("--workers", type=positive_int, default=1, help="parallel local workers")
    reproduce.add_argument("--out", type=Path, help="output folder (default: results/NAME)")
    reproduce.add_argument(
        "--methods", type=name_list, help="comma-separated subset of the study's methods"
    )
    reproduce.add_argument(
        "--datasets",
        type=positive_int,
        help="data sets (or splits) per cell instead of the paper's",
    )
    reproduce.add_argument(
        "--benchmarks",
        type=name_list,
        help="comma-separated subset of the study's benchmark data sets (kernel, gpsvm)",
    )
    reproduce.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on this Dask cluster, e.g. tcp://host:8786 (needs bayesvm[distributed])",
    )
    reproduce.add_argument(
        "--seed",
        type=non_negative_int,
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


def _compare(args) -> None:
    # imported here: the comparison loads ArviZ and pandas, which `bayesvm --help` does not need
    from bayesvm.method_comparison import compare, plot_compare

    names = args.names or [path.stem for path in args.files]
    if len(names) != len(args.files):
        raise CommandError(f"got {len(names)} names for {len(args.files)} files")
    if len(set(names)) != len(names):
        raise CommandError(f"labels must be unique; got {names} (use --names)")
    if args.plot is not None:
        check_output_file(args.plot, "--plot")
        refuse_input_as_output(args.plot, "--plot", args.files)
        check_image_format(args.plot)
    fits = {name: read_fit(path) for name, path in zip(names, args.files, strict=True)}
    try:
        table = compare(fits, var_names=args.var_names, hdi_prob=args.hdi_prob)
    except ValueError as error:
        raise CommandError(error) from error
    print(table.to_string(float_format=lambda value: f"{value:.4g}"))
    if args.plot is not None:
        figure = plot_compare(fits, var_names=args.var_names, hdi_prob=args.hdi_prob)
        save_figure(figure, write_beside(args.plot), bbox_inches="tight")
        args.written = True
        print(f"wrote {args.plot}")


def _bench(args) -> None:
    """Run the benchmark ``--model`` (:data:`BENCH_MODELS`): print its tables, a single one
    without its name, and save its figure to ``--plot``.
    """
    # imported here: the benchmarks stand on the case studies, imported when they run
    from bayesvm.bench import BenchOptions
    from bayesvm.bench.record import save_tables
    from bayesvm.case_studies.reporting import markdown_table

    args.model = current_spelling("model", args.model, FORMER_BENCH_MODELS)
    args.prior = current_spelling("prior", args.prior, FORMER_PRIORS)
    benchmark = importlib.import_module(BENCH_MODELS[args.model])
    if args.plot is not None:
        if not hasattr(benchmark, "figure"):
            raise CommandError("--plot is for --model peers")
        check_output_file(args.plot, "--plot")
        check_image_format(args.plot)
    if args.save is not None:
        check_output_file(args.save, "--save")
        if args.save.suffix != ".json":
            raise CommandError(f"--save {args.save}: give a .json file")
    options = BenchOptions(
        quick=args.quick,
        seed=args.seed,
        methods=args.methods,
        sizes=args.sizes,
        repeats=args.repeats,
        threads=args.threads,
        prior=args.prior,
        rows=args.rows,
        draws=args.draws,
        tune=args.tune,
    )
    try:
        tables = benchmark.run(options)
    except ValueError as error:
        raise CommandError(error) from error
    if len(tables) == 1:
        print(markdown_table(*tables.values()))
    else:
        print("\n\n".join(f"{name}\n\n{markdown_table(table)}" for name, table in tables.items()))
    if args.save is not None:
        save_tables(write_beside(args.save), tables, _command_without_save(args.argv))
        args.written = True
        print(f"\nwrote {args.save}")
    if args.plot is not None:
        save_figure(benchmark.figure(tables), write_beside(args.plot), bbox_inches="tight")
        args.written = True
        print(f"\nwrote {args.plot}")


def _command_without_save(argv: list[str]) -> str:
    """The ``bayesvm bench`` command line of ``argv``, less its ``--save`` (a path of this
    machine, not part of what was measured).
    """
    kept, skip = [], False
    for arg in argv:
        if skip or arg.startswith("--save="):
            skip = False
        elif arg == "--save":
            skip = True
        else:
            kept.append(arg)
    return shlex.join(["bayesvm", *kept])


def _reproduce(args) -> None:
    out_dir = _reproduce_folder(args)
    if args.scheduler is not None and args.workers != 1:
        raise CommandError("give either --workers (local processes) or --scheduler (Dask)")
    check_names(out_dir, "--out")
    check_output_folder(out_dir, f"--out {out_dir}")
    # Before the study's imports (seconds): a folder in use, or one with results to keep.
    try:
        check_free(out_dir)
    except FolderInUseError as error:
        raise CommandError(_in_use_text(error)) from error
    earlier = earlier_run_files(out_dir)
    if earlier and not (args.resume or args.replace):
        raise CommandError(_earlier_results_text(EarlierResultsError(out_dir, earlier)))

    # imported here: the case studies load the models and the inference methods
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


def _info(args) -> None:
    # imported here: the system's facts load PyTensor
    from bayesvm.system_info import format_info

    print(format_info(bayesvm.info()))
