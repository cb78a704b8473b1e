"""What ``elcvx evaluate`` and ``elcvx profile`` compute and print: the reports (the JSON form)
and their table and CSV renderings. The command line itself is :mod:`elcvx.cli`."""

from __future__ import annotations

import io as _stdio
import json
import math
import os

from .. import __version__
from .. import _validation as iv
from .one_sided import one_sided_csv_rows, one_sided_lines, one_sided_report
from ..evaluation import LABELS, METHODS, evaluate  # noqa: F401  (METHODS: elcvx.cli's)
from ..evaluation import _number as _num  # a float for JSON: None for NaN and infinities
from ..evaluation import cr_calibration as _cr
from ..evaluation import rho_text as _rho_text
from ..errors import InvalidInputError

_LABELS = {**LABELS, "betting-cs": "Betting CS", "ddrm-cs": "DDRM CS"}


class UsageError(Exception):
    """A command-line usage error (reported in one line, exit status 2)."""


class CannotWrite(Exception):
    """An output file could not be written (one line, exit status 1)."""


def evaluate_sample(sample, *, confidence_level=0.95, calibration="chi2", method="auto", rho=None):
    """EL and the baselines on a sample, as ``elcvx evaluate`` reports them: the tuple form of
    :func:`elcvx.evaluate` (which returns an :class:`~elcvx.results.EvaluationResult`).

    Returns
    -------
    results : list of dict
        ``{"method", "estimate", "low", "high"}`` for each of :data:`METHODS`; None where a
        method has no such number (IPS and SNIPS have no interval, Gaussian and Binomial no
        estimate of their own).
    notes : list of str
        The evaluation's notes (:attr:`~elcvx.results.EvaluationResult.notes`).
    ci : IntervalResult
        The EL interval itself (its ``quantile`` is the one the report prints).
    """
    ev = evaluate(sample, confidence_level=confidence_level, calibration=calibration,
                  method=method, rho=rho)
    return [r._asdict() for r in ev.results], list(ev.notes), ev.interval


def _weight_check_field(chk):
    """The JSON form of a :class:`~elcvx.sample.WeightCheck`."""
    return {"mean": _num(chk.mean), "se": _num(chk.se), "statistic": _num(chk.statistic),
            "pvalue": _num(chk.pvalue), "plausible": chk.plausible,
            "depends_on_unobserved": chk.depends_on_unobserved,
            "unobserved_wmass": _num(chk.unobserved_wmass)}


#: What the note of a failed weight check adds on the command line (``--strict``).
STRICT_HINT = "; elcvx evaluate --strict makes a failed weight check an error (exit 2)"


def _weights_source(log) -> str:
    """Where a log's weights came from, as its weight note names it."""
    return dict(getattr(log, "columns", {})).get("w", "w")


def require_weights(log, method):
    """``--strict``: raise, in one line, when the log's weights fail
    :meth:`~elcvx.Sample.weight_check` (any of its notes; the MLE it solves is cached, so the
    evaluation that follows a pass does not solve it again)."""
    from ..checks import weight_check, weights_note
    chk = weight_check(log.sample, method)
    if not chk:
        raise InvalidInputError(f"the weight check failed (--strict): "
                                f"{weights_note(chk, _weights_source(log))}", field="weights")


def evaluate_report(log, args):
    """The evaluate report as a dict (the JSON form) plus what the table shows besides."""
    s = log.sample
    ev = evaluate(log, confidence_level=args.confidence_level, calibration=args.calibration,
                  method=args.method, rho=args.rho)
    results, notes = [r._asdict() for r in ev.results], list(ev.notes)
    if args.sequence:  # (a scanned log's rows are read again from its files, in order)
        in_order = getattr(args, "rows_in_order", None)
        rows, seq_notes = _sequence_rows(in_order() if in_order else [s], args.confidence_level)
        results, notes = results + rows, notes + seq_notes
    est, chk = ev.estimate, ev.weight_check
    if not chk:  # the weight note says what --strict would do
        from ..checks import weights_note

        note = weights_note(chk, _weights_source(log))
        notes = [n + STRICT_HINT if n == note else n for n in notes]
    n = int(s.n) if float(s.n).is_integer() else s.n
    alternative = getattr(args, "alternative", "two-sided")
    one_sided = {} if alternative == "two-sided" else {"one_sided": one_sided_report(
        s, args, logging_probs=getattr(log, "logging_probs", None),
        ix_chunks=getattr(args, "ix_chunks", None))}
    return {
        "n": n,
        "wmin": s.wmin,
        "wmax": _num(s.wmax),
        "confidence_level": float(args.confidence_level),
        "results": results,
        "calibration": args.calibration,
        "quantile": _num(ev.quantile),
        "rmin": s.rmin,
        "rmax": s.rmax,
        "w_observed": list(_w_observed(s)),
        "weight_check": _weight_check_field(chk),
        "el_value_range": [_num(est.value_range.low), _num(est.value_range.high)],
        "el_depends_on_rho": est.depends_on_rho,
        "rho": {"rule": est.rho_rule, "value": est.rho},
        "log": log.path,
        "input_format": log.format,
        "rows": log.n_rows,
        "skipped": getattr(log, "skipped", 0),
        "columns": dict(log.columns),
        "notes": notes,
        **one_sided,
    }


def _w_observed(s):
    """The smallest and largest weight of a sample or a scanned log."""
    return s.w_observed


def _sequence_rows(chunks, level):
    """``--sequence``: the confidence sequences' bounds at the end of the log (its rows in log
    order, as samples: one, or a scanned log's chunks), and notes."""
    from ..sequences import BettingSequence, DDRMSequence

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
    if rep["input_format"] == "dsjson":
        skipped = f", {rep['skipped']} skipped" if rep["skipped"] else ""
        return f"dsjson, {iv.plural(rep['rows'], 'event')}{skipped}"
    return f"{rep['input_format']}, {iv.plural(rep['rows'], 'row')}"


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
    lines.extend(one_sided_lines(rep))
    return "\n".join(lines) + "\n"


def _cell(v):
    """A CSV cell, written as the JSON form writes the value (:func:`_num`): no number (None, an
    infinite ``wmax`` or statistic) is an empty cell, as it is ``null`` in JSON."""
    if isinstance(v, float):
        v = _num(v)
        return "" if v is None else repr(v)
    return "" if v is None else v


def _csv(header, rows):
    import csv

    buf = _stdio.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()


def render_evaluate(rep, fmt):
    if fmt == "json":
        return json.dumps(rep, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        # estimate_low, estimate_high: EL's estimate over rho, where it depends on rho. The
        # weight check's verdict and the notes are on every row: a CSV read without looking at
        # stderr must not lose "the probability columns are probably wrong".
        ranged = [rep["el_value_range"] if r["method"] == "el" and rep.get("el_depends_on_rho")
                  else [None, None] for r in rep["results"]]
        return _csv(["method", "estimate", "low", "high", "n", "wmin", "wmax", "confidence_level",
                     "estimate_low", "estimate_high", "weights_plausible", "notes"],
                    [[r["method"], r["estimate"], r["low"], r["high"], rep["n"], rep["wmin"],
                      rep["wmax"], rep["confidence_level"], *rg,
                      rep["weight_check"]["plausible"], " | ".join(_notes_of(r["method"], rep))]
                     for r, rg in zip(rep["results"], ranged)]
                    + one_sided_csv_rows(rep))
    return _table(rep)


def _notes_of(method, rep):
    """The notes that concern a method's row: those that name it (``"SNIPS: ..."``, ``"IPS,
    SNIPS: ..."``) and those that name no method (the weight check's, about the whole log)."""
    out = []
    for note in rep["notes"]:
        named = [x.strip() for x in note.split(":", 1)[0].split(",")] if ":" in note else []
        if not named or not set(named) <= set(_LABELS.values()) or _LABELS[method] in named:
            out.append(note)
    return out


def notes_to_stderr(notes, fmt, stream) -> None:
    """With ``--format csv``, the notes also go to stderr (``elcvx: note: ...``), as the table
    prints them under the numbers and JSON holds them: a CSV piped into a file keeps them in
    its ``notes`` column (evaluate), and the terminal shows them."""
    if fmt == "csv":
        for note in notes:
            stream.write(f"elcvx: note: {note}\n")




def grid(low, high, est, rmin, rmax, k):
    """``k`` sorted values around the interval (0.6 of its width on each side, within the reward
    range), evenly spaced but for the interval's ends and the estimate, each of which takes the
    place of the grid point nearest to it (so ``--points 5`` prints 5 rows; fewer only where
    the marks coincide)."""
    import numpy as np

    width = high - low
    if not width > 0:
        a, b = rmin, rmax
    else:
        a, b = max(rmin, low - 0.6 * width), min(rmax, high + 0.6 * width)
    v = np.linspace(a, b, max(int(k), 3))
    free = np.ones(v.size, dtype=bool)
    for mark in sorted({float(low), float(high), float(est)}):
        i = int(np.argmin(np.where(free, np.abs(v - mark), np.inf)))
        v[i], free[i] = mark, False
    return np.unique(v)


def render_profile(log, args, est, ci, prof, level, plots=()) -> str:
    """``elcvx profile``'s output in ``args.format``: the estimate, the interval and the profile
    statistic on the grid of ``prof``; ``plots``: the files drawn."""
    from ..checks import weight_check as weight_check_of

    s = log.sample
    n = int(s.n) if float(s.n).is_integer() else s.n
    rep = {
        "n": n, "wmin": s.wmin, "wmax": _num(s.wmax), "confidence_level": level,
        "calibration": args.calibration, "quantile": _num(ci.quantile),
        "estimate": est.value, "low": ci.low, "high": ci.high,
        "estimate_range": list(est.value_range), "rho": {"rule": est.rho_rule, "value": est.rho},
        "profile": [{"v": float(a), "statistic": _num(b), "pvalue": _num(c)}
                    for a, b, c in zip(prof.v, prof.statistic, prof.pvalue)],
        "log": log.path, "input_format": log.format, "plot": plots[0] if plots else None,
        "weight_check": _weight_check_field(weight_check_of(s, args.method)),
        "notes": list(log.notes),
    }
    if args.format == "json":
        return json.dumps(rep, indent=2, allow_nan=False) + "\n"
    if args.format == "csv":
        return _csv(["v", "statistic", "pvalue", "in_interval"],
                    [[p["v"], p["statistic"], p["pvalue"], bool(ci.low <= p["v"] <= ci.high)]
                     for p in rep["profile"]])
    q = "inf" if rep["quantile"] is None else f"{rep['quantile']:.4g}"
    lines = [f"elcvx {__version__}: {os.path.basename(log.path)} "
             f"({_rows({'input_format': log.format, 'rows': log.n_rows, 'skipped': log.skipped})}), "
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
