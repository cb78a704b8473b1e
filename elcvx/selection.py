r"""Choosing among candidate policies on one log, with bounds that still hold after the choice.

A user with ``K`` candidate policies evaluates them all on the same log and deploys the one that
looks best. Each candidate's bound at level ``1 - delta`` holds for that candidate; the bound of
the one picked *because* its bound was largest does not: the largest of ``K`` bounds is
optimistic by the selection. :func:`select` makes every number it reports hold **together**:

* it states ``m`` facts — each candidate's value is at least its ``low`` (``K`` statements) and,
  given a baseline, each candidate's value exceeds the baseline's by at least its ``gain`` (one
  statement per candidate that is not the baseline itself);
* each is a one-sided bound at level ``1 - delta/m`` (Bonferroni), so with probability at least
  ``1 - delta`` all ``m`` hold at once, whichever candidate is then chosen and however;
* the choice is a function of those bounds (the ``rule``), so the chosen candidate's ``low`` and
  ``gain`` keep their promise after the choice.

The gain is **paired**: one bound on ``V_k - V_b`` from the same log, not two marginal bounds
subtracted, so what the two policies share (most rows, when they agree) does not widen it:

* ``"el"``: the EL interval of the difference (:func:`elcvx.difference`, one-sided), on rows
  ``(w_k, w_b, r)``; where the baseline is the logging policy ``w_b = 1`` on every row and at
  every unlogged example, and the extra atoms say so;
* ``"ls"``, ``"ix"``, ``"eb"``: the method's finite-sample lower bound of the mean of
  ``Z = w_k u + w_b (1 - u) >= 0``, where ``E[Z] = 1 + V_k - V_b`` because ``E[w_b] = 1`` (``u``
  the reward on ``[0, 1]``): :func:`elcvx.estimators.finite_sample.gain_lower_bound`;
* ``"el-betting"``: it bets on ``E[w] = 1``, which ``Z`` does not have, so its gain is the
  candidate's lower bound minus the baseline's upper bound (one more statement).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from . import _validation as iv
from .errors import InvalidInputError
from .results import _ReadOnlyArrays
from .sample import Sample

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

_T = TypeVar("_T")  # (what _each's function returns)

__all__ = ["select", "SelectionResult", "METHODS", "RULES"]

#: The bounds a selection can rest on: one-sided EL, and the finite-sample bounds of
#: :func:`elcvx.baselines.lower_bound`.
METHODS = ("el", "el-betting", "ls", "ix", "eb")
#: How the candidate is chosen from the simultaneous bounds (:func:`select`).
RULES = ("bound", "gain", "estimate")


@dataclass(frozen=True, eq=False)
class SelectionResult(_ReadOnlyArrays):
    """The candidates' simultaneous bounds and the one chosen (:func:`select`).

    ``to_frame()`` has one row per candidate, in input order: ``name``, ``estimate``, ``low``,
    ``gain`` and ``is_chosen``; :attr:`guarantee` says what holds, in words.

    Attributes
    ----------
    name : tuple of str
        The candidates' names.
    estimate : ndarray
        Each candidate's point estimate (the method's own: EL's MLE for ``"el"`` and
        ``"el-betting"``, LS's, IX's and clipped IPS's for the others), on the user's scale.
    low : ndarray
        Each candidate's lower bound; all hold together with the gains (see :attr:`guarantee`).
    gain : ndarray
        Each candidate's certified improvement over the baseline: a lower bound of ``V_k -
        V_baseline`` (0 for the baseline itself; NaN without a baseline).
    is_chosen : ndarray of bool
        True at the chosen candidate.
    chosen : int or None
        The chosen candidate's position; None when the baseline is not a candidate and none is
        certified to beat it (keep the baseline).
    chosen_name : str or None
    certified_gain : float
        ``gain`` of the chosen candidate (0 when the baseline is kept; NaN without a baseline).
    baseline : str or None
        The baseline's name (``"logging"`` for the logging policy).
    method, rule : str
    confidence_level : float
        The probability that every ``low`` and ``gain`` holds at once.
    statements : int
        ``m``, the bounds that hold together; each is at level ``1 - (1 - confidence_level)/m``.
    statement_level : float
        That level.
    n : int or float
        The examples in the log.
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ("name", "estimate", "low", "gain", "is_chosen")

    name: tuple[str, ...]
    estimate: np.ndarray
    low: np.ndarray
    gain: np.ndarray
    is_chosen: np.ndarray
    chosen: int | None
    chosen_name: str | None
    certified_gain: float
    baseline: str | None
    method: str
    rule: str
    confidence_level: float
    statements: int
    statement_level: float
    n: Any

    @property
    def beats_baseline(self) -> bool:
        """Whether the chosen candidate is certified to be better than the baseline."""
        return bool(self.certified_gain > 0.0)

    @property
    def guarantee(self) -> str:
        """What holds, in one sentence, and what was chosen."""
        kind = "asymptotically (one-sided EL)" if self.method == "el" else f"at every N ({self.method})"
        gains = (f" and exceeds the baseline '{self.baseline}' by at least its gain"
                 if self.baseline is not None else "")
        head = (f"With probability at least {self.confidence_level:g}, {kind}, every candidate's "
                f"value is at least its low{gains} ({self.statements} statements, each at level "
                f"{self.statement_level:.6g}).")
        if self.chosen is None:
            return head + f" No candidate is certified to beat '{self.baseline}': keep it."
        tail = f" Chosen: '{self.chosen_name}' (rule {self.rule!r})"
        if self.baseline is not None and self.chosen_name != self.baseline:
            verdict = "certified better than" if self.beats_baseline else "not certified better than"
            tail += f", {verdict} '{self.baseline}' (gain >= {self.certified_gain:.6g})"
        return head + tail + "."


def select(target_probs: ArrayLike, logging_probs: ArrayLike, rewards: ArrayLike, *,
           pmin: float | None = None, wmax: float | ArrayLike | None = None,
           rmin: float = 0.0, rmax: float = 1.0, names: ArrayLike | None = None,
           baseline: int | str | ArrayLike | None = None, confidence_level: float = 0.95,
           method: str = "el", rule: str = "bound", calibration: str = "chi2",
           solver: str = "auto", threads: int | None = None) -> SelectionResult:
    r"""Choose the best of ``K`` candidate policies from one log, with bounds valid after the choice.

    Row ``n`` of the log has the logging policy's probability ``p_n`` of the logged action, its
    reward ``r_n`` and each candidate's probability ``pi_k(a_n|x_n)`` of that action, so
    candidate ``k``'s weights are ``w_kn = pi_k(a_n|x_n) / p_n``. With ``delta = 1 -
    confidence_level`` and ``m`` the number of statements (``K`` lower bounds, and with a
    baseline one paired gain per other candidate), every bound is computed at level ``1 -
    delta/m``; then, with probability at least ``1 - delta``,

    .. math:: V_k \ge \mathrm{low}_k \quad\text{and}\quad V_k - V_b \ge \mathrm{gain}_k
              \qquad\text{for every } k \text{ at once,}

    so the chosen candidate's bounds hold whatever the choice (the module's docstring gives the
    paired gain of each method).

    Parameters
    ----------
    target_probs : array_like of shape (N, K), or a DataFrame
        Each candidate's probability of the logged action (a 1-d array: one candidate). A
        DataFrame's columns (or a dict's keys) name the candidates.
    logging_probs : array_like of shape (N,)
        The logging policy's probability of the logged action, in ``(0, 1]``.
    rewards : array_like of shape (N,)
        In ``[rmin, rmax]``.
    pmin : float, optional
        The least probability the logging policy gives any action: every weight is then at most
        ``1/pmin``.
    wmax : float or array_like of shape (K,), optional
        Each candidate's weight bound (overrides ``pmin``); default ``1/pmin``, or infinite
        (always valid; EL's bounds are then wider).
    rmin, rmax : float
        The reward range.
    names : sequence of str, optional
        The candidates' names (default: the DataFrame's columns, else ``"0"``, ``"1"``, ...).
    baseline : None, "logging", int, str or array_like of shape (N,)
        What the candidates must beat: the logging policy (``"logging"``), a candidate (its
        position or name), or another policy's probabilities of the logged actions: each
        candidate's certified gain over it is reported (and bounded with the others). Without
        one there are no gains.
    confidence_level : float
        The probability that every reported bound holds at once.
    method : {"el", "el-betting", "ls", "ix", "eb"}
        ``"el"`` (default): one-sided EL (:func:`elcvx.interval` with ``alternative="greater"``
        and :func:`elcvx.difference`), the tightest, asymptotic; the others hold at every ``N``
        (:func:`elcvx.baselines.lower_bound`, their defaults; ``"el-betting"`` needs finite
        weight bounds to be tight).
    rule : {"bound", "gain", "estimate"}
        ``"bound"`` (default): the largest lower bound, so the chosen candidate's certified value
        is the largest any candidate has. ``"gain"``: the largest certified gain over the
        baseline if any is positive, else the baseline; ``"estimate"``: the largest estimate
        among the candidates certified better than the baseline, else the baseline. Under
        these two the chosen policy is, with probability ``1 - delta``, no worse than the
        baseline; they need one, and they keep it more often (on the policy-selection study of
        the documentation, "bound" chose the best candidate in 39 of 50 trials, "gain" in 34,
        and neither ever a worse one than the logging policy). Ties go to the baseline, then to
        the first in input order.
    calibration : {"chi2", "f"}
        EL's threshold (``method="el"`` only).
    solver : {"auto", "fast", "cvxpy"}
        EL's solver path (``method="el"``, ``"el-betting"``'s estimate).
    threads : int, optional
        The candidates are computed on this many threads at once (default
        ``ELCVX_NUM_THREADS``, else every core) on logs of at least :data:`THREADED_ROWS` rows,
        where the passes' compiled kernels leave Python's lock free; each candidate's numbers
        are those of its own call, whatever the threads.

    Returns
    -------
    SelectionResult

    Examples
    --------
    Three candidates on a log of 400 rows whose logging policy is uniform over two actions:

    >>> import numpy as np
    >>> import elcvx
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)                    # logged actions, p = 1/2 each
    >>> r = (rng.random(400) < np.where(a == 1, 0.8, 0.3)).astype(float)
    >>> pi1 = np.array([0.5, 0.9, 0.1])                # each candidate's probability of action 1
    >>> probs = np.where(a[:, None] == 1, pi1, 1 - pi1)
    >>> res = elcvx.select(probs, np.full(400, 0.5), r, pmin=0.5, names=["same", "good", "bad"],
    ...                    baseline="logging")
    >>> res.chosen_name, res.beats_baseline
    ('good', True)
    """
    level = iv.confidence_level(confidence_level)
    method = iv.option("method", method, METHODS)
    calibration = iv.option("calibration", calibration, iv.CALIBRATIONS)
    solver = iv.option("solver", solver, iv.METHODS)
    probs, labels = _candidates(target_probs, names)
    k = probs.shape[1]
    p0 = iv.vector("logging_probs", logging_probs, n=probs.shape[0], length_of="target_probs")
    iv.first_bad("logging_probs", p0, ~((p0 > 0.0) & (p0 <= 1.0)), "must lie in (0, 1]")
    r = iv.vector("rewards", rewards, n=p0.size, length_of="logging_probs")
    bounds = _weight_bounds(pmin, wmax, k, p0)
    samples = [_sample(probs[:, j], p0, r, bounds[j], rmin, rmax, labels[j]) for j in range(k)]
    base = _baseline(baseline, probs, labels, p0, r, bounds, pmin, wmax, rmin, rmax)
    rule = iv.option("rule", rule, RULES)
    if rule != "bound" and base is None:
        raise InvalidInputError(f"rule={rule!r} compares the candidates with a baseline: give "
                                "baseline= ('logging', a candidate, or probabilities)",
                                field="rule", value=rule)
    paired = [] if base is None else [j for j in range(k) if j != base.index]
    statements = k + len(paired) + (1 if method == "el-betting" and paired else 0)
    each = 1.0 - (1.0 - level) / statements
    bound = _Bounds(method, each, calibration, solver, p0)
    top = (bound.upper(base.sample) if method == "el-betting" and paired and base is not None
           else None)  # (paired: there is a baseline)
    wanted = set(paired)

    def numbers(j: int) -> tuple[float, float, float]:
        """Candidate ``j``'s ``(estimate, low, gain)``."""
        e, lo = bound.marginal(samples[j])
        if j not in wanted:
            return e, lo, 0.0 if base is not None and j == base.index else math.nan
        assert base is not None  # (wanted: paired with a baseline)
        return e, lo, (lo - top) if top is not None else bound.paired(samples[j], base)

    estimate, low, gain = (np.array(x, dtype=float)
                           for x in zip(*_each(numbers, k, threads, samples[0].n_rows)))
    chosen = _choose(rule, estimate, low, gain, None if base is None else base.index)
    is_chosen = np.zeros(k, dtype=bool)
    if chosen is not None:
        is_chosen[chosen] = True
    certified = math.nan if base is None else (0.0 if chosen is None else float(gain[chosen]))
    return SelectionResult(tuple(labels), estimate, low, gain, is_chosen, chosen,
                           None if chosen is None else labels[chosen], certified,
                           None if base is None else base.name, method, rule, level, statements,
                           each, samples[0].n)


# ------------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------------
def _candidates(target_probs: Any, names: Any) -> tuple[np.ndarray, list[str]]:
    """``(N x K float array, names)``: the candidates' probabilities, checked to lie in [0, 1]."""
    labels = None
    if hasattr(target_probs, "columns") and hasattr(target_probs, "to_numpy"):  # a DataFrame
        labels = [str(c) for c in target_probs.columns]
        target_probs = target_probs.to_numpy(dtype=float)
    elif isinstance(target_probs, dict):
        labels = [str(c) for c in target_probs]
        target_probs = np.column_stack([np.asarray(v, dtype=float) for v in target_probs.values()])
    try:
        probs = np.array(target_probs, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError("target_probs must be an (N, K) array of probabilities",
                                field="target_probs") from None
    probs = probs.reshape(-1, 1) if probs.ndim == 1 else probs
    if probs.ndim != 2 or 0 in probs.shape:
        raise InvalidInputError(f"target_probs must be an (N, K) array with N, K >= 1; got shape "
                                f"{np.shape(target_probs)}", field="target_probs")
    bad = ~((probs >= 0.0) & (probs <= 1.0))  # (NaN included)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise InvalidInputError(f"target_probs[{i}, {j}]={float(probs[i, j])!r} is not a probability in "
                                f"[0, 1] ({int(bad.sum())} such values)", field="target_probs",
                                index=(i, j), value=float(probs[i, j]))
    if names is not None:
        labels = [str(x) for x in names]
        if len(labels) != probs.shape[1]:
            raise InvalidInputError(f"names has {len(labels)} entries for {probs.shape[1]} "
                                    "candidates", field="names")
    labels = labels or [str(j) for j in range(probs.shape[1])]
    if len(set(labels)) != len(labels):
        raise InvalidInputError(f"candidate names must be distinct: {labels}", field="names")
    return probs, labels


def _weight_bounds(pmin: float | None, wmax: Any, k: int, p0: np.ndarray) -> list[float]:
    """Each candidate's weight bound: ``wmax`` (a number or one per candidate), else
    ``1/pmin``, else infinite."""
    if wmax is not None:
        bounds = np.broadcast_to(np.asarray(wmax, dtype=float), (k,)) if np.ndim(wmax) == 0 \
            else np.asarray(wmax, dtype=float)
        if bounds.shape != (k,):
            raise InvalidInputError(f"wmax must be a number or one per candidate ({k}); got "
                                    f"shape {np.shape(wmax)}", field="wmax")
        for j, x in enumerate(bounds):
            if not x > 1.0:  # (NaN included)
                raise InvalidInputError(f"wmax[{j}]={float(x)!r} must be > 1", field="wmax",
                                        index=j, value=float(x))
        return [float(x) for x in bounds]
    if pmin is not None:
        pmin = iv.pmin(pmin)
        iv.first_bad("logging_probs", p0, p0 < pmin * (1 - 1e-12), f"is below pmin={pmin!r}",
                     count=False)
        return [1.0 / pmin] * k
    return [math.inf] * k


def _sample(pi: np.ndarray, p0: np.ndarray, r: np.ndarray, wmax: float, rmin: float, rmax: float,
            label: str) -> Sample:
    """Candidate ``label``'s sample, its weight errors named after it."""
    try:  # (the weight check is the caller's: elcvx select notes each candidate's)
        return Sample.from_probs(pi, p0, r, wmax=wmax, rmin=rmin, rmax=rmax, check=False)
    except InvalidInputError as e:
        field = {"w": f"candidate {label!r}'s weight target_probs/logging_probs",
                 "r": "rewards"}.get(e.field or "", e.field)
        raise InvalidInputError(f"{field}: {e}", field=e.field, index=e.index, value=e.value,
                                reason=e.reason) from None


@dataclass(frozen=True)
class _Baseline:
    """What the candidates are compared with: its name, its sample, its position among the
    candidates (None if it is not one), and the atoms of the paired EL model."""

    name: str
    sample: Sample
    index: int | None
    logging: bool


def _baseline(baseline: Any, probs: np.ndarray, labels: list[str], p0: np.ndarray, r: np.ndarray,
              bounds: list[float], pmin: float | None, wmax: Any, rmin: float,
              rmax: float) -> _Baseline | None:
    if baseline is None:
        return None
    if isinstance(baseline, str) and baseline == "logging" and "logging" not in labels:
        # The logging policy's weight is 1 at every row and every unlogged example; the sample's
        # bound 2 is only there to make a Sample (its atoms say w_b = 1).
        return _Baseline("logging", Sample(np.ones(p0.size), r, wmax=2.0, rmin=rmin, rmax=rmax),
                         None, True)
    if isinstance(baseline, (str, int, np.integer)) and not isinstance(baseline, bool):
        if isinstance(baseline, str):
            if baseline not in labels:
                raise InvalidInputError(f"baseline={baseline!r} is not a candidate; choose "
                                        f"'logging' or one of {labels}", field="baseline",
                                        value=baseline)
            j = labels.index(baseline)
        else:
            j = int(baseline)
            if not 0 <= j < len(labels):
                raise InvalidInputError(f"baseline={baseline!r} is not a candidate's position "
                                        f"(0 to {len(labels) - 1})", field="baseline", value=j)
        logging = bool(np.array_equal(probs[:, j], p0))
        # The logging policy's weight is 1 everywhere: any bound above 1 is valid for it, and
        # the paired model needs one finite weight bound (its atoms say w_b = 1).
        bound = 2.0 if logging and math.isinf(bounds[j]) else bounds[j]
        return _Baseline(labels[j], _sample(probs[:, j], p0, r, bound, rmin, rmax, labels[j]),
                         j, logging)
    pi = iv.vector("baseline", baseline, n=p0.size, length_of="logging_probs")
    iv.within("baseline", pi, 0.0, 1.0)
    bound = float(wmax) if wmax is not None and np.ndim(wmax) == 0 else (
        1.0 / pmin if pmin is not None else math.inf)
    logging = bool(np.array_equal(pi, p0))
    bound = 2.0 if logging and math.isinf(bound) else bound
    return _Baseline("baseline", _sample(pi, p0, r, bound, rmin, rmax, "baseline"), None, logging)


# ------------------------------------------------------------------------------------------------
# The bounds
# ------------------------------------------------------------------------------------------------
class _Bounds:
    """One method's bounds at one level: a candidate's ``(estimate, low)``, the baseline's
    upper bound, a paired gain."""

    def __init__(self, method: str, level: float, calibration: str, solver: str,
                 p0: np.ndarray) -> None:
        self.method, self.level, self.calibration, self.solver, self.p0 = (
            method, level, calibration, solver, p0)

    def _finite(self, sample: Sample, upper: bool = False) -> Any:
        from .estimators import finite_sample

        fn = finite_sample.upper_bound if upper else finite_sample.lower_bound
        p = self.p0 if self.method == "ix" else None
        return fn(sample, method=self.method, confidence_level=self.level, logging_probs=p)

    def marginal(self, sample: Sample) -> tuple[float, float]:
        if self.method in ("el", "el-betting"):
            from .estimate import estimate

            value = estimate(sample, method=self.solver).value
            if self.method == "el-betting":
                return value, self._finite(sample).low
            from .interval import interval

            low = interval(sample, confidence_level=self.level, calibration=self.calibration,
                           method=self.solver, alternative="greater").low
            return value, low
        b = self._finite(sample)
        return b.estimate, b.low

    def upper(self, sample: Sample) -> float:
        return float(self._finite(sample, upper=True).high)

    def paired(self, sample: Sample, base: _Baseline) -> float:
        if self.method == "el":
            from .difference import difference

            atoms = None
            if base.logging:  # w_b = 1 wherever an example may fall
                top = sample.wmax if math.isfinite(sample.wmax) else math.inf
                atoms = [(sample.wmin, 1.0), (top, 1.0 if math.isfinite(top) else 0.0)]
            return difference(sample, base.sample, confidence_level=self.level,
                              calibration=self.calibration, method=self.solver, atoms=atoms,
                              alternative="greater").low
        from .estimators.finite_sample import gain_lower_bound

        return gain_lower_bound(sample, base.sample, method=self.method,
                                confidence_level=self.level,
                                logging_probs=self.p0 if self.method == "ix" else None)


#: The rows from which the candidates are computed on several threads (below, a candidate's work
#: is mostly Python, which one thread runs at a time).
THREADED_ROWS = 50_000


def _each(fn: Callable[[int], _T], k: int, threads: int | None, rows: float) -> list[_T]:
    """``[fn(0), ..., fn(k - 1)]``, on ``threads`` threads when the log is long enough."""
    from concurrent.futures import ThreadPoolExecutor

    from .engines.threads import num_threads

    count = min(num_threads(threads), k) if rows >= THREADED_ROWS else 1
    if count <= 1:
        return [fn(j) for j in range(k)]
    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="elcvx-select") as pool:
        return list(pool.map(fn, range(k)))


def _choose(rule: str, estimate: np.ndarray, low: np.ndarray, gain: np.ndarray,
            base: int | None) -> int | None:
    """The chosen position (None: keep a baseline that is not a candidate). Ties go to the
    baseline, then to the first in input order."""
    if rule == "bound":
        best = np.flatnonzero(low == low.max())
        return base if base is not None and base in best else int(best[0])
    certified = np.flatnonzero(gain > 0.0)
    if not certified.size:
        return base
    score = gain if rule == "gain" else estimate
    top = score[certified]
    return int(certified[np.flatnonzero(top == top.max())[0]])
