"""Time the fast path's EL estimate + 95% interval, stage by stage, as ratios to one log1p pass.

The baseline is one pass of ``np.log1p(x).sum()`` over N values (the cost of evaluating the
dual objective once), measured at the same N just before each repetition, so that it sees the
same load and the ratios are comparable across machines. Times are the process's CPU time
(``time.process_time``: on a shared machine, what the computation itself used). Each repetition
builds a fresh ``Sample`` from fresh arrays (the MLE is cached per sample, so reusing one would
time the cache) and times three stages: the ``Sample``'s construction (validation),
``estimate`` (the MLE) and ``interval`` (the two bounds, from the cached MLE), then estimate +
interval and all three together; each time, and each ratio, is the median over ``--repeats``.
"passes" is the rows the fast path's passes read (each evaluation of an objective with its
derivatives is one pass) divided by N. The ``compress`` lines time
:meth:`elcvx.Sample.compress` on an epsilon-greedy-like log against ``np.unique(..., axis=0)``.

    python benchmarks/bench_core.py               # N = 1e4 .. 1e7
    python benchmarks/bench_core.py --quick       # N = 1e4 .. 1e6 (a smoke run)
    python benchmarks/bench_core.py --write-docs  # N = 1e4 .. 1e7, into docs/performance.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import elcvx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import ROOT, machine, size, write_between_markers  # noqa: E402

DOCS = ROOT / "docs" / "performance.md"
STAGES = ("sample", "estimate", "interval")


def make_arrays(n, seed):
    """Continuous weights (no two rows alike, so compression does not help), E[w] about 1."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 1.0, n)
    w = np.where(rng.random(n) < 0.4, 1.0 / p, 0.0)
    return w, rng.random(n)


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def stages(n, seed):
    """CPU seconds of each stage on a fresh sample and of all three, the baseline's just before (the median of five
    log1p passes over a fresh array: measured next to each repetition, it sees the same load),
    and the passes of ``estimate`` and of the whole (``interval``'s work includes the MLE's,
    computed once by ``estimate``)."""
    x = np.random.default_rng(seed).random(n)
    base = median_time(lambda: np.log1p(x).sum(), 5)
    w, r = make_arrays(n, seed)
    t0 = time.process_time()
    s = elcvx.Sample(w, r, wmax=10.0)
    t1 = time.process_time()
    est = elcvx.estimate(s, method="fast")
    t2 = time.process_time()
    ci = elcvx.interval(s, method="fast")
    t3 = time.process_time()
    return dict(base=base, sample=t1 - t0, estimate=t2 - t1, interval=t3 - t2,
                solve=t3 - t1, total=t3 - t0, passes_estimate=est.work[1] / n,
                passes_total=ci.work[1] / n)


def fast_row(n, repeats):
    """The medians over ``repeats`` fresh samples of each time and of its ratio to the
    repetition's baseline."""
    runs = [stages(n, seed) for seed in range(repeats)]
    row = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    for key in (*STAGES, "solve", "total"):
        row[f"{key}_ratio"] = statistics.median(run[key] / run["base"] for run in runs)
    row["N"] = n
    return row


def fast_table(rows):
    """A markdown table: each stage's time and its ratio to one log1p pass, estimate + interval,
    all three (the ``Sample`` too), and the passes."""
    head = ("| N | one log1p pass | `Sample(...)` | `estimate` | `interval` "
            "| estimate + interval | all three | passes: estimate | passes: in all |")
    lines = [head, "|" + "---:|" * 9]
    for row in rows:
        cells = [size(row["N"]), _ms(row["base"])]
        cells += [f"{_ms(row[k])} ({x:.{1 if x < 10 else 0}f}×)"
                  for k, x in ((k, row[f"{k}_ratio"]) for k in (*STAGES, "solve", "total"))]
        cells += [f"{row['passes_estimate']:.1f}", f"{row['passes_total']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ms(seconds):
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def compress_row(n, repeats):
    """Sample.compress against np.unique(..., axis=0) on an epsilon-greedy-like log (6 rows)."""
    rng = np.random.default_rng(1)
    w = rng.choice([0.0, 2.0, 1000.0], n)
    r = rng.integers(0, 2, n).astype(float)
    s = elcvx.Sample(w, r, wmax=1000.0)
    ours = median_time(s.compress, repeats)
    theirs = median_time(lambda: np.unique(np.column_stack([w, r]), axis=0), 1)
    return dict(N=n, ours=ours, theirs=theirs)


def compress_table(rows):
    lines = ["| N | `Sample.compress()` | `np.unique(..., axis=0)` | ratio |", "|---:|---:|---:|---:|"]
    lines += [f"| {size(r['N'])} | {_ms(r['ours'])} | {_ms(r['theirs'])} | {r['ours'] / r['theirs']:.3f} |"
              for r in rows]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1e4 .. 1e6 (a smoke run)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true",
                        help="N = 1e4 .. 1e7, the tables written into docs/performance.md")
    args = parser.parse_args(argv)
    sizes = [10**4, 10**5, 10**6] + ([] if args.quick and not args.write_docs else [10**7])
    stages(1000, seed=12345)  # a warm-up: the first call's imports are not timed
    rows = []
    for n in sizes:  # one size at a time, printed as it is measured
        rows.append(fast_row(n, args.repeats))
        print(fast_table(rows[-1:]) if len(rows) == 1 else fast_table(rows[-1:]).splitlines()[-1],
              flush=True)
    packed = [compress_row(n, args.repeats) for n in sizes[-2:]]
    print(compress_table(packed), flush=True)
    if args.write_docs:
        body = (f"{fast_table(rows)}\n\n{compress_table(packed)}\n\n"
                f"Medians of {args.repeats} fresh samples per N. {machine()}")
        write_between_markers(DOCS, "bench_core.py", body)


if __name__ == "__main__":
    main()
