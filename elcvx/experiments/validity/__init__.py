"""``elcvx reproduce validity``: the standing validity suite. Every lower bound elcvx offers, on
laws of logs whose value is exact (:mod:`.distributions`), at N = 20 ... 10,000 (:mod:`.run`);
the violation rates against each bound's promise and the tables (:mod:`.report`). The page
docs/validity.md says what is checked and what the committed run found."""

from __future__ import annotations

import time
from typing import Any

from .distributions import DISTRIBUTIONS, QUICK_DISTRIBUTIONS, by_name
from .report import ASYMPTOTIC_MIN_N, failures, table, write
from .run import BOOTSTRAP_MAX_N, DELTA, RESAMPLES, SIZES, bounds, run_study

__all__ = ["DISTRIBUTIONS", "SIZES", "DELTA", "ASYMPTOTIC_MIN_N", "QUICK", "reproduce", "run_study",
           "table", "failures", "bounds"]

#: The quick run (a smoke test of the default suite): its sizes, logs per cell and laws.
QUICK: dict[str, Any] = {"sizes": (20, 100), "logs": 30, "laws": QUICK_DISTRIBUTIONS}
DEFAULT_LOGS = 1000
DEFAULT_SEED = 36


def reproduce(out, *, logs: int = DEFAULT_LOGS, quick: bool = False, jobs: int = 2,
              seed: int = DEFAULT_SEED, resamples: int = RESAMPLES,
              bootstrap_max_n: int = BOOTSTRAP_MAX_N, command: str = "", progress: bool = True,
              report_only: bool = False, names=None, sizes=None):
    """Run the suite (or its quick version) into ``out``: ``(table rows, written paths, the
    failures' sentences)``. ``report_only``: write the tables of the cells ``out`` already holds
    (an interrupted run's), running none. ``names``: run only these bounds (the others' cells are
    kept, and reported); ``sizes``: run only these N (default :data:`SIZES`)."""
    sizes, laws = tuple(sizes or SIZES), None
    if quick:
        sizes, logs, laws = QUICK["sizes"], QUICK["logs"], QUICK["laws"]
    every = bounds(resamples, bootstrap_max_n)
    t0 = time.perf_counter()
    rows = run_study(laws, sizes, logs, seed=seed, jobs=jobs, resamples=resamples,
                     bootstrap_max_n=bootstrap_max_n, out=out, progress=progress,
                     report_only=report_only, names=names)
    wall = time.perf_counter() - t0
    laws = list(laws or (d.name for d in DISTRIBUTIONS))
    expected = {(law, n, b) for law in laws for n in sizes for b, spec in every.items()
                if spec.applies(by_name(law), n)}
    rows_t = table(rows, {k: b.kind for k, b in every.items()})
    missing = expected - {(t["law"], t["n"], t["bound"]) for t in rows_t}
    complete = f"{len(laws) * len(sizes)} cells, {logs} logs each: " + (
        "complete." if not missing else
        f"partial, {len(missing)} of {len(expected)} (cell, bound) pairs not run: " + "; ".join(
            f"{b} at N = {', '.join(str(n) for n in sorted({m[1] for m in missing if m[2] == b}))}"
            for b in every if any(m[2] == b for m in missing)) + ".")
    paths = write(rows_t, out, command=command, wall=None if report_only else wall, jobs=jobs,
                  bound_docs={k: (b.kind, b.what) for k, b in every.items()}, complete=complete)
    return rows_t, paths, failures(rows_t)
