"""The one-sided calibration of an EL bound: ``calibration="signed-bootstrap"``.

Why: a one-sided bound from the two-sided statistic ``2 (L_mle - L(v))`` at level ``1 - 2 alpha``
assumes that its signed root ``r(v) = sign(v_hat - v) sqrt(2 (L_mle - L(v)))`` is symmetric about
0. It is not where few rows carry the estimate: on a 10-action log of the tightness protocol's
kind at N = 1,000 (a weight of 28 on about 14 rows, about 2.7 of them with reward 0), the root at
the true value exceeds the normal quantile 1.645 in 7.8% of logs and falls below -1.645 in
4.8%, and what drives it up is the count of large-weight rows with reward 0, a Poisson count of
mean 2.7 that the sample often shows as 0 or 1 (docs/intervals.md, "One-sided bounds"). Neither
the chi-square, F nor bootstrap threshold sees the side.

What: the lower bound's threshold is ``max(z^2, c^2)``, ``z`` the normal quantile at ``1 - alpha``
and ``c`` the bootstrap critical value of the signed root's upper tail, from ``B`` resamples of
the *least favourable* world: the distribution ``Q`` at the chi-square lower bound itself (the
rows with ``Q``'s probabilities, plus its zero-reward extra atom), whose value is that bound
``v_L``. That is one step of inverting a bootstrap test under the null (the distribution that
maximises the likelihood among those of value ``v_L``): unlike the fitted world, it puts mass on
the zero-reward large weights that a lower value needs, so it sees the skew the sample hides.
The upper bound is the lower bound of ``1 - u``. Two-sided, each end is its side's bound at
``alpha / 2`` (an equal-tailed interval). The floor ``z^2`` keeps the chi-square bound where the
world shows no skew (as :mod:`elcvx.calibration.bootstrap` keeps the chi-square quantile).

How: the resampled statistics are :func:`elcvx.calibration.bootstrap.batch_statistics` at
``v_L``; the sign of a resample's root is the sign of the profile dual's derivative in ``tau`` at
``(beta_mle, 0)``, ``sum c (w u - v_L) / (1 + beta_mle (w - 1))``, which is positive exactly when
the resample's estimate is above ``v_L``. The world and the statistics are computed on the
compressed sample by the fast path's solvers (``method="auto"``), whatever ``method`` solves the
final bound.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dispatch
from ..extra_atom import extra_atom
from . import bootstrap, quantiles


def least_favourable_world(sample, sol, u):
    """``(w, u, p, v)``: the world of the lower-bound program's solution ``sol`` on ``sample``
    with rewards ``u`` (the unit scale's, ``1 - u`` for an upper side): its probabilities ``c_n
    Q_n`` on the rows, its extra atom's mass at the atom's weight with reward 0, and the world's
    value ``v = E_Q[w u]`` (the bound, on the program's scale)."""
    p = sample.c * sol.q
    w = sample.w
    mass, _, w_ex = extra_atom(sample, sol)
    if w_ex is not None and mass > 0 and np.isfinite(w_ex):
        w, u, p = np.append(w, w_ex), np.append(u, 0.0), np.append(p, mass)
    p = p / p.sum()
    return w, u, p, float(np.dot(p, w * u))


def batch_signed_roots(w, u, counts, wmin, wmax, v0):
    """The signed roots ``sign(v_hat_b - v0) sqrt(T_b)`` of the resamples ``counts`` (shape
    ``(m, rows)``) and the fallback count of
    :func:`elcvx.calibration.bootstrap.batch_statistics`."""
    t, fallbacks = bootstrap.batch_statistics(w, u, counts, wmin, wmax, v0)
    d = w - 1.0
    m = counts.shape[0]
    lo, hi = bootstrap._beta_bounds(wmin, wmax)
    beta, _ = bootstrap._line_max(1.0, d, counts, np.full(m, lo), np.full(m, hi))
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(counts > 0, counts * (w * u - v0) / (1.0 + beta[:, None] * d), 0.0).sum(1)
    return np.sign(slope) * np.sqrt(t), fallbacks


def side_threshold(sample, side: str, level: float, resamples_: int,
                   generator: np.random.Generator) -> float:
    """The threshold ``q`` of one end (``side`` ``"lower"`` or ``"upper"``) whose chi-square
    threshold is the chi-square(1) quantile at ``level`` (so the end misses with probability
    ``alpha = (1 - level) / 2`` on its side): ``max(z^2, c^2)`` (the module's docstring);
    ``inf`` when ``B`` is too small for the level."""
    floor = quantiles.quantile("chi2", level, sample.n)
    compact = sample.compress()
    mle, _ = dispatch.mle(compact, "auto")
    sol, _ = dispatch.lower_bound(compact, mle, floor, side, "auto")
    u = compact.u if side == "lower" else 1.0 - compact.u
    w, u, p, v = least_favourable_world(compact, sol, u)
    roots, _ = bootstrap.resampled(w, u, p, v, compact, resamples_, generator, batch_signed_roots)
    c = bootstrap.critical_value(roots, 1.0 - (1.0 - level) / 2.0)
    return max(floor, c * c if c > 0 else 0.0) if math.isfinite(c) else math.inf
