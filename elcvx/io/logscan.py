"""A log kept in chunks, as the estimators take it: :class:`LogScan` (what :func:`elcvx.io.scan_log`
and :func:`elcvx.io.scan_engine` return, on either engine), and the reading of its constraint
columns."""

from __future__ import annotations

import functools
import math

import numpy as np

from ..chunked import ChunkedMoments
from ..errors import InvalidInputError
from ..passes.kernels import add
from ..sample import RewardScale
from .frames import _column, _locator, _logging_probs
from .stream import _chunk_samples



class LogScan(RewardScale):
    """A log read chunk by chunk and kept in an engine's chunks (:func:`scan_log`): what the
    estimators take in place of a :class:`~elcvx.Sample` when the rows are not held whole.

    Attributes
    ----------
    path, format : str
        As given; the files' formats (joined by ``+`` for a mix).
    n_rows : int
        Rows read. ``n``: the sum of their counts.
    wmin, wmax, rmin, rmax : float
        The bounds, as :func:`~elcvx.io.read_log` sets them.
    w_observed : tuple
        The smallest and largest weight in the log.
    constraint_columns : tuple of str
        The columns read for moment constraints (``MomentConstraint("name", ...)``).
    compressed : int or None
        The distinct ``(w, r)`` rows the engine holds when the log compressed exactly, else None.
    sample : Sample or None
        That compression, a :class:`~elcvx.Sample` with counts (every estimator takes it), or
        None.
    columns : dict
        How each quantity was read, as :attr:`Log.columns`.
    notes : tuple of str
    engine : object
        Where the chunks are (``map_reduce``: see :mod:`elcvx.engines.rows`).
    """

    #: The rows are in an engine's chunks (a :class:`~elcvx.engines.rows.RowSource`).
    in_memory = False

    def __init__(self, *, path, format, n_rows, n, wmin, wmax, rmin, rmax, w_observed,
                 sample, columns, notes, engine, constraint_columns=(), files=None):
        self.path, self.format, self.n_rows, self.n = path, format, int(n_rows), float(n)
        self.wmin, self.wmax, self.rmin, self.rmax = wmin, wmax, rmin, rmax
        self.w_observed, self.sample, self.columns = w_observed, sample, columns
        self.compressed = None if sample is None else sample.n_rows
        self.notes, self.engine = notes, engine
        self.constraint_columns = tuple(constraint_columns)
        self._files = files  # (files, root, names, chunk_size, options): read in order again

    def rows_in_order(self):
        """The log's rows in file order, chunk by chunk, each a :class:`~elcvx.Sample`: the
        files read again, in the order the readers take them (sorted by path; a folder's
        subfolders are searched in that order too), each file's rows in their order. What a
        confidence sequence (:mod:`elcvx.sequences`) reads; the engines' passes, which merge
        partial sums, need no order.

        Raises
        ------
        InvalidInputError
            The log was not read from files here (a Dask DataFrame, your own engine).
        """
        if self._files is None:
            raise InvalidInputError(f"{self.path}: its rows have no file order here (it was not "
                                    "read from files by this process): read it from its files")
        for sample, *_ in _chunk_samples(*self._files, False):
            yield sample

    @property
    def has_logging_probs(self) -> bool:
        """Whether the log's files hold the logging probabilities (a logging-probability column,
        not weights), which :meth:`rows_with_logging_probs` reads."""
        return self._files is not None and self._files[4].logging_prob is not None

    def rows_with_logging_probs(self):
        """Each chunk of the log's rows as :meth:`rows_in_order` reads it (the files again), with
        its rows' logging probabilities: ``(sample, logging_probs)``, what IX's bound on a log
        in chunks takes (:func:`elcvx.estimators.finite_sample.ix_bound_in_chunks`).

        Raises
        ------
        InvalidInputError
            The log was not read from files here, or it has weights, not logging probabilities.
        """
        if not self.has_logging_probs:
            raise InvalidInputError(f"{self.path}: no logging probabilities (the log gives "
                                    "weights, or was not read from files here)")
        spec = self._files[4]
        for sample, df, *_ in _chunk_samples(*self._files, False):
            yield sample, _logging_probs(df, spec)

    def moments(self, constraints=(), atoms=None, side="lower"):
        """The solvers' model of the log's rows (:class:`elcvx.chunked.ChunkedMoments`); each
        constraint names one of :attr:`constraint_columns`."""
        return ChunkedMoments(self, constraints, atoms, side)

    def weight_check(self, *, method: str = "auto"):
        """:meth:`elcvx.Sample.weight_check` of the log (the fast path's MLE; two more passes
        for the weights' mean and standard error)."""
        from ..checks import weight_check

        return weight_check(self, method)

    def _weight_moments(self):
        """The weights' mean and its standard error, as :meth:`elcvx.Sample._weight_moments`
        computes them (on the scale of the largest weight, centred), one pass each."""
        lo, hi = self.w_observed
        if lo == hi:
            return lo, 0.0 if self.n > 1 else float("nan")
        m = float(self.engine.map_reduce(functools.partial(_scaled_sum, hi, 0.0, 1), add)) / self.n
        if not self.n > 1:
            return hi * m, float("nan")
        ss = float(self.engine.map_reduce(functools.partial(_scaled_sum, hi, m, 2), add))
        return hi * m, hi * math.sqrt(ss / (self.n - 1) / self.n)

    def __repr__(self):
        how = (f"compressed to {self.compressed:,} rows" if self.compressed is not None
               else type(self.engine).__name__)
        return f"LogScan({self.path!r}, n_rows={self.n_rows:,}, {how})"



def _scaled_sum(scale, center, power, cols):
    """``sum c (w / scale - center) ** power`` over a chunk."""
    x = cols.w / scale - center
    if power == 2:
        x *= x
    return float(x.sum()) if cols.c is None else float(np.dot(cols.c, x))



def _names(field, names):
    """A sequence of column names (a single name is one)."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise InvalidInputError(f"{field}={names!r} must be column names", field=field, value=names)
    return names



def _constraint_values(df, columns):
    """The constraints' columns of a chunk, one row each, checked to be finite numbers (text
    read with the decimal mark of the log's spec, which the chunk's ``attrs`` carry)."""
    G = np.empty((len(columns), len(df)))
    for j, name in enumerate(columns):
        where = _locator(df.index)
        G[j] = _column(df, name, lambda i: f"{df.attrs['file']}: {where(i)}",
                       df.attrs.get("decimal", "."))
        bad = ~np.isfinite(G[j])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(f"{df.attrs['file']}: {where(i)}: column {name!r} is {float(G[j, i])!r}, "
                                    "not a finite number", field=name, value=float(G[j, i]))
    return G
