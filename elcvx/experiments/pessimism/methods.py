"""The lower bounds the study compares, each on one log, at ``delta = 0.05`` one-sided."""

from __future__ import annotations

import math
from typing import Any

from ...baselines import lower_bound
from ...errors import SolverError
from ...interval import interval
from ...sample import Sample
from ...sequences import betting_sequence, ddrm_sequence

#: ``delta``: the probability that a lower bound exceeds the value.
DELTA = 0.05
#: The bounds, in the order of the tables, with what each is.
METHODS = {
    "el": "EL, one-sided, chi-square(1) at 1 - 2 delta, weights in the known [wmin, wmax]",
    "el-inf": "EL, one-sided, chi-square(1) at 1 - 2 delta, wmax = inf",
    "el-signed-bootstrap": "EL, one-sided, calibration='signed-bootstrap' (999 resamples), known "
                           "[wmin, wmax]",
    "el-betting": "EL's dual as a bet with predictable bets, fixed N, known [wmin, wmax]",
    "el-betting-inf": "the same with wmax = inf",
    "ls": "logarithmic smoothing, lam = 1/sqrt(N)",
    "ix": "implicit exploration, gamma = 1/(2 sqrt(N))",
    "eb": "empirical Bernstein on clipped IPS, M = sqrt(N)",
    "ddrm": "the DDRM confidence sequence's lower side at t = N (anytime-valid)",
    "betting": "the betting confidence sequence's lower side at t = N (anytime-valid)",
}
#: The finite-sample bounds (valid at every N); EL's are asymptotic.
FINITE_SAMPLE = ("el-betting", "el-betting-inf", "ls", "ix", "eb", "ddrm", "betting")


def bounds(log, methods=tuple(METHODS)) -> dict:
    """``name -> lower bound`` of each method on ``log`` (a :class:`~.protocol.Log`); ``nan``
    where EL's solvers fail both ways (counted by the study, not hidden)."""
    known = Sample(log.w, log.r, wmin=log.wmin, wmax=log.wmax)
    unbounded = Sample(log.w, log.r)
    level = 1.0 - DELTA
    # A sequence is two-sided, each side at alpha / 2: alpha = 2 delta puts its lower side at delta.
    seq: dict[str, Any] = dict(confidence_level=1.0 - 2.0 * DELTA, rmin=0.0, rmax=1.0)
    compute = {
        "el": lambda: interval(known, confidence_level=level, alternative="greater",
                               calibration="chi2").low,
        "el-inf": lambda: interval(unbounded, confidence_level=level, alternative="greater",
                                   calibration="chi2").low,
        "el-signed-bootstrap": lambda: interval(known, confidence_level=level, alternative="greater",
                                                calibration="signed-bootstrap", resamples=999).low,
        "el-betting": lambda: lower_bound(known, method="el-betting", confidence_level=level).low,
        "el-betting-inf": lambda: lower_bound(unbounded, method="el-betting",
                                              confidence_level=level).low,
        "ls": lambda: lower_bound(known, method="ls", confidence_level=level).low,
        "ix": lambda: lower_bound(known, method="ix", confidence_level=level,
                                  logging_probs=log.p).low,
        "eb": lambda: lower_bound(known, method="eb", confidence_level=level).low,
        "ddrm": lambda: ddrm_sequence(log.w, log.r, **seq).interval.low,
        "betting": lambda: betting_sequence(log.w, log.r, **seq).interval.low,
    }
    out = {}
    for name in methods:
        try:
            out[name] = float(compute[name]())
        except SolverError:
            out[name] = math.nan
    return out
