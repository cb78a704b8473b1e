"""The Dask engine of a log's rows (``engine="dask"``): :class:`DaskRows`.

A log on a Dask cluster is a Dask DataFrame: given one, or built from a path's files (resolved as
the stream reader resolves them, :func:`~elcvx.io.sources._log_files`) with one partition per
file, or per group of a Parquet file's row groups. Each partition is converted once, on the
workers, into the :class:`~elcvx._rows.Columns` the solvers read (validated as
:func:`~elcvx.io.read_log` validates a log, so an error names the file and the row), and those
stay in the workers' memory. Every pass of a solver is then one :meth:`DaskRows.map_reduce`: its
per-chunk function runs next to each partition and the partial results are merged in a tree on
the workers, so only the merged result, a few numbers, comes back to the client.

Files are read by the stream reader's own functions, not by ``dask.dataframe.read_parquet`` or
``read_csv``: those lose which file and row a partition's rows came from, which an error about a
value must name, and they parse CSV numbers differently from the other engines.
"""

from __future__ import annotations

import numpy as np

from .._rows import Columns
from ..errors import ElcvxError, InvalidInputError, _require
from .columns import _missing_columns, _no_duplicates, _pandas
from .frames import _resolve_columns, _sample_from_frame
from .sources import (_columns_of, _csv_batches, _log_files, _parquet_batches,
                      _parquet_dataset)

#: A Parquet file is cut into partitions of whole row groups holding about this many rows.
PARTITION_ROWS = 1 << 22
_OPTIONS = ("weight", "target_prob", "logging_prob", "reward", "cost", "count", "wmin", "wmax",
            "pmin", "rmin", "rmax", "cmin", "cmax")


def _distributed():
    return _require("distributed", "dask", "the Dask engine (engine='dask')")


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


def _read_piece(piece, root, names):
    """A partition of a log's files as a pandas DataFrame of the columns ``names``, indexed by
    row (Parquet) or line (CSV) number in its file, as :func:`~elcvx.io.read_table` numbers them."""
    pd = _pandas()
    path, fmt, groups, first = piece
    if fmt == "parquet":
        dataset = _parquet_dataset([path], root)
        fragment = next(iter(dataset.get_fragments()))
        if groups is not None:
            fragment = fragment.subset(row_group_ids=groups)
        batches = _parquet_batches(path, dataset, fragment, names, root)
    else:
        batches = _csv_batches(path, "\t" if fmt == "tsv" else ",", names)
    # A CSV file's batches turn to text from its first value that is not a number: concat
    # keeps each batch's values, in an object column, for _sample_from_frame to name.
    frames = [b.to_pandas() for b in batches]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({n: [] for n in names})
    df.index = pd.RangeIndex(first, first + len(df), name="row" if fmt == "parquet" else "line")
    return df


def _to_columns(df, source, prefix, options):
    """A partition's :class:`~elcvx._rows.Columns` (``None`` when it has no rows), checked as
    :func:`~elcvx.io.read_log` checks a log: an error names ``prefix`` and the row."""
    if len(df) == 0:
        return None
    sample, _ = _sample_from_frame(df, source, prefix=prefix, **options)
    return Columns(sample.w, sample.u, sample.counts, np.empty((0, sample.n_rows)))


def _rows_of(cols) -> int:
    return 0 if cols is None else int(cols.w.size)


class DaskRows:
    """A log's rows on a Dask cluster, converted once and kept in the workers' memory: the
    ``engine="dask"`` of :func:`elcvx.io.scan_log`.

    Parameters
    ----------
    source : str, PathLike or dask.dataframe.DataFrame
        A Parquet or CSV/TSV file, a folder of them or a glob (as :func:`read_log_compressed`
        takes), or a Dask DataFrame with the log's columns.
    options : dict
        The column names and bounds of :func:`~elcvx.io.sample_from_dataframe` (``weight``,
        ``target_prob``, ``logging_prob``, ``reward``, ``cost``, ``count``, ``wmin``, ``wmax``,
        ``pmin``, ``rmin``, ``rmax``, ``cmin``, ``cmax``); a column name left ``None`` is found
        as there, on the first file's (or the DataFrame's) columns. A path's files may also be
        given their ``format``.
    client : distributed.Client, str or None
        The cluster: a client, a scheduler's address (a client is then connected, and closed by
        :meth:`close`), or ``None`` for the current client (``distributed.get_client()``).

    Attributes
    ----------
    n_chunks : int
        The partitions that hold rows.
    n_rows : int
        The rows of the log.

    Raises
    ------
    InvalidInputError
        No cluster; a path that names no Parquet or CSV file; a missing column; a value that is
        not a number or is out of range, naming the file and row (or the partition and index
        of a Dask DataFrame).
    MissingDependencyError
        ``distributed`` is not installed (the ``dask`` extra).
    """

    def __init__(self, source, options, client=None):
        options = dict(options)
        fmt = options.pop("format", None)
        unknown = set(options) - set(_OPTIONS)
        if unknown:
            raise InvalidInputError(f"unknown option(s) {sorted(unknown)}: the options are "
                                    f"{', '.join(_OPTIONS)}", field="options")
        options = {k: options.get(k) for k in _OPTIONS}
        if options["wmin"] is None:
            options["wmin"] = 0.0
        self._client, self._owned = _connect(client)
        try:
            self._parts, self.n_rows = self._persist(source, fmt, options)
        except BaseException:
            self.close()
            raise
        self.n_chunks = len(self._parts)

    def _persist(self, source, fmt, options):
        dd = _require("dask.dataframe", "dask", "the Dask engine (engine='dask')")
        dask = _require("dask", "dask", "the Dask engine (engine='dask')")
        if isinstance(source, dd.DataFrame):
            frame, present = source, list(source.columns)
            sources = [f"partition {k} of the Dask DataFrame" for k in range(source.npartitions)]
        else:
            files, root = _log_files(source, fmt)
            present = _columns_of(files, root)
        names = _resolve_columns(present, *(options[k] for k in
                                             ("weight", "target_prob", "logging_prob", "reward", "cost")))
        options.update(zip(("weight", "target_prob", "logging_prob", "reward", "cost"), names))
        used = list(dict.fromkeys(c for c in names + (options["count"],) if c is not None))
        shown = "the Dask DataFrame" if isinstance(source, dd.DataFrame) else files[0][0]
        _no_duplicates(shown, present, used)
        _missing_columns(shown, used, present)
        if isinstance(source, dd.DataFrame):
            frame = frame[used]
            prefixes = [f"{s}: " for s in sources]
        else:
            pieces = _pieces(files, root)
            meta = _pandas().DataFrame({c: np.empty(0) for c in used})
            # As read: no conversion of text columns to Arrow strings (dask's default).
            with dask.config.set({"dataframe.convert-string": False}):
                frame = dd.from_map(_read_piece, pieces, args=(root, used), meta=meta,
                                    label="elcvx-read", enforce_metadata=False)
            sources = [p[0] for p in pieces]
            prefixes = [f"{p[0]}: " for p in pieces]
        converted = [dask.delayed(_to_columns, pure=False)(part, s, p, options)
                     for part, s, p in zip(frame.to_delayed(), sources, prefixes)]
        futures = self._client.compute(converted)
        for f in futures:  # the first bad partition in the log's order, as the stream reader
            exc = f.exception()  # waits for f
            if exc is not None:
                self._client.cancel(futures)
                if isinstance(exc, ElcvxError):
                    raise exc.with_traceback(None) from None
                raise exc
        rows = self._client.gather(self._client.map(_rows_of, futures, pure=False))
        kept = [f for f, n in zip(futures, rows) if n]
        self._client.cancel([f for f, n in zip(futures, rows) if not n])
        if not kept:
            shown = "the Dask DataFrame" if isinstance(source, dd.DataFrame) else str(source)
            raise InvalidInputError(f"{shown} has no rows: at least one example is needed")
        return kept, int(sum(rows))

    def map_reduce(self, fn, merge):
        """``functools.reduce(merge, [fn(cols) for cols in chunks])`` over the log's chunks: ``fn``
        runs on each partition where it is kept, ``merge`` on pairs of results in a tree (in the
        partitions' order), and only the final result is sent to the client. ``fn`` and ``merge``
        must pickle (module-level functions, or ``functools.partial`` of them)."""
        client = self._client
        level = client.map(fn, self._parts, pure=False)
        while len(level) > 1:
            merged = [client.submit(merge, a, b, pure=False) for a, b in zip(level[::2], level[1::2])]
            level = merged + level[len(merged) * 2:]
        return level[0].result()

    def close(self) -> None:
        """Release the partitions kept on the workers (and close the client if this engine
        connected it)."""
        parts, self._parts = getattr(self, "_parts", []), []
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
