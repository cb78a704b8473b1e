"""Which format a log file is in: from its name and, where that is ambiguous, its first bytes."""

from __future__ import annotations

import json
import os

from .. import _validation as iv
from ..errors import InvalidInputError
from .files import _check_path, _first_line, _head, _NotUtf8


#: Input formats, as ``format=`` and ``elcvx evaluate --input-format`` take them.
FORMATS = ("csv", "tsv", "parquet", "jsonl", "dsjson")

_PARQUET_MAGIC = b"PAR1"

_DSJSON_KEYS = ("_label_cost", "_label_probability", "_label_Action", "_labelIndex", "_skipLearn")

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


def detect_format(path: str | os.PathLike) -> str:
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
