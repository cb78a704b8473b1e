"""Input validation: the one place where user input is checked (the scipy.stats ``_iv`` idea)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .errors import InvalidInputError

METHODS = ("auto", "fast", "cvxpy")
CALIBRATIONS = ("chi2", "f")
#: The EL interval's and profile's calibrations: the two laws plus the bootstrap (elcvx._bootstrap),
#: which needs the sample, so the closed-form interfaces (CR(-2), differences) keep CALIBRATIONS.
EL_CALIBRATIONS = CALIBRATIONS + ("bootstrap",)


def plural(k, noun: str) -> str:
    """``k`` and ``noun``, with an ``s`` unless ``k`` is 1: ``1 such value``, ``2 rows``."""
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _show(x) -> str:
    return np.array2string(np.asarray(x), threshold=6, edgeitems=3)


def sample(value):
    """Check that ``value`` is an :class:`elcvx.Sample` and return it."""
    from .sample import Sample  # sample.py imports this module

    if not isinstance(value, Sample):
        raise InvalidInputError(
            f"sample must be an elcvx.Sample, got {type(value).__name__}; build one with "
            "elcvx.Sample(w, r, wmax=...) or Sample.from_probs(...)"
        )
    return value


def option(name: str, value, valid) -> str:
    """Check that ``value`` is one of the strings ``valid`` and return it as a plain ``str``.

    Only strings are compared: an array, list or other object is rejected here, before ``in``
    could compare it elementwise or a cache could try to hash it.
    """
    if not isinstance(value, str) or value not in valid:
        raise InvalidInputError(
            f"{name}={value!r} is not valid; choose one of {', '.join(map(repr, valid))}"
        )
    return str(value)


def finite_scalar(name: str, value, *, allow_inf: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name}={value!r} is not a number") from None
    if np.isnan(x) or (np.isinf(x) and not allow_inf):
        raise InvalidInputError(f"{name}={value!r} must be finite")
    return x


def confidence_level(value) -> float:
    x = finite_scalar("confidence_level", value)
    if not 0.0 < x < 1.0:
        raise InvalidInputError(f"confidence_level={value!r} must lie strictly between 0 and 1")
    return x


def _array(name: str, value) -> np.ndarray:
    """``value`` as a 1-d float64 array (always a copy), after the checks every array shares.

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
                f"and the same rows of the other arrays) or fill them ({name}.filled(...))"
            )
        value = np.ma.getdata(value)
    try:
        raw = np.asarray(value)
        if raw.ndim > 1:
            raise InvalidInputError(f"{name} must be 1-dimensional, got shape {raw.shape}")
        if np.iscomplexobj(raw):
            flat = raw.reshape(-1)
            nonzero = np.flatnonzero(flat.imag)
            i = int(nonzero[0]) if nonzero.size else 0
            entry = f"{name}[{i}]={complex(flat[i])!r}" if flat.size else f"{name} (dtype {raw.dtype})"
            raise InvalidInputError(
                f"{entry} is complex: only real numbers are supported "
                f"(pass {name}.real if the imaginary parts are rounding noise)"
            )
        # A copy that owns its data (frozen() relies on it): reshape before copying, not after.
        return np.array(raw.reshape(-1) if raw.ndim == 0 else raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(
            f"{name} must be an array of numbers, got {type(value).__name__} {_short(value)}"
        ) from None


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
    x = _array(name, value)
    if x.size == 0:
        raise InvalidInputError(f"{name} is empty: at least one example is needed")
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(
            f"{name}[{i}]={float(x[i])!r} is not finite ({plural(int(bad.sum()), 'such value')})")
    if n is not None and x.size != n:
        raise InvalidInputError(f"{name} has length {x.size} but {length_of} has length {n}")
    return frozen(x)


def points(name: str, value) -> np.ndarray:
    """Candidate values: a number or 1-d array of numbers, possibly empty or infinite, not NaN
    (copied, read-only)."""
    x = _array(name, value)
    bad = np.isnan(x)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(
            f"{name}[{i}]={float(x[i])!r} is not a number ({plural(int(bad.sum()), 'such value')})")
    return frozen(x)


def within(name: str, x: np.ndarray, low: float, high: float, *, hint: str = "") -> None:
    """Raise unless every element of ``x`` lies in ``[low, high]``."""
    bad = (x < low) | (x > high)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(
            f"{name}[{i}]={float(x[i])!r} is outside [{low!r}, {high!r}] "
            f"({plural(int(bad.sum()), 'such value')}){hint}"
        )


def quantile(calibration: str, confidence: float, n: float) -> float:
    """The likelihood-ratio threshold ``q`` of an interval ``{v : 2(L_mle - L(v)) <= q}``.

    ``"chi2"``: the chi-square(1) quantile of the paper's text (Wilks' theorem).
    ``"f"``: the F(1, N-1) quantile used by the authors' replication code; larger than the
    chi-square quantile at small N and equal to it as N grows. Returns ``inf`` (the whole reward
    range) when N < 2 under ``"f"``.
    """
    option("calibration", calibration, CALIBRATIONS)
    if calibration == "chi2":
        return float(stats.chi2.ppf(confidence, 1))
    if n < 2:
        return float("inf")
    return float(stats.f.ppf(confidence, 1, n - 1))


def pvalue(calibration: str, statistic, n: float):
    """Upper-tail probability of a likelihood-ratio statistic under the calibration's law."""
    option("calibration", calibration, CALIBRATIONS)
    statistic = np.asarray(statistic, dtype=float)
    if calibration == "chi2":
        return stats.chi2.sf(statistic, 1)
    if n < 2:
        return np.ones_like(statistic)
    return stats.f.sf(statistic, 1, n - 1)
