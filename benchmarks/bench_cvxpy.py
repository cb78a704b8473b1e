"""Time the cvxpy path's estimate + 95% interval, against one Clarabel solve of the MLE program.

The baseline is one solve of :func:`elcvx.programs.mle_primal` (compiled and solved once, at
the tight settings) on the same sample, measured in the same run: the ratio says how many
"MLE solves" the interval costs, the fallbacks and certificates included, and is comparable
across machines. Each sample is fresh (continuous weights, so no two rows are alike; no
compression), and the MLE is cached per sample, so nothing is carried between repetitions.
Times are CPU seconds of this process (``time.process_time``: Clarabel runs on one thread),
which a loaded machine disturbs less than wall time; the median over ``--repeats`` samples
(one count, or one per size).

    python benchmarks/bench_cvxpy.py                 # N = 1e3, 1e4, 1e5
    python benchmarks/bench_cvxpy.py --sizes 1e4 --repeats 8
    python benchmarks/bench_cvxpy.py --write-docs    # N = 1e3, 1e4, 1e5 (5, 5, 3 samples),
                                                     # into docs/performance.md
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import elcvx
from elcvx import programs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import ROOT, machine, size, write_between_markers  # noqa: E402

DOCS = ROOT / "docs" / "performance.md"


def make_sample(n, seed):
    """Continuous weights with E[w] about 1 and a finite ``wmax``; rewards in [0, 1]."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 1.0, n)
    w = np.where(rng.random(n) < 0.4, 1.0 / p, 0.0)
    r = rng.binomial(1, 0.3, n).astype(float) if seed % 2 else rng.random(n)
    return elcvx.Sample(w, r, wmax=10.0)


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def one(n, seed):
    """``(interval seconds, MLE-solve seconds, status, max |cvxpy - fast|)`` on a fresh sample."""
    base, _ = cpu(lambda: programs.mle_primal(make_sample(n, seed)).solve())
    s = make_sample(n, seed)
    t, ci = cpu(lambda: (elcvx.estimate(s, method="cvxpy"), elcvx.interval(s, method="cvxpy")))
    fast = elcvx.interval(make_sample(n, seed), method="fast")
    err = max(abs(ci[1].low - fast.low), abs(ci[1].high - fast.high))
    return t, base, ci[1].status, err


def measure(n, repeats):
    """The medians over ``repeats`` fresh samples of size ``n``, the largest disagreement and
    the statuses other than plain ``optimal``."""
    rows = [one(n, seed) for seed in range(repeats)]
    err = max(r[3] for r in rows)
    if not math.isfinite(err):
        raise SystemExit("a cvxpy interval was not finite")
    return dict(N=n, samples=repeats, t=statistics.median(r[0] for r in rows),
                base=statistics.median(r[1] for r in rows), err=err,
                plain=sum(r[2] == "optimal" for r in rows),
                odd=sorted({r[2] for r in rows} - {"optimal"}))


def line(row):
    return (f"{row['N']:>8.0e} {row['t']:>13.2f} {row['base']:>18.2f} {row['t'] / row['base']:>6.1f} "
            f"{row['err']:>19.1e}  {row['plain']}/{row['samples']} plain optimal"
            + (f"; others: {'; '.join(row['odd'])}" if row["odd"] else ""))


def table(rows):
    """A markdown table of the rows (times in CPU seconds)."""
    lines = ["| N | samples | estimate + interval (cvxpy) | one MLE solve | ratio "
             "| agreement with the fast path | plain `optimal` |", "|" + "---:|" * 7]
    for r in rows:
        lines.append(f"| {size(r['N'])} | {r['samples']} | {r['t']:.3g} s | {r['base']:.3g} s "
                     f"| {r['t'] / r['base']:.1f} | {r['err']:.0e} | {r['plain']}/{r['samples']} |")
    odd = sorted({s for r in rows for s in r["odd"]})
    if odd:
        lines += ["", "Other statuses: " + "; ".join(f"`{s}`" for s in odd) + "."]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda s: [int(float(x)) for x in s.split(",")],
                        default=[10**3, 10**4, 10**5], help="comma-separated N (default 1e3,1e4,1e5)")
    parser.add_argument("--repeats", type=lambda s: [int(x) for x in s.split(",")], default=None,
                        help="samples per N: one count, or one per size (default 5; "
                        "with --write-docs 5,5,3)")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table into docs/performance.md")
    args = parser.parse_args(argv)
    repeats = args.repeats or ([5, 5, 3] if args.write_docs else [5])
    if len(repeats) == 1:
        repeats = repeats * len(args.sizes)
    if len(repeats) != len(args.sizes):
        parser.error(f"--repeats: {len(repeats)} counts for {len(args.sizes)} sizes")
    warnings.filterwarnings("ignore")
    print(f"{'N':>8} {'interval (s)':>13} {'one MLE solve (s)':>18} {'ratio':>6} {'max |cvxpy - fast|':>19}"
          f"  statuses")
    rows = []
    for n, k in zip(args.sizes, repeats):
        rows.append(measure(n, k))
        print(line(rows[-1]), flush=True)
    if args.write_docs:
        write_between_markers(DOCS, "bench_cvxpy.py", f"{table(rows)}\n\n{machine()}")


if __name__ == "__main__":
    main()
