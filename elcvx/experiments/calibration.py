r"""The calibration study: does the EL interval hold 95% at every N, under each calibration?

On the paper's synthetic environment (:mod:`elcvx.experiments.synthetic`) the chi-square
interval covers about 94.5% at N = 10^5 and 5·10^5, and the F(1, N-1) quantile equals the
chi-square one there. This study reruns the *same draws* as the synthetic study (the stream
``SeedSequence(seed, spawn_key=(N, i))`` of replicate ``i``; its chi-square and F columns
reproduce the synthetic study's) and, on each sample,

* the EL intervals under ``calibration="chi2"``, ``"f"`` and ``"bootstrap"`` (the bootstrap's
  random stream continues the replicate's, after the sample is drawn, so every number is a
  function of the seed);
* for the diagnosis, the likelihood-ratio statistic at the true value ``V`` (the interval
  misses ``V`` exactly when it exceeds the threshold) and two counts: ``K``, the examples at
  the largest weight (``w = 1000``), and ``S``, those of them with reward 1.

The number of draws may differ between sizes (``replicates_at``): the bootstrap costs tens of
milliseconds of CPU per draw, so a run at every size with 10,000 draws would take hours; the tables
state the draws of every row.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from ..calibration import bootstrap as _bootstrap
from ..evaluation import evaluate_all
from ..errors import InvalidInputError
from . import synthetic
from ._running import Progress, RunCost, format_seconds, machine_description, md_table, run_tasks, write_csv

METHODS = {"el-chi2": "EL (chi2)", "el-f": "EL (F)", "el-bootstrap": "EL (bootstrap)"}
#: Groups of draws by what the sample shows at the largest weight.
GROUPS = ("K=0", "S=0<K", "0<S<K", "S=K>0")
_M = tuple(METHODS)


def evaluate(sample, truth: float, rng, *, confidence_level: float = 0.95,
             resamples: int = _bootstrap.DEFAULT_RESAMPLES):
    """The three EL intervals on one sample, the statistic at ``truth``, and ``K``, ``S``.

    Returns ``(lows, highs, bootstrap_quantile, statistic, K, S)``.
    """
    ev = evaluate_all(sample, (), _M, confidence_level=confidence_level, resamples=resamples,
                      random_state=rng)
    res = [ev.results[m] for m in _M]
    compact = sample.compress()
    stat, _ = _bootstrap.batch_statistics(compact.w, compact.u, compact.c[None, :], compact.wmin,
                                          compact.wmax, float(compact.to_unit(truth)))
    top = compact.w == compact.w.max()
    k = float(compact.c[top].sum()) if compact.w.max() == sample.wmax else 0.0
    s = float(compact.c[top & (compact.u == 1.0)].sum()) if k else 0.0
    return (np.array([r.low for r in res]), np.array([r.high for r in res]), res[2].quantile,
            float(stat[0]), k, s)


def _run_chunk(task):
    seed, n, start, stop, level, resamples = task
    cpu0 = time.process_time()
    out = np.empty((stop - start, 2 * len(_M) + 5))
    for j, i in enumerate(range(start, stop)):
        rng = synthetic.replicate_rng(seed, n, i)
        env = synthetic.draw_environment(rng)
        sample = env.sample(n, rng)
        lows, highs, q, stat, k, s = evaluate(sample, env.value, rng, confidence_level=level,
                                              resamples=resamples)
        out[j] = np.concatenate([[env.value], lows, highs, [q, stat, k, s]])
    return n, start, out, time.process_time() - cpu0


@dataclass(eq=False)
class CalibrationStudy(RunCost):
    """Every draw of :func:`run_study`: ``rows[n]`` has columns ``V``, the lows and highs of
    :data:`METHODS`, the bootstrap threshold, the statistic at ``V``, ``K`` and ``S``."""

    sizes: tuple
    replicates: dict
    seed: int
    confidence_level: float
    resamples: int
    rows: dict

    def _cols(self, n):
        a = self.rows[n]
        m = len(_M)
        return a[:, 0], a[:, 1:1 + m], a[:, 1 + m:1 + 2 * m], a[:, 1 + 2 * m], a[:, 2 + 2 * m], \
            a[:, 3 + 2 * m], a[:, 4 + 2 * m]

    def coverage_table(self) -> list:
        """Rows ``{n, method, draws, coverage, coverage_se, mean_width, width_p05, width_p95,
        width_vs_chi2, raised}`` (``raised``: the share of draws whose threshold exceeds chi2's)."""
        rows = []
        chi2 = stats.chi2.ppf(self.confidence_level, 1)
        for n in self.sizes:
            v, lo, hi, q, *_ = self._cols(n)
            cov = ((lo <= v[:, None]) & (v[:, None] <= hi)).mean(axis=0)
            width = hi - lo
            r = v.size
            for j, name in enumerate(_M):
                p05, p95 = np.percentile(width[:, j], [5, 95])
                raised = float(np.mean(q > chi2)) if name == "el-bootstrap" else math.nan
                rows.append({"n": n, "method": name, "draws": r, "coverage": float(cov[j]),
                             "coverage_se": math.sqrt(cov[j] * (1 - cov[j]) / r),
                             "mean_width": float(width[:, j].mean()), "width_p05": float(p05),
                             "width_p95": float(p95),
                             "width_vs_chi2": float(width[:, j].mean() / width[:, 0].mean()),
                             "raised": raised})
        return rows

    def diagnosis_table(self) -> list:
        """Rows ``{n, group, draws, share, miss, miss_high, miss_low, mean_statistic}`` for the
        chi-square interval: ``miss_high``: the interval lies below ``V``."""
        rows = []
        q = stats.chi2.ppf(self.confidence_level, 1)
        for n in self.sizes:
            v, lo, hi, _, stat, k, s = self._cols(n)
            groups = {"K=0": k == 0, "S=0<K": (k > 0) & (s == 0), "0<S<K": (s > 0) & (s < k),
                      "S=K>0": (k > 0) & (s == k), "all": np.ones(v.size, dtype=bool)}
            for g, sel in groups.items():
                if not sel.any():
                    continue
                rows.append({"n": n, "group": g, "draws": int(sel.sum()), "share": float(sel.mean()),
                             "miss": float(np.mean(stat[sel] > q)),
                             "miss_high": float(np.mean(hi[sel, 0] < v[sel])),
                             "miss_low": float(np.mean(lo[sel, 0] > v[sel])),
                             "mean_statistic": float(stat[sel].mean()),
                             "q95_statistic": float(np.quantile(stat[sel], self.confidence_level))})
        return rows

    def write(self, out, *, command: str | None = None) -> list:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        cov, diag = self.coverage_table(), self.diagnosis_table()
        paths = [write_csv(out / "calibration.csv", list(cov[0]), cov),
                 write_csv(out / "calibration_diagnosis.csv", list(diag[0]), diag)]
        md = out / "calibration.md"
        md.write_text(_markdown(self, cov, diag, command), encoding="utf-8")
        return paths + [md]


def run_study(sizes=synthetic.DEFAULT_SIZES, replicates: int = synthetic.DEFAULT_REPLICATES,
              seed: int = synthetic.DEFAULT_SEED, *, replicates_at=None, jobs: int = 2,
              chunk_size: int = 100, confidence_level: float = 0.95,
              resamples: int = _bootstrap.DEFAULT_RESAMPLES, progress: bool = True,
              stream=None) -> CalibrationStudy:
    """Run the study; ``replicates_at``: ``{n: draws}`` overriding ``replicates`` at some sizes."""
    sizes = tuple(int(n) for n in sizes)
    per = {n: int(replicates) for n in sizes}
    for n, r in dict(replicates_at or {}).items():
        if int(n) not in per:
            raise InvalidInputError(f"replicates_at: N={n} is not among sizes={sizes}")
        per[int(n)] = int(r)
    if min(per.values()) < 2:
        raise InvalidInputError(f"replicates={per} must be >= 2 at every size")
    resamples = _bootstrap.resamples(resamples)
    tasks = [(int(seed), n, a, min(a + chunk_size, per[n]), float(confidence_level), resamples)
             for n in sizes for a in range(0, per[n], chunk_size)]
    rows = {n: np.empty((per[n], 2 * len(_M) + 5)) for n in sizes}
    done = dict.fromkeys(sizes, 0)
    bar = Progress("calibration", sum(per.values()), enabled=progress, stream=stream or sys.stderr)
    cpu = [0.0]
    t0 = time.perf_counter()

    def collect(result):
        n, start, block, seconds = result
        rows[n][start:start + block.shape[0]] = block
        cpu[0] += seconds
        done[n] += block.shape[0]
        bar.update(block.shape[0], f"N={n:<8d} {done[n]:>6d}/{per[n]} replicates",
                   final=done[n] == per[n])

    run_tasks(_run_chunk, tasks, jobs, collect)
    return CalibrationStudy(sizes, per, int(seed), float(confidence_level), resamples, rows,
                            wall_time=time.perf_counter() - t0, cpu_time=cpu[0], jobs=jobs)


def _markdown(study: CalibrationStudy, cov, diag, command) -> str:
    from .. import __version__

    total = sum(study.replicates.values())
    lines = [
        "# Calibrating the EL interval on the synthetic environment",
        "",
        "Written by `elcvx reproduce calibration` (`elcvx/experiments/calibration.py`); the same "
        "environment draws as the synthetic study (same seed: its EL chi2 and F columns reproduce "
        "`summary.md`'s at the sizes run with all its draws).",
        "",
        f"* Command: `{command or 'elcvx reproduce calibration'}`",
        f"* elcvx {__version__}; seed {study.seed}; confidence level {study.confidence_level:g}; "
        f"bootstrap resamples B = {study.resamples}.",
        "* Draws per N: " + ", ".join(f"{n}: {study.replicates[n]}" for n in study.sizes) + ".",
        f"* Wall time {format_seconds(study.wall_time)} with {study.jobs} worker process(es) on "
        f"{machine_description()}; CPU time {format_seconds(study.cpu_time)} "
        f"({1e3 * study.cpu_time / total:.1f} ms per draw, all three intervals and the diagnosis).",
        "",
        "## Coverage (binomial SE) and mean width; bold: below the level by more than 2 SE",
        "",
        "`raised`: share of draws whose bootstrap threshold exceeds the chi-square quantile (elsewhere "
        "the bootstrap interval is the chi-square one). Width ratio: mean width / EL (chi2) mean width.",
        "",
    ]
    by = {(r["n"], r["method"]): r for r in cov}
    level = study.confidence_level
    table = []
    for n in study.sizes:
        cells = [str(n), str(by[(n, "el-chi2")]["draws"])]
        for m in _M:
            r = by[(n, m)]
            c = f"{r['coverage']:.4f} ({r['coverage_se']:.4f})"
            cells.append(f"**{c}**" if r["coverage"] + 2 * r["coverage_se"] < level else c)
        for m in _M:
            cells.append(f"{by[(n, m)]['mean_width']:.4f}")
        cells += [f"{by[(n, m)]['width_vs_chi2']:.3f}" for m in _M[1:]]
        cells.append(f"{by[(n, 'el-bootstrap')]['raised']:.3f}")
        table.append(cells)
    header = (["N", "draws"] + [f"coverage {METHODS[m]}" for m in _M] + [f"width {METHODS[m]}" for m in _M]
              + [f"ratio {METHODS[m]}" for m in _M[1:]] + ["raised"])
    lines += md_table(header, table)
    lines += ["", "## Diagnosis: the chi-square interval's misses by what the sample shows at w = wmax",
              "", "K: examples at the largest weight (w = 1000); S: those of them with reward 1. "
              "miss: the statistic at the true value exceeds the chi-square quantile; high: the "
              "interval lies below V; low: above it. Statistic: mean and 95% quantile "
              f"(chi-square(1): 1 and {stats.chi2.ppf(level, 1):.3f}).", ""]
    lines += md_table(["N", "group", "draws", "share", "miss", "high", "low", "mean statistic",
                        "95% quantile"],
                       [[r["n"], r["group"], r["draws"], f"{r['share']:.3f}", f"{r['miss']:.4f}",
                         f"{r['miss_high']:.4f}", f"{r['miss_low']:.4f}", f"{r['mean_statistic']:.3f}",
                         f"{r['q95_statistic']:.3f}"] for r in diag])
    return "\n".join(lines) + "\n"
