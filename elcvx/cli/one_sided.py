"""``elcvx evaluate --alternative greater|less``: the one-sided section of the report.

EL's one-sided bound (:func:`elcvx.interval` with ``alternative=``) beside the finite-sample
bounds of :mod:`elcvx.estimators.finite_sample` (LS, EB, el-betting) at the same level; its JSON
form is the report's ``"one_sided"`` entry, and its CSV rows are named ``<method>:<alternative>``.
"""

from __future__ import annotations

import math

from ..errors import ElcvxError

#: The rows of the section, in order, with their labels.
LABELS = {"el": "EL", "ls": "LS", "eb": "EB", "el-betting": "el-betting"}


def _num(x):
    return None if x is None or not math.isfinite(x) else float(x)


def one_sided_report(sample, args) -> dict:
    """The section's JSON form: ``{"alternative", "confidence_level", "bounds": [{"method",
    "low", "high", "parameter_name", "parameter"}], "notes"}``."""
    from ..baselines import lower_bound, upper_bound
    from ..interval import interval

    alternative, level = args.alternative, args.confidence_level
    el = interval(sample, confidence_level=level, calibration=args.calibration,
                  method=args.method, alternative=alternative)
    bounds = [dict(method="el", low=_num(el.low), high=_num(el.high),
                   parameter_name="quantile", parameter=_num(el.quantile))]
    notes = []
    if not sample.in_memory:
        notes.append("LS, EB, el-betting: not computed on a log kept in chunks (they need its rows "
                     "in memory: --engine memory)")
        return dict(alternative=alternative, confidence_level=level, bounds=bounds, notes=notes)
    bound = lower_bound if alternative == "greater" else upper_bound
    for name in ("ls", "eb", "el-betting"):
        if name == "el-betting" and sample.counts is not None:
            notes.append("el-betting: not computed: it bets on the rows one by one in log order, "
                         "and this log has counts")
            continue
        try:
            res = bound(sample, method=name, confidence_level=level)
        except ElcvxError as exc:  # a bound's failure must not hide the others
            notes.append(f"{LABELS[name]}: cannot be computed ({exc})")
            continue
        bounds.append(dict(method=name, low=_num(res.low), high=_num(res.high),
                           parameter_name=res.parameter_name, parameter=res.parameter))
        if res.note:
            notes.append(f"{LABELS[name]}: {res.note}")
    notes.append("EL's bound is asymptotic (its calibration's threshold at 1 - 2 alpha); LS, EB "
                 "and el-betting hold at this N (el-betting: given E[w] = 1, the weight bounds, "
                 "and rows in log order); IX needs the logging probabilities: "
                 "elcvx.baselines.lower_bound(..., method='ix', logging_probs=...)")
    return dict(alternative=alternative, confidence_level=level, bounds=bounds, notes=notes)


def one_sided_lines(rep) -> list:
    """The section in the table: one line per bound, then its notes."""
    section = rep.get("one_sided")
    if not section:
        return []
    side = "lower" if section["alternative"] == "greater" else "upper"
    lines = [f"one-sided {100 * section['confidence_level']:g}% {side} bounds "
             f"(--alternative {section['alternative']}):"]
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
