"""The calibration of a likelihood-ratio statistic: its threshold and its p-value.

:mod:`~elcvx.calibration.quantiles` -- the chi-square(1) and F(1, N-1) laws, and the one-sided
levels (exported here); :mod:`~elcvx.calibration.bootstrap` -- the bootstrap calibration, which
resamples the fitted EL distribution; :mod:`~elcvx.calibration.signed` -- the one-sided
calibration, a bootstrap of the signed root in the distribution at the chi-square bound (both
imported where they are used: they run the solvers).
"""

from .quantiles import ALTERNATIVES, pvalue, quantile, solved_sides, two_sided_level

__all__ = ["ALTERNATIVES", "pvalue", "quantile", "solved_sides", "two_sided_level"]
