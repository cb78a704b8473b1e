"""The thin-asymptotics diagnostic: how many rows carry the estimate's variance?

Why: EL's bounds are asymptotic; their error is driven by the few rows with the largest
influence on the estimate, not by N. On a 10-action log of the tightness protocol's kind at N =
1,000, about a dozen rows carry the estimate, and the one-sided 95% lower bound exceeds the true
value in 8% of logs. A user cannot see that from N.

What: the influence of row ``n`` on the self-normalised estimate ``v = sum c w u / sum c w`` is
``psi_n = w_n (u_n - v)``, and :func:`carrying_rows` is the Kish effective number of rows of its
square, ``(sum c psi^2)^2 / sum c psi^4``: N when every row contributes alike, about ``m`` when
``m`` rows carry the variance. Below :data:`THIN_ROWS` the interval carries :func:`note` (its
``notes``, shown by the CLI), which names the finite-sample bounds to use instead. The
threshold is calibrated on the one-sided study (:mod:`elcvx.experiments.onesided`,
docs/intervals.md "When the asymptotics are thin").

How: two passes over the rows in memory, in blocks (the mean, then the moments of ``psi``);
about as long as a ``log1p`` pass (docs/intervals.md gives the measurement). A log scanned in
chunks is not checked (its rows are not in memory).
"""

from __future__ import annotations

import math

import numpy as np

#: Below this many rows carrying the variance, the interval says that its asymptotics are thin.
THIN_ROWS = 30.0
_BLOCK = 1 << 16


def carrying_rows(sample) -> float:
    """``(sum c psi^2)^2 / sum c psi^4``, ``psi = w (u - sum c w u / sum c w)``: the effective
    number of rows that carry the estimate's variance (``nan`` when no row has weight, ``inf``
    when every ``psi`` is 0)."""
    w, u, c = sample.w, sample.u, sample.counts
    # In blocks of _BLOCK rows: the temporaries stay in cache (a whole-array temporary costs
    # more in fresh pages than the arithmetic), and sums of products, not np.dot (BLAS's threads
    # cost more than the pass on a busy machine).
    sums = np.zeros(4)
    blocks = [slice(start, start + _BLOCK) for start in range(0, w.size, _BLOCK)]
    for b in blocks:
        wc = w[b] if c is None else w[b] * c[b]
        sums[0] += wc.sum()
        sums[1] += (wc * u[b]).sum()
    if not sums[0] > 0:
        return math.nan
    mean = sums[1] / sums[0]
    for b in blocks:
        psi2 = u[b] - mean
        psi2 *= w[b]
        np.square(psi2, out=psi2)
        cpsi2 = psi2 if c is None else psi2 * c[b]
        sums[2] += cpsi2.sum()
        cpsi2 *= psi2
        sums[3] += cpsi2.sum()
    second, fourth = float(sums[2]), float(sums[3])
    if fourth == 0.0:
        return math.inf
    return second * second / fourth


#: How the note begins (:func:`of` finds it among a result's notes).
PREFIX = "thin asymptotics:"


def note(rows: float) -> str:
    """The note of a result whose estimate ``rows`` rows carry."""
    return (f"{PREFIX} about {rows:.0f} rows carry the estimate's variance (fewer than "
            f"{THIN_ROWS:.0f}), so the EL bounds' asymptotic level may not hold; a finite-sample "
            "bound holds at any N: elcvx.lower_bound(sample, method='el-betting') (or 'ls')")


def notes(sample) -> tuple:
    """``(note,)`` when :func:`carrying_rows` is below :data:`THIN_ROWS` on a sample in memory,
    else ``()``."""
    if not getattr(sample, "in_memory", True):
        return ()
    rows = carrying_rows(sample)
    return (note(rows),) if rows < THIN_ROWS else ()


def of(notes) -> list:
    """The thin-asymptotics notes among a result's ``notes``."""
    return [n for n in notes if n.startswith(PREFIX)]
