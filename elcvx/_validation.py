"""Input validation: the one place where user input is checked (the scipy.stats ``_iv`` idea).

Every error raised here is an :class:`~elcvx.errors.InvalidInputError` whose attributes repeat
its message's facts: ``field`` (the argument), and for an array's entry ``index``, ``value`` and
``reason`` (see :func:`entry_error`).
"""

from __future__ import annotations

import functools

import numpy as np

from .engines import threads as _threads
from .errors import InvalidInputError

METHODS = ("auto", "fast", "cvxpy")
CALIBRATIONS = ("chi2", "f")
#: The EL interval's calibrations: the two laws plus the bootstrap (elcvx.calibration.bootstrap) and the
#: one-sided bootstrap of the signed root (elcvx.calibration.signed; the interval's only, not the
#: profile's), which need the sample, so the closed-form interfaces (CR(-2), differences) keep
#: CALIBRATIONS.
EL_CALIBRATIONS = CALIBRATIONS + ("bootstrap", "signed-bootstrap")


def plural(k, noun: str) -> str:
    """``k`` and ``noun``, with an ``s`` unless ``k`` is 1: ``1 such value``, ``2 rows``."""
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def entry_error(name: str, index: int, value, reason: str) -> InvalidInputError:
    """The error for entry ``index`` of the array ``name``: the message ``name[index]=value
    reason`` (e.g. ``w[3]=inf is not finite (1 such value)``), and each part as an attribute, so
    that a log reader can name the line of the file instead of the index."""
    return InvalidInputError(f"{name}[{index}]={value!r} {reason}", field=name, index=index,
                             value=value, reason=reason)


def option(name: str, value, valid) -> str:
    """Check that ``value`` is one of the strings ``valid`` and return it as a plain ``str``.

    Only strings are compared: an array, list or other object is rejected here, before ``in``
    could compare it elementwise or a cache could try to hash it.
    """
    if not isinstance(value, str) or value not in valid:
        raise InvalidInputError(
            f"{name}={value!r} is not valid; choose one of {', '.join(map(repr, valid))}",
            field=name, value=value)
    return str(value)


def finite_scalar(name: str, value, *, allow_inf: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name}={value!r} is not a number", field=name,
                                value=value) from None
    if np.isnan(x) or (np.isinf(x) and not allow_inf):
        raise InvalidInputError(f"{name}={value!r} must be finite", field=name, value=value)
    return x


def _open_unit(name: str, value) -> float:
    x = finite_scalar(name, value)
    if not 0.0 < x < 1.0:
        raise InvalidInputError(f"{name}={value!r} must lie strictly between 0 and 1",
                                field=name, value=value)
    return x


def confidence_level(value) -> float:
    return _open_unit("confidence_level", value)


def pmin(value) -> float:
    """The smallest probability the logging policy gives any action: in ``(0, 1)``."""
    return _open_unit("pmin", value)


def _array(name: str, value, span: bool = False):
    """``value`` as a 1-d float64 array (always a copy), after the checks every array shares;
    with ``span``, the pair ``(copy, (least, largest))`` (NaN if an entry is NaN).

    A scalar becomes one element. Masked arrays with a masked value and complex input are
    rejected (``np.array(..., dtype=float)`` would silently use the masked values or drop the
    imaginary parts).
    """
    if np.ma.isMaskedArray(value):
        masked = int(np.ma.count_masked(value))
        if masked:
            raise InvalidInputError(
                f"{name} is a masked array with {masked} masked value{'s' * (masked > 1)}: "
                f"masked values are not supported; drop those rows (e.g. {name}.compressed() "
                f"and the same rows of the other arrays) or fill them ({name}.filled(...))",
                field=name)
        value = np.ma.getdata(value)
    try:
        raw = np.asarray(value)
        if raw.ndim > 1:
            raise InvalidInputError(f"{name} must be 1-dimensional, got shape {raw.shape}",
                                    field=name)
        if np.iscomplexobj(raw):
            reason = (f"is complex: only real numbers are supported (pass {name}.real if the "
                      "imaginary parts are rounding noise)")
            flat = raw.reshape(-1)
            if not flat.size:
                raise InvalidInputError(f"{name} (dtype {raw.dtype}) {reason}", field=name)
            nonzero = np.flatnonzero(flat.imag)
            i = int(nonzero[0]) if nonzero.size else 0
            raise entry_error(name, i, complex(flat[i]), reason)
        # A copy that owns its data (frozen() relies on it): reshape before copying, not after.
        return _copy(raw.reshape(-1) if raw.ndim == 0 else raw, span)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(
            f"{name} must be an array of numbers, got {type(value).__name__} {_short(value)}",
            field=name) from None


#: Entries copied and then reduced together, while they are in the core's cache (1 MiB).
_CHUNK = 1 << 17
#: The entries (32 MB) from which a copy is made on several threads. A smaller copy may come from
#: the heap, whose page faults the threads contend for: on 2 cores, copies of 1e6 and 3e6 entries
#: took at times 5 to 8 times as long on two threads as on one (glibc maps one of 32 MB or more
#: afresh: 1e7 entries gained 1.5 times).
_THREADED = 1 << 22


def _copy(raw: np.ndarray, span: bool):
    """A float64 copy of the 1-d ``raw``, and with ``span`` its least and largest entries.

    A long float64 array is copied chunk by chunk, each chunk's least and largest entries read
    while it is in the cache: a copy followed by two reductions would read the whole copy from
    memory twice more (at 1e7 entries, 8.4 ms against 11 ms). From :data:`_THREADED` entries the
    chunks are shared among the threads of a pass (:mod:`elcvx.engines.threads`), a contiguous
    run each: the copy's page faults then come in on every core (at 1e7 entries on 2 cores,
    5.9 ms against 8.4).
    """
    if not (span and raw.dtype == np.float64 and raw.size > _CHUNK):
        x = np.array(raw, dtype=np.float64)
        return (x, (float(x.min()), float(x.max())) if x.size else None) if span else x
    x = np.empty(raw.size)
    chunks = -(-raw.size // _CHUNK)
    threads = min(_threads.num_threads(), chunks) if raw.size >= _THREADED else 1
    cuts = [chunks * t // threads * _CHUNK for t in range(threads)] + [raw.size]

    def run(start, stop):
        lo, hi = np.inf, -np.inf
        for i in range(start, stop, _CHUNK):
            chunk = x[i:min(i + _CHUNK, stop)]
            np.copyto(chunk, raw[i:i + chunk.size])
            lo, hi = np.minimum(lo, chunk.min()), np.maximum(hi, chunk.max())  # (NaN carries)
        return lo, hi

    spans = _threads.run([functools.partial(run, cuts[t], cuts[t + 1]) for t in range(threads)],
                         threads)
    lo, hi = spans[0]
    for a, b in spans[1:]:
        lo, hi = np.minimum(lo, a), np.maximum(hi, b)
    return x, (float(lo), float(hi))


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def readonly(x: np.ndarray) -> np.ndarray:
    """A read-only view of ``x`` (no copy); ``x`` itself is left as it is.

    When ``x`` is read-only too, numpy refuses to make the view writable again.
    """
    view = x.view()
    view.flags.writeable = False
    return view


def frozen(x: np.ndarray) -> np.ndarray:
    """``x``, which the caller owns, made read-only and returned as a view that cannot be made
    writable again (``x.flags.writeable = True`` would succeed on an array owning its data)."""
    if isinstance(x.base, np.ndarray):
        x = x.copy()  # a view of another array, which would stay writable: freeze a copy instead
    x.flags.writeable = False
    return readonly(x)


def vector(name: str, value, *, n: int | None = None, length_of: str = "w") -> np.ndarray:
    """A non-empty 1-d float64 array of finite values (copied, read-only)."""
    return vector_and_range(name, value, n=n, length_of=length_of)[0]


def vector_and_range(name: str, value, *, n: int | None = None,
                     length_of: str = "w") -> tuple[np.ndarray, tuple[float, float]]:
    """:func:`vector`, and its least and largest entries (for :func:`within`'s ``span``): the
    two reductions also find a non-finite entry (``min`` and ``max`` carry NaN and the
    infinities), so each entry is read twice, not once per check."""
    x, span = _array(name, value, span=True)
    if x.size == 0:
        raise InvalidInputError(f"{name} is empty: at least one example is needed", field=name)
    if not (np.isfinite(span[0]) and np.isfinite(span[1])):
        first_bad(name, x, ~np.isfinite(x), "is not finite")
    if n is not None and x.size != n:
        raise InvalidInputError(f"{name} has length {x.size} but {length_of} has length {n}",
                                field=name)
    return frozen(x), span


def points(name: str, value) -> np.ndarray:
    """Candidate values: a number or 1-d array of numbers, possibly empty or infinite, not NaN
    (copied, read-only)."""
    x = _array(name, value)
    first_bad(name, x, np.isnan(x), "is not a number")
    return frozen(x)


#: An entry outside its bounds by at most this many units in the last place of the bound it
#: crosses (``numpy.spacing``) is that bound, rounded: ``1 / (eps / K)`` and ``K / eps`` (a
#: weight and its ``wmax``, computed two ways) differ by one such unit.
ROUNDING_ULPS = 4


def onto_bounds(x: np.ndarray, span: tuple[float, float], low: float,
                high: float) -> tuple[np.ndarray, tuple[float, float]]:
    """``(x, span)`` with the entries that lie outside ``[low, high]`` by rounding only (at most
    :data:`ROUNDING_ULPS` units in the last place of the bound) moved onto the bound (a frozen
    copy; ``x`` itself where none is): a bound and an entry computed in two ways should not
    refuse a log. Entries further out are left for :func:`within` to refuse."""
    if low <= span[0] and span[1] <= high:
        return x, span
    below = low - ROUNDING_ULPS * np.spacing(abs(low))
    above = high + ROUNDING_ULPS * np.spacing(abs(high))
    near = ((x < low) & (x >= below)) | ((x > high) & (x <= above))
    if not near.any():
        return x, span
    x = np.where(near, np.clip(x, low, high), x)
    return frozen(x), (float(x.min()), float(x.max()))


def within(name: str, x: np.ndarray, low: float, high: float, *, hint: str = "",
           span: tuple[float, float] | None = None) -> None:
    """Raise unless every element of ``x`` lies in ``[low, high]``; ``span``: ``x``'s least and
    largest entries, if known (then ``x`` is read only to find a bad entry)."""
    if span is not None and low <= span[0] and span[1] <= high:
        return
    first_bad(name, x, (x < low) | (x > high), f"is outside [{low!r}, {high!r}]", hint=hint)


def first_bad(name: str, x: np.ndarray, bad: np.ndarray, reason: str, *, hint: str = "",
              count: bool = True) -> None:
    """Raise :func:`entry_error` at the first ``True`` of ``bad``: ``reason``, then how many
    entries are bad (unless ``count`` is false), then ``hint``."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        how_many = f" ({plural(int(bad.sum()), 'such value')})" if count else ""
        raise entry_error(name, i, float(x[i]), f"{reason}{how_many}{hint}")
