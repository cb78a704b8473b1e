r"""The paper's synthetic off-policy evaluation study (its Figures 1 and 2).

The environment (appendix "Off-Policy Evaluation, Synthetic Data")
------------------------------------------------------------------
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

The study
---------
For each ``N`` and each replicate ``i`` an environment is drawn and a sample of size ``N`` is
taken from it, with the random stream ``SeedSequence(seed, spawn_key=(N, i))`` (the stream that
``SeedSequence(seed).spawn(N + 1)[N].spawn(i + 1)[i]`` hands out): every replicate is reproducible
on its own, and the results depend neither on ``jobs`` nor on ``chunk_size`` nor on which other
sizes are run. On each sample it computes

* the estimators of Figure 1 (:data:`ESTIMATORS`): Constant (1/2), ClippedDR, SNIPS (1/2, the
  reward midpoint, when every weight is 0, as in the authors' code), IPS, EMP, CR(-2) and EL
  with ``rho = 1/2``;
* the 95% intervals of Figure 2 (:data:`INTERVAL_METHODS`): EL and CR(-2) with the chi-square
  and F calibrations, Binomial (Clopper-Pearson on ``w r / wmax``) and the asymptotic Gaussian.

:func:`run_study` returns a :class:`SyntheticStudy` holding every replicate's numbers; its
:meth:`~SyntheticStudy.mse_table` and :meth:`~SyntheticStudy.interval_table` are the tidy
tables and :meth:`~SyntheticStudy.write` writes ``mse.csv``, ``intervals.csv``, ``summary.md``
and the figures.
"""

from __future__ import annotations

import csv
import math
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import InvalidInputError, SolverError
from ..sample import Sample

__all__ = [
    "WEIGHTS",
    "SECOND_MOMENT",
    "DEFAULT_SIZES",
    "DEFAULT_REPLICATES",
    "DEFAULT_SEED",
    "ESTIMATORS",
    "INTERVAL_METHODS",
    "max_entropy_weights",
    "epsilon_greedy_story",
    "Environment",
    "draw_environment",
    "replicate_rng",
    "evaluate",
    "run_study",
    "SyntheticStudy",
]

#: The importance weights of the appendix's epsilon-greedy environment.
WEIGHTS = (0.0, 2.0, 1000.0)
#: ``E_h[w^2]`` of the appendix (``E_h[w] = 1`` always).
SECOND_MOMENT = 100.0
#: The default grid of sample sizes: 1-2-5 steps from 10 to 10^6 (the paper's Figure 1 goes to
#: 10^5, its Figure 2 to 10^6; with counts a replicate costs the same at every N).
DEFAULT_SIZES = (10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000,
                 100_000, 200_000, 500_000, 1_000_000)
#: Environment draws per sample size, as in the paper.
DEFAULT_REPLICATES = 10_000
DEFAULT_SEED = 2020
DEFAULT_CHUNK_SIZE = 250

#: Point estimators (Figure 1), in the order of the tables: name -> label.
ESTIMATORS = {
    "constant": "Constant",
    "clipped-dr": "ClippedDR",
    "snips": "SNIPS",
    "ips": "IPS",
    "emp": "EMP",
    "cr": "CR(-2)",
    "el": "EL",
}
#: Interval methods (Figure 2): name -> label.
INTERVAL_METHODS = {
    "el-chi2": "EL (chi2)",
    "el-f": "EL (F)",
    "cr-chi2": "CR(-2) (chi2)",
    "cr-f": "CR(-2) (F)",
    "binomial": "Binomial (Clopper-Pearson)",
    "gaussian": "Asymptotic Gaussian",
}
#: Degenerate cases and solver fallbacks counted per replicate (see :func:`evaluate`).
EVENTS = ("snips-undefined", "el-fallback")

_EST = tuple(ESTIMATORS)
_INT = tuple(INTERVAL_METHODS)


# ------------------------------------------------------------------------------------------------
# The environment
# ------------------------------------------------------------------------------------------------
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
    >>> [round(float(x), 7) for x in p]
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
    >>> s["actions"], s["epsilon"], s["agree"]
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


# ------------------------------------------------------------------------------------------------
# One replicate
# ------------------------------------------------------------------------------------------------
def evaluate(sample: Sample, *, confidence_level: float = 0.95):
    """Every estimator and interval of the study on one sample.

    Returns
    -------
    estimates : ndarray, shape (len(ESTIMATORS),)
    lows, highs : ndarray, shape (len(INTERVAL_METHODS),)
    events : dict
        ``snips-undefined``: 1 when every weight is 0 and SNIPS is set to 1/2 (the reward
        midpoint, the authors' convention); ``el-fallback``: how many EL computations the fast
        path did not solve and ``method="auto"`` (the cvxpy path) did.

    Notes
    -----
    CR(-2)'s estimate and both its intervals come from one
    :class:`~elcvx.cressie_read.CressieReadStats` of the sample (equal, by its contract, to
    :func:`elcvx.cressie_read.estimate` and :func:`~elcvx.cressie_read.interval`).
    """
    import elcvx
    from elcvx import baselines, cressie_read

    events = dict.fromkeys(EVENTS, 0)

    def el(fn, **kw):
        try:
            return fn(sample, method="fast", **kw)
        except SolverError:
            events["el-fallback"] += 1
            return fn(sample, method="auto", **kw)

    mid = 0.5 * (sample.rmin + sample.rmax)
    snips = baselines.snips(sample).value
    if float(np.dot(sample.c, sample.w)) == 0.0:
        events["snips-undefined"] = 1
        snips = mid
    cr = cressie_read.CressieReadStats.from_sample(sample)
    estimates = np.array([
        mid,
        baselines.clipped_dr(sample).value,
        snips,
        baselines.ips(sample).value,
        baselines.emp(sample).value,
        cr.estimate(rho=mid).value,
        el(elcvx.estimate, rho=mid).value,
    ])
    cl = confidence_level
    intervals = [
        el(elcvx.interval, confidence_level=cl, calibration="chi2"),
        el(elcvx.interval, confidence_level=cl, calibration="f"),
        cr.interval(confidence_level=cl, calibration="chi2"),
        cr.interval(confidence_level=cl, calibration="f"),
        baselines.clopper_pearson_interval(sample, confidence_level=cl),
        baselines.gaussian_interval(sample, confidence_level=cl),
    ]
    lows = np.array([float(iv[0]) for iv in intervals])
    highs = np.array([float(iv[1]) for iv in intervals])
    return estimates, lows, highs, events


def _run_chunk(task):
    """Replicates ``start..stop-1`` at size ``n`` (a process-pool task; module level to pickle)."""
    seed, n, start, stop, confidence_level = task
    cpu0 = time.process_time()
    m = stop - start
    truth = np.empty(m)
    est = np.empty((m, len(_EST)))
    low = np.empty((m, len(_INT)))
    high = np.empty((m, len(_INT)))
    events = dict.fromkeys(EVENTS, 0)
    for j, i in enumerate(range(start, stop)):
        rng = replicate_rng(seed, n, i)
        env = draw_environment(rng)
        sample = env.sample(n, rng)
        truth[j] = env.value
        est[j], low[j], high[j], ev = evaluate(sample, confidence_level=confidence_level)
        for key, v in ev.items():
            events[key] += v
    return n, start, truth, est, low, high, events, time.process_time() - cpu0


# ------------------------------------------------------------------------------------------------
# The study
# ------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class SyntheticStudy:
    """Every replicate of a run of :func:`run_study`, and its tables.

    Attributes
    ----------
    sizes : tuple of int
    replicates, seed : int
    confidence_level : float
    truth : dict
        ``n -> (replicates,)`` true values ``V``.
    estimates : dict
        ``n -> (replicates, len(ESTIMATORS))`` point estimates.
    lows, highs : dict
        ``n -> (replicates, len(INTERVAL_METHODS))`` interval bounds.
    events : dict
        ``n -> {event: count}`` (see :func:`evaluate`).
    wall_time : float
        Seconds, for the whole run.
    cpu_time : float
        CPU seconds spent on the replicates, summed over the worker processes.
    jobs : int
    """

    sizes: tuple
    replicates: int
    seed: int
    confidence_level: float
    truth: dict
    estimates: dict
    lows: dict
    highs: dict
    events: dict
    wall_time: float = 0.0
    jobs: int = 1
    cpu_time: float = 0.0
    weights: tuple = WEIGHTS
    probs: np.ndarray = field(default_factory=lambda: np.asarray(_cached_weights(WEIGHTS, SECOND_MOMENT)))

    # -- per-replicate arrays --------------------------------------------------------------------
    def squared_errors(self, n: int) -> np.ndarray:
        """``(replicates, len(ESTIMATORS))`` squared errors at size ``n``."""
        return (self.estimates[n] - self.truth[n][:, None]) ** 2

    def covered(self, n: int) -> np.ndarray:
        """``(replicates, len(INTERVAL_METHODS))`` booleans: ``low <= V <= high``."""
        v = self.truth[n][:, None]
        return (self.lows[n] <= v) & (v <= self.highs[n])

    def widths(self, n: int) -> np.ndarray:
        return self.highs[n] - self.lows[n]

    # -- tidy tables -----------------------------------------------------------------------------
    def mse_table(self) -> list:
        """Rows ``{n, estimator, mse, se}``: mean squared error and its standard error."""
        rows = []
        for n in self.sizes:
            sq = self.squared_errors(n)
            mse = sq.mean(axis=0)
            se = sq.std(axis=0, ddof=1) / math.sqrt(sq.shape[0])
            for j, name in enumerate(_EST):
                rows.append({"n": n, "estimator": name, "mse": float(mse[j]), "se": float(se[j])})
        return rows

    def interval_table(self) -> list:
        """Rows ``{n, method, coverage, coverage_se, mean_width, width_p05, width_p95}``."""
        rows = []
        for n in self.sizes:
            cov = self.covered(n).mean(axis=0)
            width = self.widths(n)
            p05, p95 = np.percentile(width, [5, 95], axis=0)
            r = width.shape[0]
            for j, name in enumerate(_INT):
                rows.append({
                    "n": n, "method": name,
                    "coverage": float(cov[j]),
                    "coverage_se": float(math.sqrt(cov[j] * (1 - cov[j]) / r)),
                    "mean_width": float(width[:, j].mean()),
                    "width_p05": float(p05[j]),
                    "width_p95": float(p95[j]),
                })
        return rows

    def paired_mse_difference(self, n: int, other: str, reference: str = "el"):
        """Mean and standard error of ``sq_err(reference) - sq_err(other)`` over the same replicates."""
        sq = self.squared_errors(n)
        d = sq[:, _EST.index(reference)] - sq[:, _EST.index(other)]
        return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))

    def to_frames(self):
        """The two tables as pandas DataFrames (needs pandas, the ``io`` extra)."""
        import pandas as pd

        return pd.DataFrame(self.mse_table()), pd.DataFrame(self.interval_table())

    # -- outputs ---------------------------------------------------------------------------------
    def write(self, out, *, plots: bool = True, command: str | None = None) -> list:
        """Write ``mse.csv``, ``intervals.csv``, ``summary.md`` and (with matplotlib) the figures.

        Returns the paths written. Without matplotlib the figures are skipped with a message on
        stderr (install the ``plot`` extra).
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        mse_rows, int_rows = self.mse_table(), self.interval_table()
        written = [
            _write_csv(out / "mse.csv", ["n", "estimator", "mse", "se"], mse_rows),
            _write_csv(out / "intervals.csv", ["n", "method", "coverage", "coverage_se",
                                               "mean_width", "width_p05", "width_p95"], int_rows),
        ]
        figures = []
        if plots:
            try:
                from . import plots as _plots

                figures = [_plots.plot_mse(mse_rows, out / "mse.png"),
                           _plots.plot_intervals(int_rows, out / "intervals.png")]
            except ImportError as exc:
                print(f"elcvx: figures skipped ({exc}); install the 'plot' extra: "
                      "pip install 'elcvx[plot]'", file=sys.stderr)
        summary = out / "summary.md"
        summary.write_text(self.summary_markdown(mse_rows, int_rows, figures=[f.name for f in figures],
                                                 command=command), encoding="utf-8")
        return written + figures + [summary]

    def summary_markdown(self, mse_rows=None, int_rows=None, *, figures=(), command=None) -> str:
        """The Markdown summary: set-up, the tables, and the checks of the paper's claims."""
        return _summary_markdown(self, mse_rows or self.mse_table(), int_rows or self.interval_table(),
                                figures=figures, command=command)


def _write_csv(path: Path, columns, rows) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.10g}" if isinstance(v, float) else v) for k, v in row.items()})
    return path


def _format_seconds(s: float) -> str:
    s = max(0.0, s)
    if s < 60:
        return f"{s:.0f}s"
    m, s = divmod(int(round(s)), 60)
    return f"{m}m{s:02d}s" if m < 60 else f"{m // 60}h{m % 60:02d}m"


class _Progress:
    """One line on stderr per finished chunk (at most one a second, plus the last of each N)."""

    def __init__(self, total: int, stream, enabled: bool, label: str = "synthetic"):
        self.total, self.stream, self.enabled, self.label = total, stream, enabled, label
        self.done = 0
        self.start = time.perf_counter()
        self.last = -math.inf

    def update(self, n, m, size_done, size_total):
        self.done += m
        if not self.enabled:
            return
        now = time.perf_counter()
        final = size_done == size_total or self.done == self.total
        if not final and now - self.last < 1.0:
            return
        self.last = now
        elapsed = now - self.start
        eta = elapsed / self.done * (self.total - self.done)
        print(f"[{self.label}] N={n:<8d} {size_done:>6d}/{size_total} replicates | "
              f"total {self.done}/{self.total} ({100 * self.done / self.total:5.1f}%) | "
              f"elapsed {_format_seconds(elapsed)}, ETA {_format_seconds(eta)}",
              file=self.stream, flush=True)


def run_study(sizes=DEFAULT_SIZES, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED,
              *, jobs: int = 2, chunk_size: int = DEFAULT_CHUNK_SIZE,
              confidence_level: float = 0.95, progress: bool = True, stream=None) -> SyntheticStudy:
    """Run the synthetic study: every estimator and interval on ``replicates`` draws per size.

    Parameters
    ----------
    sizes : sequence of int
        Sample sizes ``N``.
    replicates : int
        Environment draws (each with one sample) per size; at least 2 (for standard errors).
    seed : int
        Root of the random streams (see the module docstring); results are a function of
        ``(seed, sizes, replicates, confidence_level)`` only.
    jobs : int
        Worker processes; ``1`` runs in this process.
    chunk_size : int
        Replicates per task (load balancing and progress; does not change the results).
    confidence_level : float
    progress : bool
        Print a line per finished chunk, with an ETA, on ``stream`` (default stderr).

    Returns
    -------
    SyntheticStudy
    """
    sizes = tuple(_check_size(n) for n in sizes)
    if not sizes or len(set(sizes)) != len(sizes):
        raise InvalidInputError(f"sizes={sizes!r} must be a non-empty list of distinct sizes")
    if isinstance(replicates, bool) or int(replicates) != replicates or replicates < 2:
        raise InvalidInputError(f"replicates={replicates!r} must be an integer >= 2")
    if isinstance(jobs, bool) or int(jobs) != jobs or jobs < 1:
        raise InvalidInputError(f"jobs={jobs!r} must be a positive integer")
    if isinstance(chunk_size, bool) or int(chunk_size) != chunk_size or chunk_size < 1:
        raise InvalidInputError(f"chunk_size={chunk_size!r} must be a positive integer")
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise InvalidInputError(f"seed={seed!r} must be a non-negative integer")
    if not 0 < confidence_level < 1:
        raise InvalidInputError(f"confidence_level={confidence_level!r} must lie strictly between 0 and 1")
    replicates, jobs, chunk_size, seed = int(replicates), int(jobs), int(chunk_size), int(seed)

    tasks = [(seed, n, start, min(start + chunk_size, replicates), float(confidence_level))
             for n in sizes for start in range(0, replicates, chunk_size)]
    truth = {n: np.empty(replicates) for n in sizes}
    est = {n: np.empty((replicates, len(_EST))) for n in sizes}
    low = {n: np.empty((replicates, len(_INT))) for n in sizes}
    high = {n: np.empty((replicates, len(_INT))) for n in sizes}
    events = {n: dict.fromkeys(EVENTS, 0) for n in sizes}
    done = dict.fromkeys(sizes, 0)
    bar = _Progress(len(sizes) * replicates, stream or sys.stderr, progress)
    t0 = time.perf_counter()

    cpu = [0.0]

    def collect(result):
        n, start, tr, e, lo, hi, ev, seconds = result
        cpu[0] += seconds
        sl = slice(start, start + tr.size)
        truth[n][sl], est[n][sl], low[n][sl], high[n][sl] = tr, e, lo, hi
        for key, v in ev.items():
            events[n][key] += v
        done[n] += tr.size
        bar.update(n, tr.size, done[n], replicates)

    if jobs == 1:
        for task in tasks:
            collect(_run_chunk(task))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_run_chunk, task) for task in tasks]
            for fut in as_completed(futures):
                collect(fut.result())
    wall = time.perf_counter() - t0
    return SyntheticStudy(sizes=sizes, replicates=replicates, seed=seed,
                          confidence_level=float(confidence_level), truth=truth, estimates=est,
                          lows=low, highs=high, events=events, wall_time=wall, jobs=jobs,
                          cpu_time=cpu[0])


def machine_description() -> str:
    """A one-line description of the machine, for the summary."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


# ------------------------------------------------------------------------------------------------
# The Markdown summary
# ------------------------------------------------------------------------------------------------
def _g(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}" if np.isfinite(x) else "nan"


def _md_table(header, rows) -> list:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _significance(mean: float, se: float) -> str:
    """``<``/``>``: the difference is more than 2 SE below/above 0; ``≈`` otherwise."""
    if mean + 2 * se < 0:
        return "<"
    if mean - 2 * se > 0:
        return ">"
    return "≈"


def _summary_markdown(study: SyntheticStudy, mse_rows, int_rows, *, figures=(), command=None) -> str:
    from .. import __version__

    sizes = study.sizes
    level = study.confidence_level
    mse = {(r["n"], r["estimator"]): r for r in mse_rows}
    ivs = {(r["n"], r["method"]): r for r in int_rows}
    p = np.asarray(study.probs)
    w = np.asarray(study.weights)
    story = epsilon_greedy_story(study.weights, SECOND_MOMENT)
    lines = [
        "# Synthetic study (the paper's Figures 1 and 2): summary",
        "",
        "Written by `elcvx reproduce synthetic`; every number below is computed by "
        "`elcvx/experiments/synthetic.py` from the run it describes.",
        "",
        "## Set-up",
        "",
        f"* Command: `{command or 'elcvx reproduce synthetic'}`",
        f"* elcvx {__version__}; seed {study.seed}; {study.replicates} environment draws per N; "
        f"confidence level {level:g}.",
        f"* Sample sizes N: {', '.join(str(n) for n in sizes)}.",
        f"* Wall time {_format_seconds(study.wall_time)} ({study.wall_time:.1f} s) with {study.jobs} "
        f"worker process(es) on {machine_description()}; CPU time in the workers "
        f"{_format_seconds(study.cpu_time)} ({1e3 * study.cpu_time / (len(sizes) * study.replicates):.1f} ms "
        "per replicate).",
        f"* Importance weights {tuple(float(x) for x in w)} (wmin = {w[0]:g}, wmax = {w[-1]:g}) with "
        f"probabilities {', '.join(f'{x:.7g}' for x in p)} under the logging policy: the maximum-entropy "
        f"law with E[w] = {float(p @ w):.12g} and E[w^2] = {float(p @ (w * w)):.12g} (unique: three "
        "support points, three linear constraints).",
        f"* Epsilon-greedy story: K = {story['actions']} actions, epsilon = {story['epsilon']} "
        f"(greedy action 1/{w[1]:g}, others 1/{w[-1]:g}), deterministic target agreeing with the "
        f"greedy action on a fraction {story['agree']} = {float(story['agree']):.4f} of contexts.",
        "* Each draw: V ~ Uniform[0, 1], then P(r = 1 | w) uniform on its feasible range given V "
        "(weights in increasing order, the last one fixed by E[w r] = V); one sample of N "
        "examples (multinomial counts of the six (w, r) cells).",
        "* Estimators: Constant = 1/2; ClippedDR = clip(1/2 + mean(w (r - 1/2)), 0, 1); SNIPS "
        "(1/2 when every weight is 0); IPS; EMP; CR(-2) and EL with rho = 1/2.",
        "* Intervals: EL and CR(-2) with the chi-square(1) and F(1, N-1) calibrations; Binomial = "
        "Clopper-Pearson on w r / wmax (fractional successes); asymptotic Gaussian around IPS "
        "(ddof = 1), clipped to [0, 1].",
        "",
    ]
    if figures:
        lines += ["## Figures", ""] + [f"![{f}]({f})" for f in figures] + [""]

    # -- MSE -----------------------------------------------------------------------------------
    lines += ["## Mean squared error (Figure 1)", "",
              "MSE (standard error of the mean); the lowest MSE at each N in bold.", ""]
    rows = []
    for n in sizes:
        vals = [mse[n, e]["mse"] for e in _EST]
        best = int(np.argmin(vals))
        cells = []
        for j, e in enumerate(_EST):
            c = f"{_g(mse[n, e]['mse'])} ({_g(mse[n, e]['se'], 2)})"
            cells.append(f"**{c}**" if j == best else c)
        rows.append([n] + cells)
    lines += _md_table(["N"] + list(ESTIMATORS.values()), rows) + [""]

    others = [e for e in _EST if e != "el"]
    lines += ["### EL against each estimator, paired over the same draws", "",
              "Mean of sq. error(EL) - sq. error(other) ± its standard error; `<`: EL lower by more "
              "than 2 SE, `>`: EL higher by more than 2 SE, `≈`: within 2 SE.", ""]
    rows = []
    for n in sizes:
        cells = []
        for e in others:
            m, se = study.paired_mse_difference(n, e)
            cells.append(f"{_significance(m, se)} {_g(m, 2)} ± {_g(se, 2)}")
        rows.append([n] + cells)
    lines += _md_table(["N"] + [f"EL − {ESTIMATORS[e]}" for e in others], rows) + [""]

    # -- intervals -----------------------------------------------------------------------------
    lines += [f"## Intervals at {100 * level:g}% (Figure 2)", "",
              f"### Coverage (binomial standard error); bold: below {level:g} by more than 2 SE", ""]
    rows = []
    for n in sizes:
        cells = []
        for m in _INT:
            r = ivs[n, m]
            c = f"{r['coverage']:.4f} ({r['coverage_se']:.4f})"
            cells.append(f"**{c}**" if r["coverage"] + 2 * r["coverage_se"] < level else c)
        rows.append([n] + cells)
    lines += _md_table(["N"] + list(INTERVAL_METHODS.values()), rows) + [""]

    lines += ["### Mean width [5%, 95% quantiles of the width]", ""]
    rows = [[n] + [f"{ivs[n, m]['mean_width']:.4f} [{ivs[n, m]['width_p05']:.3f}, "
                   f"{ivs[n, m]['width_p95']:.3f}]" for m in _INT] for n in sizes]
    lines += _md_table(["N"] + list(INTERVAL_METHODS.values()), rows) + [""]

    ref = _INT.index("el-chi2")
    lines += ["### Width relative to EL (chi2)", "",
              "Ratio of mean widths, and (in parentheses) the median over draws of the per-draw "
              "ratio, the statistic of the paper's Table 1.", ""]
    rows = []
    for n in sizes:
        wd = study.widths(n)
        cells = []
        for j, m in enumerate(_INT):
            if j == ref:
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                per = wd[:, j] / wd[:, ref]
            cells.append(f"{wd[:, j].mean() / wd[:, ref].mean():.2f} ({np.nanmedian(per):.2f})")
        rows.append([n] + cells)
    lines += _md_table(["N"] + [INTERVAL_METHODS[m] for j, m in enumerate(_INT) if j != ref], rows) + [""]

    # -- the paper's claims, checked -----------------------------------------------------------
    lines += ["## The paper's claims, checked on this run", ""]
    for m in ("el-chi2", "el-f"):
        cov = np.array([ivs[n, m]["coverage"] for n in sizes])
        se = np.array([ivs[n, m]["coverage_se"] for n in sizes])
        below = [n for n, c in zip(sizes, cov) if c < level]
        sig = [n for n, c, s in zip(sizes, cov, se) if c + 2 * s < level]
        k = int(np.argmin(cov))
        lines.append(
            f"* **{INTERVAL_METHODS[m]} coverage >= {level:g} at every N?** "
            f"{'yes' if not below else 'no'}: minimum {cov[k]:.4f} ± {se[k]:.4f} at N = {sizes[k]}; "
            f"below {level:g} at N = {', '.join(map(str, below)) or 'none'}; "
            f"below by more than 2 SE at N = {', '.join(map(str, sig)) or 'none'}.")
    for m in ("cr-chi2", "cr-f", "gaussian", "binomial"):
        cov = np.array([ivs[n, m]["coverage"] for n in sizes])
        se = np.array([ivs[n, m]["coverage_se"] for n in sizes])
        sig = [n for n, c, s in zip(sizes, cov, se) if c + 2 * s < level]
        k = int(np.argmin(cov))
        lines.append(f"* {INTERVAL_METHODS[m]}: minimum coverage {cov[k]:.4f} at N = {sizes[k]}; "
                     f"below {level:g} by more than 2 SE at N = {', '.join(map(str, sig)) or 'none'}.")
    paper = [e for e in _EST if e != "cr"]         # Figure 1's estimators (CR(-2) is not in it)
    rivals = [e for e in paper if e != "el"]
    # lowest, ties included (EMP and EL coincide when the MLE leaves no mass off the sample)
    lowest = [n for n in sizes
              if mse[n, "el"]["mse"] <= min(mse[n, e]["mse"] for e in rivals) * (1 + 1e-9)]
    sig_best = [n for n in sizes
                if all(_significance(*study.paired_mse_difference(n, e)) == "<" for e in rivals)]
    ties, beaten = {}, {}
    for n in sizes:
        for e in rivals:
            verdict = _significance(*study.paired_mse_difference(n, e))
            if verdict == "≈":
                ties.setdefault(n, []).append(ESTIMATORS[e])
            elif verdict == ">":
                beaten.setdefault(n, []).append(ESTIMATORS[e])
    lines.append("* **EL's MSE the lowest of Figure 1's estimators** (Constant, ClippedDR, SNIPS, IPS, "
                 f"EMP, EL), ties included: at N = {', '.join(map(str, lowest)) or 'none'}; lower than each of them by "
                 f"more than 2 paired SE at N = {', '.join(map(str, sig_best)) or 'none'}.")
    lines.append("* Within 2 paired SE of EL: " + (
        "; ".join(f"N = {n}: {', '.join(v)}" for n, v in ties.items()) or "never") + ".")
    lines.append("* Lower than EL by more than 2 paired SE: " + (
        "; ".join(f"N = {n}: {', '.join(v)}" for n, v in beaten.items()) or "never") + ".")
    cr_rel = [(n, mse[n, "cr"]["mse"] / mse[n, "el"]["mse"], _significance(*study.paired_mse_difference(n, "cr")))
              for n in sizes]
    lines.append("* EL against CR(-2) (not in Figure 1): MSE(CR) / MSE(EL) = " + ", ".join(
        f"{r:.3f} at N = {n} ({'EL lower' if v == '<' else 'CR lower' if v == '>' else 'tie'})"
        for n, r, v in cr_rel) + ".")
    ratios = []
    for n in sizes:
        wd = study.widths(n)
        ratios.append(wd[:, _INT.index("binomial")].mean() / wd[:, ref].mean())
    lines.append(f"* **Binomial / EL (chi2) mean width:** from {min(ratios):.2f} to {max(ratios):.2f} "
                 f"over the grid ({', '.join(f'N = {n}: {r:.2f}' for n, r in zip(sizes, ratios))}).")
    lines.append("")

    # -- degenerate cases ----------------------------------------------------------------------
    lines += ["## Degenerate cases and fallbacks", ""]
    rows = [[n] + [study.events[n][k] for k in EVENTS] for n in sizes]
    lines += _md_table(["N"] + [f"{k} (draws)" for k in EVENTS], rows)
    lines += ["", "`snips-undefined`: every weight is 0, SNIPS set to 1/2. `el-fallback`: EL "
              "computations the fast path could not solve, redone with `method=\"auto\"`.", ""]
    return "\n".join(lines)
