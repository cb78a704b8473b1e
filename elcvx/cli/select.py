"""``elcvx select``: choose among candidate policies from one log, with simultaneous bounds.

::

    elcvx select LOG --candidates C1,C2,... [--baseline logging|COL] [--method el|...]
                     [--rule gain|bound|estimate] [--pmin P | --wmax W] [--format table|json|csv]
                     [--strict]

Each candidate is a column of the target policy's probability of the logged action; the log
also has the logging probability and the reward. The numbers are :func:`elcvx.select`'s.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import warnings

from .. import __version__
from .. import _validation as iv
from ..errors import InvalidInputError, WeightWarning
from ..selection import METHODS, RULES
from .report import STRICT_HINT, UsageError, _csv, _num, notes_to_stderr

__all__ = ["add_select_parser"]


def add_select_parser(sub, level_type):
    """Register ``select`` on the ``elcvx`` command's subparsers."""
    p = sub.add_parser("select", help="choose among candidate policies, with simultaneous bounds",
                       description="Bound every candidate's value from below, and its gain over "
                       "a baseline, all at once at the confidence level (Bonferroni), and choose "
                       "one by the rule; the chosen candidate's bounds hold after the choice.")
    p.add_argument("log", metavar="LOG",
                   help="a CSV/TSV, Parquet or JSON-lines file, or a folder or glob of "
                        "Parquet/CSV files (only the named columns are read)")
    p.add_argument("--candidates", required=True, metavar="COL[,COL...]",
                   help="the columns of the candidates' probabilities of the logged action")
    p.add_argument("--baseline", metavar="logging|COL",
                   help="what the candidates are compared with, each one's certified gain "
                        "printed: 'logging' (the logging policy), a candidate, or another "
                        "column of probabilities (default: none)")
    p.add_argument("--logging-prob-col", default="logging_prob", metavar="C",
                   help="the logging probability of the logged action (default logging_prob)")
    p.add_argument("--reward-col", default="reward", metavar="C", help="rewards (default reward)")
    p.add_argument("--engine", choices=("memory", "stream", "dask"), default=None,
                   help="memory: read a file whole; stream: a folder's or glob's files one "
                        "after the other (the default for a folder or glob); dask: the files "
                        "read on a Dask cluster's workers (the dask extra); each way only the "
                        "named columns are read, each file once for all candidates")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="--engine dask: a running cluster's scheduler (default: a cluster of 2 "
                        "worker processes on this machine, started for the run)")
    p.add_argument("--input-format", choices=("csv", "tsv", "parquet", "jsonl"),
                   help="the log's format (default: from its name)")
    p.add_argument("--sep", metavar="CHAR", help="CSV/TSV: the field separator")
    p.add_argument("--decimal", metavar="CHAR", help="CSV/TSV: the decimal mark")
    b = p.add_mutually_exclusive_group()
    b.add_argument("--wmax", type=float, metavar="W", help="upper bound on every weight")
    b.add_argument("--pmin", type=float, metavar="P",
                   help="smallest probability the logging policy gives any action: wmax = 1/P")
    p.add_argument("--rmin", type=float, default=0.0, metavar="R", help="smallest reward (0)")
    p.add_argument("--rmax", type=float, default=1.0, metavar="R", help="largest reward (1)")
    p.add_argument("--method", choices=METHODS, default="el",
                   help="the bounds: one-sided EL (default; asymptotic) or a finite-sample "
                        "bound (el-betting, ls, ix, eb)")
    p.add_argument("--rule", choices=RULES, default="bound",
                   help="bound (default): the largest lower bound; gain: the largest certified "
                        "gain over --baseline, else keep the baseline; estimate: the largest "
                        "estimate among those certified better than the baseline")
    p.add_argument("--confidence-level", type=level_type, default=0.95, metavar="L",
                   help="the probability that every bound printed holds at once (default 0.95)")
    p.add_argument("--calibration", choices=iv.CALIBRATIONS, default="chi2",
                   help="EL's threshold: chi2 (default) or f")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="output format (default table)")
    p.add_argument("--strict", action="store_true",
                   help="a candidate whose weights fail the weight check (E[w] = 1; wmax = inf "
                        "leaving the estimate to an unobserved weight) is an error: exit 2 "
                        "instead of a note")
    p.set_defaults(func=_cmd_select)
    return p


def _cmd_select(args):
    import os

    from ..io import LogSpec
    from ..io.candidates import read_candidates
    from ..selection import select

    names = [c.strip() for c in args.candidates.split(",") if c.strip()]
    if not names:
        raise UsageError("--candidates: name at least one column")
    several = not os.path.isfile(args.log)
    if args.engine == "memory" and several:
        raise UsageError("--engine memory reads one file; a folder or glob is read with "
                         "--engine stream (the default for them)")
    spec = LogSpec(sep=args.sep, decimal="." if args.decimal is None else args.decimal)
    base = args.baseline
    column = None if base in (None, "logging") or base in names else base
    client = None
    if args.engine == "dask":  # a cluster started for the run is closed when the command ends
        from ..io._dask import local_client

        client = args.scheduler or args.closing.enter_context(local_client(2))
    elif args.scheduler is not None:
        raise UsageError("--scheduler applies to --engine dask only")
    log = read_candidates(args.log, names, logging_column=args.logging_prob_col,
                          reward_column=args.reward_col, spec=spec, baseline=column,
                          format=args.input_format,
                          engine="dask" if client is not None else "memory", client=client)
    notes = weight_notes(log, args)
    if notes and args.strict:
        raise InvalidInputError(f"the weight check failed (--strict): {notes[0]}", field="weights")
    res = select(log.target_probs, log.logging_probs, log.rewards, pmin=args.pmin,
                 wmax=args.wmax, rmin=args.rmin, rmax=args.rmax, names=log.names,
                 baseline=log.baseline if column is not None else base,
                 confidence_level=args.confidence_level, method=args.method, rule=args.rule,
                 calibration=args.calibration)
    if column is not None:  # (select calls a baseline given as probabilities "baseline")
        res = dataclasses.replace(res, baseline=column)
    notes = [n + STRICT_HINT.replace("evaluate", "select") for n in notes]
    if args.format == "csv":
        notes_to_stderr(notes, args.format, sys.stderr)
    return render(res, log, args.format, notes)


def weight_notes(log, args) -> list:
    """The weight check of each candidate's weights (``candidate / logging``), as ``elcvx
    evaluate`` makes it of a log's: one note per candidate that fails it, naming its column.
    One pass per candidate whose mean weight is plainly fine (:func:`elcvx.checks.plainly_fine`),
    an EL MLE for any other."""
    from ..checks import check_weights
    from ..sample import Sample

    notes: list[str] = []
    for j, name in enumerate(log.names):
        sample = Sample.from_probs(log.target_probs[:, j], log.logging_probs, log.rewards,
                                   pmin=args.pmin, wmax=args.wmax, rmin=args.rmin,
                                   rmax=args.rmax, check=False)
        with warnings.catch_warnings():  # (a note here, not also a Python warning)
            warnings.simplefilter("ignore", WeightWarning)
            notes.extend(check_weights(sample, f"{name} / {args.logging_prob_col}"))
    return notes


def report(res, log) -> dict:
    """The JSON form: the log, the guarantee, and one entry per candidate."""
    return {"log": log.path, "files": log.n_files, "n": res.n, "method": res.method,
            "rule": res.rule, "baseline": res.baseline, "confidence_level": res.confidence_level,
            "statements": res.statements, "statement_level": res.statement_level,
            "chosen": res.chosen_name, "certified_gain": _num(res.certified_gain),
            "guarantee": res.guarantee,
            "candidates": [{"name": n, "estimate": _num(e), "low": _num(lo), "gain": _num(g),
                            "chosen": bool(c)}
                           for n, e, lo, g, c in zip(res.name, res.estimate, res.low, res.gain,
                                                     res.is_chosen)]}


def render(res, log, fmt, notes=()) -> str:
    rep = {**report(res, log), "notes": list(notes)}
    if fmt == "json":
        return json.dumps(rep, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        return _csv(["name", "estimate", "low", "gain", "chosen", "n", "method", "rule",
                     "baseline", "confidence_level", "statements"],
                    [[c["name"], c["estimate"], c["low"], c["gain"], c["chosen"], rep["n"],
                      rep["method"], rep["rule"], rep["baseline"], rep["confidence_level"],
                      rep["statements"]] for c in rep["candidates"]])
    width = max(9, *(len(n) for n in res.name))
    lines = [f"elcvx {__version__} select: {log.path} ({log.n_files} file"
             f"{'s' * (log.n_files > 1)}, N = {res.n:g}), {len(res.name)} candidates",
             f"method {res.method}, rule {res.rule}, baseline {res.baseline or 'none'}; "
             f"{res.confidence_level:.0%} together over {res.statements} bounds",
             f"{'candidate':<{width}}  {'estimate':>9}  {'low':>9}  {'gain':>9}"]
    for n, e, lo, g, c in zip(res.name, res.estimate, res.low, res.gain, res.is_chosen):
        gain = "-" if math.isnan(g) else f"{g:+.4f}"
        lines.append(f"{n:<{width}}  {e:9.4f}  {lo:9.4f}  {gain:>9}" + ("  <- chosen" * bool(c)))
    lines.append(res.guarantee)
    lines.extend(f"note: {n}" for n in notes)
    return "\n".join(lines) + "\n"
