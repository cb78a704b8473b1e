"""A run's compiled building blocks, shared by the block kernels of
:mod:`elcvx.passes.kernels_numba`: a run's counts, features and value functional built row by
row, its sum of logs (one log per group of rows), its dot products, and the fused sums of the
paper's own programs (one feature ``w``, no counts).

A block kernel goes over its block in runs of :data:`RUN` rows whose temporaries stay in the
core's first-level cache. Each function here works on one run. All are compiled with
``fastmath=False`` (no reordering, no FMA contraction) but the five fused sums
(:func:`mle_run_sums`, :func:`value_run_sums`, :func:`plain_run_sums`, :func:`power_sums`,
:func:`stat_sums`), compiled with ``fastmath={"reassoc"}`` alone: the compiler may then split
each sum into vector lanes (and reassociate a term's product) and keep all of a run's sums in
registers in one loop over its rows, where a dot product per sum would read the run again for
each. None of them forms ``a`` or ``q``, which stay the numpy kernels' to the last bit. Their
results differ from sums in sequence by rounding (a few units in the last place of the terms'
size, which ``tests/fast/test_kernels_numba.py`` bounds against ``math.fsum``).
"""

from __future__ import annotations

import math
from typing import Any


import numpy as np
from numba import njit

from ..engines.blocks import LOG_GROUP, LOG_RANGE

#: The rows of a run (its temporaries, a dozen rows of doubles at most, stay in the L1 cache).
RUN = 1024

_LO, _HI = 2.0 ** -LOG_RANGE, 2.0 ** LOG_RANGE
#: How every kernel is compiled: see the module's docstring.
JIT: dict[str, Any] = dict(nogil=True, fastmath=False, cache=True, error_model="numpy")
#: How the fused sums are compiled.
SUMS_JIT: dict[str, Any] = dict(nogil=True, fastmath={"reassoc"}, cache=True, error_model="numpy")


@njit(**JIT)
def weights(c, has_c, start, size, cw):
    """The run's counts into ``cw`` (ones without counts): each sum ``sum c x`` is then a dot
    product ``x . cw``."""
    if has_c:
        run_c = c[start:start + size]
        for i in range(size):
            cw[i] = run_c[i]
    else:
        for i in range(size):
            cw[i] = 1.0


@njit(**JIT)
def log_sums(a, size, has_c, cw, prod, split):
    """``(sum c log a, sum c log max(a, 1))`` over a run's positive ``a`` (the second only
    with ``split``): without counts, the terms multiplied in groups of ``LOG_GROUP`` (``prod``
    their scratch) and one log taken per group, where every term is in ``[2**-62, 2**62]`` (so
    that a product stays a normal float)."""
    total = above = 0.0
    inside = 0
    for i in range(size):
        inside += (a[i] >= _LO) & (a[i] <= _HI)
    groups = size // LOG_GROUP
    if has_c or inside < size or groups == 0:
        for i in range(size):
            la = math.log(a[i])
            total += cw[i] * la
            above += cw[i] * max(la, 0.0)
        return total, above
    for g in range(groups):  # (each group: the rows g, g + groups, g + 2 groups, ...)
        prod[g] = a[g]
    for j in range(1, LOG_GROUP):
        for g in range(groups):
            prod[g] *= a[j * groups + g]
    for g in range(groups):
        total += math.log(prod[g])
    if split:
        for g in range(groups):
            prod[g] = max(a[g], 1.0)
        for j in range(1, LOG_GROUP):
            for g in range(groups):
                prod[g] *= max(a[j * groups + g], 1.0)
        for g in range(groups):
            above += math.log(prod[g])
    for i in range(groups * LOG_GROUP, size):
        la = math.log(a[i])
        total += la
        above += max(la, 0.0)
    return total, above


@njit(**JIT)
def h_run(F, given_h, u, mode, start, size, hb):
    """A run's value functional into ``hb``: ``given_h`` (``mode`` 0), or a policy's ``w u``
    (1) or ``w - w u`` (2: the upper side), as :class:`elcvx.engines.blocks.Block` builds it."""
    if mode == 0:
        run = given_h[start:start + size]
        for i in range(size):
            hb[i] = run[i]
        return
    w, ur = F[0][start:start + size], u[start:start + size]
    for i in range(size):
        hb[i] = w[i] * ur[i]
    if mode == 2:
        for i in range(size):
            hb[i] = w[i] - hb[i]


@njit(**JIT)
def features(F, b, hb, value, has_value, start, size, d):
    """A run's features into ``d``: ``w - 1``, ``g - b`` (``F``'s rows ``w, g``) and, with
    ``has_value``, ``h - value`` (``hb``: the run's ``h``), as the numpy kernels' blocks have
    them."""
    m0 = len(F)
    w, d0 = F[0][start:start + size], d[0]
    for i in range(size):
        d0[i] = w[i] - 1.0
    for j in range(1, m0):
        dj, g, bj = d[j], F[j][start:start + size], b[j - 1]
        for i in range(size):
            dj[i] = g[i] - bj
    if has_value:
        dv = d[m0]
        for i in range(size):
            dv[i] = hb[i] - value


@njit(**JIT)
def combine(d, x, m, size, s):
    """``s = sum_j d[j] x[j]`` over the first ``m`` rows, in :func:`kernels.combine`'s order."""
    for i in range(size):
        s[i] = d[0, i] * x[0]
    for j in range(1, m):
        for i in range(size):
            s[i] += d[j, i] * x[j]


@njit(**JIT)
def dot(x, y, size):
    """``x . y`` over the first ``size`` entries (BLAS: vectorised, in its own order)."""
    return np.dot(x[:size], y[:size])


@njit(**JIT)
def counts_total(cw, size, has_c):
    """The sum of the run's counts (a dot product: a sum in one sequence waits for each
    addition)."""
    return np.dot(cw[:size], np.ones(size)) if has_c else float(size)


@njit(**SUMS_JIT)
def mle_run_sums(err, q, r, size):
    """A run's sums for the MLE's pass with the one feature ``d = w - 1`` and no counts:
    ``(sum err q, sum q, sum r, sum r^2, sum q^2, sum q r)`` (``r = d q``), in one loop that
    keeps them in registers."""
    eq = sq = sr = srr = sqq = sqr = 0.0
    for i in range(size):
        eq += err[i] * q[i]
        sq += q[i]
        sr += r[i]
        srr += r[i] * r[i]
        sqq += q[i] * q[i]
        sqr += q[i] * r[i]
    return eq, sq, sr, srr, sqq, sqr


@njit(**SUMS_JIT)
def value_run_sums(hq, q, r, size):
    """``(sum hq, sum hq^2, sum hq q, sum hq r)`` over a run, as :func:`mle_run_sums`."""
    sh = shh = shq = shr = 0.0
    for i in range(size):
        sh += hq[i]
        shh += hq[i] * hq[i]
        shq += hq[i] * q[i]
        shr += hq[i] * r[i]
    return sh, shh, shq, shr


@njit(**SUMS_JIT)
def power_sums(d, cd, size, out, at):
    """``sum c d^k`` for ``k = 3 .. 10`` over a run, added to ``out[at:at + 8]``: one loop that
    keeps the eight sums in registers. (Written out: eight accumulators in an array, or a loop
    over ``k``, stay in memory, 6x slower.)"""
    s3 = s4 = s5 = s6 = s7 = s8 = s9 = s10 = 0.0
    for i in range(size):
        x = d[i]
        t = cd[i] * x * x
        s3 += t
        t *= x
        s4 += t
        t *= x
        s5 += t
        t *= x
        s6 += t
        t *= x
        s7 += t
        t *= x
        s8 += t
        t *= x
        s9 += t
        t *= x
        s10 += t
    out[at] += s3
    out[at + 1] += s4
    out[at + 2] += s5
    out[at + 3] += s6
    out[at + 4] += s7
    out[at + 5] += s8
    out[at + 6] += s9
    out[at + 7] += s10


@njit(**SUMS_JIT)
def stat_sums(w, h, size):
    """``(sum w, sum h, sum (w - h))`` over a run, in one loop."""
    sw = sh = srest = 0.0
    for i in range(size):
        sw += w[i]
        sh += h[i]
        srest += w[i] - h[i]
    return sw, sh, srest


@njit(**SUMS_JIT)
def plain_run_sums(inv, r1, hi, size):
    """A run's sums for :func:`elcvx.passes.kernels_numba._bound` with the one feature ``w`` and
    no counts: ``sum h/a``, ``sum (h/a) (1/a)``, ``sum (h/a) (w/a)``, the means of ``1/a`` and
    ``w/a``, and the three sums of their products about those means, in two loops that keep
    them in registers."""
    h = hr0 = hr1 = s0 = s1 = 0.0
    for i in range(size):
        h += hi[i]
        hr0 += hi[i] * inv[i]
        hr1 += hi[i] * r1[i]
        s0 += inv[i]
        s1 += r1[i]
    m0, m1 = s0 / size, s1 / size
    c00 = c01 = c11 = 0.0
    for i in range(size):
        e0 = inv[i] - m0
        e1 = r1[i] - m1
        c00 += e0 * e0
        c01 += e0 * e1
        c11 += e1 * e1
    return h, hr0, hr1, m0, m1, c00, c01, c11
