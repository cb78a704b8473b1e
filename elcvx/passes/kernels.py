"""The fast path's passes over the rows, as block kernels: each computes one block's partial sums
(a dual objective's value, gradient, Hessian and the size of its terms; a start's or a
certificate's sums), and a merge combines two blocks' partials (or a kernel's ``combine`` all
of a fold's at once). A pass is a fold of a kernel over the blocks of the rows, wherever they
are (:meth:`elcvx.model.Moments.reduce`): in memory, chunk by chunk from files, or on a
cluster's workers. Kernels are plain numpy functions of a block, so they pickle and run
anywhere.

The features are transposed, one contiguous row per feature (built block by block for rows in
memory, :func:`elcvx.engines.blocks.row_blocks`): with a few features a pass of multiply-adds and dot products of
rows is several times faster than matrix products of a narrow array. A pass's cost is its
number of numpy operations on each block: every one the kernels save (a log per 16 rows, no
reduction where the rows' bounds answer, no ``h`` where ``u`` gives it) is a fraction of a log
pass saved.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..engines import backend
from ..engines.blocks import dot, log_sum, wsum
from ..model import origin_stats


def _twin(kernel):
    """``kernel``'s fused numba twin (:mod:`elcvx.passes.kernels_numba`) when the backend is
    numba (:func:`elcvx.engines.backend.kernels`), else None: each kernel below hands its block
    to its twin, so the folds and merges above see the same sums either way."""
    if backend.kernels() != "numba":
        return None
    from . import kernels_numba

    return getattr(kernels_numba, kernel.__name__)


def combine(x, rows, out, tmp):
    """``out = x . rows`` (``rows`` one contiguous row per feature), one multiply-add per row:
    with a few rows this is several times faster than a matrix product of a narrow array."""
    np.multiply(rows[0], x[0], out=out)
    for xj, row in zip(x[1:], rows[1:]):
        out += np.multiply(row, xj, out=tmp)
    return out


def gram(R, cR):
    """``cR @ R.T`` by dot products of rows (symmetric: each pair once)."""
    m = len(R)
    if m == 1:
        return np.array([[dot(cR[0], R[0])]])
    out = np.empty((m, m))
    for a in range(m):
        for b in range(a, m):
            out[a, b] = out[b, a] = dot(cR[a], R[b])
    return out


def add(a, b):
    """Merge of additive partials (arrays); None (outside the domain) absorbs."""
    return None if a is None or b is None else a + b


def _features(blk, h_minus):
    """The block's likelihood features: the rows of ``D``, and ``h - v`` when ``h_minus`` is
    ``(v, scratch row)``."""
    D = list(blk.Dt)
    if h_minus is not None:
        v, e = h_minus
        D.append(np.subtract(blk.h, v, out=e))
    return D


def loglik_block(blk, sc, x, value, origin, scale, extra=0, span=None):
    """The sums of the likelihood ``sum c log(1 + d x)`` over the block's rows ``d`` (with ``h
    - value`` as a last feature when ``value`` is not None); None outside the domain. With ``a =
    1 + d x`` and ``q = scale / a``, flat: ``f``; ``size = sum c |log
    a|`` (the terms that cancel in ``f``); ``sum c q``; ``sum c q d`` (the gradient, times
    ``scale``); ``sum c q^2 d d' / scale`` (minus the Hessian, times ``scale``); with ``extra``
    (an MLE's) ``sum c q h`` and, if it is 2, :func:`quadratic_sums`; last ``sum c q^2 / scale``
    and ``sum c q^2 d / scale`` (the certificate's). ``q`` itself is not kept: :func:`q_block`
    gives it, on request.

    ``origin``: ``x = 0``, where every ``a`` is 1 (no log, no division: the MLE's start);
    ``extra`` then adds :func:`powers` (times ``scale``; if ``extra & 2``) and
    :func:`origin_stats` (if ``extra & 1``) instead. ``f`` is ``sum c log1p(d x)`` to
    rounding: the log of the rounded ``a`` (:func:`elcvx.engines.blocks.log_sum`) plus the rounding's
    error over ``a``, found exactly. ``span``: the least and largest ``d x`` over all rows, if
    known (no reduction per block then)."""
    if (twin := _twin(loglik_block)) is not None:
        return twin(blk, sc, x, value, origin, scale, extra, span)
    m = len(x)
    R, cR = sc[:m], sc[m:2 * m]
    s, a, qb, t1, e, t2, t3 = sc[2 * m:2 * m + 7]
    D = _features(blk, None if value is None else (value, e))
    cb = blk.c
    if origin:
        cD = D if cb is None else [np.multiply(d, cb, out=r) for d, r in zip(D, cR)]
        H = gram(D, cD)
        head = [blk.Dt.shape[1] if cb is None else float(cb.sum())] + [wsum(cb, d) for d in D]
        head += list(H.ravel()) + (powers(D[0], cD[0], cb, t1, t2, t3) if extra & 2 else [])
        tail = []
        if extra & 1:  # (a policy's value: h >= 0)
            tail = [wsum(cb, f) for f in blk.Ft] + origin_stats(blk, t1, nonnegative=True)
        return np.array([0.0, 0.0] + [scale * t for t in head] + tail)
    combine(x, D, s, t1)
    lo, hi = (float(s.min()), float(s.max())) if span is None else span
    if not lo > -1.0:
        return None
    np.add(s, 1.0, out=a)
    q = np.divide(scale, a, out=qb)
    f = log_sum(cb, a, t1, 1.0 + lo, 1.0 + hi)
    # sum |log a| = 2 sum log max(a, 1) - sum log a
    size = 2.0 * log_sum(cb, np.maximum(a, 1.0, out=t1), t2, 1.0, max(1.0, 1.0 + hi)) - f
    # The rounding error of a = 1 + s, exactly: s - (a - 1) where |s| <= 1 (Dekker's), else
    # Knuth's (1 - (a - (a - 1))) + (s - (a - 1)).
    err = np.subtract(a, 1.0, out=t1)
    if hi <= 1.0:
        np.subtract(s, err, out=err)
    else:
        one = np.subtract(a, err, out=t2)
        np.subtract(s, err, out=err)
        err += np.subtract(1.0, one, out=one)
    cq = q if cb is None else np.multiply(q, cb, out=t2)
    f += dot(err, cq) / scale
    for d, r in zip(D, R):
        np.multiply(d, q, out=r)  # scale d / a
    H = gram(R, R if cb is None else np.multiply(R, cb, out=cR)) / scale
    head = [f, size, wsum(None, cq)] + [wsum(cb, r) for r in R] + list(H.ravel())
    if extra:
        head += quadratic_sums(blk.h, q, cq, R, cb, scale, t1, t3, full=extra > 1)
    # (Last: sum c q^2 and sum c q^2 d, over scale: with H, the certificate's sum c q^2 (1, d)
    # (1, d)'.)
    return np.array(head + [dot(cq, y) / scale for y in (q, *R)])


def powers(d, cd, cb, t1, t2, t3):
    """``[sum c d^j for j = 3 .. 10]`` (``cd = c d``; the one-feature MLE's series start,
    :func:`elcvx.fast.starts._series_start`)."""
    p2 = np.multiply(d, d, out=t1)
    cp2 = p2 if cb is None else np.multiply(p2, cb, out=t2)
    p3 = np.multiply(p2, d, out=t3)
    out = [dot(cp2, d), dot(cp2, p2), dot(cp2, p3)]
    cp3 = p3 if cb is None else np.multiply(p3, cb, out=t2)
    out.append(dot(cp3, p3))
    p4 = np.multiply(p2, p2, out=t1)  # (p2 no longer needed)
    out += [dot(cp3, p4)]
    cp4 = p4 if cb is None else np.multiply(p4, cb, out=t2)
    out.append(dot(cp4, p4))
    p5 = np.multiply(p4, d, out=t3)  # (p3 no longer needed)
    out += [dot(cp4, p5)]
    cp5 = p5 if cb is None else np.multiply(p5, cb, out=t2)
    out.append(dot(cp5, p5))
    return [float(t) for t in out]


def quadratic_sums(h, q, cq, R, cb, scale, t, ct, full=True):
    """``sum c q h``, and with ``full`` ``sum c (qh)^2, sum c (qh) q, sum c (qh) r (each r),
    sum c q^2, sum c q r (each)``, over ``scale``, with ``q`` (``cq`` times the counts) and
    ``r = q d`` (``R``) given: with the likelihood's sums, those of the products of ``(h, 1,
    D) / a`` that :func:`quadratic_block` sums (the bound's start, from the MLE's pass).
    ``t``, ``ct``: scratch rows."""
    if not full:
        return [dot(h, cq)]
    hq = np.multiply(h, q, out=t)
    chq = hq if cb is None else np.multiply(hq, cb, out=ct)
    return ([wsum(None, chq)] + [dot(chq, y) / scale for y in (hq, q, *R)]
            + [dot(cq, y) / scale for y in (q, *R)])


def quadratic_block(blk, sc, x):
    """The sums of products of ``(h, 1, D) / (1 + D x)`` over the block (the bound's start,
    :func:`elcvx.fast.starts._quadratic_start`): ``[gram (flat), sums]``."""
    if (twin := _twin(quadratic_block)) is not None:
        return twin(blk, sc, x)
    m = blk.Dt.shape[0]
    Y, cY = sc[:m + 2], sc[m + 2:2 * m + 4]
    inv = combine(x, blk.Dt, Y[1], Y[0])
    inv += 1.0
    np.divide(1.0, inv, out=inv)
    np.multiply(blk.h, inv, out=Y[0])
    np.multiply(blk.Dt, inv, out=Y[2:])
    cb = blk.c
    sums = gram(Y, Y if cb is None else np.multiply(Y, cb, out=cY))
    return np.array(list(sums.ravel()) + [wsum(cb, y) for y in Y])


class BoundSums(NamedTuple):
    """A bound pass's sums: ``sum c log a``, ``sum c h / a``, and the count, mean and centred
    scatter of ``r = F / a`` (``F = (1, w, g)``, or ``(1, w - 1, g - b)`` for
    :func:`centred_bound_block`) under the weights ``c``; ``h_r = sum c (h / a) r`` (the
    certificate's)."""

    log_sum: float
    h_sum: float
    total: float
    mean: np.ndarray
    scatter: np.ndarray
    h_r: np.ndarray

    @classmethod
    def of(cls, part):
        """The sums from :func:`bound_block`'s rows, one per block: the scatter is the blocks'
        own, centred on their means, plus that of their means about the mean (exact to
        rounding, as a two-pass variance; one numpy expression instead of a merge per
        block). One block's are its own (small N: no numpy expression)."""
        if len(part) == 1:
            row = part[0]
            m = math.isqrt(len(row) - 2) - 1
            return cls(row[0], row[1], row[2], np.array(row[3:3 + m]),
                       np.array(row[3 + m:3 + m + m * m]).reshape(m, m),
                       np.array(row[3 + m + m * m:]))
        rows = np.array(part)
        m = math.isqrt(rows.shape[1] - 2) - 1  # (3 + 2 m + m^2 entries)
        totals, means = rows[:, 2], rows[:, 3:3 + m]
        total = float(totals.sum())
        mean = totals @ means / total
        dev = means - mean
        scatter = (rows[:, 3 + m:3 + m + m * m].sum(axis=0).reshape(m, m)
                   + (dev * totals[:, None]).T @ dev)
        return cls(float(rows[:, 0].sum()), float(rows[:, 1].sum()), total, mean, scatter,
                   rows[:, 3 + m + m * m:].sum(axis=0))


def bound_block(blk, sc, y, span=None):
    """The bound's pass at ``y = (gamma, beta, lambda)`` over a block: ``a = F y + h`` and
    ``[sum c log a, sum c h / a, sum c, mean of r (each), the scatter of r about it (flat),
    sum c (h / a) r (each)]`` of ``r = F / a`` (a fold's blocks' rows are summed at once by :meth:`BoundSums.of`, its
    ``combine``, and folds merged by :func:`merge_moments`); None outside
    the domain (some ``a <= 0``). ``q = kappa / a`` is not kept: :func:`bound_q_block` gives it,
    on request. ``span``: bounds ``(lo, hi)`` on every row's ``a`` with ``lo > 0``, if known (no
    reduction per block then). Reads no ``D``."""
    if (twin := _twin(bound_block)) is not None:
        return twin(blk, sc, y, span)
    return _bound_sums(blk.Ft, blk, sc, y, span)


def centred_bound_block(blk, sc, y, span=None, T=None):
    """:func:`bound_block` in centred coordinates, ``F = (1, w - 1, g - b)`` (the rows of ``D``
    and a constant), mixed by ``T`` if given (``F' = T' F``, :mod:`elcvx.passes.frames`): where
    ``g`` is within ``1e-5`` of its target ``b`` (a target at the feasible set's edge)
    ``|lambda|`` reaches ``1e5``, and ``gamma + lambda . g`` cancels to the last digits of
    ``a``, which ``lambda . (g - b)`` keeps."""
    return _bound_sums(_mixed(blk.Dt, T), blk, sc, y, span)


def _mixed(D, T):
    """The rows of ``T' (1, D)`` but the first (``T`` unit upper triangular; None: ``D``)."""
    if T is None:
        return D
    out = np.empty_like(D)
    for j in range(1, T.shape[0]):
        out[j - 1] = D[j - 1]
        for i in range(1, j):
            out[j - 1] += T[i, j] * D[i - 1]
        out[j - 1] += T[0, j]
    return out


def _bound_sums(F, blk, sc, y, span):
    """The sums of :func:`bound_block` with the features ``F`` (rows, the constant left out)."""
    m = F.shape[0] + 1
    R, cR, a, t = sc[:m], sc[m:2 * m], sc[2 * m], sc[2 * m + 1]
    combine(y[1:], F, a, R[0])
    a += blk.h
    a += y[0]
    lo, hi = (float(a.min()), None) if span is None else span
    if not lo > 0:
        return None
    cb = blk.c
    inv = np.divide(1.0, a, out=sc[2 * m + 2])
    logs = log_sum(cb, a, t, lo, hi)
    ch = blk.h if cb is None else np.multiply(blk.h, cb, out=t)
    h_sum = dot(ch, inv)
    chi = np.multiply(ch, inv, out=a)  # c h / a (a's logs are taken)
    np.multiply(F, inv, out=R[1:])
    h_r = [dot(chi, inv)] + [dot(chi, r) for r in R[1:]]  # (r uncentred)
    nb = float(a.size) if cb is None else float(cb.sum())
    mb = [wsum(cb, inv) / nb] + [wsum(cb, r) / nb for r in R[1:]]
    np.subtract(inv, mb[0], out=R[0])  # centred
    for r, mr in zip(R[1:], mb[1:]):
        r -= mr
    H = gram(R, R if cb is None else np.multiply(R, cb, out=cR))
    return [logs, h_sum, nb] + mb + list(H.ravel()) + h_r


def q_block(blk, sc, x, value, scale, out):
    """A likelihood program's ``q = scale / (1 + d x)`` on the block's rows, into ``out``: the
    same operations as :func:`loglik_block`'s, so the same bits. Returns 0.0 (nothing to
    merge)."""
    if (twin := _twin(q_block)) is not None:
        return twin(blk, sc, x, value, scale, out)
    s, a, t1, e = sc[0], sc[1], sc[2], sc[3]
    D = _features(blk, None if value is None else (value, e))
    combine(x, D, s, t1)
    np.add(s, 1.0, out=a)
    np.divide(scale, a, out=out)
    return 0.0


def bound_q_block(blk, sc, y, kappa, out):
    """The bound's ``q = kappa / a``, ``a = F y + h``, on the block's rows, into ``out``: the
    same operations as :func:`bound_block`'s, so the same bits. Returns 0.0."""
    if (twin := _twin(bound_q_block)) is not None:
        return twin(blk, sc, y, kappa, out)
    return _bound_q(blk.Ft, blk, sc, y, kappa, out)


def centred_bound_q_block(blk, sc, y, kappa, T, out):
    """:func:`bound_q_block` of :func:`centred_bound_block`."""
    return _bound_q(_mixed(blk.Dt, T), blk, sc, y, kappa, out)


def _bound_q(F, blk, sc, y, kappa, out):
    a = sc[0]
    combine(y[1:], F, a, sc[1])
    a += blk.h
    a += y[0]
    np.divide(1.0, a, out=out)
    np.multiply(out, kappa, out=out)
    return 0.0


setattr(bound_q_block, "reads_D", False)


def merge_moments(p, q):
    """Two :class:`BoundSums` as one (Chan et al.'s pairwise update of the centred scatter:
    ``E[r r'] - E[r] E[r]'`` would lose the digits that Newton's quadratic convergence needs)."""
    if p is None or q is None:
        return None
    total = p.total + q.total
    delta = q.mean - p.mean
    return BoundSums(p.log_sum + q.log_sum, p.h_sum + q.h_sum, total,
                    p.mean + delta * (q.total / total),
                    p.scatter + (q.scatter + np.outer(delta, delta) * (p.total * q.total / total)),
                    p.h_r + q.h_r)


setattr(bound_block, "reads_D", False)
setattr(bound_block, "combine", BoundSums.of)
setattr(centred_bound_block, "combine", BoundSums.of)
