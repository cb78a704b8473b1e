"""The outputs of ``elcvx reproduce rho`` (:mod:`elcvx.experiments.rho_study`): its CSVs and
``summary.md``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import realistic as R
from ._running import format_seconds, write_csv
from .synthetic.report import _g, _significance
from .rho_study import EL_COLUMNS, SYN_COLUMNS, VERSUS, realistic_table

LABELS = {"el": "EL, ρ = ½", "el-snips": "EL, ρ = SNIPS", "el-self": "EL, ρ self-consistent",
          "snips": "SNIPS", "cr-2": "CR(−2), ρ = ½", "ips": "IPS", "emp": "EMP"}


def _wtl(row) -> str:
    return f"{row['wins']}/{row['ties']}/{row['losses']}" if row else "—"


def _synthetic(run) -> list:
    mse = {(r["n"], r["estimator"]): r for r in run["rows"]}
    paired = {(r["n"], r["estimator"]): r for r in run["paired"]}
    L = ["## The synthetic study: mean squared error per rule", "",
         f"The samples of `elcvx reproduce synthetic` (seed {run['seed']}, {run['replicates']} "
         f"environment draws per N, the same streams: the `el` column is that study's EL). Wall "
         f"time {format_seconds(run['wall'])} with {run['jobs']} job(s), CPU {format_seconds(run['cpu'])}; EL "
         f"solves redone with `method=\"auto\"`: {run['fallbacks']}.", "",
         "MSE (standard error); bold: the lowest of the row. `atom`: share of the draws whose "
         "extra atom carries importance-weighted mass (there the rules differ).", "",
         "| N | atom | " + " | ".join(LABELS[c] for c in SYN_COLUMNS) + " |",
         "|---:|---:|" + "---:|" * len(SYN_COLUMNS)]
    for n in run["sizes"]:
        vals = [mse[n, c]["mse"] for c in SYN_COLUMNS]
        best = int(np.argmin(vals))
        cells = [f"{_g(mse[n, c]['mse'])} ({_g(mse[n, c]['se'], 2)})" for c in SYN_COLUMNS]
        cells[best] = f"**{cells[best]}**"
        L.append(f"| {n} | {mse[n, 'el']['atom_share']:.2f} | " + " | ".join(cells) + " |")
    L += ["", "Each rule against the midpoint on the same draws: mean of sq. error(rule) − sq. "
          "error(ρ = ½) ± its standard error; `<`: the rule lower by more than 2 SE, `>`: higher "
          "by more than 2 SE, `≈`: within 2 SE.", "",
          "| N | " + " | ".join(f"{LABELS[c]} − EL, ρ = ½" for c in ("el-snips", "el-self")) + " |",
          "|---:|---:|---:|"]
    verdicts: dict[str, list[tuple[int, str]]] = {c: [] for c in ("el-snips", "el-self")}
    for n in run["sizes"]:
        cells = []
        for c in verdicts:
            p = paired[n, c]
            v = _significance(p["mean"], p["se"])
            verdicts[c].append((n, v))
            cells.append(f"{v} {_g(p['mean'], 2)} ± {_g(p['se'], 2)}")
        L.append(f"| {n} | " + " | ".join(cells) + " |")
    L.append("")
    for c, vs in verdicts.items():
        L.append(f"* {LABELS[c]} against ρ = ½: lower at N = "
                 f"{', '.join(str(n) for n, v in vs if v == '<') or 'none'}; higher at N = "
                 f"{', '.join(str(n) for n, v in vs if v == '>') or 'none'}; within 2 SE elsewhere.")
    L.append("")
    return L


def _realistic(run, table) -> list:
    get = {(r["estimator"], r["versus"], r["strategy"]): r for r in table}
    L = ["## The realistic study's Table 1 per rule", "",
         f"Table 1's evaluation logs (seed {run['seed']}, {len(run['datasets'])} datasets, "
         f"{run['replicates']} evaluations per dataset and strategy; the same logs as "
         "`realistic/ope.csv.gz`, whose `el` is the `el` here). Wins/ties/losses of EL over datasets, "
         "squared error, paired t-test at 95% (`scipy.stats.ttest_rel`). Paper: its Table 1 "
         "(40 datasets; three strategies). Authors' code: the plain EL of their replication "
         "code's README (`shootout/README.md` in github.com/pmineiro/elfcb; 40 datasets), which "
         "sets ρ = SNIPS. `atom`: share of the evaluations whose extra atom carries "
         f"importance-weighted mass. Wall time {format_seconds(run['wall'])} with {run['jobs']} job(s), "
         f"CPU {format_seconds(run['cpu'])}; EL solves redone with `method=\"auto\"`: {run['fallbacks']}.", "",
         "| EL vs. | exploration | ρ = ½ | ρ = SNIPS | ρ self-consistent | paper (of 40) | "
         "authors' code (of 40) | atom |",
         "|---|---|---:|---:|---:|---:|---:|---:|"]
    for other in VERSUS:
        for s in run["strategies"]:
            rows = [get.get((c, other, s)) for c in EL_COLUMNS.values()]
            assert rows[0] is not None, (other, s)  # its atom share is read below
            paper, authors = R.PAPER_OPE.get((s, other)), R.AUTHORS_EL.get((s, other))
            L.append(f"| {other} | {s} | " + " | ".join(_wtl(r) for r in rows)
                     + f" | {'/'.join(map(str, paper)) if paper else '—'} | "
                     f"{'/'.join(map(str, authors)) if authors else '—'} | {rows[0]['atom_share']:.0%} |")
    L += ["", "Totals over the strategies above (wins/ties/losses of (dataset, strategy) pairs):", "",
          "| EL vs. | ρ = ½ | ρ = SNIPS | ρ self-consistent | "
          f"authors' code (of {40 * len(run['strategies'])}) |",
          "|---|---:|---:|---:|---:|"]
    for other in VERSUS:
        cells = []
        for c in EL_COLUMNS.values():
            rs = [get[c, other, s] for s in run["strategies"] if (c, other, s) in get]
            cells.append("/".join(str(sum(r[k] for r in rs)) for k in ("wins", "ties", "losses")))
        auth = [R.AUTHORS_EL.get((s, other)) for s in run["strategies"]]
        total = ("/".join(str(sum(a[i] for a in auth if a is not None)) for i in range(3))
                 if all(auth) else "—")
        L.append(f"| {other} | " + " | ".join(cells) + f" | {total} |")
    L += ["", "Each rule against EL at the midpoint (the same evaluations), and the mean squared "
          "errors:", "", "| exploration | ρ = SNIPS vs ρ = ½ | ρ self-consistent vs ρ = ½ | MSE ρ = ½ | "
          "MSE ρ = SNIPS | MSE ρ self-consistent | MSE SNIPS |", "|---|---:|---:|---:|---:|---:|---:|"]
    for s in run["strategies"]:
        a, b = get[("el-snips", "el", s)], get[("el-self", "el", s)]
        snips = get[("el", "snips", s)]
        L.append(f"| {s} | {_wtl(a)} | {_wtl(b)} | {a['mse_versus']:.4g} | {a['mse_estimator']:.4g} | "
                 f"{b['mse_estimator']:.4g} | {snips['mse_versus']:.4g} |")
    L.append("")
    return L


def summary(synthetic, realistic, table, command) -> str:
    L = ["# The extra atom's reward ρ: the paper's studies per rule", "",
         "Generated by `elcvx.experiments.rho_study` (`elcvx reproduce rho`); do not edit by hand. "
         "docs/rho.md derives the rules and reads these tables.", ""]
    if command:
        L += [f"Command: `{command}`", ""]
    if synthetic is not None:
        L += _synthetic(synthetic)
    if realistic is not None:
        L += _realistic(realistic, table)
    return "\n".join(L)


def write(out, *, synthetic=None, realistic=None, command=None) -> list:
    """Write the CSVs of the runs given and ``summary.md``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    if synthetic is not None:
        paths.append(write_csv(out / "synthetic_mse.csv", list(synthetic["rows"][0]), synthetic["rows"]))
        paths.append(write_csv(out / "synthetic_paired.csv", list(synthetic["paired"][0]), synthetic["paired"]))
    table = None
    if realistic is not None:
        table = realistic_table(realistic)
        paths.append(write_csv(out / "ope_rho.csv.gz", list(realistic["rows"][0]), realistic["rows"]))
        paths.append(write_csv(out / "table1_rho.csv", list(table[0]), table))
    p = out / "summary.md"
    p.write_text(summary(synthetic, realistic, table, command), encoding="utf-8")
    return paths + [p]
