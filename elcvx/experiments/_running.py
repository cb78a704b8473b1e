"""Running a study's tasks: in this process or a pool of workers, with progress lines, and the
tables it writes (CSV, Markdown). Shared by every study of :mod:`elcvx.experiments`."""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInputError


@dataclass(eq=False, kw_only=True)
class RunCost:
    """What a study's run cost: ``wall_time`` (seconds, the whole run), ``cpu_time`` (CPU
    seconds of the replicates, summed over the worker processes) and ``jobs`` (worker
    processes). Keyword-only, so a study's own fields come first."""

    wall_time: float = 0.0
    cpu_time: float = 0.0
    jobs: int = 1


@dataclass(eq=False)
class ReplicatedIntervals(RunCost):
    """The replicates of a study of estimates and intervals at each sample size: ``truth[n]``
    the true values, ``estimates[n]`` ``(replicates, estimators)`` and ``lows[n]``, ``highs[n]``
    ``(replicates, interval methods)`` arrays (NaN for a failure)."""

    sizes: tuple
    replicates: int
    seed: int
    confidence_level: float
    truth: dict
    estimates: dict
    lows: dict
    highs: dict


def run_tasks(fn, tasks, jobs: int, collect) -> None:
    """``collect(fn(task))`` for every task, as each finishes: in this process when ``jobs == 1``,
    else in a pool of ``jobs`` worker processes (``fn`` must then be a module-level function)."""
    if jobs == 1:
        for task in tasks:
            collect(fn(task))
        return
    with ProcessPoolExecutor(max_workers=int(jobs)) as pool:
        for fut in as_completed([pool.submit(fn, task) for task in tasks]):
            collect(fut.result())


def check_integers(**least) -> None:
    """Raise InvalidInputError unless each ``name=(value, smallest)`` is an integer >= smallest."""
    for name, (value, smallest) in least.items():
        if isinstance(value, bool) or int(value) != value or value < smallest:
            raise InvalidInputError(f"{name}={value!r} must be an integer >= {smallest}")


def format_seconds(s: float) -> str:
    """``42s``, ``3m07s``, ``2h05m``."""
    s = max(0.0, s)
    if s < 60:
        return f"{s:.0f}s"
    m, s = divmod(int(round(s)), 60)
    return f"{m}m{s:02d}s" if m < 60 else f"{m // 60}h{m % 60:02d}m"


def machine_description() -> str:
    """A one-line description of the machine, for a summary."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


class Progress:
    """Progress lines on ``stream`` (default stderr): ``[label] what | total d/T (p%) | elapsed,
    ETA``, at most one a second, plus every line marked ``final``."""

    def __init__(self, label: str, total: int, *, enabled: bool = True, stream=None):
        self.label, self.total, self.enabled = label, max(int(total), 1), enabled
        self.stream = stream or sys.stderr
        self.done = 0
        self.start = time.perf_counter()
        self.last = -math.inf

    def update(self, count: int, what: str, *, final: bool = False) -> None:
        """``count`` more units are done; ``what`` says which."""
        self.done += count
        if not self.enabled:
            return
        now = time.perf_counter()
        if not (final or self.done == self.total) and now - self.last < 1.0:
            return
        self.last = now
        elapsed = now - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else math.inf
        print(f"[{self.label}] {what} | total {self.done}/{self.total} "
              f"({100 * self.done / self.total:5.1f}%) | elapsed {format_seconds(elapsed)}, "
              f"ETA {format_seconds(eta) if math.isfinite(eta) else '?'}",
              file=self.stream, flush=True)


def write_csv(path, columns, rows, *, digits: int = 10) -> Path:
    """Write ``rows`` (dicts) under ``columns`` (keys not among them are left out, missing ones
    empty), floats with ``digits`` significant digits; gzip-compressed, byte-reproducibly (no
    time stamp), when ``path`` ends in ``.gz``."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    writer.writerows({k: (f"{v:.{digits}g}" if isinstance(v, float) else v) for k, v in row.items()}
                     for row in rows)
    path = Path(path)
    data = buffer.getvalue().encode("utf-8")
    if path.name.endswith(".gz"):
        with gzip.GzipFile(path, "wb", mtime=0) as fh:
            fh.write(data)
    else:
        path.write_bytes(data)
    return path


def write_figure_and_summary(out, figure_name: str, draw, markdown, plots: bool = True) -> list:
    """A study's last two files: ``out/figure_name`` drawn by ``draw(path)`` when ``plots``, then
    ``out/summary.md``, the text ``markdown(figure path or None)``; their paths."""
    paths, figure = [], None
    if plots:
        figure = Path(out) / figure_name
        draw(figure)
        paths.append(figure)
    p = Path(out) / "summary.md"
    p.write_text(markdown(figure), encoding="utf-8")
    return paths + [p]


def md_table(header, rows) -> list:
    """A Markdown table's lines: ``header``, then ``rows``, every column right-aligned."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out
