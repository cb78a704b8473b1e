"""The fused twins of the block kernels of :mod:`elcvx.passes.kernels`, compiled by numba.

Each twin takes a block and its parameters as its numpy kernel does and returns the same
partial sums in the same layout (None outside the objective's domain), to rounding: one
compiled call per block that reads each input row once and releases the GIL for the whole
block, so that a pass's threads (:mod:`elcvx.engines.threads`) run their blocks at once. The
numpy kernels stay the reference (their docstrings define every sum);
:mod:`elcvx.engines.backend` chooses between them, and :mod:`elcvx.passes.kernels` calls a twin
in place of its kernel.

A twin goes over its block in runs of :data:`RUN` rows, whose temporaries (``a``, ``q``, the
features over ``a``) stay in the core's first-level cache: a run's elementwise loops compile to
vector instructions, and its sums are BLAS dot products of the run's rows (each added to the
block's sum). For the paper's own programs (the one feature ``w``, no counts), which every
plain estimate and interval runs, a run's sums are instead taken together in one or two loops
that keep them in registers (the fused sums of :mod:`elcvx.passes.numba_runs`, which alone are
compiled with ``fastmath={"reassoc"}``), instead of a dozen dot products over the run. So the
sums agree with the numpy kernels' (BLAS dot products of 10,000 terms added by ``math.fsum``)
to a few units in the last place of the terms' size:

* the sum of logs multiplies the terms in groups of
  :data:`~elcvx.engines.blocks.LOG_GROUP` and takes one log per group, as
  :func:`elcvx.engines.blocks.log_sum` does (a run with a term outside ``[2**-62, 2**62]``, and
  every run with counts, takes one log per term); the likelihood's adds the exact rounding
  error of each ``a = 1 + s`` over ``a`` (Knuth's two-sum), as its numpy kernel does;
* a bound's centred scatter is each run's about its own mean, merged into the block's by Chan
  et al.'s update (as :func:`elcvx.passes.kernels.merge_moments` merges blocks);
* outside those sums no operation is reordered or fused (``fastmath=False``: no FMA
  contraction; and ``error_model="numpy"``: a division by zero gives numpy's infinity, not an
  exception), so ``1 + d x`` and ``q`` are the numpy kernels' to the last bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engines.blocks import LOG_GROUP
from .numba_runs import (JIT, RUN, combine, counts_total, dot, features, h_run, log_sums,
                         mle_run_sums, plain_run_sums, power_sums, stat_sums, value_run_sums,
                         weights)

_EMPTY = _NO_COUNTS = np.ones(0)


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


@njit(**JIT)
def _likelihood(F, targets, given_h, u, mode, value, has_value, c, has_c, x, scale, extra, out):
    """:func:`elcvx.passes.kernels.loglik_block`'s sums away from the origin into ``out``
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
            h_run(F, given_h, u, mode, start, size, hb)
        features(F, targets, hb, value, has_value, start, size, d)
        combine(d, x, m, size, s)
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
            weights(c, has_c, start, size, cw)
        run_logs, run_above = log_sums(a, size, has_c, cw, prod, True)
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
        if m == 1 and not has_c:  # (the paper's MLE: its sums in fused loops)
            fe, sq, sr, srr, sqq, sqr = mle_run_sums(err, q, r[0], size)
            f_err += fe
            out[2] += sq
            out[3] += sr
            out[hh] += srr
            out[tail] += sqq
            out[tail + 1] += sqr
            if extra:
                for i in range(size):
                    hq[i] = hb[i] * q[i]
                sh, shh, shq, shr = value_run_sums(hq, q, r[0], size)
                out[ex] += sh
                if full:
                    out[ex + 1] += shh
                    out[ex + 2] += shq
                    out[ex + 3] += shr
            continue
        f_err += dot(err, cq, size)
        out[2] += dot(q, cw, size)
        for j in range(m):
            out[3 + j] += dot(r[j], cw, size)
            for b in range(j, m):
                out[hh + j * m + b] += dot(cr[j], r[b], size)
        if extra:
            for i in range(size):
                hq[i] = hb[i] * q[i]
            out[ex] += dot(hq, cw, size)
            if full:
                if has_c:
                    for i in range(size):
                        chq[i] = cw[i] * hq[i]
                out[ex + 1] += dot(chq, hq, size)
                out[ex + 2] += dot(chq, q, size)
                for j in range(m):
                    out[ex + 3 + j] += dot(chq, r[j], size)
        out[tail] += dot(cq, q, size)
        for j in range(m):
            out[tail + 1 + j] += dot(cq, r[j], size)
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


@njit(**JIT)
def _origin(F, targets, given_h, u, mode, value, has_value, c, has_c, scale, extra, out):
    """:func:`elcvx.passes.kernels.loglik_block`'s sums at the origin into ``out`` (zeros)."""
    m0, n = len(F), F[0].size
    m = m0 + (1 if has_value else 0)
    hh = 3 + m
    pw = hh + m * m  # the powers'
    st = pw + (8 if extra & 2 else 0)  # the stats'
    nf = len(F)
    d = np.empty((m, RUN))
    cd = np.empty((m, RUN)) if has_c else d  # c d
    t = np.empty((3, RUN))
    cw, rest, hb = t[0], t[1], t[2]
    if not has_c:
        cw[:] = 1.0
    for start in range(0, n, RUN):
        size = min(RUN, n - start)
        if has_value or extra & 1:
            h_run(F, given_h, u, mode, start, size, hb)
        features(F, targets, hb, value, has_value, start, size, d)
        if has_c:
            weights(c, has_c, start, size, cw)
        out[2] += counts_total(cw, size, has_c)
        for j in range(m):
            if has_c:
                cdj, dj = cd[j], d[j]
                for i in range(size):
                    cdj[i] = cw[i] * dj[i]
            out[3 + j] += dot(d[j], cw, size)
            for b in range(j, m):
                out[hh + j * m + b] += dot(cd[j], d[b], size)
        if extra & 2:
            power_sums(d[0], cd[0], size, out, pw)
        if extra & 1 and nf == 1 and not has_c:  # (the paper's programs: fused)
            sw, sh, srest = stat_sums(F[0][start:start + size], hb, size)
            out[st] += sw
            out[st + 1] += sh
            out[st + 3] += srest
        elif extra & 1:
            for j in range(nf):
                out[st + j] += dot(F[j][start:start + size], cw, size)
            out[st + nf] += dot(hb, cw, size)
            w = F[0][start:start + size]
            for i in range(size):
                rest[i] = w[i] - hb[i]
            out[st + nf + 2] += dot(rest, cw, size)
    for j in range(m):
        for b in range(j, m):
            out[hh + b * m + j] = out[hh + j * m + b]
    for j in range(2, st):
        out[j] *= scale
    if extra & 1:
        out[st + nf + 1] = out[st + nf]  # sum c |h| = sum c h (a policy's value: h >= 0)


def loglik_block(blk, sc, x, value, origin, scale, extra=0, span=None):
    """The twin of :func:`elcvx.passes.kernels.loglik_block` (``span`` unused: every row is
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


@njit(**JIT)
def _bound(F, given_h, u, mode, c, has_c, y, out):
    """:func:`elcvx.passes.kernels.bound_block`'s sums into ``out`` (zeros); False outside the
    domain (some ``a <= 0``, or NaN)."""
    nf, n = len(F), F[0].size
    # The paper's own programs (the one feature w, no counts) take a run's sums in two fused
    # loops (plain_run_sums) instead of eight dot products and a centring pass.
    fused = nf == 1 and not has_c
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
    run_scatter = np.empty((m, m))  # (about the run's mean; the upper triangle)
    logs = h_sum = total = 0.0
    for start in range(0, n, RUN):
        size = min(RUN, n - start)
        h_run(F, given_h, u, mode, start, size, hb)
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
            weights(c, has_c, start, size, cw)
            for i in range(size):
                chi[i] = cw[i] * hi[i]
        logs += log_sums(a, size, has_c, cw, prod, False)[0]
        run_total = counts_total(cw, size, has_c)
        if fused:
            (h, hr0, hr1, run_mean[0], run_mean[1], run_scatter[0, 0], run_scatter[0, 1],
             run_scatter[1, 1]) = plain_run_sums(r[0], r[1], hi, size)
            h_sum += h
            out[hr] += hr0
            out[hr + 1] += hr1
        else:
            h_sum += dot(hi, cw, size)
            for j in range(m):
                out[hr + j] += dot(chi, r[j], size)
                run_mean[j] = dot(r[j], cw, size) / run_total
                mj = run_mean[j]
                for i in range(size):
                    r[j, i] -= mj
                if has_c:
                    for i in range(size):
                        cr[j, i] = cw[i] * r[j, i]
            for j in range(m):
                for b in range(j, m):
                    run_scatter[j, b] = dot(cr[j], r[b], size)
        # The run's scatter about its own mean, merged into the block's (Chan et al.).
        new_total = total + run_total
        share = run_total / new_total
        weight = total * share
        for j in range(m):
            for b in range(j, m):
                out[sc + j * m + b] += run_scatter[j, b] + (
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
    """The twin of :func:`elcvx.passes.kernels.bound_block` (``span`` unused: every row is
    checked)."""
    c, has_c = _counts(blk.c)
    m = blk.Ft.shape[0] + 1
    out = np.zeros(3 + 2 * m + m * m)
    F, _, given_h, u, mode = _columns(blk)
    if not _bound(F, given_h, u, mode, c, has_c, np.asarray(y, dtype=float), out):
        return None
    return out.tolist()


@njit(**JIT)
def _quadratic(F, targets, given_h, u, mode, c, has_c, x, out):
    """:func:`elcvx.passes.kernels.quadratic_block`'s sums into ``out`` (zeros)."""
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
        h_run(F, given_h, u, mode, start, size, hb)
        features(F, targets, hb, 0.0, False, start, size, d)
        combine(d, x, m0, size, yv[1])
        for i in range(size):
            inv = 1.0 / (yv[1, i] + 1.0)
            yv[1, i] = inv
            yv[0, i] = hb[i] * inv
        for j in range(m0):
            for i in range(size):
                yv[2 + j, i] = d[j, i] * yv[1, i]
        weights(c, has_c, start, size, cw)
        for j in range(m):
            for i in range(size):
                cy[j, i] = cw[i] * yv[j, i]
            out[sums + j] += dot(yv[j], cw, size)
            for b in range(j, m):
                out[j * m + b] += dot(cy[j], yv[b], size)
    for j in range(m):
        for b in range(j + 1, m):
            out[b * m + j] = out[j * m + b]


def quadratic_block(blk, sc, x):
    """The twin of :func:`elcvx.passes.kernels.quadratic_block`."""
    c, has_c = _counts(blk.c)
    m = blk.Ft.shape[0] + 2
    out = np.zeros(m * m + m)
    _quadratic(*_columns(blk), c, has_c, np.asarray(x, dtype=float), out)
    return out


@njit(**JIT)
def _h_at(F, given_h, u, mode, i):
    """Row ``i``'s value functional (:func:`h_run`'s, one row)."""
    if mode == 0:
        return given_h[i]
    h = F[0][i] * u[i]
    return F[0][i] - h if mode == 2 else h


@njit(**JIT)
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
    """The twin of :func:`elcvx.passes.kernels.q_block` (the same operations: the same bits)."""
    _q(*_columns(blk), 0.0 if value is None else float(value), value is not None,
       np.asarray(x, dtype=float), scale, out)
    return 0.0


@njit(**JIT)
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
    """The twin of :func:`elcvx.passes.kernels.bound_q_block` (the same operations: the same
    bits)."""
    F, _, given_h, u, mode = _columns(blk)
    _bound_q(F, given_h, u, mode, np.asarray(y, dtype=float), kappa, out)
    return 0.0
