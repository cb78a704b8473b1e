r"""Which reward ``rho`` to give EL's extra atom: the paper's two studies, rerun per rule.

EL's point estimate is ``V(rho) = base + wmass rho`` (docs/rho.md): where the maximum-likelihood
distribution leaves importance-weighted mass ``wmass`` on an unobserved weight, the estimate
depends on the reward ``rho`` given to it. This module measures the rules of
:func:`elcvx.estimate` (:data:`RULES`: ``"midpoint"``, the paper's text; ``"snips"``, the authors'
realistic-data code; ``"self-consistent"``, the fixed point ``V(rho) = rho``) on the samples of
the two studies that the paper's claims rest on, with the same random streams, so each rule is
compared with the other estimators on exactly the same samples:

* **synthetic** (:func:`synthetic_mse`): the samples of :mod:`elcvx.experiments.synthetic`
  (``replicate_rng(seed, N, i)``), the mean squared error of EL under each rule beside SNIPS and
  CR(-2) (``rho = 1/2``), and the paired difference of each rule against the midpoint;
* **realistic** (:func:`realistic_ope`): the evaluation logs of the realistic study's Table 1
  (:func:`elcvx.experiments.realistic.ope_setup`, the same seeds, hence the same logs as its
  ``ope.csv``), wins/ties/losses of EL under each rule against IPS, SNIPS and EMP by the Table's
  paired test, beside the paper's and the authors' code's counts.

Only point estimates are computed (no intervals, no reward predictor's control variate), so both
run in minutes. ``elcvx reproduce rho`` writes ``synthetic_mse.csv``, ``table1_rho.csv``,
``ope_rho.csv.gz`` and ``summary.md`` (:func:`write`).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..evaluation import evaluate_all
from . import realistic as R
from . import synthetic as S
from ._running import Progress, run_tasks
from .realistic.study import _wtl

__all__ = ["RULES", "EL_COLUMNS", "synthetic_mse", "realistic_ope", "realistic_table"]

#: The rules compared, and the estimator column each gives (``el`` is the midpoint, as in the
#: studies' own tables).
RULES = ("midpoint", "snips", "self-consistent")
EL_COLUMNS = {"midpoint": "el", "snips": "el-snips", "self-consistent": "el-self"}
#: Synthetic columns: EL per rule, then the references.
SYN_COLUMNS = tuple(EL_COLUMNS.values()) + ("snips", "cr-2")
#: Realistic columns: EL per rule, then the estimators Table 1 compares EL with.
OPE_COLUMNS = tuple(EL_COLUMNS.values()) + ("ips", "snips", "emp")
VERSUS = ("ips", "snips", "emp")


def _el_values(sample, counts):
    """EL's estimate under each rule (one MLE: it is cached on the sample) and its atom's mass."""
    out = {}
    for rule in RULES:
        ev = evaluate_all(sample, ("el",), (), rho=rule)
        counts["el_fallbacks"] += len(ev.fell_back)
        out[EL_COLUMNS[rule]] = ev.estimates["el"]
    return out, ev.results["el"].wmass_ex


# ------------------------------------------------------------------------------------------------
# The synthetic study
# ------------------------------------------------------------------------------------------------
def _synthetic_chunk(task):
    from elcvx import baselines, cressie_read

    seed, n, start, stop = task
    cpu = time.process_time()
    est = np.empty((stop - start, len(SYN_COLUMNS)))
    truth, wmass = np.empty(stop - start), np.empty(stop - start)
    counts = {"el_fallbacks": 0}
    for j, i in enumerate(range(start, stop)):
        rng = S.replicate_rng(seed, n, i)
        env = S.draw_environment(rng)
        sample = env.sample(n, rng)
        el, wmass[j] = _el_values(sample, counts)
        est[j] = [el[c] for c in EL_COLUMNS.values()] + [
            baselines.snips(sample).value, cressie_read.estimate(sample, rho=0.5).value]
        truth[j] = env.value
    return n, start, truth, est, wmass, counts["el_fallbacks"], time.process_time() - cpu


def synthetic_mse(sizes=S.DEFAULT_SIZES, replicates: int = S.DEFAULT_REPLICATES,
                  seed: int = S.DEFAULT_SEED, *, jobs: int = 2, chunk_size: int = 500,
                  progress: bool = True) -> dict:
    """Squared errors of :data:`SYN_COLUMNS` on the synthetic study's samples.

    Returns ``{"rows": [...], "paired": [...], "wall", "cpu", "fallbacks"}``: per ``N`` and
    column the MSE and its standard error, the share of draws whose atom carries weighted mass
    (``> 1e-9``), and per rule the paired mean of ``sq_err(rule) - sq_err(midpoint)`` with its
    standard error.
    """
    tasks = [(int(seed), int(n), a, min(a + chunk_size, replicates))
             for n in sizes for a in range(0, replicates, chunk_size)]
    t0 = time.perf_counter()
    results = _map(_synthetic_chunk, tasks, jobs, progress, "synthetic")
    wall = time.perf_counter() - t0
    rows, paired, fallbacks, cpu = [], [], 0, 0.0
    for n in sizes:
        parts = sorted((r for r in results if r[0] == n), key=lambda r: r[1])
        truth = np.concatenate([p[2] for p in parts])
        sq = (np.concatenate([p[3] for p in parts]) - truth[:, None]) ** 2
        atom = float(np.mean(np.concatenate([p[4] for p in parts]) > 1e-9))
        fallbacks += sum(p[5] for p in parts)
        cpu += sum(p[6] for p in parts)
        for j, col in enumerate(SYN_COLUMNS):
            rows.append(dict(n=n, estimator=col, mse=float(sq[:, j].mean()),
                             se=float(sq[:, j].std(ddof=1) / math.sqrt(sq.shape[0])), atom_share=atom))
        for rule in RULES[1:]:
            d = sq[:, SYN_COLUMNS.index(EL_COLUMNS[rule])] - sq[:, 0]
            paired.append(dict(n=n, estimator=EL_COLUMNS[rule], versus="el", mean=float(d.mean()),
                               se=float(d.std(ddof=1) / math.sqrt(d.size))))
    return dict(rows=rows, paired=paired, wall=wall, cpu=cpu, fallbacks=fallbacks,
                replicates=int(replicates), seed=int(seed), sizes=tuple(sizes), jobs=int(jobs))


# ------------------------------------------------------------------------------------------------
# The realistic study's Table 1
# ------------------------------------------------------------------------------------------------
def _realistic_pair(task):
    from elcvx import baselines

    ds, si, strategy, seed, replicates = task
    cpu = time.process_time()
    st = R.ope_setup(ds, si, strategy, seed)
    rows, counts, atoms = [], {"el_fallbacks": 0}, 0
    for rep in range(replicates):
        sample = st.evaluation(rep)[0]
        est, wmass = _el_values(sample, counts)
        atoms += wmass > 1e-9
        est.update(ips=baselines.ips(sample).value, snips=baselines.snips(sample).value,
                   emp=baselines.emp(sample).value)
        rows += [dict(dataset=ds.id, strategy=strategy, replicate=rep, estimator=k,
                      estimate=float(est[k]), truth=st.truth) for k in OPE_COLUMNS]
    return ds.id, strategy, rows, atoms, counts["el_fallbacks"], time.process_time() - cpu


def realistic_ope(data_dir, *, strategies=R.STRATEGIES, datasets=None, replicates=R.DEFAULT_REPLICATES,
                  seed=R.DEFAULT_SEED, jobs=2, progress=True) -> dict:
    """EL under each rule, IPS, SNIPS and EMP on Table 1's evaluation logs (one row per estimate)."""
    data = R.load_folder(data_dir, datasets=datasets, seed=seed)
    tasks = [(d, R.STRATEGIES.index(s), s, int(seed), int(replicates)) for d in data for s in strategies]
    t0 = time.perf_counter()
    results = _map(_realistic_pair, tasks, jobs, progress, "realistic")
    order = {(d.id, s): i for i, (d, _, s, _, _) in enumerate(tasks)}
    results.sort(key=lambda r: order[r[0], r[1]])
    return dict(rows=[row for r in results for row in r[2]],
                atoms={(r[0], r[1]): r[3] for r in results}, fallbacks=sum(r[4] for r in results),
                wall=time.perf_counter() - t0, cpu=sum(r[5] for r in results),
                datasets=[d.id for d in data], strategies=tuple(strategies), replicates=int(replicates),
                seed=int(seed), jobs=int(jobs))


def realistic_table(run: dict) -> list:
    """Wins/ties/losses over datasets of each EL rule against IPS, SNIPS, EMP and EL at the
    midpoint, by Table 1's comparison (:func:`realistic.compare_estimates`)."""
    import pandas as pd

    df = pd.DataFrame(run["rows"])
    index = ["strategy", "dataset", "replicate"]
    wide = df.pivot(index=index, columns="estimator", values="estimate")
    wide["truth"] = df.groupby(index).truth.first()
    out = []
    for strategy in run["strategies"]:
        sub = wide.loc[strategy]
        atom = sum(v for (d, s), v in run["atoms"].items() if s == strategy) / (len(sub) or 1)
        for est in EL_COLUMNS.values():
            for other in VERSUS + (("el",) if est != "el" else ()):
                outs = [R.compare_estimates(g[est], g[other], g["truth"])
                        for _, g in sub.groupby(level="dataset")]
                w, t, l = _wtl(outs)
                mse = ((sub[[est, other]].sub(sub["truth"], axis=0)) ** 2).mean()
                out.append(dict(estimator=est, versus=other, strategy=strategy, wins=w, ties=t,
                                losses=l, datasets=len(outs), mse_estimator=float(mse[est]),
                                mse_versus=float(mse[other]), atom_share=atom))
    return out


# ------------------------------------------------------------------------------------------------
# Running and writing
# ------------------------------------------------------------------------------------------------
def _map(fn, tasks, jobs, progress, what):
    """``fn`` on every task (in any order: the callers sort the results), with progress lines."""
    out = []
    bar = Progress(f"rho {what}", len(tasks), enabled=progress)

    def collect(res):
        out.append(res)
        bar.update(1, f"{len(out)}/{len(tasks)} tasks")

    run_tasks(fn, tasks, jobs, collect)
    return out
