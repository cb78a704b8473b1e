"""The EL confidence intervals: of one policy's value (:func:`elcvx.interval`), each of its
sides (the lower-bound program), and of the difference of two policies' values on one log
(:func:`elcvx.difference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from .base import ConfidenceInterval, _Pair, _q_on_read, _ReadOnlyArrays


@_q_on_read
@dataclass(frozen=True, eq=False)
class BoundResult(_ReadOnlyArrays):
    """One side of the EL interval: the lower-bound program on ``u`` (or on ``1 - u``).

    The program is solved on rewards rescaled to ``[0, 1]``: the lower side on ``u``, the upper
    side on ``1 - u``, so the dual variables belong to those programs.

    Attributes
    ----------
    value : float
        The bound on the user's reward scale.
    beta, gamma, kappa : float
        Optimal duals of ``sup -beta - gamma + kappa (phi + N) + sum_n c_n kappa log((gamma +
        beta w_n + w_n u_n) / kappa)`` subject to ``gamma + beta wmin >= 0``, ``gamma + beta wmax
        >= 0`` (the paper's appendix C corrected: docs/primal-dual.md, section 3).
    q : ndarray
        Primal probability per example of each row, ``kappa / (gamma + beta w_n + w_n u_n)``
        (read-only; computed on its first read, one pass over the rows).
    w_ex : float or None
        The weight of the zero-reward extra atom that carries mass, None when none does.
    mass_ex, wmass_ex : float
        ``1 - sum c q`` and ``1 - sum c q w``.
    error : float
        The certified bound on ``|value - the exact bound|`` (user scale; :mod:`elcvx.certify`).
    """

    value: float
    beta: float
    gamma: float
    kappa: float
    q: np.ndarray = field(repr=False)
    w_ex: float | None
    mass_ex: float
    wmass_ex: float
    error: float = math.nan


@dataclass(frozen=True, eq=False)
class IntervalResult(_Pair):
    """The EL confidence interval ``{v : 2 (L_mle - L(v)) <= quantile}``.

    Usable as ``(low, high)``: ``low, high = elcvx.interval(sample)``.

    Attributes
    ----------
    low, high : float
        The bounds on the user's reward scale.
    confidence_level : float
    calibration : str
        ``"chi2"``, ``"f"``, ``"bootstrap"`` or ``"signed-bootstrap"``: the one used (with
        :func:`elcvx.interval`'s default, the one it resolved to).
    quantile : float
        The likelihood-ratio threshold ``q`` (``inf`` when the calibration has no quantile; with
        ``"bootstrap"``, the larger of the chi-square quantile and the bootstrap critical value;
        with ``"signed-bootstrap"``, the larger of the solved ends' thresholds).
    lower, upper : BoundResult or None
        Each side's program solution (None when the interval is the whole range by calibration).
    n : float
    method, status : str
    work : tuple of int
        The fast path's passes over the data (evaluations of an objective with its
        derivatives) and the rows they read, the MLE's included (it is computed once per
        sample); ``(0, 0)`` on the cvxpy path.
    alternative : str
        ``"two-sided"``, or ``"greater"`` (a lower bound: ``high`` is ``rmax`` and ``upper`` is
        None) or ``"less"`` (an upper bound: ``low`` is ``rmin``); ``quantile`` is then the
        threshold at ``2 confidence_level - 1``.
    notes : tuple of str
        The notes of the log or sample, as :attr:`EstimateResult.notes`, and
        :mod:`elcvx.thin`'s when few rows carry the estimate (shown by the repr when there are
        any).
    """

    low: float
    high: float
    confidence_level: float
    calibration: str
    quantile: float
    lower: BoundResult | None
    upper: BoundResult | None
    n: float
    method: str
    status: str
    work: tuple[int, int] = field(default=(0, 0), repr=False)
    alternative: str = "two-sided"
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        # The dataclass's repr, with the notes only when there are some.
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if f.repr and (f.name != "notes" or self.notes)]
        return f"{type(self).__name__}({', '.join(shown)})"

    @property
    def error(self) -> float:
        """The certified bound on the error of either end (user scale; 0 for an end that is the
        reward range's by calibration)."""
        sides = [b.error for b in (self.lower, self.upper) if b is not None]
        return max(sides) if sides else 0.0


@dataclass(frozen=True, eq=False)
class DifferenceResult(_Pair):
    """The EL estimate and interval of ``V(pi_a) - V(pi_b)`` on one log (:func:`elcvx.difference`).

    Usable as ``(low, high)``.

    Attributes
    ----------
    estimate : float
        The difference at the atoms' reward ``rho``, on the user's reward scale.
    estimate_range : ConfidenceInterval
        Its range over ``rho`` in ``[rmin, rmax]`` (a point when the atoms carry no mass).
    low, high : float
        The interval ``{v : 2 (L_mle - L(v)) <= quantile}``.
    confidence_level : float
    calibration : str
    quantile : float
    n : float
    method, status : str
    alternative : str
        ``"two-sided"``, ``"greater"`` (``high`` is the range's end, ``rmax - rmin``) or
        ``"less"`` (``low`` is ``rmin - rmax``).
    """

    estimate: float
    estimate_range: ConfidenceInterval
    low: float
    high: float
    confidence_level: float
    calibration: str
    quantile: float
    n: float
    method: str
    status: str
    alternative: str = "two-sided"
