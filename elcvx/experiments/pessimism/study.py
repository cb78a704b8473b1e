"""Running the tightness study: one task per (dataset, configuration), its replicates' bounds, and
the radius and violation tables."""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ...errors import InvalidInputError
from .._running import Progress, check_integers, run_tasks
from ..realistic.data import dataset_rng, load_folder
from .methods import METHODS, bounds
from .protocol import DATASETS, Config, configs, draw_log, n_log

__all__ = ["DEFAULT_SEED", "DEFAULT_SEEDS", "PessimismStudy", "run_study", "radius"]

DEFAULT_SEED = 2024
#: Replicates (logs) per (dataset, configuration).
DEFAULT_SEEDS = 10


def radius(value: float, low: float) -> float:
    """The published table's normalised radius: ``(V - LB) / V``, 0 when ``LB >= V``."""
    return (value - low) / value if low < value else 0.0


@dataclass
class PessimismStudy:
    """The bounds of every log (``rows``: one per log and method) and the run's set-up."""

    datasets: list  # (id, name, rows, logged rows, classes)
    configs: list
    seeds: int
    seed: int
    methods: tuple
    rows: list = field(default_factory=list)
    wall_time: float = 0.0
    jobs: int = 1

    def summary(self, by_dataset: bool = True) -> list:
        """Per method (and dataset): logs, mean and median radius, violation rate (``LB > V``)
        with its standard error, and the logs where a bound could not be computed (``nan``)."""
        groups: dict[tuple[str, str], list[dict]] = {}
        for row in self.rows:
            key = (row["dataset"] if by_dataset else "all", row["method"])
            groups.setdefault(key, []).append(row)
        order = [name for _, name, *_ in self.datasets] if by_dataset else ["all"]
        out = []
        for dataset in order:
            for method in self.methods:
                rows = groups.get((dataset, method), [])
                ok = [r for r in rows if math.isfinite(r["lower_bound"])]
                if not rows:
                    continue
                radii = np.array([r["radius"] for r in ok])
                viol = np.array([r["violation"] for r in ok], dtype=float)
                rate = float(viol.mean()) if ok else math.nan
                out.append(dict(dataset=dataset, method=method, logs=len(ok),
                                mean_radius=float(radii.mean()) if ok else math.nan,
                                median_radius=float(np.median(radii)) if ok else math.nan,
                                violation_rate=rate,
                                violation_se=math.sqrt(rate * (1 - rate) / len(ok)) if ok else math.nan,
                                failed=len(rows) - len(ok)))
        return out


def _run_task(task):
    """The bounds of every replicate of one (dataset, configuration): ``(rows, seconds)``."""
    did, name, labels, k, index, cfg, seed, seeds, methods = task
    t0 = time.process_time()
    rows = []
    for rep in range(seeds):
        log = draw_log(labels, k, cfg, dataset_rng(seed, did, index, rep))
        for method, low in bounds(log, methods).items():
            rows.append(dict(dataset=name, openml_id=did, eta=cfg.eta, tau=cfg.tau, tau0=cfg.tau0,
                             replicate=rep, n=int(log.w.size), value=log.value, method=method,
                             lower_bound=low, radius=radius(log.value, low) if math.isfinite(low)
                             else math.nan, violation=int(low > log.value)))
    return did, cfg, rows, time.process_time() - t0


def run_study(data_dir, *, datasets=None, seeds: int = DEFAULT_SEEDS, seed: int = DEFAULT_SEED,
              noises=None, targets=None, logging=None, methods=tuple(METHODS), jobs: int = 2,
              progress: bool = True, stream=None) -> PessimismStudy:
    """Every configuration of the grid (or of the ``noises``, ``targets`` and ``logging``
    temperatures given) on every dataset of ``data_dir`` (or the OpenML ids ``datasets``),
    ``seeds`` logs each. Log ``rep`` of configuration ``i`` (its index in the full grid) of
    dataset ``d`` draws from ``SeedSequence(seed, spawn_key=(d, i, rep))``: the numbers depend
    neither on ``jobs`` nor on which other datasets or configurations run."""
    check_integers(seeds=(seeds, 1), jobs=(jobs, 1))
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise InvalidInputError(f"methods={list(methods)!r}: choose among {', '.join(METHODS)}")
    grid = configs()
    chosen = [(i, c) for i, c in enumerate(grid)
              if (noises is None or c.eta in noises) and (targets is None or c.tau in targets)
              and (logging is None or c.tau0 in logging)]
    if not chosen:
        raise InvalidInputError("no configuration matches the noises, targets and logging "
                                "temperatures given; the grid is eta in "
                                f"{sorted({c.eta for c in grid})}, tau in "
                                f"{sorted({c.tau for c in grid})}, tau0 in "
                                f"{sorted({c.tau0 for c in grid})}")
    ids = list(DATASETS) if datasets is None else [int(d) for d in datasets]
    data = load_folder(data_dir, datasets=ids, max_rows=sys.maxsize, set_name="pessimism")
    by_id = {d.id: d for d in data}
    data = [by_id[i] for i in ids]
    st = PessimismStudy(datasets=[(d.id, DATASETS.get(d.id, d.name), d.n, n_log(d.n), d.n_classes)
                                  for d in data],
                        configs=[c for _, c in chosen], seeds=int(seeds), seed=int(seed),
                        methods=tuple(methods), jobs=int(jobs))
    tasks = [(d.id, DATASETS.get(d.id, d.name), d.y, d.n_classes, i, c, int(seed), int(seeds),
              tuple(methods)) for d in data for i, c in chosen]
    bar = Progress("pessimism", len(tasks), enabled=progress, stream=stream or sys.stderr)
    t0 = time.perf_counter()

    def collect(result):
        did, cfg, rows, _ = result
        st.rows.extend(rows)
        bar.update(1, f"{DATASETS.get(did, did)} eta={cfg.eta:g} tau={cfg.tau:g} "
                      f"tau0={cfg.tau0:g}", final=True)

    run_tasks(_run_task, tasks, int(jobs), collect)
    names = [name for _, name, *_ in st.datasets]
    index = {c: i for i, c in enumerate(grid)}
    st.rows.sort(key=lambda r: (names.index(r["dataset"]), index[Config(r["eta"], r["tau"], r["tau0"])],
                                r["replicate"], st.methods.index(r["method"])))
    st.wall_time = time.perf_counter() - t0
    return st
