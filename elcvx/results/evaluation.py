"""EL beside the baselines on one log (:func:`elcvx.evaluate`, the numbers of ``elcvx
evaluate``): one row per method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from .base import _Converts
from .estimate import EstimateResult
from .interval import IntervalResult


class MethodResult(NamedTuple):
    """One method's row of an :class:`EvaluationResult`; None where the method has no such
    number (IPS and SNIPS have no interval, Gaussian and Binomial no estimate of their own, a
    baseline that cannot be computed on the sample has none)."""

    method: str
    estimate: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True, eq=False)
class EvaluationResult(_Converts):
    """EL's estimate and interval beside the baselines on one log (:func:`elcvx.evaluate`): what
    ``elcvx evaluate`` prints. ``to_frame()`` has one row per method.

    Attributes
    ----------
    results : tuple of MethodResult
        ``el``, ``ips``, ``snips``, ``cr``, ``gaussian``, ``binomial``, in that order.
    notes : tuple of str
        What a reader of the numbers must know: the log's notes (a reader's), a failed weight
        check ("the probability columns are probably wrong"), EL's estimate depending on the
        extra atom's reward, a baseline's degenerate case or failure, ``wmax = inf``.
    n : int or float
    wmin, wmax, rmin, rmax : float
    confidence_level : float
    calibration : str
        EL's (CR(-2) takes chi2 where EL takes the bootstrap).
    quantile : float
        EL's likelihood-ratio threshold.
    weight_check : WeightCheck
        :meth:`Sample.weight_check` of the log.
    estimate : EstimateResult
        EL's estimate in full.
    interval : IntervalResult
        EL's interval in full.
    """

    COLUMNS: ClassVar[tuple[str, ...]] = MethodResult._fields

    results: tuple[MethodResult, ...]
    notes: tuple[str, ...]
    n: float
    wmin: float
    wmax: float
    rmin: float
    rmax: float
    confidence_level: float
    calibration: str
    quantile: float
    weight_check: Any = field(repr=False)
    estimate: EstimateResult = field(repr=False)
    interval: IntervalResult = field(repr=False)

    def _table(self) -> tuple[list[str], list[list[Any]]]:
        return list(self.COLUMNS), [list(r) for r in self.results]

    def __getitem__(self, method: str) -> MethodResult:
        """The row of ``method`` (``"el"``, ``"ips"``, ...)."""
        for row in self.results:
            if row.method == method:
                return row
        raise KeyError(f"{method!r} is not one of {', '.join(r.method for r in self.results)}")
