"""``elcvx reproduce validity``: the standing validity suite. Every lower bound elcvx offers, on
laws of logs whose value is exact (:mod:`.distributions`), at N = 20 ... 10,000 (:mod:`.run`);
the violation rates against each bound's promise and the tables (:mod:`.report`). The page
docs/validity.md says what is checked and what the committed run found."""

from __future__ import annotations

import time

from .distributions import DISTRIBUTIONS, QUICK_DISTRIBUTIONS
from .report import ASYMPTOTIC_MIN_N, failures, table, write
from .run import BOOTSTRAP_MAX_N, DELTA, RESAMPLES, SIZES, bounds, run_study

__all__ = ["DISTRIBUTIONS", "SIZES", "DELTA", "ASYMPTOTIC_MIN_N", "QUICK", "reproduce", "run_study",
           "table", "failures", "bounds"]

#: The quick run (a smoke test of the default suite): its sizes, logs per cell and laws.
QUICK = {"sizes": (20, 100), "logs": 40, "laws": QUICK_DISTRIBUTIONS}
DEFAULT_LOGS = 1000
DEFAULT_SEED = 36


def reproduce(out, *, logs: int = DEFAULT_LOGS, quick: bool = False, jobs: int = 2,
              seed: int = DEFAULT_SEED, resamples: int = RESAMPLES,
              bootstrap_max_n: int = BOOTSTRAP_MAX_N, command: str = "", progress: bool = True):
    """Run the suite (or its quick version) into ``out``: ``(table rows, written paths, the
    failures' sentences)``."""
    sizes, laws = SIZES, None
    if quick:
        sizes, logs, laws = QUICK["sizes"], QUICK["logs"], QUICK["laws"]
    every = bounds(resamples, bootstrap_max_n)
    t0 = time.perf_counter()
    rows = run_study(laws, sizes, logs, seed=seed, jobs=jobs, resamples=resamples,
                     bootstrap_max_n=bootstrap_max_n, out=out, progress=progress)
    wall = time.perf_counter() - t0
    cells = len(sizes) * len(laws or DISTRIBUTIONS)
    complete = (f"All {cells} cells, {logs} logs each." if len(rows) == cells
                else f"Partial: {len(rows)} of {cells} cells, {logs} logs each.")
    rows_t = table(rows, {k: b.kind for k, b in every.items()})
    paths = write(rows_t, out, command=command, wall=wall, jobs=jobs,
                  bound_docs={k: (b.kind, b.what) for k, b in every.items()}, complete=complete)
    return rows_t, paths, failures(rows_t)
