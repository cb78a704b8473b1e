r"""One side of the betting confidence sequence (Waudby-Smith et al. 2022), numpy only.

The problem: ``X_1, X_2, ... >= 0`` arrive in order with ``E[X_t | past] = mu`` and no upper
bound on ``X_t`` (``X = w u``, or ``w (1 - u)`` for the upper side). Find ``L_t`` with
``P(exists t: mu < L_t) <= alpha``.

**The wealth.** A gambler who believes ``mu > v`` stakes a fraction ``c_t in [0, c_max]`` of
her wealth on ``X_t / v - 1``: ``K_t(v) = prod_{s <= t} (1 + c_s (X_s / v - 1))``. Each factor
is ``>= 1 - c_max > 0`` because ``X >= 0`` (so no bound on ``X`` is needed), and under ``mu = v``
its conditional mean is 1 when ``c_s`` is predictable (fixed before ``X_s`` is seen): ``K(mu)`` is
a test martingale, and by Ville's inequality ``P(exists t: K_t(mu) >= 1/alpha) <= alpha``. The
sequence is ``{v : K_t(v) < 1/alpha}`` and ``L_t`` its infimum.

**The bet does not depend on v**, so every factor ``log(1 - c + c X / v)`` is decreasing and
convex in ``v``, and convex in ``log v`` too (its second derivative there is ``p (1 - p) >= 0``
with ``p = c X / (v (1 - c) + c X)``): ``log K_t`` is, the rejected values form an interval
``(0, L_t]``, and every tangent of ``log K_t``, as a function of ``v`` or of ``log v``, lies below
it. ``log K`` and its derivative are kept on a grid of candidate values; the roots of the four
tangents at the two grid values around ``L_t`` are each at most ``L_t``, and the bound is the
largest, within ``O(h^2)`` of ``L_t`` for a grid step ``h``. The grid is ``g / points``, ``g = 1
.. points``, and four values below the first, ``2^-k / points`` (``k = 4 .. 1``), where ``log K``
bends most. The bet is the predictable plug-in of Waudby-Smith
and Ramdas (2023) written as a fraction: the Kelly fraction against a value ``sigma sqrt(2
log(1/alpha) / t)`` below the mean is ``~ mu sqrt(2 log(1/alpha) / t) / sigma``, so

``c_t = min(c_max, m_{t-1} sqrt(2 log(1/alpha) / (s2_{t-1} t log(1 + t))))``

with ``m_{t-1} = min(1, (1/2 + sum_{s<t} X_s) / t)`` and ``s2_{t-1} = (1/4 + sum_{s<t} (X_s -
m_{s-1})^2) / t`` (the extra ``log(1 + t)`` spreads the bet's power over all times, as the
paper's predictable plug-in does), ``c_max = 1/2``.

The state is ``t``, two running sums, and ``log K`` and its derivative on the grid, so a chunk
continues exactly where the last one stopped, with the same floating-point operations.
"""

from __future__ import annotations

import numpy as np

C_MAX = 0.5
#: Default number of candidate values on ``(0, 1]``.
GRID = 200
#: Cells per block of the ``(rows, grid)`` arrays (memory stays ~20 MB).
_CELLS = 1_000_000


def grid(points: int) -> np.ndarray:
    """The candidate values: ``2^-k / points`` (``k = 4 .. 1``), then ``g / points`` (``g = 1 ..
    points``)."""
    return np.concatenate((2.0 ** -np.arange(4, 0, -1), np.arange(1, points + 1))) / points


class Side:
    """The running state of one lower betting sequence on ``X >= 0`` (see the module docstring)."""

    def __init__(self, log_alpha: float, points: int = GRID):
        self.log_alpha = float(log_alpha)  # log(1/alpha) used in the bet (tuning only)
        self.v = grid(points)
        self.t = 0
        self.s = 0.0  # sum of X
        self.q = 0.0  # sum of (X_s - m_{s-1})^2
        self.zero = 0.0  # sum of log(1 - c) over the rows with X = 0
        self.gk = np.zeros(self.v.size)  # sum of log(1 + c (X/v - 1)) over the other rows, on the grid
        self.dlogk = np.zeros(self.v.size)  # the derivative in v of log K(v)

    def bets(self, x: np.ndarray) -> np.ndarray:
        """The predictable fractions ``c`` for the rows ``x`` (updates the running sums)."""
        t = self.t + np.arange(1, x.size + 1, dtype=float)
        s = np.cumsum(np.concatenate(([self.s], x)))
        m = np.minimum(1.0, (0.5 + s[:-1]) / t)
        with np.errstate(over="ignore"):
            q = np.cumsum(np.concatenate(([self.q], (x - m) ** 2)))
            s2 = (0.25 + q[:-1]) / t
            c = np.minimum(C_MAX, m * np.sqrt(2.0 * self.log_alpha / (s2 * t * np.log1p(t))))
        self.t += x.size
        self.s, self.q = float(s[-1]), float(q[-1])
        return np.asarray(c)

    def extend(self, x: np.ndarray, threshold: float) -> np.ndarray:
        """Add ``x`` (in order); return the lower bound after each row."""
        c = self.bets(x)
        rows = max(1, _CELLS // self.v.size)
        out = [self._block(x[i:i + rows], c[i:i + rows], threshold) for i in range(0, x.size, rows)]
        return np.concatenate(out) if out else np.zeros(0)

    def _block(self, x: np.ndarray, c: np.ndarray, threshold: float) -> np.ndarray:
        # A row with X = 0 (a weight or reward of 0) multiplies every K(v) by 1 - c: a scalar.
        # Only the other rows need the grid: their running sums are taken over them alone and
        # each row reads the last one at or before it, plus the running sum of the scalars.
        nz = x > 0
        zero = np.cumsum(np.concatenate(([self.zero], np.where(nz, 0.0, np.log1p(-c)))))[1:]
        xs, cs = x[nz], c[nz]
        ratio = xs[:, None] / self.v  # X / v
        factor = 1.0 + cs[:, None] * (ratio - 1.0)
        gk = np.cumsum(np.vstack((self.gk, np.log(factor))), axis=0)
        # d/dv log(1 + c (X/v - 1)) = -c X / (v^2 factor)
        gd = np.cumsum(np.vstack((self.dlogk, -cs[:, None] * ratio / (self.v * factor))), axis=0)
        last = np.cumsum(nz)  # row i reads gk[last[i]] (row 0 of gk is the carried state)
        self.zero, self.gk, self.dlogk = float(zero[-1]), gk[-1].copy(), gd[-1].copy()
        return bound(self.v, gk[last] + zero[:, None], gd[last], threshold)

    @property
    def logk(self) -> np.ndarray:
        """``log K(v)`` on the grid now."""
        return self.gk + self.zero


def bound(v: np.ndarray, logk: np.ndarray, dlogk: np.ndarray, threshold: float) -> np.ndarray:
    """Per row, a lower bound on ``L = sup {v : log K(v) >= threshold}`` from ``log K`` and its
    derivative on the grid ``v`` (rows of ``logk`` and ``dlogk``).

    ``log K`` is decreasing and convex in ``v`` and in ``log v``, so the rejected grid values are
    the first ``count`` ones, ``L`` lies between ``g = v[count - 1]`` and ``g' = v[count]``, and
    the tangents at ``g`` and ``g'``, in ``v`` and in ``log v``, lie below ``log K``: where one
    reaches the threshold, ``log K`` does too. Their roots are each at most ``L``; the largest is
    returned (capped at ``g'``; 0 when none is positive; 1 when every grid value is rejected).
    """
    points = v.size
    count = (logk >= threshold).sum(axis=1)
    rows = np.arange(logk.shape[0])
    i = np.maximum(count - 1, 0)
    j = np.minimum(count, points - 1)
    g, g2 = v[i], v[j]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # From g, rightwards: in v, a step excess / speed; in log v, a factor exp(that / g).
        speed = -dlogk[rows, i]
        step = np.where(speed > 0, (logk[rows, i] - threshold) / speed, np.inf)
        left = np.where(count > 0, np.minimum(np.maximum(g + step, g * np.exp(step / g)), g2), 0.0)
        # From g', leftwards (where log K is short of the threshold).
        speed = -dlogk[rows, j]
        step = (threshold - logk[rows, j]) / speed
        right = np.where(speed > 0, np.maximum(g2 - step, g2 * np.exp(-step / g2)), 0.0)
    return np.where(count >= points, 1.0, np.maximum(left, right))


def exact_bound(x: np.ndarray, c: np.ndarray, threshold: float) -> float:
    """The exact ``L_t = sup {v : log K_t(v) >= threshold}`` from all of ``x`` and its bets ``c``.

    ``O(t)`` per evaluation of ``log K``: for a study's few checkpoints, not for every ``t``.
    """
    from scipy.optimize import brentq

    def g(v: float) -> float:
        return float(np.sum(np.log1p(c * (x / v - 1.0)))) - threshold

    if g(1.0) >= 0:
        return 1.0
    tiny = 1e-12
    if g(tiny) < 0:
        return 0.0
    return float(brentq(g, tiny, 1.0, xtol=1e-13, rtol=1e-13))
