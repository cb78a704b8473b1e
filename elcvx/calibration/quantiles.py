"""The calibrations of a likelihood-ratio statistic: its threshold and its p-value.

An interval ``{v : 2(L_mle - L(v)) <= q}`` and a test of ``v`` use the statistic's law under the
null, named by ``calibration=`` (:data:`elcvx._validation.CALIBRATIONS`): ``"chi2"``, the
chi-square(1) law of the paper's text (Wilks' theorem), or ``"f"``, the F(1, N-1) law of the
authors' replication code. The bootstrap calibration, which needs the sample, is in
:mod:`elcvx.calibration.bootstrap`.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats

from .._validation import CALIBRATIONS, option
from ..errors import InvalidInputError


def quantile(calibration: str, confidence: float, n: float) -> float:
    """The likelihood-ratio threshold ``q`` of an interval ``{v : 2(L_mle - L(v)) <= q}``.

    ``"chi2"``: the chi-square(1) quantile of the paper's text (Wilks' theorem).
    ``"f"``: the F(1, N-1) quantile used by the authors' replication code; larger than the
    chi-square quantile at small N and equal to it as N grows. Returns ``inf`` (the whole reward
    range) when N < 2 under ``"f"``.
    """
    option("calibration", calibration, CALIBRATIONS)
    if calibration == "f" and n < 2:
        return float("inf")
    return _ppf(calibration, float(confidence), float(n - 1) if calibration == "f" else 0.0)


@functools.lru_cache(maxsize=256)
def _ppf(calibration, confidence, dfd):
    """The quantile of :func:`quantile`'s law (``dfd``: F's second degrees of freedom), kept:
    scipy's ``ppf`` takes some 30 µs, a few percent of a small log's estimate and interval,
    and a study asks for the same few levels again and again."""
    if calibration == "chi2":
        return float(stats.chi2.ppf(confidence, 1))
    return float(stats.f.ppf(confidence, 1, dfd))


def pvalue(calibration: str, statistic, n: float):
    """Upper-tail probability of a likelihood-ratio statistic under the calibration's law."""
    option("calibration", calibration, CALIBRATIONS)
    statistic = np.asarray(statistic, dtype=float)
    if calibration == "chi2":
        return stats.chi2.sf(statistic, 1)
    if n < 2:
        return np.ones_like(statistic)
    return stats.f.sf(statistic, 1, n - 1)


#: ``alternative=`` of the intervals, scipy's convention: ``"greater"`` gives a lower bound
#: (``(low, rmax)``: the alternative hypothesis is that the value is greater than ``low``),
#: ``"less"`` an upper bound.
ALTERNATIVES = ("two-sided", "greater", "less")


def two_sided_level(confidence: float, alternative: str) -> float:
    """The level of the two-sided likelihood-ratio interval whose one end is the one-sided bound.

    The statistic ``2 (L_mle - L(v))`` does not say on which side of the estimate ``v`` lies: a
    two-sided interval at level ``1 - 2 alpha`` misses on each side with probability ``alpha``
    (asymptotically, where the signed root of the statistic is standard normal), so its lower
    end is a lower bound at level ``1 - alpha``: the chi-square(1) quantile at ``1 - 2 alpha``,
    which is the square of the normal quantile at ``1 - alpha`` (and likewise the F and the
    bootstrap thresholds at ``1 - 2 alpha``). Needs ``confidence > 1/2``; ``"two-sided"``
    returns ``confidence`` itself.
    """
    alternative = option("alternative", alternative, ALTERNATIVES)
    if alternative == "two-sided":
        return confidence
    if not confidence > 0.5:
        raise InvalidInputError(
            f"confidence_level={confidence!r} with alternative={alternative!r}: a one-sided bound "
            "needs a level above 0.5 (at 0.5 it is the estimate itself)", field="confidence_level",
            value=confidence)
    return 2.0 * confidence - 1.0


def solved_sides(alternative: str) -> tuple:
    """The ends an interval computes under ``alternative``: ``("lower", "upper")`` when two-sided,
    ``("lower",)`` for ``"greater"`` (its upper end is the range's), ``("upper",)`` for
    ``"less"``."""
    return {"two-sided": ("lower", "upper"), "greater": ("lower",), "less": ("upper",)}[
        option("alternative", alternative, ALTERNATIVES)]
