r"""Coverage and width of EL intervals with moment constraints (issue 13): control variates and
the difference of two policies, on a simulated contextual bandit with known true values.

**Environment.** Contexts ``x ~ U[0, 1]``, ``K = 3`` actions. Logging: epsilon-greedy
(``epsilon = 0.3``) around action 0 for ``x < 0.5`` and 1 otherwise (0.8 on the greedy action,
0.1 on each other), so weights lie in ``[0, 10]``. Rewards ``mu(x, a) + U(-0.1, 0.1)`` in
``[0, 1]`` (:func:`mean_reward`). Target ``pi_a`` deterministic (:func:`policy_a`), ``pi_b``
stochastic (:func:`policy_b`); reward model ``r_hat = mu + 0.08 sin(6x + 2a)``
(:func:`reward_model`). The true values are exact (:func:`true_values`): the integrand is a
polynomial of degree 2 between the breakpoints, integrated by Gauss-Legendre on each piece.

**Study.** For each ``N`` and replicate ``i`` one log is drawn from the stream
``SeedSequence(seed, spawn_key=(N, i))`` (:func:`~elcvx.experiments.synthetic.replicate_rng`;
results depend neither on ``jobs`` nor on the chunking). On each log (:data:`METHODS`): the plain
EL interval of ``V(pi_a)``; EL with the reward model's doubly robust control variate
(:func:`elcvx.constraints.reward_model`); EL with the per-action control variates
(:func:`elcvx.constraints.action_control_variates`); for ``V(pi_a) - V(pi_b)``,
:func:`elcvx.difference` and the naive ``[low_a - high_b, high_a - low_b]`` from two
separate EL intervals (conservative). Estimates: :func:`elcvx.estimate` with the same
constraints. Every call takes the fast path; an exception is a failure, counted per method and
listed with its replicate, never dropped.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..evaluation import evaluate_all
from ..errors import InvalidInputError
from ._running import Progress, ReplicatedIntervals, check_integers, format_seconds, machine_description, md_table, run_tasks, write_csv
from .synthetic import replicate_rng

__all__ = ["METHODS", "mean_reward", "reward_model", "logging_policy", "policy_a", "policy_b",
           "true_values", "Log", "draw_log", "evaluate", "run_study", "ConstraintsStudy"]

DEFAULT_SIZES = (100, 300, 1_000, 3_000, 10_000)
#: 500, not 1000: about 0.2 s of CPU per log, and the full run should fit in ~25 minutes on a
#: shared 2-core machine (the standard error of a 95% coverage is then 0.0097).
DEFAULT_REPLICATES = 500
DEFAULT_SEED = 13
EPSILON, N_ACTIONS, NOISE = 0.3, 3, 0.1
WMAX = N_ACTIONS / EPSILON  # 1 / (the smallest logging probability)
BREAKS = (0.0, 0.4, 0.5, 0.6, 0.7, 1.0)
#: name -> (label, the quantity it bounds: "value" = V(pi_a), "difference" = V(pi_a) - V(pi_b)).
METHODS = {
    "el": ("EL", "value"),
    "el-reward-model": ("EL + reward-model CV", "value"),
    "el-action-cvs": ("EL + per-action CVs", "value"),
    "difference": ("difference (one EL model)", "difference"),
    "difference-naive": ("difference, naive (two EL intervals)", "difference"),
}
_M = tuple(METHODS)
_REFERENCE = {"value": "el", "difference": "difference-naive"}


def mean_reward(x) -> np.ndarray:
    """``mu(x, a)``: an ``(n, K)`` array of the true mean rewards."""
    x = np.asarray(x, dtype=float)
    return np.stack([0.9 - 0.8 * x, 0.2 + 0.6 * x, 0.1 + 0.8 * x**2], axis=-1)


def reward_model(x) -> np.ndarray:
    """``r_hat(x, a) = mu(x, a) + 0.08 sin(6 x + 2 a)``, in ``[0.02, 0.98]``."""
    x = np.asarray(x, dtype=float)
    return mean_reward(x) + 0.08 * np.sin(6.0 * x[:, None] + 2.0 * np.arange(N_ACTIONS))


def _spread(x, choice, top):
    """Probability ``top`` on action ``choice(x)``, the rest spread evenly on the others."""
    p = np.full((np.size(x), N_ACTIONS), (1.0 - top) / (N_ACTIONS - 1))
    p[np.arange(np.size(x)), choice] = top
    return p


def logging_policy(x) -> np.ndarray:
    """Epsilon-greedy (epsilon = 0.3) around action 0 for ``x < 0.5``, action 1 otherwise."""
    return _spread(x, (np.asarray(x) >= 0.5).astype(int), 1.0 - EPSILON + EPSILON / N_ACTIONS)


def policy_a(x) -> np.ndarray:
    """The deterministic target: action 0 on [0, 0.4), 1 on [0.4, 0.7), 2 on [0.7, 1]."""
    return _spread(x, np.searchsorted([0.4, 0.7], x, side="right"), 1.0)


def policy_b(x) -> np.ndarray:
    """The stochastic second policy: 0.5 on action 0 (x < 0.6) or 2 (x >= 0.6), 0.25 others."""
    return _spread(x, np.where(np.asarray(x) < 0.6, 0, 2), 0.5)


def true_values() -> tuple:
    """``(V(pi_a), V(pi_b))``, exact (Gauss-Legendre on the polynomial pieces)."""
    nodes, weights = np.polynomial.legendre.leggauss(8)
    out = []
    for policy in (policy_a, policy_b):
        total = 0.0
        for lo, hi in zip(BREAKS[:-1], BREAKS[1:]):
            x = lo + (hi - lo) * (nodes + 1.0) / 2.0
            total += (hi - lo) / 2.0 * float(weights @ np.sum(policy(x) * mean_reward(x), axis=1))
        out.append(total)
    return tuple(out)


#: One logged data set: contexts, logged actions, rewards and logging probabilities.
Log = NamedTuple("Log", [("contexts", np.ndarray), ("actions", np.ndarray),
                         ("rewards", np.ndarray), ("propensities", np.ndarray)])


def draw_log(n: int, rng: np.random.Generator) -> Log:
    """``n`` rows: ``x``, then the action, then the reward's noise (in that order of draws)."""
    x = rng.random(n)
    p = logging_policy(x)
    a = np.minimum((rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1), N_ACTIONS - 1)
    rows = np.arange(n)
    r = np.clip(mean_reward(x)[rows, a] + rng.uniform(-NOISE, NOISE, n), 0.0, 1.0)
    return Log(x, a, r, p[rows, a])


def evaluate(log: Log, *, confidence_level: float = 0.95):
    """Every method on one log: ``(estimates, lows, highs, errors)``, arrays in :data:`METHODS`'
    order (NaN where a method failed) and ``{method: "ExceptionType: message"}``."""
    import elcvx
    from elcvx import constraints as mc

    rows = np.arange(log.actions.size)
    pa, pb = policy_a(log.contexts), policy_b(log.contexts)
    sa = elcvx.Sample(pa[rows, log.actions] / log.propensities, log.rewards, wmax=WMAX)
    sb = elcvx.Sample(pb[rows, log.actions] / log.propensities, log.rewards, wmax=WMAX)
    r_hat = reward_model(log.contexts)

    def el(sample, **model):
        ev = evaluate_all(sample, ("el",), ("el-chi2",), confidence_level=confidence_level,
                          rho="midpoint", method="fast", **model)
        return (ev.estimates["el"], *ev.intervals["el-chi2"])

    def joint():
        d = elcvx.difference(sa, sb, confidence_level=confidence_level, method="fast")
        return d.estimate, d.low, d.high

    def naive():
        (ea, la, ha), (eb, lb, hb) = el(sa), el(sb)
        return ea - eb, la - hb, ha - lb

    calls = {"el": lambda: el(sa),
             "el-reward-model": lambda: el(sa, constraints=mc.reward_model(
                 sa, r_hat[rows, log.actions], np.sum(pa * r_hat, axis=1), deterministic=True)),
             "el-action-cvs": lambda: el(sa, **dict(zip(("constraints", "atoms"),
                                                        mc.action_control_variates(sa, log.actions, pa)))),
             "difference": joint, "difference-naive": naive}
    out = np.full((3, len(_M)), np.nan)
    errors = {}
    for j, name in enumerate(_M):
        try:
            result = np.array(calls[name](), dtype=float)
            if not np.all(np.isfinite(result)) or result[1] > result[2]:
                raise ArithmeticError(f"not a finite interval: {result.tolist()}")
            out[:, j] = result
        except Exception as exc:  # noqa: BLE001 -- every failure is counted and reported
            errors[name] = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return out[0], out[1], out[2], errors


def _run_chunk(task):
    """Replicates ``start..stop-1`` at size ``n`` (a process-pool task)."""
    seed, n, start, stop, level = task
    cpu0 = time.process_time()
    est, low, high = (np.empty((stop - start, len(_M))) for _ in range(3))
    errors = []
    for j, i in enumerate(range(start, stop)):
        est[j], low[j], high[j], err = evaluate(draw_log(n, replicate_rng(seed, n, i)),
                                                confidence_level=level)
        errors += [(n, i, m, msg) for m, msg in err.items()]
    return n, start, est, low, high, errors, time.process_time() - cpu0


@dataclass(eq=False)
class ConstraintsStudy(ReplicatedIntervals):
    """Every replicate of :func:`run_study`: ``estimates``, ``lows``, ``highs`` map ``n`` to
    ``(replicates, len(METHODS))`` arrays (NaN for a failure); ``errors`` lists ``(n, replicate,
    method, message)``; ``truth`` is ``{"value": V(pi_a), "difference": V(pi_a) - V(pi_b)}``."""

    errors: list

    def _truths(self):
        return np.array([self.truth[METHODS[m][1]] for m in _M])

    def replicate_rows(self) -> list:
        """Tidy rows, one per (n, replicate, method)."""
        messages = {(n, i, m): msg for n, i, m, msg in self.errors}
        rows, truths = [], self._truths()
        for n in self.sizes:
            for i in range(self.replicates):
                for j, m in enumerate(_M):
                    lo, hi, v = self.lows[n][i, j], self.highs[n][i, j], truths[j]
                    rows.append({"n": n, "replicate": i, "method": m, "truth": v,
                                 "estimate": self.estimates[n][i, j], "low": lo, "high": hi,
                                 "covered": "" if np.isnan(lo) else int(lo <= v <= hi),
                                 "width": hi - lo, "error": messages.get((n, i, m), "")})
        return rows

    def summary_rows(self) -> list:
        """Per (n, method): coverage (binomial SE), mean width, MSE (SE), failures."""
        rows = []
        for n in self.sizes:
            ok = ~np.isnan(self.lows[n])
            width = self.highs[n] - self.lows[n]
            covered = (self.lows[n] <= self._truths()) & (self._truths() <= self.highs[n])
            sq = (self.estimates[n] - self._truths()) ** 2
            for j, m in enumerate(_M):
                k = int(ok[:, j].sum())
                cov = float(covered[ok[:, j], j].mean()) if k else math.nan
                ref = _M.index(_REFERENCE[METHODS[m][1]])
                mean_w = float(width[ok[:, j], j].mean()) if k else math.nan
                rows.append({
                    "n": n, "method": m, "runs": k, "failures": self.replicates - k,
                    "coverage": cov, "coverage_se": math.sqrt(cov * (1 - cov) / k) if k else math.nan,
                    "mean_width": mean_w,
                    "width_ratio": mean_w / float(np.nanmean(width[:, ref])),
                    "mse": float(sq[ok[:, j], j].mean()) if k else math.nan,
                    "mse_se": float(sq[ok[:, j], j].std(ddof=1) / math.sqrt(k)) if k > 1 else math.nan,
                })
        return rows

    def write(self, out, *, plots: bool = True, command: str | None = None) -> list:
        """Write ``summary.csv``, ``replicates.csv.gz``, ``constraints.png`` and ``summary.md``."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        table = self.summary_rows()
        rep = self.replicate_rows()
        written = [write_csv(out / "summary.csv", list(table[0]), table),
                   write_csv(out / "replicates.csv.gz", list(rep[0]), rep, digits=8)]
        figures = []
        if plots:
            try:
                figures = [_plot(table, out / "constraints.png", self.confidence_level)]
            except ImportError as exc:
                print(f"elcvx: figure skipped ({exc}); pip install 'elcvx[plot]'", file=sys.stderr)
        summary = out / "summary.md"
        summary.write_text(_summary(self, table, [f.name for f in figures], command),
                           encoding="utf-8")
        return written + figures + [summary]


def run_study(sizes=DEFAULT_SIZES, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED,
              *, jobs: int = 2, chunk_size: int = 25, confidence_level: float = 0.95,
              progress: bool = True, stream=None) -> ConstraintsStudy:
    """Run every method on ``replicates`` logs per size (see the module docstring)."""
    sizes = tuple(int(n) for n in sizes)
    if not sizes or min(sizes) < 10 or len(set(sizes)) != len(sizes):
        raise InvalidInputError(f"sizes={sizes!r} must be distinct sample sizes >= 10")
    check_integers(replicates=(replicates, 2), jobs=(jobs, 1), chunk_size=(chunk_size, 1), seed=(seed, 0))
    if not 0 < confidence_level < 1:
        raise InvalidInputError(f"confidence_level={confidence_level!r} must lie in (0, 1)")
    stream = stream or sys.stderr
    tasks = [(int(seed), n, s, min(s + chunk_size, replicates), float(confidence_level))
             for n in sizes for s in range(0, replicates, chunk_size)]
    est, low, high = ({n: np.empty((replicates, len(_M))) for n in sizes} for _ in range(3))
    errors, cpu = [], [0.0]
    t0 = time.perf_counter()

    bar = Progress("constraints", len(sizes) * replicates, enabled=progress, stream=stream)

    def collect(result):
        n, start, e, lo, hi, err, seconds = result
        sl = slice(start, start + e.shape[0])
        est[n][sl], low[n][sl], high[n][sl] = e, lo, hi
        errors.extend(err)
        cpu[0] += seconds
        bar.update(e.shape[0], f"N={n:<6d} replicates {start}-{start + e.shape[0] - 1} | "
                   f"{len(errors)} failures", final=True)

    run_tasks(_run_chunk, tasks, int(jobs), collect)
    va, vb = true_values()
    return ConstraintsStudy(sizes, int(replicates), int(seed), float(confidence_level),
                            {"value": va, "difference": va - vb}, est, low, high, sorted(errors),
                            wall_time=time.perf_counter() - t0, cpu_time=cpu[0], jobs=int(jobs))


def _plot(table, path, level):
    from .plots import _DPI, _pyplot

    plt = _pyplot()
    fig, (ax_c, ax_w) = plt.subplots(1, 2, figsize=(11.5, 4.3))
    styles = {"el": ("#d62728", "o", "-"), "el-reward-model": ("#1f77b4", "s", "-"),
              "el-action-cvs": ("#2ca02c", "^", "-"), "difference": ("#9467bd", "D", "-"),
              "difference-naive": ("#7f7f7f", "v", "--")}
    for m, (label, _) in METHODS.items():
        s = sorted((r for r in table if r["method"] == m), key=lambda r: r["n"])
        n = [r["n"] for r in s]
        color, marker, ls = styles[m]
        cov = np.array([r["coverage"] for r in s])
        se = np.array([r["coverage_se"] for r in s])
        ax_c.plot(n, cov, ls, color=color, marker=marker, ms=4, label=label)
        ax_c.fill_between(n, cov - 2 * se, np.minimum(1.0, cov + 2 * se), color=color, alpha=0.15, lw=0)
        ax_w.plot(n, [r["mean_width"] for r in s], ls, color=color, marker=marker, ms=4, label=label)
    ax_c.axhline(level, color="k", lw=0.8, ls=":")
    ax_c.set_ylim(min(level - 0.1, ax_c.get_ylim()[0]), 1.005)
    ax_w.set_yscale("log")
    for ax, what in ((ax_c, "coverage (shaded: ±2 SE)"), (ax_w, "mean width")):
        ax.set(xscale="log", xlabel="sample size N", ylabel=what.split(" (")[0])
        ax.set_title(what, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    ax_w.legend(fontsize=8, frameon=False)
    fig.suptitle(f"Moment constraints: {100 * level:g}% EL intervals of V(pi_a) and of "
                 "V(pi_a) - V(pi_b)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return Path(path)


def _summary(study: ConstraintsStudy, table, figures, command) -> str:
    from .. import __version__

    level, sizes = study.confidence_level, study.sizes
    cell = {(r["n"], r["method"]): r for r in table}
    va, vb = true_values()
    se = math.sqrt(level * (1 - level) / study.replicates)
    why = ("; the default is 500 rather than 1000 so that the run fits in about 25 minutes on a "
           "shared 2-core machine" if study.replicates == DEFAULT_REPLICATES else "")
    lines = [
        "# Moment constraints study: summary", "",
        "Written by `elcvx reproduce constraints`; every number below is computed by "
        "`elcvx/experiments/constraints_study.py` from the run it describes.", "",
        "## Set-up", "",
        f"* Command: `{command or 'elcvx reproduce constraints'}`",
        f"* elcvx {__version__}; seed {study.seed}; {study.replicates} logs per N (the standard "
        f"error of a coverage of {level:g} is {se:.4f}{why}); sizes {', '.join(map(str, sizes))}; "
        f"confidence level {level:g}; the fast path throughout.",
        f"* Wall time {format_seconds(study.wall_time)} ({study.wall_time:.0f} s) with {study.jobs} "
        f"worker process(es) on {machine_description()}; CPU time "
        f"{format_seconds(study.cpu_time)} ({1e3 * study.cpu_time / (len(sizes) * study.replicates):.0f}"
        " ms per log, all methods).",
        "* Contexts x ~ U[0, 1], K = 3 actions, epsilon-greedy logging (epsilon = 0.3: 0.8 on the "
        "greedy action, 0 for x < 0.5 and 1 otherwise, 0.1 on the others), wmax = 10. Rewards "
        "mu(x, a) + U(-0.1, 0.1), mu(x, .) = (0.9 - 0.8x, 0.2 + 0.6x, 0.1 + 0.8x^2). pi_a "
        "deterministic (action 0 on [0, 0.4), 1 on [0.4, 0.7), 2 on [0.7, 1]); pi_b stochastic "
        "(0.5 on action 0 for x < 0.6, on 2 otherwise; 0.25 on the others). Reward model "
        "r_hat(x, a) = mu(x, a) + 0.08 sin(6x + 2a).",
        f"* True values (exact): V(pi_a) = {va:.10f}, V(pi_b) = {vb:.10f}, "
        f"V(pi_a) - V(pi_b) = {va - vb:.10f}.",
        "* Methods: " + "; ".join(f"`{m}` = {lab}" for m, (lab, _) in METHODS.items()) + ". The "
        "naive difference is [low_a - high_b, high_a - low_b] from two separate EL intervals: "
        "conservative by construction: it covers whenever both intervals do, and one interval's "
        "miss leaves it uncovered only if it exceeds the other interval's whole margin.", "",
    ]
    lines += (["## Figure", ""] + [f"![{f}]({f})" for f in figures] + [""]) if figures else []
    lines += ["## Results", "",
              "Coverage (binomial SE; bold: below the nominal level by more than 2 SE), mean width, "
              "width relative to the reference (`el` for V(pi_a), the naive interval for the "
              "difference), MSE of the estimate (SE), failures.", ""]
    rows = []
    for n in sizes:
        for m in _M:
            r = cell[n, m]
            c = f"{r['coverage']:.3f} ({r['coverage_se']:.3f})"
            low = r["coverage"] + 2 * r["coverage_se"] < level
            rows.append([n, m, f"**{c}**" if low else c, f"{r['mean_width']:.4f}",
                         f"{r['width_ratio']:.3f}", f"{r['mse']:.3g} ({r['mse_se']:.2g})",
                         r["failures"]])
    lines += md_table(["N", "method", "coverage (SE)", "mean width", "width / ref",
                        "MSE (SE)", "failures"], rows) + [""]
    lines += ["## Checks", ""]
    for m, (label, _) in METHODS.items():
        short = [n for n in sizes
                 if cell[n, m]["coverage"] + 2 * cell[n, m]["coverage_se"] < level]
        cov = [cell[n, m]["coverage"] for n in sizes]
        lines.append(f"* {label}: coverage >= {level:g} within 2 SE at every N? "
                     f"{'yes' if not short else 'no, at N = ' + ', '.join(map(str, short))} "
                     f"(coverage from {min(cov):.3f} to {max(cov):.3f}).")
    for m in ("el-reward-model", "el-action-cvs", "difference"):
        ratios = ", ".join(f"{cell[n, m]['width_ratio']:.3f}" for n in sizes)
        lines.append(f"* Mean width of {METHODS[m][0]} / {METHODS[_REFERENCE[METHODS[m][1]]][0]} "
                     f"at N = {', '.join(map(str, sizes))}: {ratios}.")
    lines += ["", "## Failures", ""]
    if not study.errors:
        lines.append("None: every method returned an interval on every log.")
    else:
        lines.append(f"{len(study.errors)} (method, log) pairs raised; the first ones (reproduce "
                     "with `evaluate(draw_log(n, replicate_rng(seed, n, i)))`):")
        lines += [""] + [f"* N = {n}, replicate {i}, `{m}`: {msg[:300]}"
                         for n, i, m, msg in study.errors[:10]]
    return "\n".join(lines) + "\n"
