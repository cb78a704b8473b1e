"""The synthetic study's estimators and intervals, and their numbers on one sample."""

from __future__ import annotations

import numpy as np

from ...evaluation import evaluate_all
from ...sample import Sample

__all__ = ["ESTIMATORS", "INTERVAL_METHODS", "EVENTS", "evaluate"]

#: Point estimators (Figure 1), in the order of the tables: name -> label.
ESTIMATORS = {
    "constant": "Constant",
    "clipped-dr": "ClippedDR",
    "snips": "SNIPS",
    "ips": "IPS",
    "emp": "EMP",
    "cr": "CR(-2)",
    "el": "EL",
}
#: Interval methods (Figure 2): name -> label.
INTERVAL_METHODS = {
    "el-chi2": "EL (chi2)",
    "el-f": "EL (F)",
    "cr-chi2": "CR(-2) (chi2)",
    "cr-f": "CR(-2) (F)",
    "binomial": "Binomial (Clopper-Pearson)",
    "gaussian": "Asymptotic Gaussian",
}
#: Degenerate cases and solver fallbacks counted per replicate (see :func:`evaluate`).
EVENTS = ("snips-undefined", "el-fallback")

_EST = tuple(ESTIMATORS)
_INT = tuple(INTERVAL_METHODS)


def evaluate(sample: Sample, *, confidence_level: float = 0.95):
    """Every estimator and interval of the study on one sample (:func:`elcvx.evaluation.evaluate_all`).

    EL takes ``rho`` = the reward midpoint, as CR(-2) and ClippedDR do.

    Returns
    -------
    estimates : ndarray, shape (len(ESTIMATORS),)
    lows, highs : ndarray, shape (len(INTERVAL_METHODS),)
    events : dict
        ``snips-undefined``: 1 when every weight is 0 and SNIPS is the reward midpoint (1/2, the
        authors' convention, :func:`elcvx.baselines.snips`); ``el-fallback``: how many EL
        computations the fast path did not solve and the cvxpy path (``method="auto"``) did.
    """
    mid = 0.5 * (sample.rmin + sample.rmax)
    ev = evaluate_all(sample, _EST, _INT, confidence_level=confidence_level, rho=mid)
    events = {"snips-undefined": int("snips" in ev.notes), "el-fallback": len(ev.fell_back)}
    return (np.array([ev.estimates[e] for e in _EST]),
            np.array([float(ev.intervals[m][0]) for m in _INT]),
            np.array([float(ev.intervals[m][1]) for m in _INT]), events)
