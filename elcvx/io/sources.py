"""A log that is many files, read in chunks: which files a path, folder or glob names
(:func:`_log_files`), and their rows as Arrow record batches of at most a given size
(:func:`_batches`), each with the file it came from and the number of its first row there, so
that an error about a value can name the file and the row (or line) as :func:`read_log` does.

Parquet files are read through ``pyarrow.dataset`` (a dataset folder's ``key=value`` partition
folders become columns); CSV/TSV files through pyarrow's streaming CSV reader, opened as
:func:`read_table` opens them (gzip from the first bytes, UTF-8 checked).
"""

from __future__ import annotations

import glob
import gzip
import os

from ..errors import InvalidInputError, _require
from .columns import _missing_columns, _no_duplicates
from .files import _Opened
from .formats import _format
from .tables import _arrow, _csv_header, _csv_name, _malformed_row

#: The formats a log read in chunks may be in (JSON is read whole: :func:`read_log`).
CHUNKED_FORMATS = ("parquet", "csv", "tsv")
_GLOB = set("*?[")


def _hidden(name: str) -> bool:
    # As pyarrow.dataset: `_SUCCESS`, `_metadata`, `.crc` files are a writer's, not data.
    return name.startswith((".", "_"))


def _log_files(path, format=None):
    """The files of the log ``path`` (a file, a folder searched recursively, or a glob, ``**``
    included), in sorted order, each with its format; and the folder whose ``key=value``
    subfolders are partition columns (``None`` unless ``path`` is a folder)."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise InvalidInputError(f"path must be a file, folder or glob, got {type(path).__name__}") from None
    root = None
    if os.path.isfile(path):
        files = [path]
    elif os.path.isdir(path):
        root = path
        files = sorted(os.path.join(d, f) for d, dirs, names in os.walk(path)
                       for f in names if not _hidden(f)
                       if not any(_hidden(p) for p in os.path.relpath(d, path).split(os.sep) if p != "."))
        if not files:
            raise InvalidInputError(f"cannot read {path}: the folder holds no files")
    elif _GLOB & set(path):
        files = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
        if not files:
            raise InvalidInputError(f"cannot read {path}: no such file, and no file matches it as a glob")
    else:
        raise InvalidInputError(f"cannot read {path}: no such file or folder")
    out = []
    for f in files:
        fmt = _format(f, format)
        if fmt not in CHUNKED_FORMATS:
            raise InvalidInputError(
                f"{f} is {fmt}: logs read in chunks are Parquet or CSV/TSV files (read a JSON "
                "log whole: read_log, or on the command line --engine memory)")
        out.append((f, fmt))
    return out, root


def _columns_of(files, root, spec):
    """The column names of the log's first file (with its partition columns; a CSV/TSV file's
    header read with the separator of ``spec``, a :class:`~elcvx.io.LogSpec`)."""
    path, fmt = files[0]
    if fmt == "parquet":
        return list(_parquet_dataset([path], root).schema.names)
    return _csv_header(path, spec.delimiter(fmt, path))


def _parquet_dataset(paths, root):
    ds = _require("pyarrow.dataset", "io", "reading Parquet logs in chunks")
    pa = _require("pyarrow", "io", "reading Parquet logs in chunks")
    try:
        return ds.dataset(paths, format="parquet", partitioning="hive" if root else None,
                          partition_base_dir=root)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidInputError(f"cannot read {paths[0] if len(paths) == 1 else root} as "
                                f"Parquet: {exc}") from None


def _batches(files, root, columns, chunk_size, spec):
    """``(path, format, first, batch)`` for every non-empty chunk of at most ``chunk_size`` rows of ``columns``, in
    file order: ``first`` numbers the chunk's first row as :func:`read_table` would (Parquet rows
    from 1, CSV lines from 2, the header being line 1). CSV/TSV files are read in the dialect
    (``sep``, ``decimal``) of ``spec``, a :class:`~elcvx.io.LogSpec`."""
    parquet = [p for p, fmt in files if fmt == "parquet"]
    fragments = {}
    if parquet:
        dataset = _parquet_dataset(parquet, root)
        fragments = dict(zip(parquet, dataset.get_fragments()))
    for path, fmt in files:
        if fmt == "parquet":
            batches, first = _parquet_batches(path, dataset, fragments[path], columns, root), 1
        else:
            batches, first = _csv_batches(path, spec.delimiter(fmt, path), spec, columns), 2
        for batch in batches:
            # Re-cut to chunk_size: Parquet row groups and CSV blocks come in their own sizes.
            for start in range(0, batch.num_rows, chunk_size):
                piece = batch.slice(start, chunk_size)
                yield path, fmt, first, piece
                first += piece.num_rows


def _parquet_batches(path, dataset, fragment, columns, root):
    pa = _arrow("parquet", "reading Parquet logs")[0]
    try:
        own = fragment.physical_schema
        _no_duplicates(path, own.names, columns)
        # The file's own types (a text column is then located by the caller, not cast here),
        # with the partition columns its folders name.
        keys = [] if root is None else [
            part.split("=", 1)[0] for part in os.path.relpath(os.path.dirname(path), root).split(os.sep)
            if "=" in part and part.split("=", 1)[0] not in own.names]
        schema = pa.schema(list(own) + [dataset.schema.field(k) for k in keys])
        _missing_columns(path, columns, schema.names)
        yield from fragment.to_batches(schema=schema, columns=columns, batch_size=1 << 18)
    except (pa.ArrowException, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path} as Parquet: {exc}") from None


def _csv_batches(path, sep, spec, columns):
    """A CSV file's batches, as float64 columns (numbers with the decimal mark of ``spec``, a
    :class:`~elcvx.io.LogSpec`); from
    the first value that is not a number as Arrow reads numbers, as text (converted, or located, by the caller). A blank line at the end
    is dropped, as by :func:`read_table`; one inside is a row of nulls (an error, later)."""
    pa = _arrow("csv", "reading CSV logs")[0]
    header = _csv_header(path, sep)
    _no_duplicates(path, header, columns)
    _missing_columns(path, columns, header)
    done, text = 0, False
    while True:
        types = pa.string() if text else pa.float64()
        try:
            for batch in _csv_stream(path, sep, spec, columns, {c: types for c in columns},
                                     done):
                done += batch.num_rows
                yield batch
            return
        except pa.ArrowInvalid as exc:
            if "conversion error" in str(exc) and not text:
                text = True  # read the rest again as text, after the rows already handed out
                continue
            raise InvalidInputError(f"cannot read {path} as {_csv_name(sep)}: {exc}") from None
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise InvalidInputError(f"cannot read {path} as {_csv_name(sep)}: {exc}") from None


def _csv_stream(path, sep, spec, columns, types, skip):
    """The batches of a CSV file after its first ``skip`` rows, rows of nulls at the end held
    back until a row with a value follows them."""
    pa, pc = _arrow("csv", "reading CSV logs")
    bad = []

    def on_bad_row(row):
        bad.append(row)
        return "error"

    # One thread: the streaming reader knows line numbers only then.
    read = pc.ReadOptions(use_threads=False, block_size=1 << 22, skip_rows_after_names=skip)
    parse = pc.ParseOptions(delimiter=sep, ignore_empty_lines=False, invalid_row_handler=on_bad_row)
    convert = pc.ConvertOptions(include_columns=columns, column_types=types, decimal_point=spec.decimal,
                                strings_can_be_null=True, quoted_strings_can_be_null=False)
    held = []
    with _Opened(path, progress=False, text=_csv_name(sep)) as f:
        try:
            reader = pc.open_csv(f, read_options=read, parse_options=parse, convert_options=convert)
            for batch in reader:
                n = batch.num_rows
                empty = _trailing_empty(batch)
                if empty < n:
                    yield from held
                    held = []
                    yield batch.slice(0, n - empty)
                if empty:
                    held.append(batch.slice(n - empty))
        except pa.ArrowInvalid:
            if bad and bad[0].number is not None:
                raise _malformed_row(path, bad[0]) from None
            raise


def _trailing_empty(batch) -> int:
    """How many rows at the end of ``batch`` have no value in any column."""
    import numpy as np

    if batch.num_rows == 0:
        return 0
    empty = np.ones(batch.num_rows, dtype=bool)
    for col in batch.columns:
        empty &= col.is_null().to_numpy(zero_copy_only=False)
    return batch.num_rows if empty.all() else int(np.argmin(empty[::-1]))


def _total_bytes(files) -> int:
    return sum(os.path.getsize(p) for p, _ in files)
