r"""Lower-bound policy learning: the distributionally robust game of the paper, solved two ways.

The paper (section "Offline Contextual Bandit Learning", appendix "Learning from Logged Bandit
Feedback") learns a policy ``pi`` from a log ``(x_n, a_n, p_n, r_n)`` by maximising the EL lower
bound of its value,

.. math:: \max_{\pi} v_{lb}(\pi), \qquad v_{lb}(\pi) = \min_{Q \in \mathcal Q(\pi)}
          \sum_n Q_n w_n(\pi) u_n, \qquad w_n(\pi) = \pi(a_n | x_n) / p_n,

with ``Q(pi)`` the likelihood ball of the confidence interval (rewards ``u`` on ``[0, 1]``). Two
solvers of this max-min game:

* ``solver="alternating"`` -- the paper's: fix ``pi``, solve the inner problem (its duals give
  the minimising ``Q``); fix ``Q``, let a learner improve ``pi`` on examples weighted by
  ``N Q_n`` (:func:`lower_bound_weights`); repeat for ``passes`` passes. Any learner that
  honours the :class:`Learner` protocol can play: :class:`LinearSoftmaxPolicy` (numpy/scipy)
  and :class:`VowpalWabbitPolicy` (the ``vw`` extra, as the paper used) are provided.
* ``solver="direct"`` -- L-BFGS on ``v_lb(pi(theta))`` itself for a differentiable policy
  (:class:`DifferentiablePolicy`), with the exact gradient that the envelope theorem gives from
  the optimal ``Q`` and duals (:func:`value_and_grad`).

The EL point estimate (``objective="estimate"``) and IPS (``objective="ips"``) are offered as
objectives too, so that the three can be compared (``examples/learn_policy.py``;
:class:`SyntheticBandit` has known true values). See ``docs/learning.md``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from scipy import optimize

from . import _calibration, _moment
from . import _validation as iv
from .errors import InvalidInputError, SolverError
from .sample import Sample, check_sample

OBJECTIVES = ("lower_bound", "estimate", "ips")
SOLVERS = ("alternating", "direct")
WEIGHT_SCALES = ("n", "none")

__all__ = [
    "Learner",
    "DifferentiablePolicy",
    "LinearSoftmaxPolicy",
    "VowpalWabbitPolicy",
    "lower_bound_weights",
    "value_and_grad",
    "fit",
    "FitResult",
    "FitStep",
    "SyntheticBandit",
]


# ------------------------------------------------------------------------------------------------
# Protocols
# ------------------------------------------------------------------------------------------------
@runtime_checkable
class Learner(Protocol):
    """A policy that the alternating method can use: it gives ``pi(a|x)`` and can be refitted.

    Methods
    -------
    action_probs(X, actions) -> ndarray
        ``pi(a_n | x_n)`` for the logged actions, shape ``(n,)``, values in ``[0, 1]``.
    refit(X, actions, logging_prob, rewards, sample_weight) -> None
        One learning step on importance-weighted bandit examples: improve (in place) the
        weighted IPS objective ``(1/N) sum_n s_n pi(a_n | x_n) u_n / p_n`` with ``s`` the
        ``sample_weight`` and ``u`` the ``rewards`` on ``[0, 1]``. The alternating method passes
        ``s = N Q`` (:func:`lower_bound_weights`); ``s = 1`` is plain IPS learning.
    """

    def action_probs(self, X, actions) -> np.ndarray: ...

    def refit(self, X, actions, logging_prob, rewards, sample_weight) -> None: ...


@runtime_checkable
class DifferentiablePolicy(Learner, Protocol):
    """A :class:`Learner` with parameters ``theta`` and the derivatives that the direct solver needs.

    Methods
    -------
    get_params() -> ndarray
        The parameters as one flat float array.
    set_params(theta) -> None
        Set them (in place).
    grad_action_probs(X, actions, g) -> ndarray
        The vector-Jacobian product ``sum_n g_n d pi(a_n | x_n) / d theta`` (shape of
        ``get_params()``).
    penalty(theta) -> (float, ndarray)
        A regulariser ``R(theta)`` and its gradient; the direct solver maximises
        ``objective - R``. Return ``(0.0, zeros)`` for none.
    """

    def get_params(self) -> np.ndarray: ...

    def set_params(self, theta) -> None: ...

    def grad_action_probs(self, X, actions, g) -> np.ndarray: ...

    def penalty(self, theta) -> tuple: ...


# ------------------------------------------------------------------------------------------------
# Input checks (the scalars and vectors go through elcvx._validation)
# ------------------------------------------------------------------------------------------------
def _matrix(name, X, n_rows=None, n_cols=None) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a 2-d array of numbers, got {type(X).__name__}") from None
    if X.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-dimensional (n_examples, n_features), got shape {X.shape}")
    if n_cols is not None and X.shape[1] != n_cols:
        raise InvalidInputError(f"{name} has {X.shape[1]} columns but the policy has n_features={n_cols}")
    if n_rows is not None and X.shape[0] != n_rows:
        raise InvalidInputError(f"{name} has {X.shape[0]} rows but actions has length {n_rows}")
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        raise InvalidInputError(f"{name}[{i}, {j}]={float(X[i, j])!r} is not finite ({int(bad.sum())} such values)")
    return X


def _actions(actions, n_actions=None) -> np.ndarray:
    a = iv.vector("actions", actions)
    frac = a != np.round(a)
    if frac.any():
        i = int(np.flatnonzero(frac)[0])
        raise InvalidInputError(f"actions[{i}]={float(a[i])!r} is not an integer action index")
    if n_actions is not None:
        iv.within("actions", a, 0, n_actions - 1, hint=f" (actions are indices 0..{n_actions - 1})")
    else:
        iv.within("actions", a, 0, np.inf, hint=" (actions are indices 0, 1, ...)")
    return a.astype(np.intp)


def _positive_int(name, value) -> int:
    x = iv.finite_scalar(name, value)
    if x != int(x) or x < 1:
        raise InvalidInputError(f"{name}={value!r} must be a positive integer")
    return int(x)


def _logging_prob(p, n) -> np.ndarray:
    p = iv.vector("logging_prob", p, n=n, length_of="actions")
    bad = ~((p > 0) & (p <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"logging_prob[{i}]={float(p[i])!r} must lie in (0, 1]")
    return p


# ------------------------------------------------------------------------------------------------
# The linear softmax policy
# ------------------------------------------------------------------------------------------------
class LinearSoftmaxPolicy:
    r"""A linear softmax policy ``pi(a|x) = softmax(x W + b)_a``, written with numpy and scipy.

    A :class:`DifferentiablePolicy` (so both solvers of :func:`fit` take it). Its refit step
    solves

    .. math:: \max_{W, b}\; \frac1N \sum_n s_n \frac{\pi(a_n|x_n)}{p_n} u_n
              - \frac{l_2}{2} (\|W\|^2 + \|b\|^2)

    by L-BFGS (scipy), warm-started at the current parameters: weighted IPS learning, the
    learning pass of the paper's alternating method with per-example weights ``s``.

    Parameters
    ----------
    n_features, n_actions : int
        The context dimension and the number of actions (>= 2).
    l2 : float, optional
        The ridge penalty on all parameters, used by :meth:`refit` and by the direct solver
        (default 1e-3: without it an IPS-type objective is maximised only at infinite
        parameters, a deterministic policy; the first alternating pass then saturates the
        softmax and later passes change nothing).
    max_iter : int, optional
        L-BFGS iterations per :meth:`refit` (default 100).

    Attributes
    ----------
    coef : ndarray, shape (n_features, n_actions)
    intercept : ndarray, shape (n_actions,)
        Both start at zero: the uniform policy.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx.learning import LinearSoftmaxPolicy
    >>> pi = LinearSoftmaxPolicy(2, 3)
    >>> pi.probs(np.ones((1, 2))).round(4).tolist()  # zero parameters: uniform
    [[0.3333, 0.3333, 0.3333]]
    >>> pi.set_params(np.r_[np.zeros(6), 0.0, 0.0, np.log(2.0)])
    >>> pi.action_probs(np.ones((2, 2)), [0, 2]).tolist()
    [0.25, 0.5]
    """

    def __init__(self, n_features: int, n_actions: int, *, l2: float = 1e-3, max_iter: int = 100):
        self.n_features = _positive_int("n_features", n_features)
        self.n_actions = _positive_int("n_actions", n_actions)
        if self.n_actions < 2:
            raise InvalidInputError(f"n_actions={n_actions!r} must be at least 2")
        self.l2 = iv.finite_scalar("l2", l2)
        if self.l2 < 0:
            raise InvalidInputError(f"l2={l2!r} must be >= 0")
        self.max_iter = _positive_int("max_iter", max_iter)
        self.coef = np.zeros((self.n_features, self.n_actions))
        self.intercept = np.zeros(self.n_actions)

    def __repr__(self):
        return f"LinearSoftmaxPolicy(n_features={self.n_features}, n_actions={self.n_actions}, l2={self.l2!r})"

    # -- parameters -----------------------------------------------------------------------------
    def get_params(self) -> np.ndarray:
        """``theta = (W.ravel(), b)``, a copy."""
        return np.concatenate([self.coef.ravel(), self.intercept])

    def set_params(self, theta) -> None:
        """Set ``W`` and ``b`` from a flat ``theta`` of length ``(n_features + 1) n_actions``."""
        theta = iv.vector("theta", theta)
        size = (self.n_features + 1) * self.n_actions
        if theta.size != size:
            raise InvalidInputError(f"theta has length {theta.size} but this policy has {size} parameters")
        k = self.n_features * self.n_actions
        self.coef = theta[:k].reshape(self.n_features, self.n_actions).copy()
        self.intercept = theta[k:].copy()

    def penalty(self, theta):
        """``(l2/2) ||theta||^2`` and its gradient ``l2 theta``."""
        theta = np.asarray(theta, dtype=float)
        return 0.5 * self.l2 * float(theta @ theta), self.l2 * theta

    # -- probabilities ---------------------------------------------------------------------------
    def probs(self, X) -> np.ndarray:
        """``pi(a | x)`` for every row of ``X`` and every action, shape ``(n, n_actions)``."""
        X = _matrix("X", X, n_cols=self.n_features)
        return self._probs(X)

    def _probs(self, X):
        logits = X @ self.coef + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=1, keepdims=True)
        return logits

    def action_probs(self, X, actions) -> np.ndarray:
        """``pi(a_n | x_n)`` for the given actions, shape ``(n,)``."""
        X = _matrix("X", X, n_cols=self.n_features)
        a = _actions(actions, self.n_actions)
        if a.size != X.shape[0]:
            raise InvalidInputError(f"X has {X.shape[0]} rows but actions has length {a.size}")
        return self._probs(X)[np.arange(a.size), a]

    def grad_action_probs(self, X, actions, g) -> np.ndarray:
        r"""``sum_n g_n d pi(a_n|x_n) / d theta``.

        With ``P`` the probabilities and ``pi_n = P[n, a_n]``, the softmax gives
        ``d pi_n / d logit_{n,k} = pi_n (1[k = a_n] - P[n, k])``; the logits are ``x W + b``, so
        the product is ``(X^T G, sum_n G_n)`` with ``G[n, k] = g_n pi_n (1[k = a_n] - P[n, k])``.
        """
        X = _matrix("X", X, n_cols=self.n_features)
        a = _actions(actions, self.n_actions)
        g = np.asarray(g, dtype=float)
        return self._vjp(X, a, self._probs(X), g)

    @staticmethod
    def _vjp(X, a, P, g):
        rows = np.arange(a.size)
        pi = P[rows, a]
        G = -P * (g * pi)[:, None]
        G[rows, a] += g * pi
        return np.concatenate([(X.T @ G).ravel(), G.sum(axis=0)])

    # -- learning --------------------------------------------------------------------------------
    def refit(self, X, actions, logging_prob, rewards, sample_weight) -> None:
        """One learning step: maximise the weighted IPS objective minus the ridge penalty (L-BFGS).

        ``rewards`` are on ``[0, 1]``; ``sample_weight`` ``s_n >= 0``. Warm-started at the
        current parameters, at most ``max_iter`` iterations.
        """
        X = _matrix("X", X, n_cols=self.n_features)
        a = _actions(actions, self.n_actions)
        n = a.size
        if X.shape[0] != n:
            raise InvalidInputError(f"X has {X.shape[0]} rows but actions has length {n}")
        p = _logging_prob(logging_prob, n)
        u = iv.vector("rewards", rewards, n=n, length_of="actions")
        s = iv.vector("sample_weight", sample_weight, n=n, length_of="actions")
        iv.within("sample_weight", s, 0.0, np.inf)
        coeff = s * u / p / n  # d objective / d pi_n
        rows = np.arange(n)

        def negative(theta):
            self.set_params(theta)
            P = self._probs(X)
            value = float(coeff @ P[rows, a])
            grad = self._vjp(X, a, P, coeff)
            pen, dpen = self.penalty(theta)
            return -(value - pen), -(grad - dpen)

        res = optimize.minimize(negative, self.get_params(), jac=True, method="L-BFGS-B",
                                options=dict(maxiter=self.max_iter))
        self.set_params(res.x)


# ------------------------------------------------------------------------------------------------
# The Vowpal Wabbit adapter (optional extra)
# ------------------------------------------------------------------------------------------------
class VowpalWabbitPolicy:
    """A Vowpal Wabbit contextual-bandit learner as a :class:`Learner` (the ``vw`` extra).

    The paper's learner: VW in IPS mode (``--cb_explore K --cb_type ips``), one online pass over
    the examples per :meth:`refit`, each example's IPS target multiplied by its weight. The
    label of example ``n`` is ``a_n+1 : -s_n u_n : p_n`` (VW minimises costs, so the cost is the
    weighted negative reward on ``[0, 1]``; examples with ``s_n = 0`` are skipped). (The
    authors' replication passes the weight through the probability, ``min(1, p_n / s_n)``,
    which clips the weight at ``p_n``; scaling the cost carries it exactly.) Features are the
    columns of ``X``, in one namespace, named ``f0, f1, ...``.

    Parameters
    ----------
    n_actions : int
    epsilon : float, optional
        Exploration of the learned policy: ``pi(a|x) = (1 - epsilon) 1[a = greedy] +
        epsilon / K`` (default 0, the greedy policy the paper evaluates).
    args : str, optional
        More VW arguments (e.g. ``"-b 20 --power_t 0.5"``).
    workspace : object, optional
        A ready ``vowpalwabbit.Workspace`` (or any object with its ``learn(str)``,
        ``predict(str) -> list of action probabilities`` and ``finish()``) to use instead of
        creating one; ``vowpalwabbit`` is then not imported.

    Raises
    ------
    elcvx.io.MissingDependencyError
        When ``vowpalwabbit`` is needed and not installed: ``pip install 'elcvx[vw]'``.

    Examples
    --------
    (Skipped by the doctest run, which must pass without the extra.)

    >>> from elcvx.learning import VowpalWabbitPolicy
    >>> pi = VowpalWabbitPolicy(3, epsilon=0.3)  # doctest: +SKIP
    >>> pi.probs([[1.0, 0.0]]).round(2).tolist()  # untrained: the first action is greedy  # doctest: +SKIP
    [[0.8, 0.1, 0.1]]
    """

    def __init__(self, n_actions: int, *, epsilon: float = 0.0, args: str = "", workspace=None):
        self.n_actions = _positive_int("n_actions", n_actions)
        if self.n_actions < 2:
            raise InvalidInputError(f"n_actions={n_actions!r} must be at least 2")
        self.epsilon = iv.finite_scalar("epsilon", epsilon)
        if not 0.0 <= self.epsilon <= 1.0:
            raise InvalidInputError(f"epsilon={epsilon!r} must lie in [0, 1]")
        if not isinstance(args, str):
            raise InvalidInputError(f"args={args!r} must be a string of VW arguments")
        self.args = args
        if workspace is None:
            from .errors import _require

            vw = _require("vowpalwabbit", "vw", "VowpalWabbitPolicy")
            workspace = vw.Workspace(f"--cb_explore {self.n_actions} --cb_type ips --epsilon 0 "
                                     f"--quiet {args}")
        self.workspace = workspace

    def __repr__(self):
        return f"VowpalWabbitPolicy(n_actions={self.n_actions}, epsilon={self.epsilon!r}, args={self.args!r})"

    @staticmethod
    def _features(x) -> str:
        return "| " + " ".join(f"f{j}:{v:.10g}" for j, v in enumerate(x) if v != 0.0)

    def _greedy(self, X):
        out = np.empty(X.shape[0], dtype=np.intp)
        for i, x in enumerate(X):
            pmf = np.asarray(self.workspace.predict(self._features(x)), dtype=float)
            out[i] = int(np.argmax(pmf))
        return out

    def probs(self, X) -> np.ndarray:
        """``pi(a|x)`` for every row and action: ``(1 - epsilon)`` on VW's greedy action + uniform."""
        X = _matrix("X", X)
        P = np.full((X.shape[0], self.n_actions), self.epsilon / self.n_actions)
        P[np.arange(X.shape[0]), self._greedy(X)] += 1.0 - self.epsilon
        return P

    def action_probs(self, X, actions) -> np.ndarray:
        """``pi(a_n | x_n)`` for the logged actions."""
        a = _actions(actions, self.n_actions)
        X = _matrix("X", X, n_rows=a.size)
        return self.probs(X)[np.arange(a.size), a]

    def refit(self, X, actions, logging_prob, rewards, sample_weight) -> None:
        """One online pass of VW over the weighted examples (see the class docstring)."""
        a = _actions(actions, self.n_actions)
        n = a.size
        X = _matrix("X", X, n_rows=n)
        p = _logging_prob(logging_prob, n)
        u = iv.vector("rewards", rewards, n=n, length_of="actions")
        s = iv.vector("sample_weight", sample_weight, n=n, length_of="actions")
        iv.within("sample_weight", s, 0.0, np.inf)
        for i in range(n):
            if s[i] > 0:
                self.workspace.learn(f"{a[i] + 1}:{-s[i] * u[i]:.10g}:{p[i]:.10g} {self._features(X[i])}")

    def close(self) -> None:
        """Release VW's workspace."""
        finish = getattr(self.workspace, "finish", None)
        if finish is not None:
            finish()


# ------------------------------------------------------------------------------------------------
# Objectives and their gradients with respect to the weights
# ------------------------------------------------------------------------------------------------
class _Evaluation(NamedTuple):
    value: float  # unit reward scale
    grad: np.ndarray | None  # d value / d w_n
    weights: np.ndarray  # per-example learner weights N q_n (ones for IPS)
    path: str
    status: str


def _finite_quantile(calibration, level, n) -> float:
    """The interval's likelihood-ratio threshold; learning needs a finite one."""
    quantile = _calibration.quantile(calibration, level, n)
    if not np.isfinite(quantile):
        raise InvalidInputError(f"calibration={calibration!r} has no quantile at N={n:g}: "
                                "the interval is the whole reward range")
    return quantile


def _ok(status: str) -> bool:
    return status.startswith("optimal")


class _Inner:
    """The objective at successive ``w(pi)``, with the inner program compiled once when it pays.

    ``method="fast"``: the fast path (SolverError if it fails); ``"auto"``: the fast path, then
    if it does not reach an optimal status :meth:`_cvxpy_fallback`; ``"cvxpy"``: the DPP program
    when ``n_rows <= DPP_MAX_ROWS``, the fast path's duals above (where compiling the vector
    parameter costs more than it saves).
    """

    def __init__(self, u, c, wmin, wmax, quantile, method, objective, rho):
        self.u, self.c = u, c
        self.n = float(u.size) if c is None else float(c.sum())
        self.wmin, self.wmax, self.quantile = wmin, wmax, quantile
        self.method, self.objective, self.rho = method, objective, rho
        self.program = None
        self.dpp_max_rows = None
        if method == "cvxpy" and objective == "lower_bound":
            from .programs.learning import DPP_MAX_ROWS

            self.dpp_max_rows = DPP_MAX_ROWS

    @property
    def uses_dpp(self) -> bool:
        return self.dpp_max_rows is not None and self.u.size <= self.dpp_max_rows

    def _sample(self, w, u):
        return Sample(w, u, counts=self.c, wmin=self.wmin, wmax=self.wmax)

    def _mle(self, w):
        mle = _moment.mle(self._sample(w, self.u), ())
        if not _ok(mle.status):
            raise SolverError(f"the fast path did not solve the MLE (status: {mle.status})",
                              solver="elcvx fast path", status=mle.status)
        return mle

    def _dpp(self, w, mle):
        from .programs.learning import dro_inner, read_solution

        if self.program is None:
            sample = Sample(w, self.u, counts=self.c, wmin=self.wmin, wmax=self.wmax)
            self.program = dro_inner(sample, form="dual")
        phi = -self.n * math.log(self.n) - mle.loglik - 0.5 * self.quantile
        self.program.solve(w=w, phi=phi)
        return read_solution(self.program)

    def _cvxpy_fallback(self, w, mle):
        """Where the fast path failed: the DPP program where compiling it pays (``N <=
        DPP_MAX_ROWS``; compiled at the first failure, re-solved at later ones), else or if it
        fails too, the certified cvxpy path of :func:`elcvx.interval` with its own fallbacks."""
        from . import _cvx
        from .programs.learning import DPP_MAX_ROWS

        if self.u.size <= DPP_MAX_ROWS:
            try:
                return self._dpp(w, mle)
            except SolverError:
                pass
        sample = Sample(w, self.u, counts=self.c, wmin=self.wmin, wmax=self.wmax)
        return _cvx.lower_bound(sample, loglik=mle.loglik, quantile=self.quantile)

    def __call__(self, w, need_grad=True) -> _Evaluation:
        u, c, n = self.u, self.c, self.n
        cc = np.ones_like(w) if c is None else c
        if self.objective == "ips":
            value = float(np.dot(cc, w * u)) / n
            return _Evaluation(value, cc * u / n if need_grad else None, np.ones_like(w), "closed form", "optimal")
        mle = self._mle(w)
        d = 1.0 + mle.beta * (w - 1.0)
        if self.objective == "estimate":
            return self._estimate(w, mle, d, cc, need_grad)
        path = "fast"
        if self.uses_dpp:
            sol, path = self._dpp(w, mle), "cvxpy"
        else:
            sol = _moment.lower_bound(self._sample(w, u), (), mle.loglik, self.quantile,
                                      mle_sol=mle)
            if not _ok(sol.status):
                if self.method == "fast":
                    raise SolverError(f"the fast path did not solve the lower bound (status: {sol.status})",
                                      solver="elcvx fast path", status=sol.status)
                sol, path = self._cvxpy_fallback(w, mle), "cvxpy"
        grad = None
        if need_grad:
            # Envelope theorem (see value_and_grad): c_n [q_n (beta + u_n) - kappa beta*/d_n].
            grad = cc * (sol.q * (sol.beta + u) - sol.kappa * mle.beta / d)
        return _Evaluation(float(sol.value), grad, n * sol.q, path, sol.status)

    def _estimate(self, w, mle, d, cc, need_grad):
        u, n, rho, beta = self.u, self.n, self.rho, mle.beta
        e = u - rho
        value = rho + float(np.dot(cc, w * e / d)) / n
        grad = None
        if need_grad:
            d2 = d * d
            grad = cc * e * (1.0 - beta) / (n * d2)
            H = float(np.dot(cc, (w - 1.0) ** 2 / d2))
            if mle.status == "optimal" and H > 0:
                # beta* is interior: d beta*/d w_n = c_n / (d_n^2 H) (implicit function theorem).
                S = float(np.dot(cc, w * e * (w - 1.0) / d2))
                grad -= cc * S / (H * n * d2)
        return _Evaluation(value, grad, n * mle.q, "fast", mle.status)


def value_and_grad(sample, *, objective="lower_bound", confidence_level=0.95, calibration="chi2",
                   rho=None, method="auto"):
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
    differences to 1e-5 in ``tests/test_learning.py``.

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
    sample = check_sample(sample)
    iv.option("objective", objective, OBJECTIVES)
    iv.option("method", method, iv.METHODS)
    level = iv.confidence_level(confidence_level)
    quantile = _finite_quantile(calibration, level, sample.n)
    if rho is None:
        rho = 0.5 * (sample.rmin + sample.rmax)
    rho = iv.finite_scalar("rho", rho)
    if not sample.rmin <= rho <= sample.rmax:
        raise InvalidInputError(f"rho={rho!r} is outside [rmin, rmax] = [{sample.rmin}, {sample.rmax}]")
    inner = _Inner(np.asarray(sample.u, dtype=float), sample.counts, sample.wmin, sample.wmax,
                   quantile, method, objective, sample.to_unit(rho))
    ev = inner(np.asarray(sample.w, dtype=float))
    span = sample.rmax - sample.rmin
    return sample.rmin + span * ev.value, span * ev.grad


def lower_bound_weights(sample, *, confidence_level=0.95, calibration="chi2", method="auto",
                        scale="n") -> np.ndarray:
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
    sample = check_sample(sample)
    iv.option("scale", scale, WEIGHT_SCALES)
    iv.option("method", method, iv.METHODS)
    level = iv.confidence_level(confidence_level)
    quantile = _finite_quantile(calibration, level, sample.n)
    inner = _Inner(np.asarray(sample.u, dtype=float), sample.counts, sample.wmin, sample.wmax,
                   quantile, method, "lower_bound", 0.5)
    ev = inner(np.asarray(sample.w, dtype=float), need_grad=False)
    return ev.weights if scale == "n" else ev.weights / sample.n


# ------------------------------------------------------------------------------------------------
# fit
# ------------------------------------------------------------------------------------------------
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
    history: tuple = field(repr=False)
    objective: str
    solver: str
    value: float
    elapsed: float
    n: int
    path: str
    message: str

    def __iter__(self):
        return iter((self.policy, self.history))

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return (self.policy, self.history)[i]


def _check_action_probs(pi, n) -> np.ndarray:
    pi = np.asarray(pi, dtype=float).reshape(-1)
    if pi.size != n:
        raise InvalidInputError(f"policy.action_probs returned {pi.size} values for {n} examples")
    bad = ~((pi >= 0) & (pi <= 1 + 1e-12))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"policy.action_probs returned pi[{i}]={float(pi[i])!r}, not a probability")
    return np.minimum(pi, 1.0)


def fit(policy, X, actions, logging_prob, rewards, *, objective="lower_bound", solver="alternating",
        confidence_level=0.95, passes=4, wmax=None, rmin=0.0, rmax=1.0, calibration="chi2",
        method="auto", max_iter=200) -> FitResult:
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
        The inner problem's solver: ``"auto"`` the fast path (if it fails: the compiled DPP
        program of :func:`elcvx.programs.learning.dro_inner_dual` for ``N <=``
        :data:`elcvx.programs.learning.DPP_MAX_ROWS`, else or then the certified cvxpy path
        of :func:`elcvx.interval`); ``"cvxpy"`` that program,
        compiled once and re-solved at each ``pi``, for ``N <=``
        :data:`elcvx.programs.learning.DPP_MAX_ROWS` and the fast path's duals above;
        ``"fast"`` the fast path only.
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
    passes = _positive_int("passes", passes)
    max_iter = _positive_int("max_iter", max_iter)
    if not isinstance(policy, Learner):
        raise InvalidInputError(
            f"policy={policy!r} is not a Learner: it needs action_probs(X, actions) and "
            "refit(X, actions, logging_prob, rewards, sample_weight)")
    if solver == "direct" and not isinstance(policy, DifferentiablePolicy):
        raise InvalidInputError(
            f"solver='direct' needs a differentiable policy (get_params, set_params, "
            f"grad_action_probs, penalty); policy={policy!r} is not one: use solver='alternating'")
    a = _actions(actions, getattr(policy, "n_actions", None))
    n = a.size
    X = _matrix("X", X, n_rows=n, n_cols=getattr(policy, "n_features", None))
    p = _logging_prob(logging_prob, n)
    rmin = iv.finite_scalar("rmin", rmin)
    rmax = iv.finite_scalar("rmax", rmax)
    if not rmin < rmax:
        raise InvalidInputError(f"rmin={rmin!r} must be < rmax={rmax!r}")
    r = iv.vector("rewards", rewards, n=n, length_of="actions")
    iv.within("rewards", r, rmin, rmax, hint=" (the rewards must lie in [rmin, rmax])")
    u = np.clip((r - rmin) / (rmax - rmin), 0.0, 1.0)
    if wmax is None:
        wmax = math.inf
    wmax = iv.finite_scalar("wmax", wmax, allow_inf=True)
    need = float(np.max(1.0 / p))
    if not wmax >= need * (1 - 1e-12):
        raise InvalidInputError(
            f"wmax={wmax!r} is below max 1/logging_prob = {need!r}: a policy that picks that "
            "logged action would have a larger weight")
    if not wmax > 1:
        raise InvalidInputError(f"wmax={wmax!r} must be > 1, else E[w] = 1 is impossible")
    quantile = _finite_quantile(calibration, level, n) if objective == "lower_bound" else 0.0
    inner = _Inner(u, None, 0.0, wmax, quantile, method, objective, 0.5)
    span = rmax - rmin

    def weights_of(pi):
        return np.minimum(pi / p, wmax)

    start = time.perf_counter()
    pi = _check_action_probs(policy.action_probs(X, a), n)
    ev = inner(weights_of(pi), need_grad=False)
    history = [FitStep(0, rmin + span * ev.value, time.perf_counter() - start)]

    if solver == "alternating":
        for k in range(1, passes + 1):
            s = ev.weights
            sur_start = float(np.mean(s * weights_of(pi) * u))
            policy.refit(X, a, p, u, s)
            pi = _check_action_probs(policy.action_probs(X, a), n)
            sur_end = float(np.mean(s * weights_of(pi) * u))
            ev = inner(weights_of(pi), need_grad=False)
            history.append(FitStep(k, rmin + span * ev.value, time.perf_counter() - start,
                                   sur_start, sur_end))
        message = f"{passes} passes"
    else:
        seen = {}

        def negative(theta):
            policy.set_params(theta)
            pi_ = _check_action_probs(policy.action_probs(X, a), n)
            ev_ = inner(weights_of(pi_))
            g_theta = policy.grad_action_probs(X, a, ev_.grad / p)
            pen, dpen = policy.penalty(theta)
            seen.clear()
            seen[theta.tobytes()] = ev_.value
            return -(ev_.value - pen), -(np.asarray(g_theta, dtype=float) - dpen)

        def record(intermediate_result):
            x = intermediate_result.x
            value = seen.get(x.tobytes())
            if value is None:
                negative(x)
                value = seen[x.tobytes()]
            history.append(FitStep(len(history), rmin + span * value, time.perf_counter() - start))

        res = optimize.minimize(negative, np.asarray(policy.get_params(), dtype=float), jac=True,
                                method="L-BFGS-B", callback=record, options=dict(maxiter=max_iter))
        policy.set_params(res.x)
        pi = _check_action_probs(policy.action_probs(X, a), n)
        ev = inner(weights_of(pi), need_grad=False)
        message = str(res.message)
        if not history or history[-1].value != rmin + span * ev.value:
            history.append(FitStep(len(history), rmin + span * ev.value, time.perf_counter() - start))
    elapsed = time.perf_counter() - start
    return FitResult(policy=policy, history=tuple(history), objective=objective, solver=solver,
                     value=rmin + span * ev.value, elapsed=elapsed, n=n, path=ev.path,
                     message=message)


# ------------------------------------------------------------------------------------------------
# A synthetic contextual bandit with known true values
# ------------------------------------------------------------------------------------------------
def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


class SyntheticBandit:
    r"""A contextual bandit whose expected rewards, and so every policy's true value, are known.

    * Contexts ``x ~ N(0, I_d)``.
    * Rewards ``r ~ Bernoulli(mu(x, a))`` with ``mu(x, a) = sigmoid(scale (x theta_a + b_a))``,
      ``theta_a ~ N(0, I_d / d)``, ``b_a ~ N(0, 1/4)`` (so the best action depends on ``x`` and
      is linear in ``x``: a linear softmax policy can approach it).
    * The logging policy is epsilon-greedy around a weak linear policy (``theta`` plus
      ``noise`` times independent Gaussian noise): ``h(a|x) = (1 - epsilon) 1[a = argmax_k x
      theta'_k + b'_k] + epsilon/K``, so every probability is at least ``pmin = epsilon/K``
      and ``wmax = K/epsilon`` bounds every importance weight.
    * The true value of a policy, ``V(pi) = E_x sum_a pi(a|x) mu(x, a)``, is computed on
      ``n_eval`` fixed contexts drawn once (a Monte Carlo integral over ``x`` only: the
      standard error is at most ``0.5/sqrt(n_eval)``, and two policies are compared on the same
      contexts).

    Parameters
    ----------
    n_features, n_actions : int
    epsilon : float
        Exploration of the logging policy.
    noise : float
        How weak the logging policy is.
    scale : float
        Steepness of the reward model.
    seed : int
        Fixes the environment and the evaluation contexts.
    n_eval : int

    Examples
    --------
    >>> from elcvx.learning import SyntheticBandit
    >>> bandit = SyntheticBandit(n_features=3, n_actions=3, seed=1)
    >>> round(bandit.logging_value, 4), round(bandit.optimal_value, 4), bandit.wmax
    (0.7058, 0.8355, 10.0)
    >>> X, a, p, r = bandit.log(5, seed=2)
    >>> a.tolist(), p.round(2).tolist()
    ([2, 2, 1, 1, 1], [0.8, 0.8, 0.8, 0.8, 0.1])
    """

    def __init__(self, n_features=5, n_actions=4, *, epsilon=0.3, noise=1.0, scale=3.0, seed=0,
                 n_eval=50_000):
        self.n_features = _positive_int("n_features", n_features)
        self.n_actions = _positive_int("n_actions", n_actions)
        if self.n_actions < 2:
            raise InvalidInputError(f"n_actions={n_actions!r} must be at least 2")
        self.epsilon = iv.finite_scalar("epsilon", epsilon)
        if not 0.0 < self.epsilon <= 1.0:
            raise InvalidInputError(f"epsilon={epsilon!r} must lie in (0, 1]")
        self.noise = iv.finite_scalar("noise", noise)
        self.scale = iv.finite_scalar("scale", scale)
        n_eval = _positive_int("n_eval", n_eval)
        rng = np.random.default_rng(seed)
        d, K = self.n_features, self.n_actions
        self.theta = rng.normal(size=(d, K)) / math.sqrt(d)
        self.bias = rng.normal(scale=0.5, size=K)
        self.logging_theta = self.theta + self.noise * rng.normal(size=(d, K)) / math.sqrt(d)
        self.logging_bias = self.bias + self.noise * rng.normal(scale=0.5, size=K)
        self.eval_contexts = rng.normal(size=(n_eval, d))
        self._eval_mu = self.expected_rewards(self.eval_contexts)

    @property
    def pmin(self) -> float:
        """The smallest probability the logging policy gives any action, ``epsilon/K``."""
        return self.epsilon / self.n_actions

    @property
    def wmax(self) -> float:
        """``1/pmin``: the largest importance weight any policy can have."""
        return 1.0 / self.pmin

    def expected_rewards(self, X) -> np.ndarray:
        """``mu(x, a)`` for every row and action, shape ``(n, K)``."""
        X = _matrix("X", X, n_cols=self.n_features)
        return _sigmoid(self.scale * (X @ self.theta + self.bias))

    def logging_probs(self, X) -> np.ndarray:
        """``h(a | x)`` for every row and action, shape ``(n, K)``."""
        X = _matrix("X", X, n_cols=self.n_features)
        greedy = np.argmax(X @ self.logging_theta + self.logging_bias, axis=1)
        P = np.full((X.shape[0], self.n_actions), self.pmin)
        P[np.arange(X.shape[0]), greedy] += 1.0 - self.epsilon
        return P

    def log(self, n, *, seed=None):
        """Draw ``n`` logged examples: ``(X, actions, logging_prob, rewards)`` (rewards 0/1)."""
        n = _positive_int("n", n)
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, self.n_features))
        P = self.logging_probs(X)
        cum = P.cumsum(axis=1)
        actions = np.minimum((rng.random(n)[:, None] > cum).sum(axis=1), self.n_actions - 1)
        rows = np.arange(n)
        mu = self.expected_rewards(X)[rows, actions]
        rewards = (rng.random(n) < mu).astype(float)
        return X, actions, P[rows, actions], rewards

    def value(self, policy) -> float:
        """The true value ``E_x sum_a pi(a|x) mu(x, a)`` of a policy (an object with ``probs(X)``,
        or a callable ``X -> (n, K)`` probabilities), on the evaluation contexts."""
        probs = policy.probs if hasattr(policy, "probs") else policy
        P = np.asarray(probs(self.eval_contexts), dtype=float)
        if P.shape != self._eval_mu.shape:
            raise InvalidInputError(f"the policy's probabilities have shape {P.shape}, expected {self._eval_mu.shape}")
        return float(np.mean(np.sum(P * self._eval_mu, axis=1)))

    @property
    def logging_value(self) -> float:
        """The true value of the logging policy."""
        return self.value(self.logging_probs)

    @property
    def optimal_value(self) -> float:
        """``E_x max_a mu(x, a)``: the best any policy can do."""
        return float(np.mean(self._eval_mu.max(axis=1)))
