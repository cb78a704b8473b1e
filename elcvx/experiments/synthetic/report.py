"""The synthetic study's outputs: ``mse.csv``, ``intervals.csv``, the figures and ``summary.md``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .. import plots as _figures
from .._running import format_seconds, machine_description, md_table, write_csv
from .environment import SECOND_MOMENT, epsilon_greedy_story
from .methods import _EST, _INT, ESTIMATORS, EVENTS, INTERVAL_METHODS

__all__ = ["write", "summary_markdown"]


def write(study, out, *, plots: bool = True, command: str | None = None) -> list:
    """Write ``mse.csv``, ``intervals.csv``, ``summary.md`` and (with matplotlib) the figures of
    ``study`` (a :class:`SyntheticStudy`) into ``out``.

    Returns the paths written. Without matplotlib the figures are skipped with a message on
    stderr (install the ``plot`` extra).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    mse_rows, int_rows = study.mse_table(), study.interval_table()
    written = [
        write_csv(out / "mse.csv", ["n", "estimator", "mse", "se"], mse_rows),
        write_csv(out / "intervals.csv", ["n", "method", "coverage", "coverage_se",
                                          "mean_width", "width_p05", "width_p95"], int_rows),
    ]
    figures = []
    if plots:
        try:
            figures = [_figures.plot_mse(mse_rows, out / "mse.png", labels=ESTIMATORS),
                       _figures.plot_intervals(int_rows, out / "intervals.png",
                                               labels=INTERVAL_METHODS)]
        except ImportError as exc:
            print(f"elcvx: figures skipped ({exc}); install the 'plot' extra: "
                  "pip install 'elcvx[plot]'", file=sys.stderr)
    summary = out / "summary.md"
    summary.write_text(summary_markdown(study, mse_rows, int_rows, figures=[f.name for f in figures],
                                        command=command), encoding="utf-8")
    return written + figures + [summary]


def _g(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}" if np.isfinite(x) else "nan"


def _significance(mean: float, se: float) -> str:
    """``<``/``>``: the difference is more than 2 SE below/above 0; ``≈`` otherwise."""
    if mean + 2 * se < 0:
        return "<"
    if mean - 2 * se > 0:
        return ">"
    return "≈"


def summary_markdown(study, mse_rows, int_rows, *, figures=(), command=None) -> str:
    """The Markdown summary of ``study`` (a :class:`SyntheticStudy`): set-up, the tables of
    ``mse_rows`` and ``int_rows``, and the checks of the paper's claims."""
    from ... import __version__

    sizes = study.sizes
    level = study.confidence_level
    mse = {(r["n"], r["estimator"]): r for r in mse_rows}
    ivs = {(r["n"], r["method"]): r for r in int_rows}
    p = np.asarray(study.probs)
    w = np.asarray(study.weights)
    story = epsilon_greedy_story(study.weights, SECOND_MOMENT)
    lines = [
        "# Synthetic study (the paper's Figures 1 and 2): summary",
        "",
        "Written by `elcvx reproduce synthetic`; every number below is computed by "
        "`elcvx/experiments/synthetic/` from the run it describes.",
        "",
        "## Set-up",
        "",
        f"* Command: `{command or 'elcvx reproduce synthetic'}`",
        f"* elcvx {__version__}; seed {study.seed}; {study.replicates} environment draws per N; "
        f"confidence level {level:g}.",
        f"* Sample sizes N: {', '.join(str(n) for n in sizes)}.",
        f"* Wall time {format_seconds(study.wall_time)} ({study.wall_time:.1f} s) with {study.jobs} "
        f"worker process(es) on {machine_description()}; CPU time in the workers "
        f"{format_seconds(study.cpu_time)} ({1e3 * study.cpu_time / (len(sizes) * study.replicates):.1f} ms "
        "per replicate).",
        f"* Importance weights {tuple(float(x) for x in w)} (wmin = {w[0]:g}, wmax = {w[-1]:g}) with "
        f"probabilities {', '.join(f'{x:.7g}' for x in p)} under the logging policy: the maximum-entropy "
        f"law with E[w] = {float(p @ w):.12g} and E[w^2] = {float(p @ (w * w)):.12g} (unique: three "
        "support points, three linear constraints).",
        f"* Epsilon-greedy story: K = {story['actions']} actions, epsilon = {story['epsilon']} "
        f"(greedy action 1/{w[1]:g}, others 1/{w[-1]:g}), deterministic target agreeing with the "
        f"greedy action on a fraction {story['agree']} = {float(story['agree']):.4f} of contexts.",
        "* Each draw: V ~ Uniform[0, 1], then P(r = 1 | w) uniform on its feasible range given V "
        "(weights in increasing order, the last one fixed by E[w r] = V); one sample of N "
        "examples (multinomial counts of the six (w, r) cells).",
        "* Estimators: Constant = 1/2; ClippedDR = clip(1/2 + mean(w (r - 1/2)), 0, 1); SNIPS "
        "(1/2 when every weight is 0); IPS; EMP; CR(-2) and EL with rho = 1/2.",
        "* Intervals: EL and CR(-2) with the chi-square(1) and F(1, N-1) calibrations; Binomial = "
        "Clopper-Pearson on w r / wmax (fractional successes); asymptotic Gaussian around IPS "
        "(ddof = 1), clipped to [0, 1].",
        "",
    ]
    if figures:
        lines += ["## Figures", ""] + [f"![{f}]({f})" for f in figures] + [""]

    # -- MSE -----------------------------------------------------------------------------------
    lines += ["## Mean squared error (Figure 1)", "",
              "MSE (standard error of the mean); the lowest MSE at each N in bold.", ""]
    rows = []
    for n in sizes:
        vals = [mse[n, e]["mse"] for e in _EST]
        best = int(np.argmin(vals))
        cells = []
        for j, e in enumerate(_EST):
            c = f"{_g(mse[n, e]['mse'])} ({_g(mse[n, e]['se'], 2)})"
            cells.append(f"**{c}**" if j == best else c)
        rows.append([n] + cells)
    lines += md_table(["N"] + list(ESTIMATORS.values()), rows) + [""]

    others = [e for e in _EST if e != "el"]
    lines += ["### EL against each estimator, paired over the same draws", "",
              "Mean of sq. error(EL) - sq. error(other) ± its standard error; `<`: EL lower by more "
              "than 2 SE, `>`: EL higher by more than 2 SE, `≈`: within 2 SE.", ""]
    rows = []
    for n in sizes:
        cells = []
        for e in others:
            m, se = study.paired_mse_difference(n, e)
            cells.append(f"{_significance(m, se)} {_g(m, 2)} ± {_g(se, 2)}")
        rows.append([n] + cells)
    lines += md_table(["N"] + [f"EL − {ESTIMATORS[e]}" for e in others], rows) + [""]

    # -- intervals -----------------------------------------------------------------------------
    lines += [f"## Intervals at {100 * level:g}% (Figure 2)", "",
              f"### Coverage (binomial standard error); bold: below {level:g} by more than 2 SE", ""]
    rows = []
    for n in sizes:
        cells = []
        for m in _INT:
            r = ivs[n, m]
            c = f"{r['coverage']:.4f} ({r['coverage_se']:.4f})"
            cells.append(f"**{c}**" if r["coverage"] + 2 * r["coverage_se"] < level else c)
        rows.append([n] + cells)
    lines += md_table(["N"] + list(INTERVAL_METHODS.values()), rows) + [""]

    lines += ["### Mean width [5%, 95% quantiles of the width]", ""]
    rows = [[n] + [f"{ivs[n, m]['mean_width']:.4f} [{ivs[n, m]['width_p05']:.3f}, "
                   f"{ivs[n, m]['width_p95']:.3f}]" for m in _INT] for n in sizes]
    lines += md_table(["N"] + list(INTERVAL_METHODS.values()), rows) + [""]

    ref = _INT.index("el-chi2")
    lines += ["### Width relative to EL (chi2)", "",
              "Ratio of mean widths, and (in parentheses) the median over draws of the per-draw "
              "ratio, the statistic of the paper's Table 1.", ""]
    rows = []
    for n in sizes:
        wd = study.widths(n)
        cells = []
        for j, m in enumerate(_INT):
            if j == ref:
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                per = wd[:, j] / wd[:, ref]
            cells.append(f"{wd[:, j].mean() / wd[:, ref].mean():.2f} ({np.nanmedian(per):.2f})")
        rows.append([n] + cells)
    lines += md_table(["N"] + [INTERVAL_METHODS[m] for j, m in enumerate(_INT) if j != ref], rows) + [""]

    # -- the paper's claims, checked -----------------------------------------------------------
    lines += ["## The paper's claims, checked on this run", ""]
    for m in ("el-chi2", "el-f"):
        cov = np.array([ivs[n, m]["coverage"] for n in sizes])
        se = np.array([ivs[n, m]["coverage_se"] for n in sizes])
        below = [n for n, c in zip(sizes, cov) if c < level]
        sig = [n for n, c, s in zip(sizes, cov, se) if c + 2 * s < level]
        k = int(np.argmin(cov))
        lines.append(
            f"* **{INTERVAL_METHODS[m]} coverage >= {level:g} at every N?** "
            f"{'yes' if not below else 'no'}: minimum {cov[k]:.4f} ± {se[k]:.4f} at N = {sizes[k]}; "
            f"below {level:g} at N = {', '.join(map(str, below)) or 'none'}; "
            f"below by more than 2 SE at N = {', '.join(map(str, sig)) or 'none'}.")
    for m in ("cr-chi2", "cr-f", "gaussian", "binomial"):
        cov = np.array([ivs[n, m]["coverage"] for n in sizes])
        se = np.array([ivs[n, m]["coverage_se"] for n in sizes])
        sig = [n for n, c, s in zip(sizes, cov, se) if c + 2 * s < level]
        k = int(np.argmin(cov))
        lines.append(f"* {INTERVAL_METHODS[m]}: minimum coverage {cov[k]:.4f} at N = {sizes[k]}; "
                     f"below {level:g} by more than 2 SE at N = {', '.join(map(str, sig)) or 'none'}.")
    paper = [e for e in _EST if e != "cr"]         # Figure 1's estimators (CR(-2) is not in it)
    rivals = [e for e in paper if e != "el"]
    # lowest, ties included (EMP and EL coincide when the MLE leaves no mass off the sample)
    lowest = [n for n in sizes
              if mse[n, "el"]["mse"] <= min(mse[n, e]["mse"] for e in rivals) * (1 + 1e-9)]
    sig_best = [n for n in sizes
                if all(_significance(*study.paired_mse_difference(n, e)) == "<" for e in rivals)]
    ties: dict[int, list[str]] = {}
    beaten: dict[int, list[str]] = {}
    for n in sizes:
        for e in rivals:
            verdict = _significance(*study.paired_mse_difference(n, e))
            if verdict == "≈":
                ties.setdefault(n, []).append(ESTIMATORS[e])
            elif verdict == ">":
                beaten.setdefault(n, []).append(ESTIMATORS[e])
    lines.append("* **EL's MSE the lowest of Figure 1's estimators** (Constant, ClippedDR, SNIPS, IPS, "
                 f"EMP, EL), ties included: at N = {', '.join(map(str, lowest)) or 'none'}; lower than each of them by "
                 f"more than 2 paired SE at N = {', '.join(map(str, sig_best)) or 'none'}.")
    lines.append("* Within 2 paired SE of EL: " + (
        "; ".join(f"N = {n}: {', '.join(v)}" for n, v in ties.items()) or "never") + ".")
    lines.append("* Lower than EL by more than 2 paired SE: " + (
        "; ".join(f"N = {n}: {', '.join(v)}" for n, v in beaten.items()) or "never") + ".")
    cr_rel = [(n, mse[n, "cr"]["mse"] / mse[n, "el"]["mse"], _significance(*study.paired_mse_difference(n, "cr")))
              for n in sizes]
    lines.append("* EL against CR(-2) (not in Figure 1): MSE(CR) / MSE(EL) = " + ", ".join(
        f"{r:.3f} at N = {n} ({'EL lower' if v == '<' else 'CR lower' if v == '>' else 'tie'})"
        for n, r, v in cr_rel) + ".")
    ratios = []
    for n in sizes:
        wd = study.widths(n)
        ratios.append(wd[:, _INT.index("binomial")].mean() / wd[:, ref].mean())
    lines.append(f"* **Binomial / EL (chi2) mean width:** from {min(ratios):.2f} to {max(ratios):.2f} "
                 f"over the grid ({', '.join(f'N = {n}: {r:.2f}' for n, r in zip(sizes, ratios))}).")
    lines.append("")

    # -- degenerate cases ----------------------------------------------------------------------
    lines += ["## Degenerate cases and fallbacks", ""]
    rows = [[n] + [study.events[n][k] for k in EVENTS] for n in sizes]
    lines += md_table(["N"] + [f"{k} (draws)" for k in EVENTS], rows)
    lines += ["", "`snips-undefined`: every weight is 0, SNIPS set to 1/2. `el-fallback`: EL "
              "computations the fast path could not solve, redone with `method=\"auto\"`.", ""]
    return "\n".join(lines)

