"""The validity suite's distributions of logs ``(w, r)``: each with its exact value, a sampler and
its weight range, so that a lower bound's violations can be counted against the truth.

* **two-point** weights ``w ∈ {0, wmax}`` with ``P(w = wmax) = 1/wmax`` (so ``E[w] = 1``) and
  rewards Bernoulli(0.4) drawn independently: ``V = 0.4``; the hardest law of its range for a
  bound, all its value in rare rows when ``wmax`` is large;
* **softmax**: the LS paper's tightness protocol (:mod:`elcvx.experiments.pessimism.protocol`,
  its closed forms), labels drawn with a chosen share in the faulty classes {0, 1}; the other
  targets of the protocol's grid (temperatures 0.1–0.5) on the same rows give the candidates of
  :func:`elcvx.select` and a pair with an exact difference;
* **beta**: ``w = wmax B``, ``B ~ Beta(a, b)`` with ``a / (a + b) = 1 / wmax``, rewards
  Bernoulli(``w / wmax``): ``V = E[w^2] / wmax = (1 + Var w) / wmax``;
* **pareto**: ``X`` Pareto(``alpha``) on ``[1, inf)`` capped at ``c``, ``w = min(X, c) / m`` with
  ``m = E[min(X, c)]``, rewards Bernoulli(0.2 + 0.6 [X >= t]): ``V = 0.2 + 0.6 E[w; X >= t]``.

Where a law has no logging probabilities of its own (IX needs them), ``p = 1/wmax``: a logging
policy uniform over ``wmax`` actions and a target putting ``w / wmax`` on the logged one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..pessimism.protocol import (FAULTY, TARGET_TEMPERATURES, Config, log_of_labels,
                                  softmax_probabilities, true_value, weight_range)

__all__ = ["Logged", "Distribution", "TwoPoint", "Softmax", "ScaledBeta", "CappedPareto",
           "DISTRIBUTIONS", "QUICK_DISTRIBUTIONS", "by_name"]


class Logged(NamedTuple):
    """One log: weights ``w``, rewards ``r`` in [0, 1], logging probabilities ``p`` of the logged
    actions, and (softmax laws only) each candidate target's probability of it, ``(N, C)``."""

    w: np.ndarray
    r: np.ndarray
    p: np.ndarray
    probs: np.ndarray | None = None


@dataclass(frozen=True)
class Distribution:
    """A law of logs with an exact value ``value`` and weights in ``[wmin, wmax]``. A law with
    candidates also has each candidate's value and weight range, and ``pair = (a, b)``: two of
    them whose difference ``value_a - value_b`` is exact."""

    name: str
    family: str
    value: float
    wmin: float
    wmax: float
    candidate_values: tuple = field(default=(), repr=False)
    candidate_ranges: tuple = field(default=(), repr=False)
    pair: tuple | None = None

    def draw(self, n: int, rng: np.random.Generator) -> Logged:
        raise NotImplementedError


def _uniform_p(w, wmax):
    return np.full(w.size, 1.0 / wmax)


@dataclass(frozen=True)
class TwoPoint(Distribution):
    reward: float = 0.4

    @classmethod
    def of(cls, wmax: float, reward: float = 0.4) -> "TwoPoint":
        return cls(f"two-point-{wmax:g}", "two-point", reward, 0.0, float(wmax), reward=reward)

    def draw(self, n, rng):
        w = np.where(rng.random(n) < 1.0 / self.wmax, self.wmax, 0.0)
        r = (rng.random(n) < self.reward).astype(float)
        return Logged(w, r, _uniform_p(w, self.wmax))


@dataclass(frozen=True)
class Softmax(Distribution):
    k: int = 4
    cfg: Config = Config(0.0, 0.3, 0.3)
    faulty_share: float = 0.5

    @classmethod
    def of(cls, k: int, tau: float, tau0: float, eta: float, faulty_share: float) -> "Softmax":
        cfg = Config(eta, tau, tau0)
        ranges = tuple(weight_range(Config(eta, t, tau0), k) for t in TARGET_TEMPERATURES)
        values = tuple(true_value(Config(eta, t, tau0), k) for t in TARGET_TEMPERATURES)
        a = TARGET_TEMPERATURES.index(tau)
        b = TARGET_TEMPERATURES.index(0.5 if tau != 0.5 else 0.1)
        name = f"softmax-k{k}-tau{tau:g}-tau0{tau0:g}-eta{eta:g}-" + (
            f"faulty{faulty_share:g}" if faulty_share else "clean")
        wmin, wmax = weight_range(cfg, k)
        return cls(name, "softmax", true_value(cfg, k), wmin, wmax, candidate_values=values,
                   candidate_ranges=ranges, pair=(a, b), k=k, cfg=cfg, faulty_share=faulty_share)

    def draw(self, n, rng):
        faulty = rng.random(n) < self.faulty_share
        y = np.where(faulty, rng.integers(0, len(FAULTY), n),
                     len(FAULTY) + rng.integers(0, self.k - len(FAULTY), n))
        log = log_of_labels(y, self.k, self.cfg, rng)
        peaks = np.array([softmax_probabilities(t, self.k) for t in TARGET_TEMPERATURES])
        probs = np.where(log.hit[:, None], peaks[:, 0], peaks[:, 1])
        return Logged(log.w, log.r, log.p, probs)


@dataclass(frozen=True)
class ScaledBeta(Distribution):
    b: float = 4.5

    @classmethod
    def of(cls, wmax: float, b: float) -> "ScaledBeta":
        a = b / (wmax - 1.0)  # a / (a + b) = 1 / wmax
        var = wmax ** 2 * a * b / ((a + b) ** 2 * (a + b + 1.0))
        return cls(f"beta-{wmax:g}", "beta", (1.0 + var) / wmax, 0.0, float(wmax), b=b)

    def draw(self, n, rng):
        a = self.b / (self.wmax - 1.0)
        w = self.wmax * rng.beta(a, self.b, n)
        r = (rng.random(n) < w / self.wmax).astype(float)
        return Logged(w, r, _uniform_p(w, self.wmax))


@dataclass(frozen=True)
class CappedPareto(Distribution):
    alpha: float = 1.1
    cap: float = 1000.0
    threshold: float = 10.0

    @classmethod
    def of(cls, alpha: float, cap: float, threshold: float) -> "CappedPareto":
        m = 1.0 + (1.0 - cap ** (1.0 - alpha)) / (alpha - 1.0)  # E[min(X, c)]
        # E[min(X, c); X >= t] = t P(X >= t) + int_t^c P(X > x) dx
        tail = threshold ** (1.0 - alpha) + (threshold ** (1.0 - alpha) - cap ** (1.0 - alpha)) / (alpha - 1.0)
        return cls(f"pareto-{alpha:g}-cap{cap:g}", "pareto", 0.2 + 0.6 * tail / m, 1.0 / m, cap / m,
                   alpha=alpha, cap=cap, threshold=threshold)

    def draw(self, n, rng):
        x = np.minimum((1.0 - rng.random(n)) ** (-1.0 / self.alpha), self.cap)
        w = np.clip(x * (self.wmin), self.wmin, self.wmax)  # x / m, m = 1 / wmin
        r = (rng.random(n) < 0.2 + 0.6 * (x >= self.threshold)).astype(float)
        return Logged(w, r, _uniform_p(w, self.wmax))


#: The suite's laws, in the order of its table.
DISTRIBUTIONS = (
    TwoPoint.of(2), TwoPoint.of(10), TwoPoint.of(100),
    Softmax.of(4, 0.1, 0.3, 0.0, 0.0),
    Softmax.of(4, 0.5, 0.2, 0.1, 0.5),
    Softmax.of(10, 0.2, 0.25, 0.1, 0.0),
    # The 10-action faulty case: chi2 above delta + 2 SE at N = 1,000.
    Softmax.of(10, 0.3, 0.3, 0.2, 0.5),
    ScaledBeta.of(10, 4.5),
    CappedPareto.of(1.1, 1000.0, 10.0),
)
#: The quick run's laws: a two-point one and the 10-action faulty softmax case (with the
#: difference's and the selection's bounds).
QUICK_DISTRIBUTIONS = ("two-point-10", "softmax-k10-tau0.3-tau00.3-eta0.2-faulty0.5")


def by_name(name: str) -> Distribution:
    """The law of the suite called ``name``."""
    for d in DISTRIBUTIONS:
        if d.name == name:
            return d
    raise KeyError(name)

