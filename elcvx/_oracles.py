"""The fast path's oracles: a dual objective's value, gradient and Hessian, and the size of its
terms, in one pass over the rows (:mod:`elcvx._passes`), for the solvers of :mod:`elcvx._moment`.

The features are stored transposed, one contiguous row per feature: with a few features a pass
of multiply-adds and dot products of rows is several times faster than matrix products of a
narrow array, and nothing is copied per pass.
"""

from __future__ import annotations

import math

import numpy as np

from ._passes import blocks, scratch, wsum


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


def _quietly(evaluate):
    """``evaluate`` on a float array with numpy's warnings off: the oracles catch overflow and
    0/0 themselves (returning ``-inf``)."""

    def oracle(x):
        with np.errstate(all="ignore"):
            return evaluate(np.asarray(x, dtype=float))

    return oracle


def loglik_oracle(Dt, c, n, work, h=None, v=0.0):
    """``x -> (f, g, H, size)`` of ``(1/N) sum c log(1 + d x)`` over the rows ``d`` of ``D``,
    given transposed (``Dt``: one contiguous row per feature), with a last feature ``h - v``
    when ``h`` is given (the profile's, built block by block rather than copied); ``f = -inf``
    outside its domain; ``size = (sum c |log(1 + d x)| + 1) / N``, the terms that cancel in
    ``f`` (plus one)."""
    m0, rows = Dt.shape
    m = m0 + (h is not None)
    sc = scratch(2 * m + 3, rows)

    @_quietly
    def oracle(x):
        work.count(rows)
        origin = not np.any(x)  # every 1 + d x is 1: no log, no division (the MLE's start)
        f, size, g, H = 0.0, 1.0, np.zeros(m), np.zeros((m, m))
        for i, j in blocks(rows):
            k = j - i
            R, cR = sc[:m, :k], sc[m:2 * m, :k]
            t, tmp, e = sc[2 * m, :k], sc[2 * m + 1, :k], sc[2 * m + 2, :k]
            D = list(Dt[:, i:j])
            if h is not None:
                D.append(np.subtract(h[i:j], v, out=e))
            cb = None if c is None else c[i:j]
            if origin:
                g += [wsum(cb, d) for d in D]
                H -= gram(D, D if cb is None else [np.multiply(d, cb, out=r) for d, r in zip(D, cR)])
                continue
            combine(x, D, t, tmp)
            if not t.min() > -1.0:
                return -math.inf, None, None, math.inf
            t += 1.0
            # (log, not log1p: twice as fast; f's rounding is within size's, and the
            # likelihood reported is computed again with log1p.)
            la = np.log(t, out=tmp)
            f += wsum(cb, la)
            size += wsum(cb, np.abs(la, out=la))
            for d, r in zip(D, R):
                np.divide(d, t, out=r)  # d / (1 + d x)
            g += [wsum(cb, r) for r in R]
            H -= gram(R, R if cb is None else np.multiply(R, cb, out=cR))
        if not np.all(np.isfinite(H)):
            return -math.inf, None, None, math.inf
        return f / n, g / n, H / n, size / n

    return oracle


def bound_oracle(Ft, e, c, n, K, lin, work, floor=0.0):
    """``y -> (f, g, H, size)`` of ``K geomean_c(F y + e) - lin . y`` with ``F = (1, Ft')``
    (the constant column implicit, the others given transposed: one contiguous row per
    feature); ``-inf`` outside its domain; ``size = K geomean + |lin . y| + floor``, the terms
    that cancel in ``f`` and an absolute floor (:func:`elcvx._moment.lower_bound_of`).

    Also records the last point's ``kg = K geomean`` and ``1/a`` (``state``) for ``q``.
    """
    m = Ft.shape[0] + 1
    rows = Ft.shape[1]
    state = {}
    sc = scratch(2 * m + 1, rows)
    inv = np.empty(rows)  # 1/a of the last evaluation (a fresh array per pass costs page faults)

    @_quietly
    def oracle(y):
        work.count(rows)
        # The Hessian is kg times minus the covariance of r = F / a under the weights c / N:
        # accumulated centred, block by block (Chan et al.'s pairwise update), since
        # E[r r'] - E[r] E[r]' loses the digits that Newton's quadratic convergence needs.
        sl, total, mean, scatter = 0.0, 0.0, np.zeros(m), np.zeros((m, m))
        state.clear()  # inv is about to change
        for i, j in blocks(rows):
            k = j - i
            R, cR, a = sc[:m, :k], sc[m:2 * m, :k], sc[2 * m, :k]
            combine(y[1:], Ft[:, i:j], a, R[0])
            a += e[i:j]
            a += y[0]
            if not a.min() > 0:
                return -math.inf, None, None, math.inf
            cb = None if c is None else c[i:j]
            ib = np.divide(1.0, a, out=inv[i:j])
            sl += wsum(cb, np.log(a, out=a))
            R[0] = ib
            np.multiply(Ft[:, i:j], ib, out=R[1:])
            nb = float(k) if cb is None else float(cb.sum())
            mb = np.array([wsum(cb, r) for r in R]) / nb
            for r, mr in zip(R, mb):
                r -= mr
            delta = mb - mean
            scatter += gram(R, R if cb is None else np.multiply(R, cb, out=cR)) + np.outer(delta, delta) * (total * nb / (total + nb))
            mean += delta * (nb / (total + nb))
            total += nb
        kg = K * math.exp(sl / n)
        if not (math.isfinite(kg) and np.all(np.isfinite(scatter))):
            return -math.inf, None, None, math.inf
        state.update(y=y, kg=kg, inv=inv)
        return kg - lin @ y, kg * mean - lin, -kg * scatter / n, kg + abs(float(lin @ y)) + floor

    return oracle, state



def blockwise(X, v):
    """``X @ v`` (``v`` along ``X``'s last axis) summed block by block (one thread of
    OpenBLAS: see :func:`_likelihood`)."""
    return sum(X[..., i:j] @ v[i:j] for i, j in blocks(v.size))
