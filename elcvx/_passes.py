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


def wsum(c, x):
    """``sum(c * x)``, without the multiplication when every count is one."""
    return float(x.sum()) if c is None else float(np.dot(c, x))


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
