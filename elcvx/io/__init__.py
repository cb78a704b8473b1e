r"""Reading bandit logs: CSV, Parquet, JSON lines and Vowpal Wabbit's dsjson.

A log is a table with one row per logged decision. The user names its columns: either the
importance weight ``w`` or the target and logging probabilities of the logged action (``w =
target_prob / logging_prob``), the reward (or a cost, read as ``reward = -cost``) and optional
counts; and the bounds on the weights and rewards. Those are one :class:`LogSpec`, which every
reader takes (``spec=``), or its fields as keywords. Every reader ends in a
:class:`~elcvx.Sample`, so the values are validated once, there; an error about a value names
its line (CSV, JSON lines, dsjson) or row (Parquet, DataFrame).

=====================================  =========================================================
function                               reads
=====================================  =========================================================
:class:`LogSpec`                       (the columns and bounds every reader below takes)
:func:`read_log`                       a CSV/TSV, Parquet or JSON-lines log → :class:`Log`
:func:`read_log_compressed`            a log bigger than memory (files, a folder, a glob), chunk
                                       by chunk, exactly compressed → :class:`Log`
:func:`scan_log`                       the same, kept in chunks when it does not compress →
                                       :class:`LogScan`, which the estimators take
:func:`scan_engine`                    rows your own engine holds (Spark, ...) → :class:`LogScan`
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

One module each: ``spec`` (:class:`LogSpec`), ``files``
(opening: gzip, UTF-8; the bar of :mod:`elcvx.engines.progress`), ``formats`` (which format), ``columns``, ``tables`` and ``json_tables`` (a file to a DataFrame),
``frames`` (a DataFrame to a :class:`~elcvx.Sample`), ``logs`` (:func:`read_log`), ``dsjson``
(:func:`read_dsjson`), ``sources`` (the files of a folder or glob, in chunks) and ``stream``
(:func:`read_log_compressed`), ``scan`` (:func:`scan_log`); the public names are imported here.
"""

from __future__ import annotations

# In the order of the API page (docs/api/io.md), which follows these imports.
from ..errors import MissingDependencyError
from .spec import LogSpec
from .logs import Log, read_log
from .stream import MAX_PAIRS, read_log_compressed
from .logscan import LogScan
from .scan import SCAN_MAX_PAIRS, scan_engine, scan_log
from ..engines.rows import Columns, columns_of
from .dsjson import PDROP_MODES, read_dsjson
from .tables import read_table
from .frames import sample_from_dataframe
from .formats import FORMATS, detect_format

__all__ = [
    "Columns",
    "LogSpec",
    "Log",
    "LogScan",
    "MissingDependencyError",
    "read_log",
    "read_log_compressed",
    "scan_engine",
    "scan_log",
    "columns_of",
    "MAX_PAIRS",
    "read_dsjson",
    "read_table",
    "sample_from_dataframe",
    "detect_format",
    "FORMATS",
    "PDROP_MODES",
    "SCAN_MAX_PAIRS",
]
