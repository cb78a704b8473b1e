"""Time the EL estimate + 95% interval on both paths, as ratios to one log1p pass.

The baseline is one pass of ``np.log1p(x).sum()`` over N values (the cost of evaluating the
dual objective once), measured in the same run at the same N, so the ratios are comparable
across machines. Each time is the median of ``--repeats`` runs on a fresh ``Sample`` (the MLE
is cached per sample, so reusing one would time the cache). "passes" is the rows the fast
path's passes read (each evaluation of an objective with its derivatives is one pass) divided
by N, so a pass over the MLE's warm-start subsample counts as a fraction.

    python benchmarks/bench_core.py            # fast path N = 1e4..1e7, cvxpy path N = 1e2..1e5
    python benchmarks/bench_core.py --quick    # smaller sizes
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import elcvx


def make_sample(n, seed):
    """Continuous weights (no two rows alike, so compression does not help), E[w] about 1."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 1.0, n)
    w = np.where(rng.random(n) < 0.4, 1.0 / p, 0.0)
    return elcvx.Sample(w, rng.random(n), wmax=10.0)


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def baseline(n, repeats):
    x = np.random.default_rng(0).random(n)
    return median_time(lambda: np.log1p(x).sum(), max(repeats, 5))


def run_path(n, method, repeats):
    samples = [make_sample(n, seed) for seed in range(repeats)]
    it = iter(samples)
    rows = []

    def job():
        s = next(it)
        elcvx.estimate(s, method=method)
        rows.append(elcvx.interval(s, method=method).work[1])  # the MLE's passes included

    t = median_time(job, repeats)
    return t, sum(rows) / (n * repeats)


def bench_compress(n, repeats):
    """Sample.compress against np.unique(..., axis=0) on an epsilon-greedy-like log (6 rows)."""
    rng = np.random.default_rng(1)
    w = rng.choice([0.0, 2.0, 1000.0], n)
    r = rng.integers(0, 2, n).astype(float)
    s = elcvx.Sample(w, r, wmax=1000.0)
    ours = median_time(s.compress, repeats)
    theirs = median_time(lambda: np.unique(np.column_stack([w, r]), axis=0), 1)
    print(f"compress {n:>9.0e} rows: {ours * 1e3:8.1f}ms, np.unique(axis=0) {theirs * 1e3:8.1f}ms, "
          f"ratio {ours / theirs:.3f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    fast_sizes = [10**4, 10**5, 10**6] if args.quick else [10**4, 10**5, 10**6, 10**7]
    cvx_sizes = [10**2, 10**3] if args.quick else [10**2, 10**3, 10**4, 10**5]
    print(f"{'path':<6} {'N':>9} {'log1p pass':>11} {'estimate+interval':>18} {'ratio':>8} {'passes':>7}")
    for n in fast_sizes[-2:]:
        bench_compress(n, args.repeats)
    for method, sizes, repeats in (("fast", fast_sizes, args.repeats), ("cvxpy", cvx_sizes, 1)):
        for n in sizes:
            base = baseline(n, args.repeats)
            t, p = run_path(n, method, repeats)
            passes = f"{p:7.1f}" if method == "fast" else "      -"
            print(f"{method:<6} {n:>9.0e} {base * 1e3:>9.2f}ms {t * 1e3:>16.1f}ms {t / base:>8.1f} {passes}",
                  flush=True)


if __name__ == "__main__":
    main()
