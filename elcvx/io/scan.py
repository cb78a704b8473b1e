"""A log bigger than memory, evaluated without holding it: :func:`scan_log` and :class:`LogScan`.

The scan reads the log once, chunk by chunk, with :func:`read_log`'s checks, and keeps each
chunk's weights, rewards and counts as float64 (in memory when they fit in ``cache_bytes``, else
in a spill file). :func:`elcvx.estimate`, :func:`elcvx.interval` and :func:`elcvx.profile` then
run on the scan: every pass of their solvers is a fold over the chunks. When the log compresses
exactly (few distinct ``(w, r)`` pairs, as in ε-greedy logs with binary rewards) the scan holds
the compression instead, and everything after the first read is in memory.
"""

from __future__ import annotations

import tempfile

import numpy as np

from ..engines.rows import Columns, InMemoryChunks, Passes, columns_of, reduce_chunks
from ..errors import InvalidInputError
from ..engines.progress import progress_enabled
from .sources import _total_bytes
from .spec import LogSpec
from .logscan import LogScan, _constraint_values, _names
from .stream import _chunk_samples, _Groups, _positive_int, _resolve

#: :func:`scan_log` holds a log's exact compression when it has at most this many pairs.
SCAN_MAX_PAIRS = 1 << 20
#: The engines of :func:`scan_log`.
ENGINES = ("stream", "dask")
#: Where the stream engine keeps the chunks it read: ``"auto"`` is memory up to ``cache_bytes``.
CACHES = ("auto", "memory", "disk", "none")


def scan_log(path, *, spec=None, format=None, weight=None, target_prob=None, logging_prob=None,
             reward=None, cost=None, count=None, wmin=None, wmax=None, pmin=None, rmin=None,
             rmax=None, cmin=None, cmax=None, sep=None, decimal=None, chunk_size=1 << 18,
             max_pairs=SCAN_MAX_PAIRS,
             cache="auto", cache_bytes=1 << 29, constraint_columns=(), engine="stream",
             client=None, progress=None) -> LogScan:
    """Read a log chunk by chunk into a :class:`LogScan`, which :func:`elcvx.estimate`,
    :func:`elcvx.interval` and :func:`elcvx.profile` evaluate without holding the log whole.

    The log is read once, with :func:`~elcvx.io.read_log`'s checks and messages (naming the
    file and the row). Its rows are compressed exactly to distinct ``(w, r)`` pairs as they
    come; if there are at most ``max_pairs`` of them, and at most half as many as rows, the scan
    holds that compression (in memory: every estimate equals the one on the rows). Otherwise each chunk is kept as float64
    ``(w, u[, counts])`` per ``cache`` and every pass of the solvers reads it again.

    Parameters
    ----------
    path, format
        As for :func:`~elcvx.io.read_log_compressed`: a Parquet or CSV/TSV file, a folder of
        them or a glob. With ``engine="dask"``, ``path`` may also be a Dask DataFrame of the
        log's columns.
    spec : LogSpec, optional
        The columns and bounds (:class:`~elcvx.io.LogSpec`).
    weight, target_prob, logging_prob, reward, cost, count, wmin, wmax, pmin, rmin, rmax, cmin, cmax
        The fields of :class:`~elcvx.io.LogSpec`, as keywords: each one given sets that field of
        ``spec`` (an error if ``spec`` sets it too).
    sep, decimal : str, optional
        The CSV/TSV files' field separator and decimal mark (fields of
        :class:`~elcvx.io.LogSpec` too): ``sep=";", decimal=","`` for a spreadsheet's export
        with decimal commas.
    chunk_size : int
        Rows per chunk (default 262144).
    constraint_columns : sequence of str
        Columns to read for moment constraints: ``elcvx.MomentConstraint("g", target,
        atom_range)`` then names one (:mod:`elcvx.constraints`). Their values must be finite.
        A log with them is kept in chunks (the compression is of ``(w, r)`` only).
    max_pairs : int
        Hold the exact compression when the log has at most this many distinct ``(w, r)``
        (default 1,048,576).
    cache : {"auto", "memory", "disk", "none"}
        Where the chunks are kept between passes: ``"memory"``; ``"disk"``, a spill file of
        float64 in the system's temporary folder (deleted with the scan); ``"none"``, the files
        are read (and checked) again on each pass; ``"auto"``: memory up to ``cache_bytes``
        (default 512 MiB, 16 bytes a row without counts), else disk.
    engine : {"stream", "dask"}
        ``"stream"``: this process reads the files. ``"dask"``: a Dask cluster's workers read
        them into partitions, kept there, and each pass is one reduction over them (the
        ``dask`` extra); ``cache`` and ``max_pairs`` do not apply.
    client : dask.distributed.Client or str, optional
        ``engine="dask"``: the cluster (a client, or a scheduler's address); default the
        current client.
    progress : bool, optional
        Draw the rows read, then each pass of the solvers, on stderr; default when stderr is a
        terminal and the files hold more than 50 MB.

    Returns
    -------
    LogScan

    Examples
    --------
    >>> import elcvx
    >>> from elcvx import datasets, io
    >>> scan = io.scan_log(datasets.example_log_path(), pmin=datasets.EXAMPLE_PMIN, chunk_size=64,
    ...                    max_pairs=1)  # kept as chunks (the example compresses to 6 rows)
    >>> scan.n_rows, scan.compressed
    (300, None)
    >>> round(elcvx.estimate(scan).value, 6) == round(elcvx.estimate(
    ...     io.read_log(datasets.example_log_path(), pmin=datasets.EXAMPLE_PMIN).sample).value, 6)
    True
    """
    spec = LogSpec.from_keywords(
        spec, weight=weight, target_prob=target_prob, logging_prob=logging_prob, reward=reward,
        cost=cost, count=count, wmin=wmin, wmax=wmax, pmin=pmin, rmin=rmin, rmax=rmax, cmin=cmin,
        cmax=cmax, sep=sep, decimal=decimal)
    if engine not in ENGINES:
        raise InvalidInputError(f"engine={engine!r} must be one of {', '.join(map(repr, ENGINES))}",
                                field="engine", value=engine)
    chunk_size = _positive_int("chunk_size", chunk_size)
    max_pairs = _positive_int("max_pairs", max_pairs)
    if cache not in CACHES:
        raise InvalidInputError(f"cache={cache!r} must be one of {', '.join(map(repr, CACHES))}",
                                field="cache", value=cache)
    constraint_columns = _names("constraint_columns", constraint_columns)
    if engine == "dask":  # (the dask extra) the partitions stay on the cluster's workers
        from ._dask import dask_scan

        return dask_scan(path, spec, constraint_columns, format=format, client=client,
                         progress=progress)
    files, root, names, spec = _resolve(path, format, spec, extra=constraint_columns)
    path = str(path)
    # (Constraints' columns are not part of the (w, r) compression: a log with them stays in chunks.)
    compress = not constraint_columns
    while True:
        read = _Read(path, max_pairs, cache, cache_bytes, compress=compress)
        try:
            for chunk, df, described, bar in _chunk_samples(files, root, names, chunk_size,
                                                            spec, progress):
                read.add(chunk, df, constraint_columns)
                bar.label = f"elcvx: {read.rows:,} rows, file {bar.file} of {len(files)}"
            if read.rows == 0:
                raise InvalidInputError(f"{path} has no data rows")
            compressed = read.compressed()
            break
        except _Restart:  # (rare: many pairs only past the first rows) read again, in chunks
            read.store.close()
            compress = False
        except BaseException:
            read.store.close()
            raise
    store, first, rows, n, lo, hi = read.store, read.first, read.rows, read.n, read.lo, read.hi
    show = progress_enabled(progress, _total_bytes(files))  # the passes' progress, as the read's
    if compressed is not None:
        engine = InMemoryChunks([columns_of(compressed)])
        how = f"compressed exactly to {compressed.n_rows:,} distinct (w, r) rows"
    else:
        if cache == "none":
            engine = FileChunks(files, root, names, chunk_size, spec, store.chunks,
                                constraint_columns, rows, show)
            how = f"read again from the files on each pass ({len(store.chunks):,} chunks)"
        else:
            engine = store.engine(rows, show)
            how = f"kept as {engine.n_chunks:,} chunks ({store.where})"
    formats = "+".join(dict.fromkeys(fmt for _, fmt in files))
    notes = (f"read in chunks from {len(files):,} file{'s' * (len(files) > 1)} "
             f"({rows:,} rows), {how}",)
    return LogScan(path=path, format=formats, n_rows=rows, n=n, wmin=first.wmin,
                   constraint_columns=constraint_columns,
                   wmax=first.wmax, rmin=first.rmin, rmax=first.rmax, w_observed=(lo, hi),
                   sample=compressed, columns=described, notes=notes, engine=engine,
                   files=(files, root, names, chunk_size, spec))


def scan_engine(engine, *, spec=None, wmin=None, wmax=None, rmin=None, rmax=None,
                constraint_columns=(), name="the engine's log") -> LogScan:
    """A :class:`LogScan` of rows held by your own engine (a Spark DataFrame, a database, ...),
    which the estimators then evaluate with one ``engine.map_reduce`` per pass.

    ``engine`` has ``map_reduce(fn, merge)``, returning ``merge`` of ``fn(cols)`` over every
    chunk of its rows, in any grouping (``merge`` is associative; a partial of None makes the
    result None), where ``cols`` is a chunk's :class:`~elcvx.io.Columns`: weights, rewards on
    the unit scale ``(r - rmin) / (rmax - rmin)``, counts or None, and the constraint columns
    named by ``constraint_columns``, checked as a :class:`~elcvx.Sample` checks them (build
    them with :func:`~elcvx.io.columns_of`). The bounds are the log's, as for a ``Sample``: a
    :class:`LogSpec` of bounds only (``spec``; the columns are the engine's), or its fields
    ``wmin``, ``wmax``, ``rmin``, ``rmax`` as keywords. One pass, here, counts the rows and finds
    the weights' range. docs/spark.md has an engine on Spark.
    """
    spec = LogSpec.from_keywords(spec, wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
    spec.require_no_columns("scan_engine")
    (wmin, wmax), (rmin, rmax) = spec.weight_range, spec.reward_range
    constraint_columns = _names("constraint_columns", constraint_columns)
    rows, n, lo, hi = engine.map_reduce(_summary, _merge_summary)
    if not wmin <= lo <= hi <= wmax:
        raise InvalidInputError(f"{name}: weights from {lo!r} to {hi!r}, outside [wmin, wmax] = "
                                f"[{wmin}, {wmax}]", field="wmax", value=wmax)
    return LogScan(path=name, format="engine", n_rows=int(rows), n=n, wmin=wmin,
                   wmax=wmax, rmin=rmin, rmax=rmax, w_observed=(lo, hi),
                   sample=None, columns={}, notes=(f"{name}: {int(rows):,} rows, held by "
                                                   f"{type(engine).__name__}",),
                   engine=engine, constraint_columns=constraint_columns)


def _summary(cols):
    """A chunk's rows, sum of counts, least and largest weight."""
    return (cols.w.size, float(cols.w.size if cols.c is None else cols.c.sum()),
            float(cols.w.min()), float(cols.w.max()))


def _merge_summary(a, b):
    return a[0] + b[0], a[1] + b[1], min(a[2], b[2]), max(a[3], b[3])


class _Restart(Exception):
    """The compression failed after the rows read were let go: the log is read again."""


class _Read:
    """The first read of a scan: each chunk compressed (while the log may compress) and held
    until it is clear whether it does: past ``min(2 max_pairs, 262144)`` rows held, a log that
    compressed them at least two to one is compressed from then on (its chunks let go; should it fail
    later, :class:`_Restart`), and any other is kept in chunks (:class:`_Store`)."""

    def __init__(self, path, max_pairs, cache, cache_bytes, compress):
        self.groups = _Groups(max_pairs, path, strict=False)
        self.store = _Store(cache, cache_bytes)
        self.mode = "undecided" if compress else "chunks"
        self.budget = min(2 * max_pairs, 1 << 18)  # (a chunk: compressing more costs)
        self.first, self.rows, self.n, self.lo, self.hi = None, 0, 0.0, np.inf, -np.inf

    def add(self, chunk, df, constraint_columns):
        self.first = chunk if self.first is None else self.first
        self.rows += len(df)
        self.n += chunk.n
        self.lo, self.hi = min(self.lo, float(chunk.w.min())), max(self.hi, float(chunk.w.max()))
        if self.mode == "chunks":
            self.store.add(columns_of(chunk, _constraint_values(df, constraint_columns)))
            return
        self.groups.add(chunk.compress(), len(df))
        if self.mode == "compress":
            if self.groups.failed:
                raise _Restart
            return
        self.store.hold(chunk)
        if self.rows >= self.budget or self.groups.failed:
            self.mode = "compress" if self._compresses() else "chunks"
            if self.mode == "compress":
                self.store.drop()
            else:
                self.store.release()

    def _compresses(self) -> bool:
        pairs = self.groups.sample()
        return pairs is not None and pairs.n_rows <= self.rows // 2

    def compressed(self):
        """The log's compression, or None (its chunks are then in the store). :class:`_Restart`
        when the log compressed until its chunks were let go and its last rows' pairs, merged
        here, exceed ``max_pairs``."""
        if self.mode == "compress":
            pairs = self.groups.sample()
            if pairs is None:
                raise _Restart
            self.store.close()
            return pairs
        if self.mode == "undecided" and self._compresses():
            self.store.close()
            return self.groups.sample()
        self.store.release()
        return None


class _Store:
    """The chunks of a scan as they are read: held as samples while the compression may still
    succeed, then as :class:`Columns` in memory or in a spill file (``cache``)."""

    def __init__(self, cache, cache_bytes):
        self.cache, self.cache_bytes = cache, int(cache_bytes)
        self.held, self.chunks, self.bytes = [], [], 0
        self.file = None
        self.where = "memory" if cache in ("auto", "memory") else cache

    def hold(self, sample):
        self.held.append(sample)

    def add(self, cols: Columns):
        self.release()
        self._put(cols)

    def drop(self):
        """The compression succeeds: what was held is not needed."""
        self.held = []

    def release(self):
        """The compression failed: what was held goes first."""
        for sample in self.held:
            self._put(columns_of(sample))
        self.held = []

    def _put(self, cols):
        if self.cache == "none":
            self.chunks.append(cols.w.size)
            return
        self.bytes += sum(a.nbytes for a in cols if a is not None)
        if self.where == "memory" and self.cache == "auto" and self.bytes > self.cache_bytes:
            self._spill_all()
        if self.where == "disk":
            self._spill(cols)
        else:
            self.chunks.append(cols)

    def _spill_all(self):
        self.where = "disk"
        held, self.chunks = self.chunks, []
        for cols in held:
            self._spill(cols)

    def _spill(self, cols):
        if self.file is None:
            self.file = tempfile.TemporaryFile(prefix="elcvx-scan-")
        counted = cols.c is not None
        for a in (cols.w, cols.u) + ((cols.c,) if counted else ()) + tuple(cols.G):
            np.ascontiguousarray(a, dtype=float).tofile(self.file)
        self.chunks.append((cols.w.size, counted, len(cols.G)))

    def engine(self, rows, progress):
        if self.where == "disk":
            self.file.flush()
            return SpillChunks(self.file, self.chunks, rows, progress)
        return InMemoryChunks(self.chunks, progress)

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None


class SpillChunks:
    """An engine over chunks in a spill file of float64 (``w``, ``u``, then counts if any, then
    each constraint column, per chunk), read back chunk by chunk into one buffer on every pass.
    ``layout``: ``(rows, counted, constraint columns)`` of each chunk, in the file's order."""

    def __init__(self, file, layout, rows, progress):
        self.file, self.layout = file, layout
        self.buffer = np.empty(max(size * (2 + counted + k) for size, counted, k in layout))
        self.shown = Passes(rows, progress)

    @property
    def n_chunks(self) -> int:
        return len(self.layout)

    def _chunks(self):
        self.file.seek(0)
        for size, counted, k in self.layout:
            view = self.buffer[:size * (2 + counted + k)]
            if self.file.readinto(memoryview(view).cast("B")) != view.nbytes:
                raise OSError("the scan's spill file is shorter than what was written to it")
            g = (2 + counted) * size  # where the constraint columns start
            yield Columns(view[:size], view[size:2 * size], view[2 * size:g] if counted else None,
                          view[g:].reshape(k, size))

    def map_reduce(self, fn, merge):
        return reduce_chunks(fn, merge, self.shown(self._chunks()))

    def __del__(self):
        try:
            self.file.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass


class FileChunks:
    """An engine that reads the files again (with their checks) on every pass."""

    def __init__(self, files, root, names, chunk_size, spec, layout, constraint_columns, rows,
                 progress):
        self.args = (files, root, names, chunk_size, spec)
        self.layout, self.constraint_columns = layout, constraint_columns
        self.shown = Passes(rows, progress)

    @property
    def n_chunks(self) -> int:
        return len(self.layout)

    def map_reduce(self, fn, merge):
        chunks = (columns_of(sample, _constraint_values(df, self.constraint_columns))
                  for sample, df, *_ in _chunk_samples(*self.args, False))
        return reduce_chunks(fn, merge, self.shown(chunks))
