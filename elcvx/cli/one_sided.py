"""``elcvx evaluate --alternative greater|less``: the one-sided section of the report.

EL's one-sided bound (:func:`elcvx.interval` with ``alternative=``) beside the finite-sample
bounds of :mod:`elcvx.estimators.finite_sample` (LS, IX, EB, el-betting) at the same level; its
JSON form is the report's ``"one_sided"`` entry, and its CSV rows are named
``<method>:<alternative>``. Every bound the log allows is computed: IX wherever the log holds
the logging probabilities (in memory, or read again chunk by chunk from a scanned log's files),
LS and EB where its rows (or their exact compression) are in memory, el-betting where they are
in memory in log order without counts; a note names each one left out and why.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from ..errors import ElcvxError

#: The rows of the section, in order, with their labels.
LABELS = {"el": "EL", "ls": "LS", "ix": "IX", "eb": "EB", "el-betting": "el-betting"}
#: What a finite-sample bound needs beyond the rows, said in the section's last note.
_CONDITIONS = {"ix": "IX: given the logging probabilities",
               "el-betting": "el-betting: given E[w] = 1, the weight bounds, and rows in log order"}


def _num(x):
    return None if x is None or not math.isfinite(x) else float(x)


def one_sided_report(sample, args, logging_probs=None, ix_chunks=None) -> dict:
    """The section's JSON form: ``{"alternative", "confidence_level", "calibration" (EL's),
    "bounds": [{"method", "low", "high", "parameter_name", "parameter"}], "notes"}``.

    ``logging_probs``: the logging probability of each row of ``sample`` (a log in memory), or
    ``ix_chunks``: a function of no argument giving the log's chunks with theirs (a log read in
    chunks, :meth:`elcvx.io.LogScan.rows_with_logging_probs`); with neither, IX is left out.
    """
    from ..baselines import lower_bound, upper_bound
    from ..interval import interval

    alternative, level = args.alternative, args.confidence_level
    # --calibration left out: interval()'s one-sided default (signed-bootstrap on rows in memory).
    calibration = args.calibration if args.calibration_given else None
    el = interval(sample, confidence_level=level, calibration=calibration,
                  method=args.method, alternative=alternative)
    bounds = [dict(method="el", low=_num(el.low), high=_num(el.high),
                   parameter_name="quantile", parameter=_num(el.quantile))]
    from .. import thin

    notes = thin.of(el.notes)  # few rows carry the estimate: EL's level may not hold
    bound = lower_bound if alternative == "greater" else upper_bound

    def ix():
        if logging_probs is not None:  # (the library's call, on the rows in memory)
            return bound(sample, method="ix", confidence_level=level, logging_probs=logging_probs)
        from ..estimators.finite_sample import ix_bound_in_chunks

        return ix_bound_in_chunks(sample, ix_chunks(), confidence_level=level,
                                  alternative=alternative)

    computed: dict[str, Callable[[], Any]] = (
        {"ix": ix} if logging_probs is not None or ix_chunks is not None else {})
    if sample.in_memory:
        for name in ("ls", "eb", "el-betting"):
            computed[name] = functools.partial(bound, sample, method=name, confidence_level=level)
    for name in ("ls", "ix", "eb", "el-betting"):  # (the order of finite_sample.METHODS)
        if name not in computed:
            continue
        if name == "el-betting" and sample.counts is not None:
            notes.append("el-betting: not computed: it bets on the rows one by one in log order, "
                         "and this log has counts")
            continue
        try:
            res = computed[name]()
        except ElcvxError as exc:  # a bound's failure must not hide the others
            notes.append(f"{LABELS[name]}: cannot be computed ({exc})")
            continue
        bounds.append(dict(method=name, low=_num(res.low), high=_num(res.high),
                           parameter_name=res.parameter_name, parameter=res.parameter))
        if res.note:
            notes.append(f"{LABELS[name]}: {res.note}")
    if not sample.in_memory:
        notes.append("LS, EB, el-betting: not computed on a log kept in chunks (they need its rows "
                     "in memory: --engine memory)")
    if "ix" not in computed:
        notes.append("IX: not computed: it needs the logging policy's probability of each logged "
                     "action, and this log gives weights (name the probability columns: "
                     "--target-prob-col C --logging-prob-col C)")
    held = [b["method"] for b in bounds[1:]]
    if held:
        given = "; ".join(_CONDITIONS[m] for m in held if m in _CONDITIONS)
        how = ("the signed root's bootstrap" if el.calibration == "signed-bootstrap"
               else "its calibration's threshold at 1 - 2 alpha")
        notes.append(f"EL's bound is asymptotic ({how}); "
                     f"{', '.join(LABELS[m] for m in held)} hold{'s' * (len(held) == 1)} at this "
                     f"N" + (f" ({given})" if given else ""))
    return dict(alternative=alternative, confidence_level=level, calibration=el.calibration,
                bounds=bounds, notes=notes)


def one_sided_lines(rep) -> list:
    """The section in the table: one line per bound, then its notes."""
    section = rep.get("one_sided")
    if not section:
        return []
    side = "lower" if section["alternative"] == "greater" else "upper"
    lines = [f"one-sided {100 * section['confidence_level']:g}% {side} bounds "
             f"(--alternative {section['alternative']}; EL: {section['calibration']} "
             "calibration):"]
    for b in section["bounds"]:
        value = b["low"] if side == "lower" else b["high"]
        value = "-" if value is None else f"{value:.4f}"
        tuning = "" if b["parameter"] is None else f"   {b['parameter_name']} = {b['parameter']:.4g}"
        lines.append(f"{LABELS[b['method']]:<12}{value:>8}{tuning}")
    lines.extend(f"note: {n}" for n in section["notes"])
    return lines


def one_sided_csv_rows(rep) -> list:
    """The section as CSV rows of ``elcvx evaluate --format csv``: method ``<name>:<alternative>``,
    no estimate, the bound and the range's other end."""
    section = rep.get("one_sided")
    if not section:
        return []
    notes = " | ".join(section["notes"])
    return [[f"{b['method']}:{section['alternative']}", None, b["low"], b["high"], rep["n"],
             rep["wmin"], rep["wmax"], section["confidence_level"], None, None,
             rep["weight_check"]["plausible"], notes]
            for b in section["bounds"]]
