"""How each method chooses a candidate on one log: :func:`choose`, the study's only chooser.

Every method but ``select`` gives each candidate a number and takes the largest, ties broken by
the lowest candidate index (the authors' code sorts stably and takes the *last* of the largest;
where their bounds clip to 0 for several candidates the two rules differ, see the study's page):

* ``ips``, ``snips``: the point estimates;
* ``ls``, ``ix``, ``eb``, ``el-betting``: :func:`elcvx.baselines.lower_bound` at ``1 - 0.05/4``
  per candidate (Bonferroni over the four, as the authors' ``delta = 0.05/4``);
* ``el``: EL's one-sided lower bound, :func:`elcvx.interval` with ``alternative="greater"`` and
  ``calibration="chi2"`` (as :func:`elcvx.select`'s), at the same level;
* ``select``: :func:`elcvx.select`'s default rule, one call on all the candidates together,
  simultaneous at 0.95, the logging policy as the baseline.

A bound the solvers cannot compute (:class:`~elcvx.errors.SolverError`) is ``nan`` and never
chosen.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ... import baselines
from ...errors import InvalidInputError, SolverError
from ...interval import interval
from ...sample import Sample

#: The family-wise level of the study, split over the four candidates for the per-candidate
#: methods (the authors' ``get_estimators(delta=0.05/4)``).
DELTA = 0.05
#: The methods, in the order of the tables, with what each is.
METHODS = {
    "ips": "IPS point estimate",
    "snips": "self-normalised IPS point estimate",
    "ls": "logarithmic smoothing lower bound, lam = 1/sqrt(N)",
    "ix": "implicit exploration lower bound, gamma = 1/(2 sqrt(N))",
    "eb": "empirical Bernstein lower bound on clipped IPS, M = sqrt(N)",
    "el-betting": "EL's dual as a bet (finite-sample), known weight bound",
    "el": "EL's one-sided lower bound (asymptotic), known weight bound",
    "select": "elcvx.select's default rule, simultaneous at 0.95, baseline the logging policy",
}
#: The methods that choose by a point estimate (no lower bound).
POINT = ("ips", "snips")


class Choice(NamedTuple):
    """One method's choice on one log: the candidate's index (the first of the largest), the
    last of the largest (the authors' choice; the same index without a tie), how many
    candidates shared the largest number (1 without a tie), and each candidate's lower bound
    (``nan`` for a point estimate) and IPS estimate."""

    index: int  # type: ignore[assignment]  # (a field named as tuple.index, which it hides)
    last: int
    tied: int
    low: np.ndarray
    estimate: np.ndarray


def select_function():
    """:func:`elcvx.select`, or None in a version of elcvx without it."""
    import elcvx

    return getattr(elcvx, "select", None)


def available_methods() -> tuple:
    """The methods this installation can run (``select`` only where :func:`elcvx.select` is)."""
    return tuple(m for m in METHODS if m != "select" or select_function() is not None)


def _largest(numbers: np.ndarray) -> tuple[int, int, int]:
    """``(first, last, ties)``: the first and last index of the largest non-nan number and how
    many share it (all of them when every number is nan)."""
    finite = np.where(np.isnan(numbers), -np.inf, numbers)
    (where,) = np.nonzero(finite == finite.max())
    return int(where[0]), int(where[-1]), int(where.size)


def _bound(method: str, sample: Sample, p0: np.ndarray, level: float) -> float:
    try:
        if method == "el":
            return float(interval(sample, confidence_level=level, alternative="greater",
                                  calibration="chi2").low)
        return float(baselines.lower_bound(sample, method=method, confidence_level=level,
                                           logging_probs=p0 if method == "ix" else None).low)
    except SolverError:
        return math.nan


def choose(method: str, target_probs: np.ndarray, logging_probs: np.ndarray,
           rewards: np.ndarray, wmax: np.ndarray, baseline: int) -> Choice:
    """The candidate ``method`` chooses on one log.

    ``target_probs`` is ``(N, K)``: each candidate's probability of the logged action;
    ``logging_probs`` the logging policy's; ``wmax`` each candidate's weight bound; ``baseline``
    the index of the logging policy among the candidates (used by ``select`` only).
    """
    if method not in METHODS:
        raise InvalidInputError(f"method={method!r}: choose among {', '.join(METHODS)}",
                                field="method", value=method)
    P = np.asarray(target_probs, dtype=float)
    p0 = np.asarray(logging_probs, dtype=float)
    r = np.asarray(rewards, dtype=float)
    w = P / p0[:, None]
    estimate = w.T @ r / r.size
    k = P.shape[1]
    if method == "select":
        fn = select_function()
        if fn is None:
            raise InvalidInputError("method='select' needs elcvx.select, which this version of "
                                    "elcvx does not have", field="method", value=method)
        res = fn(P, p0, r, wmax=np.asarray(wmax, dtype=float), baseline=int(baseline),
                 confidence_level=1.0 - DELTA)
        return Choice(int(res.chosen), int(res.chosen), 1, np.asarray(res.low, dtype=float),
                      estimate)
    if method in POINT:
        numbers = estimate if method == "ips" else (w.T @ r) / w.sum(axis=0)
        return Choice(*_largest(numbers), np.full(k, math.nan), estimate)
    level = 1.0 - DELTA / k
    low = np.array([_bound(method, Sample(w[:, j], r, wmax=float(wmax[j])), p0, level)
                    for j in range(k)])
    return Choice(*_largest(low), low, estimate)
