r"""The estimators and intervals the paper compares EL against (its section 5).

Every function takes a :class:`~elcvx.Sample` or a log scanned in chunks
(:func:`elcvx.io.scan_log`), honours counts as exact multiplicities and works on rewards
rescaled to the unit interval, ``u = (r - rmin) / (rmax - rmin)``, as the paper
does (it assumes ``r`` in ``[0, 1]``); results are mapped back to ``[rmin, rmax]`` by
``v -> rmin + (rmax - rmin) v``. With ``c`` the counts and ``N = sum(c)``:

==========================  ==================================================================
function                    computes (unit scale)
==========================  ==================================================================
:func:`ips`                 ``sum c w u / N``
:func:`snips`               ``sum c w u / sum c w``
:func:`clipped_dr`          ``clip(rho + sum c w (u - rho) / N, 0, 1)``, ``rho`` = midpoint
:func:`emp`                 ``sum c Q w u / sum c Q`` with ``Q`` the EL MLE weights
:func:`gaussian_interval`   ``mean(w u) +- z s / sqrt(N)``, ``s`` with ``ddof=1``, clipped
:func:`clopper_pearson_interval`  ``wmax x`` the exact Binomial interval of ``mean(w u / wmax)``
:func:`lower_bound`         a finite-sample lower bound: LS, IX, EB or el-betting
:func:`upper_bound`         the same, as an upper bound
==========================  ==================================================================

Each is a function of a few sums over the rows (:func:`log_sums`, one pass; EMP a second pass at
the EL MLE), and sums of chunks merge: on a scanned log every chunk's sums are computed where
it is and merged (its engine's ``map_reduce``), so each baseline equals the one on the same rows
in memory up to the order of the additions.

The finite-sample bounds live in :mod:`elcvx.estimators.finite_sample` (their formulas, the
conditions each needs, and their tuning) and are re-exported here, beside the other baselines.

IPS and EMP are not shift-equivariant (``sum w`` and ``sum Q w`` differ from ``N`` and
``sum Q``), so they depend on where the reward's zero is; computing them on the unit scale makes
every number here independent of the reward's units and offset (for ``rmin = 0`` they are the
textbook formulas). Point estimates other than ClippedDR are *not* clipped: IPS and EMP can
leave ``[rmin, rmax]``, which is part of what the paper's comparison measures. Conventions where
the paper is silent are listed in ``docs/baselines.md``.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from scipy import stats

from . import _validation as iv
from .cache import PerSample
from .engines.rows import columns_of
from .errors import InvalidInputError
from .results import BaselineEstimate, BaselineInterval
from .estimators.finite_sample import lower_bound, upper_bound
from .sample import Sample, check_sample

if TYPE_CHECKING:  # (annotations only)
    from .engines.rows import Columns
    from .io import Log, LogScan

__all__ = ["ips", "snips", "clipped_dr", "emp", "gaussian_interval", "clopper_pearson_interval",
           "lower_bound", "upper_bound", "LogSums", "log_sums"]


def _user(sample: Sample, v: float) -> float:
    """Unit scale -> user scale, *not* clipped (IPS and EMP can leave the range)."""
    return float(sample.rmin + (sample.rmax - sample.rmin) * v)


# ------------------------------------------------------------------------------------------------
# One pass of sums, mergeable
# ------------------------------------------------------------------------------------------------
class Scaled(NamedTuple):
    """``s 2^e``: a sum kept with its power of two apart (:func:`_scaled_sum`)."""

    s: float
    e: int

    def __add__(self, other: tuple[Any, ...]) -> Scaled:
        """The sum of two scaled sums (not tuple concatenation: ``other`` is a :class:`Scaled`)."""
        s, e_other = other
        e = max(self.e, e_other)
        return Scaled(math.ldexp(self.s, self.e - e) + math.ldexp(s, e_other - e), e)

    def value(self, divisor: float = 1.0) -> float:
        """``s 2^e / divisor`` (an infinity where that is beyond the float range)."""
        try:
            return math.ldexp(self.s / divisor, self.e)
        except OverflowError:
            return math.copysign(math.inf, self.s)


def _scaled_sum(c: np.ndarray | None, x: np.ndarray) -> Scaled:
    """``sum c x`` as ``s 2^e`` with ``|x / 2^e| <= 1``.

    Weights go up to 1.8e308: sums of ``c w u`` (with counts) and squares of ``w u`` could
    overflow, their scaled forms cannot. A power of two changes no rounding (except for terms
    1e308 times smaller than the largest, which cannot change a sum that holds it).
    """
    e = int(np.frexp(np.abs(x).max())[1]) if x.size else 0
    xs = np.ldexp(x, -e)
    return Scaled(float(xs.sum() if c is None else np.dot(c, xs)), e)


class LogSums(NamedTuple):
    """The sums every baseline reads, of a sample or a scanned log (:func:`log_sums`); ``x = w u``.

    Attributes
    ----------
    n : float
        ``sum c``.
    w, x : Scaled
        ``sum c w`` and ``sum c x``.
    x_mean, x_m2 : Scaled
        ``mean(x)`` and ``sum c (x - mean(x))^2`` (Chan, Golub and LeVeque's pairwise update
        merges chunks), on the scale of ``x_mean.e`` and twice it.
    x_over_wmax : float
        ``sum c x / wmax`` (0 when ``wmax = inf``).
    """

    n: float
    w: Scaled
    x: Scaled
    x_mean: Scaled
    x_m2: Scaled
    x_over_wmax: float


def _chunk_sums(wmax: float, cols: Columns) -> LogSums:
    """:class:`LogSums` of one chunk (:class:`~elcvx.engines.rows.Columns`)."""
    c, w = cols.c, cols.w
    x = w * cols.u
    n = float(w.size if c is None else c.sum())
    sx = _scaled_sum(c, x)
    mean = sx.s / n
    dev = np.ldexp(x, -sx.e) - mean
    m2 = float((dev * dev).sum() if c is None else np.dot(c, dev * dev))
    k = 0.0 if math.isinf(wmax) else float((x / wmax).sum() if c is None else np.dot(c, x / wmax))
    return LogSums(n, _scaled_sum(c, w), sx, Scaled(mean, sx.e), Scaled(m2, 2 * sx.e), k)


def _merge_sums(a: LogSums, b: LogSums) -> LogSums:
    n = a.n + b.n
    e = max(a.x_mean.e, b.x_mean.e)
    ma, mb = math.ldexp(a.x_mean.s, a.x_mean.e - e), math.ldexp(b.x_mean.s, b.x_mean.e - e)
    m2a, m2b = math.ldexp(a.x_m2.s, a.x_m2.e - 2 * e), math.ldexp(b.x_m2.s, b.x_m2.e - 2 * e)
    d = mb - ma
    mean = ma + d * (b.n / n)
    m2 = m2a + m2b + d * d * (a.n * (b.n / n))
    return LogSums(n, a.w + b.w, a.x + b.x, Scaled(mean, e), Scaled(m2, 2 * e),
                   a.x_over_wmax + b.x_over_wmax)


#: :func:`log_sums` of each sample or scanned log (key: the sample object; lifetime: the sample's).
_LOG_SUMS = PerSample("the baselines' sums (elcvx.baselines.log_sums)")


def log_sums(sample: Sample | Log | LogScan) -> LogSums:
    """The baselines' sums of a :class:`~elcvx.Sample` (its rows, one chunk) or of a log scanned
    in chunks (one ``map_reduce`` over its engine's chunks, each chunk's sums merged), computed
    once per sample or scan."""
    sample = check_sample(sample, scans=True)
    fn = functools.partial(_chunk_sums, sample.wmax)
    return _LOG_SUMS.get(sample, lambda: fn(columns_of(sample)) if isinstance(sample, Sample)
                         else sample.engine.map_reduce(fn, _merge_sums))


def _ips_unit(sums: LogSums) -> float:
    return sums.x.value(sums.n)



# ------------------------------------------------------------------------------------------------
# Point estimates
# ------------------------------------------------------------------------------------------------
def ips(sample: Sample | Log | LogScan) -> BaselineEstimate:
    r"""Inverse propensity score (Horvitz-Thompson) estimate of the target policy's value.

    .. math:: \hat V_{\rm IPS} = \frac1N \sum_n c_n w_n u_n
              \quad\text{(unit scale; reported as } r_{\min} + (r_{\max} - r_{\min}) \hat V\text{)}.

    Unbiased for ``E[w u]`` but not clipped: it can exceed ``rmax``. On the user scale this is
    ``rmin + mean(w (r - rmin))``, the textbook ``mean(w r)`` when ``rmin = 0``.

    Parameters
    ----------
    sample : Sample or LogScan

    Returns
    -------
    BaselineEstimate

    Examples
    --------
    >>> from elcvx import Sample
    >>> from elcvx.baselines import ips
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> ips(s).value       # (0 + 2 + 1 + 0.5) / 4
    0.875
    """
    sample = check_sample(sample, scans=True)
    return BaselineEstimate(_user(sample, _ips_unit(log_sums(sample))), "ips", sample.n)


def snips(sample: Sample | Log | LogScan) -> BaselineEstimate:
    r"""Self-normalised IPS: the importance-weighted mean of the rewards.

    .. math:: \hat V_{\rm SNIPS} = \frac{\sum_n c_n w_n u_n}{\sum_n c_n w_n},

    a weighted mean, so it always lies in ``[rmin, rmax]``. When every weight is 0 the target
    policy never took a logged action and the ratio is ``0/0``: the value is then the reward
    midpoint (the uninformed answer, as ``rho`` is for EL) and ``note`` says so. Never NaN.

    Examples
    --------
    >>> from elcvx import Sample
    >>> from elcvx.baselines import snips
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> round(snips(s).value, 6)   # 3.5 / 4.5
    0.777778
    """
    sample = check_sample(sample, scans=True)
    sums = log_sums(sample)
    if sums.w.s == 0.0:
        return BaselineEstimate(0.5 * (sample.rmin + sample.rmax), "snips", sample.n,
                                "undefined (every importance weight is 0, so 0/0): reported as the reward midpoint")
    value = math.ldexp(sums.x.s / sums.w.s, sums.x.e - sums.w.e)  # (the unscaled sums' ratio)
    return BaselineEstimate(_user(sample, min(max(value, 0.0), 1.0)), "snips", sample.n)


def clipped_dr(sample: Sample | Log | LogScan, *, rho: float | None = None) -> BaselineEstimate:
    r"""The paper's ClippedDR: doubly robust with a constant reward predictor, clipped.

    .. math:: \hat V = \min\Big(1, \max\Big(0,\ \rho + \frac1N \sum_n c_n w_n (u_n - \rho)\Big)\Big),

    with ``rho`` the constant prediction (default the reward midpoint, the paper's "best constant
    predictor of 1/2"). Clipping to the reward range is what distinguishes it from IPS with a
    control variate.

    Parameters
    ----------
    sample : Sample or LogScan
    rho : float, optional
        The constant predictor on the user scale, in ``[rmin, rmax]``; default the midpoint.

    Examples
    --------
    >>> from elcvx import Sample
    >>> from elcvx.baselines import clipped_dr
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> clipped_dr(s).value   # 0.5 + (0 + 1 + 0 + 0.25) / 4
    0.8125
    """
    sample = check_sample(sample, scans=True)
    rho_u = _rho_unit(sample, rho)
    sums = log_sums(sample)
    e = max(sums.x.e, sums.w.e)  # sum c w (u - rho) = sum c x - rho sum c w, on one scale
    diff = Scaled(math.ldexp(sums.x.s, sums.x.e - e) - rho_u * math.ldexp(sums.w.s, sums.w.e - e), e)
    value = rho_u + diff.value(sums.n)
    return BaselineEstimate(_user(sample, min(max(value, 0.0), 1.0)), "clipped_dr", sample.n)


def _rho_unit(sample: Sample, rho: float | None) -> float:
    if rho is None:
        return 0.5
    rho = iv.finite_scalar("rho", rho)
    if not sample.rmin <= rho <= sample.rmax:
        raise InvalidInputError(f"rho={rho!r} is outside [rmin, rmax] = [{sample.rmin}, {sample.rmax}]")
    return sample.to_unit(rho)


def emp(sample: Sample | Log | LogScan) -> BaselineEstimate:
    r"""Kallus and Uehara's EMP estimator specialised to a constant reward predictor.

    .. math:: \hat V_{\rm EMP} = \frac{\sum_n c_n Q_n w_n u_n}{\sum_n c_n Q_n},\qquad
              Q_n = \frac{1}{N (1 + \beta^* (w_n - 1))},

    with ``beta*`` the maximiser of ``sum c log(1 + beta (w - 1))`` over ``[-1/(wmax - 1),
    1/(1 - wmin)]`` (the EL MLE, :func:`elcvx.estimate`; the paper's section 3.2). Where the
    MLE leaves no mass outside the sample (``sum c Q = sum c Q w = 1``) it equals the EL
    estimate. Not clipped: when ``sum c Q < sum c Q w`` it can exceed ``rmax``.

    Examples
    --------
    >>> from elcvx import Sample
    >>> from elcvx.baselines import emp
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> round(emp(s).value, 4)
    0.7839
    """
    sample = check_sample(sample, scans=True)
    from . import dispatch  # function-local: the solvers are imported when first needed

    beta = dispatch.mle(sample, "auto")[0].beta
    fn = functools.partial(_emp_chunk, beta)
    cqx, cq = (fn(columns_of(sample)) if isinstance(sample, Sample)
               else sample.engine.map_reduce(fn, _add_pairs))
    return BaselineEstimate(_user(sample, cqx / cq), "emp", sample.n)


def _emp_chunk(beta: float, cols: Columns) -> tuple[float, float]:
    """``(sum c q w u, sum c q)`` of a chunk, ``q = 1 / (1 + beta (w - 1))`` (the MLE's ``Q``
    times ``N``, which the ratio does not need)."""
    q = 1.0 / (1.0 + beta * (cols.w - 1.0))
    cq = q if cols.c is None else cols.c * q
    return float(np.dot(cq, cols.w * cols.u)), float(cq.sum())


def _add_pairs(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return a[0] + b[0], a[1] + b[1]


# ------------------------------------------------------------------------------------------------
# Intervals
# ------------------------------------------------------------------------------------------------
def _whole(sample: Sample, level: float, method: str, center: float,
           note: str) -> BaselineInterval:
    return BaselineInterval(sample.rmin, sample.rmax, level, method, center, sample.n, note)


def _clip_map(sample: Sample, low_u: float, high_u: float) -> tuple[float, float]:
    low_u = min(max(low_u, 0.0), 1.0)
    high_u = min(max(high_u, 0.0), 1.0)
    return sample.to_user(low_u), sample.to_user(high_u)


def gaussian_interval(sample: Sample | Log | LogScan, *, confidence_level: float = 0.95,
                      ddof: float = 1) -> BaselineInterval:
    r"""The asymptotic Gaussian (z-score) interval around IPS, clipped to the reward range.

    With ``x_n = w_n u_n``, counts as frequency weights,

    .. math:: \bar x = \frac1N \sum_n c_n x_n,\qquad
              s^2 = \frac{1}{N - \mathrm{ddof}} \sum_n c_n (x_n - \bar x)^2,\qquad
              \bar x \pm z_{(1+\ell)/2}\, \frac{s}{\sqrt N},

    ``z`` the standard normal quantile (``scipy.stats.norm.ppf``) at confidence level ``l``;
    the interval is then intersected with ``[rmin, rmax]`` (the value lies there), which can
    only raise its coverage. The paper's "standard z-score CI around the empirical mean and
    standard deviation" does not state the ``ddof``; the default 1 is the unbiased variance.

    When ``N <= ddof`` there is no variance estimate (``N = 1``: one example says nothing about
    spread) and the interval is the whole range ``[rmin, rmax]``, with ``note`` saying so. The
    textbook formula is kept otherwise: when every ``w u`` is equal, ``s = 0`` and the interval
    is a point, the known failure that makes this baseline undercover at small N.

    Parameters
    ----------
    sample : Sample or LogScan
    confidence_level : float
        In (0, 1).
    ddof : float
        Delta degrees of freedom of the variance, ``0 <= ddof``; default 1.

    Returns
    -------
    BaselineInterval

    Examples
    --------
    >>> from elcvx import Sample
    >>> from elcvx.baselines import gaussian_interval
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> low, high = gaussian_interval(s)
    >>> round(low, 4), round(high, 4)      # 0.875 -+ 1.96 * 0.8539 / 2
    (0.0382, 1.0)
    """
    sample = check_sample(sample, scans=True)
    level = iv.confidence_level(confidence_level)
    ddof = iv.finite_scalar("ddof", ddof)
    if ddof < 0:
        raise InvalidInputError(f"ddof={ddof!r} must be >= 0")
    sums = log_sums(sample)
    mean = sums.x_mean.value()
    center = _user(sample, mean)
    if sample.n <= ddof:
        return _whole(sample, level, "gaussian", center,
                      f"whole range: no variance estimate with N={sample.n:g} <= ddof={ddof:g}")
    var_s = sums.x_m2.s / (sample.n - ddof)  # on the scale 2^(2 e), e = x_mean.e
    with np.errstate(over="ignore"):  # a half-width beyond the float range: the whole range
        sd_mean = float(np.ldexp(np.sqrt(var_s / sample.n), sums.x_mean.e))
    half = float(stats.norm.ppf(0.5 + level / 2)) * sd_mean
    low, high = _clip_map(sample, mean - half, mean + half)
    return BaselineInterval(low, high, level, "gaussian", center, sample.n)


def clopper_pearson_interval(sample: Sample | Log | LogScan, *,
                             confidence_level: float = 0.95) -> BaselineInterval:
    r"""The paper's Binomial interval: Clopper-Pearson on ``y = w u / wmax``, times ``wmax``.

    ``y_n`` lies in ``[0, 1]`` with mean ``V / wmax``. The paper rounds each ``y_n`` at random to
    ``{0, 1}`` and applies the exact (Clopper-Pearson) interval to the ``k`` successes in ``N``
    trials; the bounds on ``V`` are ``wmax`` times the bounds on the proportion, clipped to the
    reward range. The exact bounds are Beta quantiles (the identity behind
    ``scipy.stats.binomtest(k, n).proportion_ci(method="exact")``),

    .. math:: p_{\rm low} = B^{-1}_{\alpha/2}(k,\, N - k + 1),\qquad
              p_{\rm high} = B^{-1}_{1-\alpha/2}(k + 1,\, N - k),\qquad \alpha = 1 - \ell,

    (``p_low = 0`` at ``k = 0``, ``p_high = 1`` at ``k = N``), computed with
    ``scipy.stats.beta.ppf``. **Fractional successes.** Instead of random rounding (which makes
    the answer random), ``k = sum c w u / wmax`` is used as it is, real-valued, in the same
    formula: it is the expectation of the randomly rounded count, the formula is continuous and
    increasing in ``k``, and it equals scipy's exact interval whenever ``k`` and ``N`` are
    integers (tested). Real-valued counts make ``N`` real too and are handled the same way.

    **wmax = inf.** Then ``y = 0`` for every example and the proportion's bound is multiplied
    by ``inf``: the interval is the whole range ``[rmin, rmax]`` (``note`` says so). The paper's
    construction needs a finite weight bound.

    Parameters
    ----------
    sample : Sample or LogScan
    confidence_level : float
        In (0, 1).

    Returns
    -------
    BaselineInterval

    Examples
    --------
    >>> from elcvx import Sample
    >>> from elcvx.baselines import clopper_pearson_interval
    >>> s = Sample([0.0, 2.0, 2.0, 0.5, 1.0, 1.0], [0.0, 1.0, 0.5, 1.0, 1.0, 0.0], wmax=2)
    >>> [round(x, 4) for x in clopper_pearson_interval(s)]
    [0.118, 1.0]
    """
    sample = check_sample(sample, scans=True)
    level = iv.confidence_level(confidence_level)
    sums = log_sums(sample)
    center = _user(sample, _ips_unit(sums))
    if np.isinf(sample.wmax):
        return _whole(sample, level, "clopper_pearson", center,
                      "whole range: wmax = inf, so w r / wmax = 0 carries no information")
    n = sample.n
    k = sums.x_over_wmax
    k = min(max(k, 0.0), n)
    alpha = 1.0 - level
    p_low = 0.0 if k <= 0.0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    if p_low <= np.finfo(float).tiny:
        # scipy floors a smaller quantile at the least normal number, which wmax = 1.8e308 would
        # turn into a lower bound of 4: the quantile is below it, so 0 is the bound.
        p_low = 0.0
    p_high = 1.0 if k >= n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    low, high = _clip_map(sample, sample.wmax * p_low, sample.wmax * p_high)
    return BaselineInterval(low, high, level, "clopper_pearson", center, sample.n)
