r"""Finite-sample one-sided bounds on a policy's value: valid at every ``N``, not only as ``N`` grows.

EL's interval (:func:`elcvx.interval`) is calibrated by the chi-square law of its statistic, a
limit as ``N`` grows. The bounds here hold with probability at least ``confidence_level`` at
every ``N``, for rows ``(w_n, r_n)`` such that, given the rows before it, row ``n`` has
``E[w_n r_n] = V`` (contexts drawn afresh; the logging policy may change between rows) and, for
those that say so, ``E[w_n] = 1``. With ``u = (r - rmin) / (rmax - rmin)`` in ``[0, 1]``,
``delta = 1 - confidence_level`` and ``c`` the counts (``N = sum c``), the lower bounds on the
unit scale are

================  ===========================================================================  ==================
method            lower bound ``L`` (clipped to ``[0, 1]``)                                    parameter (default)
================  ===========================================================================  ==================
``"ls"``          ``(exp(sum c log(1 + lam w u) / N - log(1/delta) / N) - 1) / lam``           ``lam = 1/sqrt(N)``
``"ix"``          ``sum c pi u / (p + gamma) / N - log(1/delta) / (2 gamma N)``, ``pi = w p``  ``gamma = 1/(2 sqrt(N))``
``"eb"``          ``m - sqrt(2 s^2 log(2/delta) / N) - 7 M log(2/delta) / (3 (N - 1))``        ``M = sqrt(N)``
``"el-betting"``  betting on EL's dual with predictable bets (:mod:`.el_betting`)               ``shrink = 0.8``
================  ===========================================================================  ==================

* **LS**, logarithmic smoothing (Sakhi, Aouali, Alquier and Chopin, NeurIPS 2024). For ``lam >
  0`` each factor ``(1 + lam X_n) / (1 + lam V)``, ``X = w u >= 0``, has conditional mean 1,
  so their product is a nonnegative martingale; by Markov's inequality it stays below
  ``1/delta`` with probability ``1 - delta``, which rearranges to ``V >= L``. No weight bound is
  needed (a large ``X`` enters through ``log(1 + lam X)``: smoothed, not clipped). The default
  ``lam`` is the authors' code's (``PsiBoundEstimator`` of ``otmhi/offpolicy_ls``).
* **IX**, implicit exploration (Gabbianelli, Neu and Papini, ALT 2024; Neu 2015's lemma). With
  the logging probability ``p`` of the logged action and ``pi = w p <= 1`` the target's,
  ``pi u / (p + gamma) <= w u / (1 + gamma w u) <= log(1 + 2 gamma w u) / (2 gamma)`` (as ``pi u
  <= 1``), so ``exp(2 gamma (X~_n - V))`` has conditional mean at most 1, and Markov's
  inequality gives ``L``. Needs the logging probabilities (``logging_probs=``), which a
  :class:`~elcvx.Sample` does not hold. ``gamma`` as in the authors' code.
* **EB**, empirical Bernstein on clipped IPS (Maurer and Pontil 2009, Theorem 4, for i.i.d.
  variables in ``[0, M]``): ``x = min(w, M) u`` has mean at most ``V``; ``m`` and ``s^2`` are its
  mean and unbiased variance (``ddof = 1``; the authors' code uses ``ddof = 0``). Needs ``N >= 2``
  and i.i.d. rows.
* **el-betting**: EL's profile dual ``1 + beta (w - 1) + tau (w u - v)`` read as a bet, with bets
  fixed before each row (:mod:`elcvx.estimators.el_betting`); uses ``E[w] = 1`` and the weight
  range ``[wmin, wmax]``, and the rows' order; the tightest of these when ``wmax`` is known.

:func:`gain_lower_bound` bounds the difference of two policies' values on one log from below, by
LS, IX or EB applied to ``Z = w u + w_b (1 - u)``, whose mean is ``1 + V - V_b``.

:func:`upper_bound` applies the same to ``1 - u``: ``E[w (1 - u)] = 1 - V`` when ``E[w] = 1`` (for
IX, ``E[pi (1 - u) / p]`` is ``1 - V`` directly), so ``1 - L(1 - u)`` bounds ``V`` from above.
The choice between them, and against EL: the documentation's page "Pessimistic bounds".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as iv
from ..errors import InvalidInputError
from ..results import _Pair
from ..sample import check_sample

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

    from ..io import Log
    from ..sample import Sample

__all__ = ["METHODS", "FiniteSampleBound", "lower_bound", "upper_bound", "gain_lower_bound",
           "ix_bound_in_chunks"]

#: The bounds by name.
METHODS = ("ls", "ix", "eb", "el-betting")
#: Each method's tuning parameter.
PARAMETERS = {"ls": "lam", "ix": "gamma", "eb": "clip", "el-betting": "shrink"}


@dataclass(frozen=True, eq=False)
class FiniteSampleBound(_Pair):
    """A one-sided finite-sample bound (:func:`lower_bound`, :func:`upper_bound`); unpacks as
    ``(low, high)``.

    Attributes
    ----------
    low, high : float
        The bound and the reward range's other end (``high = rmax`` for a lower bound), on the
        user's reward scale.
    confidence_level : float
    method : str
        One of :data:`METHODS`.
    parameter_name : str
        ``"lam"`` (LS), ``"gamma"`` (IX), ``"clip"`` (EB's ``M``) or ``"shrink"`` (el-betting).
    parameter : float
        Its value, given or tuned.
    estimate : float or None
        The estimator the bound is built around, on the user's scale: the LS estimate
        ``sum c log(1 + lam w u) / (lam N)``, the IX estimate, the clipped IPS mean (for an upper
        bound, of ``1 - u``, reflected back); None for el-betting.
    n : float
    alternative : str
        ``"greater"`` (a lower bound) or ``"less"`` (an upper bound).
    note : str
        Empty, or why the bound is the whole range.
    """

    low: float
    high: float
    confidence_level: float
    method: str
    parameter_name: str
    parameter: float
    estimate: float | None
    n: float
    alternative: str = "greater"
    note: str = ""


def lower_bound(sample: Sample | Log, *, method: str = "ls", confidence_level: float = 0.95,
                logging_probs: ArrayLike | None = None,
                parameter: float | None = None) -> FiniteSampleBound:
    r"""A lower bound on the target policy's value that holds with probability ``confidence_level``
    at the sample's own ``N`` (formulas and conditions: :mod:`elcvx.estimators.finite_sample`).

    Parameters
    ----------
    sample : Sample
        Rows ``(w, r)`` with optional counts (``"el-betting"``: rows in log order, no counts).
    method : {"ls", "ix", "eb", "el-betting"}
    confidence_level : float
        In (0, 1); ``delta = 1 - confidence_level`` is the probability that ``V < low``.
    logging_probs : array_like, optional
        The logging policy's probability of each row's logged action (``"ix"`` only, where it is
        required): in ``(0, 1]``, with ``w * logging_probs <= 1`` (the target's probability).
    parameter : float, optional
        The method's tuning parameter (:data:`PARAMETERS`): LS's ``lam > 0`` (default
        ``1/sqrt(N)``), IX's ``gamma > 0`` (``1/(2 sqrt(N))``), EB's clipping ``M > 0``
        (``sqrt(N)``), el-betting's ``shrink`` in ``(0, 1]`` (0.8).

    Returns
    -------
    FiniteSampleBound
        ``low`` the bound, ``high = rmax``.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx import Sample
    >>> from elcvx.baselines import lower_bound
    >>> s = Sample(np.tile([0.0, 2.0, 2.0, 0.5], 25), np.tile([0.0, 1.0, 0.5, 1.0], 25))
    >>> b = lower_bound(s, method="ls")     # lam = 1/sqrt(100)
    >>> round(b.low, 4), b.parameter_name, b.parameter
    (0.5301, 'lam', 0.1)
    """
    return _bound(sample, method, confidence_level, logging_probs, parameter, "greater")


def upper_bound(sample: Sample | Log, *, method: str = "ls", confidence_level: float = 0.95,
                logging_probs: ArrayLike | None = None,
                parameter: float | None = None) -> FiniteSampleBound:
    r"""An upper bound on the target policy's value: :func:`lower_bound` of the reflected rewards
    ``rmin + rmax - r``, reflected back (valid as it is when ``E[w] = 1``; IX's without it).

    Parameters and result as :func:`lower_bound`, with ``low = rmin`` and ``high`` the bound.
    """
    return _bound(sample, method, confidence_level, logging_probs, parameter, "less")


def _bound(sample: Sample | Log, method: str, confidence_level: float,
           logging_probs: ArrayLike | None, parameter: float | None,
           alternative: str) -> FiniteSampleBound:
    sample = check_sample(sample)
    method = iv.option("method", method, METHODS)
    level = iv.confidence_level(confidence_level)
    delta = 1.0 - level
    p = _logging_probs(sample, method, logging_probs)
    u = sample.u if alternative == "greater" else 1.0 - sample.u
    n = float(sample.n)
    if method == "el-betting":
        from . import el_betting

        shrink = el_betting.DEFAULT_SHRINK if parameter is None else _parameter(method, parameter)
        low_u = el_betting.lower_bound_unit(sample, u, delta, shrink=shrink)
        return _result(sample, alternative, level, method, shrink, low_u, None)
    value = _parameter(method, parameter) if parameter is not None else _default(method, n)
    if method == "eb" and n < 2:
        mean = float(np.dot(sample.c, np.minimum(sample.w, value) * u)) / n
        return _result(sample, alternative, level, method, value, 0.0, mean,
                       f"whole range: no variance estimate with N={n:g} < 2")
    low_u, estimate = _mean_bound(method, sample.w, u, sample.c, n, delta, value, p)
    return _result(sample, alternative, level, method, value, low_u, estimate)


def _mean_bound(method: str, w: np.ndarray, u: np.ndarray | float, c: Any, n: float, delta: float,
                value: float, p: np.ndarray | None) -> tuple[float, float]:
    """``(L, estimate)``: the method's lower bound ``L`` of ``E[w u]`` (not clipped) and the
    estimator it is built around, for ``w u >= 0`` (and for IX ``w p u <= 1``); ``value`` is the
    method's parameter, ``n = sum c >= 2`` for EB."""
    if method == "ls":
        mean = float(np.dot(c, np.log1p(value * w * u))) / n
        return math.expm1(mean - math.log(1.0 / delta) / n) / value, mean / value
    if method == "ix":
        estimate = _ix_sum(c, w, u, p, value) / n
        return _ix_low(estimate, delta, value, n), estimate
    x = np.minimum(w, value) * u
    mean = float(np.dot(c, x)) / n
    var = float(np.dot(c, (x - mean) ** 2)) / (n - 1.0)
    conf = math.log(2.0 / delta)
    return mean - math.sqrt(2.0 * var * conf / n) - 7.0 * value * conf / (3.0 * (n - 1.0)), mean


def gain_lower_bound(sample: Sample, baseline: Sample, *, method: str = "ls",
                     confidence_level: float = 0.95,
                     logging_probs: ArrayLike | None = None) -> float:
    r"""A lower bound on ``V(pi) - V(pi_b)``, paired on one log, that holds with probability
    ``confidence_level`` at the sample's ``N`` (``"ls"``, ``"ix"``, ``"eb"``).

    ``sample`` and ``baseline`` hold the two policies' weights on the same rows (same rewards,
    no counts). On the unit reward scale ``Z = w u + w_b (1 - u) >= 0`` has mean ``V - V_b + 1``
    (as ``E[w_b] = 1``), so the method's bound ``L`` of ``E[Z]`` (its default tuning at ``N``)
    gives ``V - V_b >= L - 1``; IX's condition holds as ``Z p`` is a mean of the two policies'
    probabilities. Returned on the user's scale, ``(rmax - rmin) max(L - 1, -1)``; EB's with
    ``N < 2`` is ``rmin - rmax``.
    """
    method = iv.option("method", method, ("ls", "ix", "eb"))
    level = iv.confidence_level(confidence_level)
    p = _logging_probs(sample, method, logging_probs)
    n = float(sample.n)
    span = sample.rmax - sample.rmin
    if method == "eb" and n < 2:
        return -span
    u = sample.u
    z = sample.w * u + baseline.w * (1.0 - u)
    low, _ = _mean_bound(method, z, 1.0, sample.c, n, 1.0 - level, _default(method, n), p)
    return span * max(low - 1.0, -1.0)


def ix_bound_in_chunks(log: Any, chunks: Iterable[Any], *, confidence_level: float = 0.95,
                       alternative: str = "greater",
                       parameter: float | None = None) -> FiniteSampleBound:
    """IX's bound (``lower_bound(..., method="ix")`` for ``"greater"``, ``upper_bound`` for
    ``"less"``) on a log read in chunks, whose rows are never in memory together.

    IX is a sum over the rows once ``gamma`` is fixed, and ``gamma = 1/(2 sqrt(N))`` needs only
    ``N``, known before the pass: each chunk's sum is added, and the bound is the in-memory one
    up to the order of the additions.

    Parameters
    ----------
    log : Sample or elcvx.io.LogScan
        The whole log's ``n``, ``rmin`` and ``rmax`` (its rows are not read).
    chunks : iterable of (Sample, array_like)
        Every row of the log once, in any order and grouping: a chunk's sample and its rows'
        logging probabilities (checked as ``logging_probs=`` is).
    confidence_level, alternative, parameter
        As for :func:`lower_bound`; ``alternative`` is ``"greater"`` or ``"less"``.
    """
    level = iv.confidence_level(confidence_level)
    alternative = iv.option("alternative", alternative, ("greater", "less"))
    n = float(log.n)
    gamma = _parameter("ix", parameter) if parameter is not None else _default("ix", n)
    total = 0.0
    for sample, p in chunks:
        p = _logging_probs(sample, "ix", p)
        u = sample.u if alternative == "greater" else 1.0 - sample.u
        total += _ix_sum(sample.c, sample.w, u, p, gamma)
    return _ix_result(log, alternative, level, gamma, total)


def _ix_sum(c: Any, w: np.ndarray, u: np.ndarray | float, p: Any, gamma: float) -> float:
    """``sum c pi u / (p + gamma)`` over rows, ``pi = w p``."""
    return float(np.dot(c, w * p * u / (p + gamma)))


def _ix_low(estimate: float, delta: float, gamma: float, n: float) -> float:
    """IX's bound from its estimate: ``estimate - log(1/delta) / (2 gamma N)``."""
    return estimate - math.log(1.0 / delta) / (2.0 * gamma * n)


def _ix_result(log: Any, alternative: str, level: float, gamma: float,
               total: float) -> FiniteSampleBound:
    """IX's bound from its sum over the log's rows: ``total / N - log(1/delta) / (2 gamma N)``."""
    n = float(log.n)
    estimate = total / n
    return _result(log, alternative, level, "ix", gamma, _ix_low(estimate, 1.0 - level, gamma, n),
                   estimate)


def _default(method: str, n: float) -> float:
    """The authors' code's tuning at ``N``: LS's ``1/sqrt(N)``, IX's ``1/(2 sqrt(N))``, EB's
    clipping ``sqrt(N)``."""
    return {"ls": 1.0 / math.sqrt(n), "ix": 0.5 / math.sqrt(n), "eb": math.sqrt(n)}[method]


def _parameter(method: str, value: float) -> float:
    x = iv.finite_scalar("parameter", value)
    ok = 0.0 < x <= 1.0 if method == "el-betting" else x > 0.0
    if not ok:
        where = "in (0, 1]" if method == "el-betting" else "> 0"
        raise InvalidInputError(f"parameter={value!r} ({method}'s {PARAMETERS[method]}) must be "
                                f"{where}", field="parameter", value=value)
    return x


def _logging_probs(sample: Any, method: str, logging_probs: ArrayLike | None) -> np.ndarray | None:
    """IX's logging probabilities, checked: required for ``"ix"`` and refused elsewhere (where
    they would be ignored)."""
    if method != "ix":
        if logging_probs is not None:
            raise InvalidInputError(f"logging_probs is used by method='ix' only, not {method!r}",
                                    field="logging_probs")
        return None
    if logging_probs is None:
        raise InvalidInputError("method='ix' needs logging_probs=: the logging policy's "
                                "probability of each logged action (a Sample holds only the "
                                "weights)", field="logging_probs")
    p, span = iv.vector_and_range("logging_probs", logging_probs, n=sample.n_rows)
    iv.first_bad("logging_probs", p, ~((p > 0.0) & (p <= 1.0)), "is not in (0, 1]")
    pi = sample.w * p
    # The target's probability pi = w p is at most 1 (up to the rounding of w = pi / p).
    iv.first_bad("logging_probs", p, pi > 1.0 + 1e-9, "times its weight exceeds 1: w * p is "
                 "the target policy's probability", count=False)
    return p


def _result(sample: Any, alternative: str, level: float, method: str, parameter: float,
            bound_u: float, estimate_u: float | None, note: str = "") -> FiniteSampleBound:
    """The bound on the user's scale: ``bound_u`` is a lower bound of ``E[w u]`` (``u`` reflected
    for ``"less"``), clipped to ``[0, 1]``."""
    bound_u = min(max(bound_u, 0.0), 1.0)
    if alternative == "greater":
        low, high = sample.to_user(bound_u), sample.rmax
        estimate = None if estimate_u is None else float(sample.rmin + (sample.rmax - sample.rmin) * estimate_u)
    else:
        low, high = sample.rmin, sample.to_user(1.0 - bound_u)
        estimate = None if estimate_u is None else float(sample.rmax - (sample.rmax - sample.rmin) * estimate_u)
    return FiniteSampleBound(float(low), float(high), level, method, PARAMETERS[method],
                             float(parameter), estimate, float(sample.n), alternative, note)
