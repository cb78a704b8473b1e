"""The cone fit of the active-set method's KKT checks: ``min |g + A' mu|`` over ``mu >= 0``
(nonnegative least squares), in closed form for the paper's duals (one or two atoms of one or
two variables, where scipy's nnls costs more than the arithmetic), else by scipy."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import nnls


def fit(A, g, maxiter=None, listed=None):
    """``(mu, off)``: ``min |g + A' mu|`` over ``mu >= 0`` and what it leaves, by
    :func:`closed_form` where that answers, else :func:`scipy.optimize.nnls` of ``A'`` and
    ``-g`` (``maxiter`` its own). ``listed``: ``g`` as a list of floats, if the caller has it."""
    found = closed_form(A, np.asarray(g, dtype=float).tolist() if listed is None else listed)
    if found is not None:
        return found
    return nnls(A.T, -g) if maxiter is None else nnls(A.T, -g, maxiter=maxiter)


def closed_form(A, g):
    """``(mu, off)``: ``min |g + A' mu|`` over ``mu >= 0`` (nonnegative least squares, as
    :func:`scipy.optimize.nnls` of ``A'`` and ``-g``) in closed form where ``A`` has one or two
    rows (atoms) of one or two variables, the paper's duals; None elsewhere, and where the
    solution is not unique or is ill-conditioned (two rows within 1e-8 of parallel; with one
    variable, of the same sign), for scipy's nnls (:func:`fit`). The optimum is the least squares fit on its
    support, so it is the best nonnegative one of the fits on each row alone and on both.
    ``g``: a list of floats."""
    p, m = A.shape
    if not (p <= 2 and m <= 2):
        return None
    rows = A.tolist()
    if m == 1:
        rows = [r + [0.0] for r in rows]
        g0, g1 = g[0], 0.0
    else:
        g0, g1 = g
    best, least = None, math.sqrt(g0 * g0 + g1 * g1)
    fits = []
    for i, (a0, a1) in enumerate(rows):
        norm2, along = a0 * a0 + a1 * a1, -(a0 * g0 + a1 * g1)
        fits.append((norm2, along))
        if norm2 > 0.0 and along > 0.0:
            t = along / norm2
            e0, e1 = g0 + t * a0, g1 + t * a1
            left = math.sqrt(e0 * e0 + e1 * e1)
            if left < least:
                best, least = (i, t), left
    mu = [0.0] * p
    if p == 2:
        (a0, a1), (c0, c1) = rows
        (g00, r0), (g11, r1) = fits
        g01 = a0 * c0 + a1 * c1
        if m == 1:
            # One variable: rows of opposite signs are never both used; of the same sign, any
            # mix of them fits alike (scipy's choice is its own).
            if a0 * c0 > 0.0:
                return None
        else:
            det = g00 * g11 - g01 * g01
            if not det > 1e-8 * g00 * g11:
                return None  # (rows parallel: many fits; or nearly so: ill-conditioned)
            t0, t1 = (g11 * r0 - g01 * r1) / det, (g00 * r1 - g01 * r0) / det
            if t0 >= 0.0 and t1 >= 0.0:
                e0, e1 = g0 + t0 * a0 + t1 * c0, g1 + t0 * a1 + t1 * c1
                left = math.sqrt(e0 * e0 + e1 * e1)
                if left < least:
                    return np.array([t0, t1]), left
    if best is not None:
        mu[best[0]] = best[1]
    return np.array(mu), least
