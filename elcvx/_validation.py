"""Input validation: the one place where user input is checked (the scipy.stats ``_iv`` idea)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .errors import InvalidInputError

METHODS = ("auto", "fast", "cvxpy")
CALIBRATIONS = ("chi2", "f")


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
    """Check that ``value`` is one of ``valid`` and return it."""
    if value not in valid:
        raise InvalidInputError(
            f"{name}={value!r} is not valid; choose one of {', '.join(map(repr, valid))}"
        )
    return value


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


def vector(name: str, value, *, n: int | None = None, length_of: str = "w") -> np.ndarray:
    """A 1-d float64 array of finite values (copied, read-only)."""
    try:
        x = np.array(value, dtype=np.float64).reshape(-1) if np.ndim(value) <= 1 else None
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be an array of numbers, got {type(value).__name__}") from None
    if x is None:
        raise InvalidInputError(f"{name} must be 1-dimensional, got shape {np.shape(value)}")
    if x.size == 0:
        raise InvalidInputError(f"{name} is empty: at least one example is needed")
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"{name}[{i}]={float(x[i])!r} is not finite ({int(bad.sum())} such values)")
    if n is not None and x.size != n:
        raise InvalidInputError(f"{name} has length {x.size} but {length_of} has length {n}")
    x.flags.writeable = False
    return x


def within(name: str, x: np.ndarray, low: float, high: float, *, hint: str = "") -> None:
    """Raise unless every element of ``x`` lies in ``[low, high]``."""
    bad = (x < low) | (x > high)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(
            f"{name}[{i}]={float(x[i])!r} is outside [{low!r}, {high!r}] ({int(bad.sum())} such values){hint}"
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
