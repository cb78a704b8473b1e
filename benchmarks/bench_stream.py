"""Time reading a log bigger than memory chunk by chunk into its exact compression
(``elcvx.io.read_log_compressed``, what ``elcvx evaluate FOLDER`` does), as a ratio to one
streamed pass of ``np.log1p`` over the same files, measured in the same run.

The log is ε-greedy-like (3 actions, ε = 0.1, a deterministic target policy): 3 distinct
weights (0, 1/0.9333, 30) and binary rewards, N rows in ``--files`` Parquet files written to a
temporary folder by another process, so that this process's peak RSS (``getrusage``) is what
reading takes. The baseline reads the same two columns with the same batch size and sums
``np.log1p(w)``; it runs before and after the compression (the median of the two is shown),
after one pass that warms the page cache.

    python benchmarks/bench_stream.py              # N = 1e7
    python benchmarks/bench_stream.py --n 1e6
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

EPSILON = 0.1
WMAX = 3 / EPSILON


def write_log(folder, n, files, seed=0):
    """``n`` rows of an ε-greedy log (columns w, r) in ``files`` Parquet files, 1e6 rows at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    greedy = 1 - EPSILON + EPSILON / 3
    for i, rows in enumerate(np.diff(np.linspace(0, n, files + 1).astype(np.int64))):
        with pq.ParquetWriter(os.path.join(folder, f"part-{i:04d}.parquet"),
                              pa.schema([("w", pa.float64()), ("r", pa.float64())])) as out:
            for m in np.diff(np.r_[0:rows:1_000_000, rows]):
                logged_greedy = rng.random(m) < greedy
                target_agrees = rng.random(m) < 0.7  # the target's action is the greedy one
                # w = pi / h: the target's action logged (greedy or not), else 0.
                w = np.where(logged_greedy & target_agrees, 1 / greedy,
                             np.where(~logged_greedy & (rng.random(m) < 0.5) & ~target_agrees,
                                      3 / EPSILON, 0.0))
                r = (rng.random(m) < np.where(w > 0, 0.6, 0.3)).astype(float)
                out.write_table(pa.table({"w": w, "r": r}))


def log1p_pass(folder):
    """One streamed pass: read the log's two columns, sum ``np.log1p(w)``."""
    import pyarrow.dataset as ds

    total = 0.0
    for batch in ds.dataset(folder, format="parquet").to_batches(columns=["w", "r"],
                                                                 batch_size=1 << 18):
        total += float(np.log1p(batch.column(0).to_numpy()).sum())
    return total


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e7, help="rows (default 1e7)")
    parser.add_argument("--files", type=int, default=10, help="Parquet files (default 10)")
    parser.add_argument("--write-to", metavar="DIR", help=argparse.SUPPRESS)  # the child's job
    args = parser.parse_args(argv)
    n = int(args.n)
    if args.write_to:
        return write_log(args.write_to, n, args.files)

    import elcvx
    from elcvx import io

    with tempfile.TemporaryDirectory(prefix="bench_stream_") as folder:
        t_write, _ = timed(lambda: _in_child(folder, n, args.files))
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        rss_start = peak_rss_mb()
        log1p_pass(folder)  # warm the page cache
        base = [timed(lambda: log1p_pass(folder))[0]]
        rss_base = peak_rss_mb()
        t_read, log = timed(lambda: io.read_log_compressed(folder, wmax=WMAX, progress=False))
        rss_read = peak_rss_mb()
        base.append(timed(lambda: log1p_pass(folder))[0])
        t_eval, _ = timed(lambda: (elcvx.estimate(log.sample), elcvx.interval(log.sample)))
    baseline = statistics.median(base)
    s = log.sample
    print(f"N = {n:.0e} rows, {args.files} Parquet files, {size / 2**20:.0f} MB (written in "
          f"{t_write:.1f} s); compressed to {s.n_rows} distinct (w, r) rows, N = {s.n:.0f}")
    print(f"peak RSS: {rss_start:.0f} MB after imports, {rss_base:.0f} MB after the log1p passes, "
          f"{rss_read:.0f} MB after the compression")
    print()
    print("| stage | time | ratio to one streamed log1p pass | rows/s |")
    print("|---|---:|---:|---:|")
    for name, t in (("one streamed log1p pass (median of 2)", baseline),
                    ("read + check + compress (`read_log_compressed`)", t_read),
                    ("estimate + 95% interval on the compressed sample", t_eval)):
        print(f"| {name} | {t:.3g} s | {t / baseline:.2f} | {n / t:.3g} |")


def _in_child(folder, n, files):
    # Writing in another process keeps its memory out of this one's peak RSS.
    subprocess.run([sys.executable, os.path.abspath(__file__), "--n", str(n), "--files",
                    str(files), "--write-to", folder], check=True)


if __name__ == "__main__":
    main()
