"""Reading JSON tables: JSON lines (one object per line, each error naming its line), or one
document in any of pandas' ``to_json`` orients.
"""

from __future__ import annotations

import functools
import gzip
import json

from .. import _validation as iv
from ..errors import InvalidInputError
from .columns import _missing_columns, _no_duplicates, _pandas
from .files import _Opened


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
    top: list[tuple[str, object]] = []

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
        where = (f" at line {exc.lineno} column {exc.colno}"
                 if isinstance(exc, json.JSONDecodeError) else "")
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
