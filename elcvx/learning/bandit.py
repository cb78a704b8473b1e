"""A synthetic contextual bandit whose every policy's true value is known.

The environment of ``examples/learn_policy.py`` and of :mod:`elcvx.learning`'s tests and
examples: a learned policy's true value is known, so a bound can be checked against it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _inputs as bi
from .. import _validation as iv
from ..errors import InvalidInputError

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

__all__ = ["SyntheticBandit"]


def _sigmoid(z: np.ndarray) -> np.ndarray:
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

    def __init__(self, n_features: int = 5, n_actions: int = 4, *, epsilon: float = 0.3,
                 noise: float = 1.0, scale: float = 3.0, seed: int | None = 0,
                 n_eval: int = 50_000) -> None:
        self.n_features = bi.positive_int("n_features", n_features)
        self.n_actions = bi.n_actions(n_actions)
        self.epsilon = iv.finite_scalar("epsilon", epsilon)
        if not 0.0 < self.epsilon <= 1.0:
            raise InvalidInputError(f"epsilon={epsilon!r} must lie in (0, 1]")
        self.noise = iv.finite_scalar("noise", noise)
        self.scale = iv.finite_scalar("scale", scale)
        n_eval = bi.positive_int("n_eval", n_eval)
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

    def expected_rewards(self, X: ArrayLike) -> np.ndarray:
        """``mu(x, a)`` for every row and action, shape ``(n, K)``."""
        M = bi.matrix("X", X, n_cols=self.n_features)
        return _sigmoid(self.scale * (M @ self.theta + self.bias))

    def logging_probs(self, X: ArrayLike) -> np.ndarray:
        """``h(a | x)`` for every row and action, shape ``(n, K)``."""
        M = bi.matrix("X", X, n_cols=self.n_features)
        greedy = np.argmax(M @ self.logging_theta + self.logging_bias, axis=1)
        P = np.full((M.shape[0], self.n_actions), self.pmin)
        P[np.arange(M.shape[0]), greedy] += 1.0 - self.epsilon
        return P

    def log(self, n: int, *, seed: int | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``n`` logged examples: ``(X, actions, logging_prob, rewards)`` (rewards 0/1)."""
        n = bi.positive_int("n", n)
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, self.n_features))
        P = self.logging_probs(X)
        cum = P.cumsum(axis=1)
        actions = np.minimum((rng.random(n)[:, None] > cum).sum(axis=1), self.n_actions - 1)
        rows = np.arange(n)
        mu = self.expected_rewards(X)[rows, actions]
        rewards = (rng.random(n) < mu).astype(float)
        return X, actions, P[rows, actions], rewards

    def value(self, policy: Any) -> float:
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
