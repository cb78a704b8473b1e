"""Starts of the fast path's programs (:mod:`elcvx.fast.solve`): a feasible point near a given
one, another solver's point made feasible (:func:`elcvx.verdict.given_starts`), the MLE's start
from the root of its gradient's series (one feature), and the bound's from the profile's quadratic approximation at the MLE,
with the sums for it that the MLE's last pass gives. A good start is a pass saved: the active-set
method then takes one Newton step, or none, before its certificate.
"""

from __future__ import annotations

import math

import numpy as np

from ..certify import SLACK_TOL
from ..passes.kernels import add, quadratic_block
from ..passes.objectives import SERIES_TERMS
from ..verdict import given_starts


def _interior_point(A, h, center):
    """A point ``x`` with ``A x + h > 0`` strictly for every row, near ``center`` where possible."""
    from scipy.optimize import linprog

    m = A.shape[1]
    radius = 1e3 * (1.0 + float(np.abs(center).max(initial=0.0)))
    # max t s.t. A x + h >= t, |x - center| <= radius, t <= 1.
    res = linprog(np.r_[np.zeros(m), -1.0], A_ub=np.column_stack([-A, np.ones(len(A))]), b_ub=h,
                  bounds=[(x - radius, x + radius) for x in center] + [(None, 1.0)],
                  method="highs")
    return res.x[:m] if res.status == 0 and res.x[m] > 0 else None


def _start(A, h, x0, oracle, anchor=None):
    """A feasible point in the oracle's domain: ``x0`` itself when it is one (on a face or
    not); else on the segment from a feasible ``anchor`` (or, failing that, a strictly feasible
    point) to ``x0``, as far towards ``x0`` as the constraints allow, then closer to the anchor
    until inside the domain."""
    s0 = A @ x0 + h
    if (s0 >= 0).all() and math.isfinite(oracle(x0)[0]):
        return x0
    for p in (anchor, "interior"):
        if isinstance(p, str):
            p = _interior_point(A, h, x0)
        if p is None:
            continue
        # The anchor (the MLE's point) may sit on a face, off it by rounding.
        sp = A @ p + h
        if not np.all(sp >= -1e-14 * (np.abs(A) @ np.abs(p) + np.abs(h))):
            continue
        sp = np.maximum(sp, 0.0)
        # A (p + t (x0 - p)) + h = (1 - t) s_p + t s0 >= 0 up to t_max.
        falls = s0 < 0
        t = min(1.0, 0.9 * float(np.min(sp[falls] / (sp[falls] - s0[falls]), initial=np.inf)))
        for _ in range(30):
            x = p + t * (x0 - p)
            if np.all(A @ x + h >= 0) and math.isfinite(oracle(x)[0]):
                return x
            t *= 0.5
        if math.isfinite(oracle(p)[0]):
            return p
    return None


def _onto_faces(A, h, x):
    """``x`` moved onto the faces it meets to rounding (``|A_i x + h_i| <= 1e-12`` of the
    row's size) until their computed slacks are within :data:`~elcvx.certify.SLACK_TOL`'s half
    of 0; ``x`` itself if it is there already, or cannot be brought there. A slack ``s`` at an
    atom of mass ``mu`` is a gap of ``N mu s`` to a certificate, and at ``|x| = 5e4`` the ulps
    of ``x`` leave a slack of ``1e-12``: the move is made on the coordinates of least size
    first (least squares scaled by ``1 / max(1, |x_j|)``), whose ulps are the finest."""
    size = np.maximum(1.0, np.abs(A) @ np.abs(x) + np.abs(h))
    slack = A @ x + h
    met = np.flatnonzero(np.abs(slack) <= 1e-12 * size)
    tol = 0.5 * SLACK_TOL
    if not met.size or np.all(np.abs(slack[met]) <= 1e-3 * tol):
        return x
    scale = 1.0 / np.maximum(1.0, np.abs(x))
    out = x
    for _ in range(4):
        out = out - scale * np.linalg.lstsq(A[met] * scale, slack[met], rcond=None)[0]
        slack = A @ out + h
        if np.all(np.abs(slack[met]) <= 1e-3 * tol):
            break
    return out if slack.min() >= -tol and np.all(np.abs(slack[met]) <= tol) else x


def _given_start(A, h, x0, oracle):
    """The first of :func:`elcvx.verdict.given_starts` (None if there is none): a start to refine
    from."""
    starts = given_starts(A, h, x0, oracle)
    return starts[0] if starts else None


def _quadratic_start(data, x_mle, quantile, B, floor, y0, oracle, work, moments=None,
                     centred=False, frame=None):
    """A start for the bound from the profile dual's quadratic approximation at the MLE (one
    pass, no log, unless the MLE's passes gave its ``moments``: :class:`AtTheMLE`); where it is
    infeasible, as near it as :func:`_start` goes from the MLE's own point ``y0``.

    Near the MLE, with ``d = 1 + D x*``, ``e = (h - v_hat)/d`` and ``F = D/d``, the profile
    statistic is about ``(N (v_hat - v))^2 / S``, ``S = sum c e^2 - s' M^-1 s`` with ``s = sum
    c e F`` and ``M = sum c F F'`` (``e`` with the controls ``F`` regressed out). So the bound
    is about ``v_hat - sqrt(q S)/N``, at ``tau = sqrt(q / S)`` and ``x' = x* - tau M^-1 s``,
    and the profile's denominators ``1 + D x' + tau (h - v)`` are ``tau`` times the bound's.
    ``centred``: ``y`` in the bound's centred coordinates, mapped by ``frame`` (to those of
    a :class:`~elcvx.passes.frames.BoundFrame`), if given.
    """
    n, m = data.n, data.k + 1
    if moments is None:
        work.count(data.rows)
        part = data.reduce(quadratic_block, add, x_mle)
        moments = part[:(m + 2) ** 2].reshape(m + 2, m + 2), part[(m + 2) ** 2:]
    sums, first = moments
    v_hat = first[0] / n
    s_ee = sums[0, 0] - 2.0 * v_hat * sums[0, 1] + v_hat * v_hat * sums[1, 1]
    if s_ee <= 1e-12 * (sums[0, 0] + v_hat * v_hat * sums[1, 1]):
        s_ee = 0.0  # below the expansion's rounding
    s_ef = sums[0, 2:] - v_hat * sums[1, 2:]
    coef = least_squares(sums[2:, 2:], s_ef)
    S = s_ee - float(s_ef @ coef)
    y = y0
    if S > 0 and quantile > 0 and np.isfinite(coef).all():
        tau = math.sqrt(quantile / S)
        v = max(v_hat - math.sqrt(quantile * S) / n, data.stats().h_floor)
        x = x_mle - tau * coef
        gamma = 1.0 - tau * v if centred else 1.0 - x[0] - x[1:] @ data.b - tau * v
        y = np.concatenate(([gamma / tau], x / tau))
        if frame is not None:
            y = frame(y)
    return _start(B, floor, y, oracle, anchor=y0)


def least_squares(M, b):
    """``np.linalg.lstsq(M, b, rcond=None)[0]``, the same bits, in closed form for one equation
    in one unknown (the bound's start without constraints): LAPACK's ``dgelsd`` then scales
    ``b`` by the reciprocal of ``M``'s one entry (``dlascl``), ``b * (1 / m)``, where neither
    is scaled first (entries within ``1e-100 .. 1e100``; elsewhere, and for a zero ``m``,
    numpy's call)."""
    if M.shape == (1, 1):
        m, t = float(M[0, 0]), float(b[0])
        if 1e-100 <= abs(m) <= 1e100 and abs(t) <= 1e100:
            return np.array([t * (1.0 / m)])
    return np.linalg.lstsq(M, b, rcond=None)[0]


def _series_start(oracle, raw, A, h, x0):
    """The one-feature MLE's start past the origin: the root of its gradient's series
    ``sum c d / (1 + d x) = sum_j (-x)^j sum c d^(j+1)`` to the tenth power (the origin's pass
    summed the powers: ``raw.origin``, :class:`~elcvx.passes.objectives.OriginPass`), where its
    truncation moves the root by less than 1e-8: there one Newton step ends at the MLE, where
    two from the origin would not, and at large N (where the MLE is near the origin, ``beta* ~
    N^(-1/2)``) the root is the MLE to its tolerance (its pass is the last: it sums the bounds'
    start, ``raw.near``). The origin ``x0`` where the series does not settle, the root is
    infeasible or outside the domain (one pass lost). ``oracle``: ``raw`` or its memo."""
    origin = raw.origin
    if origin.powers is None:
        return x0
    # sum c d^j / N, j = 1 .. 10, as Python floats: the root takes a few Newton steps on a
    # polynomial of ten terms, for which numpy's calls would cost more than the arithmetic.
    M = [float(t) for t in (*origin.g, *origin.H.ravel(), *origin.powers)]
    if not (all(map(math.isfinite, M)) and M[1] > 0 and M[-3] > 0):
        return x0
    # The series sum_j (-x)^j M[j] (j from 0) and its slope, by Horner's rule.
    coef = [(-1.0) ** j * t for j, t in enumerate(M)]
    x = 0.0
    for _ in range(30):
        value = slope = 0.0
        for c in reversed(coef):
            slope = slope * x + value
            value = value * x + c
        if not slope < 0:
            return x0
        step = -value / slope
        x += step
        if abs(step) <= 1e-15 * abs(x):
            break
    else:
        return x0
    # The truncation, about the next term, at most |M_10 x^9| |x| sqrt(M_10 / M_8), moves the
    # root by that over M_2.
    x1 = np.array([x])
    off = abs(M[-1] * x ** (SERIES_TERMS - 1) * x) * math.sqrt(M[-1] / M[-3]) / M[1]
    if not (x and off <= 1e-8 and np.all(A @ x1 + h >= 0)):
        return x0
    raw.near = True
    if not math.isfinite(oracle(x1)[0]):
        return x0
    return x1
