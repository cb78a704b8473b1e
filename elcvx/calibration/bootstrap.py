"""The bootstrap calibration of the likelihood-ratio statistic (``calibration="bootstrap"``).

Why: with a rare, large importance weight the statistic ``2 (L_mle - L(V))`` at the true value is
heavier-tailed than chi-square(1) even at large N, because its law is driven by the few rows
that carry the large weight; on the paper's synthetic environment (a weight of 1000 with
probability about 1e-4) the chi-square interval covers just under 95% at N = 1e5 and 5e5
(docs/synthetic.md, "Calibrating the interval"). The bootstrap resamples those rows as they are.

What: the bootstrap world is the fitted EL distribution ``Q_mle`` (it meets ``E_Q[w] = 1``, as the
truth does): probability ``c_n Q_n`` on each row, plus the MLE's extra atom (its mass, at its
weight, with the midpoint reward). Its value ``v0 = E_Q[w u]`` is the EL estimate with
``rho="midpoint"``. Each of ``B`` resamples of size N is a multinomial draw of the counts of those rows
(exactly an i.i.d. resample; the sample is compressed to its distinct rows first), and its
statistic ``T_b = 2 (l_b(v0) - l*_b)`` is the profile dual at ``v0`` minus the MLE dual, both on the
resample. The p-value of a statistic ``t`` is ``(1 + #{T_b >= t}) / (B + 1)``; the bootstrap critical
value is the largest ``t`` whose p-value is at least ``1 - level`` (with ``B = 999`` at 95%:
``T_(951)``, which 49 statistics exceed or equal). The interval's threshold is the larger of that and
the chi-square(1) quantile (:func:`calibrate` says why).

How: all resamples share the rows, so their duals are solved together on a ``(B, rows)`` array
of counts: the MLE by a safeguarded Newton iteration on its monotone derivative, the profile by
damped Newton steps from the MLE; where that optimum violates a corner constraint, the sup is on
an edge of the corners' polygon, the best of the four edges' one-dimensional maxima (the same
Newton iteration). A resample none of this settles is solved again by the package's solvers
(``method="auto"``: the fast path, then the general one, then cvxpy).
The statistics are computed this way whatever ``method`` the interval's endpoints use.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dispatch
from ..extra_atom import extra_atom
from ..errors import InvalidInputError
from ..sample import Sample
from . import quantiles

DEFAULT_RESAMPLES = 999
#: The one-sided calibration's default (elcvx.calibration.signed): the default of every one-sided
#: bound, so its cost is every user's; the validity suite measured its coverage at this B.
SIGNED_RESAMPLES = 199
# Resamples per batch: a batch holds a few (batch, rows) float arrays.
_BATCH_ELEMENTS = 1 << 20
_NEWTON_ITER = 60


def resamples(value, calibration: str = "bootstrap") -> int:
    """Check the number of bootstrap resamples: an integer of at least 19 (``B + 1 >= 20``), or
    None for the ``calibration``'s default (:data:`DEFAULT_RESAMPLES`, or
    :data:`SIGNED_RESAMPLES` for ``"signed-bootstrap"``)."""
    if value is None:
        return SIGNED_RESAMPLES if calibration == "signed-bootstrap" else DEFAULT_RESAMPLES
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 19:
        raise InvalidInputError(f"resamples={value!r} must be an integer >= 19")
    return int(value)


def rng(random_state) -> np.random.Generator:
    """``random_state`` (None, an integer seed or a numpy Generator) as a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (isinstance(random_state, (int, np.integer))
                                and not isinstance(random_state, bool) and random_state >= 0):
        return np.random.default_rng(random_state)
    raise InvalidInputError(f"random_state={random_state!r} must be None, a non-negative integer "
                            "or a numpy.random.Generator")


def world(sample, mle_sol):
    """The bootstrap world: rows ``(w, u)``, their probabilities and its value ``v0`` (unit scale)."""
    c = sample.c
    p = c * mle_sol.q
    w, u = sample.w, sample.u
    mass, _, w_ex = extra_atom(sample, mle_sol)
    if w_ex is not None and mass > 0 and np.isfinite(w_ex):
        w, u, p = np.append(w, w_ex), np.append(u, 0.5), np.append(p, mass)
    p = p / p.sum()
    return w, u, p, float(np.dot(p, w * u))


def statistics(sample, resamples_: int, generator: np.random.Generator, progress=None):
    """``(T, v0, fallbacks)``: the ``B`` bootstrap statistics (sorted), the world's value and how
    many resamples the package's solvers settled (see :func:`batch_statistics`). The world is fitted by the fast path (the cvxpy
    path if that fails) on the compressed sample, whatever path the interval's endpoints use, so
    the threshold does not depend on ``method``."""
    sample = sample.compress()
    mle_sol, _ = dispatch.mle(sample, "auto")
    w, u, p, v0 = world(sample, mle_sol)
    out, fallbacks = resampled(w, u, p, v0, sample, resamples_, generator, batch_statistics,
                               progress)
    return out, v0, fallbacks


def resampled(w, u, p, v0, sample, resamples_: int, generator: np.random.Generator,
              statistic, progress=None):
    """``(sorted statistics, fallbacks)`` of ``B`` i.i.d. resamples of size ``sample.n`` from the
    world ``(w, u, p)`` at the value ``v0``: ``statistic(w, u, counts, wmin, wmax, v0)`` returns
    the statistics of a batch of resampled counts and its fallback count (as
    :func:`batch_statistics`). Rows the world repeats are merged first; the counts are drawn in
    batches of a few million elements, with a progress bar on a terminal."""
    # Merge rows that coincide after adding the atom (it may repeat a row).
    key = np.unique(np.stack([w, u]), axis=1, return_inverse=True)
    (w, u), inverse = key[0], key[1].reshape(-1)
    p = np.bincount(inverse, weights=p, minlength=w.size)
    n = sample.n
    draws = max(int(round(n)), 1)
    scale = n / draws  # real counts: the resample's counts sum to N as well
    out = np.empty(resamples_)
    fallbacks = 0
    step = max(1, _BATCH_ELEMENTS // w.size)
    # On a terminal, a bar once the resamples have taken a few seconds (a large log's 999).
    bar = _progress_bar(resamples_, progress)
    for start in range(0, resamples_, step):
        m = min(step, resamples_ - start)
        counts = generator.multinomial(draws, p, size=m).astype(float) * scale
        out[start:start + m], f = statistic(w, u, counts, sample.wmin, sample.wmax, v0)
        fallbacks += f
        bar.update(start + m, force=start + m == resamples_)
    bar.close()
    out.sort()
    return out, fallbacks


def _progress_bar(resamples_: int, progress):
    """The bootstrap's bar on stderr: ``progress`` True, False or None (on a terminal), drawn
    after :data:`elcvx.engines.progress.SLOW_SECONDS`."""
    from ..engines import progress as bars

    enabled = bars.on_terminal() if progress is None else bool(progress)
    return bars.Progress("bootstrap calibration", resamples_, enabled, unit="resamples",
                         delay=bars.SLOW_SECONDS)


def critical_value(sorted_t: np.ndarray, level: float) -> float:
    """The largest ``t`` whose bootstrap p-value is at least ``1 - level``: ``T_(B + 1 - m)`` with
    ``m = ceil((1 - level)(B + 1)) - 1`` statistics at or above it; ``inf`` when ``m < 1`` (too
    few resamples for the level)."""
    b = sorted_t.size
    m = math.ceil((1.0 - level) * (b + 1) - 1e-9) - 1
    return float(sorted_t[b - m]) if m >= 1 else float("inf")


def pvalue(sorted_t: np.ndarray, statistic) -> np.ndarray:
    """``(1 + #{T_b >= t}) / (B + 1)`` for each ``t``; 0 where ``t`` is infinite (an impossible value)."""
    t = np.asarray(statistic, dtype=float)
    above = sorted_t.size - np.searchsorted(sorted_t, t, side="left")
    return np.where(np.isinf(t), 0.0, (1.0 + above) / (sorted_t.size + 1.0))


def calibrate(sample, level: float, resamples_: int, random_state):
    """``(quantile, sorted T)`` of ``calibration="bootstrap"``: the larger of the chi-square(1)
    quantile and the bootstrap critical value.

    The chi-square quantile is a floor because the bootstrap world holds only what the sample
    shows: when the large weights are rare enough that the sample has few or none of them, the
    resamples have fewer still, and their statistics are smaller than the truth's (on the
    synthetic environment the bootstrap critical value never exceeded 3.84 at N <= 10^4, where
    the chi-square interval covers 97-99.7%: docs/synthetic/calibration.md).
    """
    t, _, _ = statistics(sample, resamples_, rng(random_state))
    chi2 = quantiles.quantile("chi2", level, sample.n)
    return max(chi2, critical_value(t, level)), t


def _beta_bounds(wmin, wmax):
    """The MLE's feasible interval of ``beta``: ``1 + beta (w - 1) >= 0`` at ``wmin`` and ``wmax``."""
    return (0.0 if np.isinf(wmax) else -1.0 / (wmax - 1.0)), 1.0 / (1.0 - wmin)


def _corner_constraints(wmin, wmax, v):
    """``G x <= h`` for ``1 + beta (w - 1) + tau (w r - v) >= 0`` at the four corners (at ``w =
    inf``, divided by ``w``: ``beta + tau r >= 0``)."""
    rows, rhs = [], []
    for wk in (wmin, wmax):
        for rk in (0.0, 1.0):
            if np.isinf(wk):
                rows.append([-1.0, -rk])
                rhs.append(0.0)
            else:
                rows.append([-(wk - 1.0), -(wk * rk - v)])
                rhs.append(1.0)
    return np.array(rows), np.array(rhs)


def batch_statistics(w, u, counts, wmin, wmax, v0):
    """The statistics of the resamples ``counts`` (shape ``(m, rows)``) and the fallback count."""
    d = w - 1.0
    e = w * u - v0
    m = counts.shape[0]
    lo, hi = _beta_bounds(wmin, wmax)
    beta, l_mle = _line_max(1.0, d, counts, np.full(m, lo), np.full(m, hi))
    G, h = _corner_constraints(wmin, wmax, v0)
    x, l_v, ok = _profile(d, e, counts, beta)
    ok &= (x @ G.T <= h).all(axis=1)
    # Where the interior optimum is infeasible, the sup is on an edge of the corners' polygon:
    # the best of the four edges' one-dimensional maxima.
    edge = np.flatnonzero(~ok)
    if edge.size:
        best = np.full(edge.size, -np.inf)
        for k in range(G.shape[0]):
            best = np.maximum(best, _edge_max(d, e, counts[edge], G, h, k))
        l_v[edge] = best
        ok[edge] = np.isfinite(best)
    bad = np.flatnonzero(~ok)
    for i in bad:
        # The package's own dispatch: the fast path, then the general solver, then cvxpy.
        keep = counts[i] > 0
        one = Sample(w[keep], u[keep], counts=counts[i, keep], wmin=wmin, wmax=wmax)
        mle, _ = dispatch.mle(one, "auto")
        prof, _ = dispatch.profile(one, np.array([v0]), mle, "auto")
        l_mle[i], l_v[i] = mle.loglik, prof.loglik[0]
    return np.maximum(2.0 * (l_v - l_mle), 0.0), bad.size


def _line_max(alpha, delta, counts, lo, hi):
    """``argmax_s sum c log(alpha + s delta)`` on ``[lo, hi]`` for each row of ``counts``: Newton
    on the decreasing derivative, kept inside a bracket that every evaluation shrinks (at an end
    of the bracket when the derivative keeps its sign). Returns ``(s, max)``."""
    s = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), np.clip(0.0, lo, hi))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(2 * _NEWTON_ITER):
            a = alpha + s[:, None] * delta
            g = (counts * delta / a).sum(axis=1)
            h = (counts * (delta / a) ** 2).sum(axis=1)
            lo = np.where(g > 0, s, lo)
            hi = np.where(g < 0, s, hi)
            new = s + g / h
            inside = (new > lo) & (new < hi) & np.isfinite(new)
            new = np.where(inside, new, 0.5 * (lo + hi))
            done = (np.abs(new - s) <= 1e-15 * (1.0 + np.abs(s))) | (g == 0) | ~np.isfinite(new)
            s = np.where(done, s, new)
            if done.all():
                break
        a = alpha + s[:, None] * delta
        logs = np.where(counts > 0, np.log(np.where(counts > 0, a, 1.0)), 0.0)
        f = (counts * logs).sum(axis=1)
    return s, np.where(np.isfinite(s) & ~np.isnan(f), f, -np.inf)


def _edge_max(d, e, counts, G, h, k):
    """The maximum of the profile dual on the edge ``G[k] x = h[k]`` of the polygon ``G x <= h``
    (``-inf`` where the edge is empty or unbounded)."""
    gk = G[k]
    x0 = gk * h[k] / (gk @ gk)
    t = np.array([-gk[1], gk[0]])
    m = counts.shape[0]
    lo, hi = np.full(m, -np.inf), np.full(m, np.inf)
    slope, room = G @ t, h - G @ x0
    for j in range(G.shape[0]):
        if j == k or slope[j] == 0:
            continue
        bound = room[j] / slope[j]
        lo, hi = (lo, np.minimum(hi, bound)) if slope[j] > 0 else (np.maximum(lo, bound), hi)
    # The log's domain on the live rows: alpha + s delta > 0.
    alpha = 1.0 + x0[0] * d + x0[1] * e
    delta = t[0] * d + t[1] * e
    live = counts > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = -alpha / delta
    lo = np.maximum(lo, np.where(live & (delta > 0), limit, -np.inf).max(axis=1))
    hi = np.minimum(hi, np.where(live & (delta < 0), limit, np.inf).min(axis=1))
    usable = np.isfinite(lo) & np.isfinite(hi) & (lo <= hi)
    _, f = _line_max(alpha, delta, counts, np.where(usable, lo, 0.0), np.where(usable, hi, 0.0))
    return np.where(usable, f, -np.inf)


def _profile(d, e, counts, beta0):
    """``sup_{beta,tau} sum c log(1 + beta d + tau e)`` without the corner constraints, by damped
    Newton steps from ``(beta0, 0)``; returns ``(x, sup, ok)``, ``ok`` where it converged."""
    m = counts.shape[0]
    x = np.stack([beta0, np.zeros(m)], axis=1)
    live = counts > 0

    def value(x):
        """The objective and ``a`` (1 on the rows a resample does not hold: they do not count)."""
        a = np.where(live, 1.0 + x[:, :1] * d + x[:, 1:] * e, 1.0)
        feasible = (a > 0).all(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = (counts * np.log(np.where(feasible[:, None], a, 1.0))).sum(axis=1)
        return np.where(feasible, f, -np.inf), a

    f, a = value(x)
    ok = np.zeros(m, dtype=bool)
    for _ in range(_NEWTON_ITER):
        rd, re = d / a, e / a
        g = np.stack([(counts * rd).sum(1), (counts * re).sum(1)], axis=1)
        h00, h01, h11 = (counts * rd * rd).sum(1), (counts * rd * re).sum(1), (counts * re * re).sum(1)
        det = h00 * h11 - h01 * h01
        regular = det > 1e-12 * (h00 * h11 + 1e-300)
        safe = np.where(regular, det, 1.0)
        p = np.stack([(h11 * g[:, 0] - h01 * g[:, 1]) / safe,
                      (h00 * g[:, 1] - h01 * g[:, 0]) / safe], axis=1)
        decrement = (g * p).sum(1)  # g' (-H)^{-1} g; the gap to the sup is about half of it
        ok = regular & (decrement < 1e-8)
        todo = regular & ~ok
        if not todo.any():
            break
        t = np.ones(m)
        accepted = ~todo
        for _ in range(50):
            fx, ax = value(x + t[:, None] * p)
            good = ~accepted & (fx >= f + 1e-4 * t * decrement)
            x = np.where(good[:, None], x + t[:, None] * p, x)
            f = np.where(good, fx, f)
            a = np.where(good[:, None], ax, a)
            accepted |= good
            if accepted.all():
                break
            t = np.where(accepted, t, 0.5 * t)
    return x, f, ok & np.isfinite(f)
