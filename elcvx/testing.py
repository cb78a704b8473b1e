"""Test helpers: the one place where agreement tolerances live.

``AGREEMENT`` is the agreement the package promises between its two solver paths (fast numpy
and cvxpy/Clarabel) and between a dual and its primal, relative to the natural scale of the
quantity (the reward range for values, the magnitude for log-likelihoods).
"""

from __future__ import annotations

import numpy as np

AGREEMENT = 1e-6


def assert_agree(actual, desired, *, scale=1.0, tol=AGREEMENT, what=""):
    """Assert ``|actual - desired| <= tol * max(scale, |desired|)`` elementwise.

    Infinite values must match exactly (same sign); NaN never agrees.
    """
    a = np.asarray(actual, dtype=float)
    d = np.asarray(desired, dtype=float)
    if np.isnan(a).any() or np.isnan(d).any():
        raise AssertionError(f"{what}: NaN in actual={a!r} or desired={d!r}")
    inf = np.isinf(a) | np.isinf(d)
    if inf.any() and not np.array_equal(np.broadcast_to(a, inf.shape)[inf], np.broadcast_to(d, inf.shape)[inf]):
        raise AssertionError(f"{what}: infinite values differ: actual={a!r}, desired={d!r}")
    fin = ~inf
    a, d = np.broadcast_arrays(a, d)
    bound = tol * np.maximum(scale, np.abs(d))
    err = np.zeros(a.shape)
    err[fin] = np.abs(a[fin] - d[fin])
    bad = err > bound
    if np.any(bad):
        raise AssertionError(
            f"{what}: max error {np.max(err[bad]):.3g} exceeds tol {tol:g} x scale "
            f"(actual={a!r}, desired={d!r})"
        )
