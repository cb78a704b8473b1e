"""What every table reader shares: pandas (an optional dependency) and the checks of a table's
column names (each wanted column present, none named twice).
"""

from __future__ import annotations

from ..errors import InvalidInputError, _require


def _pandas():
    return _require("pandas", "io", "reading CSV, Parquet and JSON-lines logs")


#: Delimiters that a CSV exported by a spreadsheet or a database may use instead of a comma.
_OTHER_DELIMITERS = {";": "semicolons (';')", "|": "pipes ('|')", "\t": "tabs"}


def _shown(present) -> str:
    """The columns a table has, for an error message; with a hint when its one column's name
    shows that the file is separated by another character than the reader's (a semicolon-
    separated CSV read as comma-separated has one column named ``'w;r'``)."""
    present = list(present)
    text = ", ".join(map(repr, present[:20])) + (", ..." if len(present) > 20 else "")
    return (text or "none") + _delimiter_hint(present)


def _delimiter_hint(present) -> str:
    if len(present) != 1:
        return ""
    for sep, name in _OTHER_DELIMITERS.items():
        if sep in str(present[0]):
            fix = ("name it .tsv, or give --input-format tsv (format='tsv')" if sep == "\t" else
                   f"give sep={sep!r} (on the command line, --sep '{sep}'), and if its numbers "
                   "are written with decimal commas (0,25) also decimal=',' (--decimal ',')")
            return (f"; the header looks separated by {name}, but a CSV log is read as "
                    f"comma-separated: {fix}")
    return ""


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


def numbers(df, wanted, file) -> dict:
    """Each of the columns ``wanted`` of ``df`` (read from ``file``) as a float64 array; a text
    or missing value is an error naming the file, the line (or row) and the column."""
    import numpy as np

    pd = _pandas()
    out = {}
    for c in wanted:
        values = pd.to_numeric(df[c], errors="coerce")
        bad = values.isna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(f"{file}: {df.index.name or 'row'} {df.index[i]}: column {c!r} "
                                    f"is {df[c].iloc[i]!r}, not a number", field=c)
        out[c] = values.to_numpy(dtype=float)
    return out
