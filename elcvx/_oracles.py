"""The fast path's passes over the rows, as block kernels: each computes one block's partial sums
(a dual objective's value, gradient, Hessian and the size of its terms; a start's or a
certificate's sums), and a merge combines two blocks' partials. A pass is a fold of a kernel over
the blocks of the rows, wherever they are (:meth:`elcvx._moment.Moments.reduce`): in memory, chunk by
chunk from files, or on a cluster's workers. Kernels are plain numpy functions of a block, so
they pickle and run anywhere.

The features are stored transposed, one contiguous row per feature: with a few features a pass
of multiply-adds and dot products of rows is several times faster than matrix products of a
narrow array, and nothing is copied per pass.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._passes import blocks, wsum


class Block(NamedTuple):
    """One block's rows: features ``D`` (rows ``w - 1, g - b``) and ``F`` (rows ``w, g``),
    transposed; the value functional ``h``; counts ``c`` (None: every row once)."""

    Dt: np.ndarray
    Ft: np.ndarray
    h: np.ndarray
    c: np.ndarray | None


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
    out = np.empty((m, m))
    for a in range(m):
        for b in range(a, m):
            out[a, b] = out[b, a] = np.dot(cR[a], R[b])
    return out


def scratch_rows(features: int) -> int:
    """Scratch rows a block's kernels need with ``features`` rows in ``D``."""
    return 2 * features + 6


def fold(kernel, merge, Dt, Ft, h, c, params, sc, out=None):
    """``kernel``'s partials over the blocks of these rows, merged; None as soon as a block's
    is (a point outside the objective's domain). ``out``: an array of one entry per row that
    kernels may fill (``q``), or None."""
    acc = None
    for i, j in blocks(Dt.shape[1]):
        part = kernel(Block(Dt[:, i:j], Ft[:, i:j], h[i:j], None if c is None else c[i:j]),
                      sc[:, :j - i], *params, out=None if out is None else out[i:j])
        if part is None:
            return None
        acc = part if acc is None else merge(acc, part)
    return acc


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


def loglik_block(blk, sc, x, value, origin, out=None):
    """``[f, size, g, -H]`` (flat) of ``sum c log(1 + d x)`` over the block's rows ``d`` (with
    ``h - value`` as a last feature when ``value`` is not None); None outside the domain.
    ``origin``: ``x = 0``, where every ``1 + d x`` is 1 (no log, no division: the MLE's start).
    ``size``: ``sum c |log(1 + d x)|``, the terms that cancel in ``f``."""
    m = len(x)
    R, cR = sc[:m], sc[m:2 * m]
    t, tmp, e = sc[2 * m], sc[2 * m + 1], sc[2 * m + 2]
    D = _features(blk, None if value is None else (value, e))
    cb = blk.c
    if origin:
        H = gram(D, D if cb is None else [np.multiply(d, cb, out=r) for d, r in zip(D, cR)])
        return np.r_[0.0, 0.0, [wsum(cb, d) for d in D], H.ravel()]
    combine(x, D, t, tmp)
    if not t.min() > -1.0:
        return None
    t += 1.0
    # (log, not log1p: twice as fast; f's rounding is within size's, and the likelihood
    # reported is computed again with log1p.)
    la = np.log(t, out=tmp)
    f = wsum(cb, la)
    size = wsum(cb, np.abs(la, out=la))
    for d, r in zip(D, R):
        np.divide(d, t, out=r)  # d / (1 + d x)
    H = gram(R, R if cb is None else np.multiply(R, cb, out=cR))
    return np.r_[f, size, [wsum(cb, r) for r in R], H.ravel()]


def likelihood_block(blk, sc, x, value, n, out=None):
    """The likelihood's last pass at the solution ``x``: ``[l, sum c q, sum c q d (each
    feature), sum c q w, sum c q h]`` with ``q = 1 / (n (1 + d x))``, written to ``out`` when
    given; ``l`` with log1p (the reported likelihood)."""
    D = _features(blk, None if value is None else (value, sc[2]))
    t = combine(x, D, sc[0], sc[1])
    cb = blk.c
    loglik = wsum(cb, np.log1p(t, out=sc[1]))
    q = out if out is not None else sc[3]
    t += 1.0
    t *= n
    np.reciprocal(t, out=q)
    cq = q if cb is None else np.multiply(cb, q, out=sc[1])
    return np.r_[loglik, cq.sum(), [np.dot(d, cq) for d in D], np.dot(blk.Ft[0], cq),
                 np.dot(blk.h, cq)]


def quadratic_block(blk, sc, x, out=None):
    """The sums of products of ``(h, 1, D) / (1 + D x)`` over the block (the bound's start,
    :func:`elcvx._moment._quadratic_start`): ``[gram (flat), sums]``."""
    m = blk.Dt.shape[0]
    Y, cY = sc[:m + 2], sc[m + 2:2 * m + 4]
    inv = combine(x, blk.Dt, Y[1], Y[0])
    inv += 1.0
    np.reciprocal(inv, out=inv)
    np.multiply(blk.h, inv, out=Y[0])
    np.multiply(blk.Dt, inv, out=Y[2:])
    cb = blk.c
    sums = gram(Y, Y if cb is None else np.multiply(Y, cb, out=cY))
    return np.r_[sums.ravel(), [wsum(cb, y) for y in Y]]


class BoundSums(NamedTuple):
    """A bound pass's partial: ``sum c log a``, ``sum c h / a``, and the count, mean and
    centred scatter of ``r = F / a`` (``F = (1, w, g)``) under the weights ``c``."""

    log_sum: float
    h_sum: float
    total: float
    mean: np.ndarray
    scatter: np.ndarray


def bound_block(blk, sc, y, out=None):
    """The bound's pass at ``y = (gamma, beta, lambda)`` over a block: ``a = F y + h``, and
    its :class:`BoundSums`; None outside the domain (some ``a <= 0``). ``1/a`` goes to ``out``
    when given (``q`` is proportional to it)."""
    m = blk.Ft.shape[0] + 1
    R, cR, a = sc[:m], sc[m:2 * m], sc[2 * m]
    combine(y[1:], blk.Ft, a, R[0])
    a += blk.h
    a += y[0]
    if not a.min() > 0:
        return None
    cb = blk.c
    ib = np.divide(1.0, a, out=out if out is not None else sc[2 * m + 1])
    h_sum = float(np.dot(blk.h, ib)) if cb is None else float(np.dot(np.multiply(blk.h, cb, out=cR[0]), ib))
    log_sum = wsum(cb, np.log(a, out=a))
    R[0] = ib
    np.multiply(blk.Ft, ib, out=R[1:])
    nb = float(blk.Dt.shape[1]) if cb is None else float(cb.sum())
    mb = np.array([wsum(cb, r) for r in R]) / nb
    for r, mr in zip(R, mb):
        r -= mr
    return BoundSums(log_sum, h_sum, nb, mb, gram(R, R if cb is None else np.multiply(R, cb, out=cR)))


def merge_moments(p, q):
    """Two :class:`BoundSums` as one (Chan et al.'s pairwise update of the centred scatter:
    ``E[r r'] - E[r] E[r]'`` would lose the digits that Newton's quadratic convergence needs)."""
    if p is None or q is None:
        return None
    total = p.total + q.total
    delta = q.mean - p.mean
    return BoundSums(p.log_sum + q.log_sum, p.h_sum + q.h_sum, total,
                    p.mean + delta * (q.total / total),
                    p.scatter + (q.scatter + np.outer(delta, delta) * (p.total * q.total / total)))


def stats_block(blk, sc, out=None):
    """``([sum c, sum c F (each row), sum c h, sum c |h|, sum c (w - h)], min h)`` over a
    block: the sums the programs need besides their passes."""
    cb = blk.c
    h = blk.h
    return (np.r_[blk.Dt.shape[1] if cb is None else cb.sum(), [wsum(cb, f) for f in blk.Ft],
                  wsum(cb, h), wsum(cb, np.abs(h, out=sc[0])),
                  wsum(cb, np.subtract(blk.Ft[0], h, out=sc[0]))],
            float(h.min()))


def merge_stats(p, q):
    return p[0] + q[0], min(p[1], q[1])
