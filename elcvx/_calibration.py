"""The calibrations of a likelihood-ratio statistic: its threshold and its p-value.

An interval ``{v : 2(L_mle - L(v)) <= q}`` and a test of ``v`` use the statistic's law under the
null, named by ``calibration=`` (:data:`elcvx._validation.CALIBRATIONS`): ``"chi2"``, the
chi-square(1) law of the paper's text (Wilks' theorem), or ``"f"``, the F(1, N-1) law of the
authors' replication code. The bootstrap calibration, which needs the sample, is in
:mod:`elcvx._bootstrap`.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ._validation import CALIBRATIONS, option


def quantile(calibration: str, confidence: float, n: float) -> float:
    """The likelihood-ratio threshold ``q`` of an interval ``{v : 2(L_mle - L(v)) <= q}``.

    ``"chi2"``: the chi-square(1) quantile of the paper's text (Wilks' theorem).
    ``"f"``: the F(1, N-1) quantile used by the authors' replication code; larger than the
    chi-square quantile at small N and equal to it as N grows. Returns ``inf`` (the whole reward
    range) when N < 2 under ``"f"``.
    """
    option("calibration", calibration, CALIBRATIONS)
    if calibration == "chi2":
        return float(stats.chi2.ppf(confidence, 1))
    if n < 2:
        return float("inf")
    return float(stats.f.ppf(confidence, 1, n - 1))


def pvalue(calibration: str, statistic, n: float):
    """Upper-tail probability of a likelihood-ratio statistic under the calibration's law."""
    option("calibration", calibration, CALIBRATIONS)
    statistic = np.asarray(statistic, dtype=float)
    if calibration == "chi2":
        return stats.chi2.sf(statistic, 1)
    if n < 2:
        return np.ones_like(statistic)
    return stats.f.sf(statistic, 1, n - 1)
