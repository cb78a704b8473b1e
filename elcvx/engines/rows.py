"""A log's rows where they are not one array in memory: chunk by chunk from files, or in a
cluster's partitions. The fast path's programs run on them unchanged: every pass is a fold of
a block kernel (:mod:`elcvx.fast.kernels`) over each chunk, and a merge of the chunks' partial
sums (a map-reduce).

An engine holds the chunks and has ``map_reduce(fn, merge)``: ``fn`` maps a chunk's
:class:`Columns` to its partial, ``merge`` (associative) combines two, and None (a point
outside an objective's domain) may end the pass early. ``fn`` and ``merge`` pickle, so an engine
may run ``fn`` where the chunk is (a Dask worker, a Spark executor).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from .. import constraints as mc
from .blocks import fold_blocks, model_block, scratch_rows, thread_scratch
from .threads import num_threads
from ..model import Moments
from ..sample import RowSource  # noqa: F401  (what the estimators read: rows here or in chunks)


class Columns(NamedTuple):
    """One chunk of a log's rows as the solvers read them: importance weights ``w``, rewards
    on the unit scale ``u`` (in ``[0, 1]``), counts ``c`` (None: every row once) and the moment
    constraints' columns ``G`` (one row per constraint; ``(0, rows)`` without any)."""

    w: np.ndarray
    u: np.ndarray
    c: np.ndarray | None
    G: np.ndarray


def columns_of(sample, G=None) -> Columns:
    """A :class:`~elcvx.Sample`'s rows as one chunk."""
    G = np.empty((0, sample.n_rows)) if G is None else np.asarray(G, dtype=float)
    return Columns(np.asarray(sample.w, dtype=float), np.asarray(sample.u, dtype=float),
                   None if sample.counts is None else np.asarray(sample.counts, dtype=float), G)


def chunk_fold(kernel, merge, b, select, side, params, cols: Columns, threads=None):
    """``kernel``'s partial over one chunk, block by block, each block's features built as an
    in-memory model builds them (:func:`elcvx.engines.blocks.model_block`: ``w - 1, g - b``;
    ``w, g``; a policy's value ``w u``, or ``w (1 - u)`` on the upper side; ``g``: the rows
    ``select`` of the chunk's ``G``), on ``threads`` threads (default ``ELCVX_NUM_THREADS``, else
    every core) with the same answer on any number."""
    w, u, c, G = cols
    k = len(b)
    Gt = G[list(select)]
    Ft = w[None, :] if k == 0 else np.vstack([w, Gt])
    rows = scratch_rows(1 + k)
    block_at = functools.partial(model_block, w, Ft, Gt, np.asarray(b, dtype=float), c, None, u,
                                 side == "upper", getattr(kernel, "reads_D", True))

    def scratch_of(_):  # (each thread's own, kept across chunks: elcvx.engines.blocks.thread_scratch)
        sc = thread_scratch(rows + 2 + k, w.size)
        return sc[:rows], sc[rows:]

    with np.errstate(all="ignore"):  # (on a worker too: the oracles catch -inf and NaN)
        return fold_blocks(kernel, merge, w.size, block_at, params, scratch_of,
                           num_threads(threads))


class ChunkedMoments(Moments):
    """The model of :class:`~elcvx.model.Moments` (a policy's value, with its extra atoms),
    its rows in an engine's chunks: each pass is one ``map_reduce``; no per-row array is held,
    so solutions have ``q = None`` and report its sums instead."""

    in_memory = False

    def __init__(self, scan, constraints=(), atoms=None, side="lower"):
        constraints = mc.check(scan, constraints)
        self.engine = scan.engine
        self.n = float(scan.n)
        self.rows = int(scan.n_rows)
        self.k = len(constraints)
        self.b = np.array([c.target for c in constraints], dtype=float)
        # Each constraint names one of the scan's columns: its row of the chunks' G.
        self.select = tuple(scan.constraint_columns.index(c.values) for c in constraints)
        self.side = side
        self.atoms = mc.extra_atoms(scan, constraints, atoms)
        self.value_range = (0.0, 1.0)
        wa = self.atoms[:, 0]
        self.h_lo, self.h_hi = np.zeros(len(wa)), np.where(np.isfinite(wa), wa, 1.0)
        self.nonnegative = True
        self._stats = None

    def reduce(self, kernel, merge, *params, out=None):
        # (An engine whose chunks run in parallel already, a cluster's, says how many threads
        # each may take: ``threads_per_chunk``.)
        fn = functools.partial(chunk_fold, kernel, merge, tuple(self.b), self.select, self.side,
                               params, threads=getattr(self.engine, "threads_per_chunk", None))
        return self.engine.map_reduce(fn, merge)


class InMemoryChunks:
    """An engine over chunks held in a list (tests, and the stream engine's cache);
    ``progress``: draw each pass on stderr."""

    def __init__(self, chunks, progress=False):
        self.chunks = list(chunks)
        self.shown = Passes(sum(c.w.size for c in self.chunks), progress)

    @property
    def n_chunks(self) -> int:
        return len(self.chunks)

    def map_reduce(self, fn, merge):
        return reduce_chunks(fn, merge, self.shown(self.chunks))


class Passes:
    """Counts an engine's passes and, when ``enabled``, draws each on stderr: ``elcvx: pass 7``
    and the rows it has read."""

    def __init__(self, rows, enabled):
        self.rows, self.enabled, self.count = int(rows), bool(enabled), 0

    def __call__(self, chunks):
        from ..io.progress import Progress

        self.count += 1
        if not self.enabled:
            yield from chunks
            return
        bar = Progress(f"elcvx: pass {self.count}", self.rows, True, unit="rows")
        done = 0
        try:
            for cols in chunks:
                yield cols
                done += cols.w.size
                bar.update(done)
        finally:
            bar.close()


def reduce_chunks(fn, merge, chunks):
    """``merge`` of ``fn`` over ``chunks`` in order; None as soon as a partial is."""
    acc = None
    for cols in chunks:
        part = fn(cols)
        if part is None:
            return None
        acc = part if acc is None else merge(acc, part)
    return acc
