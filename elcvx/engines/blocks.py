"""How a pass walks a log's rows: block by block, wherever the rows are.

A pass of the fast path (:mod:`elcvx.fast`) is a fold of a block kernel over the rows'
blocks: each block's temporaries (a few arrays of :data:`BLOCK` doubles) stay in the L2 cache,
so each input is read once from memory, not once per operation. :func:`row_blocks` builds a
model's features block by block (none is kept), :func:`fold_blocks` folds a kernel over them;
the sums of a block (:func:`wsum`, :func:`log_sum`) are as cheap as numpy makes them. The same
walk serves rows in memory (:class:`elcvx.model.Moments`) and each chunk of a log kept in
chunks (:mod:`elcvx.engines.rows`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


# A pass over the data goes block by block: a block's temporaries (a few arrays of this many
# doubles) stay in the L2 cache, so each input is read once from memory, not once per operation.
# Up to 10,000 rows OpenBLAS computes a dot product in one thread; above, it wakes others, whose
# start-up can cost more than the product when the cores are busy. Blocks are of equal size, at
# most BLOCK rows: as few as possible (each costs a microsecond per numpy call), and no small
# remainder block.
BLOCK = 10_000


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


class Block(NamedTuple):
    """One block's rows: features ``D`` (rows ``w - 1, g - b``) and ``F`` (rows ``w, g``),
    transposed; the value functional ``h``; counts ``c`` (None: every row once)."""

    Dt: np.ndarray
    Ft: np.ndarray
    h: np.ndarray
    c: np.ndarray | None


def scratch_rows(features: int) -> int:
    """Scratch rows a block's kernels need with ``features`` rows in ``D`` (the profile's
    passes add one)."""
    return 2 * features + 9


def fold(kernel, merge, Dt, Ft, h, c, params, sc, out=None):
    """``kernel``'s partials over the blocks of these rows, merged; None as soon as a block's
    is (a point outside the objective's domain). ``out``: an array of one entry per row that
    kernels may fill (``q``), or None."""
    parts = ((i, j, Block(Dt[:, i:j], Ft[:, i:j], h[i:j], None if c is None else c[i:j]))
             for i, j in blocks(Dt.shape[1]))
    return fold_blocks(kernel, merge, parts, params, sc, out)


def fold_blocks(kernel, merge, parts, params, sc, out=None):
    """:func:`fold` over ``parts``, ``(start, stop, Block)`` for each block of the rows. A
    kernel with a ``combine`` (of the list of its blocks' partials) is folded by it at the end,
    not by ``merge`` block by block (which then merges folds)."""
    combine_all = getattr(kernel, "combine", None)
    acc = [] if combine_all else None
    for i, j, blk in parts:
        part = kernel(blk, sc[:, :j - i], *params, out=None if out is None else out[i:j])
        if part is None:
            return None
        if combine_all:
            acc.append(part)
        else:
            acc = part if acc is None else merge(acc, part)
    return combine_all(acc) if combine_all and acc else acc


def row_blocks(w, Ft, Gt, b, c, sc, h=None, u=None, upper=False, features=True):
    """``(start, stop, Block)`` for each block of a model's rows, its features built block by
    block (each is read once from memory, as a stored copy would be, and none is kept): ``D``
    (rows ``w - 1, g - b``) in the scratch rows ``sc`` (``2 + k`` rows), and ``h`` sliced from
    ``h`` or, for a policy's value, built there as ``w u`` (``w (1 - u)`` on the ``upper``
    side); ``Ft``, ``Gt`` and ``c`` are sliced. Without ``features``, ``D`` is None (a kernel
    that reads none, ``kernel.reads_D = False``)."""
    k = len(b)
    for i, j in blocks(w.size):
        wb = w[i:j]
        Dt = sc[:1 + k, :j - i] if features else None
        if features:
            np.subtract(wb, 1.0, out=Dt[0])
            if k:
                np.subtract(Gt[:, i:j], b[:, None], out=Dt[1:])
        if h is None:
            hb = np.multiply(wb, u[i:j], out=sc[1 + k, :j - i])
            if upper:
                np.subtract(wb, hb, out=hb)
        else:
            hb = h[i:j]
        yield i, j, Block(Dt, Ft[:, i:j], hb, None if c is None else c[i:j])
