"""Policies for :func:`elcvx.learning.fit`: the protocols a learner honours, and two learners.

* :class:`Learner` -- what the alternating method needs: ``pi(a|x)`` and a weighted refit;
  :class:`DifferentiablePolicy` -- what the direct solver needs besides: parameters and the
  vector-Jacobian product of ``pi(a_n|x_n)``.
* :class:`LinearSoftmaxPolicy` (numpy/scipy), both; :class:`VowpalWabbitPolicy` (the ``vw``
  extra, the paper's learner), a :class:`Learner`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from scipy import optimize

from . import _inputs as bi
from .. import _validation as iv
from ..errors import InvalidInputError, _require

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

__all__ = ["Learner", "DifferentiablePolicy", "LinearSoftmaxPolicy", "VowpalWabbitPolicy"]


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

    def action_probs(self, X: np.ndarray, actions: np.ndarray) -> np.ndarray: ...

    def refit(self, X: np.ndarray, actions: np.ndarray, logging_prob: np.ndarray,
              rewards: np.ndarray, sample_weight: np.ndarray) -> None: ...


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

    def set_params(self, theta: np.ndarray) -> None: ...

    def grad_action_probs(self, X: np.ndarray, actions: np.ndarray,
                          g: np.ndarray) -> np.ndarray: ...

    def penalty(self, theta: np.ndarray) -> tuple[float, np.ndarray]: ...



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
        self.n_features = bi.positive_int("n_features", n_features)
        self.n_actions = bi.n_actions(n_actions)
        self.l2 = iv.finite_scalar("l2", l2)
        if self.l2 < 0:
            raise InvalidInputError(f"l2={l2!r} must be >= 0")
        self.max_iter = bi.positive_int("max_iter", max_iter)
        self.coef = np.zeros((self.n_features, self.n_actions))
        self.intercept = np.zeros(self.n_actions)

    def __repr__(self) -> str:
        return f"LinearSoftmaxPolicy(n_features={self.n_features}, n_actions={self.n_actions}, l2={self.l2!r})"

    # -- parameters -----------------------------------------------------------------------------
    def get_params(self) -> np.ndarray:
        """``theta = (W.ravel(), b)``, a copy."""
        return np.concatenate([self.coef.ravel(), self.intercept])

    def set_params(self, theta: ArrayLike) -> None:
        """Set ``W`` and ``b`` from a flat ``theta`` of length ``(n_features + 1) n_actions``."""
        theta = iv.vector("theta", theta)
        size = (self.n_features + 1) * self.n_actions
        if theta.size != size:
            raise InvalidInputError(f"theta has length {theta.size} but this policy has {size} parameters")
        k = self.n_features * self.n_actions
        self.coef = theta[:k].reshape(self.n_features, self.n_actions).copy()
        self.intercept = theta[k:].copy()

    def penalty(self, theta: ArrayLike) -> tuple[float, np.ndarray]:
        """``(l2/2) ||theta||^2`` and its gradient ``l2 theta``."""
        theta = np.asarray(theta, dtype=float)
        return 0.5 * self.l2 * float(theta @ theta), self.l2 * theta

    # -- probabilities ---------------------------------------------------------------------------
    def probs(self, X: ArrayLike) -> np.ndarray:
        """``pi(a | x)`` for every row of ``X`` and every action, shape ``(n, n_actions)``."""
        X = bi.matrix("X", X, n_cols=self.n_features)
        return self._probs(X)

    def _probs(self, X: np.ndarray) -> np.ndarray:
        logits: np.ndarray = X @ self.coef + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=1, keepdims=True)
        return logits

    def action_probs(self, X: ArrayLike, actions: ArrayLike) -> np.ndarray:
        """``pi(a_n | x_n)`` for the given actions, shape ``(n,)``."""
        X, a = bi.examples(X, actions, n_actions=self.n_actions, n_features=self.n_features)
        out: np.ndarray = self._probs(X)[np.arange(a.size), a]
        return out

    def grad_action_probs(self, X: ArrayLike, actions: ArrayLike, g: ArrayLike) -> np.ndarray:
        r"""``sum_n g_n d pi(a_n|x_n) / d theta``.

        With ``P`` the probabilities and ``pi_n = P[n, a_n]``, the softmax gives
        ``d pi_n / d logit_{n,k} = pi_n (1[k = a_n] - P[n, k])``; the logits are ``x W + b``, so
        the product is ``(X^T G, sum_n G_n)`` with ``G[n, k] = g_n pi_n (1[k = a_n] - P[n, k])``.
        """
        X, a = bi.examples(X, actions, n_actions=self.n_actions, n_features=self.n_features)
        g = np.asarray(g, dtype=float)
        return self._vjp(X, a, self._probs(X), g)

    @staticmethod
    def _vjp(X: np.ndarray, a: np.ndarray, P: np.ndarray, g: np.ndarray) -> np.ndarray:
        rows = np.arange(a.size)
        pi = P[rows, a]
        G = -P * (g * pi)[:, None]
        G[rows, a] += g * pi
        return np.concatenate([(X.T @ G).ravel(), G.sum(axis=0)])

    # -- learning --------------------------------------------------------------------------------
    def refit(self, X: ArrayLike, actions: ArrayLike, logging_prob: ArrayLike, rewards: ArrayLike,
              sample_weight: ArrayLike) -> None:
        """One learning step: maximise the weighted IPS objective minus the ridge penalty (L-BFGS).

        ``rewards`` are on ``[0, 1]``; ``sample_weight`` ``s_n >= 0``. Warm-started at the
        current parameters, at most ``max_iter`` iterations.
        """
        X, a, p, u, s = bi.weighted_examples(X, actions, logging_prob, rewards, sample_weight,
                                             n_actions=self.n_actions, n_features=self.n_features)
        n = a.size
        coeff = s * u / p / n  # d objective / d pi_n
        rows = np.arange(n)

        def negative(theta: np.ndarray) -> tuple[float, np.ndarray]:
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
    elcvx.errors.MissingDependencyError
        When ``vowpalwabbit`` is needed and not installed: ``pip install 'elcvx[vw]'``.

    Examples
    --------
    (Skipped by the doctest run, which must pass without the extra.)

    >>> from elcvx.learning import VowpalWabbitPolicy
    >>> pi = VowpalWabbitPolicy(3, epsilon=0.3)  # doctest: +SKIP
    >>> pi.probs([[1.0, 0.0]]).round(2).tolist()  # untrained: the first action is greedy  # doctest: +SKIP
    [[0.8, 0.1, 0.1]]
    """

    def __init__(self, n_actions: int, *, epsilon: float = 0.0, args: str = "",
                 workspace: Any = None) -> None:
        self.n_actions = bi.n_actions(n_actions)
        self.epsilon = iv.finite_scalar("epsilon", epsilon)
        if not 0.0 <= self.epsilon <= 1.0:
            raise InvalidInputError(f"epsilon={epsilon!r} must lie in [0, 1]")
        if not isinstance(args, str):
            raise InvalidInputError(f"args={args!r} must be a string of VW arguments")
        self.args = args
        if workspace is None:
            vw = _require("vowpalwabbit", "vw", "VowpalWabbitPolicy")
            workspace = vw.Workspace(f"--cb_explore {self.n_actions} --cb_type ips --epsilon 0 "
                                     f"--quiet {args}")
        self.workspace = workspace

    def __repr__(self) -> str:
        return f"VowpalWabbitPolicy(n_actions={self.n_actions}, epsilon={self.epsilon!r}, args={self.args!r})"

    @staticmethod
    def _features(x: np.ndarray) -> str:
        return "| " + " ".join(f"f{j}:{v:.10g}" for j, v in enumerate(x) if v != 0.0)

    def _greedy(self, X: np.ndarray) -> np.ndarray:
        out = np.empty(X.shape[0], dtype=np.intp)
        for i, x in enumerate(X):
            pmf = np.asarray(self.workspace.predict(self._features(x)), dtype=float)
            out[i] = int(np.argmax(pmf))
        return out

    def probs(self, X: ArrayLike) -> np.ndarray:
        """``pi(a|x)`` for every row and action: ``(1 - epsilon)`` on VW's greedy action + uniform."""
        X = bi.matrix("X", X)
        P = np.full((X.shape[0], self.n_actions), self.epsilon / self.n_actions)
        P[np.arange(X.shape[0]), self._greedy(X)] += 1.0 - self.epsilon
        return P

    def action_probs(self, X: ArrayLike, actions: ArrayLike) -> np.ndarray:
        """``pi(a_n | x_n)`` for the logged actions."""
        X, a = bi.examples(X, actions, n_actions=self.n_actions)
        out: np.ndarray = self.probs(X)[np.arange(a.size), a]
        return out

    def refit(self, X: ArrayLike, actions: ArrayLike, logging_prob: ArrayLike, rewards: ArrayLike,
              sample_weight: ArrayLike) -> None:
        """One online pass of VW over the weighted examples (see the class docstring)."""
        X, a, p, u, s = bi.weighted_examples(X, actions, logging_prob, rewards, sample_weight,
                                             n_actions=self.n_actions)
        for i in range(a.size):
            if s[i] > 0:
                self.workspace.learn(f"{a[i] + 1}:{-s[i] * u[i]:.10g}:{p[i]:.10g} {self._features(X[i])}")

    def close(self) -> None:
        """Release VW's workspace."""
        finish = getattr(self.workspace, "finish", None)
        if finish is not None:
            finish()

