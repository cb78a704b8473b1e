"""Time a one-sided EL bound under :func:`elcvx.interval`'s default calibration (``None``:
``"signed-bootstrap"`` for a one-sided bound on rows in memory) against ``calibration="chi2"``.

Logs of ``N`` rows, rewards Bernoulli(1/2): *continuous* weights (exponential with mean 1,
capped at ``wmax = 20``: every row distinct) and *few distinct* weights (0.5, 1, 2 and 8 with
probabilities 0.4, 0.35, 0.2 and 0.05: eight distinct ``(w, r)`` rows, which both calibrations
compress). A fresh ``Sample`` for every call (the MLE is cached per sample); the median seconds
of ``--repeats`` calls of ``alternative="greater"`` at 95%, the two calibrations alternating.

    python benchmarks/bench_onesided.py               # N = 1e3, 1e4, 1e5
    python benchmarks/bench_onesided.py --write-docs  # and into docs/intervals.md

``--radius DATA_DIR`` measures what the resamples buy instead: on the 2,250 logs of the LS paper's
tightness protocol (``elcvx reproduce pessimism``'s, DATA_DIR its datasets, e.g.
``../shared/data/pessimism``), the mean radius ``(V - LB) / V`` and the violation rate of the
95% lower bound with ``calibration="signed-bootstrap"`` at 199, 499 and 999 resamples, against
``calibration="chi2"`` on the same logs, and the seconds each took.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import elcvx
from elcvx.calibration.bootstrap import SIGNED_RESAMPLES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import ROOT, machine, size, write_between_markers  # noqa: E402

DOCS = ROOT / "docs" / "intervals.md"
WMAX = 20.0


def make_log(n, kind, seed):
    """``(w, r)`` of ``n`` rows; ``kind`` is ``"continuous"`` or ``"few"`` (see the module)."""
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        w = np.minimum(rng.exponential(1.0, n), WMAX)
    else:
        w = rng.choice([0.5, 1.0, 2.0, 8.0], size=n, p=[0.4, 0.35, 0.2, 0.05])
    return w, (rng.random(n) < 0.5).astype(float)


def timed(w, r, calibration):
    s = elcvx.Sample(w, r, wmax=WMAX)
    start = time.perf_counter()
    res = elcvx.interval(s, alternative="greater", calibration=calibration)
    return time.perf_counter() - start, res.calibration


def measure(n, kind, repeats):
    """``{calibration name: median seconds}`` over ``repeats`` logs, the default's resolved name
    as its key (it must be ``"signed-bootstrap"`` here)."""
    out: dict = {}
    for rep in range(repeats):
        w, r = make_log(n, kind, 1000 * rep + n)
        order = (None, "chi2") if rep % 2 == 0 else ("chi2", None)
        for calibration in order:
            secs, name = timed(w, r, calibration)
            out.setdefault("default" if calibration is None else name, []).append(secs)
            if calibration is None:
                assert name == "signed-bootstrap", name
    return {k: statistics.median(v) for k, v in out.items()}


def table(rows):
    lines = ["| N | weights | default (signed-bootstrap): ms | chi2: ms | ratio |",
             "|---|---|---|---|---|"]
    for n, kind, cells in rows:
        d, c = cells["default"], cells["chi2"]
        lines.append(f"| {size(n)} | {kind} | {d * 1e3:.1f} | {c * 1e3:.1f} | {d / c:.0f}x |")
    return "\n".join(lines)


#: The resamples ``--radius`` compares (the default's first).
RADIUS_RESAMPLES = (SIGNED_RESAMPLES, 499, 999)


def radius_table(data_dir):
    """The ``--radius`` table (the module's docstring), as markdown."""
    from elcvx.experiments.pessimism.protocol import DATASETS, configs, draw_log
    from elcvx.experiments.pessimism.study import DEFAULT_SEED, DEFAULT_SEEDS, radius
    from elcvx.experiments.realistic.data import dataset_rng, load_folder

    data = load_folder(data_dir, datasets=list(DATASETS), max_rows=sys.maxsize, set_name="pessimism")
    logs = [draw_log(d.y, d.n_classes, c, dataset_rng(DEFAULT_SEED, d.id, i, rep))
            for d in data for i, c in enumerate(configs()) for rep in range(DEFAULT_SEEDS)]
    runs = [("chi2", dict(calibration="chi2"))] + [
        (f"signed-bootstrap, {b}" + (" (default)" if b == SIGNED_RESAMPLES else ""),
         dict(calibration="signed-bootstrap", resamples=b)) for b in RADIUS_RESAMPLES]
    lines = ["| calibration, resamples | mean radius | vs chi2 | exceeded the value | seconds |",
             "|---|---|---|---|---|"]
    base = None
    for name, kw in runs:
        start = time.perf_counter()
        lows = [elcvx.interval(elcvx.Sample(g.w, g.r, wmin=g.wmin, wmax=g.wmax),
                               alternative="greater", **kw).low for g in logs]
        secs = time.perf_counter() - start
        mean = statistics.fmean(radius(g.value, low) for g, low in zip(logs, lows))
        base = mean if base is None else base
        rate = statistics.fmean(low > g.value for g, low in zip(logs, lows))
        lines.append(f"| {name} | {mean:.4f} | {mean / base - 1:+.1%} | {rate:.1%} | {secs:.0f} |")
        print(lines[-1], flush=True)
    return (f"On the {len(logs):,} logs of the tightness protocol, 95% lower bounds:\n\n"
            + "\n".join(lines) + f"\n\n{machine()}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", type=float, default=[1e3, 1e4, 1e5])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--radius", metavar="DATA_DIR", default=None,
                        help="measure the radius by resamples on the tightness protocol instead")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.radius is not None:
        text = radius_table(args.radius)
        print(text)
        if args.write_docs:
            write_between_markers(DOCS, "bench_onesided.py#radius", text)
        return
    timed(*make_log(500, "continuous", 0), None)  # imports, numba's cache
    rows = []
    for n in (int(s) for s in args.sizes):
        for kind in ("continuous", "few"):
            rows.append((n, kind, measure(n, kind, args.repeats)))
            print(table(rows[-1:]).split("\n", 2)[-1], flush=True)
    text = (f"{table(rows)}\n\nMedians of {args.repeats} fresh logs, one-sided 95% lower bound, "
            f"the default's {SIGNED_RESAMPLES} resamples. {machine()}")
    print(text)
    if args.write_docs:
        write_between_markers(DOCS, "bench_onesided.py", text)


if __name__ == "__main__":
    main()
