"""Passes over a sample's rows, as the fast path makes them: block by block, counted.

Every solver of the fast path (:mod:`elcvx._moment`) evaluates its objective with its
derivatives in one pass over the rows; a pass goes block by block so that its temporaries stay
in the cache, and each solution reports the passes its computation made and the rows they read.
The certificates' tolerances, shared with the cvxpy path's, live here too.
"""

from __future__ import annotations

import numpy as np

# A pass over the data goes block by block: a block's temporaries (a few arrays of this many
# doubles) stay in the L2 cache, so each input is read once from memory, not once per operation.
# Up to 10,000 rows OpenBLAS computes a dot product in one thread; above, it wakes others, whose
# start-up can cost more than the product when the cores are busy. Blocks are of equal size, at
# most BLOCK rows: as few as possible (each costs a microsecond per numpy call), and no small
# remainder block.
BLOCK = 10_000


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


_ONES = np.ones(0)


def ones(n):
    """``n`` ones (read-only, shared): ``x @ ones(n)`` is a block's sum at half the cost of
    ``x.sum()`` (one BLAS dot product, not numpy's pairwise summation)."""
    global _ONES
    if _ONES.size < n:
        _ONES = np.ones(max(n, BLOCK))
        _ONES.flags.writeable = False
    return _ONES[:n]


def wsum(c, x):
    """``sum(c * x)``, without the multiplication when every count is one."""
    return float(np.dot(x, ones(x.size) if c is None else c))


# log_sum multiplies the terms in groups of LOG_GROUP before taking logs: with every term in
# [2**-LOG_RANGE, 2**LOG_RANGE], each product (and each partial product) stays a normal float.
LOG_GROUP = 16
LOG_RANGE = 62


def log_sum(c, a, tmp, lo=None, hi=None):
    """``sum(c * log(a))`` over a block of positive ``a`` (``c`` None: every count one); ``tmp``
    a scratch row at least as long as ``a``; ``lo``, ``hi``: bounds on ``a``'s entries if
    known.

    Without counts, the terms are multiplied in groups of :data:`LOG_GROUP` and one log taken
    per group: a log costs as much as twenty multiplications, and each product's rounding (at
    most half a unit in the last place per factor) is of the size of the rounding of each
    term's argument. Terms outside ``[2**-62, 2**62]`` (a product could leave the floats'
    range) and counts (``c log a`` is no product) take the logs one by one."""
    n = a.size
    m = n - n % LOG_GROUP
    lo = a.min() if lo is None else lo
    hi = a.max() if hi is None else hi
    if c is not None or m == 0 or not (lo >= 2.0 ** -LOG_RANGE and hi <= 2.0 ** LOG_RANGE):
        return wsum(c, np.log(a, out=tmp[:n]))
    p = np.multiply.reduce(a[:m].reshape(LOG_GROUP, m // LOG_GROUP), axis=0,
                           out=tmp[:m // LOG_GROUP])
    total = wsum(None, np.log(p, out=p))
    if m < n:
        total += wsum(None, np.log(a[m:], out=tmp[m // LOG_GROUP:m // LOG_GROUP + n - m]))
    return total


def blocks(size):
    """``(start, stop)`` of the blocks of a pass over ``size`` rows."""
    step = max(-(-size // -(-size // BLOCK)), 1) if size else 1  # ceil(size / number of blocks)
    return ((i, min(i + step, size)) for i in range(0, size, step))


def scratch(k, size):
    """``k`` scratch arrays of one block's length."""
    return np.empty((k, min(size, BLOCK)))


# The certificate's tolerances: a primal mass may be negative by at most FEAS_TOL, and the
# primal objective may exceed the dual one by at most GAP_TOL * max(1, |v|) (shared with the
# cvxpy path's certificates).
FEAS_TOL = 1e-8
GAP_TOL = 1e-8
