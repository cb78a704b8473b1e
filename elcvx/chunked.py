"""The model of a log whose rows are not in memory: :class:`ChunkedMoments`, the
:class:`~elcvx.model.Moments` of a scanned log (:class:`~elcvx.io.LogScan`), each pass one
``map_reduce`` of an engine (:mod:`elcvx.engines.rows`). It sits beside the model, not in the
engines, because it is the model: the engines only walk the rows."""

from __future__ import annotations

import functools

import numpy as np

from . import constraints as mc
from .engines.rows import chunk_fold
from .model import Moments


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
