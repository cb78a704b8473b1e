"""The study's files: every trial's choices, the counts per dataset and method beside the
published ones, ``summary.md`` and the figure."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from .._running import (format_seconds, machine_description, md_table, write_csv,
                        write_figure_and_summary)
from . import protocol as P
from .methods import DELTA, METHODS
from .study import CANDIDATES, DEFAULT_TRIALS
from .training import STEPS

SUMMARY_COLUMNS = ("dataset", "method", "best", "better", "worse", "regret", "certified",
                   "radius", "ties")
TRIAL_COLUMNS = ("dataset", "trial", "method", "chosen", "value", "bound", "estimate", "outcome",
                 "regret", "tied", "authors_chosen", "authors_outcome") + tuple(
                     f"low_{c}" for c in CANDIDATES)
CANDIDATE_COLUMNS = ("dataset", "candidate", "value", "wmax")
PUBLISHED_COLUMNS = ("dataset", "n_log", "method", "best", "better", "worse")
#: The published counts (source and method names: the file's header).
PUBLISHED_FILE = Path(__file__).with_name("published.csv")


def published(datasets=None) -> list:
    """The published counts, one dict per (dataset, method), for the ``datasets`` named (all
    when None)."""
    with open(PUBLISHED_FILE, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    return [dict(r, n_log=int(r["n_log"]), best=int(r["best"]), better=int(r["better"]),
                 worse=int(r["worse"])) for r in rows if datasets is None or r["dataset"] in datasets]


def authors_counts(rows) -> dict:
    """``(dataset, method) -> (best, better, worse)`` with ties broken as the authors' code
    breaks them (the last of the largest), from the trials' ``rows`` (or ``trials.csv``)."""
    out: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        counts = out.setdefault((r["dataset"], r["method"]), [0, 0, 0])
        counts[P.OUTCOMES.index(r["authors_outcome"])] += 1
    return {key: tuple(v) for key, v in out.items()}


def comparison(summary_rows, published_rows, tie_counts=None) -> list:
    """Our counts beside the published ones for every (dataset, method) both have; ``same``:
    the three counts agree; ``same_authors_ties``: they agree with ties broken as the authors'
    code breaks them (from ``tie_counts``, :func:`authors_counts`; None when not given)."""
    theirs = {(r["dataset"], r["method"]): r for r in published_rows}
    out = []
    for r in summary_rows:
        pub = theirs.get((r["dataset"], r["method"]))
        if pub is None:
            continue
        ours = (r["best"], r["better"], r["worse"])
        pub_counts = (pub["best"], pub["better"], pub["worse"])
        out.append(dict(dataset=r["dataset"], method=r["method"], ours=ours,
                        published=pub_counts, same=ours == pub_counts,
                        same_authors_ties=None if tie_counts is None
                        else tie_counts[r["dataset"], r["method"]] == pub_counts))
    return out


def comparable(study) -> bool:
    """Whether the run is the published protocol's (its trials and steps), so that its counts
    can be set beside the published ones."""
    return study.trials == DEFAULT_TRIALS and study.steps == STEPS


def _counts(c):
    return "/".join(str(x) for x in c)


def _f(x, digits=3):
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def comparison_table(summary_rows, published_rows) -> list:
    """The Markdown table of the page: per dataset and method, our BEST/BETTER/WORSE and the
    published ones, the regret, the certified value and the radius (ESLB and the second-moment
    bound, which we do not run, with their published counts only)."""
    theirs = {(r["dataset"], r["method"]): r for r in published_rows}
    rows = []
    names = list(dict.fromkeys(r["dataset"] for r in summary_rows))
    for name in names:
        ours = [r for r in summary_rows if r["dataset"] == name]
        for r in ours:
            pub = theirs.get((name, r["method"]))
            rows.append([name, r["method"], _counts((r["best"], r["better"], r["worse"])),
                         _counts((pub["best"], pub["better"], pub["worse"])) if pub else "-",
                         _f(r["regret"]), _f(r["certified"]), _f(r["radius"]),
                         str(r["ties"])])
        for method in ("eslb", "sm"):
            if (name, method) in theirs:
                pub = theirs[name, method]
                rows.append([name, method, "-", _counts((pub["best"], pub["better"],
                                                         pub["worse"])), "-", "-", "-", "-"])
    return md_table(["dataset", "method", "ours B/Bt/W", "published B/Bt/W", "regret",
                     "certified", "radius", "ties"], rows)


def counts_grid(summary_rows, published_rows) -> list:
    """A method-by-dataset Markdown table: our BEST/BETTER/WORSE, the published ones in brackets
    (a method only one side has: that side's counts alone, ``-`` for the other)."""
    ours = {(r["dataset"], r["method"]): r for r in summary_rows}
    theirs = {(r["dataset"], r["method"]): r for r in published_rows}
    names = list(dict.fromkeys(r["dataset"] for r in summary_rows))
    methods = list(dict.fromkeys([r["method"] for r in summary_rows]
                                 + [r["method"] for r in published_rows]))

    def cell(name, method):
        o, t = ours.get((name, method)), theirs.get((name, method))
        left = _counts((o["best"], o["better"], o["worse"])) if o else "-"
        right = _counts((t["best"], t["better"], t["worse"])) if t else "-"
        return f"{left} ({right})"

    return md_table(["method"] + names, [[m] + [cell(n, m) for n in names] for m in methods])


def regret_grid(summary_rows) -> list:
    """A method-by-dataset Markdown table: the mean regret and, in brackets, the mean certified
    value of the chosen candidate (for the lower bounds)."""
    ours = {(r["dataset"], r["method"]): r for r in summary_rows}
    names = list(dict.fromkeys(r["dataset"] for r in summary_rows))
    methods = list(dict.fromkeys(r["method"] for r in summary_rows))

    def cell(r):
        return _f(r["regret"]) + (f" ({_f(r['certified'])})" if math.isfinite(r["certified"])
                                  else "")

    return md_table(["method"] + names, [[m] + [cell(ours[n, m]) for n in names]
                                         for m in methods])


def write(study, out, *, command: str | None = None, plots: bool = True) -> list:
    """Write the study's files into ``out``; their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = [d["name"] for d in study.datasets]
    paths = [write_csv(out / "summary.csv", SUMMARY_COLUMNS, study.summary()),
             write_csv(out / "trials.csv", TRIAL_COLUMNS, study.rows),
             write_csv(out / "candidates.csv", CANDIDATE_COLUMNS, study.candidates),
             write_csv(out / "published.csv", PUBLISHED_COLUMNS, published(names))]
    return paths + write_figure_and_summary(
        out, "selection.png", lambda path: _figure(study, path),
        lambda figure: summary_markdown(study, command, figure), plots)


def summary_markdown(study, command=None, figure=None) -> str:
    names = [d["name"] for d in study.datasets]
    summary = study.summary()
    pub = published(names)
    lines = ["# Policy selection: the LS paper's protocol", ""]
    if command:
        lines += ["Written by", "", "```", command, "```", ""]
    lines += [f"{len(study.datasets)} datasets x {study.trials} trials, {study.steps:,} "
              f"gradient-ascent steps per trained candidate; run in "
              f"{format_seconds(study.wall_time)} ({format_seconds(study.cpu_time)} of CPU) with "
              f"{study.jobs} job(s) on {machine_description()}.", ""]
    if study.steps != STEPS:
        lines += [f"**Not the published protocol**: {study.steps:,} steps, not {STEPS:,}.", ""]
    lines += md_table(["dataset", "OpenML", "rows", "features", "classes", "train", "log",
                       "held out", "missing values"],
                      [[d["name"], d["id"], d["rows"], d["features"], d["classes"], d["train"],
                        d["log"], d["held_out"], d["missing"]] for d in study.datasets])
    values = {(c["dataset"], c["candidate"]): c for c in study.candidates}
    cands = list(dict.fromkeys(c["candidate"] for c in study.candidates))
    lines += ["", "True values of the candidates on the held-out rows, and each candidate's weight "
              "bound `wmax` (its largest probability over the logging policy's least):", ""]
    lines += md_table(["dataset"] + cands + [f"wmax {c}" for c in cands],
                      [[n] + [_f(values[n, c]["value"], 4) for c in cands]
                       + [_f(values[n, c]["wmax"], 1) for c in cands] for n in names])
    lines += ["", "Methods (a lower bound at 1 - " f"{DELTA:g}/4 per candidate unless said):", ""]
    lines += [f"* `{m}`: {METHODS[m]}" for m in study.methods]
    lines += ["", "## Outcomes", "",
              "B/Bt/W: the trials where the chosen candidate is the perfect policy (BEST), at "
              "least as good as the logging policy (BETTER), worse (WORSE). `regret`: the best "
              "candidate's true value minus the chosen one's, averaged over the trials; "
              "`certified`: the chosen candidate's lower bound, averaged; `radius`: its IPS "
              "estimate minus that bound, averaged; `ties`: trials where candidates shared the "
              "largest number (the lowest index chosen). Published: "
              "`ope_ops/ops_results/*.csv` of `otmhi/offpolicy_ls` (commit 1fa73795).", ""]
    lines += ["### Counts: ours (published)", ""] + counts_grid(summary, pub)
    lines += ["", "### Regret (certified value)", ""] + regret_grid(summary)
    lines += ["", "### Per dataset and method", ""] + comparison_table(summary, pub)
    comp = comparison(summary, pub, authors_counts(study.rows))
    differ = [c for c in comp if not c["same"]]
    if not comparable(study):
        lines += ["", f"Not comparable with the published counts: {study.trials} trials and "
                  f"{study.steps:,} steps where the published run has {DEFAULT_TRIALS} and "
                  f"{STEPS:,}."]
    elif comp:
        lines += ["", f"Counts equal to the published ones: {sum(c['same'] for c in comp)} of "
                  f"{len(comp)} (dataset, method) pairs."]
    if differ and comparable(study):
        lines += ["", "Where they differ, and the counts with ties broken as the authors' code "
                  "breaks them (the last of the largest):", ""]
        ties = authors_counts(study.rows)
        lines += md_table(["dataset", "method", "ours", "authors' tie rule", "published"],
                          [[c["dataset"], c["method"], _counts(c["ours"]),
                            _counts(ties[c["dataset"], c["method"]]), _counts(c["published"])]
                           for c in differ])
    if figure is not None:
        lines += ["", f"![BEST counts and regret per dataset]({Path(figure).name})"]
    return "\n".join(lines) + "\n"


def _figure(study, path):
    """Per dataset and method: the BEST count (bars, the published one as a mark) and the mean
    regret."""
    from ..plots import _pyplot

    plt = _pyplot()
    per = {(r["dataset"], r["method"]): r for r in study.summary()}
    pub = {(r["dataset"], r["method"]): r for r in published()}
    names = [d["name"] for d in study.datasets]
    methods = list(study.methods)
    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    width = 0.8 / len(methods)
    for j, m in enumerate(methods):
        xs = [i + (j - (len(methods) - 1) / 2) * width for i in range(len(names))]
        bars = axes[0].bar(xs, [per[n, m]["best"] if (n, m) in per else 0 for n in names], width,
                           label=m)
        for bar, n in zip(bars.patches, names):  # a count that ties decided, hatched
            if (n, m) in per and per[n, m]["ties"]:
                bar.set_hatch("//")
        marks = [(x, pub[n, m]["best"]) for x, n in zip(xs, names)
                 if (n, m) in pub and comparable(study)]
        if marks:
            axes[0].plot(*zip(*marks), "_", color="k", markersize=10, markeredgewidth=2,
                         label="published" if j == 0 else None)
        axes[1].bar(xs, [per[n, m]["regret"] if (n, m) in per else 0.0 for n in names], width,
                    color=bars.patches[0].get_facecolor() if bars.patches else None)
    axes[0].set_ylabel(f"BEST (of {study.trials} trials; hatched: ties decided some)")
    axes[0].set_ylim(0, 1.3 * study.trials)
    axes[0].legend(ncol=9, fontsize=8, loc="upper center")
    axes[1].set_ylabel("mean regret (true value)")
    axes[1].set_xticks(range(len(names)))
    axes[1].set_xticklabels(names)
    axes[0].set_title("Policy selection among 4 candidates (LS paper's protocol)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
