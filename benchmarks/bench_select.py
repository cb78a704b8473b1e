"""Time ``elcvx.select`` on K candidates at once, as ratios to K ``log1p`` passes over the same
``N x K`` weights measured in the same run, on one thread and on every core
(``ELCVX_NUM_THREADS``: the candidates' threads and each candidate's passes' alike).

The log: four actions logged uniformly (``p = 1/4``, ``wmax = 4``), rewards Bernoulli with the
action's mean (0.2, 0.4, 0.6, 0.8); each candidate a fixed random distribution over the actions,
so its weights take four values. A fresh log for every repetition (the MLE is cached per sample:
reusing one would time the cache). The baseline is ``np.log1p(0.1 * (W - 1)).sum()`` over the
candidates' weights ``W`` (``N x K``), timed just before each repetition. ``select`` is run
without a baseline (``K`` one-sided EL bounds and estimates at ``delta/K``) and, where ``K <=
100``, with the logging policy as the baseline (``K`` paired gains more).

Cells with ``N K > 1e8`` are left out (the probabilities alone would take 800 MB).

    python benchmarks/bench_select.py               # N = 1e4, 1e5; K = 1, 10, 100, 1000
    python benchmarks/bench_select.py --write-docs  # and N = 1e6, into docs/performance.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import elcvx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import ROOT, machine, size, write_between_markers  # noqa: E402

DOCS = ROOT / "docs" / "performance.md"
ACTIONS = 4
MU = np.array([0.2, 0.4, 0.6, 0.8])


def make_log(n, k, seed):
    """``(probs (N, K), p0, r)``."""
    rng = np.random.default_rng(seed)
    policies = rng.dirichlet(np.ones(ACTIONS), size=k)
    a = rng.integers(0, ACTIONS, n)
    r = (rng.random(n) < MU[a]).astype(float)
    return np.ascontiguousarray(policies[:, a].T), np.full(n, 1.0 / ACTIONS), r


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def measure(n, k, repeats, threads, paired):
    """Medians over ``repeats`` fresh logs: seconds of ``select`` and its ratio to the ``K``
    passes (a candidate's time over one ``log1p`` pass of ``N`` values), at each thread count;
    the passes' time is the least of three (at ``N = 1e4`` one pass takes about 10 us)."""
    out = {t: [] for t in threads}
    for rep in range(repeats):
        probs, p0, r = make_log(n, k, 1000 * rep + k)
        w = probs / p0[:, None]
        base = min(timed(lambda: np.log1p(0.1 * (w - 1.0)).sum())[0] for _ in range(3))
        for t in (threads if rep % 2 == 0 else threads[::-1]):
            # the threads of the candidates and of each candidate's passes alike; select makes
            # its samples anew, so no MLE is reused from the cache
            os.environ["ELCVX_NUM_THREADS"] = str(t)
            secs, _ = timed(lambda: elcvx.select(probs, p0, r, pmin=0.25,
                                                 baseline="logging" if paired else None))
            out[t].append((secs, secs / base))
    return {t: (statistics.median(s for s, _ in v), statistics.median(x for _, x in v))
            for t, v in out.items()}


def one_call(n, repeats):
    """The median seconds of one one-sided ``interval`` call on a candidate alone, ``N`` rows
    (chi2, as select's bounds)."""
    times = []
    for rep in range(repeats):
        probs, p0, r = make_log(n, 1, 77 + rep)
        s = elcvx.Sample(probs[:, 0] / p0, r, wmax=4.0)
        times.append(timed(lambda: elcvx.interval(s, alternative="greater",
                                                  calibration="chi2"))[0])
    return statistics.median(times)


def table(rows, threads):
    head = ["N", "K", "gains"] + [f"{t} thread{'s' * (t > 1)}: s (per candidate, x log1p pass)"
                                  for t in threads]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n, k, paired, cells in rows:
        lines.append(f"| {size(n)} | {k} | {'yes' if paired else 'no'} | " + " | ".join(
            f"{cells[t][0]:.3g} ({cells[t][1]:.3g})" for t in threads) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", type=float)
    parser.add_argument("--ks", nargs="*", type=int, default=[1, 10, 100, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    previous = os.environ.get("ELCVX_NUM_THREADS")
    sizes = ([int(s) for s in args.sizes] if args.sizes
             else [10**4, 10**5, 10**6] if args.write_docs else [10**4, 10**5])
    cores = os.cpu_count() or 1
    threads = (1, cores) if cores > 1 else (1,)
    elcvx.select(*make_log(1000, 2, 0), pmin=0.25, baseline="logging")  # imports, numba's cache
    rows = []
    for n in sizes:
        for k in args.ks:
            if n * k > 10**8:
                continue
            for paired in (False, True) if k <= 100 else (False,):
                cells = measure(n, k, args.repeats, threads, paired)
                rows.append((n, k, paired, cells))
                print(table(rows[-1:], threads).split("\n", 2)[-1], flush=True)
    if previous is None:
        os.environ.pop("ELCVX_NUM_THREADS", None)
    else:
        os.environ["ELCVX_NUM_THREADS"] = previous
    single = one_call(10**4, 21)
    k1000 = [c for n, k, p, c in rows if n == 10**4 and k == 1000]
    note = (f"One one-sided `interval` call (chi2, as select's) at N = 1e4: {single * 1e3:.2f} ms "
            "(median of 21)")
    if k1000:
        per = k1000[0][1][0] / 1000
        note += (f"; select at N = 1e4, K = 1,000 on one thread: {per * 1e3:.2f} ms per candidate "
                 f"= {per / single:.2f} of that call")
    text = f"{table(rows, threads)}\n\n{note}.\n\nMedians of {args.repeats} fresh logs. {machine()}"
    print(text)
    if args.write_docs:
        write_between_markers(DOCS, "bench_select.py", text)


if __name__ == "__main__":
    main()
