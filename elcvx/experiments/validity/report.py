"""The validity suite's verdict and tables: per cell and bound, the violation rate, its standard
error, the mean radius and the time; which cells break a promise; ``summary.csv`` and
``summary.md``.

The promises checked: a ``"finite"`` bound's violation rate must not exceed ``delta + 3 SE`` in
any cell (``SE = sqrt(delta (1 - delta) / logs)``, the rate's standard error were it exactly
``delta``); an ``"asymptotic"`` one's must not inside its regime: at ``N >= ASYMPTOTIC_MIN_N``, on
the logs where the thin-asymptotics note is silent (the rate over those logs, with their SE; a
cell with fewer than :data:`MIN_SILENT_LOGS` of them is not judged, since there the note tells
every user to take a finite-sample bound). Cells above ``delta + 2 SE`` are marked, not failed.
"""

from __future__ import annotations

import math
from pathlib import Path

from .._running import format_seconds, machine_description, md_table, write_csv
from .distributions import DISTRIBUTIONS, by_name
from .run import ASYMPTOTIC_MIN_N, DELTA, se

__all__ = ["ASYMPTOTIC_MIN_N", "MIN_SILENT_LOGS", "table", "failures", "write", "COLUMNS"]

#: An asymptotic bound's cell is judged on its logs without the thin note when it has this many.
MIN_SILENT_LOGS = 100

COLUMNS = ("law", "family", "n", "bound", "kind", "logs", "violations", "rate", "se", "se_rate",
           "silent_logs", "silent_violations", "silent_rate", "judged_rate", "limit", "flag",
           "in_regime", "mean_radius", "failures", "seconds")


def table(rows, kinds: dict) -> list:
    """One dict per (cell, bound) from :func:`~.run.run_study`'s rows; ``kinds`` maps a bound's
    name to ``"finite"`` or ``"asymptotic"``. ``judged_rate`` is the rate the promise is about
    (an asymptotic bound's in its regime: over the logs without the thin note; nan when too few
    such logs), ``limit`` its ``delta + 3 SE``, and ``flag`` marks it above 2 or 3 SE."""
    out = []
    for row in rows:
        for name in (k for k in kinds if k in row["bounds"]):
            viol, logs, radius, failed, seconds, *split = row["bounds"][name]
            silent_viol, silent = split if split else (None, None)
            rate = viol / logs if logs else math.nan
            silent_rate = silent_viol / silent if silent else math.nan
            kind = kinds[name]
            in_regime = kind == "finite" or row["n"] >= ASYMPTOTIC_MIN_N
            judged, judged_logs = rate, logs
            if kind == "asymptotic" and in_regime:
                enough = silent is not None and silent >= MIN_SILENT_LOGS
                judged, judged_logs = (silent_rate, silent) if enough else (math.nan, 0)
            shown, sd = (judged, se(judged_logs)) if in_regime else (rate, se(logs))
            flag = ""
            if shown > DELTA + 3.0 * sd:
                flag = "> 3 SE"
            elif shown > DELTA + 2.0 * sd:
                flag = "> 2 SE"
            out.append({"law": row["law"], "family": by_name(row["law"]).family, "n": row["n"],
                        "bound": name, "kind": kind, "logs": logs, "violations": viol,
                        "rate": rate, "se": se(logs),
                        "se_rate": math.sqrt(rate * (1.0 - rate) / logs) if logs else math.nan,
                        "silent_logs": silent, "silent_violations": silent_viol,
                        "silent_rate": silent_rate, "judged_rate": judged,
                        "limit": DELTA + 3.0 * sd, "flag": flag, "in_regime": in_regime,
                        "mean_radius": radius / logs if logs else math.nan, "failures": failed,
                        "seconds": seconds})
    return out


def failures(rows) -> list:
    """One sentence per (cell, bound) of :func:`table` that breaks its promise; also a cell whose
    bound failed to compute on some log (a crash is not a pass)."""
    msgs = []
    for t in rows:
        where = f"{t['bound']} on {t['law']} at N={t['n']}"
        judged = t["judged_rate"]
        if t["in_regime"] and judged > t["limit"]:  # (nan: too few logs without the note)
            counts = ((t["silent_violations"], t["silent_logs"], " without the thin note")
                      if t["kind"] == "asymptotic" else (t["violations"], t["logs"], ""))
            msgs.append(f"{where}: violation rate {judged:.4f} ({counts[0]}/{counts[1]} logs"
                        f"{counts[2]}) exceeds delta + 3 SE = {t['limit']:.4f} ({t['kind']} bound)")
        if t["failures"]:
            msgs.append(f"{where}: failed to compute on {t['failures']} log(s)")
    return msgs


def _law_order(name):
    return [d.name for d in DISTRIBUTIONS].index(name)


def _fmt(x, digits=4):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def markdown(rows, *, command: str, wall: float | None, jobs: int, bound_docs: dict,
             complete: str) -> str:
    """``summary.md``: the headline, the failing and marked cells, then every cell."""
    bad = failures(rows)
    marked = [t for t in rows if t["flag"]]
    lines = ["# Validity suite: summary", "",
             f"Generated by `{command}` ("
             + (f"{format_seconds(wall)} wall, {jobs} job(s), " if wall is not None else "")
             + f"{machine_description()}). The bounds' CPU time over every cell: "
             f"{format_seconds(sum(t['seconds'] for t in rows))}. {complete}", "",
             f"delta = {DELTA:g}; SE = sqrt(delta (1 - delta) / logs); a finite-sample bound fails "
             f"a cell above delta + 3 SE, an asymptotic one only at N >= {ASYMPTOTIC_MIN_N} and "
             "over the logs on which the thin-asymptotics note is silent (its rate and SE over "
             f"those logs; a cell with fewer than {MIN_SILENT_LOGS} such logs is not judged). "
             "Radius: value - bound on the reward scale [0, 1]. Seconds: CPU time of the bound "
             "over the cell's logs. In the per-cell tables, an asymptotic bound's rate over the "
             "logs without the note follows a `|` (with their count) where the note fired on "
             "some logs.", "",
             "## Verdict", ""]
    lines += [f"* FAIL: {m}" for m in bad] or ["* every bound keeps its promise in every cell of its regime"]
    lines += ["", "## Cells above delta + 2 SE", ""]
    if marked:
        lines += md_table(["law", "N", "bound", "kind", "rate", "SE", "rate without the note (logs)",
                           "flag", "in regime"],
                          [[t["law"], t["n"], t["bound"], t["kind"], _fmt(t["rate"]), _fmt(t["se"]),
                            _silent(t), t["flag"], "yes" if t["in_regime"] else "no"]
                           for t in marked])
    else:
        lines.append("none")
    lines += ["", "## The bounds", ""]
    lines += md_table(["bound", "kind", "what"], [[k, *v] for k, v in bound_docs.items()])
    names = list(bound_docs)
    lines += ["", "## Violation rate (mean radius) per cell", ""]
    index = {(t["law"], t["n"], t["bound"]): t for t in rows}
    for law in sorted(dict.fromkeys(t["law"] for t in rows), key=_law_order):
        lines += ["", f"### {law}", ""]
        ns = sorted({t["n"] for t in rows if t["law"] == law})
        body = []
        for name in names:
            entries = [index.get((law, n, name)) for n in ns]
            if not any(entries):
                continue
            body.append([name] + [_cell(t) if t else "–" for t in entries])
        lines += md_table(["bound"] + [f"N={n}" for n in ns], body)
    return "\n".join(lines) + "\n"


def _silent(t, digits=4) -> str:
    """The rate over the logs without the thin note, and their count ("" before it was counted)."""
    return "" if t["silent_logs"] is None else (
        f"{_fmt(t['silent_rate'], digits)} ({t['silent_logs']})" if t["silent_logs"] else "– (0)")


def _cell(t) -> str:
    """A per-cell entry: rate (radius), the rate without the thin note where it fired on some
    logs (asymptotic bounds), and the flag."""
    text = f"{_fmt(t['rate'], 3)} ({_fmt(t['mean_radius'], 3)})"
    if t["kind"] == "asymptotic" and t["silent_logs"] is not None and t["silent_logs"] < t["logs"]:
        text += " \\| " + _silent(t, 3)
    return text + (f" {t['flag']}" if t["flag"] else "")


def write(rows, out, *, command: str, wall: float | None, jobs: int, bound_docs: dict,
          complete: str) -> list:
    """``summary.csv`` and ``summary.md`` in ``out``; their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = write_csv(out / "summary.csv", COLUMNS, rows, digits=6)
    md = out / "summary.md"
    md.write_text(markdown(rows, command=command, wall=wall, jobs=jobs, bound_docs=bound_docs,
                           complete=complete), encoding="utf-8")
    return [csv_path, md]
