"""The random samples of tests/fast/test_fuzz.py (and of the tests that reuse its cases): one
regime of :data:`REGIMES` per seed, ``seed % len(REGIMES)``, everything else drawn from a numpy
``Generator`` seeded by the case's own integer, so ``draw(seed)`` is the same sample on every
machine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from elcvx import Sample
from fuzz_support import unit_rewards

REGIMES = ("continuous", "discrete", "lognormal", "ones", "one_nonzero", "at_bounds",
           "wmax_inf", "span", "near_one", "float32", "counts")
RANGES = ((-1.0, 3.0), (-10.0, -5.0), (0.5, 0.75), (-1e3, 1e3))


def to_unit(s, x):
    """``x`` on the unit reward scale of sample ``s``."""
    return (np.asarray(x, dtype=float) - s.rmin) / (s.rmax - s.rmin)


@dataclass
class Case:
    seed: int
    regime: str
    sample: Sample
    rho: float | None = None  # None: the default ("self-consistent": base / (1 - wmass))
    calibration: str = "chi2"
    note: str = ""  # the sub-kind of the regime

    def rho_unit(self, base, wmass):
        """``rho`` on the unit scale; the default's is the fixed point of ``V(rho) = rho``."""
        if self.rho is not None:
            return float(to_unit(self.sample, self.rho))
        return min(max(base / (1.0 - wmass), 0.0), 1.0) if wmass < 1.0 else 0.5


def _n(rng):
    p = rng.random()
    if p < 0.1:
        return int(rng.integers(1, 4))
    if p < 0.6:
        return int(np.exp(rng.uniform(np.log(4), np.log(300))))
    return int(np.exp(rng.uniform(np.log(300), np.log(3000))))


def _wmin(rng):
    return 0.0 if rng.random() < 0.7 else float(rng.choice([0.05, 0.3, 0.9]))


def _continuous(rng, n, wmin, wmax):
    top = min(wmax, 20.0)
    kind = rng.integers(0, 3)
    if kind == 0:
        w = rng.uniform(wmin, top, n)
    elif kind == 1:
        w = wmin + rng.exponential(rng.uniform(0.3, 3.0), n)
    else:  # a log where the target policy often takes another action: many weights at wmin
        w = np.where(rng.random(n) < rng.uniform(0.2, 0.8), wmin, rng.uniform(wmin, top, n))
    return np.clip(w, wmin, wmax), f"kind {kind}"


def _epsilon_greedy(rng, n):
    """Target/logging probabilities of the logged action: epsilon-greedy logging over k actions,
    a deterministic (or epsilon'-greedy) target; 2-3 distinct weights."""
    k = int(rng.integers(2, 11))
    eps = float(rng.choice([0.01, 0.05, 0.1, 0.2, 0.5]))
    logged_greedy = rng.random(n) < 1 - eps + eps / k
    logging = np.where(logged_greedy, 1 - eps + eps / k, eps / k)
    agree = rng.random()  # P(target's action = logging's greedy action)
    eps_t = 0.0 if rng.random() < 0.6 else float(rng.choice([0.05, 0.3]))
    target_greedy = rng.random(n) < agree
    # target prob of the logged action
    hit_greedy = logged_greedy & target_greedy
    hit_other = ~logged_greedy & ~target_greedy & (rng.random(n) < 1.0 / max(k - 1, 1))
    target = np.where(hit_greedy | hit_other, 1 - eps_t + eps_t / k, eps_t / k)
    return target, logging, eps / k, f"k={k} eps={eps} eps_t={eps_t}"


def _rewards(rng, n, rmin, rmax):
    kind = rng.choice(["binary", "continuous", "constant", "levels"], p=[0.35, 0.35, 0.2, 0.1])
    u = unit_rewards(rng, kind, n)
    r = rmin + (rmax - rmin) * u
    return np.clip(r, rmin, rmax), str(kind)


def draw(seed: int) -> Case:
    """The case of ``seed``: regime ``REGIMES[seed % len(REGIMES)]``, everything else drawn from
    ``np.random.default_rng(seed)``."""
    regime = REGIMES[seed % len(REGIMES)]
    rng = np.random.default_rng(seed)
    n = _n(rng)
    wmin = 0.0
    counts = None
    if rng.random() < 0.7:
        rmin, rmax = 0.0, 1.0
    else:
        rmin, rmax = RANGES[rng.integers(len(RANGES))]
    r, rkind = _rewards(rng, n, rmin, rmax)
    note = ""
    if regime == "continuous":
        wmin = _wmin(rng)
        wmax = float(rng.choice([1.5, 2.0, 10.0, 100.0, 1e3, 1e6]))
        w, note = _continuous(rng, n, wmin, wmax)
    elif regime == "discrete":
        target, logging, pmin, note = _epsilon_greedy(rng, n)
        s = Sample.from_probs(target, logging, r, pmin=pmin, rmin=rmin, rmax=rmax)
        w, wmax = s.w, s.wmax
    elif regime == "lognormal":
        sigma = rng.uniform(2.0, 3.0)
        w = np.exp(sigma * rng.standard_normal(n) - sigma**2 / 2)
        kind = rng.integers(0, 3)
        if kind == 0:
            wmax = np.inf
        elif kind == 1:
            wmax = max(2.0, float(w.max()) * rng.uniform(1.0, 3.0))
        else:  # clipped at wmax: weights exactly at wmax
            wmax = float(rng.choice([10.0, 100.0, 1e3]))
            w = np.minimum(w, wmax)
        note = f"sigma={sigma:.2f} kind {kind}"
    elif regime == "ones":
        wmin = _wmin(rng)
        wmax = float(rng.choice([1.5, 10.0, 1e6, np.inf]))
        w = np.ones(n)
    elif regime == "one_nonzero":
        wmax = float(rng.choice([2.0, 10.0, 1e3, np.inf]))
        top = wmax if np.isfinite(wmax) else 1e3
        w = np.zeros(n)
        kind = rng.integers(0, 3)
        w[rng.integers(n)] = [rng.uniform(0, 1), rng.uniform(1, top), top][kind]
        note = f"kind {kind}"
    elif regime == "at_bounds":
        wmin = float(rng.choice([0.0, 0.0, 0.1, 0.5]))
        wmax = float(rng.choice([1.5, 2.0, 10.0, 1e3]))
        p_in = rng.choice([0.0, 0.1, 0.5])
        w = np.where(rng.random(n) < 0.5, wmin, wmax)
        w = np.where(rng.random(n) < p_in, rng.uniform(wmin, wmax, n), w)
        note = f"p_interior={p_in}"
    elif regime == "wmax_inf":
        wmax = np.inf
        wmin = _wmin(rng)
        w, note = _continuous(rng, n, wmin, float(rng.choice([0.9, 3.0, 50.0])))
    elif regime == "span":
        wmax = float(rng.choice([np.inf, 1e16]))
        kind = rng.integers(0, 3)
        w = rng.uniform(0, 3, n)
        m = max(1, int(rng.integers(1, 4)) if rng.random() < 0.7 else n // 3)
        rows = rng.choice(n, min(m, n), replace=False)
        if kind == 0:  # log-uniform over the whole span
            w[rows] = 10.0 ** rng.uniform(-300, 16, rows.size)
        elif kind == 1:  # a few huge weights
            w[rows] = 10.0 ** rng.uniform(12, 16, rows.size)
        else:  # a few tiny ones
            w[rows] = 10.0 ** rng.uniform(-300, -30, rows.size)
        if rng.random() < 0.3:
            w[rng.integers(n)] = float(rng.choice([1e-300, 1e16]))
        note = f"kind {kind}"
    elif regime == "near_one":
        wmax = float(rng.choice([2.0, 10.0, np.inf]))
        delta = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-12, -6, n)
        w = 1.0 + np.where(rng.random(n) < 0.2, 0.0, delta)
        if rng.random() < 0.3:  # one ordinary weight among them
            w[rng.integers(n)] = rng.uniform(0, min(wmax, 5.0))
    elif regime == "float32":
        # probabilities stored as float32: w = float64(float32 target) / float64(float32 logging)
        k = int(rng.integers(2, 6))
        logits = rng.normal(0, rng.uniform(0.1, 3.0), (n, k)).astype(np.float32)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = (p / p.sum(axis=1, keepdims=True)).astype(np.float32)
        pmin = np.float32(0.01)
        p = np.maximum(p, pmin).astype(np.float32)
        a = np.array([rng.choice(k, p=row / row.sum()) for row in p.astype(float)])
        logging = p[np.arange(n), a]
        kind = rng.integers(0, 3)
        if kind == 0:  # a deterministic target
            target = (rng.integers(0, k, n) == a).astype(np.float32)
        elif kind == 1:  # another softmax
            t = np.exp(rng.normal(0, 1, (n, k))).astype(np.float32)
            target = (t / t.sum(axis=1, keepdims=True)).astype(np.float32)[np.arange(n), a]
        else:  # the logging policy itself, perturbed in the last float32 digits
            target = (logging * (1 + np.float32(6e-8) * rng.integers(-2, 3, n))).astype(np.float32)
            target = np.minimum(target, np.float32(1.0))
        s = Sample.from_probs(target.astype(np.float64), logging.astype(np.float64), r,
                              pmin=float(pmin), rmin=rmin, rmax=rmax)
        w, wmax = s.w, s.wmax
        note = f"kind {kind}"
    else:  # counts
        base = rng.integers(0, 3)
        if base == 0:
            wmax = float(rng.choice([10.0, 1e3]))
            w, note = _continuous(rng, n, 0.0, wmax)
        elif base == 1:
            target, logging, pmin, note = _epsilon_greedy(rng, n)
            w, wmax = target / logging, 1.0 / pmin
            w = np.where((w > wmax) & (w <= wmax * (1 + 1e-12)), wmax, w)
        else:
            w, wmax = np.ones(n), float(rng.choice([2.0, np.inf]))
        if rng.random() < 0.5:
            counts = rng.integers(1, 1000, n).astype(float)
            note += " integer counts"
        else:
            counts = 10.0 ** rng.uniform(-3, 3, n)
            note += " real counts"
    if counts is None and regime != "counts" and rng.random() < 0.15:
        counts = rng.integers(1, 5, n).astype(float)
    sample = Sample(w, r, counts=counts, wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
    rho = None
    if rng.random() < 0.4:
        rho = float(rng.choice([rmin, rmax, rmin + (rmax - rmin) * rng.random()]))
    calibration = "f" if rng.random() < 0.2 else "chi2"
    return Case(seed, regime, sample, rho, calibration, f"{note} rewards {rkind}".strip())
