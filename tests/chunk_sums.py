"""Per-chunk sums and their merges, the passes the out-of-core engines are tested with
(tests/io/test_dask.py, tests/docs/test_spark.py), and the same numbers from numpy on the rows. The
per-chunk functions read ``w``, ``u`` and ``c``, which a chunk's Columns and a Sample both have.

Module level, so that they travel to the workers of a cluster (by reference to this module).
The test log's columns: ``w`` in ``[0, WMAX]``, ``r`` in ``[RMIN, RMAX]`` and counts ``n``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

WMAX, RMIN, RMAX = 8.0, -1.0, 3.0
OPTIONS = dict(weight="w", reward="r", count="n", wmax=WMAX, rmin=RMIN, rmax=RMAX)
#: The order of the sums of :func:`sums`.
SUMS = ("c", "cw", "cw2", "cu", "rows")


def frame(n, seed):
    """``n`` rows of a log with continuous weights, rewards and integer counts."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"w": rng.uniform(0.0, WMAX, n), "r": rng.uniform(RMIN, RMAX, n),
                         "n": rng.integers(1, 5, n).astype(float)})


def to_sample(chunk):
    """The :class:`~elcvx.Sample` of a pandas chunk of the test log (checked as any sample)."""
    from elcvx import Sample

    return Sample(chunk["w"].to_numpy(), chunk["r"].to_numpy(), counts=chunk["n"].to_numpy(),
                  wmax=WMAX, rmin=RMIN, rmax=RMAX)


def sums(cols):
    """sum c, sum c w, sum c w^2, sum c u, and the rows, of a chunk's Columns."""
    c = np.ones_like(cols.w) if cols.c is None else cols.c
    return np.array([c.sum(), c @ cols.w, c @ cols.w ** 2, c @ cols.u, cols.w.size])


def add(a, b):
    return a + b


def moments(cols):
    """``(N, mean, M2)`` of the weights with counts c: Chan et al.'s pairwise form."""
    c = np.ones_like(cols.w) if cols.c is None else cols.c
    n = c.sum()
    mean = c @ cols.w / n
    return n, mean, c @ (cols.w - mean) ** 2


def chan(a, b):
    """The ``(N, mean, M2)`` of two chunks together (Chan, Golub and LeVeque's update)."""
    (na, ma, sa), (nb, mb, sb) = a, b
    n = na + nb
    d = mb - ma
    return n, ma + d * nb / n, sa + sb + d * d * na * nb / n


def numpy_sums(df):
    """:func:`sums` of a DataFrame of the log's rows, by numpy on its columns (not elcvx)."""
    c, w = df["n"].to_numpy(), df["w"].to_numpy()
    u = (df["r"].to_numpy() - RMIN) / (RMAX - RMIN)
    return np.array([c.sum(), np.sum(c * w), np.sum(c * w * w), np.sum(c * u), len(df)])


def numpy_moments(df):
    """``(N, mean, variance)`` of the weights with counts, by numpy."""
    c, w = df["n"].to_numpy(), df["w"].to_numpy()
    mean = np.average(w, weights=c)
    return c.sum(), mean, np.average((w - mean) ** 2, weights=c)
