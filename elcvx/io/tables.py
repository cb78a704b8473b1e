"""Reading a table (CSV/TSV, Parquet or JSON lines, gzip or not) into a pandas DataFrame whose
index locates each row in the file: :func:`read_table`.
"""

from __future__ import annotations

import gzip
import os
from typing import TYPE_CHECKING

import numpy as np

from .. import _validation as iv
from ..errors import InvalidInputError, _require
from .columns import _missing_columns, _no_duplicates, _pandas
from .files import _check_path, _is_gzip, _Opened
from .formats import _format
from .json_tables import _read_jsonl
from ..engines.progress import Progress, progress_enabled
from .spec import LogSpec

if TYPE_CHECKING:  # (annotations only: pandas is imported when a table is read)
    import pandas


def read_table(path: str | os.PathLike, *, columns: list[str] | None = None,
               format: str | None = None, progress: bool | None = None,
               spec: LogSpec | None = None, sep: str | None = None,
               decimal: str | None = None) -> pandas.DataFrame:
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
    spec : LogSpec, optional
        Only its CSV dialect is used (the columns read are ``columns``).
    sep, decimal : str, optional
        A CSV/TSV file's field separator (default ``","``, a tab for TSV) and decimal mark
        (default ``"."``), one character each, as keywords or in ``spec``: ``sep=";",
        decimal=","`` reads ``0,25;1`` as the numbers 0.25 and 1 (:class:`LogSpec` states the
        rules). Other formats refuse them.

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
    dialect = LogSpec.from_keywords(spec, sep=sep, decimal=decimal).require_csv([fmt], path)
    if fmt in ("csv", "tsv"):
        df = _read_csv(path, columns, dialect.delimiter(fmt, path), dialect, progress)
    elif fmt == "parquet":
        df = _read_parquet(path, columns, progress)
    else:
        df = _read_jsonl(path, columns, progress)
    if len(df) == 0:
        raise InvalidInputError(f"{path} has no data rows")
    return df


def _arrow(part: str, what: str):
    """pyarrow and its submodule ``part`` (``"csv"``, ``"parquet"``), which ``what`` needs."""
    return _require("pyarrow", "io", what), _require(f"pyarrow.{part}", "io", what)


def _csv_name(sep) -> str:
    return "TSV" if sep == "\t" else "CSV"


def _csv_header(path, sep):
    pa, pc = _arrow("csv", "reading CSV logs")
    what = _csv_name(sep)
    try:
        with _Opened(path, progress=False, text=what) as f:
            parse = pc.ParseOptions(delimiter=sep, invalid_row_handler=lambda row: "skip")
            # On the calling thread, and closed before the file: a streaming reader left to
            # read ahead on pyarrow's threads while the file closes and the process exits (a
            # missing column's error) aborted the process now and then ("terminate called
            # without an active exception", exit status -6).
            read = pc.ReadOptions(use_threads=False)
            with pc.open_csv(f, read_options=read, parse_options=parse) as reader:
                return reader.schema.names
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            raise InvalidInputError(f"{path} is empty: a {what} log needs a header line and data rows") from None
        raise InvalidInputError(f"cannot read {path} as {what}: {exc}") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path} as {what}: {exc}") from None


def _csv_table(path, sep, spec, columns, types, progress, threads):
    """Stream a CSV file into an Arrow table, numbers read with the decimal mark of ``spec`` (a
    :class:`~elcvx.io.LogSpec`); a row with the wrong number of fields is an error naming its
    line (pyarrow knows line numbers when it parses on one thread)."""
    pa, pc = _arrow("csv", "reading CSV logs")
    bad = []

    def on_bad_row(row):
        bad.append(row)
        return "error"

    read = pc.ReadOptions(use_threads=threads, block_size=1 << 22)
    parse = pc.ParseOptions(delimiter=sep, ignore_empty_lines=False, invalid_row_handler=on_bad_row)
    convert = pc.ConvertOptions(include_columns=columns, column_types=types, decimal_point=spec.decimal,
                                strings_can_be_null=True, quoted_strings_can_be_null=False)
    try:
        with _Opened(path, progress=progress, text=_csv_name(sep)) as f:
            return pc.open_csv(f, read_options=read, parse_options=parse,
                               convert_options=convert).read_all()
    except pa.ArrowInvalid:
        if bad:
            row = bad[0]
            if row.number is None and threads:
                return _csv_table(path, sep, spec, columns, types, False, False)
            raise _malformed_row(path, row) from None
        raise


def _malformed_row(path, row) -> InvalidInputError:
    """The error for a CSV row (pyarrow's ``InvalidRow``) with the wrong number of fields."""
    where = f"line {row.number}" if row.number is not None else f"the line {row.text!r}"
    return InvalidInputError(f"{path}: {where} is malformed: {iv.plural(row.actual_columns, 'field')} "
                             f"where the header has {row.expected_columns}")


def _read_csv(path, columns, sep, spec, progress):
    pd = _pandas()
    pa, pc = _arrow("csv", "reading CSV logs")
    header = _csv_header(path, sep)
    _no_duplicates(path, header, columns)
    if columns is None:
        columns = header
    _missing_columns(path, columns, header)
    try:
        try:
            # Fast path: the columns as float64.
            table = _csv_table(path, sep, spec, columns, {c: pa.float64() for c in columns},
                               progress, True)
        except pa.ArrowInvalid as exc:
            if "conversion error" not in str(exc):
                raise
            # Some value is not a number as Arrow reads them: read text, convert (or locate) later.
            table = _csv_table(path, sep, spec, columns, {c: pa.string() for c in columns},
                               progress, True)
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


def _parquet_file(path, progress):
    """pyarrow and the ``ParquetFile`` at ``path`` (read into memory first when it is gzipped)."""
    pa, pq = _arrow("parquet", "reading Parquet logs")
    try:
        if _is_gzip(path):
            with _Opened(path, progress=progress) as f:
                return pa, pq.ParquetFile(pa.BufferReader(f.read()))
        return pa, pq.ParquetFile(path)
    except (pa.ArrowException, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path} as Parquet: {exc}") from None


def _read_parquet(path, columns, progress):
    pd = _pandas()
    pa, pf = _parquet_file(path, progress)
    try:
        names = pf.schema_arrow.names
        _no_duplicates(path, names, columns)
        if columns is not None:
            _missing_columns(path, columns, names)
        bar = Progress(f"elcvx: reading {os.path.basename(path)}", max(pf.metadata.num_rows, 1),
                       progress_enabled(progress, os.path.getsize(path)), unit="rows")
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


def _table_columns(path, fmt, spec):
    """The column names of a Parquet or CSV/TSV file (read with ``spec``'s separator)."""
    if fmt == "parquet":
        return _parquet_file(path, False)[1].schema_arrow.names
    return _csv_header(path, spec.delimiter(fmt, path))
