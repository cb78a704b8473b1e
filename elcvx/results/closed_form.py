"""The results of the closed forms beside EL: the baselines (:mod:`elcvx.baselines`: IPS,
SNIPS, ... and their intervals) and the Cressie-Read lambda = -2 variant
(:mod:`elcvx.cressie_read`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .base import ConfidenceInterval, _Converts, _Pair, _Point

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike


@dataclass(frozen=True, eq=False)
class BaselineEstimate(_Point):
    """A baseline point estimate (:mod:`elcvx.baselines`).

    Attributes
    ----------
    value : float
        The estimate on the user's reward scale (``nan`` only where the estimator is undefined,
        e.g. SNIPS when every weight is 0; ``note`` says so).
    method : str
        ``"ips"``, ``"snips"``, ``"clipped_dr"`` or ``"emp"``.
    n : float
        Number of examples (sum of counts).
    note : str
        Empty, or what was done in a degenerate case.
    """

    value: float
    method: str
    n: float
    note: str = ""


@dataclass(frozen=True, eq=False)
class BaselineInterval(_Pair):
    """A baseline confidence interval (:mod:`elcvx.baselines`); unpacks as ``(low, high)``.

    Attributes
    ----------
    low, high : float
        The bounds on the user's reward scale, clipped to ``[rmin, rmax]``.
    confidence_level : float
    method : str
        ``"gaussian"`` or ``"clopper_pearson"``.
    center : float
        The IPS estimate the interval is built around (user scale, not clipped).
    n : float
    note : str
        Empty, or why the interval is the whole reward range (``N`` too small, ``wmax = inf``).
    """

    low: float
    high: float
    confidence_level: float
    method: str
    center: float
    n: float
    note: str = ""


@dataclass(frozen=True, eq=False)
class CressieReadEstimate(_Point):
    """The Cressie-Read (lambda = -2) point estimate (:func:`elcvx.cressie_read.estimate`).

    ``Q`` lives on the sample plus one extra atom ``(w_ex, rho)`` and is the minimiser of the
    divergence ``sum_j c_j ((N+1) Q_j)^2 - (N+1)`` subject to ``E_Q[1] = E_Q[w] = 1``; it is
    affine in ``w``: ``Q(w) = (gamma + beta (w - 1)) / (N + 1)`` (signed; see docs/baselines.md).

    Attributes
    ----------
    value : float
        ``V(rho)`` on the user's reward scale, clipped to ``[rmin, rmax]``.
    value_range : ConfidenceInterval
        ``V`` at ``rho = rmin`` and ``rho = rmax`` (clipped); a point when ``wmass_ex = 0``.
    rho : float
        The extra atom's reward (user scale).
    w_ex : float
        The extra atom's weight: ``wmin`` if the sample's mean weight is >= 1, else ``wmax``
        (possibly ``inf``).
    mass_ex, wmass_ex : float
        ``Q`` of the extra atom and ``Q w`` there (the coefficient of ``rho`` on the unit scale);
        both are >= 0. With ``w_ex = inf``, ``mass_ex = 0`` and ``wmass_ex = 1 - mean(w)``.
    gamma, beta : float
        The paper's ``gamma*``, ``beta*``.
    divergence : float
        The minimum ``sum_j c_j (((N+1) Q_j)^2 - 1)``, the reference of the interval.
    n : float
    method : str
        ``"closed form"``.
    """

    value: float
    value_range: ConfidenceInterval
    rho: float
    w_ex: float
    mass_ex: float
    wmass_ex: float
    gamma: float
    beta: float
    divergence: float
    n: float
    method: str = "closed form"

    def weights(self, w: ArrayLike) -> float | np.ndarray:
        """``Q`` per example at importance weight(s) ``w``: ``(gamma + beta (w - 1)) / (N + 1)``."""
        out = (self.gamma + self.beta * (np.asarray(w, dtype=float) - 1.0)) / (self.n + 1.0)
        return float(out) if out.ndim == 0 else out


@dataclass(frozen=True, eq=False)
class CressieReadBound(_Converts):
    """One side of the Cressie-Read interval (the lower bound on ``u``, or on ``1 - u``).

    Attributes
    ----------
    value : float
        The bound on the user's reward scale (clipped to ``[rmin, rmax]``).
    w_ex : float or None
        The weight of the extra atom (reward ``rmin`` for the lower side, ``rmax`` for the upper)
        whose program gives the bound; None when the bound is the range end by degeneracy.
    candidates : tuple of (float, float or None)
        ``(w_ex, bound on the unit scale before clipping)`` for ``w_ex`` in ``(wmin, wmax)``;
        None where that support has no distribution within the divergence budget.
    degenerate : bool
        True when no feasible support lets ``E_Q[w u]`` move (the residual of ``w u`` on
        ``(1, w)`` is zero), so the bound is the range end (see docs/baselines.md).
    """

    value: float
    w_ex: float | None
    candidates: tuple[tuple[float, float | None], ...]
    degenerate: bool


@dataclass(frozen=True, eq=False)
class CressieReadInterval(_Pair):
    """The Cressie-Read (lambda = -2) confidence interval; unpacks as ``(low, high)``.

    Attributes
    ----------
    low, high : float
        The bounds on the user's reward scale.
    confidence_level : float
    calibration : str
        ``"chi2"`` or ``"f"``.
    quantile : float
        The threshold ``q`` on the divergence increase (``inf``: whole range).
    lower, upper : CressieReadBound or None
        Each side's solution (None when ``quantile`` is infinite).
    n : float
    method, status : str
    """

    low: float
    high: float
    confidence_level: float
    calibration: str
    quantile: float
    lower: CressieReadBound | None
    upper: CressieReadBound | None
    n: float
    method: str = "closed form"
    status: str = "optimal"
