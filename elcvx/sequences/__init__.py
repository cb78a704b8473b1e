r"""Anytime-valid confidence sequences for a policy's value, for logs that are watched as they grow.

The EL interval (:func:`elcvx.interval`) holds, asymptotically, for one look at a log of fixed
size. A team that looks again and again as the log grows (or stops when the interval looks good)
needs bounds ``(L_t, U_t)`` with ``P(L_t <= V(pi) <= U_t for every t) >= confidence_level``: a
*confidence sequence*. Two are offered, both from ``(w, r)`` in log order, valid when the
logging policy changes over time (each ``w_t`` uses the probability the policy had then), and
neither needs a bound on the weights:

* :func:`betting_sequence` (:class:`BettingSequence`): the betting confidence sequence of
  Waudby-Smith, Wu, Ramdas, Karampatziakis and Mineiro, "Anytime-valid off-policy inference for
  contextual bandits" (2022), with a predictable plug-in bet (module :mod:`elcvx.sequences.betting`);
* :func:`ddrm_sequence` (:class:`DDRMSequence`): the heavy-tailed lower sequence of Mineiro, "A
  lower confidence sequence for the changing mean of non-negative right heavy-tailed
  observations with bounded mean" (2022), the "DDRM" bound of Vowpal Wabbit (:mod:`elcvx.sequences.ddrm`).

Each side is a *lower* sequence for the mean of a non-negative variable whose mean is at most 1:
with rewards mapped to ``u = (r - rmin) / (rmax - rmin)`` in ``[0, 1]``, ``E[w u] = V`` and, as
``E[w] = 1``, ``E[w (1 - u)] = 1 - V``. So ``L_t`` is the lower sequence of ``w u`` and ``U_t`` is
1 minus the lower sequence of ``w (1 - u)``, each at level ``alpha / 2`` (``alpha = 1 -
confidence_level``): a union bound over the two sides.

:func:`merge_sequences` combines the sequences of logs collected in separate places (shards).
The derivations and the measured coverage and widths are in the documentation's page
"Confidence sequences".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as iv
from ..errors import InvalidInputError
from ..results import ConfidenceInterval, SequenceResult, _Converts
from ..sample import MAX_WEIGHT
from . import betting as _betting
from . import ddrm as _ddrm

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

__all__ = ["BettingSequence", "DDRMSequence", "betting_sequence", "ddrm_sequence",
           "merge_sequences", "MERGES"]

#: How :func:`merge_sequences` combines shards.
MERGES = ("product", "union")


def __dir__() -> list[str]:
    # What the module offers, not what it imports (np, math, iv, ...): dir() and a notebook's
    # tab completion list the names of __all__.
    return sorted(__all__)


class _Sequence(_Converts):
    """A confidence sequence fed in log order: ``update(w, r)`` with a row or a chunk of rows.

    Feeding a log in any chunking gives exactly the bounds of one call on the whole log. Like
    every result, it converts (:mod:`elcvx._convert`): ``to_dict()`` and ``to_frame()`` (one
    row) give its state after the last example fed: ``method``, ``t``, ``interval`` (a
    frame's ``interval_low``, ``interval_high``), ``confidence_level``, ``intersect``, ``rmin``,
    ``rmax`` and its tuning (``grid``, ``tail``).
    """

    method = ""

    def __init__(self, *, confidence_level: float = 0.95, rmin: float = 0.0, rmax: float = 1.0,
                 intersect: bool = True) -> None:
        self.confidence_level = iv.confidence_level(confidence_level)
        self.rmin = iv.finite_scalar("rmin", rmin)
        self.rmax = iv.finite_scalar("rmax", rmax)
        if not self.rmin < self.rmax or not math.isfinite(self.rmax - self.rmin):
            raise InvalidInputError(f"rmin={rmin!r}, rmax={rmax!r}: need rmin < rmax, with a "
                                    "finite range")
        self.intersect = bool(intersect)
        # Each side at alpha / 2: log(1 / (alpha / 2)).
        self.threshold = math.log(2.0 / (1.0 - self.confidence_level))
        self._low, self._high = 0.0, 1.0  # the current bounds on the unit scale
        self._sides = self._make_sides()

    def _make_sides(self) -> list[Any]:
        raise NotImplementedError

    @property
    def t(self) -> int:
        """The number of examples seen."""
        return int(self._sides[0].t)

    @property
    def interval(self) -> ConfidenceInterval:
        """The current bounds on the user's reward scale."""
        return ConfidenceInterval(float(self._to_user(self._low)), float(self._to_user(self._high)))

    def _to_user(self, v: Any) -> Any:
        return np.clip(self.rmin + (self.rmax - self.rmin) * np.asarray(v, dtype=float),
                       self.rmin, self.rmax)[()]

    def update(self, w: ArrayLike, r: ArrayLike) -> SequenceResult:
        """Add the examples ``(w, r)`` (scalars or 1-d arrays, in log order).

        Returns the bounds after each added example (empty input: an empty result).
        """
        w, r = self._chunk(w, r)
        u = (r - self.rmin) / (self.rmax - self.rmin)
        u = np.clip(u, 0.0, 1.0)
        t0 = self.t
        low = self._extend(0, w * u)
        high = 1.0 - self._extend(1, w * (1.0 - u))
        if self.intersect and low.size:
            low = np.maximum.accumulate(np.concatenate(([self._low], low)))[1:]
            high = np.minimum.accumulate(np.concatenate(([self._high], high)))[1:]
        if low.size:
            self._low, self._high = float(low[-1]), float(high[-1])
        return SequenceResult(t=np.arange(t0 + 1, t0 + w.size + 1), low=self._to_user(low),
                              high=self._to_user(high), confidence_level=self.confidence_level,
                              method=self.method, intersect=self.intersect, rmin=self.rmin,
                              rmax=self.rmax)

    def _extend(self, side: int, x: np.ndarray) -> np.ndarray:
        out: np.ndarray = self._sides[side].extend(x, self.threshold)
        return out

    def _chunk(self, w: Any, r: Any) -> tuple[np.ndarray, np.ndarray]:
        w, r = iv._array("w", w), iv._array("r", r)
        if w.size != r.size:
            raise InvalidInputError(f"r has length {r.size} but w has length {w.size}")
        if not w.size:
            return w, r
        w, r = iv.vector("w", w), iv.vector("r", r)
        at = f" (row {self.t} of the log counts from 0)" if self.t else ""
        iv.within("w", w, 0.0, MAX_WEIGHT, hint=f"{at}: importance weights are >= 0 (and at most "
                  "1e300, a logging probability above 1e-300)")
        iv.within("r", r, self.rmin, self.rmax, hint=f"{at}: the rewards must lie in [rmin, rmax]")
        return w, r

    def __repr__(self) -> str:
        low, high = self.interval
        return (f"{type(self).__name__}(t={self.t}, confidence_level={self.confidence_level:g}, "
                f"interval=[{low:.6g}, {high:.6g}])")

    #: The tuning a subclass takes beyond the base's (its ``__init__`` keywords).
    _TUNING: tuple[str, ...] = ()

    def _shown_fields(self) -> list[tuple[str, Any]]:
        """What ``to_dict``, ``to_frame`` and a notebook show: the state after the last example
        (a sequence is not a dataclass: it changes as it is fed)."""
        return [("method", self.method), ("t", self.t), ("interval", self.interval),
                ("confidence_level", self.confidence_level), ("intersect", self.intersect),
                ("rmin", self.rmin), ("rmax", self.rmax),
                *((name, getattr(self, name)) for name in self._TUNING)]


class BettingSequence(_Sequence):
    """The betting confidence sequence, fed in log order (see :func:`betting_sequence`).

    Examples
    --------
    >>> from elcvx.sequences import BettingSequence
    >>> seq = BettingSequence(confidence_level=0.95)
    >>> seq.update(w=[0.0, 2.0, 2.0, 0.0], r=[1.0, 1.0, 0.0, 0.0]).t.tolist()
    [1, 2, 3, 4]
    >>> seq.update(2.0, 1.0).t.tolist()  # one more example
    [5]
    """

    method = "betting"
    _TUNING = ("grid",)

    def __init__(self, *, confidence_level: float = 0.95, rmin: float = 0.0, rmax: float = 1.0,
                 intersect: bool = True, grid: int = _betting.GRID) -> None:
        if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 2:
            raise InvalidInputError(f"grid={grid!r} must be an integer >= 2")
        self.grid = int(grid)
        super().__init__(confidence_level=confidence_level, rmin=rmin, rmax=rmax,
                         intersect=intersect)

    def _make_sides(self) -> list[Any]:
        return [_betting.Side(self.threshold, self.grid) for _ in range(2)]


class DDRMSequence(_Sequence):
    """The heavy-tailed (DDRM) confidence sequence, fed in log order (see :func:`ddrm_sequence`).

    Examples
    --------
    >>> from elcvx.sequences import DDRMSequence
    >>> seq = DDRMSequence(intersect=False)  # Vowpal Wabbit's test: its numbers at 6 decimals
    >>> _ = seq.update([1.1, 1.1] * 200, [1.0, 0.0] * 200)
    >>> seq.t, [round(b, 6) for b in seq.interval]
    (400, [0.457415, 0.54236])
    """

    method = "ddrm"
    _TUNING = ("tail",)

    def __init__(self, *, confidence_level: float = 0.95, rmin: float = 0.0, rmax: float = 1.0,
                 intersect: bool = True, tail: str = "exact") -> None:
        self.tail = iv.option("tail", tail, _ddrm.TAILS)
        super().__init__(confidence_level=confidence_level, rmin=rmin, rmax=rmax,
                         intersect=intersect)

    def _make_sides(self) -> list[Any]:
        return [_ddrm.Side(self.tail) for _ in range(2)]


def betting_sequence(w: ArrayLike, r: ArrayLike, *, confidence_level: float = 0.95,
                     rmin: float = 0.0, rmax: float = 1.0, intersect: bool = True,
                     grid: int = _betting.GRID) -> SequenceResult:
    r"""The betting confidence sequence for ``V(pi)`` after each example of a log.

    Each side bets a predictable fraction of its wealth that the importance-weighted reward
    exceeds a candidate value ``v``; a value where the wealth reaches ``2 / alpha`` is excluded
    for good (Ville's inequality). No bound on the weights is needed: a weight of 0 loses at most
    the fraction staked. The wealth is kept on ``grid`` candidate values of the unit reward scale
    and four below the first (``O(N grid)`` work), and each bound is the largest root of tangents
    of the log-wealth there, which never moves it past the exact bound (:mod:`elcvx.sequences.betting` has
    the derivation).

    Parameters
    ----------
    w, r : array_like
        Importance weights (``>= 0``, unbounded) and rewards (in ``[rmin, rmax]``), in log order.
    confidence_level : float
        The probability that every bound holds at once.
    rmin, rmax : float
        The reward range.
    intersect : bool
        Report the running intersection (default): never wider, as valid.
    grid : int
        Candidate values ``g / grid`` per side (default 200), with four more below the first.

    Returns
    -------
    SequenceResult
        ``low``, ``high`` after each example; ``.interval`` after the last.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx.sequences import betting_sequence
    >>> rng = np.random.default_rng(0)
    >>> w = rng.choice([0.0, 2.0], 10_000)  # the target takes the logged action half the time
    >>> r = (rng.random(10_000) < 0.3).astype(float)  # V = 0.3
    >>> cs = betting_sequence(w, r)
    >>> low, high = cs.interval
    >>> bool(low < 0.3 < high), bool(np.all(np.diff(cs.low) >= 0))
    (True, True)
    """
    seq = BettingSequence(confidence_level=confidence_level, rmin=rmin, rmax=rmax,
                          intersect=intersect, grid=grid)
    return seq.update(w, r)


def ddrm_sequence(w: ArrayLike, r: ArrayLike, *, confidence_level: float = 0.95,
                  rmin: float = 0.0, rmax: float = 1.0, intersect: bool = True,
                  tail: str = "exact") -> SequenceResult:
    r"""The heavy-tailed (DDRM) confidence sequence for ``V(pi)`` after each example of a log.

    A mixture over bets ``lambda`` of ``exp(lambda (S_t - t v) - V_t(lambda))``, where ``V_t``
    charges each example's surprise ``e`` against a predictable guess: quadratically when ``e <=
    1``, and only like ``lambda e - log(1 + lambda e)`` (linearly) beyond, so a huge importance
    weight dents the wealth instead of ending it (:mod:`elcvx.sequences.ddrm` has the derivation).

    Parameters
    ----------
    w, r, confidence_level, rmin, rmax, intersect
        As :func:`betting_sequence`.
    tail : {"exact", "binned"}
        The penalty of surprises beyond 1: exact (default), or the binned upper bound Vowpal
        Wabbit computes (its numbers, slightly wider).

    Returns
    -------
    SequenceResult
    """
    seq = DDRMSequence(confidence_level=confidence_level, rmin=rmin, rmax=rmax,
                       intersect=intersect, tail=tail)
    return seq.update(w, r)


def merge_sequences(sequences: Sequence[_Sequence], *, how: str = "product",
                    confidence_level: float | None = None) -> ConfidenceInterval:
    r"""Bounds on ``V(pi)`` from the sequences of logs collected in separate places (shards).

    ``how="union"``: each shard's sequence at level ``alpha / K`` (``K`` shards), intersected.
    Valid whatever the shards are (a union bound), but each shard pays ``log(K)`` in its
    threshold and alone sees only its own examples.

    ``how="product"`` (default): a value is excluded when the *product* of the shards' wealths
    reaches ``2 / alpha`` -- for the DDRM, the product for each bet ``lambda``, then the mixture
    over ``lambda``, which is the sequence of the shards' running sums added. Valid when every
    example's ``(w, r)``, given every example logged before it in any shard, has mean ``V``
    (contexts drawn afresh; a shard's logging policy may depend on any shard's past), shards
    split by where or when an example was logged, never by its reward. Then, in the order the
    examples were logged, each example multiplies one shard's wealth by a factor of conditional
    mean at most 1 (each shard's bets and guesses use only its own past, which was logged
    before), so the product is a test supermartingale and Ville's inequality holds for it at
    every moment. Rejects as soon as the pooled evidence suffices.

    Parameters
    ----------
    sequences : sequence of BettingSequence or DDRMSequence
        One per shard, all of the same kind (and grid), reward range and ``tail``.
    how : {"product", "union"}
    confidence_level : float, optional
        Default: the shards' own (which must then agree).

    Returns
    -------
    ConfidenceInterval
        The bounds now, on the reward scale.
    """
    how = iv.option("how", how, MERGES)
    seqs = list(sequences)
    if not seqs:
        raise InvalidInputError("sequences is empty: give one sequence per shard")
    first = seqs[0]
    for s in seqs:
        if not isinstance(s, _Sequence):
            raise InvalidInputError(f"sequences holds a {type(s).__name__}; give BettingSequence "
                                    "or DDRMSequence objects")
        same = (type(s) is type(first) and (s.rmin, s.rmax) == (first.rmin, first.rmax)
                and getattr(s, "grid", None) == getattr(first, "grid", None)
                and getattr(s, "tail", None) == getattr(first, "tail", None))
        if not same:
            raise InvalidInputError(f"cannot merge {s!r} with {first!r}: the shards' sequences "
                                    "must have the same kind, reward range, grid and tail")
    if confidence_level is None:
        levels = {s.confidence_level for s in seqs}
        if len(levels) > 1:
            raise InvalidInputError(f"the shards' confidence levels differ ({sorted(levels)}): "
                                    "give confidence_level=")
        level = first.confidence_level
    else:
        level = iv.confidence_level(confidence_level)
    k = len(seqs)
    threshold = math.log(2.0 / (1.0 - level))
    if how == "union":
        threshold += math.log(k)
    bounds = [_merge_side([s._sides[side] for s in seqs], threshold, how) for side in (0, 1)]
    low, high = bounds[0], 1.0 - bounds[1]
    return ConfidenceInterval(float(first._to_user(low)), float(first._to_user(high)))


def _merge_side(sides: list[Any], threshold: float, how: str) -> float:
    """The lower bound of one side from the shards' states."""
    if isinstance(sides[0], _betting.Side):
        logk = np.array([s.logk for s in sides])
        dlogk = np.array([s.dlogk for s in sides])
        if how == "product":
            logk, dlogk = logk.sum(0, keepdims=True), dlogk.sum(0, keepdims=True)
        return float(_betting.bound(sides[0].v, logk, dlogk, threshold).max())
    t, s, v = (np.concatenate(parts) for parts in zip(*(side.state() for side in sides)))
    if how == "product":  # for each bet the wealths multiply: the running sums add
        t, s, v = t.sum(keepdims=True), s.sum(keepdims=True), v.sum(0, keepdims=True)
    return float(_ddrm.lower_bounds(threshold, t, s, v).max())
