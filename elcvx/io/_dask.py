"""The Dask engine of a log's rows (``engine="dask"``): :class:`DaskRows`.

A log on a Dask cluster is a Dask DataFrame: given one, or built from a path's files (resolved as
the stream reader resolves them, :func:`~elcvx.io.sources._log_files`) with one partition per
file, or per group of a Parquet file's row groups. Each partition is converted once, on the
workers, into the :class:`~elcvx.engines.rows.Columns` the solvers read (validated as
:func:`~elcvx.io.read_log` validates a log, so an error names the file and the row), and those
stay in the workers' memory. Every pass of a solver is then one :meth:`DaskRows.map_reduce`: its
per-chunk function runs next to each partition and the partial results are merged in a tree on
the workers, so only the merged result, a few numbers, comes back to the client.

Files are read by the stream reader's own functions, not by ``dask.dataframe.read_parquet`` or
``read_csv``: those lose which file and row a partition's rows came from, which an error about a
value must name, and they parse CSV numbers differently from the other engines.
"""

from __future__ import annotations

import contextlib
import operator
from typing import NamedTuple

import numpy as np

from ..engines.rows import columns_of, reduce_chunks
from .._validation import plural
from ..errors import ElcvxError, InvalidInputError, _require
from .columns import _missing_columns, _no_duplicates, _pandas, numbers
from .frames import _sample_from_frame
from ..engines.progress import Progress, progress_enabled
from .logscan import LogScan, _constraint_values
from .spec import LogSpec
from .stream import _resolve
from .sources import (_columns_of, _csv_batches, _log_files, _parquet_batches,
                      _parquet_dataset, _total_bytes)

#: A Parquet file is cut into partitions of whole row groups holding about this many rows.
PARTITION_ROWS = 1 << 22


def _distributed():
    return _require("distributed", "dask", "the Dask engine (engine='dask')")


@contextlib.contextmanager
def local_client(n_workers: int):
    """A client of a cluster of ``n_workers`` worker processes (one thread each) on this machine,
    for one run: both are closed on exit."""
    distributed = _distributed()
    # (":0": the scheduler's HTTP server on a free port, not 8787, which another may hold.)
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster, set_as_default=False) as client:
            yield client


def _connect(client):
    """``(client, owned)``: the given client, one connected to a scheduler's address (owned: closed
    by :meth:`DaskRows.close`), or the current one."""
    distributed = _distributed()
    if isinstance(client, distributed.Client):
        return client, False
    if isinstance(client, str):
        try:
            return distributed.Client(client), True
        except (OSError, TimeoutError, ValueError) as exc:
            raise InvalidInputError(f"cannot connect to the Dask scheduler at {client!r}: {exc}",
                                    field="client", value=client) from None
    if client is not None:
        raise InvalidInputError("client must be a distributed.Client, a scheduler address or "
                                f"None, got {type(client).__name__}", field="client")
    try:
        return distributed.get_client(), False
    except ValueError:
        raise InvalidInputError(
            "the Dask engine needs a Dask cluster and none is connected: pass client= (a "
            "distributed.Client or a scheduler address such as 'tcp://10.0.0.1:8786'), or on the "
            "command line --scheduler ADDRESS", field="client") from None


def _pieces(files, root):
    """``(path, format, row_groups, first)`` per partition: a CSV file whole (its rows numbered
    from line 2), a Parquet file by groups of row groups (``None``: all of them; rows numbered
    from 1 in the file)."""
    pq = _require("pyarrow.parquet", "io", "reading Parquet logs")
    out = []
    for path, fmt in files:
        if fmt != "parquet":
            out.append((path, fmt, None, 2))
            continue
        try:
            meta = pq.read_metadata(path)
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...: the file is bad
            raise InvalidInputError(f"cannot read {path} as Parquet: {exc}") from None
        sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        if sum(sizes) <= PARTITION_ROWS:
            out.append((path, fmt, None, 1))
            continue
        start, first, rows = 0, 1, 0
        for g, size in enumerate(sizes):
            rows += size
            if rows >= PARTITION_ROWS or g == len(sizes) - 1:
                out.append((path, fmt, list(range(start, g + 1)), first))
                start, first, rows = g + 1, first + rows, 0
    return out


def _read_piece(piece, root, names, spec):
    """A partition of a log's files as a pandas DataFrame of the columns ``names``, indexed by
    row (Parquet) or line (CSV) number in its file, as :func:`~elcvx.io.read_table` numbers them
    (a CSV/TSV file read in the dialect of ``spec``, a :class:`~elcvx.io.LogSpec`)."""
    pd = _pandas()
    path, fmt, groups, first = piece
    if fmt == "parquet":
        dataset = _parquet_dataset([path], root)
        fragment = next(iter(dataset.get_fragments()))
        if groups is not None:
            fragment = fragment.subset(row_group_ids=groups)
        batches = _parquet_batches(path, dataset, fragment, names, root)
    else:
        batches = _csv_batches(path, spec.delimiter(fmt, path), spec, names)
    # A CSV file's batches turn to text from its first value that is not a number: concat
    # keeps each batch's values, in an object column, for _sample_from_frame to name.
    frames = [b.to_pandas() for b in batches]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({n: [] for n in names})
    df.index = pd.RangeIndex(first, first + len(df), name="row" if fmt == "parquet" else "line")
    return df


def _convert(df, source, spec, extra):
    """A partition's :class:`~elcvx.engines.rows.Columns` (with the constraint columns ``extra`` as its
    ``G``) and its :class:`_Summary`; ``(None, None)`` when it has no rows. Checked as
    :func:`~elcvx.io.scan_log` checks a chunk: an error names ``source`` and the row."""
    if len(df) == 0:
        return None, None
    sample, described = _sample_from_frame(df, source, spec, prefix=f"{source}: ")
    df.attrs["file"] = source
    df.attrs["decimal"] = spec.decimal  # (for the constraint columns)
    cols = columns_of(sample, _constraint_values(df, extra))
    return cols, _Summary(cols.w.size, sample.n, float(cols.w.min()), float(cols.w.max()),
                          described, (sample.wmin, sample.wmax, sample.rmin, sample.rmax))


class _Summary(NamedTuple):
    """What the client learns of a partition: its rows, the sum of its counts, its smallest and
    largest weight, how its columns were read and the bounds."""

    rows: int
    n: float
    w_lo: float
    w_hi: float
    described: dict
    bounds: tuple


def _is_dask_frame(source) -> bool:
    dd = _require("dask.dataframe", "dask", "the Dask engine (engine='dask')")
    return isinstance(source, dd.DataFrame)


def _merged(merge, a, b):
    # A pass ends in None when a chunk's partial is None (a point outside an objective's domain).
    return None if a is None or b is None else merge(a, b)


class LogFiles(NamedTuple):
    """A log's files as :func:`~elcvx.io.sources._log_files` resolves them: ``(path, format)``
    pairs, and the dataset folder whose ``key=value`` subfolders are columns (or None)."""

    files: list
    root: str | None


def _frame(source, spec, extra):
    """``(frame, names, spec)``: the log as a Dask DataFrame of the columns it needs, what each
    partition is called in messages (a file, or a partition of the given DataFrame), and
    ``spec`` with its column names resolved."""
    dd = _require("dask.dataframe", "dask", "the Dask engine (engine='dask')")
    dask = _require("dask", "dask", "the Dask engine (engine='dask')")
    given = isinstance(source, dd.DataFrame)
    if given:
        present, shown = list(source.columns), "the Dask DataFrame"
    else:
        files, root = source
        spec.require_csv([fmt for _, fmt in files], files[0][0])
        present, shown = _columns_of(files, root, spec), files[0][0]
    spec = spec.resolve_columns(present)
    used = list(dict.fromkeys(spec.column_names + list(extra)))
    _no_duplicates(shown, present, used)
    _missing_columns(shown, used, present)
    if given:
        return source[used], [f"partition {k} of the Dask DataFrame"
                              for k in range(source.npartitions)], spec
    pieces = _pieces(files, root)
    meta = _pandas().DataFrame({c: np.empty(0) for c in used})
    # As read: no conversion of text columns to Arrow strings (dask's default).
    with dask.config.set({"dataframe.convert-string": False}):
        frame = dd.from_map(_read_piece, pieces, args=(root, used, spec), meta=meta, label="elcvx-read",
                            enforce_metadata=False)
    return frame, [p[0] for p in pieces], spec


class DaskRows:
    """A log's rows on a Dask cluster, converted once and kept in the workers' memory: the
    ``engine="dask"`` of :func:`elcvx.io.scan_log`.

    Parameters
    ----------
    source : str, PathLike, LogFiles or dask.dataframe.DataFrame
        A Parquet or CSV/TSV file, a folder of them or a glob (as :func:`read_log_compressed`
        takes; or its files, resolved), or a Dask DataFrame with the log's columns.
    spec : LogSpec, optional
        The columns and bounds (:class:`~elcvx.io.LogSpec`); a column name left ``None`` is
        found on the first file's (or the DataFrame's) columns.
    client : distributed.Client, str or None
        The cluster: a client, a scheduler's address (a client is then connected, and closed by
        :meth:`close`), or ``None`` for the current client (``distributed.get_client()``).
    format : str, optional
        The format of a path's files, as :func:`~elcvx.io.read_log_compressed` takes it.
    constraint_columns : sequence of str
        Columns read as the moment constraints' ``G`` (as :func:`~elcvx.io.scan_log`'s).
    progress : bool, optional
        Draw the partitions converted, then each pass, on stderr; default when stderr is a
        terminal and the files hold more than 50 MB.

    Attributes
    ----------
    n_chunks : int
        The partitions that hold rows.
    n_rows : int
        The rows of the log.
    n : float
        The sum of their counts.
    w_observed : tuple
        The smallest and largest weight in the log.
    wmin, wmax, rmin, rmax : float
        The bounds, as :func:`~elcvx.io.read_log` sets them.
    columns : dict
        How each quantity was read, as :attr:`~elcvx.io.Log.columns`.
    source : LogFiles or dask.dataframe.DataFrame
        The log's files, or the DataFrame given.
    constraint_columns : tuple of str
    passes : int
        The passes run (:meth:`map_reduce` calls).

    Raises
    ------
    InvalidInputError
        No cluster; a path that names no Parquet or CSV file; a missing column; a value that is
        not a number or is out of range, naming the file and row (or the partition and index
        of a Dask DataFrame).
    MissingDependencyError
        ``distributed`` is not installed (the ``dask`` extra).
    """

    #: Each worker's task folds a partition on one thread: the cluster's workers are the
    #: parallelism (:func:`elcvx.engines.rows.chunk_fold`).
    threads_per_chunk = 1

    def __init__(self, source, spec=None, client=None, *, format=None, constraint_columns=(),
                 progress=None):
        spec = LogSpec.from_keywords(spec)
        if not isinstance(source, LogFiles) and not _is_dask_frame(source):
            source = LogFiles(*_log_files(source, format))
        self.source = source
        self.constraint_columns = tuple(constraint_columns)
        self._client, self._owned = _connect(client)
        try:
            size = _total_bytes(source.files) if isinstance(source, LogFiles) else 0
            self._show = progress_enabled(progress, size)
            self._parts, summaries = self._persist(source, spec)
        except BaseException:
            self.close()
            raise
        self.n_chunks, self.passes = len(self._parts), 0
        self.n_rows = sum(s.rows for s in summaries)
        self.n = float(sum(s.n for s in summaries))
        self.w_observed = (min(s.w_lo for s in summaries), max(s.w_hi for s in summaries))
        self.columns = summaries[0].described
        self.wmin, self.wmax, self.rmin, self.rmax = summaries[0].bounds

    @property
    def address(self) -> str:
        """The scheduler's address."""
        return self._client.scheduler.address

    def _persist(self, source, spec):
        dask = _require("dask", "dask", "the Dask engine (engine='dask')")
        frame, sources, spec = _frame(source, spec, self.constraint_columns)
        converted = [dask.delayed(_convert, pure=False)(part, s, spec, self.constraint_columns)
                     for part, s in zip(frame.to_delayed(), sources)]
        pairs = self._client.compute(converted)
        bar = Progress("elcvx: reading on the cluster", len(pairs), self._show, unit="partitions")
        try:
            for done, f in enumerate(pairs, 1):  # the first bad partition in the log's order
                exc = f.exception()  # waits for f
                if exc is not None:
                    self._client.cancel(pairs)
                    if isinstance(exc, ElcvxError):
                        raise exc.with_traceback(None) from None
                    raise exc
                bar.update(done)
        finally:
            bar.close()
        summaries = self._client.gather(self._client.map(operator.itemgetter(1), pairs, pure=False))
        kept = [f for f, s in zip(pairs, summaries) if s is not None]
        summaries = [s for s in summaries if s is not None]
        if not kept:
            shown = "the Dask DataFrame" if _is_dask_frame(source) else "the log"
            raise InvalidInputError(f"{shown} has no rows: at least one example is needed")
        # The pairs' futures go with this frame; the Columns stay, held by these (on the same
        # workers: the pairs' are where the passes' tasks ask to run).
        where = self._client.who_has(kept)
        parts = self._client.map(operator.itemgetter(0), kept, pure=False)
        groups = {}
        for pair, part in zip(kept, parts):
            held = where.get(pair.key) or (None,)
            groups.setdefault(held[0], []).append(part)
        self._groups = [([w] if w else None, g) for w, g in groups.items()]
        return parts, summaries

    def map_reduce(self, fn, merge):
        """``functools.reduce(merge, [fn(cols) for cols in chunks])`` over the log's chunks: on
        each worker, ``fn`` runs on the partitions it keeps and ``merge`` folds their partials;
        the workers' partials are merged in a tree on the workers, and only the final result is
        sent to the client. ``fn`` and ``merge``
        must pickle (module-level functions, or ``functools.partial`` of them). A partial of
        ``None`` makes the result ``None`` (as :func:`elcvx.engines.rows.reduce_chunks`)."""
        client = self._client
        self.passes += 1
        bar = Progress(f"elcvx: pass {self.passes} on the cluster", self.n_rows, self._show,
                       unit="rows")
        bar.update(0, force=True)
        try:
            # One task per worker folds its partitions (a task per partition costs the
            # scheduler's time on every pass), then the workers' partials merge in a tree.
            level = [client.submit(reduce_chunks, fn, merge, parts, workers=worker,
                                   allow_other_workers=True, pure=False)
                     for worker, parts in self._groups]
            while len(level) > 1:
                merged = [client.submit(_merged, merge, a, b, pure=False)
                          for a, b in zip(level[::2], level[1::2])]
                level = merged + level[len(merged) * 2:]
            return level[0].result()
        finally:
            bar.close()

    def close(self) -> None:
        """Release the partitions kept on the workers (and close the client if this engine
        connected it)."""
        parts, self._parts, self._groups = getattr(self, "_parts", []), [], []
        if parts and self._client.status == "running":
            self._client.cancel(parts)
        if self._owned:
            self._client.close()
            self._owned = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def dask_scan(source, spec, constraint_columns=(), *, format=None, client=None, progress=None):
    """:func:`~elcvx.io.scan_log` with ``engine="dask"``: the log's rows (a path's files, or a
    Dask DataFrame) converted and kept on a Dask cluster's workers (:class:`DaskRows`), in a
    :class:`~elcvx.io.LogScan`."""
    rows = DaskRows(source, spec, client, format=format, constraint_columns=constraint_columns,
                    progress=progress)
    where = (f"kept as {plural(rows.n_chunks, 'partition')} on the Dask cluster at "
             f"{rows.address}")
    in_order = None
    if isinstance(rows.source, LogFiles):
        files = rows.source.files
        path, formats = str(source), "+".join(dict.fromkeys(fmt for _, fmt in files))
        read = f"read in chunks from {plural(len(files), 'file')} ({rows.n_rows:,} rows)"
        # (LogScan.rows_in_order reads the files again here, as the stream engine does.)
        resolved = _resolve(source, format, spec)
        in_order = (*resolved[:3], 1 << 18, resolved[3])
    else:
        path, formats = "the Dask DataFrame", "dask"
        read = f"read from a Dask DataFrame ({rows.n_rows:,} rows)"
    return LogScan(path=path, format=formats, n_rows=rows.n_rows, n=rows.n, wmin=rows.wmin,
                   wmax=rows.wmax, rmin=rows.rmin, rmax=rows.rmax, w_observed=rows.w_observed,
                   sample=None, columns=rows.columns, notes=(f"{read}, {where}",), engine=rows,
                   constraint_columns=constraint_columns, files=in_order)


def dask_columns(path, names, spec, *, client=None, format=None) -> list:
    """The columns ``names`` of a log's files read on a Dask cluster's workers, one partition
    per file (or group of a Parquet file's row groups): a list of ``{name: float64 array}``, one
    per partition in file order, each value checked to be a number (an error names the file,
    the row and the column: :func:`~elcvx.io.columns.numbers`)."""
    files, root = _log_files(path, format)
    pieces = _pieces(files, root)
    c, owned = _connect(client)
    try:
        futures = c.map(lambda piece: numbers(_read_piece(piece, root, names, spec), names,
                                              piece[0]), pieces, pure=False)
        return c.gather(futures)
    finally:
        if owned:
            c.close()

