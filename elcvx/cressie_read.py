r"""The Cressie-Read (lambda = -2) estimate and interval of the paper's last appendix, corrected.

The Cressie-Read power divergence with ``lambda = -2`` is quadratic in ``Q``, so its estimate and
interval have closed forms in six sufficient statistics (``N, sum w, sum w^2, sum w u,
sum w^2 u, sum w^2 u^2``, counts included, ``u`` the reward rescaled to ``[0, 1]``): one pass,
no solver, and statistics from different batches or machines simply add
(:class:`CressieReadStats`).

The programs (corrected; the appendix prints sup / >= and other errors, see docs/baselines.md)
-------------------------------------------------------------------------------------------
``Q`` lives on the ``N`` examples plus one extra atom (``M = N + 1`` atoms, the extra one with
count 1), is *signed* (as in Owen's Euclidean likelihood: the closed forms drop ``Q >= 0``),
and the divergence from the augmented empirical distribution is

.. math:: D(Q) = \sum_j c_j \big(((N+1) Q_j)^2 - 1\big).

* **Estimate**: ``min D(Q)`` s.t. ``sum c Q = 1``, ``sum c Q w = 1``, the extra atom at
  ``w_ex = wmin`` if ``mean(w) >= 1`` else ``wmax``, with reward ``rho``;
  ``V = sum c Q w u`` (extra atom included).
* **Lower bound**: ``min sum c Q w u`` s.t. the same two constraints and
  ``D(Q) <= D_mle + q``, with ``D_mle`` the estimate's minimum and ``q`` the calibration
  quantile; the extra atom is ``(wmin, 0)`` or ``(wmax, 0)`` and the bound is the smaller of the
  two. The upper bound is ``1 -`` the lower bound of ``1 - u``.

The closed forms (derived in docs/baselines.md; tested against the cvxpy programs of
:mod:`elcvx.programs.cr_primal`)
-----------------------------------------------------------------------------------------------
With ``g = w u`` and c-weighted *sums over the M atoms* ``C_ww = sum c (w - wbar)^2``,
``C_wg = sum c (w - wbar)(g - gbar)``, ``C_gg = sum c (g - gbar)^2``, ``wbar = sum c w / M``:

.. math::

    Q_j = \frac{1}{M} + \frac{(1 - \bar w)(w_j - \bar w)}{C_{ww}}
        = \frac{\gamma^* + \beta^* (w_j - 1)}{M},\quad
    \beta^* = \frac{M (1 - \bar w)}{C_{ww}},\ \gamma^* = 1 + \frac{M (1 - \bar w)^2}{C_{ww}},

    \hat V_0 = \bar g + (1 - \bar w) \frac{C_{wg}}{C_{ww}}\ \text{(extra reward 0)},\qquad
    \hat V(\rho) = \hat V_0 + \rho\, Q_{ex} w_{ex},

    v_{lb} = \hat V_0 - \sqrt{R \cdot \mathrm{RSS}},\quad
    \mathrm{RSS} = C_{gg} - \frac{C_{wg}^2}{C_{ww}},\quad
    R = \frac{q}{M^2} + \|Q^{mle}\|^2 - \|Q^{cand}\|^2,\quad
    \|Q\|^2 = \sum_j c_j Q_j^2 = \frac1M + \frac{(1 - \bar w)^2}{C_{ww}}:

the estimate is the control-variate (regression) estimator on the augmented sample, and the
interval is its Wald interval with the regression's residual variance. ``wmax = inf`` is the
limit of these formulas (an atom at infinity with no probability and weighted mass
``1 - mean(w)``): ``V(rho) = rho + mean(w (u - rho))`` and the bound from that candidate is
``mean(w u) - sqrt(R * N var(w u))``.

Exactness: the six sums are kept as exact rationals (each float product ``c w``, ``c w^2``, ...
is added without rounding), so merging statistics is associative and every split of a sample
gives bit-identical statistics; the closed forms are evaluated in exact rational arithmetic up
to the final square root, so no centred moment suffers cancellation. The products are formed
from the factors' mantissas with their powers of two kept apart, so ``c w^2`` never overflows
(any finite weight, up to ``1.8e308``) and is the float product wherever that is finite.
"""

from __future__ import annotations

import functools
import math
import operator
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .calibration import quantiles
from . import _validation as iv
from .cache import PerSample
from .errors import InvalidInputError
from .results import ConfidenceInterval, CressieReadBound, CressieReadEstimate, CressieReadInterval
from .sample import Sample, check_sample

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

    from .engines.rows import Columns
    from .io import Log, LogScan

__all__ = ["CressieReadStats", "estimate", "interval"]

# A residual sum of squares below this fraction of sum c g^2 is rounding of the per-row
# products, not spread: the support is degenerate (see CressieReadStats.interval). A Fraction:
# a float would turn the sums, which can exceed the float range, into floats.
_DEGENERATE_RSS = Fraction(1e-12)
# Rows per bincount: the integer halves of the mantissas (< 2^27) summed over this many rows
# stay below 2^53, so the float64 accumulation in np.bincount is exact.
_CHUNK = 1 << 25


def _exact_sum(x: np.ndarray, scale: np.ndarray | None = None) -> Fraction:
    """The exact sum of a float64 array times ``2**scale`` (an integer array, default 0), as a
    Fraction (no rounding at all).

    Each ``x = m 2^e`` with an integer mantissa ``|m| < 2^53``; mantissas are split in two
    halves of at most 27 bits and summed per exponent with ``np.bincount`` (exact: every partial
    sum is an integer below ``2^53``), then combined with Python integers.
    """
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    if x.size == 0:
        return Fraction(0)
    mant, expo = np.frexp(x)
    m = np.ldexp(mant, 53).astype(np.int64)  # exact: |m| < 2^53
    e = expo.astype(np.int64)
    if scale is not None:
        e += np.asarray(scale, dtype=np.int64).reshape(-1)
    emin = int(e.min())
    k = e - emin
    hi = (m >> 26).astype(np.float64)
    lo = (m & ((1 << 26) - 1)).astype(np.float64)
    total = 0
    for start in range(0, x.size, _CHUNK):
        sl = slice(start, start + _CHUNK)
        h = np.bincount(k[sl], weights=hi[sl])
        l_ = np.bincount(k[sl], weights=lo[sl])
        for j in np.flatnonzero((h != 0) | (l_ != 0)):
            total += ((int(h[j]) << 26) + int(l_[j])) << int(j)
    shift = emin - 53
    return Fraction(total << shift) if shift >= 0 else Fraction(total, 1 << -shift)


def _float(x: Fraction) -> float:
    """``float(x)``, or an infinity of its sign beyond the float range (sums of ``c w^2`` with
    weights above 1e154 are)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _bounds_checked(wmin: float, wmax: float, rmin: float,
                    rmax: float) -> tuple[float, float, float, float]:
    """Validate bounds exactly as :class:`Sample` does (by building a one-row sample at w = 1)."""
    s = Sample([1.0], [rmin], wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
    return s.wmin, s.wmax, s.rmin, s.rmax


class _Support:
    """The closed forms on the sample augmented by one atom ``(w_ex, g = 0)``.

    ``sg, swg, sgg`` are the sample's sums of ``c g``, ``c w g``, ``c g^2`` (the extra atom has
    ``g = 0`` and adds nothing). ``feasible`` is False when ``E_Q[w] = 1`` is impossible on
    this support (every atom at the same weight).
    """

    def __init__(self, n: Fraction, s1: Fraction, s2: Fraction, sg: Fraction, swg: Fraction,
                 sgg: Fraction, w_ex: float) -> None:
        self.w_ex = w_ex
        if math.isinf(w_ex):
            # Limits as w_ex -> inf (docs/baselines.md): Q_n -> 1/N, the atom keeps no
            # probability but weighted mass 1 - mean(w).
            self.feasible = True
            self.norm2 = 1 / n
            self.v0 = sg / n
            self.rss = sgg - sg * sg / n
            self.mass_ex = Fraction(0)
            self.wmass_ex = 1 - s1 / n
            self.beta = Fraction(0)
            self.gamma = (n + 1) / n
            self.m = n + 1
            return
        x = Fraction(w_ex)
        m = n + 1
        sw = s1 + x
        cww = s2 + x * x - sw * sw / m
        self.m = m
        self.feasible = cww > 0
        if not self.feasible:
            return
        wbar = sw / m
        cwg = swg - sw * sg / m
        cgg = sgg - sg * sg / m
        t = (1 - wbar) / cww
        self.norm2 = 1 / m + (1 - wbar) * t
        self.v0 = sg / m + t * cwg
        self.rss = cgg - cwg * cwg / cww
        self.mass_ex = 1 / m + t * (x - wbar)
        self.wmass_ex = self.mass_ex * x
        self.beta = m * t
        self.gamma = 1 + m * (1 - wbar) * t


#: :meth:`CressieReadStats.from_sample` of each sample or scanned log, handed out as copies (key:
#: the sample object; lifetime: the sample's).
_STATS = PerSample("the CR(-2) statistics (elcvx.cressie_read.CressieReadStats.from_sample)")


class CressieReadStats:
    r"""Sufficient statistics of the Cressie-Read (lambda = -2) estimate and interval.

    Holds ``N = sum c`` and the sums of ``c w``, ``c w^2``, ``c w u``, ``c w^2 u``, ``c w^2 u^2``
    (``u = (r - rmin)/(rmax - rmin)``, the reward on the unit scale) together with the bounds,
    all exactly (rational numbers; see the module docstring). Fill it from a sample
    (:meth:`from_sample`) or batch by batch (:meth:`update`); merge statistics of different
    batches or machines with ``+`` (or ``sum``); then :meth:`estimate` and :meth:`interval`
    need no rows and equal :func:`estimate` and :func:`interval` on the whole sample.

    Parameters
    ----------
    wmin, wmax, rmin, rmax : float
        The bounds, validated as by :class:`~elcvx.Sample` (``wmax`` may be ``inf``).

    Examples
    --------
    >>> from elcvx.cressie_read import CressieReadStats
    >>> a = CressieReadStats(wmax=10).update([0.0, 2.0], [0.0, 1.0])
    >>> b = CressieReadStats(wmax=10).update([2.0, 0.5], [0.5, 1.0])
    >>> both = a + b
    >>> both.n, both.sum_w, both.sum_wu
    (4.0, 4.5, 3.5)
    >>> round(both.estimate().value, 4)
    0.7738
    """

    __slots__ = ("wmin", "wmax", "rmin", "rmax", "_n", "_s1", "_s2", "_sg", "_swg", "_sgg")

    def __init__(self, *, wmin: float = 0.0, wmax: float, rmin: float = 0.0,
                 rmax: float = 1.0) -> None:
        self.wmin, self.wmax, self.rmin, self.rmax = _bounds_checked(wmin, wmax, rmin, rmax)
        self._n = self._s1 = self._s2 = self._sg = self._swg = self._sgg = Fraction(0)

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def from_sample(cls, sample: Sample | Log | LogScan) -> CressieReadStats:
        """The statistics of a whole :class:`~elcvx.Sample` (its counts and bounds), or of a log
        scanned in chunks (:func:`elcvx.io.scan_log`: each chunk's statistics, merged)."""
        sample = check_sample(sample, scans=True)
        bounds = (sample.wmin, sample.wmax, sample.rmin, sample.rmax)
        return _STATS.get(sample, lambda: (
            _chunk_stats(bounds, sample) if isinstance(sample, Sample) else
            sample.engine.map_reduce(functools.partial(_chunk_stats, bounds), operator.add)
        )).copy()

    def update(self, w: ArrayLike, r: ArrayLike,
               counts: ArrayLike | None = None) -> CressieReadStats:
        """Add a batch of rows in place (validated as :class:`~elcvx.Sample` validates) and return self.

        Raises
        ------
        InvalidInputError
            On NaN/inf, weights outside ``[wmin, wmax]``, rewards outside ``[rmin, rmax]``,
            length mismatch, an empty batch or a non-positive count (the message names the
            field and value).
        """
        batch = Sample(w, r, counts=counts, wmin=self.wmin, wmax=self.wmax, rmin=self.rmin,
                       rmax=self.rmax)
        self._add_rows(batch)
        return self

    def _add_rows(self, s: Sample | Columns) -> None:
        """Add the rows of ``s`` (a :class:`~elcvx.Sample`, or a chunk's
        :class:`~elcvx.engines.rows.Columns`: ``w``, ``u`` and counts ``c``, None for ones)."""
        # Each product from the factors' mantissas (in [1/2, 1), so products lie in [1/32, 1):
        # no overflow, no underflow), its power of two summed apart. A power of two changes no
        # rounding: these are the float products c*w*w, ... wherever those are normal numbers,
        # and they exist for every weight up to 1.8e308.
        counts = np.ones_like(s.w) if s.c is None else s.c
        c, ce = np.frexp(counts)
        w, we = np.frexp(s.w)
        u, ue = np.frexp(s.u)
        g, ge = w * u, we + ue
        cw, cwe = c * w, ce + we
        cg, cge = c * g, ce + ge
        self._n += _exact_sum(counts)
        self._s1 += _exact_sum(cw, cwe)
        self._s2 += _exact_sum(cw * w, cwe + we)
        self._sg += _exact_sum(cg, cge)
        self._swg += _exact_sum(cw * g, cwe + ge)
        self._sgg += _exact_sum(cg * g, cge + ge)

    def copy(self) -> CressieReadStats:
        out = CressieReadStats.__new__(CressieReadStats)
        for name in self.__slots__:
            setattr(out, name, getattr(self, name))
        return out

    def __add__(self, other: object) -> CressieReadStats:
        if not isinstance(other, CressieReadStats):
            return NotImplemented
        for name in ("wmin", "wmax", "rmin", "rmax"):
            a, b = getattr(self, name), getattr(other, name)
            if a != b:
                raise InvalidInputError(
                    f"cannot merge CressieReadStats with different {name}: {a!r} and {b!r}")
        out = self.copy()
        for name in ("_n", "_s1", "_s2", "_sg", "_swg", "_sgg"):
            setattr(out, name, getattr(self, name) + getattr(other, name))
        return out

    def __radd__(self, other: object) -> CressieReadStats:
        if isinstance(other, int) and other == 0:  # sum([...]) starts from 0
            return self.copy()
        return NotImplemented

    def __repr__(self) -> str:
        return (f"CressieReadStats(n={self.n:g}, wmin={self.wmin!r}, wmax={self.wmax!r}, "
                f"rmin={self.rmin!r}, rmax={self.rmax!r})")

    # -- the statistics, as floats -----------------------------------------------------------------
    @property
    def n(self) -> float:
        """``N = sum c``."""
        return float(self._n)

    @property
    def sum_w(self) -> float:
        return _float(self._s1)

    @property
    def sum_w2(self) -> float:
        return _float(self._s2)

    @property
    def sum_wu(self) -> float:
        """``sum c w u`` with ``u`` the reward on the unit scale."""
        return _float(self._sg)

    @property
    def sum_w2u(self) -> float:
        return _float(self._swg)

    @property
    def sum_w2u2(self) -> float:
        return _float(self._sgg)

    # -- answers ----------------------------------------------------------------------------------
    def _require_data(self) -> None:
        if self._n <= 0:
            raise InvalidInputError("CressieReadStats is empty: update it with at least one example")

    def _user(self, v: float) -> float:
        v = min(max(v, 0.0), 1.0)
        return float(min(max(self.rmin + (self.rmax - self.rmin) * v, self.rmin), self.rmax))

    def _w_ex(self) -> float:
        """The estimate's extra atom: ``wmin`` if ``mean(w) >= 1``, else ``wmax``."""
        return self.wmin if self._s1 >= self._n else self.wmax

    def _support(self, side: str, w_ex: float) -> _Support:
        if side == "lower":
            sg, swg, sgg = self._sg, self._swg, self._sgg
        else:  # on 1 - u: g' = w - g
            sg = self._s1 - self._sg
            swg = self._s2 - self._swg
            sgg = self._s2 - 2 * self._swg + self._sgg
        return _Support(self._n, self._s1, self._s2, sg, swg, sgg, w_ex)

    def estimate(self, *, rho: float | None = None) -> CressieReadEstimate:
        """The Cressie-Read estimate from the statistics; see :func:`estimate`."""
        self._require_data()
        if rho is None:
            rho = 0.5 * (self.rmin + self.rmax)
        rho = iv.finite_scalar("rho", rho)
        if not self.rmin <= rho <= self.rmax:
            raise InvalidInputError(f"rho={rho!r} is outside [rmin, rmax] = [{self.rmin}, {self.rmax}]")
        rho_u = (Fraction(rho) - Fraction(self.rmin)) / (Fraction(self.rmax) - Fraction(self.rmin))
        sup = self._support("lower", self._w_ex())
        v0 = _float(sup.v0)
        v1 = _float(sup.v0 + sup.wmass_ex)
        value = _float(sup.v0 + rho_u * sup.wmass_ex)
        lo, hi = min(v0, v1), max(v0, v1)
        m = sup.m
        return CressieReadEstimate(
            value=self._user(value),
            value_range=ConfidenceInterval(self._user(lo), self._user(hi)),
            rho=rho,
            w_ex=float(sup.w_ex),
            mass_ex=_float(sup.mass_ex),
            wmass_ex=_float(sup.wmass_ex),
            gamma=_float(sup.gamma),
            beta=_float(sup.beta),
            divergence=_float(m * m * sup.norm2 - m),
            n=float(self._n),
        )

    def interval(self, *, confidence_level: float = 0.95,
                 calibration: str = "chi2") -> CressieReadInterval:
        """The Cressie-Read interval from the statistics; see :func:`interval`."""
        level = iv.confidence_level(confidence_level)
        iv.option("calibration", calibration, iv.CALIBRATIONS)
        self._require_data()
        n = float(self._n)
        q = quantiles.quantile(calibration, level, n)
        if not math.isfinite(q):
            return CressieReadInterval(self.rmin, self.rmax, level, calibration, q, None, None, n,
                                       status=f"whole range: no {calibration} quantile at N={n:g}")
        ref = self._support("lower", self._w_ex()).norm2  # ||Q_mle||^2 (independent of rewards)
        m = self._n + 1
        budget = Fraction(q) / (m * m) + ref
        sides = {side: self._side(side, budget) for side in ("lower", "upper")}
        low, high = sides["lower"].value, sides["upper"].value
        status = "optimal"
        if sides["lower"].degenerate or sides["upper"].degenerate:
            status = "degenerate: " + ", ".join(s for s in ("lower", "upper") if sides[s].degenerate) + \
                     " bound set to the range end (no residual spread to calibrate)"
        return CressieReadInterval(low, high, level, calibration, q, sides["lower"],
                                   sides["upper"], n, status=status)

    def _side(self, side: str, budget: Fraction) -> CressieReadBound:
        sgg = self._sgg if side == "lower" else self._s2 - 2 * self._swg + self._sgg  # sum c g^2
        candidates: list[tuple[float, float | None]] = []
        best: tuple[float, float] | None = None  # (unit value, w_ex)
        informative = False
        for w_ex in (self.wmin, self.wmax):
            sup = self._support(side, w_ex)
            radius2 = budget - sup.norm2 if sup.feasible else Fraction(-1)
            if radius2 < 0:
                candidates.append((float(w_ex), None))
                continue
            degenerate = sup.rss <= _DEGENERATE_RSS * sgg
            if degenerate:
                value = _float(sup.v0)
            else:
                informative = True
                value = _float(sup.v0) - math.sqrt(_float(radius2 * sup.rss))
            candidates.append((float(w_ex), value))
            if best is None or value < best[0]:
                best = (value, float(w_ex))
        if not informative:
            # Every feasible support leaves E_Q[w u] fixed: the program's answer is a point set by
            # the arbitrary extra atom, not by the data's spread, so the bound is the range end.
            value_u, w_used, degenerate = 0.0, None, True
        else:
            assert best is not None  # (an informative support sets it)
            value_u, w_used, degenerate = best[0], best[1], False
        user = self._user(value_u) if side == "lower" else self._user(1.0 - value_u)
        return CressieReadBound(user, w_used, tuple(candidates), degenerate)



def _chunk_stats(bounds: tuple[float, float, float, float],
                 rows: Sample | Columns) -> CressieReadStats:
    """The statistics of one chunk of rows (a Sample, or Columns) under ``bounds``."""
    wmin, wmax, rmin, rmax = bounds
    out = CressieReadStats(wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
    out._add_rows(rows)
    return out


def estimate(sample: Sample | Log | LogScan, *, rho: float | None = None) -> CressieReadEstimate:
    r"""The Cressie-Read (lambda = -2) point estimate: the control-variate estimator, augmented.

    Solves (closed form, no solver)

    .. math:: \min_Q \sum_j c_j \big(((N+1) Q_j)^2 - 1\big)
              \quad\text{s.t.}\quad \sum_j c_j Q_j = 1,\ \sum_j c_j Q_j w_j = 1

    over signed ``Q`` on the sample plus one extra atom ``(w_ex, rho)``, ``w_ex = wmin`` if
    ``mean(w) >= 1`` else ``wmax``, and returns ``V(rho) = sum_j c_j Q_j w_j u_j``: the
    regression (control-variate) estimator ``gbar + (1 - wbar) C_wg / C_ww`` on the augmented
    sample plus ``rho Q_ex w_ex``. ``Q_ex >= 0`` always (docs/baselines.md), so ``V`` increases
    with ``rho``. Clipped to ``[rmin, rmax]``: ``Q`` may be negative at some examples, so the
    unclipped value can leave the range, and the true value cannot.

    With ``wmax = inf`` and ``mean(w) < 1`` the extra atom is at infinity (the limit of the
    formula): ``V(rho) = rho + mean(w (u - rho))``, the paper's ClippedDR with predictor ``rho``.

    Parameters
    ----------
    sample : Sample or LogScan
    rho : float, optional
        The extra atom's reward on the user scale; default the reward midpoint, as for EL.

    Returns
    -------
    CressieReadEstimate

    Examples
    --------
    >>> from elcvx import Sample
    >>> from elcvx import cressie_read
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> res = cressie_read.estimate(s)
    >>> round(res.value, 4), res.w_ex, round(res.gamma, 4), round(res.beta, 4)
    (0.7738, 0.0, 1.0119, 0.119)
    """
    return CressieReadStats.from_sample(sample).estimate(rho=rho)


def interval(sample: Sample | Log | LogScan, *, confidence_level: float = 0.95,
             calibration: str = "chi2") -> CressieReadInterval:
    r"""The Cressie-Read (lambda = -2) confidence interval, in closed form.

    The lower bound is the smaller, over the extra atom ``(w_ex, 0)`` with ``w_ex`` in
    ``{wmin, wmax}``, of

    .. math:: \min_Q \sum_j c_j Q_j w_j u_j \quad\text{s.t.}\quad
              \sum_j c_j Q_j = 1,\ \sum_j c_j Q_j w_j = 1,\
              D(Q) \le D(Q^{mle}) + q,

    with ``D(Q) = sum_j c_j (((N+1) Q_j)^2 - 1)`` on the augmented sample, ``Q^mle`` the
    estimate's minimiser (:func:`estimate`) and ``q = quantile(calibration, confidence_level,
    N)`` the threshold of the EL interval (``chi2``: chi-square(1); ``f``: F(1, N-1)). The
    solution is ``V0 - sqrt(R RSS)``: ``V0`` the estimate on that support with reward 0 at the
    extra atom, ``RSS`` the residual sum of squares of ``w u`` regressed on ``(1, w)``, ``R =
    q/(N+1)^2 + ||Q^mle||^2 - ||Q^cand||^2`` (a support with ``R < 0`` has no ``Q`` within the
    budget and is skipped). The upper bound is ``1 -`` the lower bound of ``1 - u``. The bounds
    are clipped to ``[rmin, rmax]`` (the true value lies there).

    Degenerate data. When, for every feasible support, ``w u`` is exactly affine in ``w``
    (``RSS = 0``: ``N = 1``, or all examples at one ``(w, r)``), ``E_Q[w u]`` cannot move and the
    program's answer is a point fixed by the arbitrary extra atom; that side is then the range
    end (``status`` says so), never a zero-width interval made by construction. With ``N < 2``
    under ``"f"`` the interval is the whole range. Never NaN.

    Parameters
    ----------
    sample : Sample or LogScan
    confidence_level : float
        In (0, 1).
    calibration : {"chi2", "f"}
        As for :func:`elcvx.interval`.

    Returns
    -------
    CressieReadInterval
        Unpacks as ``(low, high)``.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx import Sample
    >>> from elcvx import cressie_read
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> low, high = cressie_read.interval(s)
    >>> round(low, 4), round(high, 4)
    (0.3012, 1.0)
    """
    return CressieReadStats.from_sample(sample).interval(confidence_level=confidence_level,
                                                         calibration=calibration)
