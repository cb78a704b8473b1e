"""Learning a policy from logged bandit feedback: :func:`fit`, its result and its history."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
from scipy import optimize

from . import _inputs as bi
from .. import _validation as iv
from ..errors import InvalidInputError
from ..sample import Sample
from .objective import OBJECTIVES, Objective, finite_quantile
from .policies import DifferentiablePolicy, Learner

SOLVERS = ("alternating", "direct")

__all__ = ["fit", "FitResult", "FitStep"]


class FitStep(NamedTuple):
    """One step of :func:`fit`'s history.

    Attributes
    ----------
    step : int
        0 for the initial policy, then one per pass (alternating) or L-BFGS iteration (direct).
    value : float
        The objective at the policy after this step, on the user's reward scale.
    elapsed : float
        Seconds since the fit started.
    surrogate_start, surrogate_end : float
        Alternating method only (NaN for direct): the learner's weighted objective
        ``(1/N) sum_n s_n w_n(pi) u_n`` (unit reward scale) with the weights ``s`` fixed at this
        pass, before and after the learner's step. For the lower bound, ``surrogate_start`` is
        the bound at the policy before the step.
    """

    step: int
    value: float
    elapsed: float
    surrogate_start: float = math.nan
    surrogate_end: float = math.nan


@dataclass(frozen=True, eq=False)
class FitResult:
    """What :func:`fit` returns; unpacks as ``(policy, history)``.

    Attributes
    ----------
    policy : Learner
        The fitted policy (the object passed in, updated in place).
    history : tuple of FitStep
        The objective after each step, step 0 first.
    objective, solver : str
    value : float
        The objective at the fitted policy (user scale).
    elapsed : float
        Seconds.
    n : int
        Number of logged examples.
    path : str
        How the inner problem was solved last (``"fast"``, ``"cvxpy"``, ``"closed form"``).
    message : str
        The direct solver's L-BFGS message, or how many passes the alternating method made.
    """

    policy: object
    history: tuple[FitStep, ...] = field(repr=False)
    objective: str
    solver: str
    value: float
    elapsed: float
    n: int
    path: str
    message: str

    def __iter__(self) -> Iterator[Any]:
        return iter((self.policy, self.history))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> Any:
        return (self.policy, self.history)[i]


def check_action_probs(pi: Any, n: int) -> np.ndarray:
    pi = np.asarray(pi, dtype=float).reshape(-1)
    if pi.size != n:
        raise InvalidInputError(f"policy.action_probs returned {pi.size} values for {n} examples")
    bad = ~((pi >= 0) & (pi <= 1 + 1e-12))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"policy.action_probs returned pi[{i}]={float(pi[i])!r}, not a probability")
    out: np.ndarray = np.minimum(pi, 1.0)
    return out


def fit(policy: Learner, X: Any, actions: Any, logging_prob: Any, rewards: Any, *,
        objective: str = "lower_bound", solver: str = "alternating",
        confidence_level: float = 0.95, passes: int = 4, wmax: float | None = None,
        rmin: float = 0.0, rmax: float = 1.0, calibration: str = "chi2", method: str = "auto",
        max_iter: int = 200) -> FitResult:
    r"""Learn a policy from logged bandit feedback by maximising an off-policy objective.

    Solves

    .. math:: \max_{\pi} J(w(\pi)), \qquad w_n(\pi) = \pi(a_n | x_n) / p_n,

    with ``J`` the EL lower bound :math:`v_{lb}(w) = \min_{Q \in \mathcal Q(w)} \sum_n Q_n w_n
    u_n` (``objective="lower_bound"``, the paper's distributionally robust game), the EL estimate
    (``"estimate"``) or IPS (``"ips"``); see :func:`value_and_grad`.

    * ``solver="alternating"`` (the paper's; any :class:`Learner`): for each of ``passes``
      passes, solve the inner problem at the current ``pi`` and call
      ``policy.refit(X, actions, logging_prob, u, sample_weight=N Q)``
      (:func:`lower_bound_weights`; ``N Q^mle`` for ``"estimate"``, ones for ``"ips"``).
      **The objective need not increase from pass to pass**: the learner improves
      ``S(pi) = (1/N) sum_n s_n w_n(pi) u_n`` at the ``Q`` of the previous policy, and
      ``S(pi_old) = v_lb(pi_old)``, but ``Q`` is in general not feasible for the new policy
      (``E_Q[w(pi_new)] != 1`` and the ball's radius moves with the MLE), so
      ``v_lb(pi_new) <= S(pi_new)`` does not follow; nor does ``S`` ignore the terms
      ``beta q_n`` and ``kappa beta*/d_n`` of the true gradient. What does hold is the
      learner's own progress, ``surrogate_end >= surrogate_start`` in the history, for a
      learner that does not decrease its weighted objective (e.g. :class:`LinearSoftmaxPolicy`
      with ``l2 = 0``; with a ridge penalty, the penalised objective).
    * ``solver="direct"`` (a :class:`DifferentiablePolicy`): L-BFGS (scipy) on
      ``J(w(pi(theta))) - R(theta)`` with the envelope-theorem gradient of
      :func:`value_and_grad` chained through ``w_n = pi(a_n|x_n)/p_n`` and
      ``policy.grad_action_probs``; ``R`` is ``policy.penalty``. A local maximum in general
      (``J`` is not concave in ``theta``).

    Parameters
    ----------
    policy : Learner or DifferentiablePolicy
        Updated in place and returned (e.g. :class:`LinearSoftmaxPolicy`).
    X : array_like, shape (n, n_features)
        Contexts.
    actions : array_like of int, shape (n,)
        Logged actions, ``0 .. K-1``.
    logging_prob : array_like, shape (n,)
        ``p_n = h(a_n | x_n)``, the logging policy's probability of the logged action (per row:
        the logging policy may change over time).
    rewards : array_like, shape (n,)
        In ``[rmin, rmax]``.
    objective : {"lower_bound", "estimate", "ips"}
    solver : {"alternating", "direct"}
    confidence_level : float
        Of the interval whose lower end is the objective (``"lower_bound"`` only).
    passes : int
        Passes of the alternating method (the paper: 4).
    wmax : float, optional
        Upper bound on any importance weight; default ``inf`` (always valid). With a logging
        policy that gives every action probability at least ``pmin``, ``1/pmin`` gives a
        tighter bound. Must be at least ``max_n 1/p_n``, since a policy may put probability 1 on
        any logged action.
    rmin, rmax : float
        The reward range (default ``[0, 1]``).
    calibration : {"chi2", "f"}
        See :func:`elcvx.interval`.
    method : {"auto", "fast", "cvxpy"}
        The inner problem's solver, through :mod:`elcvx.dispatch` as for
        :func:`elcvx.interval`: ``"auto"`` the fast path (if it fails: the compiled DPP program
        of :func:`elcvx.programs.learning.dro_inner_dual` for ``N <=``
        :data:`elcvx.programs.learning.DPP_MAX_ROWS`, else or then the certified cvxpy path of
        :func:`elcvx.interval`); ``"cvxpy"`` that program, compiled once, re-solved at each
        ``pi`` and certified (:func:`elcvx.cvx.inner.solve_certified`), for ``N <=
        DPP_MAX_ROWS``, and as ``"auto"`` above; ``"fast"`` the fast path only.
    max_iter : int
        L-BFGS iterations of the direct solver.

    Returns
    -------
    FitResult
        Unpacks as ``(policy, history)``.

    Examples
    --------
    >>> from elcvx.learning import LinearSoftmaxPolicy, SyntheticBandit, fit
    >>> bandit = SyntheticBandit(n_features=3, n_actions=3, seed=1)
    >>> X, a, p, r = bandit.log(300, seed=2)
    >>> policy, history = fit(LinearSoftmaxPolicy(3, 3), X, a, p, r, solver="direct",
    ...                       wmax=bandit.wmax)
    >>> round(history[0].value, 3), round(history[-1].value, 3)  # lower bound: uniform -> fitted
    (0.441, 0.77)
    >>> round(bandit.value(policy), 3), round(bandit.logging_value, 3)  # true values
    (0.803, 0.706)
    """
    iv.option("objective", objective, OBJECTIVES)
    iv.option("solver", solver, SOLVERS)
    iv.option("method", method, iv.METHODS)
    iv.option("calibration", calibration, iv.CALIBRATIONS)
    level = iv.confidence_level(confidence_level)
    passes = bi.positive_int("passes", passes)
    max_iter = bi.positive_int("max_iter", max_iter)
    if not isinstance(policy, Learner):
        raise InvalidInputError(
            f"policy={policy!r} is not a Learner: it needs action_probs(X, actions) and "
            "refit(X, actions, logging_prob, rewards, sample_weight)")
    if solver == "direct" and not isinstance(policy, DifferentiablePolicy):
        raise InvalidInputError(
            f"solver='direct' needs a differentiable policy (get_params, set_params, "
            f"grad_action_probs, penalty); policy={policy!r} is not one: use solver='alternating'")
    X, a = bi.examples(X, actions, n_actions=getattr(policy, "n_actions", None),
                       n_features=getattr(policy, "n_features", None))
    n = a.size
    p = bi.logging_prob(logging_prob, n)
    r = iv.vector("rewards", rewards, n=n, length_of="actions")
    rmin, rmax = iv.finite_scalar("rmin", rmin), iv.finite_scalar("rmax", rmax)
    if rmin < rmax:  # (else the Sample below says what is wrong with them)
        iv.within("rewards", r, rmin, rmax, hint=" (the rewards must lie in [rmin, rmax])")
    wmax = iv.finite_scalar("wmax", math.inf if wmax is None else wmax, allow_inf=True)
    need = float(np.max(1.0 / p))
    if not wmax >= need * (1 - 1e-12):
        raise InvalidInputError(
            f"wmax={wmax!r} is below max 1/logging_prob = {need!r}: a policy that picks that "
            "logged action would have a larger weight")

    start = time.perf_counter()
    pi = check_action_probs(policy.action_probs(X, a), n)
    # The log at the initial policy, on the user's reward scale: its bounds and rewards are
    # checked as every Sample's are.
    first = Sample(np.minimum(pi / p, wmax), r, wmax=wmax, rmin=rmin, rmax=rmax)
    log = _Log(X, a, p, first.u, wmax)
    span = rmax - rmin
    quantile = finite_quantile(calibration, level, n) if objective == "lower_bound" else 0.0
    inner = Objective(objective, quantile, method)
    ev = inner(first, need_grad=False)
    history = [FitStep(0, rmin + span * ev.value, time.perf_counter() - start)]

    def record(value: float, *surrogates: float) -> None:
        history.append(FitStep(len(history), rmin + span * value, time.perf_counter() - start,
                               *surrogates))

    if solver == "alternating":
        ev = _alternate(policy, log, inner, pi, ev, passes, record)
        message = f"{passes} passes"
    else:
        ev, message = _direct(policy, log, inner, max_iter, record)
        if history[-1].value != rmin + span * ev.value:
            record(ev.value)
    return FitResult(policy=policy, history=tuple(history), objective=objective, solver=solver,
                     value=rmin + span * ev.value, elapsed=time.perf_counter() - start, n=n,
                     path=ev.path, message=message)


@dataclass(frozen=True)
class _Log:
    """The validated log, and a policy's importance weights on it."""

    X: np.ndarray
    actions: np.ndarray
    logging_prob: np.ndarray
    u: np.ndarray  # rewards on the unit scale
    wmax: float

    def action_probs(self, policy: Learner) -> np.ndarray:
        return check_action_probs(policy.action_probs(self.X, self.actions), self.actions.size)

    def weights(self, pi: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.minimum(pi / self.logging_prob, self.wmax)
        return out

    def sample(self, pi: np.ndarray) -> Sample:
        """The Sample of the policy's weights (unit reward scale), which the objective takes."""
        return Sample(self.weights(pi), self.u, wmax=self.wmax)


def _alternate(policy: Learner, log: _Log, inner: Objective, pi: np.ndarray, ev: Any, passes: int,
               record: Callable[..., None]) -> Any:
    """The paper's alternating method: ``passes`` refits, each with the example weights ``N Q``
    of the inner problem (``ev``, at the policy's probabilities ``pi``) before it. Returns the
    objective at the last policy."""
    X, a, p, u = log.X, log.actions, log.logging_prob, log.u
    for _ in range(passes):
        s = ev.weights
        surrogate_start = float(np.mean(s * log.weights(pi) * u))
        policy.refit(X, a, p, u, s)
        pi = log.action_probs(policy)
        surrogate_end = float(np.mean(s * log.weights(pi) * u))
        ev = inner(log.sample(pi), need_grad=False)
        record(ev.value, surrogate_start, surrogate_end)
    return ev


def _direct(policy: Any, log: _Log, inner: Objective, max_iter: int,
            record: Callable[..., None]) -> tuple[Any, str]:
    """L-BFGS-B on the objective minus the policy's penalty, with the gradient chained through
    ``w_n = pi(a_n|x_n)/p_n``. Returns the objective at the fitted policy and L-BFGS's message."""
    seen: dict[bytes, float] = {}

    def negative(theta: np.ndarray) -> tuple[float, np.ndarray]:
        policy.set_params(theta)
        ev = inner(log.sample(log.action_probs(policy)))
        g_theta = policy.grad_action_probs(log.X, log.actions, ev.grad / log.logging_prob)
        pen, dpen = policy.penalty(theta)
        seen.clear()
        seen[theta.tobytes()] = ev.value
        return -(ev.value - pen), -(np.asarray(g_theta, dtype=float) - dpen)

    def step(intermediate_result: Any) -> None:
        x = intermediate_result.x
        if x.tobytes() not in seen:
            negative(x)
        record(seen[x.tobytes()])

    res = optimize.minimize(negative, np.asarray(policy.get_params(), dtype=float), jac=True,
                            method="L-BFGS-B", callback=step, options=dict(maxiter=max_iter))
    policy.set_params(res.x)
    return inner(log.sample(log.action_probs(policy)), need_grad=False), str(res.message)
