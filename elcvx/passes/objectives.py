"""The duals' oracles: ``x -> (f, g, H, size)`` of the likelihood's dual (the MLE's and the
profile's) and of the bound's, each evaluation one pass over the rows (a fold of a block kernel
of :mod:`elcvx.passes.kernels`, wherever the rows are: :meth:`elcvx.model.Moments.reduce`), for the
active-set method of :mod:`elcvx.fast.active_set`.

Each oracle is an object whose last evaluation is a frozen record with named fields
(:class:`LikelihoodPass`, :class:`BoundPass`; the MLE's pass at the origin,
:class:`OriginPass`): the program that called it reads the solution's sums from there, so that
no pass is made again. ``q`` is not written during the passes: :func:`likelihood_q` and
:func:`bound_q` compute it, on request, with the same operations.

:class:`Work` counts the passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .kernels import (add, bound_block, bound_q_block, centred_bound_block, centred_bound_q_block,
                      loglik_block, merge_moments, q_block)
from .kernels import BoundSums


class Work:
    """Counts passes over the data (one per evaluation of an objective and its derivatives) and
    the rows they read (a pass over a subsample reads fewer); one per computation, reported in
    its solution."""

    def __init__(self):
        self.passes = 0
        self.rows = 0

    def count(self, rows: int) -> None:
        self.passes += 1
        self.rows += int(rows)

    def counts(self) -> tuple[int, int]:
        return self.passes, self.rows


#: The powers of ``d`` the MLE's pass at the origin sums for its series start
#: (:func:`elcvx.fast.starts._series_start`): ``sum c d^j`` for ``j = 1 .. SERIES_TERMS``.
SERIES_TERMS = 10


@dataclass(frozen=True)
class OriginPass:
    """The MLE's pass at the origin (``x = 0``: no log, no division), per ``N``: ``g = sum c d``
    and ``H = sum c d d'``; with one feature ``powers = sum c d^j`` for ``j = 3 ..``
    :data:`SERIES_TERMS` (the series start's); for a policy's value ``stats``: ``sum c F``
    (each row), ``sum c h``, ``sum c |h|``, ``sum c (w - h)`` (:class:`elcvx.model.Stats`'s,
    unscaled). Each None where the pass did not sum it."""

    g: np.ndarray
    H: np.ndarray
    powers: np.ndarray | None
    stats: np.ndarray | None


def memo(oracle):
    """``oracle`` remembering its last point (the start's domain check is then free)."""
    last_key, last_out = None, None

    def cached(x):
        nonlocal last_key, last_out
        # (The point as a list of floats: compared as np.array_equal does, at less cost.)
        key = np.asarray(x, dtype=float).ravel().tolist()
        if last_key == key and all(t == t for t in key):
            return last_out
        out = oracle(x)
        last_key, last_out = key, out
        return out

    return cached


@dataclass(frozen=True)
class LikelihoodPass:
    """A likelihood pass at ``x`` away from the origin, with ``a = 1 + d x`` and ``q = 1 / (N
    a)``: ``loglik = sum c log a``; ``mass = sum c q``; ``moments = sum c q d``; ``q2 = sum c
    q^2 (1, d)(1, d)'`` (the certificate's, ``(1 + m) x (1 + m)``); for the MLE ``value_sum =
    sum c q h`` and, where the pass summed them (near the optimum), ``bound_start``: the
    ``(gram, sums)`` of ``(h, 1, D) / a`` the bound's start reads (both times ``N``,
    :func:`elcvx.fast.starts._quadratic_start`)."""

    x: np.ndarray
    loglik: float
    mass: float
    moments: np.ndarray
    q2: np.ndarray
    value_sum: float | None = None
    bound_start: tuple | None = None


def _quietly(evaluate):
    """``evaluate`` on a float array with numpy's warnings off: the oracles catch overflow and
    0/0 themselves (returning ``-inf``)."""

    def oracle(self, x, **options):
        with np.errstate(all="ignore"):
            return evaluate(self, np.asarray(x, dtype=float), **options)

    oracle.__doc__ = evaluate.__doc__
    return oracle


class LikelihoodOracle:
    """``x -> (f, g, H, size)`` of ``(1/N) sum c log(1 + d x)`` over the rows ``d`` of the
    model's ``D``, with a last feature ``h - value`` when ``value`` is given (the profile's,
    built block by block rather than copied); ``f = -inf`` outside its domain; ``size = (sum c
    |log(1 + d x)| + 1) / N``, the terms that cancel in ``f`` (plus one).

    ``last``: the last evaluation away from the origin (:class:`LikelihoodPass`). For the MLE
    (``value`` None) an evaluation at the origin sums the series start's powers and the rows'
    :class:`~elcvx.model.Stats` instead (``origin``, :class:`OriginPass`), and one made where
    ``near`` is set (the last Newton decrement was small, or a start known to be close) the
    bound's start sums; an evaluation there sets ``near`` for the next. ``full=True``
    evaluates the origin as any other point (its sums)."""

    def __init__(self, data, work, value=None):
        self.data, self.work, self.value = data, work, value
        self.last: LikelihoodPass | None = None
        self.origin: OriginPass | None = None
        self.near = False

    @_quietly
    def __call__(self, x, full=False):
        data, n, mle = self.data, self.data.n, self.value is None
        self.work.count(data.rows)
        origin = not full and not x.any()
        extra = 0
        if mle:
            extra = (data.policy + 2 * (len(x) == 1)) if origin else 1 + self.near
        self.last = None  # (about to change)
        part = data.reduce(loglik_block, add, x, self.value, origin, 1.0 / n, extra,
                           None if origin or not mle else _likelihood_span(data, x))
        m = len(x)
        if part is None or not np.isfinite(part[2:3 + m + m * m]).all():
            return -math.inf, None, None, math.inf
        f, g, H = part[0] / n, part[3:3 + m], -part[3 + m:3 + m + m * m].reshape(m, m)
        size = (part[1] + 1.0) / n
        if origin and extra:
            tail = part[3 + m + m * m:]
            powers = tail[:SERIES_TERMS - 2] if extra & 2 else None
            stats = tail[0 if powers is None else SERIES_TERMS - 2:] if extra & 1 else None
            self.origin = OriginPass(g, -H, powers, stats)
        elif not origin:
            self.last = _likelihood_pass(part, x, m, n, extra)
        if mle:  # the unconstrained Newton decrement: small, the next point is about the last
            if m == 1 and H[0, 0] < 0:
                decrement = float(g[0]) * float(g[0]) / -float(H[0, 0])
            else:
                decrement = float(g @ np.linalg.lstsq(-H, g, rcond=None)[0])
            self.near = bool(decrement <= 1e-6 * size)
        return f, g, H, size


def _likelihood_pass(part, x, m, n, extra) -> LikelihoodPass:
    """:class:`LikelihoodPass` from :func:`elcvx.passes.kernels.loglik_block`'s sums (``q`` and
    the sums per ``N``: the pass's ``scale``)."""
    q2 = np.empty((m + 1, m + 1))
    q2[0, :] = q2[:, 0] = part[-(m + 1):] / n
    q2[1:, 1:] = part[3 + m:3 + m + m * m].reshape(m, m) / n
    tail = part[3 + m + m * m:]
    value_sum = float(tail[0]) if extra else None
    return LikelihoodPass(np.array(x, dtype=float), float(part[0]), float(part[2]),
                          part[3:3 + m].copy(), q2, value_sum,
                          _bound_start(part, m, n) if extra >= 2 else None)


def _bound_start(part, m, n):
    """``(gram, sums)`` of ``(h, 1, D) / a`` at the MLE from its pass's sums (times ``N``)."""
    H, tail = part[3 + m:3 + m + m * m].reshape(m, m), part[3 + m + m * m:]
    gram = np.empty((m + 2, m + 2))
    gram[2:, 2:] = H
    gram[0, 0], gram[0, 1], gram[1, 1] = tail[1], tail[2], tail[3 + m]
    gram[0, 2:], gram[1, 2:] = tail[3:3 + m], tail[4 + m:4 + 2 * m]
    gram[1, 0], gram[2:, 0], gram[2:, 1] = gram[0, 1], gram[0, 2:], gram[1, 2:]
    return gram * n, np.concatenate(([tail[0], part[2]], part[3:3 + m])) * n


def same_point(x, y) -> bool:
    """Whether ``x`` and ``y`` are the same point (``np.array_equal``'s answer, NaN unequal, on
    lists of floats: fewer calls); ``x`` an array, ``y`` an array or a sequence."""
    return x.tolist() == np.asarray(y).tolist()


def likelihood_q(data, x, value=None):
    """``q = 1 / (N (1 + d x))`` on every row (``d`` with ``h - value`` last where ``value`` is
    given): one pass, the same operations as the likelihood's, so the same bits."""
    out = np.empty(data.rows)
    with np.errstate(all="ignore"):
        data.reduce(q_block, add, np.asarray(x, dtype=float), value, 1.0 / data.n, out=out)
    return out


@dataclass(frozen=True)
class BoundPass:
    """A bound pass at ``y``: ``kg = K geomean_c(a)`` (``a = F y + h``) and the pass's sums
    (:class:`~elcvx.passes.kernels.BoundSums`, the certificate's)."""

    y: np.ndarray
    kg: float
    sums: BoundSums


class BoundOracle:
    """``y -> (f, g, H, size)`` of ``K geomean_c(F y + h) - lin . y`` with ``F = (1, w, g)``
    (or in a :class:`~elcvx.passes.frames.BoundFrame`'s coordinates, ``frame``);
    ``-inf`` outside its domain; ``size = K geomean + |lin . y| + floor``, the terms that cancel
    in ``f`` and an absolute floor (:func:`elcvx.fast.bound.lower_bound_of`). The Hessian is
    ``kg`` times minus the covariance of ``F / a`` under the weights ``c / N``. ``last``: the
    last evaluation in the domain (:class:`BoundPass`)."""

    def __init__(self, data, K, lin, work, floor=0.0, frame=None):
        self.data, self.K, self.lin, self.work, self.floor = data, K, lin, work, floor
        self.frame = frame  # (None: the user's coordinates; a BoundFrame: its own)
        self.last: BoundPass | None = None

    @_quietly
    def __call__(self, y):
        data, n, lin = self.data, self.data.n, self.lin
        self.work.count(data.rows)
        self.last = None  # (about to change)
        frame = self.frame
        if frame is None or not frame.centred:
            part = data.reduce(bound_block, merge_moments, y, _bound_span(data, y))
        else:
            part = data.reduce(centred_bound_block, merge_moments, y, None, frame.T)
        if part is None:
            return -math.inf, None, None, math.inf
        kg = self.K * math.exp(part.log_sum / n)
        if not (math.isfinite(kg) and np.isfinite(part.scatter).all()):
            return -math.inf, None, None, math.inf
        self.last = BoundPass(np.array(y, dtype=float), kg, part)
        ly = lin @ y
        return kg - ly, kg * part.mean - lin, -kg * part.scatter / n, kg + abs(float(ly)) + self.floor


def bound_q(data, y, kappa, frame=None):
    """The bound's ``q = kappa / (F y + h)`` on every row: one pass, the same operations as
    the bound's pass, so the same bits."""
    out = np.empty(data.rows)
    with np.errstate(all="ignore"):
        y = np.asarray(y, dtype=float)
        if frame is None or not frame.centred:
            data.reduce(bound_q_block, add, y, kappa, out=out)
        else:
            data.reduce(centred_bound_q_block, add, y, kappa, frame.T, out=out)
    return out


def _likelihood_span(data, x):
    """The least and largest ``d x`` over the rows, exactly, for one feature ``d = w - 1`` in
    memory (the same roundings, at the least and largest ``w``); else None."""
    if len(x) != 1 or not data.in_memory:
        return None
    lo, hi = ((w - 1.0) * float(x[0]) for w in data.w_span)
    return min(lo, hi), max(lo, hi)


def _bound_span(data, y):
    """Bounds ``(lo, hi)`` on every row's ``a = gamma + beta w + h`` with ``lo > 0``, for a
    policy's value in memory without constraints (``0 <= h <= w``, each ``w`` in its span,
    with a margin for ``a``'s roundings); else None (each block finds its own)."""
    if len(y) != 2 or not (data.in_memory and data.policy):
        return None
    gamma, beta = float(y[0]), float(y[1])
    w0, w1 = data.w_span
    up = beta + 1.0
    ends = (beta * w0, beta * w1, up * w0, up * w1)
    margin = 4e-16 * (abs(gamma) + (abs(beta) + 1.0) * max(abs(w0), abs(w1)))
    lo, hi = gamma + min(ends) - margin, gamma + max(ends) + margin
    return (lo, hi) if lo > 0 and math.isfinite(hi) else None
