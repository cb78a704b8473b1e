"""Helpers shared by the random suites (tests/fast/test_fuzz.py, tests/public/test_fuzz_models.py):
pasteable reproducers and the shrinking of a failing case by its rows."""

from __future__ import annotations

import time

import numpy as np


def num_repr(x) -> str:
    """A float as Python source that round-trips (``np.inf`` for infinity)."""
    x = float(x)
    if x == np.inf:
        return "np.inf"
    if x == -np.inf:
        return "-np.inf"
    return repr(x)


def array_repr(a) -> str:
    """A 1-d or 2-d array as a Python list literal (floats by repr)."""
    a = np.asarray(a, dtype=float)
    if a.ndim == 2:
        return "[" + ", ".join(array_repr(row) for row in a) + "]"
    return "[" + ", ".join(num_repr(x) for x in a) + "]"


def sample_repr(s, limit=60) -> str | None:
    """A pasteable ``Sample(...)`` (floats by repr, which round-trips), or None above ``limit``
    rows."""
    if s.n_rows > limit:
        return None
    counts = "" if s.counts is None else f", counts={array_repr(s.counts)}"
    return (f"Sample({array_repr(s.w)}, {array_repr(s.r)}{counts}, wmin={num_repr(s.wmin)}, "
            f"wmax={num_repr(s.wmax)}, rmin={num_repr(s.rmin)}, rmax={num_repr(s.rmax)})")


def unit_rewards(rng, kind: str, n: int) -> np.ndarray:
    """``n`` rewards on [0, 1] of a kind: ``"binary"``, ``"continuous"``, ``"constant"`` (0, 1
    or a random level) or ``"levels"`` (0, 1/4, 1/2, 1)."""
    if kind == "binary":
        return rng.integers(0, 2, n).astype(float)
    if kind == "continuous":
        return rng.random(n)
    if kind == "constant":
        return np.full(n, float(rng.choice([0.0, 1.0, rng.random()])))
    return rng.choice([0.0, 0.25, 0.5, 1.0], n)


def shrink_rows(n_rows: int, still_fails, deadline: float) -> np.ndarray:
    """The rows (indices) left after dropping chunks of halving size while ``still_fails(keep)``
    holds, until ``deadline`` (``time.monotonic()``): a smaller case that fails the same way."""
    keep = np.arange(n_rows)
    chunk = max(1, keep.size // 2)
    while time.monotonic() < deadline:
        i, changed = 0, False
        while i < keep.size and keep.size > 1 and time.monotonic() < deadline:
            trial = np.concatenate([keep[:i], keep[i + chunk:]])
            if trial.size and still_fails(trial):
                keep, changed = trial, True
            else:
                i += chunk
        if chunk == 1 and not changed:
            break
        chunk = max(1, chunk // 2)
    return keep
