"""How a pass walks a log's rows: block by block, wherever the rows are.

A pass of the fast path (:mod:`elcvx.fast`) is a fold of a block kernel over the rows'
blocks: each block's temporaries (a few arrays of :data:`BLOCK` doubles) stay in the L2 cache,
so each input is read once from memory, not once per operation. :func:`model_block` builds a
model's features block by block (none is kept), :func:`fold_blocks` folds a kernel over them,
on several threads (:mod:`elcvx.engines.threads`) with the same answer to the last bit;
the sums of a block (:func:`wsum`, :func:`log_sum`) are as cheap as numpy makes them. The same
walk serves rows in memory (:class:`elcvx.model.Moments`) and each chunk of a log kept in
chunks (:mod:`elcvx.engines.rows`).
"""

from __future__ import annotations

import functools
import math
import threading
import numpy as np

from . import threads as _threads


# A pass over the data goes block by block: a block's temporaries (a few arrays of this many
# doubles) stay near the core, so each input is read once from memory, not once per operation.
# Each block costs some 40 numpy calls and a dozen dot products whatever its size, which hold the
# GIL between them (two threads running blocks.dot or log_sum on blocks of 32,768 took 1.5x the
# time of one doing both): blocks of 131,072 rows make that a small part of a pass, so that two
# threads gain 1.3x on a pass at N = 1e7 where blocks of 32,768 lost 10% (measured with both
# cores idle; one thread is no slower). Dot products stay on
# one thread whatever the block (:func:`dot`). Blocks are of equal size, at most BLOCK rows: as
# few as possible, and no small remainder block.
BLOCK = 131_072


#: A block's ones, read-only and shared by every thread (made once, never changed).
ONES = np.ones(BLOCK)
ONES.flags.writeable = False


def ones(n):
    """``n`` ones (read-only): ``x @ ones(n)`` is a block's sum at half the cost of ``x.sum()``
    (one BLAS dot product, not numpy's pairwise summation). A view of :data:`ONES` for a block;
    made afresh for more than a block's rows, which no pass asks for."""
    if n <= BLOCK:
        return ONES[:n]
    out = np.ones(n)
    out.flags.writeable = False
    return out


# OpenBLAS computes a dot product of up to this many terms on one thread; above, it wakes
# others, whose start-up costs more than the product when the cores are busy (and a pass's own
# threads are already on them).
DOT_MAX = 10_000


def dot(x, y):
    """``x . y`` as a float, by BLAS dot products of at most :data:`DOT_MAX` terms (each on the
    calling thread)."""
    n = x.size
    if n <= DOT_MAX:
        return float(np.dot(x, y))
    return math.fsum(float(np.dot(x[i:i + DOT_MAX], y[i:i + DOT_MAX]))
                     for i in range(0, n, DOT_MAX))


def wsum(c, x):
    """``sum(c * x)``, without the multiplication when every count is one."""
    return dot(x, ones(x.size) if c is None else c)


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


# Scratch rows start on a 64-byte boundary (a cache line; the widest SIMD load): every block's
# temporaries are then aligned alike on every thread, so no result depends on which thread's
# scratch a block used.
_ALIGN = 8  # doubles


def scratch(k, size):
    """``k`` scratch arrays of one block's length (rows aligned to 64 bytes)."""
    n = min(size, BLOCK)
    cols = -(-max(n, 1) // _ALIGN) * _ALIGN
    buf = np.empty(k * cols + _ALIGN)
    skip = (-buf.ctypes.data % (8 * _ALIGN)) // 8
    return buf[skip:skip + k * cols].reshape(k, cols)[:, :n]


_LOCAL = threading.local()


def thread_scratch(k, size):
    """:func:`scratch` of the calling thread, kept from one call to the next (grown when more is
    asked for): a pass over a log's chunks (:func:`elcvx.engines.rows.chunk_fold`) takes it for
    each chunk instead of a new one, whose pages the kernels would fault in again. A thread runs
    one pass at a time."""
    n = min(size, BLOCK)
    have = getattr(_LOCAL, "scratch", None)
    if have is None or have.shape[0] < k or have.shape[1] < n:
        rows, cols = (k, n) if have is None else (max(k, have.shape[0]), max(n, have.shape[1]))
        have = _LOCAL.scratch = scratch(rows, cols)
    return have[:k, :n]


class Block:
    """One block's rows: ``Ft`` (rows ``w, g``, transposed) and the counts ``c`` (None: every
    row once), and two things built from them on first read, in the block's scratch rows:
    the features ``Dt`` (rows ``w - 1, g - b``; None for a kernel that reads none) and the value
    functional ``h`` (given, or a policy's ``w u``, ``w (1 - u)`` on the ``upper`` side).

    The numba twins of the kernels (:mod:`elcvx.passes.kernels_numba`) build ``D`` and ``h`` row
    by row from ``Ft``, ``b``, ``given_h`` and ``u`` instead, so a block of theirs builds
    nothing: each input row is read once."""

    __slots__ = ("Ft", "c", "b", "given_h", "u", "upper", "features", "_sc", "_Dt", "_h")

    def __init__(self, Ft, c, b, given_h, u, upper, features, sc):
        self.Ft, self.c, self.b, self.given_h, self.u = Ft, c, b, given_h, u
        self.upper, self.features, self._sc = upper, features, sc
        self._Dt = self._h = None

    @property
    def Dt(self):
        if self._Dt is None and self.features:
            k, n = len(self.b), self.Ft.shape[1]
            Dt = self._sc[:1 + k, :n]
            np.subtract(self.Ft[0], 1.0, out=Dt[0])
            if k:
                np.subtract(self.Ft[1:], self.b[:, None], out=Dt[1:])
            self._Dt = Dt
        return self._Dt

    @property
    def h(self):
        if self._h is None:
            if self.given_h is not None:
                self._h = self.given_h
            else:
                w = self.Ft[0]
                hb = np.multiply(w, self.u, out=self._sc[1 + len(self.b), :w.size])
                if self.upper:
                    np.subtract(w, hb, out=hb)
                self._h = hb
        return self._h


def scratch_rows(features: int) -> int:
    """Scratch rows a block's kernels need with ``features`` rows in ``D`` (the profile's
    passes add one)."""
    return 2 * features + 9


def fold_blocks(kernel, merge, size, block_at, params, scratch_of, threads=1, out=None):
    """``kernel``'s partials over the blocks of ``size`` rows, merged in the blocks' order;
    None if a block's is (a point outside the objective's domain).

    ``block_at(i, j, sc)``: the :class:`Block` of rows ``i:j``, its features built in the
    scratch rows ``sc``; ``scratch_of(t)``: thread ``t``'s ``(kernel rows, feature rows)``.
    ``out``: an array of one entry per row that kernels may fill, or None. On ``threads``
    threads (:mod:`elcvx.engines.threads`) each takes a contiguous run of blocks; the merge is
    the same left fold over the blocks (or the kernel's ``combine`` of them all) on one thread
    or many, so the answer is the same to the last bit."""
    if 0 < size <= BLOCK:  # (one block, the common case at small N: no pool, no list)
        kernel_rows, feature_rows = scratch_of(0)
        blk, sc = block_at(0, size, feature_rows), kernel_rows[:, :size]
        part = kernel(blk, sc, *params) if out is None else kernel(blk, sc, *params, out=out)
        combine_all = getattr(kernel, "combine", None)
        return combine_all([part]) if combine_all and part is not None else part
    ranges = list(blocks(size))
    threads = max(1, min(threads, len(ranges)))
    stop = []  # (a block outside the domain: the other threads stop too)
    errors = np.geterr()  # (numpy's error state is the calling thread's: each thread takes it)

    def walk(t, first, last):
        kernel_rows, feature_rows = scratch_of(t)
        parts = []
        with np.errstate(**errors):
            for i, j in ranges[first:last]:
                if stop:
                    return None
                blk, sc = block_at(i, j, feature_rows), kernel_rows[:, :j - i]
                part = (kernel(blk, sc, *params) if out is None
                        else kernel(blk, sc, *params, out=out[i:j]))
                if part is None:
                    stop.append(True)
                    return None
                parts.append(part)
        return parts

    cuts = [len(ranges) * t // threads for t in range(threads + 1)]
    runs = _threads.run([functools.partial(walk, t, cuts[t], cuts[t + 1])
                         for t in range(threads)], threads)
    if stop or any(parts is None for parts in runs):
        return None
    parts = [part for parts in runs for part in parts]
    combine_all = getattr(kernel, "combine", None)
    if combine_all:
        return combine_all(parts) if parts else None
    acc = None
    for part in parts:
        acc = part if acc is None else merge(acc, part)
    return acc


def model_block(w, Ft, Gt, b, c, h, u, upper, features, i, j, sc):
    """The :class:`Block` of a model's rows ``i:j``, its features to be built, when read, in
    the scratch rows ``sc`` (``2 + k`` rows; each input read once from memory, as a stored copy
    would be, and none is kept): ``D`` (rows ``w - 1, g - b``), and ``h`` sliced from ``h`` or,
    for a policy's value (``h`` None), built as ``w u`` (``w (1 - u)`` on the ``upper`` side);
    ``Ft`` and ``c`` are sliced (``w`` and ``Gt`` are ``Ft``'s rows). Without ``features``,
    ``D`` is None (a kernel that reads none, ``kernel.reads_D = False``)."""
    return Block(Ft[:, i:j], None if c is None else c[i:j], b, None if h is None else h[i:j],
                 None if h is not None else u[i:j], upper, features, sc)
