"""Figures of the synthetic study, in the spirit of the paper's Figures 1 and 2.

matplotlib (the ``plot`` extra: ``pip install 'elcvx[plot]'``) is imported only when a figure is
drawn, with the non-interactive Agg backend. Each function takes the tidy rows of
:meth:`elcvx.experiments.synthetic.SyntheticStudy.mse_table` or ``interval_table`` (or the
matching CSV read back with :func:`read_rows`) and writes one PNG.
"""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["plot_mse", "plot_intervals", "read_rows"]

# One colour and marker per method, shared by both figures where the names meet.
_STYLE = {
    "constant": ("#7f7f7f", "", "--"),
    "clipped-dr": ("#bcbd22", "v", "-"),
    "snips": ("#17becf", "^", "-"),
    "ips": ("#8c564b", "x", "-"),
    "emp": ("#9467bd", "s", "-"),
    "cr": ("#ff7f0e", "D", "-"),
    "el": ("#d62728", "o", "-"),
    "el-chi2": ("#d62728", "o", "-"),
    "el-f": ("#e377c2", "o", "--"),
    "cr-chi2": ("#ff7f0e", "D", "-"),
    "cr-f": ("#ffbb78", "D", "--"),
    "binomial": ("#1f77b4", "s", "-"),
    "gaussian": ("#2ca02c", "^", "-"),
}
_DPI = 110


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def read_rows(path) -> list:
    """Rows of ``mse.csv`` or ``intervals.csv`` as dicts (``n`` int, other numbers float)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for row in rows:
        conv: dict[str, int | float | str] = {}
        for k, v in row.items():
            if k == "n":
                conv[k] = int(v)
            elif k in ("estimator", "method"):
                conv[k] = v
            else:
                conv[k] = float(v)
        out.append(conv)
    return out


def _names(rows, key) -> dict:
    """``name -> name`` for each value of ``key`` in ``rows``, in order of appearance."""
    return {r[key]: r[key] for r in rows}


def _series(rows, key, name):
    sel = sorted((r for r in rows if r[key] == name), key=lambda r: r["n"])
    return sel


def plot_mse(rows, path, *, labels=None, band: float = 2.0) -> Path:
    """Figure 1: MSE against N (log-log), one line per estimator, shaded ``± band`` standard errors.

    The paper draws lines ``4`` standard errors wide; ``band=2`` shades the same ``± 2 SE``. A
    second panel shows each estimator's MSE relative to EL's (the differences between the
    best estimators are invisible on the log scale). ``labels``: ``estimator -> legend label``,
    in the legend's order (default: the rows' names).
    """
    plt = _pyplot()
    labels = labels or _names(rows, "estimator")
    fig, (ax, ax_r) = plt.subplots(1, 2, figsize=(11.5, 4.4), gridspec_kw={"width_ratios": [1.25, 1]})
    el = {r["n"]: r["mse"] for r in _series(rows, "estimator", "el")}
    lows, highs = [], []
    for name, label in labels.items():
        s = _series(rows, "estimator", name)
        if not s:
            continue
        n = [r["n"] for r in s]
        m = [r["mse"] for r in s]
        lows.append(min(m))
        highs.append(max(r["mse"] + band * r["se"] for r in s))
        color, marker, ls = _STYLE.get(name, (None, "", "-"))
        kw = dict(color=color, marker=marker, ms=3.5, lw=1.5 if name == "el" else 1.1,
                  label=label, zorder=3 if name == "el" else 2)
        ax.plot(n, m, ls, **kw)
        ax.fill_between(n, [max(r["mse"] - band * r["se"], r["mse"] / 10) for r in s],
                        [r["mse"] + band * r["se"] for r in s], color=color, alpha=0.2, lw=0)
        if el and name != "constant":
            ax_r.plot(n, [r["mse"] / el[r["n"]] for r in s], ls, **kw)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if lows:
        ax.set_ylim(min(lows) / 2, max(highs) * 2)
    ax.set_xlabel("sample size N")
    ax.set_ylabel("mean squared error")
    ax.set_title(f"MSE (shaded: ±{band:g} SE)", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=2, frameon=False)
    ax_r.set_xscale("log")
    ax_r.set_yscale("log")
    ax_r.set_ylim(0.5, 30.0)
    ax_r.set_yticks([0.5, 1, 2, 5, 10, 20])
    ax_r.set_yticklabels(["0.5", "1", "2", "5", "10", "20"])
    ax_r.axhline(1.0, color="k", lw=0.8, ls=":")
    ax_r.set_xlabel("sample size N")
    ax_r.set_ylabel("MSE / MSE of EL")
    ax_r.set_title("relative to EL (IPS off the scale at small N)", fontsize=10)
    ax_r.grid(True, which="major", alpha=0.3)
    fig.suptitle("Synthetic epsilon-greedy data: mean squared error of the estimates", fontsize=11)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def plot_intervals(rows, path, *, labels=None, band: float = 2.0, level: float = 0.95) -> Path:
    """Figure 2: mean width (shaded 5%-95% of widths) and coverage (shaded ``± band`` SE) against N.

    Three panels: width; coverage of every method; coverage near the nominal level. ``labels``:
    ``method -> legend label`` (default: the rows' names).
    """
    plt = _pyplot()
    labels = labels or _names(rows, "method")
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.2))
    ax_w, ax_c, ax_z = axes
    zoom = ("el-chi2", "el-f", "cr-chi2", "cr-f", "binomial")
    for name, label in labels.items():
        s = _series(rows, "method", name)
        if not s:
            continue
        n = [r["n"] for r in s]
        color, marker, ls = _STYLE.get(name, (None, "", "-"))
        kw = dict(color=color, marker=marker, ms=3.5, lw=1.4 if name.startswith("el") else 1.1)
        ax_w.plot(n, [r["mean_width"] for r in s], ls, label=label, **kw)
        ax_w.fill_between(n, [r["width_p05"] for r in s], [r["width_p95"] for r in s],
                          color=color, alpha=0.12, lw=0)
        cov = [r["coverage"] for r in s]
        lo = [r["coverage"] - band * r["coverage_se"] for r in s]
        hi = [min(1.0, r["coverage"] + band * r["coverage_se"]) for r in s]
        for ax in (ax_c, ax_z) if name in zoom else (ax_c,):
            ax.plot(n, cov, ls, label=label, **kw)
            ax.fill_between(n, lo, hi, color=color, alpha=0.2, lw=0)
    ax_w.set_ylabel("interval width")
    ax_w.set_title("mean width (shaded: 5%-95% of widths)", fontsize=10)
    ax_w.set_ylim(0, 1.02)
    ax_c.set_ylabel("coverage")
    ax_c.set_title(f"coverage (shaded: ±{band:g} SE)", fontsize=10)
    ax_c.set_ylim(0, 1.01)
    ax_z.set_title("coverage, near the nominal level", fontsize=10)
    ax_z.set_ylim(level - 0.03, 1.002)
    for ax in (ax_c, ax_z):
        ax.axhline(level, color="k", lw=0.8, ls=":")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("sample size N")
        ax.grid(True, which="major", alpha=0.3)
    ax_w.legend(fontsize=7.5, frameon=False, loc="upper right")
    fig.suptitle(f"Synthetic epsilon-greedy data: {100 * level:g}% confidence intervals", fontsize=11)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path
