"""The realistic study: running the tasks, the raw rows of the three tables and the tables
themselves (paired wins, ties and losses; coverage and widths)."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

import numpy as np

from ...errors import InvalidInputError
from .._running import Progress, run_tasks, write_csv
from . import report
from .data import DEFAULT_SEED, MAX_ROWS, load_folder
from .methods import (CV_VERSUS, DEFAULT_REPLICATES, ESTIMATORS, INTERVAL_METHODS, LEVEL, OBJECTIVES,
                      PAPER_ESTIMATORS, RAW_TABLES, TABLES)
from .policies import STRATEGIES, strategy_args
from .tasks import _run_learning, _run_ope, run_task

__all__ = ["paired_outcome", "compare_estimates", "RealisticStudy", "run_study"]


# Two estimates closer than this (reward-range units, the accuracy EL's solvers certify) are the
# same number: their squared errors tie, whatever the sign of the difference's last digits.
SAME_ESTIMATE = 1e-6


def paired_outcome(a, b, *, higher_is_better: bool, level: float = LEVEL, same=None) -> str:
    """``"win"``, ``"tie"`` or ``"loss"`` of ``a`` against ``b``: paired t-test of ``a - b``
    (as ``ttest_rel``), where pairs flagged in ``same`` differ by 0 (two estimators that agree
    to their certified accuracy, such as EL and emp when EL's atom is empty: a 1e-12 difference
    is no outcome)."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)  # a failed fit (nan) drops its pair
    d = a[keep] - b[keep]
    if same is not None:
        d[np.asarray(same, dtype=bool)[keep]] = 0.0
    if d.size < 2 or np.all(d == d[0]):
        if d.size and d[0] != 0 and np.all(d == d[0]):  # constant non-zero difference: certain
            better = d[0] > 0 if higher_is_better else d[0] < 0
            return "win" if better else "loss"
        return "tie"
    import warnings

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nearly identical columns: p is nan or ~1
        res = stats.ttest_1samp(d, 0.0)
    if not np.isfinite(res.pvalue) or res.pvalue >= 1 - level:
        return "tie"
    better = d.mean() > 0 if higher_is_better else d.mean() < 0
    return "win" if better else "loss"


def compare_estimates(a, b, truth) -> str:
    """Table 1's outcome of estimator ``a`` against ``b`` on one dataset's evaluations: the
    paired t-test of their squared errors against ``truth`` (:func:`paired_outcome`), with
    estimates closer than :data:`SAME_ESTIMATE` the same number."""
    a, b, truth = (np.asarray(x, dtype=float) for x in (a, b, truth))
    return paired_outcome((a - truth) ** 2, (b - truth) ** 2, higher_is_better=False,
                          same=np.abs(a - b) <= SAME_ESTIMATE)


def _wtl(outcomes) -> tuple:
    return tuple(sum(o == k for o in outcomes) for k in ("win", "tie", "loss"))


@dataclass
class RealisticStudy:
    """Raw rows of the three tables plus the per-(dataset, strategy) policy facts."""

    datasets: list
    strategies: tuple
    tables: tuple
    replicates: int
    learning_replicates: int
    seed: int | None  # None: merged runs that did not record it
    ope: list = field(default_factory=list)
    intervals: list = field(default_factory=list)
    learning: list = field(default_factory=list)
    policies: list = field(default_factory=list)
    wall_time: float = 0.0
    cpu_time: float = 0.0
    fit_fallbacks: int = 0
    jobs: int = 1
    parts: list = field(default_factory=list)  # merged runs: (folder, command, set-up line)

    # Table 1
    def ope_table(self) -> list:
        """Paired wins/ties/losses (squared error, per dataset) of ``el`` against the paper's other
        estimators and of ``el-cv`` against :data:`CV_VERSUS`, per strategy.

        ``failed``: evaluations where either estimate is ``nan`` (an ``el-cv`` solve that failed
        both ways), left out of that comparison's test and MSEs and counted here.
        """
        import pandas as pd

        if not self.ope:
            return []
        df = pd.DataFrame(self.ope)
        df["se"] = (df["estimate"] - df["truth"]) ** 2
        have = set(df.estimator)
        pairs = [("el", o) for o in PAPER_ESTIMATORS[1:]] + [("el-cv", o) for o in CV_VERSUS]
        out = []
        for strategy in self.strategies:
            for est, other in pairs:
                if est not in have or other not in have:  # e.g. merged runs made before el-cv
                    continue
                sub = df[(df.strategy == strategy) & df.estimator.isin((est, other))]
                if sub.empty:
                    continue
                w = sub.pivot(index=["dataset", "replicate"], columns="estimator", values="se")
                v = sub.pivot(index=["dataset", "replicate"], columns="estimator", values="estimate")
                v["truth"] = sub.groupby(["dataset", "replicate"]).truth.first()
                ok = np.isfinite(w[est]) & np.isfinite(w[other])
                outs = [compare_estimates(g[est], g[other], g["truth"])
                        for _, g in v[ok].groupby(level="dataset")]
                wins, ties, losses = _wtl(outs)
                out.append(dict(estimator=est, versus=other, strategy=strategy, wins=wins, ties=ties,
                                losses=losses, datasets=len(outs),
                                mse_estimator=float(w.loc[ok, est].mean()),
                                mse_versus=float(w.loc[ok, other].mean()), failed=int((~ok).sum())))
        return out

    # Table 3
    def ci_table(self, by_strategy: bool = False) -> list:
        """Coverage and width of each interval method (per strategy with ``by_strategy``).

        Widths are compared with EL's (chi-square) on the same evaluation. ``failed``: intervals
        that are ``nan`` (an ``el-cv`` solve that failed both ways), left out of ``n``.
        """
        import pandas as pd

        if not self.intervals:
            return []
        df = pd.DataFrame(self.intervals)
        df["covered"] = (df["low"] <= df["truth"] + 1e-12) & (df["truth"] <= df["high"] + 1e-12)
        df["width"] = df["high"] - df["low"]
        ref = df[df.method == "el-chi2"].set_index(["dataset", "strategy", "replicate"])["width"]
        out = []
        groups = [(s, df[df.strategy == s]) for s in self.strategies] if by_strategy else [(None, df)]
        for strategy, part in groups:
            for m in INTERVAL_METHODS:
                sub = part[part.method == m].set_index(["dataset", "strategy", "replicate"])
                if sub.empty:
                    continue
                solved = np.isfinite(sub["low"].to_numpy()) & np.isfinite(sub["high"].to_numpy())
                sub = sub[solved]
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = (sub["width"] / ref.reindex(sub.index)).to_numpy()
                ratio = ratio[np.isfinite(ratio)]
                cov = sub["covered"].to_numpy()
                row = dict(method=m, coverage=float(cov.mean()) if cov.size else math.nan, n=int(cov.size),
                           coverage_se=float(np.sqrt(cov.mean() * (1 - cov.mean()) / cov.size)) if cov.size else math.nan,
                           median_width_ratio=float(np.median(ratio)) if ratio.size else math.nan,
                           mean_width=float(sub["width"].mean()) if cov.size else math.nan,
                           failed=int((~solved).sum()))
                out.append(row if strategy is None else dict(strategy=strategy, **row))
        return out

    # Table 2
    def learning_table(self) -> list:
        import pandas as pd

        if not self.learning:
            return []
        df = pd.DataFrame(self.learning)
        objs = [o for o in OBJECTIVES if o != "ips" and o in set(df.objective)]
        out = []
        for strategy in self.strategies:
            sub = df[df.strategy == strategy]
            if sub.empty:
                continue
            for obj in objs:
                outs = []
                for _, g in sub.groupby("dataset"):
                    w = g.pivot(index="replicate", columns="objective", values="true_value")
                    outs.append(paired_outcome(w[obj], w["ips"], higher_is_better=True))
                wins, ties, losses = _wtl(outs)
                mean = sub.groupby("objective")["true_value"].mean()
                out.append(dict(objective=obj, strategy=strategy, wins=wins, ties=ties, losses=losses,
                                datasets=len(outs), mean_value=float(mean[obj]),
                                mean_value_ips=float(mean["ips"])))
        return out

    def sort(self) -> None:
        """Order the rows by dataset, strategy, replicate, then estimator / method / objective."""
        order = {d: i for i, d in enumerate(self.datasets)}
        skey = {s: i for i, s in enumerate(self.strategies)}
        for attr, names, col in (("ope", ESTIMATORS, "estimator"), ("intervals", INTERVAL_METHODS, "method"),
                                 ("learning", OBJECTIVES, "objective")):
            getattr(self, attr).sort(key=lambda r: (order[r["dataset"]], skey[r["strategy"]], r["replicate"],
                                                    names.index(r[col])))
        self.policies.sort(key=lambda r: (r["table"], order[r["dataset"]], skey[r["strategy"]]))

    def write(self, out, *, command: str | None = None) -> list:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, (attr, cols) in RAW_TABLES.items():
            if getattr(self, attr):
                paths.append(write_csv(out / name, cols, getattr(self, attr)))
        if self.policies:
            cols = tuple(dict.fromkeys(k for row in self.policies for k in row))
            paths.append(write_csv(out / "policies.csv", cols, self.policies))
        for name, rows in (("table1_ope.csv", self.ope_table()), ("table3_intervals.csv", self.ci_table()),
                           ("table2_learning.csv", self.learning_table())):
            if rows:
                paths.append(write_csv(out / name, list(rows[0]), rows))
        p = out / "summary.md"
        p.write_text(self.summary_markdown(command=command), encoding="utf-8")
        paths.append(p)
        return paths

    def summary_markdown(self, *, command: str | None = None) -> str:
        return report.summary_markdown(self, command)



def run_study(data_dir, *, tables=TABLES, replicates: int = DEFAULT_REPLICATES,
              learning_replicates: int | None = None, strategies=STRATEGIES, datasets=None,
              seed: int = DEFAULT_SEED, jobs: int = 2, objectives=OBJECTIVES,
              max_rows: int = MAX_ROWS, progress: bool = True, stream=None) -> RealisticStudy:
    """Run the chosen tables on every dataset of ``data_dir`` under every strategy.

    ``replicates`` is the number of OPE evaluations per (dataset, strategy);
    ``learning_replicates`` (default: ``replicates``) the number of learning runs.
    """
    tables = tuple(tables)
    bad = [t for t in tables if t not in TABLES]
    if bad or not tables:
        raise InvalidInputError(f"tables={tables!r}: choose among {', '.join(TABLES)}")
    strategies = tuple(strategies)
    for s in strategies:
        strategy_args(s)
    for o in objectives:
        if o not in OBJECTIVES:
            raise InvalidInputError(f"objective {o!r}: choose among {', '.join(OBJECTIVES)}")
    if "learning" in tables and "ips" not in objectives:
        raise InvalidInputError("objectives must include 'ips', the learning table's baseline")
    if int(replicates) < 2:
        raise InvalidInputError(f"replicates={replicates!r} must be >= 2 (paired tests)")
    lreps = int(replicates if learning_replicates is None else learning_replicates)
    if lreps < 2:
        raise InvalidInputError(f"learning_replicates={learning_replicates!r} must be >= 2")
    data = load_folder(data_dir, datasets=datasets, seed=seed, max_rows=max_rows)
    st = RealisticStudy(datasets=[d.id for d in data], strategies=strategies, tables=tables,
                        replicates=int(replicates), learning_replicates=lreps, seed=int(seed), jobs=int(jobs))
    tasks: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
    sidx = {s: STRATEGIES.index(s) if s in STRATEGIES else 100 + i for i, s in enumerate(strategies)}
    if "ope" in tables or "ci" in tables:
        for d in data:
            for s in strategies:
                tasks.append((_run_ope, (d, sidx[s], s, seed, int(replicates), "ci" in tables)))
    if "learning" in tables:
        chunk = 5
        for d in data:
            for s in strategies:
                for a in range(0, lreps, chunk):
                    tasks.append((_run_learning, (d, sidx[s], s, seed, a, min(a + chunk, lreps), tuple(objectives))))
    bar = Progress("realistic", len(tasks), enabled=progress, stream=stream or sys.stderr)
    t0 = time.perf_counter()
    keep_ope = "ope" in tables
    # (dataset, strategy) -> refits over all its chunks
    learning_fallbacks: dict[tuple[int, str], int] = {}

    def collect(res):
        if res[0] == "ope":
            _, did, s, ope, ints, info, secs = res
            if keep_ope:
                st.ope.extend(ope)
            st.intervals.extend(ints)
            st.policies.append(info)
        else:
            _, did, s, rows, info, m, secs = res
            st.learning.extend(rows)
            if info.get("table") == "learning":
                st.policies.append(info)
            learning_fallbacks[did, s] = learning_fallbacks.get((did, s), 0) + info["fit_fallbacks"]
        st.cpu_time += secs
        bar.update(1, f"{res[0]:<8s} dataset {did:<5d} {s:<13s}", final=True)

    run_tasks(run_task, tasks, int(jobs), collect)
    for p in st.policies:
        if p["table"] == "learning":
            p["fit_fallbacks"] = learning_fallbacks[p["dataset"], p["strategy"]]
    st.fit_fallbacks = sum(learning_fallbacks.values())
    st.sort()
    st.wall_time = time.perf_counter() - t0
    return st
