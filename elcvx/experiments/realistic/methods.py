"""The realistic study's estimators, intervals, objectives and tables, and the numbers of one
evaluation."""

from __future__ import annotations

import math

import numpy as np

from ...evaluation import evaluate_all

__all__ = ["ESTIMATORS", "PAPER_ESTIMATORS", "CV_VERSUS", "INTERVAL_METHODS", "OBJECTIVES", "TABLES",
           "DEFAULT_REPLICATES", "LEVEL", "RAW_TABLES", "evaluate"]

#: The paper's estimators (Table 1 compares ``el`` with the others), then the two that use the
#: reward predictor: ``el-cv`` (EL with its doubly robust control variate) and ``dr`` (doubly
#: robust, ``mean(sum_a pi r_hat + w (r - r_hat(x, a)))``).
ESTIMATORS = ("el", "ips", "snips", "emp", "cr-2", "el-cv", "dr")
PAPER_ESTIMATORS = ESTIMATORS[:5]
#: ``el-cv`` is compared with these (section "EL with a reward predictor" of the summary).
CV_VERSUS = ("ips", "snips", "el", "dr")
INTERVAL_METHODS = ("el-chi2", "el-f", "cr-2-chi2", "cr-2-f", "binomial", "gaussian", "el-cv-chi2",
                    "el-bootstrap")
OBJECTIVES = ("lower_bound", "estimate", "ips", "lower_bound-direct")
TABLES = ("ope", "ci", "learning")
DEFAULT_REPLICATES = 60
LEVEL = 0.95

# The raw per-replicate tables: file -> (RealisticStudy attribute, columns); the first four columns
# identify a row (the fourth names the estimator, interval method or objective).
RAW_TABLES = {
    "ope.csv": ("ope", ("dataset", "strategy", "replicate", "estimator", "estimate", "truth")),
    "intervals.csv": ("intervals", ("dataset", "strategy", "replicate", "method", "low", "high", "truth")),
    "learning.csv": ("learning", ("dataset", "strategy", "replicate", "objective", "true_value")),
}



# The study's names of evaluate_all's numbers.
_ESTIMATES = {"el": "el", "ips": "ips", "snips": "snips", "emp": "emp", "cr-2": "cr"}
_INTERVALS = {"el-chi2": "el-chi2", "el-f": "el-f", "cr-2-chi2": "cr-chi2", "cr-2-f": "cr-f",
              "binomial": "binomial", "gaussian": "gaussian", "el-bootstrap": "el-bootstrap"}


def evaluate(sample, predicted=None, expected=None, deterministic=False):
    """The estimates and intervals of one evaluation, and its solver counts.

    ``predicted``, ``expected``: the reward predictor's ``r_hat(x_n, a_n)`` and ``sum_a pi(a|x_n)
    r_hat(x_n, a)`` per row, for ``el-cv`` and ``dr`` (both ``nan`` without them). EL takes
    ``rho`` = the midpoint, the paper's 1/2 (docs/rho.md), and ``method="auto"``: the EL
    computations the fast path did not solve are counted as ``el_fallbacks`` /
    ``elcv_fallbacks``. An ``el-cv`` computation that fails both ways is ``nan``, counted as
    ``elcv_failures`` (and as a fallback) with its message in ``errors``; the paper's EL is not
    expected to fail and raises. Returns ``(estimates, intervals, counts, errors)``.
    """
    from ... import constraints

    ev = evaluate_all(sample, tuple(_ESTIMATES.values()), tuple(_INTERVALS.values()),
                      confidence_level=LEVEL, rho="midpoint")
    est = {k: ev.estimates[name] for k, name in _ESTIMATES.items()} | {"el-cv": math.nan, "dr": math.nan}
    ivs = {k: ev.intervals[name] for k, name in _INTERVALS.items()} | {"el-cv-chi2": (math.nan, math.nan)}
    counts = {"el_fallbacks": len(ev.fell_back), "elcv_fallbacks": 0, "elcv_failures": 0}
    errors = []
    if predicted is not None:
        predicted, expected = np.asarray(predicted, dtype=float), np.asarray(expected, dtype=float)
        cv = constraints.reward_model(sample, predicted, expected, deterministic=deterministic)
        cv_ev = evaluate_all(sample, ("el",), ("el-chi2",), confidence_level=LEVEL, rho="midpoint",
                             constraints=[cv], catch=(Exception,))
        est["el-cv"] = cv_ev.estimates.get("el", math.nan)
        ivs["el-cv-chi2"] = cv_ev.intervals.get("el-chi2", (math.nan, math.nan))
        counts["elcv_fallbacks"] = len(cv_ev.fell_back) + len(cv_ev.errors)
        counts["elcv_failures"] = len(cv_ev.errors)
        errors = [f"{'estimate' if name == 'el' else 'interval'}: {message}"
                  for name, message in cv_ev.errors.items()]
        est["dr"] = float(np.mean(expected + sample.w * (sample.r - predicted)))
    return est, {k: (float(v[0]), float(v[1])) for k, v in ivs.items()}, counts, errors
