"""Raw solutions exchanged between the solver paths and the public functions.

Both paths (:mod:`elcvx.fast` and :mod:`elcvx.cvx`) work on rewards rescaled to ``[0, 1]`` (called
``u``) and return these tuples; the public functions turn them into result objects on the user's
scale. ``c`` are the row counts (ones when the sample has none) and ``N = sum(c)``.
"""

from __future__ import annotations

import math
import threading
from typing import Any, NamedTuple

import numpy as np

from .status import Status


class OnRead:
    """A per-row array computed on its first read, then kept, read-only: a solution's ``q``,
    which the fast path does not write during its passes (three arrays of ``N`` doubles, most
    often never read); reading it costs one pass over the rows. ``compute``: a function of no
    argument that returns the array."""

    __slots__ = ("_compute", "_value", "_lock")

    def __init__(self, compute):
        self._compute, self._value, self._lock = compute, None, threading.Lock()

    def __call__(self) -> np.ndarray:
        with self._lock:
            if self._value is None:
                value = np.asarray(self._compute(), dtype=float)
                value.flags.writeable = False
                self._value, self._compute = value, None
        return self._value

    def __reduce__(self):  # (pickled as the array: a result sent to another process)
        return _read_array, (self(),)


def _read_array(value):
    return value


def rows(q):
    """The array of a ``q`` field: ``q`` itself (an array or None), or its value (:class:`OnRead`)."""
    return q() if isinstance(q, OnRead) else q


class _ReadsQ:
    """Mixin of the solutions with a ``q`` field: ``q`` reads the array (computed on first read
    where it is an :class:`OnRead`); ``q_field`` is the field as it is held, for a result that
    keeps it unread."""

    __slots__ = ()

    @property
    def q(self) -> np.ndarray | None:
        return rows(self.q_field)

    @property
    def q_field(self) -> Any:
        # (A mixin of NamedTuples: the tuple's own item, which the ``q`` property hides.)
        return self[self._fields.index("q")]  # type: ignore[attr-defined,index]


class _MLEFields(NamedTuple):
    beta: float
    loglik: float  # l*_mle, the maximum (>= 0)
    q: Any  # per-example primal mass 1 / (N (1 + beta* (w - 1))), or an OnRead of it
    status: Status
    work: tuple[int, int] = (0, 0)  # the fast path's passes over the data and rows they read
    lambdas: tuple = ()  # the moment constraints' multipliers (elcvx.constraints)
    sums: tuple = ()  # the fast path's (sum c q, sum c q w, sum c q w u): for rows not in memory
    at_atom: bool = False  # an extra atom carries mass: beta* is on an atom's constraint
    gap: float = math.nan  # certified: the true l*_mle lies in [loglik, loglik + gap]
    error: float = math.nan  # certified: the bound on the estimate's error (unit scale, any rho)


class MLESolution(_ReadsQ, _MLEFields):
    """``beta*`` maximises ``sum c log(1 + beta (w - 1))`` over ``[-1/(wmax-1), 1/(1-wmin)]``."""

    __slots__ = ()


class _BoundFields(NamedTuple):
    value: float  # v_lb on the unit scale
    beta: float
    gamma: float
    kappa: float
    q: Any  # per-example primal mass kappa / (gamma + beta w + w u), or an OnRead of it
    status: Status
    work: tuple[int, int] = (0, 0)
    lambdas: tuple = ()
    sums: tuple = ()  # the fast path's (sum c q, sum c q w): for rows not in memory
    error: float = math.nan  # certified: the bound on |value - the true bound| (unit scale)


class BoundSolution(_ReadsQ, _BoundFields):
    """The lower-bound program on rewards ``u``: min E_Q[w u] over the likelihood ball."""

    __slots__ = ()


class ProfileSolution(NamedTuple):
    """``l_v = sup sum c log(1 + beta (w - 1) + tau (w u - v))`` over the 4 corner constraints."""

    loglik: np.ndarray  # l_v for each v (inf where v is impossible)
    beta: np.ndarray
    tau: np.ndarray
    status: Status
    work: tuple[int, int] = (0, 0)
    gap: np.ndarray | None = None  # certified: each true l_v lies in [loglik, loglik + gap]
