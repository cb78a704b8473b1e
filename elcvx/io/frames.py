"""From a DataFrame's columns to a :class:`~elcvx.Sample`: :func:`sample_from_dataframe` (which is
:meth:`Sample.from_dataframe <elcvx.Sample.from_dataframe>`), and the
one place where a log becomes a sample (:func:`_sample_from_frame`, :func:`_build_sample`),
where an error about a value is said of the line (or row) it came from and where the weights
are checked (:func:`elcvx.checks.check_weights`).
"""

from __future__ import annotations

import re
import numpy as np

from .. import _validation as iv
from ..checks import check_weights
from ..errors import InvalidInputError
from ..sample import Sample
from .columns import _missing_columns, _no_duplicates, _pandas
from .spec import LogSpec


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


#: A number written with a decimal comma (``0,25``, ``-1,5e-3``): read as text when ``decimal``
#: is ``"."``, and the error says how to read it.
_DECIMAL_COMMA = re.compile(r"\s*[+-]?\d*,\d+([eE][+-]?\d+)?\s*")


def _with_point(value, decimal):
    """A text value written with the decimal mark ``decimal``, written with ``.`` (None, which
    is not a number, when it holds a ``.`` itself); any other value as it is."""
    if not isinstance(value, str):
        return value
    return None if "." in value else value.replace(decimal, ".")


def _column(df, col: str, where, decimal: str = ".") -> np.ndarray:
    """A column of ``df`` as floats; text values read as numbers written with the decimal mark
    ``decimal``. An error names the first value that is not a number, and, for a number written
    with a decimal comma while ``decimal`` is ``"."``, the option that reads it."""
    s = df[col]
    if s.dtype.kind in "biuf":
        return _numeric(f"column {col!r}", s.to_numpy(dtype=float, na_value=np.nan), where)
    pd = _pandas()
    text = s if decimal == "." else s.map(lambda v: _with_point(v, decimal))
    num = pd.to_numeric(text, errors="coerce")
    bad = (num.isna() & s.notna()).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = s.iloc[i]
        hint = ""
        if decimal == "." and isinstance(value, str) and _DECIMAL_COMMA.fullmatch(value):
            hint = ("; its numbers are written with a decimal comma: give decimal=',' (on the "
                    "command line, --decimal ',')")
        raise InvalidInputError(f"{where(i)}: column {col!r} is {iv._short(value)}, not a number"
                                f"{hint}", field=col, value=value)
    return _numeric(f"column {col!r}", num.to_numpy(dtype=float, na_value=np.nan), where)


def _relocate(exc: InvalidInputError, where, fields: dict, cost_range=None, reward=None):
    """Sample's error about entry ``i`` of an array (``exc.field``, ``exc.index``), said of the
    line or row it came from: ``line L: <fields[field]> = value <reason>``.

    With ``cost_range`` the rewards are ``-cost`` and a reward out of range is reported as the
    cost it came from; when the range is the default ``[-1, 0]`` and every cost (``-reward``)
    lies in ``[0, 1]``, the message suggests that cost range.
    """
    if exc.index is None or exc.field not in fields:
        return exc
    described = f"{where(exc.index)}: {fields[exc.field]}"
    if exc.field == "r" and cost_range is not None:
        cmin, cmax = cost_range
        reward = np.asarray(reward)
        outside = int(np.count_nonzero(~((reward >= 0.0 - cmax) & (reward <= 0.0 - cmin))))
        hint = ""
        if (cmin, cmax) == (-1.0, 0.0) and np.all((reward <= 0) & (reward >= -1)):
            hint = ("; every cost lies in [0, 1]: give that cost range, cmin=0, cmax=1 (on the "
                    "command line, --cmin 0 --cmax 1)")
        return InvalidInputError(
            f"{described} = {-float(exc.value)!r} is outside the cost range [{cmin!r}, {cmax!r}] "
            f"({iv.plural(outside, 'such value')}) (reward = -cost){hint}",
            field=exc.field, index=exc.index, value=exc.value, reason=exc.reason)
    reason = exc.reason
    if exc.field == "r" and reason is not None and reason.startswith("is outside"):
        # Rewards on another scale than [0, 1] (a rating, a revenue): say how to give it.
        reason += ("; give the range rewards can take: rmin and rmax (on the command line, "
                   "--rmin R --rmax R)")
    return InvalidInputError(f"{described} = {exc.value!r} {reason}", field=exc.field,
                             index=exc.index, value=exc.value, reason=reason)


def _build_sample(*, w=None, target=None, logging=None, reward, counts, spec, where, fields,
                  cost_range=None) -> Sample:
    """The sample of a log's columns: weights ``w``, or ``target / logging`` probabilities, with
    the bounds of ``spec`` (a :class:`~elcvx.io.LogSpec`); an error about an entry names its
    line (:func:`_relocate`)."""
    rmin, rmax = spec.reward_range
    try:
        if w is None:
            # (check=False: the reader checks the sample it hands out, naming the columns.)
            return Sample.from_probs(target, logging, reward, pmin=spec.pmin, wmax=spec.wmax,
                                     wmin=spec.wmin, counts=counts, rmin=rmin, rmax=rmax,
                                     check=False)
        wmin, wmax = spec.weight_range
        return Sample(w, reward, counts=counts, wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
    except InvalidInputError as exc:
        raise _relocate(exc, where, fields, cost_range, reward) from None


def dataframe_sample(df, *, spec, **fields) -> Sample:
    """:meth:`Sample.from_dataframe <elcvx.Sample.from_dataframe>`'s work (it documents the
    arguments): ``fields``, the :class:`~elcvx.io.LogSpec` fields given as keywords."""
    spec = LogSpec.from_keywords(spec, **fields)
    if spec.sep is not None:
        raise InvalidInputError(f"sep={spec.sep!r} does not apply to a DataFrame: it is a CSV "
                                "file's field separator", field="sep", value=spec.sep)
    pd = _pandas()
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    sample, described = _sample_from_frame(df, "the DataFrame", spec)
    check_weights(sample, described["w"])
    return sample



#: The same function as :meth:`Sample.from_dataframe <elcvx.Sample.from_dataframe>`, by the
#: readers' name.
sample_from_dataframe = Sample.from_dataframe


def _sample_from_frame(df, source, spec, *, prefix=""):
    """``(sample, described)``: the sample of a log's rows ``df`` (a DataFrame) read as ``spec``
    (a :class:`~elcvx.io.LogSpec`; columns it leaves ``None`` found by their default names), and
    how each quantity was read (:attr:`~elcvx.io.Log.columns`). An error names ``source`` (the
    file or frame) and, after ``prefix``, the row."""
    present = list(df.columns)
    spec = spec.resolve_columns(present)
    weight, target_prob, logging_prob = spec.weight, spec.target_prob, spec.logging_prob
    reward, cost, count = spec.reward, spec.cost, spec.count
    used = spec.column_names
    _no_duplicates(source, present, used)
    _missing_columns(source, used, present)
    if len(df) == 0:
        raise InvalidInputError(f"{source} has no rows: at least one example is needed")
    rmin, rmax = spec.reward_range
    located = _locator(df.index)
    where = (lambda i: f"{prefix}{located(i)}") if prefix else located
    decimal = spec.decimal
    if weight is not None:
        w = _column(df, weight, where, decimal)
    else:
        t = _column(df, target_prob, where, decimal)
        h = _column(df, logging_prob, where, decimal)
    r = _column(df, reward if reward is not None else cost, where, decimal)
    if cost is not None:
        r = 0.0 - r
    counts = _column(df, count, where, decimal) if count is not None else None
    fields = {"r": f"reward (column {reward!r})" if reward is not None
              else f"cost (column {cost!r})",
              "counts": f"count (column {count!r})"}
    cost_range = (0.0 - rmax, 0.0 - rmin) if cost is not None else None
    if weight is not None:
        fields["w"] = f"weight (column {weight!r})"
        sample = _build_sample(w=w, reward=r, counts=counts, spec=spec, where=where,
                               fields=fields, cost_range=cost_range)
        described = {"w": weight}
    else:
        fields.update({"w": f"weight ({target_prob} / {logging_prob})",
                       "target_prob": f"target probability (column {target_prob!r})",
                       "logging_prob": f"logging probability (column {logging_prob!r})"})
        sample = _build_sample(target=t, logging=h, reward=r, counts=counts, spec=spec,
                               where=where, fields=fields, cost_range=cost_range)
        described = {"w": f"{target_prob} / {logging_prob}"}
    described["r"] = reward if reward is not None else f"-{cost}"
    if count is not None:
        described["counts"] = count
    return sample, described


def _logging_probs(df, spec):
    """The logging probabilities of a log's rows ``df`` read as ``spec`` (its column, whose values
    :func:`_sample_from_frame` has checked), or None when the log has weights instead."""
    spec = spec.resolve_columns(list(df.columns))
    if spec.logging_prob is None:
        return None
    return _column(df, spec.logging_prob, _locator(df.index), spec.decimal)
