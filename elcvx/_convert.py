"""Results as plain data, DataFrames and HTML: what a notebook does with a result.

Every result type of :mod:`elcvx.results` offers ``to_dict()`` (plain Python values: a report
that ``json.dumps`` writes), ``to_frame()`` (a pandas DataFrame, pandas imported only then) and
``_repr_html_()`` (the table Jupyter shows; no pandas needed). This module holds the one
implementation of the three, driven by each type's fields:

* a result whose :attr:`COLUMNS` names array fields is a table with one row per entry
  (``ProfileResult``: one row per value ``v``); its other fields describe the whole table;
* any other result is one row of its scalar fields (an interval field ``value_range`` gives two
  columns ``value_range_low``, ``value_range_high``); per-row arrays (``q``), nested results
  (an interval's ``lower`` and ``upper`` sides) and tuples stay in ``to_dict()`` only.
"""

from __future__ import annotations

import dataclasses
import html
import math
from numbers import Number

import numpy as np

from .errors import _require

#: Rows of a table shown by ``_repr_html_`` before "... N rows in all".
HTML_ROWS = 12


def plain(value):
    """``value`` as plain Python data: arrays as lists, numpy scalars as Python numbers, a named
    tuple (``ConfidenceInterval``) as a dict of its fields, a result as its ``to_dict()``."""
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # e.g. a WeightCheck
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def shown_fields(result):
    """The ``(name, value)`` of the fields a result reports: its dataclass fields but those kept
    out of its repr (per-row arrays such as ``q``, the work counters, private inputs); for a
    result that is not a dataclass (a confidence sequence, whose state changes as it is fed),
    those its ``_shown_fields()`` names."""
    if not dataclasses.is_dataclass(result):
        return result._shown_fields()
    return [(f.name, getattr(result, f.name)) for f in dataclasses.fields(result)
            if f.repr and not f.name.startswith("_")]


def to_dict(result) -> dict:
    """The fields a result reports, as plain Python data (:func:`plain`)."""
    return {name: plain(value) for name, value in shown_fields(result)}


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, bool, Number, np.generic))


def scalars(result) -> dict:
    """The one-row form: each scalar field, and each interval field as ``NAME_low``,
    ``NAME_high``; the table's columns excluded."""
    columns = getattr(result, "COLUMNS", ())
    out = {}
    for name, value in shown_fields(result):
        if name in columns:
            continue
        if isinstance(value, tuple) and hasattr(value, "_fields") and _scalar(value[0]):
            out.update({f"{name}_{k}": plain(v) for k, v in getattr(value, "_asdict")().items()})
        elif _scalar(value):
            out[name] = plain(value)
    return out


def table(result) -> tuple[list, list]:
    """``(column names, rows)`` of a result: its :attr:`COLUMNS` arrays side by side, or the one
    row of :func:`scalars`."""
    if hasattr(result, "_table"):  # a result whose rows are not arrays (an evaluation's methods)
        return result._table()
    columns = list(getattr(result, "COLUMNS", ()))
    if columns:
        arrays = [np.asarray(getattr(result, c)).tolist() for c in columns]
        return columns, [list(row) for row in zip(*arrays)]
    one = scalars(result)
    return list(one), [list(one.values())]


def to_frame(result):
    """A pandas DataFrame of :func:`table`; for a table result, the other fields in
    ``frame.attrs``. Imports pandas here (the ``io`` extra) and names the extra if it is absent."""
    pd = _require("pandas", "io", "to_frame()")
    columns, rows = table(result)
    frame = pd.DataFrame(rows, columns=columns)
    if getattr(result, "COLUMNS", ()):
        frame.attrs.update(scalars(result))
    return frame


def _cell(value) -> str:
    if isinstance(value, float) or isinstance(value, np.floating):
        value = float(value)
        return str(value) if not math.isfinite(value) else f"{value:.6g}"
    return html.escape("" if value is None else str(value))


def html_table(title: str, items: dict, columns=(), rows=(), notes=()) -> str:
    """The HTML a notebook shows: a title, the ``items`` as name/value pairs, then a table of
    ``rows`` (the first :data:`HTML_ROWS`, and how many there are) and the notes."""
    parts = [f"<div><strong>{html.escape(title)}</strong>"]
    if items:
        parts.append("<table><tbody>" + "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{_cell(v)}</td></tr>"
            for k, v in items.items()) + "</tbody></table>")
    if columns:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                       for row in list(rows)[:HTML_ROWS])
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        if len(rows) > HTML_ROWS:
            parts.append(f"<p>... {len(rows)} rows in all (<code>to_frame()</code> has them)</p>")
    if notes:
        parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts) + "</div>"


def repr_html(result) -> str:
    """A result's HTML: its scalars as name/value pairs, and its table if it is one."""
    title = type(result).__name__
    notes = [n for n in getattr(result, "notes", ()) if isinstance(n, str)]
    if getattr(result, "COLUMNS", ()):
        columns, rows = table(result)
        return html_table(title, scalars(result), columns, rows, notes)
    return html_table(title, scalars(result), notes=notes)
