"""Time elcvx on logs bigger than memory: 1e8 rows in Parquet, streamed and through Dask, each
as a ratio to one streamed ``np.log1p`` pass over the same files, measured in the same run.

Two logs are written (once: a later run reuses them when their manifest matches) under
``--data``, in ``--files`` Parquet files of row groups of 1e6 rows, columns ``w`` and ``r``:

* a log with continuous importance weights: the logging policy is ε-greedy over 4 actions, its
  greedy action and its ε (0.1 ... 0.5) varying with a continuous context, so ``pmin`` is
  0.1 / 4 and ``wmax`` 40; the target policy is a softmax of the context; rewards are binary;
* an ε-greedy log with 3 distinct weights (``bench_stream.py``'s), which compresses exactly.

Each timed part runs in a child process of its own, so that its wall and CPU times and its peak
RSS (``getrusage``, imports included) are its own; the parts read files that the baseline has
brought into the page cache:

* ``log1p``: the baseline, one pass reading both columns chunk by chunk, file by file, and
  summing ``np.log1p(w)`` (chunks of 2**18 rows, the engine's default, and 2**20: the fastest of
  3 passes at either size is the baseline), after a pass that warms the page cache; on each log;
* ``compress``: ``elcvx.io.scan_log`` on the discrete log, which it compresses exactly, then the
  estimate and its 95% interval on the scan;
* ``stream``: ``elcvx.io.scan_log(..., engine="stream")`` on the continuous log, then
  ``elcvx.estimate`` and ``elcvx.interval`` on the scan (peak RSS must stay under 1.5 GB);
* ``dask``: the same with ``engine="dask"`` on a ``distributed.LocalCluster`` of two worker
  processes of one thread each (the cluster's start is not timed; CPU time and peak RSS include
  the workers').

"passes" is the rows the fast path's passes read (``.work``) divided by N: the estimate's / in
all (the interval's ``.work`` includes the MLE's, computed once per scan).

    python benchmarks/bench_scale.py                   # N = 1e8 (writes ~0.9 GB the first time)
    python benchmarks/bench_scale.py --rows 1000000    # a quick check, under a minute
    python benchmarks/bench_scale.py --only stream dask
    python benchmarks/bench_scale.py --write-docs      # the table into docs/performance.md, README
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import ROOT, machine, size, write_between_markers  # noqa: E402
from bench_stream import WMAX as DISCRETE_WMAX  # noqa: E402
from bench_stream import write_log as write_discrete  # noqa: E402

PAGES = (ROOT / "docs" / "performance.md", ROOT / "README.md")
PARTS = ("write", "compress", "stream", "dask")
CHUNKS = (1 << 18, 1 << 20)  # the baseline's chunk sizes: the engine's default, and a bigger one
GROUP = 1_000_000            # rows per row group (and per chunk written)
RSS_LIMIT_MB = 1500
ACTIONS = 4
EPS_MIN, EPS_MAX = 0.1, 0.5
PMIN = EPS_MIN / ACTIONS
GENERATOR = 1                # bumped whenever a writer changes, so that old data is rewritten
SEEDS = {"continuous": 1, "discrete": 0}


def continuous_chunk(rng, m):
    """``m`` rows ``(w, r)`` of the continuous-weight log (see the module docstring)."""
    x = rng.random(m)
    eps = EPS_MIN + (EPS_MAX - EPS_MIN) * x
    greedy = np.minimum((ACTIONS * x).astype(np.int64), ACTIONS - 1)
    a = np.where(rng.random(m) < eps, rng.integers(0, ACTIONS, m), greedy)
    h = eps / ACTIONS + (1 - eps) * (a == greedy)
    # The target: a softmax of scores 3 cos(2 pi (x - k/K - 0.1)), evaluated one action at a time.
    total = np.zeros(m)
    for k in range(ACTIONS):
        total += np.exp(3 * np.cos(2 * np.pi * (x - k / ACTIONS - 0.1)))
    pi = np.exp(3 * np.cos(2 * np.pi * (x - a / ACTIONS - 0.1))) / total
    p = 0.2 + 0.3 * (1 + np.cos(2 * np.pi * (x - (a + 0.5) / ACTIONS)))
    return pi / h, (rng.random(m) < p).astype(np.float64)


def write_continuous(folder, n, files, seed):
    """``n`` rows of the continuous-weight log in ``files`` Parquet files, ``GROUP`` at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    schema = pa.schema([("w", pa.float64()), ("r", pa.float64())])
    for i, rows in enumerate(np.diff(np.linspace(0, n, files + 1).astype(np.int64))):
        with pq.ParquetWriter(os.path.join(folder, f"part-{i:04d}.parquet"), schema) as out:
            for m in np.diff(np.r_[0:rows:GROUP, rows]):
                w, r = continuous_chunk(rng, int(m))
                out.write_table(pa.table({"w": w, "r": r}, schema=schema))


def log_folder(data, kind, n):
    return Path(data) / f"{kind}-{size(n)}"


def _manifest(kind, n, files):
    return {"kind": kind, "rows": n, "files": files, "seed": SEEDS[kind], "generator": GENERATOR}


def log_ready(folder, kind, n, files):
    """Whether ``folder`` holds the log its manifest describes (same rows, files and sizes)."""
    try:
        found = json.loads((folder / "_manifest.json").read_text())
    except (OSError, ValueError):
        return False
    sizes = found.pop("sizes", {})
    return found == _manifest(kind, n, files) and len(sizes) == files and all(
        (folder / name).is_file() and (folder / name).stat().st_size == b
        for name, b in sizes.items())


def write(folder, kind, n, files):
    """Write the log afresh (removing this script's files from an earlier, different one)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in [*folder.glob("part-*.parquet"), folder / "_manifest.json"]:
        old.unlink(missing_ok=True)
    writer = write_continuous if kind == "continuous" else write_discrete
    writer(str(folder), n, files, SEEDS[kind])
    sizes = {p.name: p.stat().st_size for p in sorted(folder.glob("part-*.parquet"))}
    (folder / "_manifest.json").write_text(json.dumps({**_manifest(kind, n, files),
                                                       "sizes": sizes}, indent=1))


# --- the parts, each run in a child process -------------------------------------------------

def log1p_pass(folder, chunk):
    """One streamed pass: read the log's two columns chunk by chunk, one file after another (as
    the engine does; the dataset's own scan reads several files ahead, which multiplies its
    memory), sum ``np.log1p(w)``."""
    import pyarrow.dataset as ds

    total = 0.0
    for fragment in ds.dataset(folder, format="parquet").get_fragments():
        for batch in fragment.to_batches(columns=["w", "r"], batch_size=chunk):
            total += float(np.log1p(batch.column(0).to_numpy()).sum())
    return total


def clocks():
    return time.perf_counter(), time.process_time()


def since(start):
    wall, cpu = clocks()
    return {"wall": wall - start[0], "cpu": cpu - start[1]}


def part_log1p(args):
    log1p_pass(args.folder, CHUNKS[0])  # warms the page cache
    by_chunk = {}
    for _ in range(3):
        for chunk in CHUNKS:
            start = clocks()
            log1p_pass(args.folder, chunk)
            by_chunk.setdefault(chunk, []).append(since(start))
    best = {c: min(t, key=lambda t: t["wall"]) for c, t in by_chunk.items()}
    chunk = min(best, key=lambda c: best[c]["wall"])
    return {**best[chunk], "passes": "1", "chunk": chunk,
            "by_chunk": {c: t["wall"] for c, t in best.items()}}


def part_compress(args):
    import elcvx
    from elcvx import io

    start = clocks()
    scan = io.scan_log(args.folder, wmax=DISCRETE_WMAX, progress=False)
    read = since(start)
    est = elcvx.estimate(scan)
    ci = elcvx.interval(scan)
    return {**since(start), "passes": "1 read", "read": read["wall"],
            "pairs": scan.compressed, "value": est.value, "low": ci.low, "high": ci.high}


class Counting:
    """An engine that counts its passes (``map_reduce`` calls, cheap sums included)."""

    def __init__(self, engine):
        self.engine, self.calls = engine, 0

    @property
    def n_chunks(self):
        return self.engine.n_chunks

    def map_reduce(self, fn, merge):
        self.calls += 1
        return self.engine.map_reduce(fn, merge)


def _timed_scan(scan_log, folder, n):
    """Open the scan, then the estimate and its 95% interval on it, each timed."""
    import elcvx

    start = clocks()
    scan = scan_log(folder, pmin=PMIN)
    opened = since(start)["wall"]
    scan.engine = counting = Counting(scan.engine)
    est = elcvx.estimate(scan)
    t_est = since(start)["wall"]
    ci = elcvx.interval(scan)
    return {**since(start), "opened": opened, "estimate": t_est - opened,
            "interval": since(start)["wall"] - t_est, "calls": counting.calls,
            "passes": f"{est.work[1] / n:.3g} / {ci.work[1] / n:.3g}",
            "value": est.value, "low": ci.low, "high": ci.high, "how": scan.notes[0]}


def part_stream(args):
    from elcvx.io import scan_log

    return _timed_scan(functools.partial(scan_log, cache=args.cache[0]), args.folder, args.rows)


def _worker_usage():
    return time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def part_dask(args):
    from distributed import Client, LocalCluster

    from elcvx.io import scan_log

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        scan_log = functools.partial(scan_log, engine="dask", client=client)
        before = client.run(_worker_usage)
        out = _timed_scan(scan_log, args.folder, args.rows)
        after = client.run(_worker_usage)
    worker_cpu = sum(after[k][0] - before[k][0] for k in after)
    return {**out, "cpu": out["cpu"] + worker_cpu,
            "worker_rss": max(rss for _, rss in after.values()) * 1024 / 1e6}


CHILD_PARTS = {"log1p": part_log1p, "compress": part_compress, "stream": part_stream,
               "dask": part_dask}


def child(args):
    import pandas  # noqa: F401  (imported before the clock starts: imports are not timed)
    import pyarrow.dataset  # noqa: F401

    import elcvx.io  # noqa: F401

    out = CHILD_PARTS[args.part](args)
    out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # KiB on Linux
    print(json.dumps(out))


def run_child(part, folder, n, *options):
    """Run ``part`` in a fresh process; its last line of output is its figures (JSON)."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--part", part,
                           "--rows", str(n), "--folder", str(folder), *options],
                          check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- the parent: data, parts, table ---------------------------------------------------------

def ensure_log(data, kind, n, files):
    folder = log_folder(data, kind, n)
    if log_ready(folder, kind, n, files):
        print(f"{kind} log: {folder} (reused)", flush=True)
        return folder
    t0 = time.perf_counter()
    subprocess.run([sys.executable, os.path.abspath(__file__), "--rows", str(n), "--files",
                    str(files), "--write", kind, "--folder", str(folder)], check=True)
    mb = sum(p.stat().st_size for p in folder.glob("part-*.parquet")) / 2**20
    print(f"{kind} log: {folder}, {mb:.0f} MB written in {time.perf_counter() - t0:.1f} s",
          flush=True)
    return folder


def row_name(key):
    if key.startswith("stream-"):
        return f'`scan_log(cache="{key[7:]}")` + estimate + 95% interval'
    return {"log1p-continuous": "one streamed log1p pass, continuous log",
            "dask": '`scan_log(engine="dask")` + estimate + 95% interval, 2 workers',
            "log1p-discrete": "one streamed log1p pass, discrete log",
            "compress": "`scan_log` (compressed) + estimate + 95% interval, discrete log"}[key]


def table(results, n):
    lines = ["| part | rows | wall s | CPU s | passes | peak RSS MB | ratio to the log1p pass: wall "
             "(CPU) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for key, r in results.items():
        name = row_name(key)
        if "missing" in r:
            lines.append(f"| {name} | {size(n)} | not yet available | | | | |")
            continue
        base = results["log1p-discrete" if key.endswith("discrete") or key == "compress"
                       else "log1p-continuous"]
        rss = f"{r['rss']:.0f}" + (f" (workers ≤ {r['worker_rss']:.0f})" if "worker_rss" in r
                                   else "")
        lines.append(f"| {name} | {size(n)} | {r['wall']:.3g} | {r['cpu']:.3g} | {r['passes']} | "
                     f"{rss} | {r['wall'] / base['wall']:.3g} ({r['cpu'] / base['cpu']:.3g}) |")
    return "\n".join(lines)


def notes(results):
    out = []
    for key in ("log1p-continuous", "log1p-discrete"):
        if key in results:
            by = ", ".join(f"{t:.3g} s at {int(c):,} rows"
                           for c, t in results[key]["by_chunk"].items())
            out.append(f"The log1p pass on the {key[6:]} log, by chunk size: {by}.")
    for key, r in results.items():
        label = {"compress": "`scan_log` (compressed)", "dask": "Dask"}.get(
            key, f'`cache="{key[7:]}"`')
        if "calls" in r:
            out.append(f"{label}: {r['how']}; opening {r['opened']:.3g} s, estimate "
                       f"{r['estimate']:.3g} s, interval {r['interval']:.3g} s; "
                       f"{r['calls']} passes over the chunks in all (cheap sums included).")
        if "value" in r:
            out.append(f"{label}: estimate {r['value']:.6f}, 95% interval "
                       f"[{r['low']:.6f}, {r['high']:.6f}]"
                       + (f"; {r['pairs']} distinct (w, r) pairs, read in {r['read']:.3g} s"
                          if "pairs" in r else "") + ".")
        if r.get("rss", 0) > RSS_LIMIT_MB and key != "compress":
            out.append(f"{label}: peak RSS {r['rss']:.0f} MB, over the {RSS_LIMIT_MB} MB limit.")
    return out


def default_data_dir() -> str:
    """Where the logs are written by default: a cache folder of the user's (about 1 GB, reused by
    the next run), never a fixed absolute path that another machine may not have or let us write."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "elcvx", "scale-data")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000, help="N (default 1e8)")
    parser.add_argument("--data", default=default_data_dir(),
                        help="the folder of the generated logs, kept for the next run (default "
                        "$XDG_CACHE_HOME/elcvx/scale-data, i.e. ~/.cache/elcvx/scale-data)")
    parser.add_argument("--files", type=int, default=10, help="Parquet files per log (default 10)")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=PARTS,
                        help="parts to run (default all; 'write' only writes the logs)")
    parser.add_argument("--cache", nargs="+", choices=("auto", "memory", "disk", "none"),
                        default=["auto"], help="the stream part's caches, one run each "
                        "(default auto: memory up to 1 GiB, else a spill file)")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table into docs/performance.md and README.md")
    parser.add_argument("--note", help="a few words on the machine, written after the date")
    parser.add_argument("--part", choices=CHILD_PARTS, help=argparse.SUPPRESS)   # a child's job
    parser.add_argument("--write", choices=SEEDS, help=argparse.SUPPRESS)        # a child's job
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.part:
        return child(args)
    if args.write:
        return write(Path(args.folder), args.write, args.rows, args.files)

    n, only = args.rows, set(args.only)
    results = {}
    if only & {"write", "stream", "dask"}:
        continuous = ensure_log(args.data, "continuous", n, args.files)
    if only & {"write", "compress"}:
        discrete = ensure_log(args.data, "discrete", n, args.files)
    if only & {"stream", "dask"}:
        results["log1p-continuous"] = run_child("log1p", continuous, n)
        if "stream" in only:
            for cache in args.cache:
                results[f"stream-{cache}"] = run_child("stream", continuous, n, "--cache", cache)
        if "dask" in only:
            results["dask"] = run_child("dask", continuous, n)
    if "compress" in only:
        results["log1p-discrete"] = run_child("log1p", discrete, n)
        results["compress"] = run_child("compress", discrete, n)
    if not results:
        return
    body = table(results, n) + "\n\n" + "\n".join(f"* {line}" for line in notes(results))
    print(f"\n{body}\n", flush=True)
    if args.write_docs:
        stamp = time.strftime("%Y-%m-%d")
        note = f" ({args.note})" if args.note else ""
        for page in PAGES:
            write_between_markers(page, "bench_scale.py",
                                  f"{body}\n\nRun of {stamp}{note}. {machine()}")


if __name__ == "__main__":
    main()
