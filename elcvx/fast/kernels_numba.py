"""The fused twins of the block kernels of :mod:`elcvx.fast.kernels`, compiled by numba.

Each twin takes a block and its parameters as its numpy kernel does and returns the same
partial sums in the same layout (None outside the objective's domain), to rounding: one
compiled call per block that reads each row once and releases the GIL for the whole block, so
that a pass's threads (:mod:`elcvx.engines.threads`) run their blocks at once. The numpy
kernels stay the reference (their docstrings define every sum); :mod:`elcvx.engines.backend`
chooses between them, and :mod:`elcvx.fast.kernels` calls a twin in place of its kernel.

How the sums are taken, and why they agree with the numpy kernels' to about 1e-13 relative:

* each sum is accumulated over runs of :data:`RUN` rows, and the runs' sums added to the
  block's (a rounding error of about ``(RUN + rows / RUN)`` units in the last place, where the
  numpy kernels' BLAS dot products of 10,000 terms are added by ``math.fsum``);
* the sum of logs multiplies the terms in groups of :data:`~elcvx.engines.blocks.LOG_GROUP`
  and takes one log per group, as :func:`elcvx.engines.blocks.log_sum` does (a term outside
  ``[2**-62, 2**62]`` and every term with counts take their own log), and the likelihood's
  adds the exact rounding error of each ``a = 1 + s`` over ``a`` (Knuth's two-sum);
* a bound's centred scatter is each run's about its own mean, merged into the block's by Chan
  et al.'s update (as :func:`elcvx.fast.kernels.merge_moments` merges blocks);
* no operation is reordered or fused (``fastmath=False``: no FMA contraction), so ``1 + d x``
  and ``q`` are the numpy kernels' to the last bit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engines.blocks import LOG_GROUP, LOG_RANGE

#: The rows of a run: each sum is accumulated over a run, then added to the block's.
RUN = 256

_LO, _HI = 2.0 ** -LOG_RANGE, 2.0 ** LOG_RANGE
_NO_COUNTS = np.ones(0)
_JIT = dict(nogil=True, fastmath=False, cache=True)


def _counts(c):
    """``(c, has_c)`` as the compiled functions take them (one type whatever the block)."""
    return (_NO_COUNTS, False) if c is None else (c, True)


@njit(**_JIT)
def _combine(D, x, i, m):
    """``sum_j D[j, i] x[j]`` over the first ``m`` rows, in :func:`kernels.combine`'s order."""
    s = D[0, i] * x[0]
    for j in range(1, m):
        s += D[j, i] * x[j]
    return s


@njit(**_JIT)
def _likelihood(D, h, value, has_value, c, has_c, x, scale, extra, out):
    """:func:`elcvx.fast.kernels.loglik_block`'s sums away from the origin into ``out``
    (zeros, of its length); False outside the domain (some ``1 + d x <= 0``, or NaN)."""
    m0, n = D.shape
    m = m0 + (1 if has_value else 0)
    full = extra > 1
    hh = 3 + m  # the Hessian's
    ex = hh + m * m  # the MLE's extra sums
    tail = ex + (0 if extra == 0 else (1 if not full else 4 + 2 * m))
    acc = np.zeros(out.size)
    d = np.empty(m)
    r = np.empty(m)
    cr = np.empty(m)
    l_hi = l_lo = 0.0  # sum c log max(a, 1), sum c log min(a, 1)
    p_hi = p_lo = 1.0
    k = 0
    f_err = 0.0
    for start in range(0, n, RUN):
        run_err = run_hi = run_lo = 0.0
        for i in range(start, min(start + RUN, n)):
            s = D[0, i] * x[0]
            d[0] = D[0, i]
            for j in range(1, m0):
                d[j] = D[j, i]
                s += d[j] * x[j]
            if has_value:
                d[m0] = h[i] - value
                s += d[m0] * x[m0]
            if not s > -1.0:
                return False
            a = s + 1.0
            t = a - 1.0
            err = (s - t) + (1.0 - (a - t))  # exactly s - (a - 1): Knuth's two-sum
            q = scale / a
            ci = c[i] if has_c else 1.0
            cq = ci * q
            if has_c:
                la = ci * math.log(a)
                run_hi += max(la, 0.0)
                run_lo += min(la, 0.0)
            elif _LO <= a <= _HI:
                p_hi *= max(a, 1.0)
                p_lo *= min(a, 1.0)
                k += 1
                if k == LOG_GROUP:
                    run_hi += math.log(p_hi)
                    run_lo += math.log(p_lo)
                    p_hi = p_lo = 1.0
                    k = 0
            else:
                la = math.log(a)
                run_hi += max(la, 0.0)
                run_lo += min(la, 0.0)
            run_err += err * cq
            acc[2] += cq
            for j in range(m):
                r[j] = d[j] * q
                cr[j] = ci * r[j]
                acc[3 + j] += cr[j]
            for a_ in range(m):
                for b in range(a_, m):
                    acc[hh + a_ * m + b] += cr[a_] * r[b]
            if extra:
                hi = h[i]
                acc[ex] += hi * cq
                if full:
                    hq = hi * q
                    chq = ci * hq
                    acc[ex + 1] += chq * hq
                    acc[ex + 2] += chq * q
                    for j in range(m):
                        acc[ex + 3 + j] += chq * r[j]
            acc[tail] += cq * q
            for j in range(m):
                acc[tail + 1 + j] += cq * r[j]
        f_err += run_err
        l_hi += run_hi
        l_lo += run_lo
        for j in range(out.size):
            out[j] += acc[j]
            acc[j] = 0.0
    l_hi += math.log(p_hi)
    l_lo += math.log(p_lo)
    for a_ in range(m):
        for b in range(a_, m):
            out[hh + b * m + a_] = out[hh + a_ * m + b] = out[hh + a_ * m + b] / scale
    if full:  # (sum c q^2 and sum c q^2 d: the tail's)
        out[ex + 3 + m] = out[tail]
        for j in range(m):
            out[ex + 4 + m + j] = out[tail + 1 + j]
        for j in range(1, 4 + 2 * m):
            out[ex + j] /= scale
    for j in range(tail, out.size):
        out[j] /= scale
    out[0] = (l_hi + l_lo) + f_err / scale
    out[1] = l_hi - l_lo
    return True


@njit(**_JIT)
def _origin(D, h, value, has_value, c, has_c, F, scale, extra, out):
    """:func:`elcvx.fast.kernels.loglik_block`'s sums at the origin into ``out`` (zeros)."""
    m0, n = D.shape
    m = m0 + (1 if has_value else 0)
    hh = 3 + m
    pw = hh + m * m  # the powers'
    st = pw + (8 if extra & 2 else 0)  # the stats'
    nf = F.shape[0]
    acc = np.zeros(out.size)
    d = np.empty(m)
    for start in range(0, n, RUN):
        for i in range(start, min(start + RUN, n)):
            ci = c[i] if has_c else 1.0
            for j in range(m0):
                d[j] = D[j, i]
            if has_value:
                d[m0] = h[i] - value
            acc[2] += ci
            for a_ in range(m):
                cd = ci * d[a_]
                acc[3 + a_] += cd
                for b in range(a_, m):
                    acc[hh + a_ * m + b] += cd * d[b]
            if extra & 2:
                d1 = d[0]
                cd2 = ci * d1 * d1
                p = d1
                for j in range(8):  # sum c d^(3 + j)
                    acc[pw + j] += cd2 * p
                    p *= d1
            if extra & 1:
                for j in range(nf):
                    acc[st + j] += ci * F[j, i]
                acc[st + nf] += ci * h[i]
                acc[st + nf + 2] += ci * (F[0, i] - h[i])
        for j in range(out.size):
            out[j] += acc[j]
            acc[j] = 0.0
    for a_ in range(m):
        for b in range(a_, m):
            out[hh + b * m + a_] = out[hh + a_ * m + b]
    for j in range(2, st):
        out[j] *= scale
    if extra & 1:
        out[st + nf + 1] = out[st + nf]  # sum c |h| = sum c h (a policy's value: h >= 0)
    return True


def loglik_block(blk, sc, x, value, origin, scale, extra=0, span=None):
    """The twin of :func:`elcvx.fast.kernels.loglik_block` (``span`` unused: every row is
    checked)."""
    c, has_c = _counts(blk.c)
    has_value = value is not None
    m = blk.Dt.shape[0] + has_value
    x = np.asarray(x, dtype=float)
    v = 0.0 if value is None else float(value)
    if origin:
        size = 3 + m + m * m + (8 if extra & 2 else 0) + (blk.Ft.shape[0] + 3 if extra & 1 else 0)
        out = np.zeros(size)
        _origin(blk.Dt, blk.h, v, has_value, c, has_c, blk.Ft, scale, extra, out)
        return out
    size = 3 + m + m * m + (0 if not extra else (1 if extra == 1 else 4 + 2 * m)) + 1 + m
    out = np.zeros(size)
    return out if _likelihood(blk.Dt, blk.h, v, has_value, c, has_c, x, scale, extra, out) else None


@njit(**_JIT)
def _bound(F, h, c, has_c, y, out):
    """:func:`elcvx.fast.kernels.bound_block`'s sums into ``out`` (zeros); False outside the
    domain (some ``a <= 0``, or NaN)."""
    nf, n = F.shape
    m = nf + 1
    mean, sc, hr = 3, 3 + m, 3 + m + m * m
    buf = np.empty((m, RUN))
    cbuf = np.empty(RUN)
    run_mean = np.empty(m)
    run_hr = np.empty(m)
    logs = 0.0
    p = 1.0  # (the product of up to LOG_GROUP terms)
    k = 0
    h_sum = 0.0
    total = 0.0
    for start in range(0, n, RUN):
        stop = min(start + RUN, n)
        run_h = run_logs = 0.0
        run_total = 0.0
        for j in range(m):
            run_mean[j] = run_hr[j] = 0.0
        for i in range(start, stop):
            s = F[0, i] * y[1]
            for j in range(1, nf):
                s += F[j, i] * y[1 + j]
            a = s + h[i]
            a += y[0]
            if not a > 0.0:
                return False
            ci = c[i] if has_c else 1.0
            if has_c:
                run_logs += ci * math.log(a)
            elif _LO <= a <= _HI:
                p *= a
                k += 1
                if k == LOG_GROUP:
                    run_logs += math.log(p)
                    p = 1.0
                    k = 0
            else:
                run_logs += math.log(a)
            inv = 1.0 / a
            chi = ci * h[i] * inv
            run_h += chi
            col = i - start
            cbuf[col] = ci
            buf[0, col] = inv
            for j in range(nf):
                buf[1 + j, col] = F[j, i] * inv
            for j in range(m):
                run_hr[j] += chi * buf[j, col]
                run_mean[j] += ci * buf[j, col]
            run_total += ci
        h_sum += run_h
        logs += run_logs
        for j in range(m):
            out[hr + j] += run_hr[j]
            run_mean[j] /= run_total
        # The run's scatter about its own mean, then Chan et al.'s merge into the block's.
        new_total = total + run_total
        share = run_total / new_total
        weight = total * share
        for a_ in range(m):
            for b in range(a_, m):
                s = 0.0
                for col in range(stop - start):
                    s += cbuf[col] * (buf[a_, col] - run_mean[a_]) * (buf[b, col] - run_mean[b])
                out[sc + a_ * m + b] += s + (run_mean[a_] - out[mean + a_]) * (
                    run_mean[b] - out[mean + b]) * weight
        for j in range(m):
            out[mean + j] += (run_mean[j] - out[mean + j]) * share
        total = new_total
    logs += math.log(p)
    for a_ in range(m):
        for b in range(a_ + 1, m):
            out[sc + b * m + a_] = out[sc + a_ * m + b]
    out[0], out[1], out[2] = logs, h_sum, total
    return True


def bound_block(blk, sc, y, span=None):
    """The twin of :func:`elcvx.fast.kernels.bound_block` (``span`` unused: every row is
    checked)."""
    c, has_c = _counts(blk.c)
    m = blk.Ft.shape[0] + 1
    out = np.zeros(3 + 2 * m + m * m)
    if not _bound(blk.Ft, blk.h, c, has_c, np.asarray(y, dtype=float), out):
        return None
    return out.tolist()


@njit(**_JIT)
def _quadratic(D, h, c, has_c, x, out):
    """:func:`elcvx.fast.kernels.quadratic_block`'s sums into ``out`` (zeros)."""
    m0, n = D.shape
    m = m0 + 2
    sums = m * m
    acc = np.zeros(out.size)
    yv = np.empty(m)
    for start in range(0, n, RUN):
        for i in range(start, min(start + RUN, n)):
            inv = 1.0 / (_combine(D, x, i, m0) + 1.0)
            ci = c[i] if has_c else 1.0
            yv[0] = h[i] * inv
            yv[1] = inv
            for j in range(m0):
                yv[2 + j] = D[j, i] * inv
            for a_ in range(m):
                cy = ci * yv[a_]
                acc[sums + a_] += cy
                for b in range(a_, m):
                    acc[a_ * m + b] += cy * yv[b]
        for j in range(out.size):
            out[j] += acc[j]
            acc[j] = 0.0
    for a_ in range(m):
        for b in range(a_ + 1, m):
            out[b * m + a_] = out[a_ * m + b]


def quadratic_block(blk, sc, x):
    """The twin of :func:`elcvx.fast.kernels.quadratic_block`."""
    c, has_c = _counts(blk.c)
    m = blk.Dt.shape[0] + 2
    out = np.zeros(m * m + m)
    _quadratic(blk.Dt, blk.h, c, has_c, np.asarray(x, dtype=float), out)
    return out


@njit(**_JIT)
def _q(D, h, value, has_value, x, scale, out):
    m0, n = D.shape
    for i in range(n):
        s = _combine(D, x, i, m0)
        if has_value:
            s += (h[i] - value) * x[m0]
        out[i] = scale / (s + 1.0)


def q_block(blk, sc, x, value, scale, out):
    """The twin of :func:`elcvx.fast.kernels.q_block` (the same operations: the same bits)."""
    _q(blk.Dt, blk.h, 0.0 if value is None else float(value), value is not None,
       np.asarray(x, dtype=float), scale, out)
    return 0.0


@njit(**_JIT)
def _bound_q(F, h, y, kappa, out):
    nf, n = F.shape
    for i in range(n):
        s = F[0, i] * y[1]
        for j in range(1, nf):
            s += F[j, i] * y[1 + j]
        a = s + h[i]
        a += y[0]
        out[i] = (1.0 / a) * kappa


def bound_q_block(blk, sc, y, kappa, out):
    """The twin of :func:`elcvx.fast.kernels.bound_q_block` (the same operations: the same
    bits)."""
    _bound_q(blk.Ft, blk.h, np.asarray(y, dtype=float), kappa, out)
    return 0.0
