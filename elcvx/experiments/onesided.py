"""The one-sided study: does EL's one-sided 95% lower bound hold at moderate N, per calibration?

Logs whose value is exact, drawn afresh for each replicate:

* ``softmax-k10``: a 10-action log of the tightness protocol's kind
  (:mod:`elcvx.experiments.pessimism.protocol`): K = 10, target and logging softmaxes at
  temperature 0.3 on the label, the logging peak moved to another action on half of the contexts,
  rewards flipped with probability 0.2 (weights 1, about 28 and about 0.036);
* ``softmax-k4``: K = 4, target at temperature 0.1, logging at 0.3, the peak moved on half of the
  contexts, rewards flipped with probability 0.1 (weights up to about 31);
* ``two-point-10``, ``two-point-100``: ``w = wmax`` with probability ``1 / wmax``, else 0; rewards
  Bernoulli(1/2) (value 1/2).

On each log: the lower bound of ``elcvx.interval(..., alternative="greater")`` under each
calibration of :data:`CALIBRATIONS` (weights in the known range), and the diagnostic
:func:`elcvx.thin.carrying_rows`. A cell's violation rate is the share of logs whose bound
exceeds the value, with its binomial standard error; its radius is ``(V - LB) / V``, 0 when
``LB >= V`` (the pessimism study's).

Run: ``python -m elcvx.experiments.onesided --logs 1000 --jobs 2 --out docs/onesided``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..interval import interval
from ..sample import Sample
from ..thin import carrying_rows
from ._running import format_seconds, machine_description, md_table, run_tasks, write_csv
from .pessimism import protocol

DELTA = 0.05
CALIBRATIONS = ("chi2", "signed-bootstrap")
SIZES = (300, 1000, 3000)
#: name -> (K, target temperature, logging temperature, reward noise), the peak moved on half
#: of the contexts; or ("two-point", wmax).
DISTRIBUTIONS: dict[str, tuple[Any, ...]] = {
    "softmax-k10": (10, 0.3, 0.3, 0.2),
    "softmax-k4": (4, 0.1, 0.3, 0.1),
    "two-point-10": ("two-point", 10.0),
    "two-point-100": ("two-point", 100.0),
}


def draw(name: str, n: int, rng: np.random.Generator):
    """``(w, r, value, wmin, wmax)``: one log of ``n`` rows of the distribution ``name``."""
    spec = DISTRIBUTIONS[name]
    if spec[0] == "two-point":
        wmax = spec[1]
        w = np.where(rng.random(n) < 1.0 / wmax, wmax, 0.0)
        return w, (rng.random(n) < 0.5).astype(float), 0.5, 0.0, wmax
    k, tau, tau0, eta = spec
    cfg = protocol.Config(eta, tau, tau0)
    t_peak, t_rest = protocol.softmax_probabilities(tau, k)
    h_peak, h_rest = protocol.softmax_probabilities(tau0, k)
    # The label is action 0; the logging peak is action 1 on a faulty context (half of them).
    peak = (rng.random(n) < 0.5).astype(int)
    other = rng.integers(0, k - 1, n)
    a = np.where(rng.random(n) < h_peak, peak, other + (other >= peak))
    w = np.where(a == 0, t_peak, t_rest) / np.where(a == peak, h_peak, h_rest)
    r = ((a == 0) ^ (rng.random(n) < eta)).astype(float)
    wmin, wmax = protocol.weight_range(cfg, k)
    return w, r, protocol.true_value(cfg, k), wmin, wmax


def one_cell(task):
    """``(name, n, rows)``: for each of ``logs`` logs, the value, the bound per calibration and
    the carrying rows. The stream of log ``i`` is ``SeedSequence(seed, spawn_key=(d, n, i))``."""
    name, n, logs, seed = task
    d = list(DISTRIBUTIONS).index(name)
    rows = []
    for i in range(logs):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(d, n, i)))
        w, r, value, wmin, wmax = draw(name, n, rng)
        sample = Sample(w, r, wmin=wmin, wmax=wmax)
        lows = [interval(sample, confidence_level=1.0 - DELTA, alternative="greater",
                         calibration=c, resamples=999, random_state=rng).low
                for c in CALIBRATIONS]
        rows.append([value, *lows, carrying_rows(sample)])
    return name, n, rows


def summarise(results: dict) -> list:
    """One row per cell: name, N, logs, then per calibration the violation rate, its SE and the
    mean radius, then the median carrying rows."""
    out = []
    for (name, n), rows in sorted(results.items(), key=lambda kv: (list(DISTRIBUTIONS).index(
            kv[0][0]), kv[0][1])):
        a = np.array(rows)
        value, lows, carrying = a[:, 0], a[:, 1:1 + len(CALIBRATIONS)], a[:, -1]
        row = [name, n, a.shape[0]]
        for j in range(len(CALIBRATIONS)):
            rate = float(np.mean(lows[:, j] > value))
            radius = float(np.mean(np.maximum(value - lows[:, j], 0.0) / value))
            row += [rate, math.sqrt(DELTA * (1 - DELTA) / a.shape[0]), radius]
        out.append(row + [float(np.median(carrying))])
    return out


def signed_roots(name: str, n: int, logs: int, seed: int) -> np.ndarray:
    """The signed root ``sign(v_hat - V) sqrt(2 (L_mle - L(V)))`` at the true value ``V`` on
    ``logs`` logs (the stream of log ``i`` is ``SeedSequence(seed, spawn_key=(n, i))``): what a
    one-sided bound at level ``1 - alpha`` needs above the normal quantile in only ``alpha`` of
    them."""
    from ..estimate import estimate
    from ..interval import profile

    out = np.empty(logs)
    for i in range(logs):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(n, i)))
        w, r, value, wmin, wmax = draw(name, n, rng)
        sample = Sample(w, r, wmin=wmin, wmax=wmax)
        statistic = float(profile(sample, [value]).statistic[0])
        out[i] = math.copysign(math.sqrt(statistic), estimate(sample).value - value)
    return out


#: The bins of :func:`thin_table`: rows carrying the large weights.
BINS = (0.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0, math.inf)


def thin_table(results: dict) -> list:
    """Per bin of :data:`BINS` of the logs' carrying rows, pooled over the cells: ``[bin,
    logs, violation rate per calibration]`` (where the diagnostic's threshold comes from)."""
    a = np.array([r for rows in results.values() for r in rows])
    value, lows, carrying = a[:, 0], a[:, 1:1 + len(CALIBRATIONS)], a[:, -1]
    out = []
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        inside = (carrying >= lo) & (carrying < hi)
        if inside.any():
            out.append([f"[{lo:g}, {hi:g})", int(inside.sum())]
                       + [float(np.mean(lows[inside, j] > value[inside]))
                          for j in range(len(CALIBRATIONS))])
    return out


def read_logs(path) -> dict:
    """``(name, n) -> rows`` from a run's ``logs.csv.gz``."""
    import csv
    import gzip

    results: dict = {}
    with gzip.open(path, "rt") as fh:
        for row in csv.DictReader(fh):
            key = (row["distribution"], int(row["n"]))
            results.setdefault(key, []).append(
                [float(row["value"])] + [float(row[c]) for c in CALIBRATIONS]
                + [float(row["carrying_rows"])])
    return results


def main(argv=None) -> int:
    """Run the study and write ``onesided.csv`` (per cell), ``logs.csv.gz`` (per log) and
    ``summary.md`` into ``--out``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--logs", type=int, default=1000)
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p.add_argument("--distributions", nargs="+", default=list(DISTRIBUTIONS),
                   choices=list(DISTRIBUTIONS))
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("onesided-out"))
    p.add_argument("--summarise", action="store_true",
                   help="no run: summarise the logs.csv.gz already in --out")
    p.add_argument("--roots", action="store_true",
                   help="no run: the signed root's law at the true value on each distribution "
                        "and size (--logs logs each), printed")
    args = p.parse_args(argv)
    if args.roots:
        z = 1.6448536269514722  # the normal quantile at 0.95
        for name in args.distributions:
            for n in args.sizes:
                r = signed_roots(name, n, args.logs, args.seed)
                print(f"{name} N={n} logs={args.logs}: mean {r.mean():.3f}, sd {r.std():.3f}, "
                      f"P(r > {z:.3f}) = {np.mean(r > z):.4f}, P(r < -{z:.3f}) = "
                      f"{np.mean(r < -z):.4f}")
        return 0
    tasks = [(d, n, args.logs, args.seed) for d in args.distributions for n in args.sizes]
    results = {}
    start = time.time()

    def collect(res):
        name, n, rows = res
        results[(name, n)] = rows
        print(f"{name} N={n}: done ({format_seconds(time.time() - start)})", file=sys.stderr)

    if args.summarise:
        results = read_logs(args.out / "logs.csv.gz")
    else:
        run_tasks(one_cell, tasks, args.jobs, collect)
    args.out.mkdir(parents=True, exist_ok=True)
    header = ["distribution", "n", "logs"]
    for c in CALIBRATIONS:
        header += [f"{c}_violation", f"{c}_se", f"{c}_radius"]
    header.append("carrying_rows_median")
    table = summarise(results)
    write_csv(args.out / "onesided.csv", header, [dict(zip(header, r)) for r in table])
    per_log = ["distribution", "n", "value", *CALIBRATIONS, "carrying_rows"]
    if not args.summarise:
        write_csv(args.out / "logs.csv.gz", per_log, [dict(zip(per_log, [name, n, *r]))
                                                      for (name, n), rows in results.items()
                                                      for r in rows])
    bins = thin_table(results)
    write_csv(args.out / "thin.csv", ["carrying_rows", "logs", *CALIBRATIONS],
              [dict(zip(["carrying_rows", "logs", *CALIBRATIONS], r)) for r in bins])
    stamp = args.out / "run.txt"  # the run's time and machine, kept for --summarise
    if not args.summarise:
        stamp.write_text(f"{format_seconds(time.time() - start)} on {machine_description()}\n")
    took = stamp.read_text().strip() if stamp.exists() else "time not recorded"
    md = ["# One-sided EL bounds: the study", "",
          "What it measures and why: docs/intervals.md, \"One-sided bounds\".", "",
          f"Written by `python -m elcvx.experiments.onesided --logs {args.logs} --seed {args.seed} "
          f"--jobs {args.jobs} --out {args.out}`; {took}.",
          "", f"Violation rate of the one-sided {1 - DELTA:.0%} lower bound (LB > V; SE "
          f"{math.sqrt(DELTA * (1 - DELTA) / args.logs):.4f} at {args.logs} logs), mean radius "
          "(V - LB)/V, median rows carrying the large weights:", ""]
    md += md_table(["distribution", "N"] + [f"{c} viol." for c in CALIBRATIONS]
                   + [f"{c} radius" for c in CALIBRATIONS] + ["carrying rows"],
                   [[r[0], f"{r[1]:,}"] + [f"{r[3 + 3 * j]:.1%}" for j in range(len(CALIBRATIONS))]
                    + [f"{r[5 + 3 * j]:.3f}" for j in range(len(CALIBRATIONS))] + [f"{r[-1]:.0f}"]
                    for r in table])
    md += ["", "Violation rate by the log's rows carrying the large weights "
           "(`elcvx.thin.carrying_rows`), pooled over the cells:", ""]
    md += md_table(["carrying rows", "logs"] + [f"{c} viol." for c in CALIBRATIONS],
                   [[r[0], r[1]] + [f"{x:.1%}" for x in r[2:]] for r in bins])
    (args.out / "summary.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
