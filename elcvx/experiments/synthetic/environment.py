r"""The environment of the paper's synthetic study (appendix "Off-Policy Evaluation, Synthetic Data").

* **Weights.** The logging policy is epsilon-greedy and the importance weights take the values
  ``{0, 2, 1000}`` (``wmin = 0``, ``wmax = 1000``). Their law *under the logging policy* ``h``
  is the maximum-entropy distribution with ``E_h[w] = 1`` (every valid importance weight has
  it) and ``E_h[w^2] = 100`` (:func:`max_entropy_weights`). With three support points the two
  moment equations and the normalisation are three linear equations in three unknowns whose
  matrix (a Vandermonde matrix) is non-singular, so the feasible set is a single point and it
  is the maximum-entropy distribution trivially: ``P(w = 1000) = 98/998000``,
  ``P(w = 2) = (1 - 1000 P(w = 1000))/2``, ``P(w = 0)`` the rest (0.549, 0.4509, 9.82e-5).
  On a support where the moments do not pin the law down, the maximum-entropy problem is solved
  through its dual (an exponential family in ``(w, w^2)``).

  An epsilon-greedy story that produces exactly these weights (:func:`epsilon_greedy_story`):
  ``K = 501`` actions, ``epsilon = 0.501`` (the greedy action has probability 1/2, each other
  action 1/1000), and a deterministic target policy that agrees with the greedy action on a
  fraction ``a = 450/499`` of contexts: ``w = 2`` when the logged action is the greedy one and
  the target agrees, ``w = 1000`` when the target picks a non-greedy action that was logged,
  ``w = 0`` otherwise. ``E_h[w^2] = 2a + 1000(1 - a) = 100`` fixes ``a``.
* **Rewards.** Binary. Each environment draw takes the true value ``V ~ Uniform[0, 1]`` and then
  the conditional reward probabilities ``P(r = 1 | w)`` so that ``E_h[w r] = V``: walking the
  positive weights in increasing order, each ``P(r = 1 | w_i)`` is uniform on the interval that
  keeps the rest feasible, and the last one is what remains (:func:`draw_environment`). So ``V``
  is exactly uniform (the appendix's requirement) and the reward's dependence on the weight
  varies from draw to draw. This is the construction of the authors' replication code
  (``environments/ControlledRangeVariance.py`` in github.com/pmineiro/elfcb), re-implemented.
  The reward at ``w = 0`` cannot affect any estimator here (every one sees the rewards only
  through ``w r``); it is drawn uniform so that the sample has rewards there too.
* **Samples.** ``N`` examples from a drawn environment are a multinomial draw of the counts of
  the six ``(w, r)`` cells, passed to :class:`~elcvx.Sample` as ``counts`` (exactly the same as
  ``N`` i.i.d. rows): a replicate costs the same at ``N = 10`` and ``N = 10^6``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ...errors import InvalidInputError
from ...sample import Sample

__all__ = ["WEIGHTS", "SECOND_MOMENT", "max_entropy_weights", "epsilon_greedy_story", "Environment",
           "draw_environment", "replicate_rng"]

#: The importance weights of the appendix's epsilon-greedy environment.
WEIGHTS = (0.0, 2.0, 1000.0)
#: ``E_h[w^2]`` of the appendix (``E_h[w] = 1`` always).
SECOND_MOMENT = 100.0
#: The default grid of sample sizes: 1-2-5 steps from 10 to 10^6 (the paper's Figure 1 goes to

def _check_support(weights) -> np.ndarray:
    w = np.asarray(weights, dtype=float).reshape(-1)
    if w.size < 2 or not np.all(np.isfinite(w)):
        raise InvalidInputError(f"weights={weights!r} must be at least two finite numbers")
    if np.any(np.diff(w) <= 0) or w[0] < 0:
        raise InvalidInputError(f"weights={weights!r} must be distinct, >= 0 and increasing")
    if not w[0] < 1 < w[-1]:
        raise InvalidInputError(f"weights={weights!r} must straddle 1, else E[w] = 1 is impossible")
    return w


def max_entropy_weights(weights=WEIGHTS, second_moment=SECOND_MOMENT) -> np.ndarray:
    r"""The maximum-entropy law of the importance weight with ``E[w] = 1``, ``E[w^2] = m2``.

    .. math:: \max_p -\sum_i p_i \log p_i \quad\text{s.t.}\quad \sum_i p_i = 1,\
              \sum_i p_i w_i = 1,\ \sum_i p_i w_i^2 = m_2,\ p \ge 0.

    When the constraint matrix ``[1; w; w^2]`` has full column rank (three support points, or
    fewer) the constraints alone determine ``p``: it is the solution of the linear system and
    the maximum-entropy problem has nothing left to choose. Otherwise the maximiser is
    ``p_i \propto exp(l1 w_i + l2 w_i^2)`` with ``(l1, l2)`` minimising the convex dual
    ``log sum_i exp(l1 x_i + l2 x_i^2) - l1 1/s - l2 m2/s^2`` (``x = w/s``, ``s = max w``,
    for conditioning), solved by Newton's method with a backtracking line search.

    Parameters
    ----------
    weights : sequence of float
        Increasing, distinct, ``>= 0``, with ``min < 1 < max``.
    second_moment : float
        ``E[w^2]``.

    Returns
    -------
    ndarray
        ``p``, the probabilities of ``weights`` under the logging policy.

    Raises
    ------
    InvalidInputError
        When no distribution on ``weights`` has these moments (or only one on the boundary of
        the simplex that the exponential family cannot reach).

    Examples
    --------
    >>> from elcvx.experiments.synthetic import max_entropy_weights
    >>> p = max_entropy_weights((0.0, 2.0, 1000.0), 100.0)
    >>> [round(float(x), 7) for x in p]  # the rest, (1 - 1000 p_1000)/2, p_1000 = 98/998000
    [0.549, 0.4509018, 9.82e-05]
    """
    w = _check_support(weights)
    m2 = float(second_moment)
    if not np.isfinite(m2) or m2 <= 0:
        raise InvalidInputError(f"second_moment={second_moment!r} must be a positive number")
    if w.size <= 3:
        # [1; w; w^2] has full column rank (distinct weights: a Vandermonde matrix), so the
        # constraints determine p; solved in exact rational arithmetic (the floats are rationals).
        p = _solve_exact([[Fraction(1)] * w.size, [Fraction(x) for x in w],
                          [Fraction(x) ** 2 for x in w]], [Fraction(1), Fraction(1), Fraction(m2)])
        if p is None or any(x < 0 for x in p):
            raise InvalidInputError(
                f"no distribution on weights={tuple(w)} has E[w] = 1 and E[w^2] = {m2!r}")
        return np.array([float(x) for x in p])
    return _max_entropy_dual(w, m2)


def _solve_exact(rows, rhs):
    """The solution of a consistent full-column-rank system (Fractions), or None if inconsistent."""
    m = [list(r) + [b] for r, b in zip(rows, rhs)]
    k = len(rows[0])
    for col in range(k):
        piv = next(i for i in range(col, len(m)) if m[i][col] != 0)
        m[col], m[piv] = m[piv], m[col]
        for i in range(len(m)):
            if i != col and m[i][col] != 0:
                f = m[i][col] / m[col][col]
                m[i] = [a - f * b for a, b in zip(m[i], m[col])]
    if any(m[i][k] != 0 for i in range(k, len(m))):
        return None
    return [m[i][k] / m[i][i] for i in range(k)]


def _max_entropy_dual(w: np.ndarray, m2: float) -> np.ndarray:
    """The exponential-family solution of the maximum-entropy problem (see the caller)."""
    s = float(w[-1])
    X = np.vstack([w / s, (w / s) ** 2])          # features, scaled to [0, 1]
    t = np.array([1.0 / s, m2 / s**2])            # their required means

    def probs(lam):
        z = lam @ X
        e = np.exp(z - z.max())
        return e / e.sum()

    def fun(lam):
        z = lam @ X
        zmax = z.max()
        return zmax + math.log(np.exp(z - zmax).sum()) - lam @ t

    def jac(lam):
        return X @ probs(lam) - t

    def hess(lam):
        p = probs(lam)
        m = X @ p
        return (X * p) @ X.T - np.outer(m, m)

    lam = np.zeros(2)
    f = fun(lam)
    message = "iteration limit"
    for _ in range(200):
        g = jac(lam)
        if np.max(np.abs(g / np.maximum(t, 1e-300))) < 1e-12:
            message = "converged"
            break
        step = -np.linalg.lstsq(hess(lam), g, rcond=None)[0]
        a = 1.0
        while a > 1e-12:                    # backtracking (Armijo) line search
            f_new = fun(lam + a * step)
            if f_new <= f + 1e-4 * a * float(g @ step):
                break
            a *= 0.5
        else:
            message = "line search failed"
            break
        lam, f = lam + a * step, f_new
    p = probs(lam)
    if not (np.isclose(p @ w, 1.0, rtol=1e-8, atol=0) and np.isclose(p @ (w * w), m2, rtol=1e-8, atol=0)):
        raise InvalidInputError(
            f"no interior distribution on weights={tuple(w)} has E[w] = 1 and E[w^2] = {m2!r} "
            f"(the maximum-entropy dual did not converge: {message})")
    return p


@lru_cache(maxsize=16)
def _cached_weights(weights: tuple, second_moment: float) -> np.ndarray:
    p = max_entropy_weights(weights, second_moment)
    p.flags.writeable = False
    return p


def epsilon_greedy_story(weights=WEIGHTS, second_moment=SECOND_MOMENT) -> dict:
    """An epsilon-greedy logging policy and a deterministic target that give these weights.

    For a support ``(0, w_g, w_o)`` with ``1 < w_g < w_o``: the greedy action has logging
    probability ``1/w_g`` and each of the other ``K - 1`` actions ``1/w_o``, so
    ``K = 1 + (1 - 1/w_g) w_o`` and ``epsilon = K/w_o``; the deterministic target agrees with
    the greedy action on a fraction ``agree`` of contexts, so ``P(w = w_g) = agree/w_g``,
    ``P(w = w_o) = (1 - agree)/w_o`` and ``E[w] = 1`` holds for every ``agree``;
    ``E[w^2] = agree w_g + (1 - agree) w_o`` fixes it. Exact rational arithmetic.

    Returns
    -------
    dict
        ``actions`` (K), ``epsilon``, ``agree`` (as Fractions) and ``probs`` (floats), the law of
        the weights that this policy pair induces.

    Examples
    --------
    >>> from elcvx.experiments.synthetic import epsilon_greedy_story
    >>> s = epsilon_greedy_story()
    >>> s["actions"], s["epsilon"], s["agree"]  # 1 + (1 - 1/2) 1000; 501/1000; (1000 - 100)/(1000 - 2)
    (Fraction(501, 1), Fraction(501, 1000), Fraction(450, 499))
    """
    w = _check_support(weights)
    if w.size != 3 or w[0] != 0 or not 1 < w[1] < w[2]:
        raise InvalidInputError(f"weights={tuple(w)} is not of the form (0, w_g, w_o) with 1 < w_g < w_o")
    wg, wo, m2 = (Fraction(float(x)) for x in (w[1], w[2], second_moment))
    actions = 1 + (1 - 1 / wg) * wo
    if actions.denominator != 1:
        raise InvalidInputError(f"weights={tuple(w)} need a non-integer number of actions ({actions})")
    agree = (wo - m2) / (wo - wg)
    if not 0 <= agree <= 1:
        raise InvalidInputError(f"second_moment={second_moment!r} is outside [{float(wg)}, {float(wo)}]")
    p_g, p_o = agree / wg, (1 - agree) / wo
    probs = np.array([float(1 - p_g - p_o), float(p_g), float(p_o)])
    return {"actions": actions, "epsilon": actions / wo, "agree": agree, "probs": probs}


@dataclass(frozen=True, eq=False)
class Environment:
    """One environment draw: the law of ``(w, r)`` under the logging policy.

    Attributes
    ----------
    weights : ndarray
        The support of ``w``.
    probs : ndarray
        ``P_h(w = weights[i])``.
    reward_probs : ndarray
        ``P(r = 1 | w = weights[i])``.
    wmin, wmax : float
        The weight bounds given to the estimators.
    """

    weights: np.ndarray
    probs: np.ndarray
    reward_probs: np.ndarray
    wmin: float
    wmax: float

    @property
    def value(self) -> float:
        """The target policy's true value ``E_h[w r]``."""
        return float(np.dot(self.probs * self.weights, self.reward_probs))

    def cells(self):
        """``(w, r, p)``: the ``2k`` cells ``(weights[i], r)``, ``r`` in ``{0, 1}``, and their probabilities."""
        w = np.repeat(self.weights, 2)
        r = np.tile([0.0, 1.0], self.weights.size)
        pr = np.repeat(self.reward_probs, 2)
        p = np.repeat(self.probs, 2) * np.where(r == 1.0, pr, 1.0 - pr)
        return w, r, p

    def sample(self, n: int, rng: np.random.Generator) -> Sample:
        """``n`` i.i.d. examples as a :class:`~elcvx.Sample` of at most ``2k`` rows with counts."""
        n = _check_size(n)
        w, r, p = self.cells()
        counts = rng.multinomial(n, p / p.sum())
        keep = counts > 0
        return Sample(w[keep], r[keep], counts=counts[keep].astype(float),
                      wmin=self.wmin, wmax=self.wmax)


def _check_size(n) -> int:
    if isinstance(n, bool) or int(n) != n or int(n) < 1:
        raise InvalidInputError(f"sample size {n!r} must be a positive integer")
    return int(n)


def draw_environment(rng: np.random.Generator, *, weights=WEIGHTS,
                     second_moment=SECOND_MOMENT) -> Environment:
    """Draw an environment: ``V ~ Uniform[0, 1]``, then ``P(r = 1 | w)`` with ``E_h[w r] = V``.

    With ``m_i = p_i w_i`` the importance-weighted masses (they sum to 1 because ``E_h[w] = 1``),
    the positive weights are visited in increasing order; with ``v`` the value still to place and
    ``M`` the mass of the weights not yet visited, ``P(r = 1 | w_i)`` is uniform on
    ``[max(0, (v - M)/m_i), min(1, v/m_i)]`` (exactly the values that leave ``v - m_i P`` reachable
    by the rest), and the last weight takes ``v/m_last``. ``P(r = 1 | w = 0)`` is uniform and
    irrelevant to every estimator. The random calls are, in order: ``V``, one per positive
    weight but the last, one per zero weight.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx.experiments.synthetic import draw_environment
    >>> env = draw_environment(np.random.default_rng(0))
    >>> round(env.value, 6) == round(float(np.dot(env.probs * env.weights, env.reward_probs)), 6)
    True
    """
    w = _check_support(weights)
    p = _cached_weights(tuple(w), float(second_moment))
    value = float(rng.uniform())
    mass = p * w
    pos = np.flatnonzero(w > 0)
    pr = np.empty_like(w)
    left = value
    for k, i in enumerate(pos[:-1]):
        rest = float(mass[pos[k + 1:]].sum())
        lo = max(0.0, (left - rest) / mass[i])
        hi = min(1.0, left / mass[i])
        pr[i] = rng.uniform(lo, max(lo, hi))
        left -= mass[i] * pr[i]
    pr[pos[-1]] = min(max(left / mass[pos[-1]], 0.0), 1.0)
    for i in np.flatnonzero(w == 0):
        pr[i] = rng.uniform()
    pr.flags.writeable = False
    return Environment(w, p, pr, float(w[0]), float(w[-1]))


def replicate_rng(seed: int, n: int, index: int) -> np.random.Generator:
    """The random stream of replicate ``index`` at sample size ``n``: ``SeedSequence(seed, spawn_key=(n, index))``."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(n), int(index))))
