"""The EL estimate (:func:`elcvx.estimate`) and the profile likelihood (:func:`elcvx.profile`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Callable, ClassVar

import numpy as np

from ..errors import InvalidInputError
from .base import ConfidenceInterval, _q_on_read, _ReadOnlyArrays

if TYPE_CHECKING:  # (annotations only)
    from .interval import IntervalResult


@_q_on_read
@dataclass(frozen=True, eq=False)
class EstimateResult(_ReadOnlyArrays):
    """The EL point estimate (the paper's eq. (vhatmle)); ``float(result)`` is its ``value``.

    Attributes
    ----------
    value : float
        ``V(rho)`` on the user's reward scale.
    value_range : ConfidenceInterval
        ``(min, max)`` of ``V(rho)`` over ``rho`` in ``[rmin, rmax]``; ``low == high`` when the
        extra atom carries no importance-weighted mass, i.e. the estimate is a point. The repr
        shows it when it is wider than 1e-3 of the reward range (:attr:`depends_on_rho`).
    rho : float
        The reward given to the extra atom (user scale).
    beta : float
        The paper's ``beta*``, maximiser of ``sum_n c_n log(1 + beta (w_n - 1))``.
    loglik : float
        ``l*_mle``, that maximum (>= 0); ``sum_n c_n log q_n = -N log N - loglik``.
    q : ndarray
        Primal probability per example of each row, ``1 / (N (1 + beta* (w_n - 1)))``
        (read-only, like every array of a result; computed on its first read, one pass over
        the rows).
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
    lambdas : tuple of float
        The multipliers of the moment constraints (``constraints=``), one per constraint;
        empty without.
    work : tuple of int
        The fast path's passes over the data (evaluations of an objective with its
        derivatives) and the rows they read, the MLE's included (it is computed once per
        sample); ``(0, 0)`` on the cvxpy path.
    rho_rule : str
        How ``rho`` was chosen: ``"midpoint"``, ``"snips"``, ``"self-consistent"`` or
        ``"number"`` (given by the caller).
    reward_range : tuple of float
        ``(rmin, rmax)`` of the sample.
    error : float
        The certified bound on ``|value - the exact estimate|`` (user scale): what "optimal"
        promises, at most ``1e-6`` of the reward range (:mod:`elcvx.certify`); ``nan`` where
        the path gives none.
    notes : tuple of str
        What a reader of the number must know about the data it came from: the notes of the
        log or sample (:func:`elcvx.sample.notes_of`), e.g. a failed weight check ("the
        probability columns are probably wrong"), as :attr:`EvaluationResult.notes` has them.
        Shown by the repr when there are any.
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
    work: tuple[int, int] = field(default=(0, 0), repr=False)
    lambdas: tuple[float, ...] = ()
    rho_rule: str = "number"
    reward_range: tuple[float, float] = (0.0, 1.0)
    error: float = math.nan
    notes: tuple[str, ...] = ()
    # elcvx.interval on what estimate() was given (its sample, constraints, atoms and method),
    # for confidence_interval(): the results do not import the solvers' front end.
    _interval: Callable[..., IntervalResult] | None = field(default=None, repr=False)

    def __float__(self) -> float:
        """``float(elcvx.estimate(s))`` is the estimate's ``value``."""
        return float(self.value)

    def confidence_interval(self, confidence_level: float = 0.95, *, calibration: str = "chi2",
                            resamples: int | None = None,
                            random_state: int | np.random.Generator | None = 0) -> IntervalResult:
        """The EL confidence interval around this estimate, as scipy's results offer one.

        :func:`elcvx.interval` on the sample the estimate was computed from, with its
        ``constraints``, ``atoms`` and ``method``; the MLE is cached per sample, so only the
        two bounds are solved. Unpacks as ``(low, high)``.

        Examples
        --------
        >>> import elcvx
        >>> est = elcvx.estimate(elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10))
        >>> low, high = est.confidence_interval(0.9)
        >>> round(low, 4), round(high, 4)
        (0.3652, 0.9704)
        """
        if self._interval is None:
            raise InvalidInputError("this EstimateResult was not built by elcvx.estimate (it "
                                    "holds no sample): call elcvx.interval(sample, ...)")
        return self._interval(confidence_level=confidence_level, calibration=calibration,
                              resamples=resamples, random_state=random_state)

    @property
    def depends_on_rho(self) -> bool:
        """True when ``value_range`` is wider than 1e-3 of the reward range: the point estimate
        then depends visibly on the extra atom's reward ``rho``."""
        low, high = self.value_range
        return high - low > 1e-3 * (self.reward_range[1] - self.reward_range[0])

    def __repr__(self) -> str:
        # The dataclass's fields in order, but value_range only where rho matters, next to the
        # value and rho's rule, so that a printed estimate never hides its dependence on rho.
        shown = []
        for f in fields(self):
            if not f.repr or f.name in ("value_range", "rho_rule", "reward_range"):
                continue
            if f.name == "notes" and not self.notes:
                continue
            text = f"{f.name}={getattr(self, f.name)!r}"
            if f.name == "value" and self.depends_on_rho:
                text += f", value_range={tuple(map(float, self.value_range))!r}"
            elif f.name == "rho":
                text += f" ({self.rho_rule})"
            shown.append(text)
        return f"{type(self).__name__}({', '.join(shown)})"


@dataclass(frozen=True, eq=False)
class ProfileResult(_ReadOnlyArrays):
    """The profile likelihood-ratio statistic at candidate values ``v``.

    Every array is read-only.

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
    work : tuple of int
        The fast path's passes over the data and the rows they read; ``(0, 0)`` on the cvxpy
        path.
    error : ndarray
        The certified bound on each statistic's error, ``2 (gap of l_v + gap of l*)``
        (:mod:`elcvx.certify`; 0 where the statistic is ``inf``).
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ("v", "statistic", "pvalue", "beta", "tau")

    v: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    beta: np.ndarray
    tau: np.ndarray
    calibration: str
    n: float
    method: str
    work: tuple[int, int] = field(default=(0, 0), repr=False)
    error: np.ndarray | None = field(default=None, repr=False)
