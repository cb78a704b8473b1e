r"""A finite-sample lower bound at a planned ``N``: EL's dual as a bet, with bets fixed in advance.

**The problem.** Rows ``(w_n, u_n)``, ``n = 1 .. N`` in log order, ``u`` the reward on the unit
scale, ``w`` in ``[wmin, wmax]``; given the rows before it, row ``n`` has ``E[w_n] = 1`` and
``E[w_n u_n] = V``. Find ``L`` with ``P(V < L) <= delta`` at this ``N``.

**The wealth.** For a candidate value ``v`` and bets ``(beta_n, tau_n)`` chosen before row ``n``
is read,

.. math:: K_N(v) = \prod_n \big(1 + \beta_n (w_n - 1) + \tau_n (w_n u_n - v)\big).

Each factor is affine in ``(w, w u)``, which ranges over the polygon with corners ``(w, w u)`` in
``{wmin, wmax} x {0, w}``; if the factor is ``>= 0`` there (at ``w = inf``: its slope ``beta +
tau u >= 0``), it is ``>= 0`` for every row that can occur. At ``v = V`` its conditional mean is
then exactly 1, so ``K_N(V)`` is a nonnegative martingale of mean 1 and, by Markov's inequality,
``P(K_N(V) >= 1/delta) <= delta``. With ``tau_n >= 0`` and every factor ``>= 0`` at ``v = 1``,
``log K_N`` is decreasing in ``v`` on ``[0, 1]``: the values it rejects (``K_N(v) >= 1/delta``)
form an interval ``[0, L]``, and ``V > L`` with probability ``1 - delta``. ``L`` is found by
bisection, keeping the end where ``K_N >= 1/delta`` (a rejected value, so never above the exact
``L``).

**Why EL's dual.** ``sup_{beta, tau} sum_n log(1 + beta (w_n - 1) + tau (w_n u_n - v))`` is EL's
profile likelihood ``l_v`` (the paper's eq. (lrdual)): EL's interval is the best *constant* bet
chosen in hindsight, compared with ``q/2`` (1.35 for a one-sided 95% bound), a threshold that is
right only as ``N`` grows. Here the bets are chosen before the rows they bet on, and the threshold
is ``log(1/delta)`` (3.0 at 95%), right at every ``N``. The ``beta`` term is what ``E[w] = 1`` and a
finite ``wmax`` buy: a bet on ``w u - k (w - 1)`` cancels the noise of *how many* large weights the
log happened to draw, which dominates ``w u`` alone (the bounds of
:mod:`elcvx.estimators.finite_sample` bet on ``w u`` only). With ``wmax = inf``, ``beta >= 0`` and
the gain is small.

**The bets.** The rows are cut into :data:`BLOCKS` blocks of equal size. The first block bets
``beta = 0``, ``tau = lam / (1 + lam)``, ``lam = 1/sqrt(N)`` (logarithmic smoothing's bet at ``v =
1``: no rows yet to learn from). Each later block bets from the ``m`` rows before it:

1. ``P``: those rows reweighted by EL's maximum-likelihood ``Q`` (mass ``q_n`` on row ``n`` and the
   rest on its extra atom, at reward 0), a distribution with ``E_P[w] = 1``, as the rows to come
   have;
2. ``v_hat``: the value that ``N`` rows like ``P`` would reject last, ``(N/m) l_v(P) = log(1/delta)``
   (EL's lower bound of ``P`` at ``q = 2 log(1/delta) m / N``);
3. ``(beta, tau)``: the maximiser of ``l_{v_hat}(P)``, the bet of fastest growth at ``v_hat`` if the
   rows to come are like ``P``; scaled down, if needed, until every factor is ``>= 0`` at ``v = 1``,
   then by ``shrink`` (default 0.8): an estimated bet is noisy, and the growth is concave in the bet,
   so over-betting costs more than under-betting; the worst factor stays ``>= 1 - shrink``.

The bet's solves need not be exact: any bet is valid, a poor one only loses power (so a solve
that does not certify its answer still gives its point). The study of the documentation's page
"Pessimistic bounds" measures the bound against logarithmic smoothing and EL.
"""

from __future__ import annotations

import math

import numpy as np

from .. import fast
from ..extra_atom import extra_atom
from ..errors import InvalidInputError
from ..sample import Sample

#: The bet's scale after it is made safe (see the module docstring).
DEFAULT_SHRINK = 0.8
#: Blocks of rows that share one bet.
BLOCKS = 16


def lower_bound_unit(sample: Sample, u: np.ndarray, delta: float, *, shrink: float = DEFAULT_SHRINK,
                     blocks: int = BLOCKS) -> float:
    """The lower bound ``L`` of ``E[w u]`` (unit scale) at level ``1 - delta``, from the sample's
    weights and the rewards ``u`` (the sample's, or reflected), rows in order."""
    if sample.counts is not None:
        raise InvalidInputError("method='el-betting' bets on the rows one by one in log order; "
                                "this sample has counts (give the rows, not their compression)",
                                field="counts")
    w = sample.w
    u = np.asarray(u, dtype=float)
    beta, tau = bets(w, u, sample.wmin, sample.wmax, delta, shrink=shrink, blocks=blocks)
    return wealth_bound(w, u, beta, tau, math.log(1.0 / delta))


def block_ends(n: int, blocks: int = BLOCKS) -> list[int]:
    """The end of each block: ``blocks`` blocks of (nearly) equal size, fewer when ``n`` is small."""
    return sorted({max(1, int(round(n * (j + 1) / blocks))) for j in range(blocks)})


def bets(w: np.ndarray, u: np.ndarray, wmin: float, wmax: float, delta: float, *,
         shrink: float = DEFAULT_SHRINK, blocks: int = BLOCKS) -> tuple[np.ndarray, np.ndarray]:
    """``(beta, tau)`` per row: each block's bet from the rows before it (module docstring)."""
    n = w.size
    beta, tau = np.zeros(n), np.zeros(n)
    ends = block_ends(n, blocks)
    lam = 1.0 / math.sqrt(n)
    first = (0.0, lam / (1.0 + lam))  # safe at every v in [0, 1]: 1 + tau (x - 1) >= 1 - tau
    for start, end in zip([0] + ends[:-1], ends):
        bet = first if start == 0 else plug_in(w[:start], u[:start], wmin, wmax,
                                               math.log(1.0 / delta) * start / n)
        b, t = safe(*(bet or first), wmin, wmax)
        beta[start:end], tau[start:end] = shrink * b, shrink * t
    return beta, tau


def plug_in(w: np.ndarray, u: np.ndarray, wmin: float, wmax: float,
            target: float) -> tuple[float, float] | None:
    """``(beta, tau)`` maximising ``l_v(P)`` at the ``v`` where ``l_v(P) = target``, ``P`` the rows
    reweighted by EL's MLE; None when no such bet is found (the caller bets as in block 1)."""
    past = Sample(w, u, wmin=wmin, wmax=wmax)
    mle = fast.mle(past, ())
    if mle.q is None or not np.all(np.isfinite(mle.q)):
        return None
    m = float(w.size)
    mass, _, w_ex = extra_atom(past, mle)
    rows_w, rows_u, counts = w, u, m * np.asarray(mle.q)
    if w_ex is not None and math.isfinite(w_ex) and mass > 0.0:  # the atom, at reward 0
        rows_w, rows_u, counts = np.r_[w, w_ex], np.r_[u, 0.0], np.r_[counts, m * mass]
    keep = counts > 0.0
    p = Sample(rows_w[keep], rows_u[keep], counts=counts[keep], wmin=wmin, wmax=wmax)
    p_mle = fast.mle(p, ())
    quantile = 2.0 * (target - p_mle.loglik)
    if not (math.isfinite(quantile) and quantile > 0.0):
        return None
    v_hat = fast.lower_bound(p, (), p_mle.loglik, quantile, "lower", None, p_mle).value
    if not (math.isfinite(v_hat) and 0.0 < v_hat < 1.0):
        return None
    prof = fast.profile(p, (), np.array([v_hat]), None, p_mle)
    b, t = float(prof.beta[0]), float(prof.tau[0])
    if not (math.isfinite(b) and math.isfinite(t) and t > 0.0):
        return None
    return b, t


def safe(beta: float, tau: float, wmin: float, wmax: float) -> tuple[float, float]:
    """``(beta, tau)`` scaled by the largest factor in ``(0, 1]`` that keeps ``1 + beta (w - 1) +
    tau (x - 1) >= 0`` at the corners ``w`` in ``{wmin, wmax}``, ``x`` in ``{0, w}`` (at ``v =
    1``, the least value of a factor with ``tau >= 0``); ``(0, 0)`` when no scale does (a slope
    ``beta + tau x / w < 0`` at ``w = inf``)."""
    lowest = 0.0  # the least of beta (w - 1) + tau (x - 1) over the finite corners
    for wk in (wmin, wmax):
        for xk in (0.0, 1.0):  # x = xk w
            if math.isinf(wk):
                if beta + tau * xk < 0.0:
                    return 0.0, 0.0
                continue
            lowest = min(lowest, beta * (wk - 1.0) + tau * (xk * wk - 1.0))
    if lowest >= -1.0:
        return beta, tau
    scale = 1.0 / -lowest
    return beta * scale, tau * scale


def wealth_bound(w: np.ndarray, u: np.ndarray, beta: np.ndarray, tau: np.ndarray,
                 threshold: float) -> float:
    """``sup {v in [0, 1] : log K_N(v) >= threshold}``, or 0 when no ``v`` is rejected: by
    bisection on the decreasing ``log K_N``, returning a rejected ``v``."""
    base = 1.0 + beta * (w - 1.0) + tau * (w * u)

    def rejects(v: float) -> bool:
        factors = base - tau * v
        if not factors.min() > 0.0:
            return False
        return float(np.log(factors).sum()) >= threshold

    if not rejects(0.0):
        return 0.0
    if rejects(1.0):
        return 1.0
    low, high = 0.0, 1.0
    while high - low > 1e-12:
        mid = 0.5 * (low + high)
        low, high = (mid, high) if rejects(mid) else (low, mid)
    return low
