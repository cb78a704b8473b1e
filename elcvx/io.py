r"""Reading bandit logs: CSV, Parquet, JSON lines and Vowpal Wabbit's dsjson.

A log is a table with one row per logged decision. The user names its columns: either the
importance weight ``w`` or the target and logging probabilities of the logged action (``w =
target_prob / logging_prob``), the reward (or a cost, read as ``reward = -cost``) and optional
counts. Every reader ends in a :class:`~elcvx.Sample`, so validation happens once, there; an
error about a value names its line (CSV, JSON lines, dsjson) or row (Parquet, DataFrame).

=====================================  =========================================================
function                               reads
=====================================  =========================================================
:func:`read_log`                       a CSV/TSV, Parquet or JSON-lines log → :class:`Log`
:func:`read_dsjson`                    a Vowpal Wabbit dsjson log + the target's probabilities
:func:`read_table`                     a CSV/TSV, Parquet or JSON-lines file → DataFrame
:func:`sample_from_dataframe`          a DataFrame → :class:`~elcvx.Sample`
=====================================  =========================================================

Files may be gzip-compressed (detected from their first bytes, whatever the name). pandas and
pyarrow (the ``io`` extra: ``pip install 'elcvx[io]'``) are imported only when a table is read;
dsjson needs them only for a second file of target probabilities. The format comes from the
name (``.csv``, ``.tsv``, ``.parquet``/``.pq``, ``.jsonl``/``.ndjson``/``.json``,
``.dsjson``, each optionally ``.gz``); JSON files whose first event carries dsjson's
``_label_*`` keys are read as dsjson. A JSON file may also be one document: a records array
(pandas' ``to_json(orient="records")``) or an object of columns (its default ``to_json()``,
and the ``index``, ``split`` and ``table`` orients). Conventions where the formats are silent are in
``docs/cli.md``.
"""

from __future__ import annotations

import codecs
import functools
import gzip
import io as _stdio
import json
import math
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _validation as iv
from .errors import ElcvxError, InvalidInputError, WeightWarning
from .sample import Sample

__all__ = [
    "Log",
    "MissingDependencyError",
    "read_log",
    "read_dsjson",
    "read_table",
    "sample_from_dataframe",
    "detect_format",
    "FORMATS",
    "PDROP_MODES",
]

#: Input formats, as ``format=`` and ``elcvx evaluate --input-format`` take them.
FORMATS = ("csv", "tsv", "parquet", "jsonl", "dsjson")
#: How dsjson's ``pdrop`` becomes counts (see :func:`read_dsjson`).
PDROP_MODES = ("ess", "inverse", "ignore")
#: A progress bar is drawn on stderr for files larger than this (when stderr is a terminal).
PROGRESS_BYTES = 50 * 2**20

_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_DSJSON_KEYS = ("_label_cost", "_label_probability", "_label_Action", "_labelIndex", "_skipLearn")


class MissingDependencyError(ElcvxError, ImportError):
    """An optional dependency (an extra of elcvx) is not installed; the message names the extra."""


def _require(module: str, extra: str, what: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"{what} needs {module.split('.')[0]}, which is not installed: pip install 'elcvx[{extra}]'"
        ) from None


def _pandas():
    return _require("pandas", "io", "reading CSV, Parquet and JSON-lines logs")


@dataclass(frozen=True, eq=False)
class Log:
    """A log read from a file: the :class:`~elcvx.Sample` and where it came from.

    Attributes
    ----------
    sample : Sample
        The weights, rewards (``-cost`` for costs), counts and bounds.
    path : str
        The file read.
    format : str
        One of :data:`FORMATS`.
    n_rows : int
        Data rows (dsjson: events) in the file, skipped ones included.
    skipped : int
        Rows left out on purpose (dsjson events with ``"_skipLearn": true``).
    columns : dict
        How each quantity was read, e.g. ``{"w": "target_prob / logging_prob", "r": "reward"}``.
    notes : tuple of str
        What a reader of the results should know (skipped events, ``pdrop`` handling, a failed
        :meth:`~elcvx.Sample.weight_check`).
    """

    sample: Sample
    path: str
    format: str
    n_rows: int
    skipped: int = 0
    columns: dict = field(default_factory=dict)
    notes: tuple = ()


# ------------------------------------------------------------------------------------------------
# Opening files: gzip by magic bytes, byte counting for the progress bar
# ------------------------------------------------------------------------------------------------
class _Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, label: str, total: int, enabled: bool, stream=None, unit: str = "MB"):
        self.label = label
        self.unit = unit
        self.total = max(int(total), 1)
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self._last = 0.0
        self._shown = False

    def update(self, done: int, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        frac = min(max(done / self.total, 0.0), 1.0)
        width = 30
        bar = "#" * int(frac * width)
        scale = 2**20 if self.unit == "MB" else 1
        self.stream.write(f"\r{self.label} [{bar:<{width}}] {100 * frac:3.0f}% "
                          f"{done / scale:.0f}/{self.total / scale:.0f} {self.unit}")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False


class _CountingReader(_stdio.RawIOBase):
    """A raw binary stream that reports the bytes read from the file underneath it."""

    def __init__(self, raw, progress: _Progress):
        self._raw = raw
        self._progress = progress
        self.count = 0

    def readable(self):
        return True

    def readinto(self, b):
        n = self._raw.readinto(b)
        if n:
            self.count += n
            self._progress.update(self.count)
        return n

    def close(self):
        self._raw.close()
        super().close()


class _NotUtf8(InvalidInputError):
    """A text log with bytes that are not UTF-8; ``where`` names the first and its line."""

    def __init__(self, path: str, what: str, where: str):
        super().__init__(f"cannot read {path} as {what}: it is not UTF-8 text ({where})")
        self.where = where


class _Utf8Checked(_stdio.RawIOBase):
    """A binary stream passed through unchanged, raising :class:`_NotUtf8` at its first byte that
    is not UTF-8 text: not UTF-8, or NUL (valid UTF-8, but binary data: no text log holds it).

    Text readers meet such bytes badly: pyarrow's CSV reader, handed a row that is not UTF-8,
    prints a traceback it cannot raise and quotes the raw bytes in its error; json reports a
    codec error. Checking the bytes as they stream past (one decode pass) names the line instead.
    """

    def __init__(self, raw, path: str, what: str, decompressed: bool):
        self._raw = raw
        self._where = (path, what, decompressed)
        self._offset = 0  # bytes read
        self._pending = b""  # the start of a character cut by the last read

    def readable(self):
        return True

    def readinto(self, b):
        # At most 256 kB at a time: decoding a piece that stays in the cache is several times
        # faster (the buffered stream above keeps reading until it has what it was asked for).
        n = self._raw.readinto(memoryview(b)[:1 << 18])
        data = memoryview(b)[:n]
        if self._pending:
            data = self._pending + bytes(data)
        start = self._offset - len(self._pending)
        try:
            text, used = codecs.utf_8_decode(data, "strict", not n)
        except UnicodeDecodeError as exc:
            self._fail(start + exc.start, data[exc.start])
        nul = text.find("\0")
        if nul >= 0:
            self._fail(start + len(text[:nul].encode()), 0)
        self._pending = bytes(data[used:])
        self._offset += n
        return n

    def _fail(self, offset: int, byte: int):
        path, what, decompressed = self._where
        # The line is counted only now, reading the file again up to the byte: counting line
        # breaks on every read would cost as much as the check itself.
        line, left = 1, offset
        with _Opened(path, progress=False) as f:
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                line += chunk.count(b"\n")
                left -= len(chunk)
        of = " of the decompressed data" if decompressed else ""
        raise _NotUtf8(path, what, f"line {line} has the byte 0x{byte:02x}, at byte offset "
                                   f"{offset}{of}")

    def close(self):
        self._raw.close()
        super().close()


def _progress_enabled(progress, size: int) -> bool:
    if progress is None:
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        return bool(tty and size > PROGRESS_BYTES)
    return bool(progress)


def _check_path(path) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise InvalidInputError(f"path must be a file name, got {type(path).__name__}") from None
    if not os.path.exists(path):
        raise InvalidInputError(f"cannot read {path}: no such file")
    if os.path.isdir(path):
        raise InvalidInputError(f"cannot read {path}: it is a directory")
    return path


def _head(path: str, n: int = 4) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _is_gzip(path: str) -> bool:
    return _head(path, 2) == _GZIP_MAGIC


class _Opened:
    """``with _Opened(path, progress) as f``: a binary stream of the (decompressed) file.

    ``text``: the format's name (``"CSV"``), for a text format; the stream then raises
    :class:`_NotUtf8` at the first byte that is not UTF-8.
    """

    def __init__(self, path: str, progress=None, label: str | None = None, text: str | None = None):
        self.path = path
        self.progress = progress
        self.label = label or f"elcvx: reading {os.path.basename(path)}"
        self.text = text

    def __enter__(self):
        try:
            raw = open(self.path, "rb", buffering=0)
        except OSError as exc:
            raise InvalidInputError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        size = os.fstat(raw.fileno()).st_size
        self.bar = _Progress(self.label, size, _progress_enabled(self.progress, size))
        counted = _CountingReader(raw, self.bar)
        self._closers = [counted]
        stream = _stdio.BufferedReader(counted, buffer_size=1 << 20)
        gzipped = stream.peek(2)[:2] == _GZIP_MAGIC
        if gzipped:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")
        if self.text is not None:
            stream = _stdio.BufferedReader(_Utf8Checked(stream, self.path, self.text, gzipped),
                                           buffer_size=1 << 20)
        self._closers.append(stream)
        return stream

    def __exit__(self, *exc):
        self.bar.close()
        for c in reversed(self._closers):
            try:
                c.close()
            except Exception:  # noqa: BLE001 - closing must not mask the real error
                pass
        return False


def _first_line(path: str, what: str) -> str:
    """The first non-blank line of a (possibly gzipped) text file, '' if none; ``what``: the
    format's name for an error (:class:`_NotUtf8`) about bytes that are not UTF-8."""
    try:
        with _Opened(path, progress=False, text=what) as f:
            for i, raw in enumerate(f):
                line = raw.strip()
                if line:
                    return line.decode("utf-8")
                if i > 1000:
                    break
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from None
    return ""


# ------------------------------------------------------------------------------------------------
# Formats
# ------------------------------------------------------------------------------------------------
_SUFFIXES = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet",
    ".parq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
    ".dsjson": "dsjson",
}


def _looks_like_dsjson(line: str) -> bool:
    try:
        rec = json.loads(line)
    except ValueError:
        return False
    return isinstance(rec, dict) and any(k in rec for k in _DSJSON_KEYS)


def detect_format(path) -> str:
    """The format of a log file, from its name and, where that is ambiguous, its first bytes.

    ``.csv``, ``.tsv``, ``.parquet``/``.pq``, ``.jsonl``/``.ndjson``/``.json`` and ``.dsjson``
    (each optionally followed by ``.gz``); a JSON file whose first line holds one of dsjson's
    keys (``_label_cost``, ``_label_probability``, ``_label_Action``, ``_labelIndex``,
    ``_skipLearn``) is ``"dsjson"``. Other names are sniffed: Parquet's magic bytes, a first line
    starting with ``{``, else CSV.
    """
    path = _check_path(path)
    name = os.path.basename(path).lower()
    for gz in (".gz", ".gzip"):
        if name.endswith(gz):
            name = name[: -len(gz)]
    fmt = _SUFFIXES.get(os.path.splitext(name)[1])
    if fmt in ("csv", "tsv", "dsjson"):
        return fmt
    if fmt == "parquet" or (fmt is None and _head(path) == _PARQUET_MAGIC):
        return "parquet"
    try:
        line = _first_line(path, "JSON lines" if fmt == "jsonl" else "a log")
    except _NotUtf8 as exc:
        if fmt is not None:
            raise
        # A name that says nothing, and neither Parquet nor text: not a log of any format.
        raise InvalidInputError(
            f"cannot read {path}: not a recognised log format (not Parquet, and not UTF-8 text: "
            f"{exc.where}); logs are CSV/TSV, Parquet, JSON lines or dsjson") from None
    if fmt == "jsonl" or line.startswith(("{", "[")):
        return "dsjson" if _looks_like_dsjson(line) else "jsonl"
    return "csv"


def _format(path: str, format) -> str:
    if format is None:
        return detect_format(path)
    return iv.option("format", format, FORMATS)


# ------------------------------------------------------------------------------------------------
# Tables: CSV/TSV, Parquet, JSON lines
# ------------------------------------------------------------------------------------------------
def read_table(path, *, columns=None, format=None, progress=None):
    """Read a CSV/TSV, Parquet or JSON-lines file (gzip or not) into a pandas DataFrame.

    The index locates each row in the file, for error messages: for CSV and JSON lines it is
    the line number (named ``"line"``; a CSV header is line 1, and line numbers assume no field
    holds a quoted line break), for Parquet the row number from 1 (named ``"row"``).

    Parameters
    ----------
    path : str or PathLike
    columns : list of str, optional
        Read only these columns (an error names any that is missing and lists those present).
    format : {"csv", "tsv", "parquet", "jsonl"}, optional
        Default: from the file name (:func:`detect_format`).
    progress : bool, optional
        Draw a progress bar on stderr; default when stderr is a terminal and the file is larger
        than 50 MB.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InvalidInputError
        Unreadable file, missing column, malformed line (with its number), no data rows.
    MissingDependencyError
        pandas (or pyarrow, for Parquet) is not installed.
    """
    path = _check_path(path)
    fmt = _format(path, format)
    if fmt == "dsjson":
        raise InvalidInputError(f"{path} is a Vowpal Wabbit dsjson log: read it with read_dsjson")
    if columns is not None:
        columns = list(dict.fromkeys(columns))
    if fmt in ("csv", "tsv"):
        df = _read_csv(path, columns, "\t" if fmt == "tsv" else ",", progress)
    elif fmt == "parquet":
        df = _read_parquet(path, columns, progress)
    else:
        df = _read_jsonl(path, columns, progress)
    if len(df) == 0:
        raise InvalidInputError(f"{path} has no data rows")
    return df


def _shown(present) -> str:
    present = list(present)
    text = ", ".join(map(repr, present[:20])) + (", ..." if len(present) > 20 else "")
    return text or "none"


def _missing_columns(path, wanted, present):
    missing = [c for c in wanted if c not in present]
    if missing:
        raise InvalidInputError(f"{path} has no column {missing[0]!r} (its columns: {_shown(present)})")


def _no_duplicates(source, names, wanted=None, what="column"):
    """Raise if a name to be read (``wanted``; default all) occurs twice in ``names``.

    Which of the two is meant is ambiguous, and readers differ (pandas renames a CSV's second
    ``w`` to ``w.1``, pyarrow keeps both, json keeps the last key): refuse rather than pick one.
    """
    first = {}
    for i, name in enumerate(names):
        if name in first and (wanted is None or name in wanted):
            raise InvalidInputError(f"{source} has two {what}s named {name!r} ({what}s "
                                    f"{first[name] + 1} and {i + 1}): rename one")
        first.setdefault(name, i)


def _arrow_csv():
    pa = _require("pyarrow", "io", "reading CSV logs")
    pc = _require("pyarrow.csv", "io", "reading CSV logs")
    return pa, pc


def _csv_name(sep) -> str:
    return "TSV" if sep == "\t" else "CSV"


def _csv_header(path, sep):
    pa, pc = _arrow_csv()
    what = _csv_name(sep)
    try:
        with _Opened(path, progress=False, text=what) as f:
            parse = pc.ParseOptions(delimiter=sep, invalid_row_handler=lambda row: "skip")
            return pc.open_csv(f, parse_options=parse).schema.names
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            raise InvalidInputError(f"{path} is empty: a {what} log needs a header line and data rows") from None
        raise InvalidInputError(f"cannot read {path} as {what}: {exc}") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path} as {what}: {exc}") from None


def _csv_table(path, sep, columns, types, progress, threads):
    """Stream a CSV file into an Arrow table; a row with the wrong number of fields is an error
    naming its line (pyarrow knows line numbers when it parses on one thread)."""
    pa, pc = _arrow_csv()
    bad = []

    def on_bad_row(row):
        bad.append(row)
        return "error"

    read = pc.ReadOptions(use_threads=threads, block_size=1 << 22)
    parse = pc.ParseOptions(delimiter=sep, ignore_empty_lines=False, invalid_row_handler=on_bad_row)
    convert = pc.ConvertOptions(include_columns=columns, column_types=types,
                                strings_can_be_null=True, quoted_strings_can_be_null=False)
    try:
        with _Opened(path, progress=progress, text=_csv_name(sep)) as f:
            return pc.open_csv(f, read_options=read, parse_options=parse,
                               convert_options=convert).read_all()
    except pa.ArrowInvalid:
        if bad:
            row = bad[0]
            if row.number is None and threads:
                return _csv_table(path, sep, columns, types, False, False)
            where = f"line {row.number}" if row.number is not None else f"the line {row.text!r}"
            raise InvalidInputError(
                f"{path}: {where} is malformed: {iv.plural(row.actual_columns, 'field')} where "
                f"the header has {row.expected_columns}") from None
        raise


def _read_csv(path, columns, sep, progress):
    pd = _pandas()
    pa, pc = _arrow_csv()
    header = _csv_header(path, sep)
    _no_duplicates(path, header, columns)
    if columns is None:
        columns = header
    _missing_columns(path, columns, header)
    try:
        try:
            # Fast path: the columns as float64.
            table = _csv_table(path, sep, columns, {c: pa.float64() for c in columns}, progress, True)
        except pa.ArrowInvalid as exc:
            if "conversion error" not in str(exc):
                raise
            # Some value is not a number as Arrow reads them: read text, convert (or locate) later.
            table = _csv_table(path, sep, columns, {c: pa.string() for c in columns}, progress, True)
    except pa.ArrowInvalid as exc:
        raise InvalidInputError(f"cannot read {path} as {_csv_name(sep)}: {exc}") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path} as {_csv_name(sep)}: {exc}") from None
    df = table.to_pandas()
    df.index = pd.RangeIndex(2, 2 + len(df), name="line")
    # A blank line at the end of the file reads as a row of nulls: drop those, keep any other.
    if len(df):
        empty = df.isna().all(axis=1).to_numpy()
        if empty[-1]:
            last = len(empty) - int(np.argmin(empty[::-1])) if not empty.all() else 0
            df = df.iloc[:last]
    return df


def _read_parquet(path, columns, progress):
    pd = _pandas()
    pq = _require("pyarrow.parquet", "io", "reading Parquet logs")
    pa = _require("pyarrow", "io", "reading Parquet logs")
    try:
        if _is_gzip(path):
            with _Opened(path, progress=progress) as f:
                source = pa.BufferReader(f.read())
        else:
            source = path
        pf = pq.ParquetFile(source)
        names = pf.schema_arrow.names
        _no_duplicates(path, names, columns)
        if columns is not None:
            _missing_columns(path, columns, names)
        bar = _Progress(f"elcvx: reading {os.path.basename(path)}", max(pf.metadata.num_rows, 1),
                        _progress_enabled(progress, os.path.getsize(path)), unit="rows")
        batches, done = [], 0
        try:
            for batch in pf.iter_batches(columns=columns, batch_size=1 << 18):
                batches.append(batch)
                done += batch.num_rows
                bar.update(done)
        finally:
            bar.close()
        table = pa.Table.from_batches(batches, schema=pf.schema_arrow if columns is None else None) \
            if batches else pf.schema_arrow.empty_table()
        if columns is not None and not batches:
            table = table.select(columns)
    except (pa.ArrowException, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path} as Parquet: {exc}") from None
    df = table.to_pandas()
    df.index = pd.RangeIndex(1, 1 + len(df), name="row")
    return df


def _json_lines(path, progress, what, keys=None):
    """Yield ``(line number, record)`` for each non-blank line of a JSON-lines file.

    ``what``: the format's name, for errors. ``keys``: the keys that will be read (default: every
    key; ``()``: none is checked). json keeps the last of two equal keys silently, so a line that
    holds one of them twice is an error. Its quoted text then occurs twice in the line (unless
    escapes spell it): only lines where a key's does, or with a backslash, are parsed again
    keeping every key.
    """
    loads = json.loads
    fixed = None if keys is None else [_json_key(k) for k in keys]
    check = fixed is None or bool(fixed)
    with _Opened(path, progress=progress, text=what) as f:
        lineno = 0
        try:
            for raw in f:
                lineno += 1
                line = raw.decode()  # UTF-8, checked by the stream: json need not guess
                if not line.strip():
                    continue
                try:
                    rec = loads(line)
                except ValueError as exc:
                    msg = getattr(exc, "msg", str(exc))
                    col = getattr(exc, "colno", None)
                    where = f" at column {col}" if col else ""
                    raise InvalidInputError(
                        f"{path}: line {lineno} is not valid JSON ({msg}{where})") from None
                if not isinstance(rec, dict):
                    raise InvalidInputError(
                        f"{path}: line {lineno} is not a JSON object (got {type(rec).__name__})")
                if check and ("\\" in line or max(map(line.count, fixed or map(_json_key, rec)),
                                                  default=0) > 1):
                    _no_duplicate_keys(line, keys, f"{path}: line {lineno}")
                yield lineno, rec
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise InvalidInputError(f"cannot read {path}: {exc} (after line {lineno})") from None


@functools.lru_cache(maxsize=1024)
def _json_key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def _no_duplicate_keys(line: str, keys, where: str) -> None:
    """Raise if the JSON object ``line`` holds one of ``keys`` (default: any key) twice."""
    top = []

    def keep(pairs):
        top[:] = pairs  # objects are built inside out: the last one is the line's own
        return dict(pairs)

    json.loads(line, object_pairs_hook=keep)
    _no_duplicates(where, [k for k, _ in top], keys, what="key")


_JSON_EXPECTED = ("expected JSON lines (one object per line), a records array ([{\"w\": ..., "
                  "\"r\": ...}, ...]) or an object of columns ({\"w\": [...], \"r\": [...]})")


def _json_head(path: str):
    """The first non-blank line of a JSON file (decoded, stripped) and whether another follows."""
    first = None
    try:
        with _Opened(path, progress=False, text="JSON") as f:
            for raw in f:
                line = raw.strip()
                if not line:
                    continue
                if first is not None:
                    return first, True
                first = line.decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from None
    return first or "", False


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return d


def _json_document(path: str, progress):
    """The table held by a JSON file that is one document rather than JSON lines, or None.

    A document is a file starting with ``[``, an object spread over several lines, or a single
    line holding an object whose every value is an object or an array (a column-oriented
    table). JSON lines (one flat object per line) give None and are read line by line.
    """
    first, more = _json_head(path)
    if first.startswith("{"):
        try:
            rec = json.loads(first)
        except ValueError:
            rec = None  # an object spread over lines, or a malformed line: try the whole file
        else:
            if more or not (isinstance(rec, dict) and rec
                            and all(isinstance(v, (dict, list)) for v in rec.values())):
                return None
    elif not first.startswith("["):
        return None
    try:
        with _Opened(path, progress=progress, text="JSON") as f:
            doc = json.load(f, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise InvalidInputError(f"{path} has an object with two keys named {exc.args[0]!r}: "
                                "rename one") from None
    except ValueError as exc:
        if first.startswith("{"):
            return None  # not one document either: the JSON-lines reader names the bad line
        where = f" at line {exc.lineno} column {exc.colno}" if hasattr(exc, "lineno") else ""
        raise InvalidInputError(f"{path} is not valid JSON ({getattr(exc, 'msg', exc)}{where}); "
                                f"{_JSON_EXPECTED}") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from None
    return _document_frame(doc, path)


def _document_frame(doc, path: str):
    """A DataFrame from a parsed JSON document: pandas' ``to_json`` orients ``records``,
    ``columns`` (the default), ``index``, ``split`` and ``table``, or an object of arrays.
    Anything else is one short line saying what is expected (never the data)."""
    pd = _pandas()
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        if isinstance(doc.get("columns"), list):  # orient="split"
            names = doc["columns"]
            if not all(isinstance(r, list) and len(r) == len(names) for r in doc["data"]):
                raise InvalidInputError(f"{path}: a split-oriented JSON table whose \"data\" rows "
                                        f"do not all have {iv.plural(len(names), 'value')}")
            _no_duplicates(path, [str(c) for c in names])
            df = pd.DataFrame(doc["data"], columns=[str(c) for c in names])
            df.index = pd.RangeIndex(1, len(df) + 1, name="record")
            return df
        if "schema" in doc:  # orient="table": the records are in "data"
            doc = doc["data"]
    if isinstance(doc, list):
        bad = next((i for i, x in enumerate(doc) if not isinstance(x, dict)), None)
        if bad is not None:
            what = "an array" if isinstance(doc[bad], list) else f"a {type(doc[bad]).__name__}"
            raise InvalidInputError(f"{path}: item {bad + 1} of the JSON array is {what}, not an "
                                    f"object with named values; {_JSON_EXPECTED}")
        df = pd.DataFrame.from_records(doc)
        df.index = pd.RangeIndex(1, len(df) + 1, name="record")
        return df
    if not (isinstance(doc, dict) and doc and all(isinstance(v, (dict, list)) for v in doc.values())):
        what = "object" if isinstance(doc, dict) else type(doc).__name__
        raise InvalidInputError(f"{path} holds one JSON {what} that is not a table; {_JSON_EXPECTED}")
    if all(isinstance(v, list) for v in doc.values()):
        sizes = [(k, len(v)) for k, v in doc.items()]
        odd = next(((k, n) for k, n in sizes if n != sizes[0][1]), None)
        if odd is not None:
            raise InvalidInputError(f"{path}: the JSON columns differ in length ({sizes[0][0]!r} "
                                    f"has {iv.plural(sizes[0][1], 'value')}, {odd[0]!r} has "
                                    f"{iv.plural(odd[1], 'value')})")
        df = pd.DataFrame({k: pd.Series(v) for k, v in doc.items()})
        df.index = pd.RangeIndex(1, len(df) + 1, name="record")
        return df
    if not all(isinstance(v, dict) for v in doc.values()):
        raise InvalidInputError(f"{path} mixes arrays and objects as its columns; {_JSON_EXPECTED}")
    inner = list(dict.fromkeys(k for v in doc.values() for k in v))
    if all(k.isdigit() for k in doc) and not all(k.isdigit() for k in inner):
        # orient="index": {row: {column: value}}
        df = pd.DataFrame.from_records(list(doc.values()))
        df.index = pd.Index(list(doc), name="row")
        return df
    # orient="columns" (pandas' default): {column: {row: value}}; a missing cell is missing
    df = pd.DataFrame({c: pd.Series([col.get(k) for k in inner]) for c, col in doc.items()})
    df.index = pd.Index(inner, name="row")
    return df


def _read_jsonl(path, columns, progress):
    pd = _pandas()
    doc = _json_document(path, progress)
    if doc is not None:
        if len(doc) and columns is not None:
            _missing_columns(path, columns, list(doc.columns))
            doc = doc[columns]
        return doc
    lines = []
    if columns is None:
        records = []
        for lineno, rec in _json_lines(path, progress, "JSON lines"):
            lines.append(lineno)
            records.append(rec)
        df = pd.DataFrame.from_records(records) if records else pd.DataFrame()
    else:
        data = {c: [] for c in columns}
        for lineno, rec in _json_lines(path, progress, "JSON lines", columns):
            lines.append(lineno)
            for c in columns:
                try:
                    data[c].append(rec[c])
                except KeyError:
                    raise InvalidInputError(f"{path}: line {lineno} has no key {c!r}") from None
        df = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in data.items()})
    df.index = pd.Index(lines, name="line", dtype="int64")
    return df


# ------------------------------------------------------------------------------------------------
# From columns to a Sample
# ------------------------------------------------------------------------------------------------
def _locator(index):
    """index position -> "line 7" / "row 3" for error messages."""
    name = getattr(index, "name", None)
    if name in ("line", "row", "record"):
        return lambda i: f"{name} {index[i]}"
    return lambda i: f"row {index[i]!r}"


def _numeric(name: str, values, where) -> np.ndarray:
    """A float array from a column; names the first entry that is not a number or is missing."""
    arr = np.asarray(values)
    if arr.dtype.kind in "biuf":
        out = arr.astype(np.float64)
    else:
        out = np.empty(arr.shape, dtype=np.float64)
        for i, v in enumerate(arr.tolist()):
            if v is None:
                out[i] = np.nan
                continue
            if isinstance(v, (bool, int, float)):
                out[i] = float(v)
                continue
            try:
                out[i] = float(v)
            except (TypeError, ValueError):
                raise InvalidInputError(f"{where(i)}: {name} is {iv._short(v)}, not a number") from None
    nan = np.isnan(out)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise InvalidInputError(
            f"{where(i)}: {name} has no value ({iv.plural(int(nan.sum()), 'such row')})")
    return out


def _column(df, col: str, where) -> np.ndarray:
    s = df[col]
    if s.dtype.kind in "biuf":
        return _numeric(f"column {col!r}", s.to_numpy(dtype=float, na_value=np.nan), where)
    pd = _pandas()
    num = pd.to_numeric(s, errors="coerce")
    bad = (num.isna() & s.notna()).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"{where(i)}: column {col!r} is {iv._short(s.iloc[i])}, not a number")
    return _numeric(f"column {col!r}", num.to_numpy(dtype=float, na_value=np.nan), where)


def _reward_range(rmin, rmax, cmin, cmax):
    """The reward range from a reward range or a cost range (reward = -cost)."""
    if cmin is not None or cmax is not None:
        if rmin is not None or rmax is not None:
            raise InvalidInputError("give the reward range (rmin, rmax) or the cost range "
                                    "(cmin, cmax), not both")
        if cmin is None or cmax is None:
            raise InvalidInputError("give both ends of the cost range: cmin and cmax")
        cmin = iv.finite_scalar("cmin", cmin)
        cmax = iv.finite_scalar("cmax", cmax)
        if not cmin < cmax:
            raise InvalidInputError(f"cmin={cmin!r} must be < cmax={cmax!r}")
        return 0.0 - cmax, 0.0 - cmin
    return (0.0 if rmin is None else rmin), (1.0 if rmax is None else rmax)


_INDEXED = re.compile(r"^(w|r|counts|target_prob|logging_prob)\[(\d+)\]=(\S+) (.*)$", re.S)


def _relocate(exc: InvalidInputError, where, fields: dict, cost_range=None, reward=None):
    """Rewrite ``name[i]=value ...`` from Sample's validation as ``line L: <field> = value ...``.

    With ``cost_range`` the rewards are ``-cost`` and a reward out of range is reported as the
    cost it came from; when the range is the default ``[-1, 0]`` and every cost (``-reward``)
    lies in ``[0, 1]``, the message suggests that cost range.
    """
    m = _INDEXED.match(str(exc))
    if not m or m.group(1) not in fields:
        return exc
    name, i, value, rest = m.groups()
    if name == "r" and cost_range is not None:
        k = re.search(r"\((\d+) such values?\)", rest)
        count = f" ({iv.plural(int(k.group(1)), 'such value')})" if k else ""
        cmin, cmax = cost_range
        hint = ""
        if (cmin, cmax) == (-1.0, 0.0) and reward is not None and np.all(
                (np.asarray(reward) <= 0) & (np.asarray(reward) >= -1)):
            hint = ("; every cost lies in [0, 1]: give that cost range, cmin=0, cmax=1 (on the "
                    "command line, --cmin 0 --cmax 1)")
        return InvalidInputError(f"{where(int(i))}: {fields[name]} = {-float(value)!r} is outside "
                                 f"the cost range [{cmin!r}, {cmax!r}]{count} (reward = -cost)"
                                 f"{hint}")
    return InvalidInputError(f"{where(int(i))}: {fields[name]} = {value} {rest}")


def _build_sample(*, w=None, target=None, logging=None, reward, counts, wmin, wmax, pmin, rmin,
                  rmax, where, fields, cost_range=None) -> Sample:
    try:
        if w is not None:
            if pmin is not None:
                if wmax is not None:
                    raise InvalidInputError("give wmax or pmin, not both")
                pmin = iv.finite_scalar("pmin", pmin)
                if not 0 < pmin < 1:
                    raise InvalidInputError(f"pmin={pmin!r} must lie strictly between 0 and 1")
                wmax = 1.0 / pmin
            return Sample(w, reward, counts=counts, wmin=wmin, wmax=np.inf if wmax is None else wmax,
                          rmin=rmin, rmax=rmax)
        if pmin is not None and wmax is not None:
            raise InvalidInputError("give wmax or pmin, not both")
        return Sample.from_probs(target, logging, reward, pmin=pmin, wmax=wmax, wmin=wmin,
                                 counts=counts, rmin=rmin, rmax=rmax)
    except InvalidInputError as exc:
        raise _relocate(exc, where, fields, cost_range, reward) from None


def _pick(present, *candidates):
    for c in candidates:
        if c in present:
            return c
    return None


def _resolve_columns(present, weight, target_prob, logging_prob, reward, cost):
    """Fill in default column names; raise naming what is missing."""
    if weight is not None and (target_prob is not None or logging_prob is not None):
        raise InvalidInputError("give the weight column or the target and logging probability "
                                "columns, not both")
    if (target_prob is None) != (logging_prob is None) and weight is None:
        given, other = ("target_prob", "logging_prob") if target_prob is not None else \
            ("logging_prob", "target_prob")
        raise InvalidInputError(f"{given} is given without {other}: the weight is "
                                "target_prob / logging_prob, so both columns are needed")
    if weight is None and target_prob is None:
        if "target_prob" in present and "logging_prob" in present:
            target_prob, logging_prob = "target_prob", "logging_prob"
        else:
            weight = _pick(present, "weight", "w")
            if weight is None:
                raise InvalidInputError(
                    "no importance weights: name the weight column, or the target and logging "
                    "probability columns (no column is called 'weight', 'w', or "
                    f"'target_prob' and 'logging_prob'; the columns are {_shown(present)})")
    if reward is not None and cost is not None:
        raise InvalidInputError("give the reward column or the cost column, not both")
    if reward is None and cost is None:
        reward = _pick(present, "reward", "r")
        if reward is None:
            cost = _pick(present, "cost")
        if reward is None and cost is None:
            raise InvalidInputError("no rewards: name the reward (or cost) column (no column is "
                                    f"called 'reward', 'r' or 'cost'; the columns are {_shown(present)})")
    return weight, target_prob, logging_prob, reward, cost


def sample_from_dataframe(df, *, weight=None, target_prob=None, logging_prob=None, reward=None,
                          cost=None, count=None, wmin=0.0, wmax=None, pmin=None, rmin=None,
                          rmax=None, cmin=None, cmax=None) -> Sample:
    """A :class:`~elcvx.Sample` from the columns of a pandas DataFrame.

    Without column names, ``target_prob`` and ``logging_prob`` are used if both exist, else
    ``weight`` or ``w``; ``reward`` or ``r``, else ``cost``.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per logged decision.
    weight : str, optional
        Column of importance weights ``w = pi(a|x) / h(a|x)``.
    target_prob, logging_prob : str, optional
        Columns of the target and logging policies' probabilities of the logged action
        (``w = target_prob / logging_prob``); instead of ``weight``.
    reward : str, optional
        Column of rewards.
    cost : str, optional
        Column of costs, instead of ``reward``: the sample's reward is ``-cost``.
    count : str, optional
        Column of positive counts (row ``n`` stands for ``count`` identical examples).
    wmin, wmax, pmin : float, optional
        Weight bounds as in :meth:`Sample.from_probs`: ``wmax``, or ``pmin`` (the smallest
        probability the logging policy gives any action, ``wmax = 1/pmin``), else ``inf``.
    rmin, rmax : float, optional
        The reward range, default ``[0, 1]``.
    cmin, cmax : float, optional
        The cost range instead (both): the reward range is then ``[-cmax, -cmin]``.

    Returns
    -------
    Sample

    Raises
    ------
    InvalidInputError
        A missing column, or a value that is not a number, missing, or out of its range; the
        message names the column and the row (the line, for frames read by :func:`read_table`).

    Examples
    --------
    >>> import pandas as pd
    >>> from elcvx import Sample
    >>> df = pd.DataFrame({"p_target": [1.0, 0.0], "p_log": [0.5, 0.25], "click": [1, 0]})
    >>> s = Sample.from_dataframe(df, target_prob="p_target", logging_prob="p_log",
    ...                           reward="click", pmin=0.25)
    >>> s.w.tolist(), s.wmax
    ([2.0, 0.0], 4.0)
    """
    pd = _pandas()
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    sample, described = _sample_from_frame(
        df, "the DataFrame", weight=weight, target_prob=target_prob, logging_prob=logging_prob,
        reward=reward, cost=cost, count=count, wmin=wmin, wmax=wmax, pmin=pmin, rmin=rmin,
        rmax=rmax, cmin=cmin, cmax=cmax)
    _check_weights(sample, described["w"])
    return sample


def _sample_from_frame(df, source, *, prefix="", weight, target_prob, logging_prob, reward, cost, count,
                       wmin, wmax, pmin, rmin, rmax, cmin, cmax):
    present = list(df.columns)
    weight, target_prob, logging_prob, reward, cost = _resolve_columns(
        present, weight, target_prob, logging_prob, reward, cost)
    used = [c for c in (weight, target_prob, logging_prob, reward, cost, count) if c is not None]
    _no_duplicates(source, present, used)
    _missing_columns(source, used, present)
    if len(df) == 0:
        raise InvalidInputError(f"{source} has no rows: at least one example is needed")
    rmin, rmax = _reward_range(rmin, rmax, cmin, cmax)
    located = _locator(df.index)
    where = (lambda i: f"{prefix}{located(i)}") if prefix else located
    if weight is not None:
        w = _column(df, weight, where)
    else:
        t = _column(df, target_prob, where)
        h = _column(df, logging_prob, where)
    r = _column(df, reward if reward is not None else cost, where)
    if cost is not None:
        r = 0.0 - r
    counts = _column(df, count, where) if count is not None else None
    fields = {"r": f"reward (column {reward!r})" if reward is not None
              else f"cost (column {cost!r})",
              "counts": f"count (column {count!r})"}
    cost_range = (0.0 - rmax, 0.0 - rmin) if cost is not None else None
    if weight is not None:
        fields["w"] = f"weight (column {weight!r})"
        sample = _build_sample(w=w, reward=r, counts=counts, wmin=wmin, wmax=wmax, pmin=pmin,
                               rmin=rmin, rmax=rmax, where=where, fields=fields,
                               cost_range=cost_range)
        described = {"w": weight}
    else:
        fields.update({"w": f"weight ({target_prob} / {logging_prob})",
                       "target_prob": f"target probability (column {target_prob!r})",
                       "logging_prob": f"logging probability (column {logging_prob!r})"})
        sample = _build_sample(target=t, logging=h, reward=r, counts=counts, wmin=wmin,
                               wmax=wmax, pmin=pmin, rmin=rmin, rmax=rmax, where=where,
                               fields=fields, cost_range=cost_range)
        described = {"w": f"{target_prob} / {logging_prob}"}
    described["r"] = reward if reward is not None else f"-{cost}"
    if count is not None:
        described["counts"] = count
    return sample, described


def read_log(path, *, format=None, weight=None, target_prob=None, logging_prob=None, reward=None,
             cost=None, count=None, wmin=0.0, wmax=None, pmin=None, rmin=None, rmax=None,
             cmin=None, cmax=None, progress=None) -> Log:
    """Read a CSV/TSV, Parquet or JSON-lines log (gzip or not) into a :class:`Log`.

    Only the named columns are read. The column and bound parameters are those of
    :func:`sample_from_dataframe`; ``format`` and ``progress`` those of :func:`read_table`.
    Vowpal Wabbit dsjson logs are read by :func:`read_dsjson`.

    Returns
    -------
    Log
        ``.sample`` is the :class:`~elcvx.Sample`. When its weights fail
        :meth:`~elcvx.Sample.weight_check` (a mean implausibly far from ``E[w] = 1``, or
        ``wmax = inf`` leaving the estimate dependent on an unobserved weight), ``.notes`` says
        so and a :class:`~elcvx.errors.WeightWarning` is issued (as by every reader here).

    Raises
    ------
    InvalidInputError
        Unreadable file, missing column, malformed line, a value that is not a number or out of
        range (each naming the line or row), inconsistent options.
    MissingDependencyError
        pandas/pyarrow are not installed (``pip install 'elcvx[io]'``).

    Examples
    --------
    >>> from elcvx import io
    >>> from elcvx.datasets import example_log_path, EXAMPLE_PMIN
    >>> log = io.read_log(example_log_path(), pmin=EXAMPLE_PMIN)
    >>> log.sample.n, log.sample.wmax, log.columns
    (300.0, 16.0, {'w': 'target_prob / logging_prob', 'r': 'reward'})
    """
    path = _check_path(path)
    fmt = _format(path, format)
    if fmt == "dsjson":
        raise InvalidInputError(
            f"{path} is a Vowpal Wabbit dsjson log: its columns are fixed, and the target "
            "policy's probabilities come separately (read_dsjson(path, target_prob=...); on the "
            "command line, --target-prob-file)")
    names = [c for c in (weight, target_prob, logging_prob, reward, cost, count) if c is not None]
    if fmt == "parquet" or fmt in ("csv", "tsv"):
        present = _table_columns(path, fmt)
        weight, target_prob, logging_prob, reward, cost = _resolve_columns(
            present, weight, target_prob, logging_prob, reward, cost)
        names = [c for c in (weight, target_prob, logging_prob, reward, cost, count) if c is not None]
        df = read_table(path, columns=names, format=fmt, progress=progress)
    elif (doc := _json_document(path, progress)) is not None:
        # One JSON document (a records array, an object of columns): its columns are known.
        present = list(doc.columns)
        weight, target_prob, logging_prob, reward, cost = _resolve_columns(
            present, weight, target_prob, logging_prob, reward, cost)
        names = [c for c in (weight, target_prob, logging_prob, reward, cost, count) if c is not None]
        _missing_columns(path, names, present)
        if len(doc) == 0:
            raise InvalidInputError(f"{path} has no data rows")
        df = doc[list(dict.fromkeys(names))]
    else:
        # JSON lines have no header: default names are resolved on the first record.
        if weight is None and target_prob is None or reward is None and cost is None:
            try:
                first = json.loads(_first_line(path, "JSON lines") or "{}")
            except ValueError:
                _read_jsonl(path, [], False)  # raises, naming the malformed line
                raise
            weight, target_prob, logging_prob, reward, cost = _resolve_columns(
                list(first) if isinstance(first, dict) else [], weight, target_prob,
                logging_prob, reward, cost)
        names = [c for c in (weight, target_prob, logging_prob, reward, cost, count) if c is not None]
        df = read_table(path, columns=names, format=fmt, progress=progress)
    sample, described = _sample_from_frame(
        df, path, prefix=f"{path}: ", weight=weight, target_prob=target_prob, logging_prob=logging_prob,
        reward=reward, cost=cost, count=count, wmin=wmin, wmax=wmax, pmin=pmin, rmin=rmin,
        rmax=rmax, cmin=cmin, cmax=cmax)
    notes = _check_weights(sample, described["w"])
    return Log(sample=sample, path=path, format=fmt, n_rows=len(df), columns=described, notes=notes)


def _weights_note(check, weights: str) -> str:
    """``check.message`` naming where the weights came from (``weights``: a column, or
    ``"target / logging"``); ``""`` when there is nothing to say."""
    source = weights if "/" in weights else f"column {weights!r}"
    return check.message.replace("the importance weights", f"the importance weights ({source})", 1)


def _check_weights(sample, weights: str) -> tuple:
    """The note on a log's weights from :meth:`Sample.weight_check` (``()`` when there is none),
    also issued as a :class:`~elcvx.errors.WeightWarning`. Every reader of this module calls it
    once, on the sample it hands out: the one place where a log becomes a sample, and where the
    columns the weights came from (``weights``) are known."""
    try:
        check = sample.weight_check()
    except ElcvxError:  # the MLE failed: the estimate will say so; reading the log did not fail
        return ()
    note = _weights_note(check, weights)
    if not note:
        return ()
    # Point the warning at the user's line: the first frame outside this package.
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(0), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(note, WeightWarning, stacklevel=level)
    return (note,)


def _table_columns(path, fmt):
    if fmt == "parquet":
        pq = _require("pyarrow.parquet", "io", "reading Parquet logs")
        pa = _require("pyarrow", "io", "reading Parquet logs")
        try:
            if _is_gzip(path):
                with _Opened(path, progress=False) as f:
                    return pq.ParquetFile(pa.BufferReader(f.read())).schema_arrow.names
            return pq.read_schema(path).names
        except (pa.ArrowException, OSError, EOFError, gzip.BadGzipFile) as exc:
            raise InvalidInputError(f"cannot read {path} as Parquet: {exc}") from None
    return _csv_header(path, "\t" if fmt == "tsv" else ",")


# ------------------------------------------------------------------------------------------------
# Vowpal Wabbit dsjson
# ------------------------------------------------------------------------------------------------
def _number(rec, key, lineno, path, *, default=None):
    v = rec.get(key, default)
    if v is None:
        raise InvalidInputError(f"{path}: line {lineno} has no {key!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InvalidInputError(f"{path}: line {lineno}: {key} is {iv._short(v)}, not a number")
    v = float(v)
    if not math.isfinite(v):
        raise InvalidInputError(f"{path}: line {lineno}: {key} is {v!r}, not a finite number")
    return v


def _logging_prob(rec, lineno, path):
    """``_label_probability``, else the entry of ``p`` at the logged action's place in ``a``."""
    if "_label_probability" in rec:
        return _number(rec, "_label_probability", lineno, path)
    a, p, action = rec.get("a"), rec.get("p"), rec.get("_label_Action")
    if isinstance(a, list) and isinstance(p, list) and action in a and len(p) == len(a):
        v = p[a.index(action)]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    raise InvalidInputError(f"{path}: line {lineno} has no '_label_probability' (and no "
                            "'_label_Action' found in 'a' with its probability in 'p')")


def read_dsjson(path, *, target_prob, target_prob_column="target_prob", pdrop="ess", wmin=0.0,
                wmax=None, pmin=None, rmin=None, rmax=None, cmin=None, cmax=None,
                progress=None) -> Log:
    r"""Read a Vowpal Wabbit decision-service JSON (dsjson) log of contextual-bandit events.

    One JSON object per line (blank lines are ignored; gzip or not). From each event:

    * the cost ``_label_cost`` (the reward is ``-cost``, so the reward range is ``[-cmax,
      -cmin]``; the default reward range ``[0, 1]`` is the cost range ``[-1, 0]`` of logs where
      cost = -reward);
    * the logging probability of the logged action ``_label_Action`` (1-based):
      ``_label_probability``, or else its entry in ``p`` (``a`` is the ranked action list,
      ``p`` their probabilities);
    * ``"_skipLearn": true`` events are skipped (the :class:`Log` counts them in ``skipped`` and
      says so in ``notes``);
    * ``pdrop``, the probability that the logger dropped an event like this one, see below.

    Conditional-bandit and slates events (``_outcomes``) are not supported.

    Parameters
    ----------
    path : str or PathLike
    target_prob : callable, array_like, or str/PathLike
        The target policy's probability of each event's logged action:

        * a callable ``f(record) -> float``, called with each kept event's parsed JSON object;
        * an array (list, numpy array, pandas Series) with one value per event line of the file,
          ``_skipLearn`` events included, or one per kept event;
        * a file name (CSV, Parquet or JSON lines, read by :func:`read_table`) whose column
          ``target_prob_column`` holds the values: aligned by ``EventId`` when the file has an
          ``EventId`` column and every kept event has one, else by position as for an array.
    target_prob_column : str
        The column of that file; default ``"target_prob"``.
    pdrop : {"ess", "inverse", "ignore"}
        How events kept with probability ``1 - pdrop`` are counted. Each stands for ``v = 1/(1 -
        pdrop)`` logged events (VW divides its learning weight by ``1 - pdrop``). ``"inverse"``:
        counts ``v``, so ``N`` estimates the number of events before dropping — right for the
        point estimates, but the intervals then take the dropped events as observed and are
        too narrow by about ``sqrt(1 - pdrop)``. ``"ess"`` (default): counts proportional to
        ``v``, scaled to sum to Kish's effective sample size ``(sum v)^2 / sum v^2`` (the
        pseudo-empirical likelihood of Wu and Rao, 2006): the same estimates, and intervals
        whose ``N`` is no larger than the number of kept events; with a constant ``pdrop``
        every count is 1, exactly as if nothing had been dropped. ``"ignore"``: every count 1.
    wmin, wmax, pmin, rmin, rmax, cmin, cmax
        As for :func:`sample_from_dataframe`.
    progress : bool, optional
        As for :func:`read_table`.

    Returns
    -------
    Log

    Raises
    ------
    InvalidInputError
        A line that is not a JSON object, a missing or non-numeric key (naming the line), a
        ``pdrop`` outside ``[0, 1)``, target probabilities that do not align with the events,
        values out of range.
    """
    path = _check_path(path)
    iv.option("pdrop", pdrop, PDROP_MODES)
    rmin, rmax = _reward_range(rmin, rmax, cmin, cmax)
    call = target_prob if callable(target_prob) else None
    lines, costs, logging, drops, ids, positions, targets = [], [], [], [], [], [], []
    n_events = skipped = 0
    # Keys are not checked for duplicates: VW writes these logs, and the check costs ~10%.
    for lineno, rec in _json_lines(path, progress, "dsjson", keys=()):
        n_events += 1
        if rec.get("_skipLearn") is True:
            skipped += 1
            continue
        if "_outcomes" in rec:
            raise InvalidInputError(f"{path}: line {lineno} is a conditional-bandit or slates event "
                                    "('_outcomes'); only contextual-bandit events are supported")
        cost = _number(rec, "_label_cost", lineno, path)
        prob = _logging_prob(rec, lineno, path)
        d = _number(rec, "pdrop", lineno, path, default=0.0)
        if not 0.0 <= d < 1.0:
            raise InvalidInputError(f"{path}: line {lineno}: pdrop={d!r} must lie in [0, 1) "
                                    "(an event dropped with certainty cannot be in the log)")
        if call is not None:
            try:
                t = call(rec)
            except ElcvxError:
                raise
            except Exception as exc:  # noqa: BLE001 - the user's function: say where it failed
                raise InvalidInputError(
                    f"{path}: line {lineno}: target_prob(record) raised {type(exc).__name__}: {exc}"
                ) from exc
            targets.append(t)
        lines.append(lineno)
        costs.append(cost)
        logging.append(prob)
        drops.append(d)
        ids.append(rec.get("EventId"))
        positions.append(n_events - 1)
    if n_events == 0:
        raise InvalidInputError(f"{path} has no events")
    if not lines:
        raise InvalidInputError(f"{path}: every event ({iv.plural(n_events, 'event')}) has "
                                "\"_skipLearn\": true; none is left")
    where = lambda i: f"{path}: line {lines[i]}"  # noqa: E731
    if call is not None:
        target = _numeric("target_prob(record)", np.array(targets, dtype=object), where)
        target_desc = "target_prob(record)"
    else:
        target, target_desc = _dsjson_targets(path, target_prob, target_prob_column, n_events,
                                              positions, ids, where)
    reward = 0.0 - np.asarray(costs)
    counts, notes = _pdrop_counts(np.asarray(drops), pdrop)
    if skipped:
        notes.insert(0, f"skipped {skipped} of {iv.plural(n_events, 'event')} with "
                        "\"_skipLearn\": true")
    fields = {"w": "weight (target_prob / _label_probability)",
              "target_prob": f"target probability ({target_desc})",
              "logging_prob": "logging probability (_label_probability)",
              "r": "_label_cost", "counts": "count from pdrop"}
    sample = _build_sample(target=target, logging=np.asarray(logging), reward=reward,
                           counts=counts, wmin=wmin, wmax=wmax, pmin=pmin, rmin=rmin, rmax=rmax,
                           where=where, fields=fields, cost_range=(0.0 - rmax, 0.0 - rmin))
    columns = {"w": f"{target_desc} / _label_probability", "r": "-_label_cost"}
    if counts is not None:
        columns["counts"] = f"pdrop ({pdrop})"
    notes.extend(_check_weights(sample, columns["w"]))
    return Log(sample=sample, path=path, format="dsjson", n_rows=n_events, skipped=skipped,
               columns=columns, notes=tuple(notes))


def _pdrop_counts(drops: np.ndarray, mode: str):
    k = int((drops > 0).sum())
    if mode == "ignore" or k == 0:
        return None, [f"pdrop ignored ({iv.plural(k, 'event')} with pdrop > 0)"] if k else []
    v = 1.0 / (1.0 - drops)
    if mode == "inverse":
        return v, [f"pdrop: {iv.plural(k, 'event')} counted 1/(1 - pdrop) times "
                   f"(N = {v.sum():g} estimates "
                   f"the events before dropping; intervals treat dropped events as observed)"]
    if np.all(drops == drops[0]):
        return None, [f"pdrop = {drops[0]:g} on every event: counts 1 (a constant drop rate "
                      "thins the log uniformly)"]
    ess = v.sum() ** 2 / np.dot(v, v)
    return v * (v.sum() / np.dot(v, v)), [
        f"pdrop: {iv.plural(k, 'event')} weighted 1/(1 - pdrop), counts scaled to Kish's "
        f"effective sample size {ess:.1f} of {iv.plural(drops.size, 'event')}"]


def _dsjson_targets(path, source, column, n_events, positions, ids, where):
    n_kept = len(positions)
    if isinstance(source, (str, os.PathLike)):
        tpath = _check_path(source)
        df = read_table(tpath)
        if column not in df.columns:
            _missing_columns(tpath, [column], list(df.columns))
        tw = _locator(df.index)
        values = _column(df, column, lambda i: f"{tpath}: {tw(i)}")
        desc = f"{os.path.basename(tpath)}:{column}"
        if "EventId" in df.columns and all(i is not None for i in ids):
            keys = df["EventId"].astype(str).tolist()
            table = {}
            for j, key in enumerate(keys):
                if key in table:
                    raise InvalidInputError(f"{tpath}: {tw(j)}: EventId {key!r} appears twice")
                table[key] = values[j]
            out = np.empty(n_kept)
            for i, eid in enumerate(ids):
                try:
                    out[i] = table[str(eid)]
                except KeyError:
                    raise InvalidInputError(
                        f"{where(i)}: EventId {eid!r} is not in {tpath}") from None
            return out, desc
        what = f"{tpath} has {iv.plural(len(values), 'row')}"
        return _align(values, n_events, positions, what), desc
    if callable(source):  # pragma: no cover - handled by the caller
        raise AssertionError
    arr = np.asarray(source, dtype=object).reshape(-1) if np.ndim(source) <= 1 else None
    if arr is None:
        raise InvalidInputError(f"target_prob must be 1-dimensional, got shape {np.shape(source)}")
    values = _numeric("target_prob", arr, lambda i: f"target_prob[{i}]")
    what = f"target_prob has {iv.plural(len(values), 'value')}"
    return _align(values, n_events, positions, what), "target_prob"


def _align(values, n_events, positions, what):
    if len(values) == n_events:
        return values[np.asarray(positions, dtype=int)]
    if len(values) == len(positions):
        return values
    kept = f" ({len(positions)} after skipping \"_skipLearn\" ones)" if len(positions) != n_events else ""
    raise InvalidInputError(f"{what} but the log has {iv.plural(n_events, 'event')}{kept}: give "
                            "one target probability per event line (or per kept event), or align "
                            "them by an EventId column")
