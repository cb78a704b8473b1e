"""The thin-asymptotics diagnostic: how many rows carry the large weights?

Why: EL's bounds are asymptotic, and how far they are from their limit is set by the few rows
with the largest weights, not by N. On a 10-action log of the tightness protocol's kind at N =
1,000 about 14 rows hold a weight of 28, and the one-sided 95% chi-square lower bound exceeds the
true value in 6.0% of 1,000 logs (the one-sided study); on a 4-action one, about 17 rows and
12.4%. A user cannot see that from N.

What: :func:`carrying_rows` is the Kish effective number of rows of the squared weights,
``(sum c w^2)^2 / sum c w^4``: N when every weight is alike, about ``m`` when ``m`` rows hold
the large weights. The variance of ``w r`` lies on those rows whatever the rewards are, and the
rewards cannot be trusted to say more: a reward-aware count (the rows carrying ``w (r - v)``'s
variance) looks benign exactly on the logs that miss the rare large-weight rows with the
adverse reward, which are the logs whose bound fails (on the study's K = 4 log at N = 1,000,
the logs it left unflagged exceeded the value in 65% of cases). Below :data:`THIN_ROWS` the
interval carries :func:`note` (its ``notes``, shown by the CLI), which names the finite-sample
bounds to use instead. The threshold is calibrated on the one-sided study
(:mod:`elcvx.experiments.onesided`, docs/intervals.md "When the asymptotics are thin").

How: one pass over the rows in memory, in blocks; a few times a ``log1p`` pass (docs/intervals.md
gives the measurement). A log scanned in chunks is not checked (its rows are not in memory).
"""

from __future__ import annotations

import numpy as np

#: Below this many rows carrying the variance, the interval says that its asymptotics are thin.
THIN_ROWS = 30.0
_BLOCK = 1 << 16


def carrying_rows(sample) -> float:
    """``(sum c w^2)^2 / sum c w^4``: the effective number of rows that carry the large weights
    (0 when every weight is 0: the extra atoms carry it all)."""
    w, c = sample.w, sample.counts
    span = getattr(sample, "_w_span", None)  # (the validation's; a sample built without it: a pass)
    top = float(span[1]) if span is not None else float(w.max(initial=0.0))
    if not top > 0:
        return 0.0
    # Scaled by the largest weight (w^4 of a weight of 1e80 overflows); in blocks of _BLOCK rows:
    # the temporaries stay in cache (a whole-array temporary costs more in fresh pages than the
    # arithmetic), and sums of products, not np.dot (BLAS's threads cost more than the pass on a
    # busy machine).
    second = fourth = 0.0
    for start in range(0, w.size, _BLOCK):
        w2 = np.square(w[start:start + _BLOCK] / top)
        cw2 = w2 if c is None else w2 * c[start:start + _BLOCK]
        second += float(cw2.sum())
        cw2 *= w2
        fourth += float(cw2.sum())
    return second * second / fourth if fourth > 0 else 0.0


#: How the note begins (:func:`of` finds it among a result's notes).
PREFIX = "thin asymptotics:"


def note(rows: float) -> str:
    """The note of a result whose estimate ``rows`` rows carry."""
    return (f"{PREFIX} about {rows:.0f} rows carry the large weights (fewer than "
            f"{THIN_ROWS:.0f}), so the EL bounds' asymptotic level may not hold; a finite-sample "
            "bound holds at any N: elcvx.baselines.lower_bound(sample, method='el-betting') "
            "(or 'ls')")


def notes(sample) -> tuple:
    """``(note,)`` when :func:`carrying_rows` is below :data:`THIN_ROWS` on a sample in memory,
    else ``()``."""
    if not sample.in_memory:  # (a scanned log: its rows are not here to count)
        return ()
    rows = carrying_rows(sample)
    return (note(rows),) if rows < THIN_ROWS else ()


def of(notes) -> list:
    """The thin-asymptotics notes among a result's ``notes``."""
    return [n for n in notes if n.startswith(PREFIX)]
