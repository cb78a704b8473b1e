"""Result types shared by the fast path and the cvxpy path.

Every result converts: ``to_dict()`` (plain Python data), ``to_frame()`` (a pandas DataFrame:
one row, or one row per entry of a table such as a profile's values) and the HTML a notebook
shows (:mod:`elcvx._convert`).
"""

from __future__ import annotations

import functools
import math

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from . import _convert
from ._validation import readonly

if TYPE_CHECKING:  # (annotations only: pandas is an optional dependency)
    import pandas


class ConfidenceInterval(NamedTuple):
    """An interval ``(low, high)``, like ``scipy.stats``' ``ConfidenceInterval``."""

    low: float
    high: float


class _Converts:
    """Mixin of the result dataclasses: ``to_dict``, ``to_frame`` and the notebook's HTML."""

    #: The array fields that make a table, one row per entry (empty: the result is one row).
    COLUMNS: ClassVar[tuple] = ()

    def to_dict(self) -> dict[str, Any]:
        """The reported fields as plain Python data (numbers, strings, lists; an interval field
        as ``{"low", "high"}``, a nested result as its own dict): ``json.dumps`` writes it.
        Per-row arrays kept out of the repr (an estimate's ``q``) are left out."""
        return _convert.to_dict(self)

    def to_frame(self) -> pandas.DataFrame:
        """A pandas DataFrame (needs pandas, the ``io`` extra): one row of the scalar fields,
        or, for a table (:attr:`COLUMNS`: a profile's ``v``, ``statistic``, ``pvalue``, ...),
        one row per entry with the other fields in ``frame.attrs``."""
        return _convert.to_frame(self)

    def _repr_html_(self) -> str:
        return _convert.repr_html(self)


class _ReadOnlyArrays(_Converts):
    """Mixin of the frozen result dataclasses: each array field is held as a read-only view.

    A view costs no copy and leaves the array passed in as it was; where that array is the
    read-only cached MLE solution, the view cannot be made writable again.
    """

    def __post_init__(self):
        given = self.__dict__
        for name in _field_names(type(self)):
            value = given.get(name)  # (as given: a q not yet computed stays so)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, name, readonly(value))


@functools.cache
def _field_names(cls) -> tuple:
    """The names of a result dataclass's fields, kept per class (``dataclasses.fields`` builds
    them anew on each call, a few microseconds a result)."""
    return tuple(f.name for f in fields(cls))


class _RowsOnRead:
    """A result's per-row field (``q``) that may be given unread: as a function of no argument
    (:class:`elcvx.solutions.OnRead`), called on the first read and replaced by its array,
    read-only. The fast path does not write ``q`` during its passes: reading it costs one pass
    over the rows, and a result whose ``q`` is never read never pays it."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name]
        if callable(value):
            value = readonly(np.asarray(value()))
            obj.__dict__[self.name] = value
        return value

    def __set__(self, obj, value):  # (the dataclass's __init__, through object.__setattr__)
        obj.__dict__[self.name] = value


def _q_on_read(cls):
    """``cls`` (a result dataclass) with its ``q`` field read through :class:`_RowsOnRead`."""
    cls.q = _RowsOnRead("q")
    return cls


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
    work: tuple = field(default=(0, 0), repr=False)
    lambdas: tuple = ()
    rho_rule: str = "number"
    reward_range: tuple = (0.0, 1.0)
    error: float = math.nan
    notes: tuple = ()
    # elcvx.interval on what estimate() was given (its sample, constraints, atoms and method),
    # for confidence_interval(): the results do not import the solvers' front end.
    _interval: Any = field(default=None, repr=False)

    def __float__(self):
        """``float(elcvx.estimate(s))`` is the estimate's ``value``."""
        return float(self.value)

    def confidence_interval(self, confidence_level: float = 0.95, *, calibration: str = "chi2",
                            resamples: int = 999,
                            random_state: int | np.random.Generator | None = 0) -> IntervalResult:
        """The EL confidence interval around this estimate, as scipy's results offer one.

        :func:`elcvx.interval` on the sample the estimate was computed from, with its
        ``constraints``, ``atoms`` and ``method``; the MLE is cached on the sample, so only the
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
            from .errors import InvalidInputError

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

    def __repr__(self):
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


class _Pair(_Converts):
    """Mixin: unpack as ``(low, high)`` like :class:`IntervalResult`."""

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
class IntervalResult(_Pair):
    """The EL confidence interval ``{v : 2 (L_mle - L(v)) <= quantile}``.

    Usable as ``(low, high)``: ``low, high = elcvx.interval(sample)``.

    Attributes
    ----------
    low, high : float
        The bounds on the user's reward scale.
    confidence_level : float
    calibration : str
        ``"chi2"``, ``"f"``, ``"bootstrap"`` or ``"signed-bootstrap"``.
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
    work: tuple = field(default=(0, 0), repr=False)
    alternative: str = "two-sided"
    notes: tuple = ()

    def __repr__(self):
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

    COLUMNS: ClassVar[tuple] = ("v", "statistic", "pvalue", "beta", "tau")

    v: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    beta: np.ndarray
    tau: np.ndarray
    calibration: str
    n: float
    method: str
    work: tuple = field(default=(0, 0), repr=False)
    error: np.ndarray | None = field(default=None, repr=False)


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


# ------------------------------------------------------------------------------------------------
# Baselines (elcvx.baselines) and the Cressie-Read lambda = -2 variant (elcvx.cressie_read)
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class BaselineEstimate(_Converts):
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

    def __float__(self):
        return float(self.value)


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
class CressieReadEstimate(_Converts):
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

    def __float__(self):
        return float(self.value)

    def weights(self, w):
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
    candidates: tuple
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


# ------------------------------------------------------------------------------------------------
# Anytime-valid confidence sequences (elcvx.sequences)
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SequenceResult(_ReadOnlyArrays):
    """The bounds of a confidence sequence after each example (:mod:`elcvx.sequences`).

    With probability at least ``confidence_level``, ``low[i] <= V(pi) <= high[i]`` for every
    ``i`` at once, however long the log grows and whenever one looks.

    Attributes
    ----------
    t : ndarray of int
        The number of examples seen at each row (1-based; a chunk's rows continue the log).
    low, high : ndarray
        The bounds after each example, on the user's reward scale (read-only).
    confidence_level : float
    method : str
        ``"betting"`` or ``"ddrm"``.
    intersect : bool
        Whether the bounds are the running intersection of the sequence's sets (the running
        maximum of ``low`` and minimum of ``high``; as valid, never wider).
    rmin, rmax : float
        The reward range the bounds were computed on.
    """

    COLUMNS: ClassVar[tuple] = ("t", "low", "high")

    t: np.ndarray
    low: np.ndarray
    high: np.ndarray
    confidence_level: float
    method: str
    intersect: bool
    rmin: float
    rmax: float

    @property
    def interval(self) -> ConfidenceInterval:
        """The bounds after the last example: ``(low[-1], high[-1])``."""
        if not self.t.size:
            return ConfidenceInterval(self.rmin, self.rmax)
        return ConfidenceInterval(float(self.low[-1]), float(self.high[-1]))

    def __len__(self):
        return int(self.t.size)


# ------------------------------------------------------------------------------------------------
# EL beside the baselines on one log (elcvx.evaluate, the numbers of `elcvx evaluate`)
# ------------------------------------------------------------------------------------------------
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

    COLUMNS: ClassVar[tuple] = MethodResult._fields

    results: tuple
    notes: tuple
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

    def _table(self):
        return list(self.COLUMNS), [list(r) for r in self.results]

    def __getitem__(self, method: str) -> MethodResult:
        """The row of ``method`` (``"el"``, ``"ips"``, ...)."""
        for row in self.results:
            if row.method == method:
                return row
        raise KeyError(f"{method!r} is not one of {', '.join(r.method for r in self.results)}")

