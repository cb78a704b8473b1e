"""The ``elcvx`` command line: evaluate a target policy from a log file in one command.

::

    elcvx evaluate LOG [column options] [bounds] [--engine memory|stream|dask] [--format table|json|csv]
    elcvx profile LOG [column options] [bounds] [--plot FILE.png]
    elcvx select LOG --candidates C1,C2,... [--baseline logging|COL] [--method el|ls|...]
    elcvx demo
    elcvx datasets fetch [--ids IDS] [--dir DIR]
    elcvx reproduce STUDY ...   (the studies: added by elcvx.__main__, the command's entry point)

Exit status: 0 on success; 2 on a user error (an unknown option, an unreadable or malformed log,
a missing column, a value out of its range), reported as one line ``elcvx: error: ...`` on
stderr, never a traceback; 1 when a solver fails (also one line); 130 when interrupted. Output is
built completely before anything is written, so a failed run prints nothing on stdout, and a
plot is written to a temporary file renamed into place. Options and formats: ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from importlib import resources
import sys
import warnings

from .. import __version__
from ..calibration import quantiles
from .. import _validation as iv
from .args import positive_int
from .plot import draw_profile, draw_sequence, require_matplotlib
from .report import (METHODS, CannotWrite, UsageError, evaluate_report, evaluate_sample, grid,
                     notes_to_stderr, render_evaluate, render_profile, require_weights)
from ..errors import ElcvxError, SolverError, WeightWarning
from ..extra_atom import DEFAULT_RHO, RHO_RULES
from ..io import FORMATS, PDROP_MODES

__all__ = ["METHODS", "build_parser", "evaluate_sample", "main"]

_PLOT_FORMATS = (".png", ".pdf", ".svg")
#: How ``--engine`` reads the log: whole (a file, or a folder's or glob's files in order), files
#: chunk by chunk (into their compression), or into a Dask cluster's partitions.
ENGINES = ("memory", "stream", "dask")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``elcvx: error: ...``), not usage + message."""

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")



# ------------------------------------------------------------------------------------------------
# The parser
# ------------------------------------------------------------------------------------------------
def _add_log_options(p):
    p.add_argument("log", metavar="LOG",
                   help="the log: CSV/TSV, Parquet, JSON (lines, a records array or an "
                        "object of columns) or VW dsjson, gzip or not; or, read in chunks, a "
                        "folder of Parquet/CSV files, a Parquet dataset, or a glob ('logs/*.parquet')")
    p.add_argument("--engine", choices=ENGINES,
                   help="memory: read the file (or a folder's or glob's Parquet/CSV files, in "
                        "file order) whole; stream: read Parquet/CSV files chunk by "
                        "chunk, into the log's exact compression when it has at most "
                        "--max-pairs distinct (w, r), else kept in chunks that every pass of EL's "
                        "solvers reads again; dask: read by a Dask cluster's workers and kept in "
                        "their memory, each pass one reduction there (the dask extra); every "
                        "method on every engine (default: memory for a file, stream for a "
                        "folder or glob)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="--engine dask: the scheduler of a running Dask cluster, e.g. "
                        "tcp://10.0.0.1:8786 (default: a cluster of 2 worker processes on this "
                        "machine, started for the run)")
    p.add_argument("--max-pairs", type=positive_int, default=None, metavar="K",
                   help="--engine stream: hold the log's exact compression when it has at most "
                        "K distinct (w, r) pairs (default 1048576)")
    p.add_argument("--input-format", choices=FORMATS,
                   help="the log's format (default: from its name and first bytes)")
    p.add_argument("--sep", metavar="CHAR",
                   help="CSV/TSV: the field separator, one character, e.g. ';' (default ',', "
                        "a tab for TSV)")
    p.add_argument("--decimal", metavar="CHAR",
                   help="CSV/TSV: the decimal mark of the numbers, e.g. ',' for 0,25 "
                        "(default '.'); with ',' in a CSV give --sep too")
    cols = p.add_argument_group(
        "columns", "name the columns of LOG; without them, 'target_prob' and 'logging_prob' are "
        "used if both exist, else 'weight' or 'w'; 'reward' or 'r', else 'cost'")
    cols.add_argument("--weight-col", metavar="C", help="importance weights w = pi(a|x)/h(a|x)")
    cols.add_argument("--target-prob-col", metavar="C",
                      help="the target policy's probability of the logged action (with "
                           "--logging-prob-col; for dsjson: the column of --target-prob-file)")
    cols.add_argument("--logging-prob-col", metavar="C",
                      help="the logging policy's probability of the logged action")
    cols.add_argument("--reward-col", metavar="C", help="rewards")
    cols.add_argument("--cost-col", metavar="C", help="costs: the reward is -cost")
    cols.add_argument("--count-col", metavar="C",
                      help="positive counts: each row stands for that many examples")
    ds = p.add_argument_group("dsjson", "Vowpal Wabbit decision-service logs")
    ds.add_argument("--target-prob-file", metavar="FILE",
                    help="CSV/Parquet/JSON lines with the target policy's probability of each "
                         "event's logged action (column --target-prob-col, default "
                         "'target_prob'), one row per event line or joined on an EventId column")
    ds.add_argument("--pdrop", choices=PDROP_MODES,
                    help="how events kept with probability 1 - pdrop count (default: ess)")
    b = p.add_argument_group("bounds")
    b.add_argument("--wmin", type=float, default=0.0, metavar="W",
                   help="lower bound on the weights (default 0)")
    wb = b.add_mutually_exclusive_group()
    wb.add_argument("--wmax", type=float, metavar="W", help="upper bound on the weights")
    wb.add_argument("--pmin", type=float, metavar="P",
                    help="smallest probability the logging policy gives any action: wmax = 1/P "
                         "(without --wmax or --pmin, wmax = inf: valid, but wider)")
    b.add_argument("--rmin", type=float, metavar="R", help="smallest possible reward (default 0)")
    b.add_argument("--rmax", type=float, metavar="R", help="largest possible reward (default 1)")
    b.add_argument("--cmin", type=float, metavar="C",
                   help="smallest possible cost (with --cmax; instead of --rmin/--rmax)")
    b.add_argument("--cmax", type=float, metavar="C", help="largest possible cost")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (drawn on stderr for files over 50 MB on a terminal)")


def _level(text):
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not 0.0 < x < 1.0:
        raise argparse.ArgumentTypeError(f"{text} must lie strictly between 0 and 1")
    return x


class _Given(argparse.Action):
    """Stores the option's value and that it was given (``<dest>_given``): where a default
    depends on the computation (EL's one-sided bound: :func:`elcvx.interval`'s own), an option
    left out passes None."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_given", True)


def _add_stat_options(p):
    s = p.add_argument_group("statistics")
    s.add_argument("--confidence-level", type=_level, default=0.95, metavar="L",
                   help="confidence level of the intervals (default 0.95)")
    s.add_argument("--calibration", choices=iv.EL_CALIBRATIONS, default="chi2", action=_Given,
                   help="threshold of the EL and CR(-2) intervals: chi-square(1) quantile "
                        "(default, the paper's text), F(1, N-1) (the authors' code), or bootstrap "
                        "(EL: the larger of chi2 and 999 resamples' critical value, seed 0; "
                        "CR(-2) then uses chi2), or signed-bootstrap (EL, each end by its side's "
                        "tail, 199 resamples, seed 0: for one-sided bounds, --alternative; CR(-2) "
                        "uses chi2). EL's "
                        "one-sided bound (--alternative) defaults to signed-bootstrap on a log in "
                        "memory, chi2 on one kept in chunks (elcvx.interval's default)")
    p.set_defaults(calibration_given=False)
    s.add_argument("--method", choices=iv.METHODS, default="auto",
                   help="EL solver path: fast numpy, cvxpy/Clarabel, or fast with a cvxpy "
                        "fallback (default auto)")
    s.add_argument("--rho", type=_rho, default=None, metavar="{" + ",".join(RHO_RULES) + ",NUMBER}",
                   help="the reward of an unobserved extreme weight in EL's estimate (see "
                        f"elcvx.estimate; default {DEFAULT_RHO})")


def _rho(text):
    if text in RHO_RULES:
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number nor one of {', '.join(RHO_RULES)}") from None


def _add_alternative_option(p):
    p.add_argument("--alternative", choices=quantiles.ALTERNATIVES, default="two-sided",
                   help="greater: add one-sided lower bounds (EL's and the finite-sample LS, EB, "
                        "el-betting) at the confidence level; less: upper bounds (default "
                        "two-sided: none)")


def _add_format_option(p):
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="output format (default table)")


def _add_evaluation_options(p):
    """What `evaluate` and `demo` take beside the log: the statistics, the output's format, the
    sequences and the one-sided section."""
    _add_stat_options(p)
    _add_format_option(p)
    _add_sequence_option(p)
    _add_alternative_option(p)
    _add_strict_option(p)


def _add_strict_option(p):
    p.add_argument("--strict", action="store_true",
                   help="a failed weight check is an error: exit 2, before any estimate, "
                        "instead of a note (the mean weight implausibly far from 1, usually a "
                        "wrong probability column; or wmax = inf leaving EL's estimate to an "
                        "unobserved weight: give --pmin or --wmax)")


def _add_sequence_option(p):
    p.add_argument("--sequence", action="store_true",
                   help="add the betting and DDRM confidence sequences' bounds at the end of the "
                        "log (valid at every t at once, for a log watched as it grows; rows in "
                        "log order: a folder's or glob's files sorted by path, each file's rows "
                        "in order)")


def build_parser(commands=()):
    """The ``elcvx`` command's parser; ``commands``: functions that each add a subcommand to the
    sub-parser collection they are given (:mod:`elcvx.__main__` adds the studies' ``reproduce``:
    the library never imports its studies)."""
    parser = _Parser(prog="elcvx", description="Empirical likelihood for contextual bandits: "
                     "off-policy estimates and confidence intervals from a log file.")
    parser.add_argument("--version", action="version", version=f"elcvx {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    ev = sub.add_parser("evaluate", help="EL's estimate and interval beside the baselines",
                        description="Print EL's estimate and confidence interval beside IPS, "
                        "SNIPS, CR(-2), Gaussian and Binomial, with N and the weights' range.")
    _add_log_options(ev)
    _add_evaluation_options(ev)
    ev.set_defaults(func=_cmd_evaluate)

    pr = sub.add_parser("profile", help="the profile likelihood-ratio curve (and a plot)",
                        description="Print the profile likelihood-ratio statistic 2(L_mle - "
                        "L(v)) on a grid of values v, and with --plot draw it with the "
                        "interval and the estimate marked.")
    _add_log_options(pr)
    _add_stat_options(pr)
    pr.add_argument("--plot", metavar="FILE", help="draw the curve to FILE (.png, .pdf or .svg)")
    pr.add_argument("--points", type=int, default=21, metavar="K",
                    help="grid points printed, the estimate and the interval's ends among them "
                         "(default 21, at least 3; the plot uses at least 400)")
    _add_format_option(pr)
    pr.add_argument("--sequence", action="store_true",
                    help="with --plot FILE, also draw the confidence sequences' bounds over t "
                         "beside the EL interval at each t, to FILE's name + '-sequence'")
    pr.set_defaults(func=_cmd_profile)

    from .select import add_select_parser

    add_select_parser(sub, _level)

    demo = sub.add_parser("demo", help="evaluate the bundled example log",
                          description="Run 'elcvx evaluate' on the bundled example log "
                          "(elcvx/data/example_log.csv, --pmin 0.0625).")
    _add_evaluation_options(demo)
    demo.set_defaults(func=_cmd_demo)

    data = sub.add_parser("datasets", help="get the studies' OpenML datasets",
                          description="Data for 'elcvx reproduce realistic' (--set openml, "
                          "docs/realistic.md) and 'elcvx reproduce pessimism' and 'selection' "
                          "(--set pessimism, docs/pessimism.md, docs/selection.md).")
    which = data.add_subparsers(dest="action", required=True, metavar="ACTION",
                                parser_class=_Parser)
    from ..datasets import DATASET_SETS

    fetch = which.add_parser(
        "fetch", help="download, convert and check a study's OpenML datasets",
        description="Download a set's datasets by OpenML id (scikit-learn's fetch_openml: pip "
                    "install 'elcvx[data]'), convert each as the study's files are (numeric "
                    "features, nominal ones as integer codes named cat__<name>, last column "
                    "label = 0..K-1; the openml set keeps at most 10,000 rows) into "
                    "DIR/<id>_<name>.csv.gz, and check each against the set's manifest (sha256 "
                    "of its content), bundled with elcvx. Files already in DIR are checked, not "
                    "downloaded again, so a copy made elsewhere is verified offline.")
    fetch.add_argument("--set", dest="set_name", choices=tuple(DATASET_SETS), default="openml",
                       help="openml (default): the realistic study's datasets; pessimism: the "
                            "pessimism and selection studies' five UCI datasets")
    fetch.add_argument("--ids", type=_openml_ids, default=None, metavar="IDS",
                       help="comma-separated OpenML ids, or 'paper' for all 40 of the paper "
                            "(default: the set's manifest, the datasets the studies use)")
    fetch.add_argument("--dir", default=None, metavar="DIR",
                       help="folder to write to (default data/SET: data/openml, data/pessimism; "
                            "created if missing)")
    fetch.add_argument("--force", action="store_true", help="download files already in DIR again")
    fetch.add_argument("--strict", action="store_true",
                       help="a download that differs from the manifest is an error (not kept)")
    fetch.set_defaults(func=_cmd_datasets_fetch)

    for add in commands:  # (the studies' `reproduce`: elcvx.__main__)
        add(sub)
    return parser


# ------------------------------------------------------------------------------------------------
# Reading the log
# ------------------------------------------------------------------------------------------------
def _load(args):
    # A log whose weights fail Sample.weight_check is reported as a `note:` line (the readers put
    # it in the log's notes), not also as a Python warning on stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeightWarning)
        return _read(args)


def _several_files(path) -> bool:
    """Whether ``path`` names a folder or a glob of log files (not one file)."""
    return not os.path.isfile(path) and bool(os.path.isdir(path) or set("*?[") & set(path))


def _engine(args) -> str:
    """``--engine``, or its default: memory for a file, stream for a folder or glob."""
    if args.engine is None:
        return "stream" if _several_files(args.log) else "memory"
    return args.engine


def _read(args):
    from .. import io

    progress = False if args.no_progress else None
    engine = _engine(args)
    if args.max_pairs is not None and engine != "stream":
        raise UsageError("--max-pairs applies to --engine stream only")
    if args.scheduler is not None and engine != "dask":
        raise UsageError("--scheduler applies to --engine dask only")
    several = engine == "memory" and _several_files(args.log)
    if engine in ("stream", "dask") or several:
        for flag, value in (("--target-prob-file", args.target_prob_file), ("--pdrop", args.pdrop)):
            if value is not None:
                raise UsageError(f"{flag} is for dsjson logs, which --engine {engine} does not "
                                 "read" + " from a folder or glob" * several)
    if several:  # every row of the files in memory, in file order
        from ..io.stream import read_log_rows

        return read_log_rows(args.log, spec=_log_spec(args), format=args.input_format,
                             progress=progress)
    if engine in ("stream", "dask"):
        client = None
        if engine == "dask":  # a cluster started for the run is closed when the command ends
            from ..io._dask import local_client

            client = args.scheduler or args.closing.enter_context(local_client(2))
        scan = io.scan_log(args.log, spec=_log_spec(args), engine=engine, client=client,
                           format=args.input_format, progress=progress,
                           max_pairs=args.max_pairs or io.SCAN_MAX_PAIRS)
        if hasattr(scan.engine, "close"):  # (the Dask engine's data and client, after the run)
            args.closing.callback(scan.engine.close)
        args.rows_in_order = scan.rows_in_order  # (--sequence: the files again, in order)
        if scan.has_logging_probs:  # (--alternative: IX, from the files again with them)
            args.ix_chunks = scan.rows_with_logging_probs
        # A log that compressed is a Sample (every method runs on it); else the scan itself.
        return io.Log(sample=scan.sample if scan.sample is not None else scan, path=scan.path,
                      format=scan.format, n_rows=scan.n_rows, columns=scan.columns,
                      notes=scan.notes)
    fmt = args.input_format or io.detect_format(args.log)
    if fmt == "dsjson":
        fixed = [("--weight-col", args.weight_col), ("--logging-prob-col", args.logging_prob_col),
                 ("--reward-col", args.reward_col), ("--cost-col", args.cost_col),
                 ("--count-col", args.count_col)]
        for flag, value in fixed:
            if value is not None:
                raise UsageError(f"{flag} does not apply to a dsjson log: its cost is "
                                  "_label_cost and its logging probability _label_probability")
        if args.target_prob_file is None:
            raise UsageError("a dsjson log does not hold the target policy's probabilities: "
                              "give them with --target-prob-file FILE")
        for flag, value in (("--sep", args.sep), ("--decimal", args.decimal)):
            if value is not None:
                raise UsageError(f"{flag} applies to CSV/TSV logs, not to a dsjson log")
        # (--target-prob-col names the column of --target-prob-file here, not one of the log's.)
        return io.read_dsjson(args.log, target_prob=args.target_prob_file,
                              target_prob_column=args.target_prob_col or "target_prob",
                              pdrop=args.pdrop or "ess", progress=progress,
                              spec=_log_spec(args, columns=False))
    if args.target_prob_file is not None:
        raise UsageError("--target-prob-file is for dsjson logs; in a table, name the target "
                          "probability column with --target-prob-col")
    if args.pdrop is not None:
        raise UsageError("--pdrop applies to dsjson logs only")
    return io.read_log(args.log, spec=_log_spec(args), format=fmt, progress=progress)


def _log_spec(args, columns: bool = True):
    """The :class:`~elcvx.io.LogSpec` of the command's column and CSV flags (``columns``) and
    bound flags."""
    from ..io import LogSpec

    named = dict(weight=args.weight_col, target_prob=args.target_prob_col,
                 logging_prob=args.logging_prob_col, reward=args.reward_col, cost=args.cost_col,
                 count=args.count_col, sep=args.sep,
                 decimal="." if args.decimal is None else args.decimal) if columns else {}
    return LogSpec(**named, wmin=args.wmin, wmax=args.wmax, pmin=args.pmin, rmin=args.rmin,
                   rmax=args.rmax, cmin=args.cmin, cmax=args.cmax)


def _demo_log():
    """The bundled example log, read as ``elcvx evaluate`` reads it (without needing pandas)."""
    from ..datasets import example_log, example_log_path
    from ..io import Log

    import numpy as np

    sample = example_log()  # wmax = 1/EXAMPLE_PMIN, as `evaluate ... --pmin 0.0625`
    with resources.as_file(example_log_path()) as path:  # (IX's logging probabilities)
        logging_probs = np.genfromtxt(path, delimiter=",", names=True)["logging_prob"]
    return Log(sample=sample, path=str(example_log_path()), format="csv", n_rows=sample.n_rows,
               columns={"w": "target_prob / logging_prob", "r": "reward"},
               logging_probs=logging_probs)


# ------------------------------------------------------------------------------------------------
# Commands
# ------------------------------------------------------------------------------------------------
def _cmd_evaluate(args, log=None):
    log = _load(args) if log is None else log
    if args.strict:
        require_weights(log, args.method)
    rep = evaluate_report(log, args)
    text = render_evaluate(rep, args.format)
    notes_to_stderr(rep["notes"], args.format, sys.stderr)
    return text


def _cmd_demo(args):
    return _cmd_evaluate(args, _demo_log())


def _openml_ids(text):
    from ..datasets import PAPER_IDS

    if text.strip() == "paper":
        return list(PAPER_IDS)
    try:
        ids = [int(t) for t in text.replace(" ", ",").split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give comma-separated OpenML ids or 'paper'") from None
    if not ids or min(ids) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give comma-separated OpenML ids or 'paper'")
    return ids


def _cmd_datasets_fetch(args):
    """``elcvx datasets fetch``: one line per dataset as it is done, then a summary line."""
    from ..datasets import dataset_set, fetch_datasets

    def report(res):
        name = os.path.basename(res.path) if res.path else str(res.id)
        print(f"{name}: {res.message}", flush=True)

    folder = args.dir or dataset_set(args.set_name).directory
    results = fetch_datasets(args.ids, folder, force=args.force, strict=args.strict,
                             report=report, set_name=args.set_name)
    failed = [r for r in results if r.status == "failed"]
    counts = {k: sum(r.status == k for r in results) for k in ("verified", "differs", "unchecked")}
    done = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none written"
    if any(r.message.startswith("cannot reach") for r in failed):
        print(f"elcvx: error: openml.org cannot be reached: run this where it can, or copy the "
              f"<id>_<name>.csv.gz files (e.g. {dataset_set(args.set_name).shared}) into {folder} "
              "and run it again to check them", file=sys.stderr)
        return 1
    if failed:
        print(f"elcvx: error: {iv.plural(len(failed), 'dataset')} not fetched ({done}); see the "
              "lines above", file=sys.stderr)
        return 1
    print(f"{folder}: {done} of {iv.plural(len(results), 'dataset')}")
    return 0


def _cmd_profile(args):
    from ..estimate import estimate
    from ..interval import interval, profile

    if args.points < 3:
        raise UsageError(f"--points {args.points}: at least 3 points are needed (the estimate "
                         "and the interval's two ends)")
    plot = None
    if args.sequence and args.plot is None:
        raise UsageError("--sequence draws a companion of --plot FILE: give --plot too")
    if args.plot is not None:
        plot = os.path.abspath(args.plot)
        ext = os.path.splitext(plot)[1].lower()
        if ext not in _PLOT_FORMATS:
            raise UsageError(f"--plot {args.plot}: the file name must end in "
                             f"{', '.join(_PLOT_FORMATS)}")
        if not os.path.isdir(os.path.dirname(plot)):
            raise UsageError(f"--plot {args.plot}: directory {os.path.dirname(plot)} does not exist")
        require_matplotlib()  # fail before the work if the plot extra is missing
    if args.sequence and _engine(args) != "memory":
        raise UsageError("profile --sequence draws EL at looks over t, which needs the rows in "
                         "memory: --engine memory (it reads a folder or glob too)")
    log = _load(args)
    s = log.sample
    level = iv.confidence_level(args.confidence_level)
    est = estimate(s, method=args.method, rho=args.rho)
    ci = interval(s, confidence_level=level, calibration=args.calibration, method=args.method)
    v = grid(ci.low, ci.high, est.value, s.rmin, s.rmax, args.points)
    prof = profile(s, v, calibration=args.calibration, method=args.method)
    plots = []
    if plot is not None:
        fine = grid(ci.low, ci.high, est.value, s.rmin, s.rmax, max(400, args.points))
        fine_prof = profile(s, fine, calibration=args.calibration, method=args.method)
        draw_profile(plot, log, est, ci, fine, fine_prof.statistic, level)
        plots.append(plot)
        if args.sequence:
            plots.append(draw_sequence(plot, log, level, args))
    text = render_profile(log, args, est, ci, prof, level, plots)
    notes_to_stderr(log.notes, args.format, sys.stderr)
    return text


# ------------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------------
def _fail(message, status):
    # One line, and printable: a message can quote a name given or bytes read from a file.
    text = " ".join(str(message).split())
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    print(f"elcvx: error: {text}", file=sys.stderr)
    return status


def main(argv=None, commands=()):
    """Run the ``elcvx`` command with ``argv`` (default ``sys.argv[1:]``) and the subcommands
    ``commands`` adds (:func:`build_parser`); return the exit status."""
    parser = build_parser(commands)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _fail(exc, 2)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    try:
        with contextlib.ExitStack() as args.closing:  # what a command opens for its run
            text = args.func(args)
    except UsageError as exc:
        return _fail(exc, 2)
    except (SolverError, CannotWrite) as exc:
        return _fail(exc, 1)
    except ElcvxError as exc:  # bad input, and a missing extra (MissingDependencyError)
        return _fail(exc, 2)
    except ImportError as exc:  # a dependency that is not there (or not there yet)
        return _fail(f"{exc} (needed for this command)", 1)
    except KeyboardInterrupt:
        print("elcvx: interrupted", file=sys.stderr)
        return 130
    if isinstance(text, int):  # a command that prints as it goes (reproduce) returns its status
        return text
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error of ours; silence the flush at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

