"""Reading a CSV/TSV, Parquet or JSON-lines log into a :class:`Log`: :func:`read_log`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from ..checks import check_weights
from ..errors import InvalidInputError
from ..sample import Sample
from .columns import _missing_columns
from .files import _check_path, _first_line
from .formats import _format
from .frames import _logging_probs, _sample_from_frame
from .json_tables import _json_document, _read_jsonl
from .spec import LogSpec
from .tables import _table_columns, read_table


@dataclass(frozen=True, eq=False)
class Log:
    """A log read from a file: the :class:`~elcvx.Sample` and where it came from.

    Attributes
    ----------
    sample : Sample
        The weights, rewards (``-cost`` for costs), counts and bounds (on the command line, a
        :class:`~elcvx.io.LogScan` for a log ``--engine stream`` keeps in chunks).
    path : str
        The file read (the folder or glob, for :func:`read_log_compressed`).
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
    logging_probs : ndarray or None
        The logging policy's probability of each row's logged action, one per row of
        ``sample``, when the log holds them (a logging-probability column, dsjson's
        ``_label_probability``); else None. A :class:`~elcvx.Sample` keeps only the weights, and
        IX's bound needs these (``elcvx.baselines.lower_bound(log.sample, method="ix",
        logging_probs=log.logging_probs)``).
    """

    sample: Sample
    path: str
    format: str
    n_rows: int
    skipped: int = 0
    columns: dict = field(default_factory=dict)
    notes: tuple = ()
    logging_probs: np.ndarray | None = field(default=None, repr=False)


def read_log(path: str | os.PathLike, *, spec: LogSpec | None = None, format: str | None = None,
             weight: str | None = None, target_prob: str | None = None,
             logging_prob: str | None = None, reward: str | None = None,
             cost: str | None = None, count: str | None = None, wmin: float | None = None,
             wmax: float | None = None, pmin: float | None = None, rmin: float | None = None,
             rmax: float | None = None, cmin: float | None = None, cmax: float | None = None,
             sep: str | None = None, decimal: str | None = None,
             progress: bool | None = None) -> Log:
    """Read a CSV/TSV, Parquet or JSON-lines log (gzip or not) into a :class:`Log`.

    Only the named columns are read. The columns, bounds and CSV dialect are a :class:`LogSpec`
    (``spec``), or its fields as keywords (``weight``, ..., ``cmax``, ``sep``, ``decimal``: each
    one given sets that field of ``spec``; an error if ``spec`` sets it too); ``format`` and
    ``progress`` are those of :func:`read_table`. A CSV written by a spreadsheet in a language
    with decimal commas (``w;r`` then ``0,25;1``) needs ``sep=";", decimal=","`` (on the command
    line, ``--sep ';' --decimal ','``). Vowpal Wabbit dsjson logs are read by
    :func:`read_dsjson`.

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
    (300, 16.0, {'w': 'target_prob / logging_prob', 'r': 'reward'})
    """
    spec = LogSpec.from_keywords(
        spec, weight=weight, target_prob=target_prob, logging_prob=logging_prob, reward=reward,
        cost=cost, count=count, wmin=wmin, wmax=wmax, pmin=pmin, rmin=rmin, rmax=rmax, cmin=cmin,
        cmax=cmax, sep=sep, decimal=decimal)
    path = _check_path(path)
    fmt = _format(path, format)
    spec.require_csv([fmt], path)
    if fmt == "dsjson":
        raise InvalidInputError(
            f"{path} is a Vowpal Wabbit dsjson log: its columns are fixed, and the target "
            "policy's probabilities come separately (read_dsjson(path, target_prob=...); on the "
            "command line, --target-prob-file)")
    doc = None
    if fmt in ("parquet", "csv", "tsv"):
        present = _table_columns(path, fmt, spec)
    elif (doc := _json_document(path, progress)) is not None:
        # One JSON document (a records array, an object of columns): its columns are known.
        present = list(doc.columns)
    elif (spec.weight is None and spec.target_prob is None
          or spec.reward is None and spec.cost is None):
        # JSON lines have no header: default names are resolved on the first record.
        try:
            first = json.loads(_first_line(path, "JSON lines") or "{}")
        except ValueError:
            _read_jsonl(path, [], False)  # raises, naming the malformed line
            raise
        present = list(first) if isinstance(first, dict) else []
    else:
        present = None  # every name is given
    if present is not None:
        spec = spec.resolve_columns(present)
    names = spec.column_names
    if doc is None:
        df = read_table(path, columns=names, format=fmt, progress=progress, spec=spec)
    else:
        _missing_columns(path, names, present)
        if len(doc) == 0:
            raise InvalidInputError(f"{path} has no data rows")
        df = doc[names]
    sample, described = _sample_from_frame(df, path, spec, prefix=f"{path}: ")
    notes = check_weights(sample, described["w"])
    return Log(sample=sample, path=path, format=fmt, n_rows=len(df), columns=described, notes=notes,
               logging_probs=_logging_probs(df, spec))
