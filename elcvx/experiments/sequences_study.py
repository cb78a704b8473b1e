r"""Confidence sequences against the EL interval, on logs watched as they grow (issue 18).

**Environments** (each replicate one log of ``N`` examples in arrival order):

* ``synthetic``: the paper's synthetic environment (:func:`~elcvx.experiments.synthetic.draw_environment`,
  a new environment per replicate, ``V ~ U[0, 1]``), its i.i.d. cells drawn in order;
* ``epsilon-greedy``: the simulated contextual bandit of the constraints study
  (:func:`~elcvx.experiments.constraints_study.draw_log`: epsilon = 0.3, 3 actions, ``wmax =
  10``), target :func:`~elcvx.experiments.constraints_study.policy_a`;
* ``drifting``: the same bandit, but the logging policy changes over time: epsilon-greedy with
  ``epsilon_t = max(0.05, min(1, sqrt(1000 / t)))``, greedy around the constraints study's action
  until ``t = N / 10``, then around the target's own action (as if the logger had learned it);
  ``wmax = 3 / 0.05 = 60``. The weights use the probability in force at each ``t``.

**Per replicate.** Whether each method *ever* excludes the true value over ``t = 1..N``: for the
two sequences exactly, from their wealth at the true value at every ``t`` (the grid is not
involved); for the EL interval at :data:`LOOKS` looks (what a team that peeks gets), and at ``N``
alone. Widths at :data:`CHECKPOINTS`: the sequences' exact bounds there (betting: root of the
wealth; DDRM: its Newton root) and the EL interval. Shards: the log dealt round-robin to ``K =
4`` shards (four servers), merged by the product of wealths and by the union bound at ``alpha /
4``, each checked for ever excluding the truth (at every global ``t``) and measured at ``N``.
"""

from __future__ import annotations

import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from ..sequences import betting as _betting
from ..sequences import ddrm as _ddrm
from ..interval import interval
from ..sample import Sample
from . import constraints_study as bandit
from ._running import format_seconds, machine_description, md_table, write_csv
from .synthetic import draw_environment

ENVIRONMENTS = ("synthetic", "epsilon-greedy", "drifting")
DEFAULT_N = 100_000
#: 120 logs of 1e5 per environment: about 2.5 s of CPU per log, the run well under 30 minutes on
#: one core; the standard error of a 5% rate is then 0.02.
DEFAULT_REPLICATES = 120
DEFAULT_SEED = 18
CHECKPOINTS = (1_000, 10_000, 100_000)
SHARDS = 4
METHODS = {"betting": "Betting CS", "ddrm": "DDRM CS", "el": "EL interval"}
MERGES = {"product": f"product of {SHARDS} shards", "union": f"union bound, {SHARDS} shards"}


def looks(n: int) -> np.ndarray:
    """The times EL is looked at: 5 per decade from 100 (and ``n``)."""
    grid = np.unique(np.round(10 ** np.arange(2, math.log10(n) + 1e-9, 0.2)).astype(int))
    return np.unique(np.concatenate([grid[grid <= n], [n]]))


def checkpoints(n: int) -> tuple:
    """The times of the width table: :data:`CHECKPOINTS` below ``n``, and ``n``."""
    return tuple(c for c in CHECKPOINTS if c < n) + (n,)


def draw(env: str, n: int, rng: np.random.Generator):
    """``(w, r, V, wmin, wmax)``: one log of ``n`` examples in order and its true value."""
    if env == "synthetic":
        e = draw_environment(rng)
        w, r, p = e.cells()
        cell = rng.choice(p.size, n, p=p / p.sum())
        return w[cell], r[cell], e.value, e.wmin, e.wmax
    rows = np.arange(n)
    if env == "epsilon-greedy":
        log = bandit.draw_log(n, rng)
        w = bandit.policy_a(log.contexts)[rows, log.actions] / log.propensities
        return w, log.rewards, bandit.true_values()[0], 0.0, bandit.WMAX
    x = rng.random(n)
    t = rows + 1.0
    eps = np.clip(np.sqrt(1000.0 / t), 0.05, 1.0)
    target = np.argmax(bandit.policy_a(x), axis=1)
    greedy = np.where(t <= n / 10, (x >= 0.5).astype(int), target)
    k = bandit.N_ACTIONS
    p = np.full((n, k), eps[:, None] / k)
    p[rows, greedy] += 1.0 - eps
    a = np.minimum((rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1), k - 1)
    r = np.clip(bandit.mean_reward(x)[rows, a] + rng.uniform(-bandit.NOISE, bandit.NOISE, n), 0, 1)
    w = (a == target) / p[rows, a]
    return w, r, bandit.true_values()[0], 0.0, k / 0.05


def _rng(seed, env, index):
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(ENVIRONMENTS.index(env), int(index))))


def replicate(env: str, n: int, seed: int, index: int, level: float = 0.95) -> dict:
    """One log: ever-excluded flags and widths of every method (see the module docstring)."""
    w, r, value, wmin, wmax = draw(env, n, _rng(seed, env, index))
    alpha = 1.0 - level
    thr = math.log(2.0 / alpha)
    sides = (w * r, w * (1.0 - r))
    truth = (value, 1.0 - value)
    out = {"env": env, "replicate": index, "value": value}
    ever = {"betting": False, "ddrm": False}
    bounds: dict[str, dict[int, list[float]]] = {m: {} for m in ("betting", "ddrm")}
    shard = np.arange(n) % SHARDS
    merged = {f"{m}-{how}": False for m in ("betting", "ddrm") for how in MERGES}
    merged_bounds = {k: [0.0, 0.0] for k in merged}
    for side, (x, v) in enumerate(zip(sides, truth)):
        # Betting: exact wealth at the truth; exact roots at the checkpoints.
        bet = _betting.Side(thr)
        c = bet.bets(x)
        path = np.cumsum(np.log1p(c * (x / v - 1.0))) if v > 0 else np.full(n, -np.inf)
        ever["betting"] |= bool(np.any(path >= thr))
        for cp in checkpoints(n):
            bounds["betting"].setdefault(cp, [0.0, 0.0])[side] = _betting.exact_bound(x[:cp], c[:cp], thr)
        # DDRM: the state after every row, its wealth at the truth and roots at the checkpoints.
        t, s, vv = _ddrm.Side().advance(x)
        ever["ddrm"] |= _ddrm.reaches(thr, v, t, s, vv)
        rows = np.array(checkpoints(n)) - 1
        for cp, b in zip(checkpoints(n), _ddrm.lower_bounds(thr, t[rows], s[rows], vv[rows])):
            bounds["ddrm"].setdefault(cp, [0.0, 0.0])[side] = b
        _shards(x, v, thr, shard, merged, merged_bounds, side)
    for m in ("betting", "ddrm"):
        out[f"ever_{m}"] = ever[m]
        for cp, (lo, up) in bounds[m].items():
            out[f"width_{m}_{cp}"] = (1.0 - up) - lo
    for key in merged:
        out[f"ever_{key}"] = merged[key]
        lo, up = merged_bounds[key]
        out[f"width_{key}_{n}"] = (1.0 - up) - lo
    ever_el = False
    for look in looks(n):
        ci = interval(Sample(w[:look], r[:look], wmin=wmin, wmax=wmax).compress(),
                      confidence_level=level)
        out_now = not (ci.low <= value <= ci.high)
        ever_el |= out_now
        if look in checkpoints(n):
            out[f"width_el_{look}"] = ci.high - ci.low
        if look == n:
            out["miss_el_at_n"] = out_now
    out["ever_el"] = ever_el
    return out


def _shards(x, v, thr, shard, merged, merged_bounds, side):
    """Merged sequences of the round-robin shards: ever excluded (at every global t) and at N."""
    n = x.size
    bet_paths, states, xs, cs = [], [], [], []
    for k in range(SHARDS):
        xk = x[shard == k]
        ck = _betting.Side(thr).bets(xk)
        xs.append(xk), cs.append(ck)
        bet_paths.append(np.cumsum(np.log1p(ck * (xk / v - 1.0))) if v > 0 else np.full(xk.size, -np.inf))
        states.append(_ddrm.Side().advance(xk))
    # Global time g: shard k has seen seen_k(g) rows (0 before its first).
    seen = [np.cumsum(shard == k) for k in range(SHARDS)]
    total = sum(_at(sk, p) for sk, p in zip(seen, bet_paths))
    merged["betting-product"] |= bool(np.any(total >= thr))
    merged["betting-union"] |= any(bool(np.any(p >= thr + math.log(SHARDS))) for p in bet_paths)
    # The DDRM product: the shards' running sums added at every global time.
    summed = [sum(_at(sk, part) for sk, part in zip(seen, parts)) for parts in zip(*states)]
    merged["ddrm-product"] |= _ddrm.reaches(thr, v, *summed)
    merged["ddrm-union"] |= any(_ddrm.reaches(thr + math.log(SHARDS), v, *st) for st in states)
    merged_bounds["betting-product"][side] = _betting.exact_bound(np.concatenate(xs), np.concatenate(cs), thr)
    merged_bounds["betting-union"][side] = max(
        _betting.exact_bound(xk, ck, thr + math.log(SHARDS)) for xk, ck in zip(xs, cs))
    t, s, vv = (np.concatenate([st[i][-1:] for st in states]) for i in range(3))
    merged_bounds["ddrm-product"][side] = float(_ddrm.lower_bounds(
        thr, t.sum(keepdims=True), s.sum(keepdims=True), vv.sum(0, keepdims=True))[0])
    merged_bounds["ddrm-union"][side] = float(_ddrm.lower_bounds(thr + math.log(SHARDS), t, s, vv).max())


def _at(seen, rows):
    """``rows[seen - 1]`` (a shard's value after its ``seen``-th row), 0 where ``seen`` is 0."""
    out = rows[np.maximum(seen - 1, 0)]
    out[seen == 0] = 0.0
    return out


def _task(args):
    return replicate(*args)


def run_study(*, n=DEFAULT_N, replicates=DEFAULT_REPLICATES, seed=DEFAULT_SEED,
              environments=ENVIRONMENTS, jobs=1, progress=True) -> dict:
    """All replicates of every environment; returns ``{"rows": [...], "wall_time": s, ...}``."""
    start, cpu = time.time(), _cpu()
    tasks = [(env, n, seed, i) for env in environments for i in range(replicates)]
    rows = []
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            for i, row in enumerate(pool.map(_task, tasks, chunksize=4)):
                rows.append(row)
                _progress(progress, i + 1, len(tasks), start)
    else:
        for i, task in enumerate(tasks):
            rows.append(_task(task))
            _progress(progress, i + 1, len(tasks), start)
    return {"rows": rows, "n": n, "replicates": replicates, "seed": seed, "jobs": jobs,
            "environments": tuple(environments), "wall_time": time.time() - start,
            "cpu_time": _cpu() - cpu}


def _cpu() -> float:
    """CPU seconds of this process and its finished workers."""
    import resource

    return time.process_time() + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime


def _progress(enabled, done, total, start):
    if enabled and (done == total or done % 20 == 0):
        print(f"  {done}/{total} logs, {format_seconds(time.time() - start)}", file=sys.stderr,
              flush=True)


def coverage_table(study) -> list:
    """Per environment and method: the fraction of logs whose truth was ever excluded, and its SE."""
    out = []
    keys = [("betting", METHODS["betting"] + ", every t"), ("ddrm", METHODS["ddrm"] + ", every t"),
            ("el", f"EL interval, {len(looks(study['n']))} looks"), ("el-at-n", "EL interval, at N only")]
    keys += [(f"{m}-{how}", f"{METHODS[m]}, {label}") for m in ("betting", "ddrm")
             for how, label in MERGES.items()]
    for env in study["environments"]:
        rows = [r for r in study["rows"] if r["env"] == env]
        for key, label in keys:
            flags = np.array([r["miss_el_at_n"] if key == "el-at-n" else r[f"ever_{key}"] for r in rows], float)
            p = float(flags.mean())
            out.append({"environment": env, "method": key, "label": label, "logs": len(rows),
                        "ever_excluded": p, "se": math.sqrt(p * (1 - p) / len(rows))})
    return out


def width_table(study) -> list:
    """Per environment, checkpoint and method: the mean width and its ratio to EL's."""
    out = []
    for env in study["environments"]:
        rows = [r for r in study["rows"] if r["env"] == env]
        for cp in checkpoints(study["n"]):
            el = np.mean([r[f"width_el_{cp}"] for r in rows])
            names = ["betting", "ddrm", "el"]
            if cp == study["n"]:
                names += [f"{m}-{how}" for m in ("betting", "ddrm") for how in MERGES]
            for m in names:
                width = float(np.mean([r[f"width_{m}_{cp}"] for r in rows]))
                out.append({"environment": env, "t": cp, "method": m, "mean_width": width,
                            "ratio_to_el": width / el})
    return out


def write(study, out, *, command: str, plots: bool = True) -> list:
    """Write ``coverage.csv``, ``widths.csv``, ``summary.md`` and ``sequences.png`` into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cov, wid = coverage_table(study), width_table(study)
    paths = [write_csv(out / "coverage.csv", list(cov[0]), cov, digits=6),
             write_csv(out / "widths.csv", list(wid[0]), wid, digits=6)]
    figure = None
    if plots:
        figure = _figure(study, wid, out / "sequences.png")
        paths.append(figure)
    summary = out / "summary.md"
    summary.write_text(_summary(study, cov, wid, command, figure), encoding="utf-8")
    paths.append(summary)
    return paths


def _figure(study, wid, path: Path) -> Path:
    """Left: one epsilon-greedy log's sequences and EL looks; right: mean widths against t."""
    from ..cli import sequence_plot as _sequence_plot
    from ..cli.plot import require_matplotlib
    from ..sequences import betting_sequence, ddrm_sequence

    require_matplotlib()
    from matplotlib.figure import Figure

    n = study["n"]
    w, r, value, wmin, wmax = draw("epsilon-greedy", n, _rng(study["seed"], "epsilon-greedy", 0))
    el = _sequence_plot.el_looks(Sample(w, r, wmin=wmin, wmax=wmax), n, confidence_level=0.95)
    fig = Figure(figsize=(12, 4.6), dpi=110, layout="constrained")
    left, right = fig.subplots(1, 2)
    _sequence_plot.draw(left, {"betting CS": betting_sequence(w, r), "DDRM CS": ddrm_sequence(w, r)},
                        el, truth=value, title=f"one epsilon-greedy log (replicate 0), N = {n}")
    lo = min(value - 0.15, 0.4)
    left.set_ylim(max(0.0, lo), min(1.0, value + 0.15))
    styles = {"betting": ("tab:blue", "o"), "ddrm": ("tab:green", "s"), "el": ("tab:red", "^")}
    lines = {"synthetic": "-", "epsilon-greedy": "--", "drifting": ":"}
    for env in study["environments"]:
        for m, (colour, marker) in styles.items():
            rows = [x for x in wid if x["environment"] == env and x["method"] == m]
            right.plot([x["t"] for x in rows], [x["mean_width"] for x in rows], color=colour,
                       marker=marker, ls=lines[env], label=f"{METHODS[m]}, {env}")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("t")
    right.set_ylabel("mean width (95%)")
    right.set_title(f"mean width over {study['replicates']} logs per environment", fontsize=10)
    right.grid(alpha=0.3, which="both")
    right.legend(fontsize=7, ncol=3)
    fig.savefig(path)
    return path


def _summary(study, cov, wid, command, figure) -> str:
    lines = ["# Confidence sequences against the EL interval: summary", "",
             f"Command: `{command}`", "",
             f"{study['replicates']} logs of N = {study['n']} per environment; wall time "
             f"{format_seconds(study['wall_time'])} ({format_seconds(study['cpu_time'])} of "
             f"CPU) with {study['jobs']} job(s) on "
             f"{machine_description()}. Confidence level 0.95. The page "
             "[Confidence sequences](../sequences.md) explains the methods and the environments.", "",
             "## How often the true value is ever excluded", "",
             "A 95% confidence sequence may exclude the truth at some t in at most 5% of logs. "
             "The EL interval is looked at 5 times per decade from t = 100 (what a team that "
             "peeks does), and at N alone (what it is made for).", ""]
    by_env: dict[str, dict[str, dict]] = {}
    for row in cov:
        by_env.setdefault(row["label"], {})[row["environment"]] = row
    header = ["method"] + [f"{env}: ever excluded (SE)" for env in study["environments"]]
    body = [[label] + [f"{d[e]['ever_excluded']:.3f} ({d[e]['se']:.3f})" for e in study["environments"]]
            for label, d in by_env.items()]
    lines += md_table(header, body) + ["", "## Mean width at t", ""]
    header = ["environment", "t"] + [METHODS[m] for m in METHODS] + [
        "betting / EL", "DDRM / EL"]
    body = []
    for env in study["environments"]:
        for cp in checkpoints(study["n"]):
            got = {x["method"]: x for x in wid if x["environment"] == env and x["t"] == cp}
            body.append([env, cp] + [f"{got[m]['mean_width']:.4f}" for m in METHODS] +
                        [f"{got['betting']['ratio_to_el']:.2f}", f"{got['ddrm']['ratio_to_el']:.2f}"])
    lines += md_table(header, body)
    lines += ["", f"## Merging {SHARDS} shards (the log dealt round-robin), mean width at N", ""]
    header = ["environment", "one sequence on the whole log"] + [
        f"{METHODS[m]}, {label}" for m in ("betting", "ddrm") for label in MERGES.values()]
    body = []
    for env in study["environments"]:
        got = {x["method"]: x["mean_width"] for x in wid if x["environment"] == env and x["t"] == study["n"]}
        body.append([env, f"betting {got['betting']:.4f}, DDRM {got['ddrm']:.4f}"] +
                    [f"{got[f'{m}-{how}']:.4f}" for m in ("betting", "ddrm") for how in MERGES])
    lines += md_table(header, body)
    if figure is not None:
        lines += ["", f"![sequences]({Path(figure).name})", "",
                  "Left: one epsilon-greedy log, the sequences' bounds at every t and the EL "
                  "interval at about 30 looks. Right: mean widths against t."]
    return "\n".join(lines) + "\n"
