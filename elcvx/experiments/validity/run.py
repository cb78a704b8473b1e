"""The validity suite's cells and bounds: every lower bound elcvx offers, on logs of laws whose
value is exact, counted where it exceeds the truth.

A *cell* is a law of :mod:`.distributions` at a log size ``N``; in it, ``logs`` logs are drawn
(log ``i`` from the stream ``default_rng([seed, law's position, N, i])``, so a cell's numbers do
not depend on ``jobs`` or on the order of the work) and every bound is computed on each at
``delta = 0.05``. A bound *violates* on a log when its lower bound exceeds the value (by more than
``1e-12``, a float's rounding); for :func:`elcvx.select`, when any of its bounds does (the
family-wise error its guarantee is about). The *radius* is ``value - bound``, on the reward scale
[0, 1] (for a selection, the mean over its candidates). Each bound's violations are also counted
on the logs where the thin-asymptotics note is silent (:func:`elcvx.thin.notes`: enough rows
carry the large weights), the logs on which an asymptotic bound promises its level.

The one-sided EL bound is run under every calibration :data:`elcvx._validation.EL_CALIBRATIONS`
names when the suite starts (a new one is picked up without an edit), the difference's under
every one of :data:`elcvx._validation.CALIBRATIONS`. The bootstrap calibrations draw
``resamples`` resamples; ``"bootstrap"`` runs only at ``N <= bootstrap_max_n`` (its cost), while
``"signed-bootstrap"``, the one-sided bounds' default, runs at every N.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ... import _validation as iv
from ...baselines import lower_bound
from ...difference import difference
from ...errors import SolverError
from ...interval import interval
from ...sample import Sample
from ...selection import select
from ...sequences import betting_sequence, ddrm_sequence
from ...thin import notes as thin_notes
from .._running import Progress, run_tasks
from .distributions import DISTRIBUTIONS, Distribution, Logged, by_name

__all__ = ["DELTA", "SIZES", "Bound", "bounds", "run_cell", "run_study"]

#: The probability a lower bound may exceed the value.
DELTA = 0.05
#: The log sizes of the full run.
SIZES = (20, 100, 300, 1000, 3000, 10000)
#: The bootstrap calibration's resamples in the suite, and the largest N it runs at.
RESAMPLES = 199
BOOTSTRAP_MAX_N = 1000
#: A float's rounding: a bound above the value by less is not a violation.
TIE = 1e-12
#: The regime in which the suite holds an asymptotic bound to its level: logs of at least this
#: many rows on which the thin-asymptotics note is silent (docs/validity.md says why).
ASYMPTOTIC_MIN_N = 1000
#: A bound's counts in a cell: ``[violations, logs, sum of radii, failures, CPU seconds,
#: violations on the logs without the thin note, those logs]`` (a cell run before the last two
#: were counted has the first five).
EMPTY = (0, 0, 0.0, 0, 0.0, 0, 0)


@dataclass(frozen=True)
class Bound:
    """A lower bound of the suite: ``kind`` is ``"finite"`` (holds at every N) or
    ``"asymptotic"``; ``compute(law, log, i)`` returns ``(lows, values)`` arrays (one entry, or
    one per statement of a selection); ``applies(law, n)`` says where it runs."""

    name: str
    kind: str
    what: str
    compute: Callable
    applies: Callable = lambda law, n: True


def _known(law: Distribution, log: Logged) -> Sample:
    return Sample(log.w, log.r, wmin=law.wmin, wmax=law.wmax)


def _one(low, law):
    return np.array([float(low)]), np.array([law.value])


def _el(calibration, resamples):
    def compute(law, log, i):
        return _one(interval(_known(law, log), confidence_level=1.0 - DELTA, calibration=calibration,
                             alternative="greater", resamples=resamples, random_state=i).low, law)
    return compute


def _finite(method):
    def compute(law, log, i):
        extra = {"logging_probs": log.p} if method == "ix" else {}
        return _one(lower_bound(_known(law, log), method=method, confidence_level=1.0 - DELTA,
                                **extra).low, law)
    return compute


def _sequence(fn):
    def compute(law, log, i):
        # Two-sided at 1 - 2 delta: each side at delta.
        return _one(fn(log.w, log.r, confidence_level=1.0 - 2.0 * DELTA).interval.low, law)
    return compute


def _difference(calibration):
    def compute(law, log, i):
        a, b = law.pair
        samples = [Sample(log.probs[:, j] / log.p, log.r, wmin=law.candidate_ranges[j][0],
                          wmax=law.candidate_ranges[j][1]) for j in (a, b)]
        low = difference(*samples, confidence_level=1.0 - DELTA, calibration=calibration,
                         alternative="greater").low
        return np.array([float(low)]), np.array([law.candidate_values[a] - law.candidate_values[b]])
    return compute


def _select(method):
    def compute(law, log, i):
        res = select(log.probs, log.p, log.r, wmax=[hi for _, hi in law.candidate_ranges],
                     method=method, confidence_level=1.0 - DELTA, threads=1)
        return np.asarray(res.low, dtype=float), np.asarray(law.candidate_values)
    return compute


def _has_pair(law, n):
    return law.pair is not None


def bounds(resamples: int = RESAMPLES, bootstrap_max_n: int = BOOTSTRAP_MAX_N) -> dict:
    """``name -> Bound``: every lower bound of the suite, the EL calibrations read now."""
    out = []
    for cal in iv.EL_CALIBRATIONS:
        capped = cal == "bootstrap"
        out.append(Bound(f"el-{cal}", "asymptotic",
                         f"interval(alternative='greater', calibration={cal!r})"
                         + (f", {resamples} resamples" if "bootstrap" in cal else "")
                         + (f", N <= {bootstrap_max_n}" if capped else ""),
                         _el(cal, resamples),
                         (lambda law, n: n <= bootstrap_max_n) if capped else (lambda law, n: True)))
    for method in ("el-betting", "ls", "ix", "eb"):
        out.append(Bound(method, "finite", f"baselines.lower_bound(method={method!r})", _finite(method)))
    out.append(Bound("betting", "finite", "sequences.betting_sequence, lower side at t = N",
                     _sequence(betting_sequence)))
    out.append(Bound("ddrm", "finite", "sequences.ddrm_sequence, lower side at t = N",
                     _sequence(ddrm_sequence)))
    for cal in iv.CALIBRATIONS:
        out.append(Bound(f"difference-{cal}", "asymptotic",
                         f"difference(alternative='greater', calibration={cal!r}) of two targets",
                         _difference(cal), _has_pair))
    out.append(Bound("select-el", "asymptotic", "select(method='el'): all 5 candidates' bounds at once",
                     _select("el"), _has_pair))
    out.append(Bound("select-ls", "finite", "select(method='ls'): all 5 candidates' bounds at once",
                     _select("ls"), _has_pair))
    return {b.name: b for b in out}


def log_rng(seed: int, law_index: int, n: int, i: int) -> np.random.Generator:
    """Log ``i``'s random stream in the cell (law, N)."""
    return np.random.default_rng([seed, law_index, n, i])


def counted(counts, kind: str, n: int) -> bool:
    """Whether a cell's ``counts`` of a bound of ``kind`` are complete: an asymptotic bound's
    inside its regime need the counts without the thin note (a cell run before they were
    counted is run again)."""
    return len(counts) == len(EMPTY) or kind != "asymptotic" or n < ASYMPTOTIC_MIN_N


def run_cell(law: Distribution, n: int, start: int, stop: int, seed: int, chosen: dict) -> dict:
    """Logs ``start .. stop - 1`` of the cell (``law``, ``n``): ``name -> counts`` (:data:`EMPTY`'s
    fields) for each bound of ``chosen`` that applies."""
    law_index = [d.name for d in DISTRIBUTIONS].index(law.name)
    todo = {name: b for name, b in chosen.items() if b.applies(law, n)}
    out = {name: list(EMPTY) for name in todo}
    for i in range(start, stop):
        log = law.draw(n, log_rng(seed, law_index, n, i))
        silent = not thin_notes(_known(law, log))
        for name, b in todo.items():
            t0 = time.process_time()
            try:
                lows, values = b.compute(law, log, i)
            except SolverError:
                lows = values = None
            acc = out[name]
            acc[4] += time.process_time() - t0
            if lows is None or not np.all(np.isfinite(lows)):
                acc[3] += 1
                continue
            violated = int(np.any(lows > values + TIE))
            acc[0] += violated
            acc[1] += 1
            acc[2] += float(np.mean(values - lows))
            acc[5] += violated * silent
            acc[6] += int(silent)
    return out


#: Logs per task of the pool.
CHUNK = 50
#: The file of finished cells in the output folder, one JSON object a line (read to resume).
CELLS_FILE = "cells.jsonl"


#: The order the sizes are run in: where the asymptotic bounds' promise is in question first, so
#: that a run stopped early has those cells.
RUN_ORDER = (300, 1000, 3000, 10000, 100, 20)


def _run_order(n):
    return (RUN_ORDER.index(n), n) if n in RUN_ORDER else (len(RUN_ORDER), n)


def _chunk(task, chosen=None):
    name, n, start, stop, seed, resamples, bootstrap_max_n, names = task
    every = bounds(resamples, bootstrap_max_n) if chosen is None else chosen
    chosen = {k: every[k] for k in names}  # (the bounds this task still has to run)
    return (name, n), stop - start, run_cell(by_name(name), n, start, stop, seed, chosen)


def _key(law, n, logs, seed, resamples, bootstrap_max_n):
    return {"law": law, "n": n, "logs": logs, "seed": seed, "resamples": resamples,
            "bootstrap_max_n": bootstrap_max_n}


def _read_cells(path) -> dict:
    """The cells of ``path`` (``cells.jsonl``) by key, each one's bounds merged over its lines
    (a bound run later adds to a cell, on the same logs)."""
    done: dict = {}
    if path is None or not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        key = json.dumps({k: row[k] for k in _key(0, 0, 0, 0, 0, 0)}, sort_keys=True)
        cell = done.setdefault(key, dict(row, bounds={}, skipped=[]))
        cell["bounds"].update(row["bounds"])
        cell["skipped"] = sorted(set(cell["skipped"]) | set(row.get("skipped", ())))
    return done


def run_study(laws=None, sizes=SIZES, logs: int = 1000, *, seed: int = 36, jobs: int = 1,
              resamples: int = RESAMPLES, bootstrap_max_n: int = BOOTSTRAP_MAX_N, names=None,
              out=None, progress: bool = True, report_only: bool = False, chosen=None) -> list:
    """Run every cell of ``laws`` (names; default all) x ``sizes`` with ``logs`` logs each and
    the bounds ``names`` (default all): one dict per cell, ``{"law", "n", ..., "bounds": {name:
    [violations, logs, sum of radii, failures, CPU seconds]}}``.

    With ``out``, each finished cell is appended to ``out/cells.jsonl`` at once, and the bounds a
    cell already has there (same logs, seed and bootstrap settings) are not run again: an
    interrupted run resumes, and a run of some bounds (``names``) adds to the cells of another
    (delete the file to start afresh). ``report_only``: run nothing, return the cells already
    there. ``chosen``: other bounds (``name -> Bound``) in place of the suite's, run in this
    process (a test's)."""
    laws = [d.name for d in DISTRIBUTIONS] if laws is None else [by_name(x).name for x in laws]
    if chosen is not None:
        names, jobs = list(chosen), 1
    every = bounds(resamples, bootstrap_max_n) if chosen is None else chosen
    names = list(every) if names is None else list(names)
    path = None if out is None else Path(out) / CELLS_FILE
    done = _read_cells(path)
    results, tasks, pending = {}, [], {}
    for n in sorted(sizes, key=_run_order):
        for law in laws:
            key = json.dumps(_key(law, n, logs, seed, resamples, bootstrap_max_n), sort_keys=True)
            have = done.get(key)
            if have is not None:
                results[(law, n)] = have
            # Done: a bound with complete counts, or one skipped that still does not apply.
            covered = set() if have is None else {
                b for b in have["skipped"] if b not in every or not every[b].applies(by_name(law), n)
            } | {b for b, counts in have["bounds"].items()
                 if b not in every or counted(counts, every[b].kind, n)}
            missing = [b for b in names if b not in covered]
            if report_only or not missing:
                continue
            pending[(law, n)] = {"left": logs, "bounds": {}, "names": missing}
            tasks += [(law, n, s, min(s + CHUNK, logs), seed, resamples, bootstrap_max_n, missing)
                      for s in range(0, logs, CHUNK)]
    bar = Progress("validity", sum(t[3] - t[2] for t in tasks), enabled=progress)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)

    def collect(res):
        cell, count, part = res
        state = pending[cell]
        for name, acc in part.items():
            state["bounds"][name] = [a + b for a, b in zip(state["bounds"].get(name, EMPTY), acc)]
        state["left"] -= count
        bar.update(count, f"{cell[0]} N={cell[1]}", final=state["left"] == 0)
        if state["left"] == 0:
            row = dict(_key(cell[0], cell[1], logs, seed, resamples, bootstrap_max_n),
                       bounds=state["bounds"],
                       skipped=[b for b in state["names"] if b not in state["bounds"]])
            if path is not None:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row, sort_keys=True) + "\n")
            old = results.get(cell)
            if old is not None:
                row = dict(row, bounds={**old["bounds"], **row["bounds"]},
                           skipped=sorted(set(old["skipped"]) | set(row["skipped"])))
            results[cell] = row

    run_tasks(_chunk if chosen is None else (lambda task: _chunk(task, chosen)), tasks, jobs, collect)
    return [results[(law, n)] for n in sorted(sizes) for law in laws if (law, n) in results]


def se(logs: int, delta: float = DELTA) -> float:
    """The standard error of a violation rate at ``delta`` over ``logs`` logs."""
    return math.sqrt(delta * (1.0 - delta) / logs) if logs else math.nan
