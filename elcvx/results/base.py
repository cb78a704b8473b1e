"""What every result type shares: the conversions (``to_dict()``, ``to_frame()``, the HTML a
notebook shows; :mod:`elcvx._convert`), read-only array fields, a per-row field computed on its
first read, and unpacking as ``(low, high)``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import fields
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar

import numpy as np

from .. import _convert
from .._validation import readonly

if TYPE_CHECKING:  # (annotations only: pandas is an optional dependency)
    import pandas

T = TypeVar("T", bound=type)


class ConfidenceInterval(NamedTuple):
    """An interval ``(low, high)``, like ``scipy.stats``' ``ConfidenceInterval``."""

    low: float
    high: float


class _Converts:
    """Mixin of the result dataclasses: ``to_dict``, ``to_frame`` and the notebook's HTML."""

    #: The array fields that make a table, one row per entry (empty: the result is one row).
    COLUMNS: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The reported fields as plain Python data (numbers, strings, lists; an interval field
        as ``{"low", "high"}``, a nested result as its own dict): ``json.dumps`` writes it.
        Per-row arrays kept out of the repr (an estimate's ``q``) are left out."""
        return _convert.to_dict(self)

    def to_frame(self) -> pandas.DataFrame:
        """A pandas DataFrame (needs pandas, the ``io`` extra): one row of the scalar fields,
        or, for a table (:attr:`COLUMNS`: a profile's ``v``, ``statistic``, ``pvalue``, ...),
        one row per entry with the other fields in ``frame.attrs``."""
        return _convert.to_frame(self)

    def _repr_html_(self) -> str:
        return _convert.repr_html(self)


class _ReadOnlyArrays(_Converts):
    """Mixin of the frozen result dataclasses: each array field is held as a read-only view.

    A view costs no copy and leaves the array passed in as it was; where that array is the
    read-only cached MLE solution, the view cannot be made writable again. (A field read
    through :class:`_RowsOnRead` makes its own views.)
    """

    def __post_init__(self) -> None:
        cls: type = type(self)
        for name in _field_names(cls):
            if isinstance(getattr(cls, name, None), _RowsOnRead):
                continue
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, name, readonly(value))


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The names of a result dataclass's fields, kept per class (``dataclasses.fields`` builds
    them anew on each call, a few microseconds a result)."""
    return tuple(f.name for f in fields(cls))


class _RowsOnRead:
    """A result's per-row field (``q``) that may be given unread: as a function of no argument
    (:class:`elcvx.solutions.OnRead`, which computes the array on its first call and keeps it,
    read-only), called at each read. The fast path does not write ``q`` during its passes:
    reading it costs one pass over the rows, and a result whose ``q`` is never read never pays
    it.

    What the result was given (the array, or the function) is held in the attribute ``_q``,
    set once by the dataclass's ``__init__``; the result is not written after that. Each read
    is a read-only view (no copy), an unpickled array's too.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.held = "_" + name

    def given(self, obj: object) -> Any:
        """What ``obj`` was given for this field: an array, or the function that computes it."""
        return getattr(obj, self.held)

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = getattr(obj, self.held)
        if callable(value):
            value = value()
        return readonly(np.asarray(value)) if value is not None else None

    def __set__(self, obj: object, value: Any) -> None:
        # (The dataclass's __init__ sets it, through object.__setattr__.)
        object.__setattr__(obj, self.held, value)


def _q_on_read(cls: T) -> T:
    """``cls`` (a result dataclass) with its ``q`` field read through :class:`_RowsOnRead`."""
    setattr(cls, "q", _RowsOnRead("q"))  # (cls is any dataclass: its q is not declared)
    return cls


class _Point(_Converts):
    """Mixin: a point estimate, ``float(result)`` its ``value``."""

    value: float

    def __float__(self) -> float:
        return float(self.value)


class _Pair(_Converts):
    """Mixin: unpack as ``(low, high)`` like :class:`~elcvx.results.IntervalResult`."""

    low: float
    high: float

    def __iter__(self) -> Iterator[float]:
        return iter((self.low, self.high))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> float:
        return (self.low, self.high)[i]
