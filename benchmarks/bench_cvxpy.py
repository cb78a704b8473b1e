"""Time the cvxpy path's estimate + 95% interval, against one Clarabel solve of the MLE program.

The baseline is one solve of :func:`elcvx.programs.mle_primal` (compiled and solved once, at
the tight settings) on the same sample, measured in the same run: the ratio says how many
"MLE solves" the interval costs, the fallbacks and certificates included, and is comparable
across machines. Each sample is fresh (continuous weights, so no two rows are alike; no
compression), and the MLE is cached per sample, so nothing is carried between repetitions.
Times are CPU seconds of this process (``time.process_time``: Clarabel runs on one thread),
which a loaded machine disturbs less than wall time; the median over ``--repeats`` samples.

    python benchmarks/bench_cvxpy.py                 # N = 1e3, 1e4, 1e5
    python benchmarks/bench_cvxpy.py --sizes 1e4 --repeats 8
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings

import numpy as np

import elcvx
from elcvx import programs


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda s: [int(float(x)) for x in s.split(",")],
                        default=[10**3, 10**4, 10**5], help="comma-separated N (default 1e3,1e4,1e5)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    print(f"{'N':>8} {'interval (s)':>13} {'one MLE solve (s)':>18} {'ratio':>6} {'max |cvxpy - fast|':>19}"
          f"  statuses")
    for n in args.sizes:
        rows = [one(n, seed) for seed in range(args.repeats)]
        t = statistics.median(r[0] for r in rows)
        base = statistics.median(r[1] for r in rows)
        err = max(r[3] for r in rows)
        odd = sorted({r[2] for r in rows} - {"optimal"})
        print(f"{n:>8.0e} {t:>13.2f} {base:>18.2f} {t / base:>6.1f} {err:>19.1e}  "
              f"{sum(r[2] == 'optimal' for r in rows)}/{len(rows)} plain optimal"
              + (f"; others: {'; '.join(odd)}" if odd else ""), flush=True)
        if not math.isfinite(err):
            raise SystemExit("a cvxpy interval was not finite")


if __name__ == "__main__":
    main()
