"""The study's files: every log's bounds, the radius and violation tables, the comparison with the
published numbers, ``summary.md`` and the figure."""

from __future__ import annotations

import math
from pathlib import Path

from .._running import (format_seconds, machine_description, md_table, write_csv,
                        write_figure_and_summary)
from .methods import DELTA, FINITE_SAMPLE, METHODS
from .published import PUBLISHED, PUBLISHED_ROWS

ROW_COLUMNS = ("dataset", "openml_id", "eta", "tau", "tau0", "replicate", "n", "value", "method",
               "lower_bound", "radius", "violation")
SUMMARY_COLUMNS = ("dataset", "method", "logs", "mean_radius", "median_radius", "violation_rate",
                   "violation_se", "failed")
#: Our methods that the published table has, by its name.
COMPARED = ("ls", "ix", "eb")


def comparison(study) -> list:
    """Our mean and median radius of LS, IX and EB beside the published ones, per dataset and
    over all five."""
    ours = {(r["dataset"], r["method"]): r for r in study.summary() + study.summary(False)}
    names = [name for _, name, *_ in study.datasets]
    # "all" only when the run has the published table's five datasets (else it averages others).
    everything = set(names) == set(PUBLISHED["ls"]) - {"all"}
    out = []
    for dataset in names + ["all"] * everything:
        for method in COMPARED:
            if (dataset, method) not in ours or dataset not in PUBLISHED[method]:
                continue
            mean, median, zeros = PUBLISHED[method][dataset]
            row = ours[dataset, method]
            out.append(dict(dataset=dataset, method=method, mean_radius=row["mean_radius"],
                            published_mean=mean, difference=row["mean_radius"] - mean,
                            median_radius=row["median_radius"], published_median=median,
                            published_zero_radius=zeros))
    return out


def write(study, out, *, command: str | None = None, plots: bool = True) -> list:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_csv(out / "bounds.csv.gz", ROW_COLUMNS, study.rows),
             write_csv(out / "summary.csv", SUMMARY_COLUMNS, study.summary() + study.summary(False)),
             write_csv(out / "published.csv", ("dataset", "method", "mean_radius", "published_mean",
                                               "difference", "median_radius", "published_median",
                                               "published_zero_radius"), comparison(study))]
    return paths + write_figure_and_summary(
        out, "pessimism.png", lambda path: _figure(study, path),
        lambda figure: summary_markdown(study, command, figure), plots)


def _f(x, digits=3):
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _pct(x):
    return "-" if not math.isfinite(x) else f"{100 * x:.1f}%"


def _grid(study, field, fmt):
    """A method-by-dataset table of one summary field, with the overall column."""
    per = {(r["dataset"], r["method"]): r for r in study.summary() + study.summary(False)}
    names = [name for _, name, *_ in study.datasets] + ["all"]
    rows = [[m] + [fmt(per[d, m][field]) if (d, m) in per else "-" for d in names]
            for m in study.methods]
    return md_table(["method"] + names, rows)


def summary_markdown(study, command=None, figure=None) -> str:
    overall = {r["method"]: r for r in study.summary(False)}
    logs = len(study.configs) * study.seeds
    lines = ["# Pessimistic bounds: the LS paper's tightness protocol", ""]
    if command:
        lines += ["Written by", "", "```", command, "```", ""]
    lines += [
        f"{len(study.datasets)} datasets x {len(study.configs)} configurations x {study.seeds} "
        f"logs = {len(study.datasets) * logs} logs, delta = {DELTA:g} one-sided; run in "
        f"{format_seconds(study.wall_time)} with {study.jobs} job(s) on {machine_description()}.",
        "", "Datasets (rows, rows logged, classes): " + "; ".join(
            f"{name} (OpenML {did}): {n}, {logged}, {k}" for did, name, n, logged, k in study.datasets)
        + ".", "",
        "The radius of a lower bound `LB` on the value `V` is `(V - LB)/V`, 0 when `LB >= V` (the "
        "published table's); a violation is `LB > V`. Methods:", ""]
    lines += [f"* `{m}`: {METHODS[m]}{'' if m in FINITE_SAMPLE else ' (asymptotic)'}"
              for m in study.methods]
    lines += ["", "## Mean radius", ""] + _grid(study, "mean_radius", _f)
    lines += ["", "## Median radius", ""] + _grid(study, "median_radius", _f)
    lines += ["", f"## Violation rate (LB > V; at most {DELTA:g} for a valid bound, up to noise)",
              ""] + _grid(study, "violation_rate", _pct)
    lines += ["", "Standard error of an overall rate near 5%: "
              f"{_pct(math.sqrt(0.05 * 0.95 / max(1, overall[study.methods[0]]['logs'])))}."]
    failed = {m: r["failed"] for m, r in overall.items() if r["failed"]}
    if failed:
        lines += ["", "Logs where a bound could not be computed (left out above): "
                  + ", ".join(f"{m}: {k}" for m, k in failed.items()) + "."]
    comp = comparison(study)
    if comp:
        lines += ["", "## Against the published table",
                  "", f"The published numbers: one log per configuration ({PUBLISHED_ROWS} per "
                  "dataset), `ope_ops/ope_results/all_radiuses.csv` of `otmhi/offpolicy_ls` "
                  "(commit 1fa73795). Ours: the same protocol with the logs above"
                  + ("." if len(study.configs) == 45 else f", {len(study.configs)} of the 45 "
                     "configurations only: not comparable with the published averages over all "
                     "45."), ""]
        lines += md_table(["dataset", "method", "mean radius", "published", "difference",
                           "median", "published median"],
                          [[r["dataset"], r["method"], _f(r["mean_radius"]), _f(r["published_mean"]),
                            f"{r['difference']:+.3f}", _f(r["median_radius"]),
                            _f(r["published_median"])] for r in comp])
        worst = max(abs(r["difference"]) for r in comp if r["method"] == "ls")
        lines += ["", f"Largest gap between our LS mean radius and the published one: {worst:.3f}."]
    if "el-betting" in overall and "ls" in overall:
        b, ls = overall["el-betting"], overall["ls"]
        change = b["mean_radius"] / ls["mean_radius"] - 1
        per = {(r["dataset"], r["method"]): r for r in study.summary()}
        ratios = ", ".join(f"{name} {per[name, 'el-betting']['mean_radius'] / per[name, 'ls']['mean_radius'] - 1:+.0%}"
                           for _, name, *_ in study.datasets
                           if (name, "el-betting") in per and (name, "ls") in per)
        lines += ["", "## el-betting against LS", "",
                  f"Overall mean radius {_f(b['mean_radius'])} against LS's {_f(ls['mean_radius'])}: "
                  f"{change:+.0%} ({ratios}); violation rates {_pct(b['violation_rate'])} and "
                  f"{_pct(ls['violation_rate'])}."]
    if figure is not None:
        lines += ["", f"![Mean radius per dataset]({Path(figure).name})"]
    return "\n".join(lines) + "\n"


def _figure(study, path):
    """Mean radius per dataset and method (bars), the published LS as a mark."""
    from ..plots import _pyplot

    plt = _pyplot()
    per = {(r["dataset"], r["method"]): r for r in study.summary()}
    names = [name for _, name, *_ in study.datasets]
    methods = list(study.methods)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(methods)
    for j, m in enumerate(methods):
        xs = [i + (j - (len(methods) - 1) / 2) * width for i in range(len(names))]
        ax.bar(xs, [per[n, m]["mean_radius"] if (n, m) in per else 0.0 for n in names], width,
               label=m)
    pub = [PUBLISHED["ls"].get(n, (math.nan,))[0] for n in names]
    ax.plot(range(len(names)), pub, "k_", markersize=28, markeredgewidth=2,
            label="LS, published")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("mean radius (V - LB) / V")
    ax.set_title(f"Lower bounds at delta = {DELTA:g}: {study.seeds} logs per configuration")
    ax.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
