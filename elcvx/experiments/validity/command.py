"""``elcvx reproduce validity``: its options and its handler, registered by
:mod:`elcvx.experiments.cli`. The exit status is 1 when a bound breaks its promise in a cell (each
such cell named on stderr), 0 when every one holds."""

from __future__ import annotations

import shlex
import sys

from ...cli.args import positive_int
from . import DEFAULT_LOGS, DEFAULT_SEED, QUICK, reproduce
from .run import BOOTSTRAP_MAX_N, RESAMPLES


def add_parser(which, run_options):
    """Register ``validity`` on the ``reproduce`` sub-parsers; ``run_options(parser, out)`` adds
    the studies' ``--out``, ``--jobs``, ``--quiet`` and their handler."""
    val = which.add_parser(
        "validity",
        help="the standing validity suite: every lower bound against exact values (slow)",
        description="Every lower bound elcvx offers (one-sided EL under each calibration, "
                    "el-betting, LS, IX, EB, the confidence sequences at t = N, the difference's "
                    "and the selection's bounds) on laws of logs whose value is exact, at N = 20 "
                    "... 10,000; write summary.csv, summary.md and cells.jsonl (the finished "
                    "cells: a second run resumes from them). Exit status 1 when a bound breaks "
                    "its promise in a cell (docs/validity.md).",
    )
    val.add_argument("--logs", type=positive_int, default=DEFAULT_LOGS,
                     help="logs per cell (default %(default)s)")
    val.add_argument("--quick", action="store_true",
                     help=f"a smoke run: N = {', '.join(map(str, QUICK['sizes']))}, {QUICK['logs']} "
                          f"logs per cell, {len(QUICK['laws'])} laws")
    val.add_argument("--seed", type=int, default=DEFAULT_SEED, help="root seed (default %(default)s)")
    val.add_argument("--resamples", type=positive_int, default=RESAMPLES,
                     help="the bootstrap calibration's resamples (default %(default)s)")
    val.add_argument("--bootstrap-max-n", type=positive_int, default=BOOTSTRAP_MAX_N,
                     help="the largest N the bootstrap calibration runs at (default %(default)s)")
    val.add_argument("--bounds", type=lambda t: [x.strip() for x in t.split(",") if x.strip()],
                     default=None, help="comma-separated: run only these bounds, adding to the "
                                        "cells --out holds (default all; the table shows all)")
    val.add_argument("--sizes", type=positive_int, nargs="+", default=None, metavar="N",
                     help="run only these N (default 20 100 300 1000 3000 10000)")
    val.add_argument("--report-only", action="store_true",
                     help="run nothing: write the tables of the cells --out already holds")
    run_options(val, "elcvx-validity")


def run(args) -> int:
    """Run the suite from parsed arguments; print the verdict; return the exit status."""
    parts = ["elcvx", "reproduce", "validity", "--out", args.out]
    parts += ["--quick"] if args.quick else ["--logs", str(args.logs)]
    for flag, value, default in (("--seed", args.seed, DEFAULT_SEED),
                                 ("--resamples", args.resamples, RESAMPLES),
                                 ("--bootstrap-max-n", args.bootstrap_max_n, BOOTSTRAP_MAX_N)):
        parts += [flag, str(value)] if value != default else []
    parts += ["--sizes", *map(str, args.sizes)] if args.sizes else []
    parts += ["--bounds", ",".join(args.bounds)] if args.bounds else []
    parts += ["--report-only"] if args.report_only else ["--jobs", str(args.jobs)]
    rows, paths, bad = reproduce(args.out, logs=args.logs, quick=args.quick, jobs=args.jobs,
                                 seed=args.seed, resamples=args.resamples,
                                 bootstrap_max_n=args.bootstrap_max_n, command=shlex.join(parts),
                                 progress=not args.quiet, report_only=args.report_only,
                                 names=args.bounds, sizes=args.sizes)
    cells = len({(t["law"], t["n"]) for t in rows})
    print(f"validity suite: {cells} cells, {len(rows)} (cell, bound) pairs, "
          f"{sum(1 for t in rows if t['flag'])} above delta + 2 SE")
    for p in paths:
        print(f"wrote {p}")
    for m in bad:
        print(f"FAIL: {m}", file=sys.stderr)
    return 1 if bad else 0
