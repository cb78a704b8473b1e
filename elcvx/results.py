"""Result types shared by the fast path and the cvxpy path."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


class ConfidenceInterval(NamedTuple):
    """An interval ``(low, high)``, like ``scipy.stats``' ``ConfidenceInterval``."""

    low: float
    high: float


@dataclass(frozen=True, eq=False)
class EstimateResult:
    """The EL point estimate (the paper's eq. (vhatmle)).

    Attributes
    ----------
    value : float
        ``V(rho)`` on the user's reward scale.
    value_range : ConfidenceInterval
        ``(min, max)`` of ``V(rho)`` over ``rho`` in ``[rmin, rmax]``; ``low == high`` when the
        extra atom carries no importance-weighted mass, i.e. the estimate is a point.
    rho : float
        The reward given to the extra atom (user scale).
    beta : float
        The paper's ``beta*``, maximiser of ``sum_n c_n log(1 + beta (w_n - 1))``.
    loglik : float
        ``l*_mle``, that maximum (>= 0); ``sum_n c_n log q_n = -N log N - loglik``.
    q : ndarray
        Primal probability per example of each row, ``1 / (N (1 + beta* (w_n - 1)))``.
    w_ex : float or None
        The extra atom's weight (``wmin`` or ``wmax``), None when it carries no mass.
    mass_ex : float
        The extra atom's probability ``1 - sum_n c_n q_n``.
    wmass_ex : float
        Its importance-weighted mass ``1 - sum_n c_n q_n w_n`` (the coefficient of ``rho``);
        positive with ``mass_ex = 0`` when ``wmax = inf`` (an atom at infinity).
    n : float
        Number of examples (sum of counts).
    method, status : str
        The path that computed it (``"fast"`` or ``"cvxpy"``) and its final status.
    """

    value: float
    value_range: ConfidenceInterval
    rho: float
    beta: float
    loglik: float
    q: np.ndarray = field(repr=False)
    w_ex: float | None
    mass_ex: float
    wmass_ex: float
    n: float
    method: str
    status: str


@dataclass(frozen=True, eq=False)
class BoundResult:
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
        >= 0`` (DESIGN.md; the paper's appendix C corrected).
    q : ndarray
        Primal probability per example of each row, ``kappa / (gamma + beta w_n + w_n u_n)``.
    w_ex : float or None
        The weight of the zero-reward extra atom that carries mass, None when none does.
    mass_ex, wmass_ex : float
        ``1 - sum c q`` and ``1 - sum c q w``.
    """

    value: float
    beta: float
    gamma: float
    kappa: float
    q: np.ndarray = field(repr=False)
    w_ex: float | None
    mass_ex: float
    wmass_ex: float


@dataclass(frozen=True, eq=False)
class IntervalResult:
    """The EL confidence interval ``{v : 2 (L_mle - L(v)) <= quantile}``.

    Usable as ``(low, high)``: ``low, high = elcvx.interval(sample)``.

    Attributes
    ----------
    low, high : float
        The bounds on the user's reward scale.
    confidence_level : float
    calibration : str
        ``"chi2"`` or ``"f"``.
    quantile : float
        The likelihood-ratio threshold ``q`` (``inf`` when the calibration has no quantile).
    lower, upper : BoundResult or None
        Each side's program solution (None when the interval is the whole range by calibration).
    n : float
    method, status : str
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

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.low, self.high)

    def __iter__(self):
        return iter((self.low, self.high))

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.low, self.high)[i]


@dataclass(frozen=True, eq=False)
class ProfileResult:
    """The profile likelihood-ratio statistic at candidate values ``v``.

    Attributes
    ----------
    v : ndarray
        The candidate values (user scale).
    statistic : ndarray
        ``2 (L_mle - L(v))`` (``inf`` where ``v`` is impossible).
    pvalue : ndarray
        Upper-tail probability of ``statistic`` under the calibration's law; ``v`` lies in the
        interval at ``confidence_level`` exactly when ``pvalue >= 1 - confidence_level``.
    beta, tau : ndarray
        Optimal duals of ``sup sum c_n log(1 + beta (w_n - 1) + tau (w_n u_n - v))``.
    calibration : str
    n : float
    method : str
    """

    v: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    beta: np.ndarray
    tau: np.ndarray
    calibration: str
    n: float
    method: str
