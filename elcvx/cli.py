"""The ``elcvx`` command line: evaluate a target policy from a log file in one command.

::

    elcvx evaluate LOG [column options] [bounds] [--format table|json|csv]
    elcvx profile LOG [column options] [bounds] [--plot FILE.png]
    elcvx demo
    elcvx datasets fetch [--ids IDS] [--dir DIR]

Exit status: 0 on success; 2 on a user error (an unknown option, an unreadable or malformed log,
a missing column, a value out of its range), reported as one line ``elcvx: error: ...`` on
stderr, never a traceback; 1 when a solver fails (also one line); 130 when interrupted. Output is
built completely before anything is written, so a failed run prints nothing on stdout, and a
plot is written to a temporary file renamed into place. Options and formats: ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import io as _stdio
import json
import math
import os
import sys
import tempfile
import warnings

from . import __version__
from . import _validation as iv
from .errors import ElcvxError, SolverError
from ._extra_atom import DEFAULT_RHO, RHO_RULES

#: Method names of ``evaluate``'s results, in the order they are printed.
METHODS = ("el", "ips", "snips", "cr", "gaussian", "binomial")
_LABELS = {"el": "EL", "ips": "IPS", "snips": "SNIPS", "cr": "CR(-2)", "gaussian": "Gaussian",
           "binomial": "Binomial", "betting-cs": "Betting CS", "ddrm-cs": "DDRM CS"}
_PLOT_FORMATS = (".png", ".pdf", ".svg")


class _UsageError(Exception):
    """A command-line usage error (reported in one line, exit status 2)."""


class _CannotWrite(Exception):
    """An output file could not be written (one line, exit status 1)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``elcvx: error: ...``), not usage + message."""

    def error(self, message):
        raise _UsageError(f"{message} (see '{self.prog} --help')")


# ------------------------------------------------------------------------------------------------
# The parser
# ------------------------------------------------------------------------------------------------
def _add_log_options(p):
    p.add_argument("log", metavar="LOG",
                   help="the log: CSV/TSV, Parquet, JSON (lines, a records array or an "
                        "object of columns) or VW dsjson, gzip or not")
    p.add_argument("--input-format", choices=("csv", "tsv", "parquet", "jsonl", "dsjson"),
                   help="the log's format (default: from its name and first bytes)")
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
    ds.add_argument("--pdrop", choices=("ess", "inverse", "ignore"),
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


def _add_stat_options(p):
    s = p.add_argument_group("statistics")
    s.add_argument("--confidence-level", type=_level, default=0.95, metavar="L",
                   help="confidence level of the intervals (default 0.95)")
    s.add_argument("--calibration", choices=iv.EL_CALIBRATIONS, default="chi2",
                   help="threshold of the EL and CR(-2) intervals: chi-square(1) quantile "
                        "(default, the paper's text), F(1, N-1) (the authors' code), or bootstrap "
                        "(EL: the larger of chi2 and 999 resamples' critical value, seed 0; "
                        "CR(-2) then uses chi2)")
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


def _add_sequence_option(p):
    p.add_argument("--sequence", action="store_true",
                   help="add the betting and DDRM confidence sequences' bounds at the end of the "
                        "log (valid at every t at once, for a log watched as it grows; rows in "
                        "log order)")


def build_parser():
    parser = _Parser(prog="elcvx", description="Empirical likelihood for contextual bandits: "
                     "off-policy estimates and confidence intervals from a log file.")
    parser.add_argument("--version", action="version", version=f"elcvx {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    ev = sub.add_parser("evaluate", help="EL's estimate and interval beside the baselines",
                        description="Print EL's estimate and confidence interval beside IPS, "
                        "SNIPS, CR(-2), Gaussian and Binomial, with N and the weights' range.")
    _add_log_options(ev)
    _add_stat_options(ev)
    ev.add_argument("--format", choices=("table", "json", "csv"), default="table",
                    help="output format (default table)")
    _add_sequence_option(ev)
    ev.set_defaults(func=_cmd_evaluate)

    pr = sub.add_parser("profile", help="the profile likelihood-ratio curve (and a plot)",
                        description="Print the profile likelihood-ratio statistic 2(L_mle - "
                        "L(v)) on a grid of values v, and with --plot draw it with the "
                        "interval and the estimate marked.")
    _add_log_options(pr)
    _add_stat_options(pr)
    pr.add_argument("--plot", metavar="FILE", help="draw the curve to FILE (.png, .pdf or .svg)")
    pr.add_argument("--points", type=int, default=21, metavar="K",
                    help="grid points printed (default 21; the plot uses at least 400)")
    pr.add_argument("--format", choices=("table", "json", "csv"), default="table",
                    help="output format (default table)")
    pr.add_argument("--sequence", action="store_true",
                    help="with --plot FILE, also draw the confidence sequences' bounds over t "
                         "beside the EL interval at each t, to FILE's name + '-sequence'")
    pr.set_defaults(func=_cmd_profile)

    demo = sub.add_parser("demo", help="evaluate the bundled example log",
                          description="Run 'elcvx evaluate' on the bundled example log "
                          "(elcvx/data/example_log.csv, --pmin 0.0625).")
    _add_stat_options(demo)
    demo.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="output format (default table)")
    _add_sequence_option(demo)
    demo.set_defaults(func=_cmd_demo)

    data = sub.add_parser("datasets", help="download the realistic study's OpenML datasets",
                          description="Data for 'elcvx reproduce realistic' (docs/realistic.md).")
    which = data.add_subparsers(dest="action", required=True, metavar="ACTION",
                                parser_class=_Parser)
    fetch = which.add_parser(
        "fetch", help="download, convert and check the OpenML datasets",
        description="Download the paper's OpenML datasets (scikit-learn's fetch_openml: pip "
                    "install 'elcvx[data]'), convert each as the study's files are (numeric "
                    "features, nominal ones as integer codes named cat__<name>, last column "
                    "label = 0..K-1, at most 10,000 rows) into DIR/<id>_<name>.csv.gz, and check "
                    "each against the manifest's sha256. Files already in DIR are checked, not "
                    "downloaded again, so a copy made elsewhere is verified offline.")
    fetch.add_argument("--ids", type=_openml_ids, default=None, metavar="IDS",
                       help="comma-separated OpenML ids, or 'paper' for all 40 of the paper "
                            "(default: the manifest's, the datasets the study uses)")
    fetch.add_argument("--dir", default="data/openml", metavar="DIR",
                       help="folder to write to (default data/openml; created if missing)")
    fetch.add_argument("--force", action="store_true", help="download files already in DIR again")
    fetch.add_argument("--strict", action="store_true",
                       help="a download that differs from the manifest is an error (not kept)")
    fetch.set_defaults(func=_cmd_datasets_fetch)

    from .experiments.cli import add_reproduce_parser  # registers `reproduce synthetic`

    add_reproduce_parser(sub)
    return parser


# ------------------------------------------------------------------------------------------------
# Reading the log
# ------------------------------------------------------------------------------------------------
def _load(args):
    # A log whose weights fail Sample.weight_check is reported as a `note:` line (the readers put
    # it in the log's notes), not also as a Python warning on stderr.
    from .errors import WeightWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeightWarning)
        return _read(args)


def _read(args):
    from . import io

    progress = False if args.no_progress else None
    fmt = args.input_format or io.detect_format(args.log)
    bounds = dict(wmin=args.wmin, wmax=args.wmax, pmin=args.pmin, rmin=args.rmin, rmax=args.rmax,
                  cmin=args.cmin, cmax=args.cmax)
    if fmt == "dsjson":
        fixed = [("--weight-col", args.weight_col), ("--logging-prob-col", args.logging_prob_col),
                 ("--reward-col", args.reward_col), ("--cost-col", args.cost_col),
                 ("--count-col", args.count_col)]
        for flag, value in fixed:
            if value is not None:
                raise _UsageError(f"{flag} does not apply to a dsjson log: its cost is "
                                  "_label_cost and its logging probability _label_probability")
        if args.target_prob_file is None:
            raise _UsageError("a dsjson log does not hold the target policy's probabilities: "
                              "give them with --target-prob-file FILE")
        return io.read_dsjson(args.log, target_prob=args.target_prob_file,
                              target_prob_column=args.target_prob_col or "target_prob",
                              pdrop=args.pdrop or "ess", progress=progress, **bounds)
    if args.target_prob_file is not None:
        raise _UsageError("--target-prob-file is for dsjson logs; in a table, name the target "
                          "probability column with --target-prob-col")
    if args.pdrop is not None:
        raise _UsageError("--pdrop applies to dsjson logs only")
    return io.read_log(args.log, format=fmt, weight=args.weight_col,
                       target_prob=args.target_prob_col, logging_prob=args.logging_prob_col,
                       reward=args.reward_col, cost=args.cost_col, count=args.count_col,
                       progress=progress, **bounds)


def _demo_log():
    """The bundled example log, read as ``elcvx evaluate`` reads it (without needing pandas)."""
    from .datasets import example_log, example_log_path
    from .io import Log

    sample = example_log()  # wmax = 1/EXAMPLE_PMIN, as `evaluate ... --pmin 0.0625`
    return Log(sample=sample, path=str(example_log_path()), format="csv", n_rows=sample.n_rows,
               columns={"w": "target_prob / logging_prob", "r": "reward"})


# ------------------------------------------------------------------------------------------------
# Computing
# ------------------------------------------------------------------------------------------------
def _num(x):
    """A float for JSON: None for NaN and infinities."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _cr(calibration):
    """CR(-2)'s calibration: its closed form has no bootstrap, so chi2 stands in for it."""
    return calibration if calibration in iv.CALIBRATIONS else "chi2"


def evaluate_sample(sample, *, confidence_level=0.95, calibration="chi2", method="auto", rho=None):
    """EL and the baselines on a sample, as ``elcvx evaluate`` reports them.

    ``rho``: the extra atom's reward in EL's estimate (:func:`elcvx.estimate`).

    Returns
    -------
    results : list of dict
        ``{"method", "estimate", "low", "high"}`` for each of :data:`METHODS`; None where a
        method has no such number (IPS and SNIPS have no interval, Gaussian and Binomial no
        estimate of their own).
    notes : list of str
        Degenerate cases the numbers depend on, and a baseline that cannot be computed on this
        sample (its numbers are then None; EL's are always there).
    ci : IntervalResult
        The EL interval itself (its ``quantile`` is the one the report prints).
    """
    from . import baselines, cressie_read
    from .errors import InvalidInputError
    from .estimate import estimate
    from .interval import interval

    level = iv.confidence_level(confidence_level)
    est = estimate(sample, method=method, rho=rho)
    ci = interval(sample, confidence_level=level, calibration=calibration, method=method)
    results = [{"method": "el", "estimate": _num(est.value), "low": _num(ci.low),
                "high": _num(ci.high)}]
    notes = []
    if est.depends_on_rho:
        lo, hi = est.value_range
        notes.append(f"EL: the estimate depends on the reward rho of an unobserved extreme weight: "
                     f"{lo:.4g} to {hi:.4g} over rho in [{sample.rmin:g}, {sample.rmax:g}]; shown at "
                     f"{_rho_text(est)}")

    # Each baseline as (estimate, low, high, note).
    def point(res):
        return res.value, None, None, res.note

    def interval_only(res):
        return None, res.low, res.high, res.note

    def cr():
        e = cressie_read.estimate(sample)
        i = cressie_read.interval(sample, confidence_level=level, calibration=_cr(calibration))
        return e.value, i.low, i.high, "" if i.status == "optimal" else i.status

    computed = {
        "ips": lambda: point(baselines.ips(sample)),
        "snips": lambda: point(baselines.snips(sample)),
        "cr": cr,
        "gaussian": lambda: interval_only(baselines.gaussian_interval(sample, confidence_level=level)),
        "binomial": lambda: interval_only(
            baselines.clopper_pearson_interval(sample, confidence_level=level)),
    }
    for method, compute in computed.items():
        try:
            *numbers, note = compute()
            if not all(x is None or math.isfinite(x) for x in numbers):
                raise ArithmeticError("a result is not a finite number")
        except (ArithmeticError, InvalidInputError) as exc:
            # A baseline's failure must not hide EL's answer: its row is empty and a note says why.
            numbers = [None] * 3
            note = (f"cannot be computed with weights up to {float(sample.w.max()):.4g} "
                    f"({type(exc).__name__}: {exc})")
        results.append(dict(zip(("method", "estimate", "low", "high"),
                                [method, *map(_num, numbers)])))
        if note:
            notes.append(f"{_LABELS[method]}: {note}")
    return results, notes, ci


def _rho_text(est):
    """``rho = 0.5 (midpoint)``: the extra atom's reward and the rule that chose it."""
    return f"rho = {est.rho:.4g}" + ("" if est.rho_rule == "number" else f" ({est.rho_rule})")


def _weight_check(s, log, method):
    """The JSON form of ``s.weight_check()`` and its note, unless the log's notes have it (the
    readers of elcvx.io add it; the demo's log is built without them)."""
    from .io.frames import _weights_note

    chk = s.weight_check(method=method)
    field = {"mean": _num(chk.mean), "se": _num(chk.se), "statistic": _num(chk.statistic),
             "pvalue": _num(chk.pvalue), "plausible": chk.plausible,
             "depends_on_unobserved": chk.depends_on_unobserved,
             "unobserved_wmass": _num(chk.unobserved_wmass)}
    note = _weights_note(chk, log.columns.get("w", "w"))
    return chk, field, [note] if note and note not in log.notes else []


def _report(log, args):
    """The evaluate report as a dict (the JSON form) plus what the table shows besides."""
    from .estimate import estimate

    s = log.sample
    results, notes, ci = evaluate_sample(s, confidence_level=args.confidence_level,
                                         calibration=args.calibration, method=args.method,
                                         rho=args.rho)
    if args.sequence:
        rows, seq_notes = _sequence_rows(s, args.confidence_level)
        results, notes = results + rows, notes + seq_notes
    chk, weight_check, weight_notes = _weight_check(s, log, args.method)
    notes = weight_notes + notes
    if math.isinf(s.wmax) and not chk.depends_on_unobserved:
        notes.append("wmax = inf (give --wmax or --pmin for tighter intervals)")
    est = estimate(s, method=args.method, rho=args.rho)  # the MLE is cached: no new solve
    value_range = est.value_range
    n = int(s.n) if float(s.n).is_integer() else s.n
    return {
        "n": n,
        "wmin": s.wmin,
        "wmax": _num(s.wmax),
        "confidence_level": float(args.confidence_level),
        "results": results,
        "calibration": args.calibration,
        "quantile": _num(ci.quantile),
        "rmin": s.rmin,
        "rmax": s.rmax,
        "w_observed": [float(s.w.min()), float(s.w.max())],
        "weight_check": weight_check,
        "el_value_range": [_num(value_range.low), _num(value_range.high)],
        "el_depends_on_rho": est.depends_on_rho,
        "rho": {"rule": est.rho_rule, "value": est.rho},
        "log": log.path,
        "format": log.format,
        "rows": log.n_rows,
        "skipped": log.skipped,
        "columns": dict(log.columns),
        "notes": list(log.notes) + notes,
    }


def _sequence_rows(sample, level):
    """``--sequence``: the confidence sequences' bounds at the end of the log, and notes."""
    if sample.counts is not None:
        return [], ["--sequence: not computed: a confidence sequence needs one row per example "
                    "in log order, and this log has counts"]
    from .sequences import betting_sequence, ddrm_sequence

    rows = []
    for name, fn in (("betting-cs", betting_sequence), ("ddrm-cs", ddrm_sequence)):
        low, high = fn(sample.w, sample.r, confidence_level=level, rmin=sample.rmin,
                       rmax=sample.rmax).interval
        rows.append({"method": name, "estimate": None, "low": _num(low), "high": _num(high)})
    notes = ["Betting CS, DDRM CS: confidence sequences at t = N, valid at every t at once "
             "(see docs/sequences.md)"]
    if any(r["low"] > r["high"] for r in rows):
        notes.append("a confidence sequence is empty (low > high): the weights contradict "
                     "E[w] = 1 at this level (check the probability columns)")
    return rows, notes


# ------------------------------------------------------------------------------------------------
# Rendering
# ------------------------------------------------------------------------------------------------
def _n(n):
    """N as a reader wants it: 2000000, not 2e+06; counts may make it fractional."""
    return str(int(n)) if float(n).is_integer() else f"{n:.6g}"


def _f4(x):
    """A result in the table: 4 decimals, or 4 digits when large (IPS with a weight of 1e300)."""
    return f"{x:.4f}" if abs(x) < 1e6 else f"{x:.4g}"


def _g(x):
    return "inf" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:g}"


def _rows(rep):
    if rep["format"] == "dsjson":
        skipped = f", {rep['skipped']} skipped" if rep["skipped"] else ""
        return f"dsjson, {iv.plural(rep['rows'], 'event')}{skipped}"
    return f"{rep['format']}, {iv.plural(rep['rows'], 'row')}"


def _header(rep):
    lines = [f"elcvx {__version__}: {os.path.basename(rep['log'])} ({_rows(rep)})"]
    cols = rep["columns"]
    desc = f"w = {cols['w']}, r = {cols['r']}"
    if "counts" in cols:
        desc += f", counts = {cols['counts']}"
    lines.append(desc)
    lo, hi = rep["w_observed"]
    lines.append(f"N = {_n(rep['n'])}, weights in [{_g(rep['wmin'])}, {_g(rep['wmax'])}] "
                 f"(observed {lo:g} to {hi:g}), rewards in [{rep['rmin']:g}, {rep['rmax']:g}]")
    return lines


def _table(rep):
    level = f"{100 * rep['confidence_level']:g}%"
    lines = _header(rep)
    lines.append(f"{'method':<10}{'estimate':>10}   {level} interval")
    for r in rep["results"]:
        est = "-" if r["estimate"] is None else _f4(r["estimate"])
        row = f"{_LABELS[r['method']]:<10}{est:>10}"
        if r["low"] is not None:
            row += f"   [{_f4(r['low'])}, {_f4(r['high'])}]"
        if r["method"] == "el" and rep.get("el_depends_on_rho"):
            lo, hi = rep["el_value_range"]
            row += f"   estimate over rho: {_f4(lo)} to {_f4(hi)}"
        lines.append(row)
    q = rep["quantile"]
    q = "inf" if q is None else f"{q:.4g}"
    cal = rep["calibration"]
    lines.append(f"EL and CR(-2) intervals: {cal} calibration (q = {q})" if _cr(cal) == cal else
                 f"EL interval: {cal} calibration (q = {q}); CR(-2): {_cr(cal)}")
    lines.extend(f"note: {n}" for n in rep["notes"])
    return "\n".join(lines) + "\n"


def _csv(header, rows):
    import csv

    buf = _stdio.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
    return buf.getvalue()


def _render(rep, fmt):
    if fmt == "json":
        return json.dumps(rep, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        # estimate_low, estimate_high: EL's estimate over rho, where it depends on rho.
        ranged = [rep["el_value_range"] if r["method"] == "el" and rep.get("el_depends_on_rho")
                  else [None, None] for r in rep["results"]]
        return _csv(["method", "estimate", "low", "high", "n", "wmin", "wmax", "confidence_level",
                     "estimate_low", "estimate_high"],
                    [[r["method"], r["estimate"], r["low"], r["high"], rep["n"], rep["wmin"],
                      rep["wmax"] if rep["wmax"] is not None else float("inf"),
                      rep["confidence_level"], *rg] for r, rg in zip(rep["results"], ranged)])
    return _table(rep)


# ------------------------------------------------------------------------------------------------
# Commands
# ------------------------------------------------------------------------------------------------
def _cmd_evaluate(args):
    return _render(_report(_load(args), args), args.format)


def _cmd_demo(args):
    return _render(_report(_demo_log(), args), args.format)


def _openml_ids(text):
    from .datasets import PAPER_IDS

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
    from .datasets import fetch_datasets

    def report(res):
        name = os.path.basename(res.path) if res.path else str(res.id)
        print(f"{name}: {res.message}", flush=True)

    results = fetch_datasets(args.ids, args.dir, force=args.force, strict=args.strict,
                             report=report)
    failed = [r for r in results if r.status == "failed"]
    counts = {k: sum(r.status == k for r in results) for k in ("verified", "differs", "unchecked")}
    done = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none written"
    if any(r.message.startswith("cannot reach") for r in failed):
        print(f"elcvx: error: openml.org cannot be reached: run this where it can, or copy the "
              f"<id>_<name>.csv.gz files (e.g. ../shared/data/openml) into {args.dir} and run it "
              "again to check them", file=sys.stderr)
        return 1
    if failed:
        print(f"elcvx: error: {iv.plural(len(failed), 'dataset')} not fetched ({done}); see the "
              "lines above", file=sys.stderr)
        return 1
    print(f"{args.dir}: {done} of {iv.plural(len(results), 'dataset')}")
    return 0


def _grid(low, high, est, rmin, rmax, k):
    import numpy as np

    width = high - low
    if not width > 0:
        a, b = rmin, rmax
    else:
        a, b = max(rmin, low - 0.6 * width), min(rmax, high + 0.6 * width)
    v = np.linspace(a, b, max(int(k), 2))
    return np.unique(np.concatenate([v, [low, high, est]]))


def _cmd_profile(args):
    from .estimate import estimate
    from .interval import interval, profile

    if args.points < 2:
        raise _UsageError(f"--points {args.points}: at least 2 points are needed")
    plot = None
    if args.sequence and args.plot is None:
        raise _UsageError("--sequence draws a companion of --plot FILE: give --plot too")
    if args.plot is not None:
        plot = os.path.abspath(args.plot)
        ext = os.path.splitext(plot)[1].lower()
        if ext not in _PLOT_FORMATS:
            raise _UsageError(f"--plot {args.plot}: the file name must end in "
                              f"{', '.join(_PLOT_FORMATS)}")
        if not os.path.isdir(os.path.dirname(plot)):
            raise _UsageError(f"--plot {args.plot}: directory {os.path.dirname(plot)} does not exist")
        _matplotlib()  # fail before the work if the plot extra is missing
    log = _load(args)
    s = log.sample
    level = iv.confidence_level(args.confidence_level)
    est = estimate(s, method=args.method, rho=args.rho)
    ci = interval(s, confidence_level=level, calibration=args.calibration, method=args.method)
    v = _grid(ci.low, ci.high, est.value, s.rmin, s.rmax, args.points)
    prof = profile(s, v, calibration=args.calibration, method=args.method)
    if plot is not None:
        fine = _grid(ci.low, ci.high, est.value, s.rmin, s.rmax, max(400, args.points))
        fine_prof = profile(s, fine, calibration=args.calibration, method=args.method)
        _draw(plot, log, est, ci, fine, fine_prof.statistic, level)
        if args.sequence:
            plot_seq = _draw_sequence(plot, log, level, args)
    n = int(s.n) if float(s.n).is_integer() else s.n
    rep = {
        "n": n, "wmin": s.wmin, "wmax": _num(s.wmax), "confidence_level": level,
        "calibration": args.calibration, "quantile": _num(ci.quantile),
        "estimate": est.value, "low": ci.low, "high": ci.high,
        "estimate_range": list(est.value_range), "rho": {"rule": est.rho_rule, "value": est.rho},
        "profile": [{"v": float(a), "statistic": _num(b), "pvalue": _num(c)}
                    for a, b, c in zip(prof.v, prof.statistic, prof.pvalue)],
        "log": log.path, "plot": plot, "weight_check": _weight_check(s, log, args.method)[1],
        "notes": list(log.notes),
    }
    if args.format == "json":
        return json.dumps(rep, indent=2, allow_nan=False) + "\n"
    if args.format == "csv":
        return _csv(["v", "statistic", "pvalue", "in_interval"],
                    [[p["v"], p["statistic"] if p["statistic"] is not None else float("inf"),
                      p["pvalue"], bool(ci.low <= p["v"] <= ci.high)] for p in rep["profile"]])
    q = "inf" if rep["quantile"] is None else f"{rep['quantile']:.4g}"
    lines = [f"elcvx {__version__}: {os.path.basename(log.path)} "
             f"({_rows({'format': log.format, 'rows': log.n_rows, 'skipped': log.skipped})}), "
             f"N = {_n(n)}",
             f"EL estimate {est.value:.4f}"
             + (f" (over rho: {est.value_range.low:.4f} to {est.value_range.high:.4f}; {_rho_text(est)})"
                if est.depends_on_rho else "")
             + f", {100 * level:g}% interval [{ci.low:.4f}, {ci.high:.4f}] "
             f"= {{v : statistic <= {q}}} ({args.calibration})",
             f"{'v':>10}  {'statistic':>10}  {'p-value':>8}"]
    for p in rep["profile"]:
        stat = "inf" if p["statistic"] is None else f"{p['statistic']:.4f}"
        mark = "  *" if ci.low <= p["v"] <= ci.high else ""
        lines.append(f"{p['v']:>10.4f}  {stat:>10}  {p['pvalue']:>8.4f}{mark}")
    lines.append("* inside the interval")
    if plot is not None:
        lines.append(f"plot: {plot}")
        if args.sequence:
            lines.append(f"plot: {plot_seq}")
    lines.extend(f"note: {x}" for x in rep["notes"])
    return "\n".join(lines) + "\n"


def _matplotlib():
    from .errors import _require

    mpl = _require("matplotlib", "plot", "elcvx profile --plot")
    mpl.use("Agg", force=True)
    return mpl


def _draw(path, log, est, ci, v, statistic, level):
    """Draw the profile curve to a temporary file beside ``path``, then rename it into place."""
    import numpy as np

    _matplotlib()
    from matplotlib.figure import Figure

    q = ci.quantile
    stat = np.where(np.isfinite(statistic), statistic, np.nan)
    fig = Figure(figsize=(7, 4.5), dpi=120, layout="constrained")
    ax = fig.add_subplot()
    ax.axvspan(ci.low, ci.high, color="tab:blue", alpha=0.12,
               label=f"{100 * level:g}% interval [{ci.low:.4f}, {ci.high:.4f}]")
    ax.plot(v, stat, color="tab:blue", lw=2, label=r"$2\,(L_{\mathrm{mle}} - L(v))$")
    if math.isfinite(q):
        ax.axhline(q, color="tab:red", ls="--", lw=1.2,
                   label=f"threshold q = {q:.3f} ({ci.calibration})")
    for x in (ci.low, ci.high):
        ax.axvline(x, color="tab:blue", ls=":", lw=1)
    ax.plot([est.value], [0.0], marker="o", ms=8, color="black", ls="none", clip_on=False,
            zorder=5, label=f"EL estimate {est.value:.4f}")
    finite = stat[np.isfinite(stat)]
    top = float(finite.max()) if finite.size else 1.0
    if math.isfinite(q):
        ax.set_ylim(0, min(max(2.5 * q, 1.0), max(top, q) * 1.1))
    else:
        ax.set_ylim(0, max(top * 1.1, 1.0))
    ax.set_xlim(v.min(), v.max())
    ax.set_xlabel("value v of the target policy")
    ax.set_ylabel("profile likelihood-ratio statistic")
    ax.set_title(f"Profile likelihood ratio, {os.path.basename(log.path)} (N = {_n(log.sample.n)})")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", fontsize=9, framealpha=0.9)
    _save(fig, path)


def _draw_sequence(path, log, level, args):
    """``profile --plot FILE --sequence``: the sequences over t beside EL at each t, to FILE-sequence."""
    from . import _sequence_plot
    from .sequences import betting_sequence, ddrm_sequence

    s = log.sample
    if s.counts is not None:
        raise _UsageError("--sequence needs one row per example in log order; this log has counts")
    from matplotlib.figure import Figure

    seqs = {name: fn(s.w, s.r, confidence_level=level, rmin=s.rmin, rmax=s.rmax)
            for name, fn in (("betting CS", betting_sequence), ("DDRM CS", ddrm_sequence))}
    el = _sequence_plot.el_looks(s, s.n_rows, confidence_level=level,
                                 calibration=args.calibration, method=args.method)
    fig = Figure(figsize=(7, 4.5), dpi=120, layout="constrained")
    _sequence_plot.draw(fig.add_subplot(), seqs, el, title=f"{100 * level:g}% bounds over t, "
                        f"{os.path.basename(log.path)} (N = {_n(s.n)})")
    stem, ext = os.path.splitext(path)
    out = f"{stem}-sequence{ext}"
    _save(fig, out)
    return out


def _save(fig, path):
    """Write ``fig`` to a temporary file beside ``path``, then rename it into place."""
    directory, name = os.path.split(path)
    ext = os.path.splitext(name)[1].lower()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=ext, dir=directory)
    except OSError as exc:
        raise _CannotWrite(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format=ext[1:])
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; give it a new file's mode
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _CannotWrite(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


# ------------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------------
def _fail(message, status):
    # One line, and printable: a message can quote a name given or bytes read from a file.
    text = " ".join(str(message).split())
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    print(f"elcvx: error: {text}", file=sys.stderr)
    return status


def main(argv=None):
    """Run the ``elcvx`` command with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        return _fail(exc, 2)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    try:
        text = args.func(args)
    except _UsageError as exc:
        return _fail(exc, 2)
    except (SolverError, _CannotWrite) as exc:
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
