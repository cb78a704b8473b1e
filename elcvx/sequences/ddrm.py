r"""One side of the heavy-tailed lower confidence sequence (Mineiro 2022, "DDRM"), numpy only.

The problem: ``X_1, X_2, ... >= 0`` arrive in order with ``E[X_t | past] = mu <= 1`` and no
upper bound on ``X_t`` (``X = w u``: importance weights need not be bounded). Find ``L_t`` with
``P(exists t: mu < L_t) <= alpha``.

**The test supermartingale.** Predict ``X_t`` from the past, ``Xhat_t = min(1, (S_{t-1} + 1/2)/t)``
(``S`` the running sum), and write ``e_t = X_t - Xhat_t >= -1``. For ``lambda in (0, 1)`` and
``z = lambda e_t >= -lambda``, ``exp(z - psi(z)) <= 1 + z`` where ``psi`` is any upper bound of
``z - log(1 + z)``; take

* ``z <= 0``: ``z^2 / (2 (1 - lambda))`` (the series of ``-x - log(1 - x)``, ``x = -z <= lambda``);
* ``0 < e <= 1``: ``z^2 / 2``;
* ``e > 1``: ``z - log(1 + z)`` itself (``"exact"``), or its convex interpolation between the
  points ``k^n <= e < k^(n+1)`` of a geometric grid less the strong-convexity gap
  ``alpha (1 - alpha) ((k - 1) k^n)^2 lambda^2 / (2 (1 + lambda k^(n+1))^2)`` (``"binned"``, the
  form Vowpal Wabbit evaluates; an upper bound of the exact term, so valid and slightly wider).

The last piece grows like ``lambda e``, not ``(lambda e)^2``: a huge weight costs the wealth a
factor ``~1/(1 + lambda e)`` instead of ending it, which is why no weight bound is needed. Then
``exp(lambda (X_t - mu) - psi) = exp(lambda (Xhat_t - mu)) exp(z - psi) <= exp(lambda (Xhat_t - mu))
(1 + lambda e_t)``, whose conditional mean is ``exp(y)(1 - y) <= 1`` with ``y = lambda (Xhat_t -
mu)``. So ``M_t(lambda, mu) = exp(lambda (S_t - t mu) - V_t(lambda))``, ``V_t`` the summed
``psi``, is a test supermartingale, and so is a mixture over ``lambda`` with total weight <= 1.

**The mixture.** ``lambda_j = lambdamax xi^-(j + 1/2)``, weights ``s (xi - 1) xi^-(j + 1)``
(``j >= 0``, total ``s``), cut at :data:`TERMS` terms (dropping terms keeps it a
supermartingale). ``lambdamax = 1/2``, ``xi = 8/5``, ``k = 3/2`` and
``s = (1 + Li_2(0.95) / (0.95 zeta(2))) / 2`` are Vowpal Wabbit's defaults. ``log M_t(mu)`` is
convex and decreasing in ``mu``; by Ville's inequality ``L_t = sup {mu : log M_t(mu) >=
log(1/alpha)}`` (0 if none; 1 at most, as ``mu <= 1``), found by Newton's method from ``mu = 0``:
on a convex decreasing function each iterate stays left of the root, so a stopped iteration is
still a valid (lower) bound.

Everything needed for later times is a few running sums (``t``, ``S``, the two quadratic sums and
one tail sum per ``lambda_j``), so a chunk is processed from the state the previous chunk left,
with the same floating-point operations as the whole log in one call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: Terms of the mixture kept: the dropped weight is ``xi^-TERMS`` (``7e-9`` at ``xi = 8/5``; the
#: last ``lambda`` is ``4e-9``, the best one for ``t`` near ``1e16``).
TERMS = 40
LAMBDA_MAX = 0.5
XI = 1.6
BIN_RATIO = 1.5
#: ``Li_2(0.95)``: the dilogarithm in the mixture's total weight (Vowpal Wabbit's constant).
_POLYLOG_2_095 = 1.4406337969700393
TAILS = ("exact", "binned")
#: Rows per block of the ``(rows, TERMS)`` arrays (memory stays ~10 MB).
_BLOCK = 20_000


def mixture(terms: int = TERMS) -> tuple[np.ndarray, np.ndarray]:
    """``(lambda_j, log weight_j)`` of the mixture, ``j = 0 .. terms - 1``."""
    j = np.arange(terms, dtype=float)
    lam = LAMBDA_MAX * np.exp(-(j + 0.5) * np.log(XI))
    scale = 0.5 * (1.0 + _POLYLOG_2_095 / (0.95 * np.pi ** 2 / 6.0))
    logw = np.log(scale) + np.log(XI - 1.0) - (1.0 + j) * np.log(XI)
    return lam, logw


_LAM, _LOGW = mixture()


def tail_gain(e: np.ndarray, tail: str) -> np.ndarray:
    """``lambda_j e - psi_j(e)`` of each error ``e > 1`` at every ``lambda_j``: an ``(e.size,
    TERMS)`` array.

    What a surprise beyond 1 adds to the exponent ``lambda (S - t mu) - V``. Written so that no
    term cancels: ``z - psi(z) = log(1 + z)`` (``"exact"``); binned, ``psi`` interpolates ``z -
    log(1 + z)`` linearly between ``z1 = lambda x1`` and ``z2 = lambda k x1``, whose weights ``a``
    and ``1 - a`` give ``a z1 + (1 - a) z2 = lambda e``, so ``lambda e - psi = a log(1 + z1) + (1 -
    a) log(1 + z2) + gap / 2``. (``lambda S`` less the summed ``psi`` loses every digit once ``e``
    is ``1e16`` times larger than the rest.)
    """
    lam = _LAM[None, :]
    gain: np.ndarray  # (numpy's ufuncs are typed Any)
    if tail == "exact":
        gain = np.log1p(lam * e[:, None])
        return gain
    n = np.floor(np.log(e) / np.log(BIN_RATIO))
    x1 = BIN_RATIO ** n
    a = ((BIN_RATIO * x1 - e) / ((BIN_RATIO - 1.0) * x1))[:, None]
    z1, z2 = lam * x1[:, None], lam * (BIN_RATIO * x1)[:, None]
    gap = (lam * (BIN_RATIO - 1.0) * x1[:, None] / (1.0 + z2)) ** 2
    gain = a * np.log1p(z1) + (1.0 - a) * np.log1p(z2) + 0.5 * a * (1.0 - a) * gap
    return gain


class Side:
    """The running state of one lower sequence on ``X >= 0`` (see the module's docstring).

    The exponent ``lambda_j (S - t mu) - V_j`` is kept as ``lambda_j S' - V'_j - lambda_j t mu``:
    ``S'`` sums ``X`` over the rows whose surprise is at most 1, and ``V'`` is their penalties less
    what each other row adds, ``lambda_j Xhat + tail_gain`` (:func:`tail_gain`). The same number,
    with no huge ``X`` and huge penalty to cancel."""

    def __init__(self, tail: str = "exact"):
        self.tail = tail
        self.t = 0
        self.s = 0.0  # sum of X (the predictor's)
        self.small = 0.0  # S': sum of X over the rows with e <= 1
        self.low = 0.0  # sum of e^2 over e <= 0
        self.mid = 0.0  # sum of e^2 over 0 < e <= 1
        self.gain = np.zeros(TERMS)  # sum of lambda_j Xhat + tail_gain_j(e) over e > 1

    def extend(self, x: np.ndarray, threshold: float) -> np.ndarray:
        """Add ``x`` (in order); return the lower bound ``L_t`` after each row."""
        return self._blocks(x, lambda t, s, v: lower_bounds(threshold, t, s, v))

    def _blocks(self, x: np.ndarray, per_block: Callable[..., np.ndarray]) -> np.ndarray:
        out = [per_block(*self.advance(x[i:i + _BLOCK])) for i in range(0, x.size, _BLOCK)]
        return np.concatenate(out) if out else np.zeros(0)

    def advance(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Add ``x``; return ``(t, S', V')`` after each row (``V'`` is ``(rows, TERMS)``):
        ``lambda_j S' - V'_j = lambda_j S - V_j``."""
        n = x.size
        t = self.t + np.arange(1, n + 1, dtype=float)
        s = np.cumsum(np.concatenate(([self.s], x)))
        xhat = np.minimum(1.0, (s[:-1] + 0.5) / t)
        e = x - xhat
        big = e > 1
        small = np.cumsum(np.concatenate(([self.small], np.where(big, 0.0, x))))[1:]
        lo = np.cumsum(np.concatenate(([self.low], np.where(e <= 0, e, 0.0) ** 2)))[1:]
        mid = np.cumsum(np.concatenate(([self.mid], np.where((e > 0) & (e <= 1), e, 0.0) ** 2)))[1:]
        # Surprises beyond 1 are rare: their running sums are taken over them alone, and each row
        # reads the last one at or before it (row 0 is the carried state).
        gains = _LAM * xhat[big][:, None] + tail_gain(e[big], self.tail)
        gain = np.cumsum(np.vstack((self.gain[None, :], gains)), axis=0)
        lam2 = _LAM * _LAM
        v = lam2 * lo[:, None] / (2.0 * (1.0 - _LAM)) + lam2 * mid[:, None] / 2.0
        v -= gain[np.cumsum(big)]
        self.t += n
        self.s, self.small = float(s[-1]), float(small[-1])
        self.low, self.mid = float(lo[-1]), float(mid[-1])
        self.gain = gain[-1].copy()
        return t, small, v

    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(t, S', V')`` now, as 1-row arrays (for merging shards)."""
        lam2 = _LAM * _LAM
        v = lam2 * self.low / (2.0 * (1.0 - _LAM)) + lam2 * self.mid / 2.0 - self.gain
        return np.array([float(self.t)]), np.array([self.small]), v[None, :]


def log_wealth(mu: float | np.ndarray, t: np.ndarray, s: np.ndarray,
               v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log M_t(mu)`` and its derivative in ``mu``, for rows ``(t, S', V')`` (:class:`Side`),
    ``mu`` per row."""
    return _log_wealth(_LOGW + _LAM * s[:, None] - v, t, np.asarray(mu, dtype=float))


def _log_wealth(base: np.ndarray, t: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log M`` and its slope from ``base_j = log weight_j + lambda_j S' - V'_j``, ``t``, ``mu``."""
    a = base - (t * mu)[:, None] * _LAM
    top = a.max(axis=1, keepdims=True)
    a -= top
    p = np.exp(a, out=a)
    total = p.sum(axis=1)
    # (A row's sums, not a BLAS product: its rounding would depend on the rows beside it.)
    return top[:, 0] + np.log(total), -t * (p * _LAM).sum(axis=1) / total


def lower_bounds(threshold: float, t: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``L = sup {mu in [0, 1] : log M(mu) >= threshold}`` per row ``(t, S', V')`` (:class:`Side`)."""
    base = _LOGW + _LAM * s[:, None] - v

    def wealth(mu: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        value, slope = _log_wealth(base[idx], t[idx], mu)
        return value - threshold, slope

    # Start: the best single term's root. Every term is below the mixture, so log M >= threshold
    # there: the start is left of the root (or the bound is 0 when it is not positive). (t = 0,
    # a shard with no rows yet: log M = log(sum of weights) < 0, and the bound is 0.)
    with np.errstate(divide="ignore", invalid="ignore"):
        start = ((s[:, None] - (v + threshold - _LOGW) / _LAM) / t[:, None]).max(axis=1)
    start = np.where(t > 0, start, 0.0)
    mu = np.clip(start, 0.0, 1.0)
    f, d = wealth(mu, np.arange(t.size))
    idx = np.flatnonzero(f > 0)  # elsewhere L = 0; an iterate clipped at 1 that stays >= 0 ends there
    f, d = f[idx], d[idx]
    for _ in range(200):
        if not idx.size:
            break
        old = mu[idx]
        new = np.minimum(old + f / -d, 1.0)
        mu[idx] = new
        f, d = wealth(new, idx)
        keep = (f > 0) & (new - old > 1e-15 * new)
        idx, f, d = idx[keep], f[keep], d[keep]
    return mu


def reaches(threshold: float, mu: float, t: np.ndarray, s: np.ndarray, v: np.ndarray) -> bool:
    """Whether ``log M(mu) >= threshold`` at some row: the largest term decides most rows
    (``max_j a_j <= log M <= max_j a_j + log(TERMS)``), the exact mixture the rest."""
    a = _LOGW + _LAM * (s - t * mu)[:, None] - v
    top = a.max(axis=1)
    if np.any(top >= threshold):
        return True
    close = top + np.log(TERMS) >= threshold
    return bool(np.any(log_wealth(np.full(int(close.sum()), mu), t[close], s[close], v[close])[0]
                       >= threshold))
