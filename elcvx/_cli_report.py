"""What ``elcvx evaluate`` and ``elcvx profile`` compute and print: the reports (the JSON form)
and their table and CSV renderings. The command line itself is :mod:`elcvx.cli`."""

from __future__ import annotations

import io as _stdio
import json
import math
import os

from . import __version__
from . import _validation as iv
from ._evaluation import evaluate_all
from .errors import InvalidInputError

#: Method names of ``evaluate``'s results, in the order they are printed.
METHODS = ("el", "ips", "snips", "cr", "gaussian", "binomial")
_LABELS = {"el": "EL", "ips": "IPS", "snips": "SNIPS", "cr": "CR(-2)", "gaussian": "Gaussian",
           "binomial": "Binomial", "betting-cs": "Betting CS", "ddrm-cs": "DDRM CS"}
# Each baseline's row: (the evaluate_all estimate, the interval), given the EL calibration.
_BASELINE_ROWS = {"ips": ("ips", None), "snips": ("snips", None), "cr": ("cr", "cr-{cal}"),
                  "gaussian": (None, "gaussian"), "binomial": (None, "binomial")}


class UsageError(Exception):
    """A command-line usage error (reported in one line, exit status 2)."""


class CannotWrite(Exception):
    """An output file could not be written (one line, exit status 1)."""


def _num(x):
    """A float for JSON: None for NaN and infinities."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _cr(calibration):
    """CR(-2)'s calibration: its closed form has no bootstrap, so chi2 stands in for it."""
    return calibration if calibration in iv.CALIBRATIONS else "chi2"



def evaluate_sample(sample, *, confidence_level=0.95, calibration="chi2", method="auto", rho=None):
    """EL and the baselines on a sample, as ``elcvx evaluate`` reports them.

    ``rho``: the extra atom's reward in EL's estimate (:func:`elcvx.estimate`).

    Returns
    -------
    results : list of dict
        ``{"method", "estimate", "low", "high"}`` for each of :data:`METHODS`; None where a
        method has no such number (IPS and SNIPS have no interval, Gaussian and Binomial no
        estimate of their own).
    notes : list of str
        Degenerate cases the numbers depend on, and a baseline that cannot be computed on this
        sample (its numbers are then None; EL's are always there).
    ci : IntervalResult
        The EL interval itself (its ``quantile`` is the one the report prints).
    """
    level = iv.confidence_level(confidence_level)
    calibration = iv.option("calibration", calibration, iv.EL_CALIBRATIONS)
    el = evaluate_all(sample, ("el",), (f"el-{calibration}",), confidence_level=level, rho=rho,
                      method=method)
    est, ci = el.results["el"], el.results[f"el-{calibration}"]
    results = [{"method": "el", "estimate": _num(est.value), "low": _num(ci.low),
                "high": _num(ci.high)}]
    notes = []
    if est.depends_on_rho:
        lo, hi = est.value_range
        notes.append(f"EL: the estimate depends on the reward rho of an unobserved extreme weight: "
                     f"{lo:.4g} to {hi:.4g} over rho in [{sample.rmin:g}, {sample.rmax:g}]; shown at "
                     f"{_rho_text(est)}")
    rows = {m: (e, i and i.format(cal=_cr(calibration))) for m, (e, i) in _BASELINE_ROWS.items()}
    # A baseline's failure must not hide EL's answer: its row is empty and a note says why.
    base = evaluate_all(sample, [e for e, _ in rows.values() if e], [i for _, i in rows.values() if i],
                        confidence_level=level, catch=(ArithmeticError, InvalidInputError))
    for name, (e, i) in rows.items():
        numbers = [base.estimates.get(e), *base.intervals.get(i, (None, None))]
        error = base.errors.get(e) or base.errors.get(i)
        if error is None and not all(x is None or math.isfinite(x) for x in numbers):
            error = "ArithmeticError: a result is not a finite number"
        note = base.notes.get(e) or base.notes.get(i, "")
        if error is not None:
            numbers = [None] * 3
            note = f"cannot be computed with weights up to {_w_observed(sample)[1]:.4g} ({error})"
        results.append(dict(zip(("method", "estimate", "low", "high"), [name, *map(_num, numbers)])))
        if note:
            notes.append(f"{_LABELS[name]}: {note}")
    return results, notes, ci


def _rho_text(est):
    """``rho = 0.5 (midpoint)``: the extra atom's reward and the rule that chose it."""
    return f"rho = {est.rho:.4g}" + ("" if est.rho_rule == "number" else f" ({est.rho_rule})")


def _weight_check(s, log, method):
    """The JSON form of ``s.weight_check()`` and its note, unless the log's notes have it (the
    readers of elcvx.io add it; the demo's log is built without them)."""
    from .io.frames import _weights_note

    chk = s.weight_check(method=method)
    field = {"mean": _num(chk.mean), "se": _num(chk.se), "statistic": _num(chk.statistic),
             "pvalue": _num(chk.pvalue), "plausible": chk.plausible,
             "depends_on_unobserved": chk.depends_on_unobserved,
             "unobserved_wmass": _num(chk.unobserved_wmass)}
    note = _weights_note(chk, log.columns.get("w", "w"))
    return chk, field, [note] if note and note not in log.notes else []


def evaluate_report(log, args):
    """The evaluate report as a dict (the JSON form) plus what the table shows besides."""
    from .estimate import estimate

    s = log.sample
    results, notes, ci = evaluate_sample(s, confidence_level=args.confidence_level,
                                         calibration=args.calibration, method=args.method,
                                         rho=args.rho)
    if args.sequence:  # (a scanned log's rows are read again from its files, in order)
        in_order = getattr(args, "rows_in_order", None)
        rows, seq_notes = _sequence_rows(in_order() if in_order else [s], args.confidence_level)
        results, notes = results + rows, notes + seq_notes
    chk, weight_check, weight_notes = _weight_check(s, log, args.method)
    notes = weight_notes + notes
    if math.isinf(s.wmax) and not chk.depends_on_unobserved:
        notes.append("wmax = inf (give --wmax or --pmin for tighter intervals)")
    est = estimate(s, method=args.method, rho=args.rho)  # the MLE is cached: no new solve
    value_range = est.value_range
    n = int(s.n) if float(s.n).is_integer() else s.n
    return {
        "n": n,
        "wmin": s.wmin,
        "wmax": _num(s.wmax),
        "confidence_level": float(args.confidence_level),
        "results": results,
        "calibration": args.calibration,
        "quantile": _num(ci.quantile),
        "rmin": s.rmin,
        "rmax": s.rmax,
        "w_observed": list(_w_observed(s)),
        "weight_check": weight_check,
        "el_value_range": [_num(value_range.low), _num(value_range.high)],
        "el_depends_on_rho": est.depends_on_rho,
        "rho": {"rule": est.rho_rule, "value": est.rho},
        "log": log.path,
        "format": log.format,
        "rows": log.n_rows,
        "skipped": getattr(log, "skipped", 0),
        "columns": dict(log.columns),
        "notes": list(log.notes) + notes,
    }


def _w_observed(s):
    """The smallest and largest weight of a sample or a scanned log."""
    return s.w_observed if hasattr(s, "w_observed") else (float(s.w.min()), float(s.w.max()))


def _sequence_rows(chunks, level):
    """``--sequence``: the confidence sequences' bounds at the end of the log (its rows in log
    order, as samples: one, or a scanned log's chunks), and notes."""
    from .sequences import BettingSequence, DDRMSequence

    seqs = None
    for chunk in chunks:
        if chunk.counts is not None:
            return [], ["--sequence: not computed: a confidence sequence needs one row per "
                        "example in log order, and this log has counts"]
        bounds = dict(confidence_level=level, rmin=chunk.rmin, rmax=chunk.rmax)
        seqs = seqs or {"betting-cs": BettingSequence(**bounds), "ddrm-cs": DDRMSequence(**bounds)}
        for seq in seqs.values():
            seq.update(chunk.w, chunk.r)
    rows = []
    for name, seq in seqs.items():
        low, high = seq.interval
        rows.append({"method": name, "estimate": None, "low": _num(low), "high": _num(high)})
    notes = ["Betting CS, DDRM CS: confidence sequences at t = N, valid at every t at once "
             "(see docs/sequences.md)"]
    if any(r["low"] > r["high"] for r in rows):
        notes.append("a confidence sequence is empty (low > high): the weights contradict "
                     "E[w] = 1 at this level (check the probability columns)")
    return rows, notes


def _n(n):
    """N as a reader wants it: 2000000, not 2e+06; counts may make it fractional."""
    return str(int(n)) if float(n).is_integer() else f"{n:.6g}"


def _f4(x):
    """A result in the table: 4 decimals, or 4 digits when large (IPS with a weight of 1e300)."""
    return f"{x:.4f}" if abs(x) < 1e6 else f"{x:.4g}"


def _g(x):
    return "inf" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:g}"


def _rows(rep):
    if rep["format"] == "dsjson":
        skipped = f", {rep['skipped']} skipped" if rep["skipped"] else ""
        return f"dsjson, {iv.plural(rep['rows'], 'event')}{skipped}"
    return f"{rep['format']}, {iv.plural(rep['rows'], 'row')}"


def _header(rep):
    lines = [f"elcvx {__version__}: {os.path.basename(rep['log'])} ({_rows(rep)})"]
    cols = rep["columns"]
    desc = f"w = {cols['w']}, r = {cols['r']}"
    if "counts" in cols:
        desc += f", counts = {cols['counts']}"
    lines.append(desc)
    lo, hi = rep["w_observed"]
    lines.append(f"N = {_n(rep['n'])}, weights in [{_g(rep['wmin'])}, {_g(rep['wmax'])}] "
                 f"(observed {lo:g} to {hi:g}), rewards in [{rep['rmin']:g}, {rep['rmax']:g}]")
    return lines


def _table(rep):
    level = f"{100 * rep['confidence_level']:g}%"
    lines = _header(rep)
    lines.append(f"{'method':<10}{'estimate':>10}   {level} interval")
    for r in rep["results"]:
        est = "-" if r["estimate"] is None else _f4(r["estimate"])
        row = f"{_LABELS[r['method']]:<10}{est:>10}"
        if r["low"] is not None:
            row += f"   [{_f4(r['low'])}, {_f4(r['high'])}]"
        if r["method"] == "el" and rep.get("el_depends_on_rho"):
            lo, hi = rep["el_value_range"]
            row += f"   estimate over rho: {_f4(lo)} to {_f4(hi)}"
        lines.append(row)
    q = rep["quantile"]
    q = "inf" if q is None else f"{q:.4g}"
    cal = rep["calibration"]
    lines.append(f"EL and CR(-2) intervals: {cal} calibration (q = {q})" if _cr(cal) == cal else
                 f"EL interval: {cal} calibration (q = {q}); CR(-2): {_cr(cal)}")
    lines.extend(f"note: {n}" for n in rep["notes"])
    return "\n".join(lines) + "\n"


def _csv(header, rows):
    import csv

    buf = _stdio.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
    return buf.getvalue()


def render_evaluate(rep, fmt):
    if fmt == "json":
        return json.dumps(rep, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        # estimate_low, estimate_high: EL's estimate over rho, where it depends on rho.
        ranged = [rep["el_value_range"] if r["method"] == "el" and rep.get("el_depends_on_rho")
                  else [None, None] for r in rep["results"]]
        return _csv(["method", "estimate", "low", "high", "n", "wmin", "wmax", "confidence_level",
                     "estimate_low", "estimate_high"],
                    [[r["method"], r["estimate"], r["low"], r["high"], rep["n"], rep["wmin"],
                      rep["wmax"] if rep["wmax"] is not None else float("inf"),
                      rep["confidence_level"], *rg] for r, rg in zip(rep["results"], ranged)])
    return _table(rep)




def grid(low, high, est, rmin, rmax, k):
    """``k`` values around the interval (0.6 of its width on each side, within the reward range),
    with its ends and the estimate."""
    import numpy as np

    width = high - low
    if not width > 0:
        a, b = rmin, rmax
    else:
        a, b = max(rmin, low - 0.6 * width), min(rmax, high + 0.6 * width)
    v = np.linspace(a, b, max(int(k), 2))
    return np.unique(np.concatenate([v, [low, high, est]]))


def render_profile(log, args, est, ci, prof, level, plots=()) -> str:
    """``elcvx profile``'s output in ``args.format``: the estimate, the interval and the profile
    statistic on the grid of ``prof``; ``plots``: the files drawn."""
    s = log.sample
    n = int(s.n) if float(s.n).is_integer() else s.n
    rep = {
        "n": n, "wmin": s.wmin, "wmax": _num(s.wmax), "confidence_level": level,
        "calibration": args.calibration, "quantile": _num(ci.quantile),
        "estimate": est.value, "low": ci.low, "high": ci.high,
        "estimate_range": list(est.value_range), "rho": {"rule": est.rho_rule, "value": est.rho},
        "profile": [{"v": float(a), "statistic": _num(b), "pvalue": _num(c)}
                    for a, b, c in zip(prof.v, prof.statistic, prof.pvalue)],
        "log": log.path, "plot": plots[0] if plots else None,
        "weight_check": _weight_check(s, log, args.method)[1], "notes": list(log.notes),
    }
    if args.format == "json":
        return json.dumps(rep, indent=2, allow_nan=False) + "\n"
    if args.format == "csv":
        return _csv(["v", "statistic", "pvalue", "in_interval"],
                    [[p["v"], p["statistic"] if p["statistic"] is not None else float("inf"),
                      p["pvalue"], bool(ci.low <= p["v"] <= ci.high)] for p in rep["profile"]])
    q = "inf" if rep["quantile"] is None else f"{rep['quantile']:.4g}"
    lines = [f"elcvx {__version__}: {os.path.basename(log.path)} "
             f"({_rows({'format': log.format, 'rows': log.n_rows, 'skipped': log.skipped})}), "
             f"N = {_n(n)}",
             f"EL estimate {est.value:.4f}"
             + (f" (over rho: {est.value_range.low:.4f} to {est.value_range.high:.4f}; {_rho_text(est)})"
                if est.depends_on_rho else "")
             + f", {100 * level:g}% interval [{ci.low:.4f}, {ci.high:.4f}] "
             f"= {{v : statistic <= {q}}} ({args.calibration})",
             f"{'v':>10}  {'statistic':>10}  {'p-value':>8}"]
    for p in rep["profile"]:
        stat = "inf" if p["statistic"] is None else f"{p['statistic']:.4f}"
        mark = "  *" if ci.low <= p["v"] <= ci.high else ""
        lines.append(f"{p['v']:>10.4f}  {stat:>10}  {p['pvalue']:>8.4f}{mark}")
    lines.append("* inside the interval")
    lines.extend(f"plot: {path}" for path in plots)
    lines.extend(f"note: {x}" for x in rep["notes"])
    return "\n".join(lines) + "\n"
