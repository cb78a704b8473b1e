"""Time ``Sample`` + ``estimate`` + 95% ``interval`` on the fast path, single- and
multi-threaded, with each backend of the kernels (numpy, and numba's fused twins when numba is
installed: ``ELCVX_KERNELS``), as ratios to two baselines measured in the same run.

Two logs of continuous weights (no two rows alike, so nothing compresses), each drawn afresh for
every repetition (the MLE is cached per sample: reusing one would time the cache):

* ``gamma``: weights drawn from a gamma law of mean 1 (shape 2), capped at ``wmax = 10``, none
  zero; rewards uniform;
* ``core``: :mod:`bench_core`'s log, weights ``1/p`` on 40% of the rows (``p`` uniform in
  ``[0.1, 1]``) and 0 elsewhere; rewards uniform.

Two baselines, each one pass over ``N`` fresh values, timed just before the repetition so that
they see the same load: ``np.log1p(0.1 * (w - 1)).sum()`` over the gamma log's weights (the
issue's), and ``np.log1p(x).sum()`` over uniform ``x`` (:mod:`bench_core`'s). Times are wall
clock (threads share the process's CPU time): each setting of ``ELCVX_KERNELS`` and
``ELCVX_NUM_THREADS`` runs on the same fresh arrays within a repetition, settings in turn (in
alternating order); each cell is the median over the repetitions, each ratio the median of the
repetitions' ratios (a speed-up over one thread: over the same kernels' one thread).

    python benchmarks/bench_speed.py               # N = 1e4 and 1e7
    python benchmarks/bench_speed.py --quick       # N = 1e4 and 1e6 (a smoke run)
    python benchmarks/bench_speed.py --write-docs  # N = 1e4, 1e5, 1e6, 1e7, into docs/performance.md
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import elcvx
from elcvx.engines import backend
from elcvx.engines.blocks import BLOCK

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import ROOT, machine, size, write_between_markers  # noqa: E402
from bench_core import make_arrays as core_arrays  # noqa: E402

DOCS = ROOT / "docs" / "performance.md"
WMAX = 10.0
LOGS = ("gamma", "core")


def gamma_arrays(n, seed):
    """Weights of mean 1 from a gamma law (shape 2), capped at ``WMAX``; uniform rewards."""
    rng = np.random.default_rng(seed)
    return np.minimum(rng.gamma(2.0, 0.5, n), WMAX), rng.random(n)


ARRAYS = {"gamma": gamma_arrays, "core": core_arrays}


def _wall(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def baselines(n, seed):
    """Wall seconds of the two baselines on fresh arrays (each the median of three passes)."""
    w = gamma_arrays(n, seed + 10_000)[0]
    x = np.random.default_rng(seed + 20_000).random(n)
    issue = statistics.median(_wall(lambda: np.log1p(0.1 * (w - 1.0)).sum())[0] for _ in range(3))
    core = statistics.median(_wall(lambda: np.log1p(x).sum())[0] for _ in range(3))
    return issue, core


def _blocked_pass(w, lo, hi):
    """``sum(log1p(0.1 (w - 1)))`` over rows ``lo:hi`` block by block (the blocks of a pass)."""
    total, tmp = 0.0, np.empty(BLOCK)
    for i in range(lo, hi, BLOCK):
        t = tmp[:min(BLOCK, hi - i)]
        np.subtract(w[i:i + t.size], 1.0, out=t)
        np.multiply(t, 0.1, out=t)
        total += float(np.log1p(t, out=t).sum())
    return total


def ceiling(n, seed, threads):
    """Wall seconds of a plain numpy pass over ``n`` fresh weights, block by block, its blocks
    split between ``threads`` threads: the speed-up the machine gives a pass at that moment
    (the median of three), against which the package's is read."""
    w = gamma_arrays(n, seed + 30_000)[0]
    cuts = [n * t // threads // BLOCK * BLOCK for t in range(threads)] + [n]
    pool = ThreadPoolExecutor(max(threads - 1, 1))

    def once():
        futures = [pool.submit(_blocked_pass, w, cuts[t], cuts[t + 1]) for t in range(1, threads)]
        _blocked_pass(w, cuts[0], cuts[1])
        for f in futures:
            f.result()

    try:
        return statistics.median(_wall(once)[0] for _ in range(3))
    finally:
        pool.shutdown()


def run_once(w, r, setting):
    """Wall seconds of ``Sample``, ``estimate`` and ``interval`` on copies of ``(w, r)`` with
    ``(ELCVX_KERNELS, ELCVX_NUM_THREADS) = setting``, and the answers (for the check that
    thread counts agree)."""
    w, r = w.copy(), r.copy()
    os.environ[backend.ENV], os.environ["ELCVX_NUM_THREADS"] = setting[0], str(setting[1])
    # The collector paused while the steps run, as timeit does (no collection's pause inside a
    # step). Not a gc.collect() first: a full collection walks the process's 145,000 objects and
    # leaves the caches cold; at N = 1e4 the steps after one took 1.8 ms, 1.1 ms after another
    # log's steps (and 1.3 ms after reading 64 MB), while the baselines run warm, in a row.
    gc.disable()
    try:
        t_sample, s = _wall(lambda: elcvx.Sample(w, r, wmax=WMAX))
        t_est, est = _wall(lambda: elcvx.estimate(s, method="fast"))
        t_int, ci = _wall(lambda: elcvx.interval(s, method="fast"))
    finally:
        gc.enable()
    return dict(sample=t_sample, estimate=t_est, interval=t_int,
                total=t_sample + t_est + t_int), (est.value, ci.low, ci.high)


def measure(log, n, repeats, settings):
    """Per setting ``(kernels, threads)``: the medians over ``repeats`` fresh logs of each
    stage's wall time and of the total's ratio to each baseline, and the speed-up over the same
    kernels' first thread count (per repetition)."""
    runs = {t: [] for t in settings}
    first = {k: (k, t) for k, t in settings[::-1]}  # (each backend's first setting)
    for rep in range(repeats):
        seed = 1000 * rep + n % 997
        issue, core = baselines(n, seed)
        w, r = ARRAYS[log](n, seed)
        plain = {t: ceiling(n, seed, t) for t in {t for _, t in settings}}
        answers = {k: set() for k, _ in settings}
        # (Settings in turn, in the other order every other repetition: what runs first can
        # pay for page faults or a busy core the next does not.)
        for t in settings if rep % 2 == 0 else settings[::-1]:
            times, answer = run_once(w, r, t)
            answers[t[0]].add(answer)
            runs[t].append(dict(times, issue=issue, core=core, plain=plain[t[1]],
                                plain_one=plain[settings[0][1]]))
        for kernels, seen in answers.items():
            if len(seen) != 1:
                raise SystemExit(f"{log} log, N = {n}, {kernels} kernels: the thread counts "
                                 f"disagree: {seen}")
    rows = []
    for t in settings:
        med = {k: statistics.median(run[k] for run in runs[t]) for k in runs[t][0]}
        med.update(log=log, N=n, kernels=t[0], threads=t[1],
                   issue_ratio=statistics.median(run["total"] / run["issue"] for run in runs[t]),
                   core_ratio=statistics.median(run["total"] / run["core"] for run in runs[t]),
                   speedup=statistics.median(one["total"] / run["total"]
                                             for one, run in zip(runs[first[t[0]]], runs[t])),
                   ceiling=statistics.median(run["plain_one"] / run["plain"] for run in runs[t]))
        rows.append(med)
    return rows


def table(rows):
    """A markdown table of :func:`measure`'s rows."""
    lines = ["| log | N | kernels | threads | `log1p(0.1 (w - 1))` pass | `log1p(x)` pass | "
             "`Sample` | `estimate` | `interval` | all three | ratio: issue's baseline | ratio: "
             "bench_core's | speed-up over 1 thread | a numpy pass's speed-up |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['log']} | {size(r['N'])} | {r['kernels']} | {r['threads']} | "
                     f"{_ms(r['issue'])} | "
                     f"{_ms(r['core'])} | {_ms(r['sample'])} | {_ms(r['estimate'])} | "
                     f"{_ms(r['interval'])} | {_ms(r['total'])} | {r['issue_ratio']:.1f}× | "
                     f"{r['core_ratio']:.1f}× | {r['speedup']:.2f}× | {r['ceiling']:.2f}× |")
    return "\n".join(lines)


def _ms(seconds):
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def repeats_at(n, repeats):
    """More repetitions where a run is short (their median is noisier); 7 at 1e7, where about
    one repetition in three finds the first copy of its arrays 25 times slower than the others
    (the kernel finding memory for them; seen on numpy's copies as on the package's)."""
    return repeats if repeats else (31 if n <= 10**4 else 11 if n <= 10**5 else 7)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1e4 and 1e6 (a smoke run)")
    parser.add_argument("--sizes", type=float, nargs="*", help="the N to run (default 1e4 1e7)")
    parser.add_argument("--repeats", type=int, default=0,
                        help="repetitions per N (default: 31 at 1e4 down to 7 at 1e6 and 1e7)")
    parser.add_argument("--threads", type=int, nargs="*",
                        help="thread counts to compare (default: 1 and every core)")
    parser.add_argument("--logs", nargs="*", choices=LOGS, default=list(LOGS))
    parser.add_argument("--kernels", nargs="*", choices=("numpy", "numba"),
                        help="the kernels to compare (default: numpy, and numba if installed)")
    parser.add_argument("--write-docs", action="store_true",
                        help="N = 1e4 .. 1e7, the table written into docs/performance.md")
    args = parser.parse_args(argv)
    sizes = ([int(s) for s in args.sizes] if args.sizes
             else [10**4, 10**5, 10**6, 10**7] if args.write_docs
             else [10**4, 10**6] if args.quick else [10**4, 10**7])
    cores = os.cpu_count() or 1
    threads = tuple(args.threads) if args.threads else ((1, cores) if cores > 1 else (1,))
    os.environ.pop(backend.ENV, None)
    kernels = args.kernels or ["numpy"] + (["numba"] if backend.kernels() == "numba" else [])
    settings = tuple((k, t) for k in kernels for t in threads)
    previous = {v: os.environ.get(v) for v in ("ELCVX_NUM_THREADS", backend.ENV)}
    for k in kernels:  # a warm-up: the first call's imports (and numba's cache) are not timed
        run_once(*gamma_arrays(1000, 1), (k, 1))
    rows = []
    try:
        for log in args.logs:
            for n in sizes:
                new = measure(log, n, repeats_at(n, args.repeats), settings)
                print(table(new) if not rows else table(new).split("\n", 2)[2], flush=True)
                rows += new
    finally:
        for var, value in previous.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
    if args.write_docs:
        body = (f"{table(rows)}\n\nWall-clock medians of {args.repeats or 'from 31 (1e4) to 7 (1e6, 1e7)'} "
                f"fresh logs per N, kernels {' and '.join(kernels)} at thread counts "
                f"{', '.join(map(str, threads))} on the same logs in turn. {machine()}")
        write_between_markers(DOCS, "bench_speed.py", body)


if __name__ == "__main__":
    main()
