r"""The paper's synthetic study (its Figures 1 and 2): every replicate's numbers, and the tidy
tables.

For each ``N`` and each replicate ``i`` an environment is drawn and a sample of size ``N`` is
taken from it, with the random stream ``SeedSequence(seed, spawn_key=(N, i))`` (the stream that
``SeedSequence(seed).spawn(N + 1)[N].spawn(i + 1)[i]`` hands out): every replicate is reproducible
on its own, and the results depend neither on ``jobs`` nor on ``chunk_size`` nor on which other
sizes are run. On each sample it computes

* the estimators of Figure 1 (:data:`ESTIMATORS`): Constant (1/2), ClippedDR, SNIPS (1/2, the
  reward midpoint, when every weight is 0, as in the authors' code), IPS, EMP, CR(-2) and EL
  with ``rho = 1/2``;
* the 95% intervals of Figure 2 (:data:`INTERVAL_METHODS`): EL and CR(-2) with the chi-square
  and F calibrations, Binomial (Clopper-Pearson on ``w r / wmax``) and the asymptotic Gaussian.

:func:`run_study` returns a :class:`SyntheticStudy` holding every replicate's numbers; its
:meth:`~SyntheticStudy.mse_table` and :meth:`~SyntheticStudy.interval_table` are the tidy
tables and :meth:`~SyntheticStudy.write` writes ``mse.csv``, ``intervals.csv``, ``summary.md``
and the figures.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ...errors import InvalidInputError
from .._running import Progress, ReplicatedIntervals, check_integers, run_tasks
from . import report
from .environment import (SECOND_MOMENT, WEIGHTS, _cached_weights, _check_size, draw_environment,
                          replicate_rng)
from .methods import _EST, _INT, EVENTS, evaluate

__all__ = ["DEFAULT_SIZES", "DEFAULT_REPLICATES", "DEFAULT_SEED", "run_study", "SyntheticStudy"]

#: The default grid of sample sizes: 1-2-5 steps from 10 to 10^6 (the paper's Figure 1 goes to
#: 10^5, its Figure 2 to 10^6; with counts a replicate costs the same at every N).
DEFAULT_SIZES = (10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000,
                 100_000, 200_000, 500_000, 1_000_000)
#: Environment draws per sample size, as in the paper.
DEFAULT_REPLICATES = 10_000
DEFAULT_SEED = 2020
DEFAULT_CHUNK_SIZE = 250


def _run_chunk(task):
    """Replicates ``start..stop-1`` at size ``n`` (a process-pool task; module level to pickle)."""
    seed, n, start, stop, confidence_level = task
    cpu0 = time.process_time()
    m = stop - start
    truth = np.empty(m)
    est = np.empty((m, len(_EST)))
    low = np.empty((m, len(_INT)))
    high = np.empty((m, len(_INT)))
    events = dict.fromkeys(EVENTS, 0)
    for j, i in enumerate(range(start, stop)):
        rng = replicate_rng(seed, n, i)
        env = draw_environment(rng)
        sample = env.sample(n, rng)
        truth[j] = env.value
        est[j], low[j], high[j], ev = evaluate(sample, confidence_level=confidence_level)
        for key, v in ev.items():
            events[key] += v
    return n, start, truth, est, low, high, events, time.process_time() - cpu0



@dataclass(eq=False)
class SyntheticStudy(ReplicatedIntervals):
    """Every replicate of a run of :func:`run_study`, and its tables: the fields of
    :class:`~elcvx.experiments._running.ReplicatedIntervals` (``estimates`` over
    :data:`ESTIMATORS`, ``lows`` and ``highs`` over :data:`INTERVAL_METHODS`), ``events`` (``n ->
    {event: count}``, see :func:`evaluate`) and the environment's weights and their
    probabilities."""

    events: dict
    weights: tuple = WEIGHTS
    probs: np.ndarray = field(default_factory=lambda: np.asarray(_cached_weights(WEIGHTS, SECOND_MOMENT)))

    # -- per-replicate arrays --------------------------------------------------------------------
    def squared_errors(self, n: int) -> np.ndarray:
        """``(replicates, len(ESTIMATORS))`` squared errors at size ``n``."""
        return (self.estimates[n] - self.truth[n][:, None]) ** 2

    def covered(self, n: int) -> np.ndarray:
        """``(replicates, len(INTERVAL_METHODS))`` booleans: ``low <= V <= high``."""
        v = self.truth[n][:, None]
        return (self.lows[n] <= v) & (v <= self.highs[n])

    def widths(self, n: int) -> np.ndarray:
        return self.highs[n] - self.lows[n]

    # -- tidy tables -----------------------------------------------------------------------------
    def mse_table(self) -> list:
        """Rows ``{n, estimator, mse, se}``: mean squared error and its standard error."""
        rows = []
        for n in self.sizes:
            sq = self.squared_errors(n)
            mse = sq.mean(axis=0)
            se = sq.std(axis=0, ddof=1) / math.sqrt(sq.shape[0])
            for j, name in enumerate(_EST):
                rows.append({"n": n, "estimator": name, "mse": float(mse[j]), "se": float(se[j])})
        return rows

    def interval_table(self) -> list:
        """Rows ``{n, method, coverage, coverage_se, mean_width, width_p05, width_p95}``."""
        rows = []
        for n in self.sizes:
            cov = self.covered(n).mean(axis=0)
            width = self.widths(n)
            p05, p95 = np.percentile(width, [5, 95], axis=0)
            r = width.shape[0]
            for j, name in enumerate(_INT):
                rows.append({
                    "n": n, "method": name,
                    "coverage": float(cov[j]),
                    "coverage_se": float(math.sqrt(cov[j] * (1 - cov[j]) / r)),
                    "mean_width": float(width[:, j].mean()),
                    "width_p05": float(p05[j]),
                    "width_p95": float(p95[j]),
                })
        return rows

    def paired_mse_difference(self, n: int, other: str, reference: str = "el"):
        """Mean and standard error of ``sq_err(reference) - sq_err(other)`` over the same replicates."""
        sq = self.squared_errors(n)
        d = sq[:, _EST.index(reference)] - sq[:, _EST.index(other)]
        return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))

    def to_frames(self):
        """The two tables as pandas DataFrames (needs pandas, the ``io`` extra)."""
        import pandas as pd

        return pd.DataFrame(self.mse_table()), pd.DataFrame(self.interval_table())

    # -- outputs ---------------------------------------------------------------------------------
    def write(self, out, *, plots: bool = True, command: str | None = None) -> list:
        """Write ``mse.csv``, ``intervals.csv``, ``summary.md`` and (with matplotlib) the figures
        (:func:`elcvx.experiments.synthetic.report.write`). Returns the paths written."""
        return report.write(self, out, plots=plots, command=command)

    def summary_markdown(self, mse_rows=None, int_rows=None, *, figures=(), command=None) -> str:
        """The Markdown summary: set-up, the tables, and the checks of the paper's claims."""
        return report.summary_markdown(self, mse_rows or self.mse_table(),
                                       int_rows or self.interval_table(), figures=figures,
                                       command=command)


def run_study(sizes=DEFAULT_SIZES, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED,
              *, jobs: int = 2, chunk_size: int = DEFAULT_CHUNK_SIZE,
              confidence_level: float = 0.95, progress: bool = True, stream=None) -> SyntheticStudy:
    """Run the synthetic study: every estimator and interval on ``replicates`` draws per size.

    Parameters
    ----------
    sizes : sequence of int
        Sample sizes ``N``.
    replicates : int
        Environment draws (each with one sample) per size; at least 2 (for standard errors).
    seed : int
        Root of the random streams (see the module docstring); results are a function of
        ``(seed, sizes, replicates, confidence_level)`` only.
    jobs : int
        Worker processes; ``1`` runs in this process.
    chunk_size : int
        Replicates per task (load balancing and progress; does not change the results).
    confidence_level : float
    progress : bool
        Print a line per finished chunk, with an ETA, on ``stream`` (default stderr).

    Returns
    -------
    SyntheticStudy
    """
    sizes = tuple(_check_size(n) for n in sizes)
    if not sizes or len(set(sizes)) != len(sizes):
        raise InvalidInputError(f"sizes={sizes!r} must be a non-empty list of distinct sizes")
    check_integers(replicates=(replicates, 2), jobs=(jobs, 1), chunk_size=(chunk_size, 1), seed=(seed, 0))
    if not 0 < confidence_level < 1:
        raise InvalidInputError(f"confidence_level={confidence_level!r} must lie strictly between 0 and 1")
    replicates, jobs, chunk_size, seed = int(replicates), int(jobs), int(chunk_size), int(seed)

    tasks = [(seed, n, start, min(start + chunk_size, replicates), float(confidence_level))
             for n in sizes for start in range(0, replicates, chunk_size)]
    truth = {n: np.empty(replicates) for n in sizes}
    est = {n: np.empty((replicates, len(_EST))) for n in sizes}
    low = {n: np.empty((replicates, len(_INT))) for n in sizes}
    high = {n: np.empty((replicates, len(_INT))) for n in sizes}
    events = {n: dict.fromkeys(EVENTS, 0) for n in sizes}
    done = dict.fromkeys(sizes, 0)
    bar = Progress("synthetic", len(sizes) * replicates, enabled=progress, stream=stream or sys.stderr)
    t0 = time.perf_counter()

    cpu = [0.0]

    def collect(result):
        n, start, tr, e, lo, hi, ev, seconds = result
        cpu[0] += seconds
        sl = slice(start, start + tr.size)
        truth[n][sl], est[n][sl], low[n][sl], high[n][sl] = tr, e, lo, hi
        for key, v in ev.items():
            events[n][key] += v
        done[n] += tr.size
        bar.update(tr.size, f"N={n:<8d} {done[n]:>6d}/{replicates} replicates",
                   final=done[n] == replicates)

    run_tasks(_run_chunk, tasks, jobs, collect)
    wall = time.perf_counter() - t0
    return SyntheticStudy(sizes=sizes, replicates=replicates, seed=seed,
                          confidence_level=float(confidence_level), truth=truth, estimates=est,
                          lows=low, highs=high, events=events, wall_time=wall, jobs=jobs,
                          cpu_time=cpu[0])

