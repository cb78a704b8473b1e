"""What every table reader shares: pandas (an optional dependency) and the checks of a table's
column names (each wanted column present, none named twice).
"""

from __future__ import annotations

from ..errors import InvalidInputError, _require


def _pandas():
    return _require("pandas", "io", "reading CSV, Parquet and JSON-lines logs")


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
