"""The fused twins of the block kernels of :mod:`elcvx.fast.kernels`, compiled by numba.

Each twin takes a block and its parameters as its numpy kernel does and returns the same
partial sums in the same layout (None outside the objective's domain), to rounding: one
compiled call per block that reads each input row once and releases the GIL for the whole
block, so that a pass's threads (:mod:`elcvx.engines.threads`) run their blocks at once. The
numpy kernels stay the reference (their docstrings define every sum);
:mod:`elcvx.engines.backend` chooses between them, and :mod:`elcvx.fast.kernels` calls a twin
in place of its kernel.

A twin goes over its block in runs of :data:`RUN` rows, whose temporaries (``a``, ``q``, the
features over ``a``) stay in the core's first-level cache: a run's elementwise loops compile to
vector instructions, and its sums are BLAS dot products of the run's rows (each added to the
block's sum). So the sums agree with the numpy kernels' (BLAS dot products of 10,000 terms
added by ``math.fsum``) to a few units in the last place of the terms' size:

* the sum of logs multiplies the terms in groups of
  :data:`~elcvx.engines.blocks.LOG_GROUP` and takes one log per group, as
  :func:`elcvx.engines.blocks.log_sum` does (a run with a term outside ``[2**-62, 2**62]``, and
  every run with counts, takes one log per term); the likelihood's adds the exact rounding
  error of each ``a = 1 + s`` over ``a`` (Knuth's two-sum), as its numpy kernel does;
* a bound's centred scatter is each run's about its own mean, merged into the block's by Chan
  et al.'s update (as :func:`elcvx.fast.kernels.merge_moments` merges blocks);
* no operation is reordered or fused (``fastmath=False``: no FMA contraction; and
  ``error_model="numpy"``: a division by zero gives numpy's infinity, not an exception), so
  ``1 + d x`` and ``q`` are the numpy kernels' to the last bit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engines.blocks import LOG_GROUP, LOG_RANGE

#: The rows of a run (its temporaries, a dozen rows of doubles at most, stay in the L1 cache).
RUN = 1024

_LO, _HI = 2.0 ** -LOG_RANGE, 2.0 ** LOG_RANGE
_EMPTY = _NO_COUNTS = np.ones(0)
_JIT = dict(nogil=True, fastmath=False, cache=True, error_model="numpy")


def _columns(blk):
    """A block's columns as the compiled functions take them: ``F``'s rows (a tuple of
    contiguous rows: a row of a 2-d slice has a stride the compiled loops would not know, and
    they would not be vectorised), the targets ``b``, and the value functional's source: ``(h,
    empty, 0)`` for a given ``h``, ``(empty, u, 1)`` for a policy's ``w u``, ``(empty, u, 2)``
    for ``w (1 - u)``."""
    F = tuple(blk.Ft)
    if blk.given_h is not None:
        return F, blk.b, blk.given_h, _EMPTY, 0
    return F, blk.b, _EMPTY, blk.u, 2 if blk.upper else 1


def _counts(c):
    """``(c, has_c)`` as the compiled functions take them (one type whatever the block)."""
    return (_NO_COUNTS, False) if c is None else (np.asarray(c, dtype=float), True)


@njit(**_JIT)
def _weights(c, has_c, start, size, cw):
    """The run's counts into ``cw`` (ones without counts): each sum ``sum c x`` is then a dot
    product ``x . cw``."""
    if has_c:
        run_c = c[start:start + size]
        for i in range(size):
            cw[i] = run_c[i]
    else:
        for i in range(size):
            cw[i] = 1.0


@njit(**_JIT)
def _log_sums(a, size, has_c, cw, prod, split):
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


@njit(**_JIT)
def _h_run(F, given_h, u, mode, start, size, hb):
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


@njit(**_JIT)
def _features(F, b, hb, value, has_value, start, size, d):
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


@njit(**_JIT)
def _combine(d, x, m, size, s):
    """``s = sum_j d[j] x[j]`` over the first ``m`` rows, in :func:`kernels.combine`'s order."""
    for i in range(size):
        s[i] = d[0, i] * x[0]
    for j in range(1, m):
        for i in range(size):
            s[i] += d[j, i] * x[j]


@njit(**_JIT)
def _dot(x, y, size):
    """``x . y`` over the first ``size`` entries (BLAS: vectorised, in its own order)."""
    return np.dot(x[:size], y[:size])


@njit(**_JIT)
def _total(cw, size, has_c):
    """The sum of the run's counts (a dot product: a sum in one sequence waits for each
    addition)."""
    return np.dot(cw[:size], np.ones(size)) if has_c else float(size)


@njit(**_JIT)
def _likelihood(F, targets, given_h, u, mode, value, has_value, c, has_c, x, scale, extra, out):
    """:func:`elcvx.fast.kernels.loglik_block`'s sums away from the origin into ``out``
    (zeros, of its length); False outside the domain (some ``1 + d x <= 0``, or NaN)."""
    m0, n = len(F), F[0].size
    m = m0 + (1 if has_value else 0)
    full = extra > 1
    hh = 3 + m  # the Hessian's
    ex = hh + m * m  # the MLE's extra sums
    tail = ex + (0 if extra == 0 else (1 if not full else 4 + 2 * m))
    d = np.empty((m, RUN))
    r = np.empty((m, RUN))  # d q
    cr = np.empty((m, RUN)) if has_c else r  # c d q
    t = np.empty((9, RUN))
    s, a, q, err, cq, cw, hq, chq, hb = t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]
    if not has_c:
        cq, chq = q, hq
        cw[:] = 1.0
    prod = np.empty(RUN // LOG_GROUP)
    logs = above = f_err = 0.0
    for start in range(0, n, RUN):
        size = min(RUN, n - start)
        if has_value or extra:
            _h_run(F, given_h, u, mode, start, size, hb)
        _features(F, targets, hb, value, has_value, start, size, d)
        _combine(d, x, m, size, s)
        # (Loops of one to three arrays each, as in _bound.)
        inside = 0
        for i in range(size):
            inside += s[i] > -1.0
            a[i] = s[i] + 1.0
        if inside < size:
            return False
        for i in range(size):
            back = a[i] - 1.0
            err[i] = (s[i] - back) + (1.0 - (a[i] - back))  # exactly s - (a - 1): Knuth's two-sum
        for i in range(size):
            q[i] = scale / a[i]
        if has_c:
            _weights(c, has_c, start, size, cw)
        run_logs, run_above = _log_sums(a, size, has_c, cw, prod, True)
        logs += run_logs
        above += run_above
        for j in range(m):
            rj, dj = r[j], d[j]
            for i in range(size):
                rj[i] = dj[i] * q[i]
        if has_c:
            for i in range(size):
                cq[i] = cw[i] * q[i]
            for j in range(m):
                rj, crj = r[j], cr[j]
                for i in range(size):
                    crj[i] = cw[i] * rj[i]
        f_err += _dot(err, cq, size)
        out[2] += _dot(q, cw, size)
        for j in range(m):
            out[3 + j] += _dot(r[j], cw, size)
            for b in range(j, m):
                out[hh + j * m + b] += _dot(cr[j], r[b], size)
        if extra:
            for i in range(size):
                hq[i] = hb[i] * q[i]
            out[ex] += _dot(hq, cw, size)
            if full:
                if has_c:
                    for i in range(size):
                        chq[i] = cw[i] * hq[i]
                out[ex + 1] += _dot(chq, hq, size)
                out[ex + 2] += _dot(chq, q, size)
                for j in range(m):
                    out[ex + 3 + j] += _dot(chq, r[j], size)
        out[tail] += _dot(cq, q, size)
        for j in range(m):
            out[tail + 1 + j] += _dot(cq, r[j], size)
    for j in range(m):
        for b in range(j, m):
            out[hh + b * m + j] = out[hh + j * m + b] = out[hh + j * m + b] / scale
    if full:  # (sum c q^2 and sum c q^2 d: the tail's)
        out[ex + 3 + m] = out[tail]
        for j in range(m):
            out[ex + 4 + m + j] = out[tail + 1 + j]
        for j in range(1, 4 + 2 * m):
            out[ex + j] /= scale
    for j in range(tail, out.size):
        out[j] /= scale
    out[0] = logs + f_err / scale
    out[1] = 2.0 * above - logs  # sum |log a| = 2 sum log max(a, 1) - sum log a
    return True


@njit(**_JIT)
def _origin(F, targets, given_h, u, mode, value, has_value, c, has_c, scale, extra, out):
    """:func:`elcvx.fast.kernels.loglik_block`'s sums at the origin into ``out`` (zeros)."""
    m0, n = len(F), F[0].size
    m = m0 + (1 if has_value else 0)
    hh = 3 + m
    pw = hh + m * m  # the powers'
    st = pw + (8 if extra & 2 else 0)  # the stats'
    nf = len(F)
    d = np.empty((m, RUN))
    cd = np.empty((m, RUN)) if has_c else d  # c d
    t = np.empty((5, RUN))
    cw, p, cp2, rest, hb = t[0], t[1], t[2], t[3], t[4]
    if not has_c:
        cw[:] = 1.0
    for start in range(0, n, RUN):
        size = min(RUN, n - start)
        if has_value or extra & 1:
            _h_run(F, given_h, u, mode, start, size, hb)
        _features(F, targets, hb, value, has_value, start, size, d)
        if has_c:
            _weights(c, has_c, start, size, cw)
        out[2] += _total(cw, size, has_c)
        for j in range(m):
            if has_c:
                cdj, dj = cd[j], d[j]
                for i in range(size):
                    cdj[i] = cw[i] * dj[i]
            out[3 + j] += _dot(d[j], cw, size)
            for b in range(j, m):
                out[hh + j * m + b] += _dot(cd[j], d[b], size)
        if extra & 2:  # sum c d^k for k = 3 .. 10, as (c d^2) . d^(k - 2)
            d0, cd0 = d[0], cd[0]
            for i in range(size):
                cp2[i] = cd0[i] * d0[i]
            for i in range(size):
                p[i] = d0[i]
            for k in range(8):
                out[pw + k] += _dot(cp2, p, size)
                for i in range(size):
                    p[i] *= d0[i]
        if extra & 1:
            for j in range(nf):
                out[st + j] += _dot(F[j][start:start + size], cw, size)
            out[st + nf] += _dot(hb, cw, size)
            w = F[0][start:start + size]
            for i in range(size):
                rest[i] = w[i] - hb[i]
            out[st + nf + 2] += _dot(rest, cw, size)
    for j in range(m):
        for b in range(j, m):
            out[hh + b * m + j] = out[hh + j * m + b]
    for j in range(2, st):
        out[j] *= scale
    if extra & 1:
        out[st + nf + 1] = out[st + nf]  # sum c |h| = sum c h (a policy's value: h >= 0)


def loglik_block(blk, sc, x, value, origin, scale, extra=0, span=None):
    """The twin of :func:`elcvx.fast.kernels.loglik_block` (``span`` unused: every row is
    checked)."""
    c, has_c = _counts(blk.c)
    cols = _columns(blk)
    has_value = value is not None
    m = len(cols[0]) + has_value
    v = 0.0 if value is None else float(value)
    if origin:
        size = 3 + m + m * m + (8 if extra & 2 else 0) + (len(cols[0]) + 3 if extra & 1 else 0)
        out = np.zeros(size)
        _origin(*cols, v, has_value, c, has_c, scale, extra, out)
        return out
    size = 3 + m + m * m + (0 if not extra else (1 if extra == 1 else 4 + 2 * m)) + 1 + m
    out = np.zeros(size)
    ok = _likelihood(*cols, v, has_value, c, has_c, np.asarray(x, dtype=float), scale, extra, out)
    return out if ok else None


@njit(**_JIT)
def _bound(F, given_h, u, mode, c, has_c, y, out):
    """:func:`elcvx.fast.kernels.bound_block`'s sums into ``out`` (zeros); False outside the
    domain (some ``a <= 0``, or NaN)."""
    nf, n = len(F), F[0].size
    m = nf + 1
    mean, sc, hr = 3, 3 + m, 3 + m + m * m
    r = np.empty((m, RUN))  # (1, F) / a, then centred
    cr = np.empty((m, RUN)) if has_c else r  # c r
    t = np.empty((5, RUN))
    a, cw, hi, chi, hb = t[0], t[1], t[2], t[3], t[4]  # hi: h / a; chi: c h / a
    if not has_c:
        chi = hi
        cw[:] = 1.0
    prod = np.empty(RUN // LOG_GROUP)
    run_mean = np.empty(m)
    logs = h_sum = total = 0.0
    for start in range(0, n, RUN):
        size = min(RUN, n - start)
        _h_run(F, given_h, u, mode, start, size, hb)
        w = F[0][start:start + size]
        for i in range(size):
            a[i] = w[i] * y[1]
        for j in range(1, nf):
            fj = F[j][start:start + size]
            for i in range(size):
                a[i] += fj[i] * y[1 + j]
        # (Loops of one or two arrays each: with more, the compiler's checks that they do not
        # overlap outgrow its limit and the loop is not vectorised.)
        inside = 0
        for i in range(size):
            ai = a[i] + hb[i]
            ai += y[0]
            inside += ai > 0.0
            a[i] = ai
        if inside < size:
            return False
        inv = r[0]
        for i in range(size):
            inv[i] = 1.0 / a[i]
        for j in range(nf):
            rj, fj = r[1 + j], F[j][start:start + size]
            for i in range(size):
                rj[i] = fj[i] * inv[i]
        for i in range(size):
            hi[i] = hb[i] * inv[i]
        if has_c:
            _weights(c, has_c, start, size, cw)
            for i in range(size):
                chi[i] = cw[i] * hi[i]
        logs += _log_sums(a, size, has_c, cw, prod, False)[0]
        h_sum += _dot(hi, cw, size)
        run_total = _total(cw, size, has_c)
        for j in range(m):
            out[hr + j] += _dot(chi, r[j], size)
            run_mean[j] = _dot(r[j], cw, size) / run_total
            mj = run_mean[j]
            for i in range(size):
                r[j, i] -= mj
            if has_c:
                for i in range(size):
                    cr[j, i] = cw[i] * r[j, i]
        # The run's scatter about its own mean, merged into the block's (Chan et al.).
        new_total = total + run_total
        share = run_total / new_total
        weight = total * share
        for j in range(m):
            for b in range(j, m):
                out[sc + j * m + b] += _dot(cr[j], r[b], size) + (
                    run_mean[j] - out[mean + j]) * (run_mean[b] - out[mean + b]) * weight
        for j in range(m):
            out[mean + j] += (run_mean[j] - out[mean + j]) * share
        total = new_total
    for j in range(m):
        for b in range(j + 1, m):
            out[sc + b * m + j] = out[sc + j * m + b]
    out[0], out[1], out[2] = logs, h_sum, total
    return True


def bound_block(blk, sc, y, span=None):
    """The twin of :func:`elcvx.fast.kernels.bound_block` (``span`` unused: every row is
    checked)."""
    c, has_c = _counts(blk.c)
    m = blk.Ft.shape[0] + 1
    out = np.zeros(3 + 2 * m + m * m)
    F, _, given_h, u, mode = _columns(blk)
    if not _bound(F, given_h, u, mode, c, has_c, np.asarray(y, dtype=float), out):
        return None
    return out.tolist()


@njit(**_JIT)
def _quadratic(F, targets, given_h, u, mode, c, has_c, x, out):
    """:func:`elcvx.fast.kernels.quadratic_block`'s sums into ``out`` (zeros)."""
    m0, n = len(F), F[0].size
    m = m0 + 2
    sums = m * m
    d = np.empty((m0, RUN))
    yv = np.empty((m, RUN))  # (h, 1, D) / (1 + D x)
    cy = np.empty((m, RUN))
    cw = np.empty(RUN)
    hb = np.empty(RUN)
    for start in range(0, n, RUN):
        size = min(RUN, n - start)
        _h_run(F, given_h, u, mode, start, size, hb)
        _features(F, targets, hb, 0.0, False, start, size, d)
        _combine(d, x, m0, size, yv[1])
        for i in range(size):
            inv = 1.0 / (yv[1, i] + 1.0)
            yv[1, i] = inv
            yv[0, i] = hb[i] * inv
        for j in range(m0):
            for i in range(size):
                yv[2 + j, i] = d[j, i] * yv[1, i]
        _weights(c, has_c, start, size, cw)
        for j in range(m):
            for i in range(size):
                cy[j, i] = cw[i] * yv[j, i]
            out[sums + j] += _dot(yv[j], cw, size)
            for b in range(j, m):
                out[j * m + b] += _dot(cy[j], yv[b], size)
    for j in range(m):
        for b in range(j + 1, m):
            out[b * m + j] = out[j * m + b]


def quadratic_block(blk, sc, x):
    """The twin of :func:`elcvx.fast.kernels.quadratic_block`."""
    c, has_c = _counts(blk.c)
    m = blk.Ft.shape[0] + 2
    out = np.zeros(m * m + m)
    _quadratic(*_columns(blk), c, has_c, np.asarray(x, dtype=float), out)
    return out


@njit(**_JIT)
def _h_at(F, given_h, u, mode, i):
    """Row ``i``'s value functional (:func:`_h_run`'s, one row)."""
    if mode == 0:
        return given_h[i]
    h = F[0][i] * u[i]
    return F[0][i] - h if mode == 2 else h


@njit(**_JIT)
def _q(F, b, given_h, u, mode, value, has_value, x, scale, out):
    m0, n = len(F), F[0].size
    for i in range(n):
        s = (F[0][i] - 1.0) * x[0]
        for j in range(1, m0):
            s += (F[j][i] - b[j - 1]) * x[j]
        if has_value:
            s += (_h_at(F, given_h, u, mode, i) - value) * x[m0]
        out[i] = scale / (s + 1.0)


def q_block(blk, sc, x, value, scale, out):
    """The twin of :func:`elcvx.fast.kernels.q_block` (the same operations: the same bits)."""
    _q(*_columns(blk), 0.0 if value is None else float(value), value is not None,
       np.asarray(x, dtype=float), scale, out)
    return 0.0


@njit(**_JIT)
def _bound_q(F, given_h, u, mode, y, kappa, out):
    nf, n = len(F), F[0].size
    for i in range(n):
        s = F[0][i] * y[1]
        for j in range(1, nf):
            s += F[j][i] * y[1 + j]
        a = s + _h_at(F, given_h, u, mode, i)
        a += y[0]
        out[i] = (1.0 / a) * kappa


def bound_q_block(blk, sc, y, kappa, out):
    """The twin of :func:`elcvx.fast.kernels.bound_q_block` (the same operations: the same
    bits)."""
    F, _, given_h, u, mode = _columns(blk)
    _bound_q(F, given_h, u, mode, np.asarray(y, dtype=float), kappa, out)
    return 0.0
