"""A log bigger than memory, read chunk by chunk into its exact compression:
:func:`read_log_compressed`.

Each chunk becomes a :class:`~elcvx.Sample` as :func:`read_log` builds one (the same column
resolution, checks and messages, which name the file and the row), and is compressed at once to
its distinct ``(w, r)`` rows with counts (:meth:`~elcvx.Sample.compress`); the chunks' rows are
merged as they come. When weights and rewards take few values (ε-greedy logs, binary rewards)
the result is small, and one in-memory sample with counts represents the whole log exactly:
every estimate and interval on it equals the one on the rows.
"""

from __future__ import annotations

import os

import numpy as np

from ..checks import check_weights
from ..errors import InvalidInputError
from ..sample import Sample
from .frames import _logging_probs, _sample_from_frame
from .logs import Log
from ..engines.progress import Progress, progress_enabled
from .sources import _batches, _columns_of, _log_files, _total_bytes
from .columns import _pandas
from .spec import LogSpec

#: :func:`read_log_compressed` stops when the log has more distinct ``(w, r)`` pairs than this.
MAX_PAIRS = 5_000_000
#: Chunks are merged once they hold more rows than this (and than the merged total).
_MERGE_ROWS = 1 << 20


class _Groups:
    """The running group-by ``(w, r) -> count`` of the chunks' compressed samples.

    Chunks are kept as they come and merged (concatenated and compressed again) once they hold
    more rows than the merged total and ``_MERGE_ROWS``, so a merge's cost stays proportional to what it
    adds; after a merge, more than ``max_pairs`` distinct pairs is an error.
    """

    def __init__(self, max_pairs: int, path: str, strict: bool = True):
        self.max_pairs = max_pairs
        self.path = path
        self.strict = strict  # else, past max_pairs, stop compressing (``failed``) instead of raising
        self.failed = False
        self.total: Sample | None = None
        self.pending: list[Sample] = []
        self.pending_rows = 0
        self.rows = 0  # rows of the log read so far

    def add(self, sample: Sample, rows: int) -> None:
        if self.failed:
            self.rows += rows
            return
        self.pending.append(sample)
        self.pending_rows += sample.n_rows
        self.rows += rows
        if self.pending_rows > max(_MERGE_ROWS, 0 if self.total is None else self.total.n_rows):
            self._merge()

    def _merge(self) -> None:
        parts = ([] if self.total is None else [self.total]) + self.pending
        first = parts[0]
        joined = Sample(np.concatenate([p.w for p in parts]), np.concatenate([p.r for p in parts]),
                        counts=np.concatenate([p.c for p in parts]), wmin=first.wmin,
                        wmax=first.wmax, rmin=first.rmin, rmax=first.rmax)
        self.total, self.pending, self.pending_rows = joined.compress(), [], 0
        if self.total.n_rows > self.max_pairs and not self.strict:
            self.failed, self.total = True, None
        elif self.total.n_rows > self.max_pairs:
            raise InvalidInputError(
                f"{self.path}: more than {self.max_pairs:,} distinct (w, r) pairs in its first "
                f"{self.rows:,} rows: the weights (or rewards) take too many values to compress "
                "(continuous weights). Evaluate such a log without compressing it: "
                "elcvx.io.scan_log (--engine stream streams it when it does not compress), or raise "
                "max_pairs (--max-pairs) if "
                "the pairs fit in memory", field="max_pairs", value=self.max_pairs)

    def sample(self) -> Sample | None:
        """The compressed sample (None when it failed: more than ``max_pairs`` pairs)."""
        if self.pending:
            self._merge()
        return self.total


def read_log_compressed(path, *, spec=None, format=None, weight=None, target_prob=None,
                        logging_prob=None, reward=None, cost=None, count=None, wmin=None,
                        wmax=None, pmin=None, rmin=None, rmax=None, cmin=None, cmax=None,
                        sep=None, decimal=None,
                        chunk_size=1 << 18, max_pairs=MAX_PAIRS, progress=None) -> Log:
    """Read a log chunk by chunk, never whole, into its exact compression: a :class:`Log` whose
    sample has one row per distinct ``(w, r)`` pair, with counts.

    The sample equals ``read_log(...).sample.compress()`` on the same rows (counts, weights and
    rewards exactly; sums of non-integer counts up to rounding), so every estimate and interval
    is the one on the whole log. The columns, bounds and CSV dialect (``sep``, ``decimal``) are
    those of :func:`read_log` (a :class:`LogSpec`, or its fields as keywords); default column
    names are resolved on the first file.

    Parameters
    ----------
    path : str or PathLike
        A Parquet or CSV/TSV file (CSV gzipped or not); a folder of them, searched recursively (names
        starting with ``.`` or ``_`` are skipped, as by pyarrow; in a Parquet dataset folder,
        ``key=value`` subfolders are columns too); or a glob, ``'logs/*.parquet'`` (``**``
        matches subfolders). Files are read in sorted order.
    chunk_size : int
        Rows per chunk (default 262144): the memory read holds about 50 bytes a row of it.
    max_pairs : int
        Stop with an :class:`~elcvx.errors.InvalidInputError` when the distinct ``(w, r)`` pairs
        exceed this (default 5,000,000: 120 MB of pairs): the log does not compress.
    format : {"parquet", "csv", "tsv"}, optional
        Every file's format; default from each file's name and first bytes.
    progress : bool, optional
        Draw the rows and files read on stderr; default when stderr is a terminal and the files
        hold more than 50 MB.

    Returns
    -------
    Log
        ``.sample``, compressed; ``.path`` as given; ``.n_rows`` the rows read; ``.format``
        ``"parquet"``, ``"csv"``, ``"tsv"`` or, for a mix, those joined by ``+``; ``.notes``
        includes how many files and pairs (and the weights' check, as :func:`read_log`).

    Raises
    ------
    InvalidInputError
        No such file, folder or match; a file in another format; a missing column; a value
        that is not a number or is out of range (naming the file and the row, or the CSV
        line); more than ``max_pairs`` pairs.
    MissingDependencyError
        The ``io`` extra (pandas, pyarrow) is not installed.

    Examples
    --------
    The bundled example log, in chunks of 64 rows: its 300 rows are 6 distinct ``(w, r)``.

    >>> from elcvx import datasets, io
    >>> log = io.read_log_compressed(datasets.example_log_path(), pmin=datasets.EXAMPLE_PMIN,
    ...                              chunk_size=64)
    >>> log.n_rows, log.sample.n, log.sample.n_rows, log.sample.counts.tolist()
    (300, 300.0, 6, [74.0, 93.0, 44.0, 84.0, 2.0, 3.0])
    """
    spec = LogSpec.from_keywords(
        spec, weight=weight, target_prob=target_prob, logging_prob=logging_prob, reward=reward,
        cost=cost, count=count, wmin=wmin, wmax=wmax, pmin=pmin, rmin=rmin, rmax=rmax, cmin=cmin,
        cmax=cmax, sep=sep, decimal=decimal)
    chunk_size = _positive_int("chunk_size", chunk_size)
    max_pairs = _positive_int("max_pairs", max_pairs)
    files, root, names, spec = _resolve(path, format, spec)
    path = str(path)
    groups = _Groups(int(max_pairs), path)
    for chunk, df, described, bar in _chunk_samples(files, root, names, chunk_size, spec,
                                                    progress):
        groups.add(chunk.compress(), len(df))
        bar.label = f"elcvx: {groups.rows:,} rows, file {bar.file} of {len(files)}"
    if groups.rows == 0:
        raise InvalidInputError(f"{path} has no data rows")
    sample = groups.sample()
    assert sample is not None  # strict groups raise rather than give up
    formats = "+".join(dict.fromkeys(fmt for _, fmt in files))
    notes: tuple[str, ...] = (
        f"read in chunks from {len(files):,} file{'s' * (len(files) > 1)} ({groups.rows:,} "
        f"rows), compressed exactly to {sample.n_rows:,} distinct (w, r) rows",)
    notes += check_weights(sample, described["w"])
    return Log(sample=sample, path=path, format=formats, n_rows=groups.rows, columns=described,
               notes=notes)


def read_log_rows(path, *, spec=None, format=None, chunk_size=1 << 18, progress=None) -> Log:
    """Read every row of a Parquet or CSV/TSV file, a folder of them or a glob into one
    :class:`Log` in memory, in file order: the files in the order :func:`read_log_compressed`
    takes them (sorted by path), each file's rows in their order.

    Each chunk is read and checked as :func:`read_log_compressed` reads it (messages name the
    file and the row); the sample holds the rows as they are (``--engine memory`` on the
    command line, for a folder or a glob). Parameters as :func:`read_log_compressed`, the
    columns and bounds as a :class:`~elcvx.io.LogSpec` only.

    Returns
    -------
    Log
        ``.sample`` the rows, in order; ``.path`` as given; ``.n_rows`` the rows read.
    """
    chunk_size = _positive_int("chunk_size", chunk_size)
    files, root, names, spec = _resolve(path, format, LogSpec.from_keywords(spec))
    path = str(path)
    chunks, probs, described = [], [], None
    for chunk, df, described, _ in _chunk_samples(files, root, names, chunk_size, spec, progress):
        chunks.append(chunk)
        probs.append(_logging_probs(df, spec))
    if not chunks:
        raise InvalidInputError(f"{path} has no data rows")
    assert described is not None  # set by the first chunk
    first = chunks[0]
    counts = None if first.counts is None else np.concatenate([c.counts for c in chunks])
    sample = Sample(np.concatenate([c.w for c in chunks]), np.concatenate([c.r for c in chunks]),
                    counts=counts, wmin=first.wmin, wmax=first.wmax, rmin=first.rmin,
                    rmax=first.rmax)
    formats = "+".join(dict.fromkeys(fmt for _, fmt in files))
    notes: tuple[str, ...] = (
        f"read from {len(files):,} file{'s' * (len(files) > 1)} ({sample.n_rows:,} rows), "
        "every row in memory, in file order",)
    notes += check_weights(sample, described["w"])
    return Log(sample=sample, path=path, format=formats, n_rows=sample.n_rows, columns=described,
               notes=notes, logging_probs=None if probs[0] is None else np.concatenate(probs))


def _positive_int(name, value):
    if not (isinstance(value, (int, np.integer)) and value >= 1):
        raise InvalidInputError(f"{name}={value!r} must be a positive integer", field=name,
                                value=value)
    return int(value)


def _resolve(path, format, spec, extra=()):
    """``(files, root, names, spec)``: a chunked log's files, the columns to read (``extra``
    ones too) and ``spec`` (a :class:`~elcvx.io.LogSpec`) with its column names resolved on the
    first file."""
    files, root = _log_files(path, format)
    spec = spec.require_csv([fmt for _, fmt in files], path).resolve_columns(
        _columns_of(files, root, spec))
    names = list(dict.fromkeys(spec.column_names + list(extra)))
    return files, root, names, spec


def _chunk_samples(files, root, names, chunk_size, spec, progress):
    """``(sample, df, described, bar)`` for each chunk of the files, in order: the chunk's
    :class:`~elcvx.Sample` as :func:`read_log` builds one (its checks and messages, naming the
    file and the row) and its DataFrame (rows numbered in their file), while a progress bar (``bar``: its ``label`` is the caller's; ``file``
    the number of the file being read) shows the bytes read."""
    pd = _pandas()
    size = _total_bytes(files)
    bar = Progress("elcvx: reading", size, progress_enabled(progress, size))
    bar.file = 0
    done_bytes, current = 0, None
    try:
        for file, fmt, first, batch in _batches(files, root, names, chunk_size, spec):
            if file != current:
                done_bytes += 0 if current is None else os.path.getsize(current)
                current, bar.file = file, bar.file + 1
            df = batch.to_pandas()
            # Rows are numbered within their file, as read_table numbers them.
            df.index = pd.RangeIndex(first, first + len(df), name="row" if fmt == "parquet" else "line")
            df.attrs["file"] = file
            df.attrs["decimal"] = spec.decimal  # (for the constraint columns, read later)
            chunk, described = _sample_from_frame(df, file, spec, prefix=f"{file}: ")
            yield chunk, df, described, bar
            bar.update(done_bytes)
    finally:
        bar.close()
