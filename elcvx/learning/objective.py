r"""The objectives of policy learning at given importance weights, and their gradients in ``w``.

At the weights ``w(pi)`` of a policy (a :class:`~elcvx.Sample`), :class:`Objective` evaluates
the EL lower bound, the EL estimate or IPS and ``d value / d w_n`` (:func:`value_and_grad` says
how), and the example weights ``N Q_n`` of the paper's alternating step
(:func:`lower_bound_weights`). The EL computations go through :mod:`elcvx.dispatch`, as for
:func:`elcvx.interval`: the fast path and its fallbacks, then the certified cvxpy path. What
learning adds is the inner program compiled once and re-solved as ``pi`` changes
(:func:`elcvx.programs.learning.dro_inner_dual`), where compiling it pays; its answers are
certified like every other cvxpy answer (:func:`elcvx.cvx.inner.solve_certified`), at the
likelihood radius :func:`dro_phi` gives it.
"""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .. import dispatch, fast
from ..calibration import quantiles
from .. import _validation as iv
from ..errors import InvalidInputError, SolverError
from ..sample import Sample, check_sample
from ..status import OPTIMAL

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

    from ..io import Log
    from ..sample import Sample

OBJECTIVES = ("lower_bound", "estimate", "ips")
WEIGHT_SCALES = ("n", "none")

__all__ = ["value_and_grad", "lower_bound_weights", "dro_phi"]


class Evaluation(NamedTuple):
    """An objective at one ``w``, on the unit reward scale."""

    value: float
    grad: np.ndarray | None  # d value / d w_n
    weights: np.ndarray  # per-example learner weights N q_n (ones for IPS)
    path: str
    status: str


def finite_quantile(calibration: str, level: float, n: float) -> float:
    """The interval's likelihood-ratio threshold; learning needs a finite one."""
    quantile = quantiles.quantile(calibration, level, n)
    if not np.isfinite(quantile):
        raise InvalidInputError(f"calibration={calibration!r} has no quantile at N={n:g}: "
                                "the interval is the whole reward range")
    return float(quantile)


def _sample_and_quantile(sample: Sample | Log, method: str, confidence_level: float,
                         calibration: str) -> tuple[Sample, float]:
    """The checked sample and its interval's threshold, for the functions that take a Sample."""
    sample = check_sample(sample)
    iv.option("method", method, iv.METHODS)
    return sample, finite_quantile(calibration, iv.confidence_level(confidence_level), sample.n)


class Objective:
    """One objective (``"lower_bound"``, ``"estimate"`` or ``"ips"``) at successive samples ``w(pi)``.

    ``method`` chooses the lower bound's solver: ``"fast"`` the fast path of
    :mod:`elcvx.dispatch` (:class:`~elcvx.SolverError` if it fails); ``"auto"`` the fast path,
    then where it fails the compiled inner program (for ``N <=``
    :data:`~elcvx.programs.learning.DPP_MAX_ROWS`) and, where that fails too or ``N`` is larger,
    the certified cvxpy path of :func:`elcvx.interval`; ``"cvxpy"`` the compiled program for
    ``N <= DPP_MAX_ROWS`` (then the certified cvxpy path) and as ``"auto"`` above, where
    compiling the vector parameter costs more than it saves. The MLE is the dispatch's,
    ``method="fast"`` or ``"auto"``.
    """

    def __init__(self, objective: str, quantile: float, method: str, rho: float = 0.5) -> None:
        self.objective, self.quantile, self.method, self.rho = objective, quantile, method, rho
        self.program: Any = None  # the compiled inner program, built at its first use

    def __call__(self, sample: Sample, need_grad: bool = True) -> Evaluation:
        w, u, c, n = sample.w, sample.u, sample.c, sample.n
        if self.objective == "ips":
            value = float(np.dot(c, w * u)) / n
            return Evaluation(value, c * u / n if need_grad else None, np.ones_like(w),
                              "closed form", OPTIMAL)
        mle, path = dispatch.mle(sample, "fast" if self.method == "fast" else "auto")
        d = 1.0 + mle.beta * (w - 1.0)
        if self.objective == "estimate":
            return self._estimate(sample, mle, path, d, need_grad)
        sol, path = self._lower_bound(sample, mle)
        grad = None
        if need_grad:
            # Envelope theorem (see value_and_grad): c_n [q_n (beta + u_n) - kappa beta*/d_n].
            grad = c * (sol.q * (sol.beta + u) - sol.kappa * mle.beta / d)
        return Evaluation(float(sol.value), grad, n * sol.q, path, sol.status)

    def _lower_bound(self, sample: Sample, mle: Any) -> Any:  # (solution, path)
        """The bound's solution at ``sample`` and its path, ``"fast"`` or ``"cvxpy"``."""
        bound = partial(dispatch.lower_bound, sample, mle, self.quantile, "lower")
        if self.method == "fast":
            return bound("fast")
        if not (self.method == "cvxpy" and self._compiles(sample)):
            try:
                return bound("fast")
            except SolverError:
                pass  # the cvxpy path below
        if self._compiles(sample):
            try:
                return self._solve_compiled(sample, mle), "cvxpy"
            except SolverError:
                pass  # the certified program of elcvx.interval, with its own fallbacks
        return bound("cvxpy")

    @staticmethod
    def _compiles(sample: Sample) -> bool:
        """Whether compiling the inner program pays at this size (imports cvxpy)."""
        from ..programs import learning as programs

        return bool(sample.n_rows <= programs.DPP_MAX_ROWS)

    def _solve_compiled(self, sample: Sample, mle: Any) -> Any:
        from ..cvx.inner import solve_certified
        from ..programs import learning as programs

        if self.program is None:
            self.program = programs.dro_inner(sample, form="dual")
        return solve_certified(self.program, w=sample.w, mle=mle, quantile=self.quantile)

    def _estimate(self, sample: Sample, mle: Any, path: str, d: np.ndarray,
                  need_grad: bool) -> Evaluation:
        w, u, c, n = sample.w, sample.u, sample.c, sample.n
        rho, beta = self.rho, mle.beta
        e = u - rho
        value = rho + float(np.dot(c, w * e / d)) / n
        grad = None
        if need_grad:
            d2 = d * d
            grad = c * e * (1.0 - beta) / (n * d2)
            H = float(np.dot(c, (w - 1.0) ** 2 / d2))
            if _beta_interior(mle) and H > 0:
                # beta* is interior: d beta*/d w_n = c_n / (d_n^2 H) (implicit function theorem).
                S = float(np.dot(c, w * e * (w - 1.0) / d2))
                grad -= c * S / (H * n * d2)
        return Evaluation(value, grad, n * mle.q, path, mle.status)


def _beta_interior(mle: Any) -> bool:
    """Whether ``beta*`` lies inside its interval: both paths set ``at_atom`` where it is at
    an end (an extra atom carries mass)."""
    return not mle.at_atom


def value_and_grad(sample: Sample | Log, *, objective: str = "lower_bound",
                   confidence_level: float = 0.95, calibration: str = "chi2",
                   rho: float | None = None, method: str = "auto") -> tuple[float, np.ndarray]:
    r"""An off-policy objective and its gradient with respect to the importance weights ``w_n``.

    Solves, at the sample's weights ``w``, one of

    * ``"lower_bound"``: :math:`v_{lb}(w) = \min_{Q \in \mathcal Q(w)} \sum_n c_n Q_n w_n u_n`,
      the lower end of :func:`elcvx.interval` (the paper's appendix C as corrected in
      docs/primal-dual.md);
    * ``"estimate"``: the EL point estimate :math:`\hat V(w) = \rho + \frac1N \sum_n c_n w_n
      (u_n - \rho) / (1 + \beta^*(w)(w_n - 1))` of :func:`elcvx.estimate`;
    * ``"ips"``: :math:`\frac1N \sum_n c_n w_n u_n`;

    and returns its value and :math:`\partial/\partial w_n` (the derivative with respect to the
    weight of row ``n``, i.e. of all its ``c_n`` copies together).

    **The lower bound's gradient (envelope theorem).** Write the bound as the value of its dual,
    :math:`v_{lb}(w) = \max_{\gamma,\beta,\kappa \ge 0} D(\gamma, \beta, \kappa; w)` subject to
    :math:`\gamma + \beta w_{\min} \ge 0,\ \gamma + \beta w_{\max} \ge 0`, with

    .. math:: D = -\beta - \gamma + \kappa(\phi(w) + N)
              + \sum_m c_m \kappa \log\frac{\gamma + \beta w_m + w_m u_m}{\kappa}, \qquad
              \phi(w) = -N \log N - l^*_{mle}(w) - q/2.

    The constraints do not involve ``w``, so where the maximiser is unique Danskin's
    (envelope) theorem gives :math:`\partial v_{lb}/\partial w_n = \partial D/\partial w_n` at
    the optimum. The same theorem applied to :math:`l^*_{mle}(w) = \max_{\beta'} \sum_m c_m
    \log(1 + \beta'(w_m - 1))` (whose box constraint does not involve ``w`` either) gives
    :math:`\partial l^*_{mle}/\partial w_n = c_n \beta^*/(1 + \beta^*(w_n - 1))`. With
    :math:`q_n = \kappa/(\gamma + \beta w_n + w_n u_n)`, the per-example mass of the minimising
    ``Q``,

    .. math:: \frac{\partial v_{lb}}{\partial w_n} = c_n \Big[ q_n (\beta + u_n)
              - \frac{\kappa \beta^*}{1 + \beta^*(w_n - 1)} \Big].

    Read as a Lagrangian derivative: ``q_n u_n`` moves the objective ``sum Q w u`` at fixed
    ``Q``, ``beta q_n`` prices the constraint ``E_Q[w] = 1`` and the last term is the radius of
    the likelihood ball moving with the MLE. Assumptions: the dual optimum ``(gamma, beta,
    kappa)`` and ``beta*`` are unique (true when the weights are not all equal and the bound is
    positive); then it holds whether or not an extra atom carries mass (an active constraint
    ``gamma + beta wmin = 0`` or ``gamma + beta wmax = 0``, or ``beta*`` at a bound): the
    active set does not depend on ``w``. Where the bound is 0 because no example has ``w u > 0``
    or the ball is too wide, ``v_lb`` is not differentiable; the formula is then evaluated at
    the returned ``Q`` (the MLE's) as an ascent direction. Checked against central finite
    differences to 1e-5 in ``tests/public/test_learning.py``.

    **The estimate's gradient (implicit function theorem).** With ``d_n = 1 + beta* (w_n - 1)``,
    ``H = sum c (w - 1)^2/d^2`` and ``S = sum c w (u - rho)(w - 1)/d^2``: where ``beta*`` is
    interior (``sum c (w - 1)/d = 0``, so ``d beta*/d w_n = c_n/(d_n^2 H)``),
    ``d V/d w_n = c_n [(u_n - rho)(1 - beta*) - S/H] / (N d_n^2)``, which does not depend on
    ``rho``; where ``beta*`` is at a bound it stays there and the ``S/H`` term is absent.

    Parameters
    ----------
    sample : Sample
        The weights ``w(pi)`` and rewards; gradients are on the user's reward scale.
    objective : {"lower_bound", "estimate", "ips"}
    confidence_level : float
        Of the interval whose lower end is the bound.
    calibration : {"chi2", "f"}
        See :func:`elcvx.interval`.
    rho : float, optional
        The extra atom's reward for ``"estimate"`` (user scale; default the reward midpoint).
    method : {"auto", "fast", "cvxpy"}
        How the lower bound is solved (see :func:`fit`).

    Returns
    -------
    value : float
        The objective on the user's reward scale.
    grad : ndarray
        ``d value / d w_n`` per row (user scale).

    Examples
    --------
    >>> import elcvx
    >>> from elcvx.learning import value_and_grad
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> v, g = value_and_grad(s)
    >>> round(v, 4), g.round(4).tolist()  # v = elcvx.interval(s).low
    (0.29, [-0.0326, 0.0367, 0.0324, 0.1463])
    >>> h = 1e-6; w = s.w + [0, 0, 0, h]
    >>> round((value_and_grad(elcvx.Sample(w, s.r, wmax=10))[0] - v) / h, 4)  # finite difference
    0.1463
    """
    iv.option("objective", objective, OBJECTIVES)
    sample, quantile = _sample_and_quantile(sample, method, confidence_level, calibration)
    if rho is None:
        rho = 0.5 * (sample.rmin + sample.rmax)
    rho = iv.finite_scalar("rho", rho)
    if not sample.rmin <= rho <= sample.rmax:
        raise InvalidInputError(f"rho={rho!r} is outside [rmin, rmax] = [{sample.rmin}, {sample.rmax}]")
    ev = Objective(objective, quantile, method, sample.to_unit(rho))(sample)
    span = sample.rmax - sample.rmin
    assert ev.grad is not None  # (need_grad)
    return sample.rmin + span * ev.value, span * ev.grad


def lower_bound_weights(sample: Sample | Log, *, confidence_level: float = 0.95,
                        calibration: str = "chi2", method: str = "auto",
                        scale: str = "n") -> np.ndarray:
    r"""Per-example weights ``N Q_n`` from the minimising ``Q`` of the lower bound's program.

    Solves the lower-bound program of :func:`elcvx.interval` at the sample's weights,

    .. math:: \min_Q \sum_n c_n Q_n w_n u_n \quad\text{s.t.}\quad E_Q[1] = 1,\; E_Q[w] = 1,\;
              \sum_n c_n \log Q_n \ge -N\log N - l^*_{mle} - q/2,

    and returns ``s_n = N Q_n = N kappa / (gamma + beta w_n + w_n u_n)`` per row: the weight of
    each example in the paper's alternating step, which improves ``sum_n Q_n w_n(pi) u_n`` --
    i.e. IPS learning with ``sample_weight=s`` -- with ``Q`` held fixed. ``s = 1`` everywhere
    would be plain IPS (``Q`` the empirical distribution); the scale ``N`` is that of the
    authors' replication for the MLE's weights (``N/(N + beta' (w - 1))`` with their ``beta' =
    N beta*``). Their replication passes the lower bound's ``Q_n`` itself (``scale="none"``),
    which VW's label ``min(1, p/Q_n)`` then clips to a weight of 1 for nearly every example.

    With ``Q`` fixed this is the paper's heuristic, not the gradient of the bound: by the
    envelope theorem (:func:`value_and_grad`) the bound's derivative is ``q_n (beta + u_n) -
    kappa beta*/d_n``, of which the weights keep ``q_n u_n``.

    Parameters
    ----------
    sample : Sample
        Weights ``w(pi)`` of the current policy and rewards.
    confidence_level : float
    calibration : {"chi2", "f"}
    method : {"auto", "fast", "cvxpy"}
        ``"cvxpy"`` solves :func:`elcvx.programs.learning.dro_inner_dual`.
    scale : {"n", "none"}
        ``"n"`` (default): ``N Q_n``, mean about 1; ``"none"``: ``Q_n``.

    Returns
    -------
    ndarray
        One weight per row of the sample (each of a row's ``c_n`` examples has this weight).

    Examples
    --------
    >>> import elcvx
    >>> from elcvx.learning import lower_bound_weights
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> lower_bound_weights(s).round(4).tolist()  # rewarded, heavily weighted rows lose weight
    [2.4704, 0.2124, 0.3975, 0.6754]
    """
    iv.option("scale", scale, WEIGHT_SCALES)
    sample, quantile = _sample_and_quantile(sample, method, confidence_level, calibration)
    ev = Objective("lower_bound", quantile, method)(sample, need_grad=False)
    return ev.weights if scale == "n" else ev.weights / sample.n


def dro_phi(w: ArrayLike, *, counts: ArrayLike | None = None, wmin: float = 0.0, wmax: float,
            quantile: float) -> float:
    r"""The likelihood radius of the inner problem at weights ``w``: ``-N log N - l*_mle(w) - q/2``.

    ``l*_mle(w) = max_beta sum_n c_n log(1 + beta (w_n - 1))`` over ``beta`` in
    ``[-1/(wmax - 1), 1/(1 - wmin)]`` (the paper's eq. (betastar), solved by the fast path's
    Newton iteration). This is the ``phi`` parameter of :func:`~elcvx.programs.dro_inner_primal` and
    :func:`~elcvx.programs.dro_inner_dual`; it changes with ``pi`` together with ``w``.

    Parameters
    ----------
    w : array_like
        Importance weights ``w_n(pi)`` in ``[wmin, wmax]``.
    counts : array_like, optional
        Row multiplicities (ones when omitted).
    wmin, wmax : float
        The weight bounds of the program.
    quantile : float
        The calibration quantile ``q`` of the interval (e.g. ``chi2(1).ppf(0.95)``).

    Examples
    --------
    >>> from elcvx.learning.objective import dro_phi
    >>> round(dro_phi([0.5, 1.5], wmax=10.0, quantile=3.84), 4)  # -2 log 2 - 0 - 1.92
    -3.3063
    """
    ws = np.asarray(w, dtype=float)
    c = None if counts is None else np.asarray(counts, dtype=float)
    n = float(ws.size) if c is None else float(c.sum())

    # (The rewards are unused by the MLE.)
    mle = fast.mle(Sample(ws, np.zeros_like(ws), counts=c, wmin=float(wmin), wmax=float(wmax)),
                   ())
    return -n * math.log(n) - mle.loglik - 0.5 * float(quantile)
