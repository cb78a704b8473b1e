"""Running the selection study: one task per dataset (its splits, its two trained candidates and
its trials), and the per-(dataset, method) counts."""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ...errors import InvalidInputError
from .._running import Progress, RunCost, check_integers, run_tasks
from ..pessimism.protocol import DATASETS
from ..realistic.data import dataset_files, read_dataset
from . import protocol as P
from .methods import METHODS, available_methods, choose
from .training import STEPS, softmax_policy, train

__all__ = ["CANDIDATES", "DEFAULT_TRIALS", "SelectionStudy", "run_study", "run_dataset"]

#: The candidates, in the authors' order (``list_policies``); the last is the logging policy.
CANDIDATES = ("perfect", "ips-trained", "snips-trained", "logging")
PERFECT, LOGGING = CANDIDATES.index("perfect"), CANDIDATES.index("logging")
#: Trials per dataset (the authors' ``n_trials``); trial ``i`` draws its log after
#: ``np.random.seed(i)``.
DEFAULT_TRIALS = 10


@dataclass(eq=False)
class SelectionStudy(RunCost):
    """The choices of every trial (``rows``: one per dataset, trial and method), the candidates'
    true values and weight bounds per dataset (``candidates``), and the run's set-up."""

    datasets: list  # dicts: id, name, rows, features, classes, train, log, held_out, seconds
    trials: int
    steps: int
    methods: tuple
    rows: list = field(default_factory=list)
    candidates: list = field(default_factory=list)

    def summary(self) -> list:
        """Per dataset and method: the counts of BEST, BETTER and WORSE, the mean regret (the best
        candidate's true value minus the chosen one's), the mean lower bound of the chosen
        candidate (``certified``) and the mean of its IPS estimate minus that bound (``radius``),
        both ``nan`` for the point estimates; ``ties``: the trials decided by a tie."""
        out = []
        for ds in self.datasets:
            for method in self.methods:
                rows = [r for r in self.rows if r["dataset"] == ds["name"] and r["method"] == method]
                if not rows:
                    continue
                counts = {o: sum(r["outcome"] == o for r in rows) for o in P.OUTCOMES}
                lows = np.array([r["bound"] for r in rows])
                est = np.array([r["estimate"] for r in rows])
                bounded = method not in ("ips", "snips")
                out.append(dict(dataset=ds["name"], method=method, best=counts["BEST"],
                                better=counts["BETTER"], worse=counts["WORSE"],
                                regret=float(np.mean([r["regret"] for r in rows])),
                                certified=float(np.mean(lows)) if bounded else math.nan,
                                radius=float(np.mean(est - lows)) if bounded else math.nan,
                                ties=sum(r["tied"] > 1 for r in rows)))
        return out


def weight_bounds(k: int) -> np.ndarray:
    """Each candidate's weight bound: its largest probability over the logging policy's least,
    ``1/(e^5 + K - 1)``; a trained candidate's largest probability is taken as 1 (a softmax of a
    linear score can come as close to 1 as a context makes it)."""
    labels = np.arange(k)
    least = P.logging_policy(labels, k).min()
    largest = (P.perfect_policy(labels, k).max(), 1.0, 1.0, P.logging_policy(labels, k).max())
    return np.array(largest) / least


def run_dataset(ds, *, trials: int = DEFAULT_TRIALS, steps: int = STEPS,
                methods=tuple(METHODS)) -> tuple:
    """One dataset's study: ``(description, candidates, rows)``; see the package's text."""
    t0 = time.process_time()
    k, y, eta = ds.n_classes, ds.y, P.REWARD_NOISE
    X = P.standardise(ds.X)
    train_rows, log_rows, held = P.split_indices(ds.n)
    # The training log: np.random.seed(1), then the logging policy's actions and the rewards.
    rs = np.random.RandomState(P.TRAINING_SEED)
    a, p = P.draw_actions(P.logging_policy(y[train_rows], k), rs)
    r = P.draw_rewards(a, y[train_rows], eta, rs)
    W = {obj: train(X[train_rows], a, r, p, k, obj, steps=steps) for obj in ("ips", "snips")}

    def policies(rows):
        return (P.perfect_policy(y[rows], k),
                softmax_policy(X[rows], W["ips"], P.TARGET_TEMPERATURE),
                softmax_policy(X[rows], W["snips"], P.TARGET_TEMPERATURE),
                P.logging_policy(y[rows], k))

    values = np.array([P.true_value(pi, y[held], eta) for pi in policies(held)])
    wmax = weight_bounds(k)
    on_log = policies(log_rows)
    rows = []
    for trial in range(trials):
        rs = np.random.RandomState(trial)
        a, p0 = P.draw_actions(on_log[LOGGING], rs)
        r = P.draw_rewards(a, y[log_rows], eta, rs)
        target = np.column_stack([pi[np.arange(a.size), a] for pi in on_log])
        for method in methods:
            c = choose(method, target, p0, r, wmax, LOGGING)
            rows.append(dict(dataset=ds.name, openml_id=ds.id, trial=trial, method=method,
                             chosen=CANDIDATES[c.index], value=values[c.index],
                             outcome=P.score(values[c.index], values[LOGGING], values[PERFECT]),
                             regret=float(values.max() - values[c.index]),
                             bound=float(c.low[c.index]), estimate=float(c.estimate[c.index]),
                             tied=c.tied, authors_chosen=CANDIDATES[c.last],
                             authors_outcome=P.score(values[c.last], values[LOGGING],
                                                     values[PERFECT]),
                             **{f"low_{name}": float(v) for name, v in zip(CANDIDATES, c.low)}))
    description = dict(id=ds.id, name=ds.name, rows=ds.n, features=ds.X.shape[1], classes=k,
                       train=train_rows.size, log=log_rows.size, held_out=held.size,
                       missing=int(np.isnan(ds.X).sum()), seconds=time.process_time() - t0)
    candidates = [dict(dataset=ds.name, candidate=name, value=float(v), wmax=float(b))
                  for name, v, b in zip(CANDIDATES, values, wmax)]
    return description, candidates, rows


def _task(task):
    path, trials, steps, methods = task
    ds = read_dataset(path, allow_missing=True)
    ds = replace(ds, name=DATASETS.get(ds.id, ds.name))
    return run_dataset(ds, trials=trials, steps=steps, methods=methods)


def run_study(data_dir, *, datasets=None, trials: int = DEFAULT_TRIALS, steps: int = STEPS,
              methods=None, jobs: int = 1, progress: bool = True, stream=None) -> SelectionStudy:
    """The study on every ``<openml id>_<name>.csv.gz`` of ``data_dir`` (or the ``datasets``
    given, by OpenML id or name), ``trials`` trials each. The numbers depend neither on ``jobs``
    nor on which other datasets run (each trial is seeded as the authors' code seeds it).
    ``methods`` defaults to every method this installation has (``select`` needs
    :func:`elcvx.select`)."""
    check_integers(trials=(trials, 1), steps=(steps, 1), jobs=(jobs, 1))
    methods = available_methods() if methods is None else tuple(methods)
    bad = [m for m in methods if m not in available_methods()]
    if bad or not methods:
        raise InvalidInputError(f"methods={list(methods)!r}: choose among "
                                f"{', '.join(available_methods())}"
                                + (" (select needs elcvx.select)" if "select" in bad else ""),
                                field="methods", value=list(methods))
    files = dataset_files(data_dir, datasets, set_name="pessimism")
    if datasets is None:  # the study's five first, in the published table's order
        order = [i for i in DATASETS if i in files] + [i for i in files if i not in DATASETS]
        files = {i: files[i] for i in order}
    st = SelectionStudy(datasets=[], trials=int(trials), steps=int(steps), methods=methods,
                        jobs=int(jobs))
    tasks = [(path, int(trials), int(steps), methods) for path in files.values()]
    bar = Progress("selection", len(tasks), enabled=progress, stream=stream or sys.stderr)
    t0 = time.perf_counter()
    found = {}

    def collect(result):
        description, candidates, rows = result
        found[description["id"]] = result
        st.cpu_time += description["seconds"]
        bar.update(1, f"{description['name']} ({description['seconds']:.0f} s)", final=True)

    run_tasks(_task, tasks, int(jobs), collect)
    for did in files:  # the order asked for, whatever order the workers finished in
        description, candidates, rows = found[did]
        st.datasets.append(description)
        st.candidates.extend(candidates)
        st.rows.extend(rows)
    st.wall_time = time.perf_counter() - t0
    return st
