"""Standing random tests ("fuzz") of the confidence sequences (``elcvx.sequences``) against
references written here from their definitions (issue 24, "What done looks like").

Each case is drawn from a numpy ``Generator`` seeded by its own integer (:func:`draw`): a log of
1 to 300 rows in one of :data:`REGIMES` (chosen by ``seed % len(REGIMES)``: discrete, exponential
and Pareto weights, a few weights from 1e20 to 1e300 among ordinary ones, every weight 0, every
weight 1, weights near 1e-8), rewards continuous, binary or constant on a random range, a
random confidence level and DDRM tail. Each case is checked against:

* **one call**: the log fed in random chunks, and row by row, gives the bounds of one call to
  the last bit (both sequences, ``intersect`` on and off);
* **the DDRM's exact root**: ``L_t = sup {mu in [0, 1] : log sum_j w_j exp(A_j - lambda_j t mu)
  >= log(2 / alpha)}`` with ``A_j = sum_s lambda_j X_s - psi_j(e_s)`` summed here in ``decimal``
  arithmetic (60 digits past the point) from the definition of ``psi`` (its three pieces, or Vowpal Wabbit's
  binned tail), then 60 halvings: every bound within ``DDRM_TOL`` of it (the code's Newton
  iteration converges to it);
* **the betting sequence's exact root**: ``L_t = sup {v : sum_s log(1 + c_s (X_s / v - 1)) >=
  log(2 / alpha)}`` with the bets ``c_s`` from their definition, by 60 halvings: every bound at
  most the exact one (never past it: each of the code's tangents lies below ``log K``) and
  within ``BETTING_GAP`` of it;
* **merged shards** (2 to 4, cut round-robin or in blocks): ``how="product"``, the root of the
  shards' summed exponents (DDRM) or summed log-wealths (betting); ``how="union"``, the largest
  shard's root at ``log(2 K / alpha)``; the same checks;
* always: no NaN, bounds in ``[rmin, rmax]``, ``intersect=True`` the running max/min of
  ``intersect=False``.

``test_fuzz_sequences_quick`` (default ``make test``) runs 14 cases; ``test_fuzz_sequences_full``
(``make test-slow``, marked ``slow``) 1,050.
"""

from __future__ import annotations

import math
import traceback
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, localcontext

import numpy as np
import pytest

from elcvx.sequences import (BettingSequence, DDRMSequence, betting_sequence, ddrm_sequence,
                             merge_sequences)

REGIMES = ("discrete", "exponential", "pareto", "huge", "zeros", "ones", "tiny")
RANGES = ((0.0, 1.0), (-1.0, 1.0), (0.0, 5.0), (-10.0, -5.0))
DDRM_TOL = 1e-9  # the DDRM's Newton root against the bisection, on the unit scale
BETTING_GAP = 2e-4  # the betting bound's largest distance below the exact root (grid 200)
SLACK = 1e-12  # "at most the exact root": rounding of the reward map

# The DDRM's mixture, from its definition (docs/sequences.md): lambda_j = 1/2 * 1.6^-(j + 1/2),
# weights s 0.6 1.6^-(j + 1) with s = (1 + Li_2(0.95) / (0.95 zeta(2))) / 2, 40 terms.
TERMS = 40
LAM = 0.5 * 1.6 ** -(np.arange(TERMS) + 0.5)
LOGW = np.log(0.5 * (1 + 1.4406337969700393 / (0.95 * math.pi ** 2 / 6)) * 0.6
              * 1.6 ** -(np.arange(TERMS) + 1.0))


@dataclass
class SeqCase:
    seed: int
    regime: str
    w: np.ndarray
    r: np.ndarray
    rmin: float
    rmax: float
    level: float
    tail: str
    shards: int
    round_robin: bool

    def describe(self):
        return (f"seed={self.seed} regime={self.regime} n={self.w.size} level={self.level:.4f} "
                f"r=[{self.rmin}, {self.rmax}] tail={self.tail} shards={self.shards}"
                f"{' round-robin' if self.round_robin else ''}")

    @property
    def sides(self):
        """``X = w u`` and ``Y = w (1 - u)``, as the sequences form them."""
        u = np.clip((self.r - self.rmin) / (self.rmax - self.rmin), 0.0, 1.0)
        return self.w * u, self.w * (1.0 - u)


def draw(seed: int) -> SeqCase:
    rng = np.random.default_rng(seed)
    regime = REGIMES[seed % len(REGIMES)]
    n = int(rng.choice([rng.integers(1, 12), rng.integers(12, 80), rng.integers(80, 301)]))
    if regime == "discrete":
        w = rng.choice([0.0, 10 / 9, 10.0], n, p=[0.5, 0.45, 0.05])
    elif regime == "exponential":
        w = rng.exponential(1.0, n)
    elif regime == "pareto":
        w = rng.pareto(1.2, n) * 0.4
    elif regime == "huge":
        w = rng.exponential(1.0, n)
        where = rng.random(n) < min(0.3, 3 / n)
        w[where] = 10.0 ** rng.uniform(20, 300, int(where.sum()))
    elif regime == "zeros":
        w = np.zeros(n)
    elif regime == "ones":
        w = np.ones(n)
    else:
        w = rng.uniform(0, 2e-8, n)
    rmin, rmax = RANGES[int(rng.integers(len(RANGES)))]
    kind = rng.integers(3)
    u = (rng.random(n) if kind == 0 else (rng.random(n) < rng.random()).astype(float) if kind == 1
         else np.full(n, float(rng.choice([0.0, 0.5, 1.0]))))
    r = np.clip(rmin + (rmax - rmin) * u, rmin, rmax)
    level = float(rng.uniform(0.8, 0.99))
    return SeqCase(seed, regime, w, r, rmin, rmax, level, str(rng.choice(["exact", "binned"])),
                   int(rng.integers(2, 5)), bool(rng.random() < 0.5))


# ------------------------------------------------------------------------------------------------
# References, from the definitions
# ------------------------------------------------------------------------------------------------
def _ddrm_psi_gain(x, e, tail):
    """``lambda_j x - psi_j(e)`` for every j, in decimals with 60 digits more than ``x`` has
    before its point (``lambda x`` and ``psi`` cancel to a few hundred for ``x`` near 1e300)."""
    with localcontext() as ctx:
        ctx.prec = 60 + max(0, int(math.log10(max(abs(x), abs(e), 1.0))))
        dx = Decimal(float(x))
        de = Decimal(float(e))
        out = []
        for lam in LAM:
            dl = Decimal(float(lam))
            z = dl * de
            if e <= 0:
                psi = z * z / (2 * (1 - dl))
            elif e <= 1:
                psi = z * z / 2
            elif tail == "exact":
                psi = z - (1 + z).ln()
            else:  # z - log(1 + z) interpolated between 1.5^n <= e < 1.5^(n+1), less its gap
                x1 = Decimal(1.5 ** math.floor(math.log(e) / math.log(1.5)))
                a = (Decimal("1.5") * x1 - de) / (Decimal("0.5") * x1)
                z1, z2 = dl * x1, dl * Decimal("1.5") * x1
                gap = (dl * Decimal("0.5") * x1 / (1 + z2)) ** 2
                psi = (a * (z1 - (1 + z1).ln()) + (1 - a) * (z2 - (1 + z2).ln())
                       - a * (1 - a) * gap / 2)
            out.append(float(dl * dx - psi))
    return np.array(out)


def ddrm_exponents(x, tail):
    """``A_j`` after each row (``(rows, TERMS)``): the predictor ``min(1, (S + 1/2) / t)`` as the
    sequence computes it (a predictable choice), each row's ``lambda x - psi(e)`` exactly."""
    s, total, out = 0.0, np.zeros(TERMS), []
    for t, xt in enumerate(x, start=1):
        xhat = min(1.0, (s + 0.5) / t)
        total = total + _ddrm_psi_gain(xt, xt - xhat, tail)
        out.append(total.copy())
        s += xt
    return np.array(out).reshape(-1, TERMS)


def ddrm_roots(t, a, threshold):
    """``sup {mu in [0, 1] : log sum_j exp(LOGW_j + A_j - lambda_j t mu) >= threshold}`` per row,
    by 60 halvings: ``(lo, hi)``."""
    t, a = np.asarray(t, dtype=float), np.atleast_2d(a)

    def reaches(mu):
        e = LOGW + a - (t * mu)[:, None] * LAM
        top = e.max(axis=1)
        return top + np.log(np.exp(e - top[:, None]).sum(axis=1)) >= threshold

    lo, hi = np.zeros(t.size), np.ones(t.size)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = reaches(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    one, zero = reaches(np.ones(t.size)), reaches(np.zeros(t.size))
    return np.where(one, 1.0, np.where(zero, lo, 0.0)), np.where(one, 1.0, np.where(zero, hi, 0.0))


def betting_bets(x, threshold):
    """The predictable fractions: ``min(1/2, m sqrt(2 log(2/alpha) / (s2 t log(1 + t))))``."""
    s = q = 0.0
    out = []
    for t, xt in enumerate(x.tolist(), start=1):
        m = min(1.0, (0.5 + s) / t)
        s2 = (0.25 + q) / t
        out.append(min(0.5, m * math.sqrt(2 * threshold / (s2 * t * math.log(1 + t)))))
        s += xt
        d = xt - m
        q += d * d  # (inf past 1e154: the bet is then 0)
    return np.array(out)


def betting_log_wealth(x, c, v, every_t=True):
    """``sum_{s <= t} log(1 + c_s (x_s / v_t - 1))``: per t (``every_t``, ``v`` per t) or at the
    end (``v`` a vector of candidates)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        terms = np.log1p(c[None, :] * (x[None, :] / v[:, None] - 1))
    if every_t:
        terms = np.where(np.tri(x.size, dtype=bool), terms, 0.0)
    return terms.sum(axis=1)


def roots(log_wealth, size, threshold):
    """``sup {v in (0, 1] : log_wealth(v) >= threshold}`` (decreasing in v) by 60 halvings."""
    lo, hi = np.zeros(size), np.ones(size)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = log_wealth(mid) >= threshold
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    one = log_wealth(np.ones(size)) >= threshold
    return np.where(one, 1.0, lo), np.where(one, 1.0, hi)


# ------------------------------------------------------------------------------------------------
# Checks
# ------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    cases: Counter = field(default_factory=Counter)
    gaps: list = field(default_factory=list)  # the betting bound's distance below the root
    ddrm_err: list = field(default_factory=list)
    failures: list = field(default_factory=list)


def _unit(case, v):
    return (np.asarray(v, dtype=float) - case.rmin) / (case.rmax - case.rmin)


def _check(out, case, what, ok, detail=""):
    if not ok:
        out.failures.append((case.describe(), what, detail))


def check_chunks(case, out):
    rng = np.random.default_rng(case.seed + 1)
    n = case.w.size
    for kind, opts in ((BettingSequence, {}), (DDRMSequence, {"tail": case.tail})):
        for intersect in (True, False):
            make = lambda: kind(confidence_level=case.level, rmin=case.rmin, rmax=case.rmax,  # noqa: E731
                                intersect=intersect, **opts)
            whole = make().update(case.w, case.r)
            cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n + 1, 6)]))
            splits = [list(zip(cuts[:-1], cuts[1:]))]
            if n <= 120:
                splits.append([(i, i + 1) for i in range(n)])
            for pieces in splits:
                seq = make()
                parts = [seq.update(case.w[a:b], case.r[a:b]) for a, b in pieces]
                low = np.concatenate([p.low for p in parts])
                high = np.concatenate([p.high for p in parts])
                same = np.array_equal(low, whole.low) and np.array_equal(high, whole.high)
                _check(out, case, f"{kind.__name__} in {len(pieces)} chunks (intersect="
                       f"{intersect}) equals one call", same,
                       f"{np.sum(low != whole.low) + np.sum(high != whole.high)} bounds differ")
        both = [kind(confidence_level=case.level, rmin=case.rmin, rmax=case.rmax, intersect=i,
                     **opts).update(case.w, case.r) for i in (True, False)]
        _check(out, case, f"{kind.__name__}: intersect is the running max/min",
               np.array_equal(both[0].low, np.maximum.accumulate(both[1].low))
               and np.array_equal(both[0].high, np.minimum.accumulate(both[1].high)))
        for res in both:
            ok = (not (np.isnan(res.low).any() or np.isnan(res.high).any())
                  and np.all((case.rmin <= res.low) & (res.low <= case.rmax))
                  and np.all((case.rmin <= res.high) & (res.high <= case.rmax)))
            _check(out, case, f"{kind.__name__}: bounds in [rmin, rmax], no NaN", ok)


def check_ddrm(case, out):
    threshold = math.log(2 / (1 - case.level))
    res = ddrm_sequence(case.w, case.r, confidence_level=case.level, rmin=case.rmin,
                        rmax=case.rmax, intersect=False, tail=case.tail)
    for side, (x, got) in enumerate(zip(case.sides, (_unit(case, res.low), 1 - _unit(case, res.high)))):
        lo, hi = ddrm_roots(np.arange(1, x.size + 1), ddrm_exponents(x, case.tail), threshold)
        err = float(np.max(np.abs(got - lo))) if x.size else 0.0
        out.ddrm_err.append(err)
        _check(out, case, f"DDRM side {side}: the root", err <= DDRM_TOL,
               f"max error {err:.3g} at t = {int(np.argmax(np.abs(got - lo))) + 1}")


def check_betting(case, out):
    threshold = math.log(2 / (1 - case.level))
    res = betting_sequence(case.w, case.r, confidence_level=case.level, rmin=case.rmin,
                           rmax=case.rmax, intersect=False)
    for side, (x, got) in enumerate(zip(case.sides, (_unit(case, res.low), 1 - _unit(case, res.high)))):
        c = betting_bets(x, threshold)
        lo, hi = roots(lambda v: betting_log_wealth(x, c, v), x.size, threshold)
        _check(out, case, f"betting side {side}: never past the root", np.all(got <= hi + SLACK),
               f"{np.max(got - hi):.3g} past it")
        gap = float(np.max(lo - got))
        out.gaps.append(gap)
        _check(out, case, f"betting side {side}: within {BETTING_GAP:g} of the root",
               gap <= BETTING_GAP, f"gap {gap:.3g} at t = {int(np.argmax(lo - got)) + 1}")


def _shards(case):
    n, k = case.w.size, case.shards
    if case.round_robin:
        return [np.arange(i, n, k) for i in range(k)]
    cuts = np.linspace(0, n, k + 1).astype(int)
    return [np.arange(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


def check_merges(case, out):
    threshold = math.log(2 / (1 - case.level))
    shards = _shards(case)
    k = len(shards)
    sides = case.sides
    for kind, opts in ((BettingSequence, {}), (DDRMSequence, {"tail": case.tail})):
        seqs = []
        for rows in shards:
            seq = kind(confidence_level=case.level, rmin=case.rmin, rmax=case.rmax, **opts)
            seq.update(case.w[rows], case.r[rows])
            seqs.append(seq)
        for how in ("product", "union"):
            got = merge_sequences(seqs, how=how)
            got = (_unit(case, got.low), 1 - _unit(case, got.high))
            for side in (0, 1):
                parts = [sides[side][rows] for rows in shards]
                if kind is DDRMSequence:
                    ends = [(p.size, ddrm_exponents(p, case.tail)[-1] if p.size else np.zeros(TERMS))
                            for p in parts]
                    if how == "product":
                        lo, hi = ddrm_roots([sum(t for t, _ in ends)], sum(a for _, a in ends),
                                            threshold)
                    else:
                        pairs = [ddrm_roots([t], a, threshold + math.log(k)) for t, a in ends]
                        lo, hi = max(p[0][0] for p in pairs), max(p[1][0] for p in pairs)
                    err = float(abs(got[side] - np.max(lo)))
                    _check(out, case, f"DDRM {how} merge side {side}: the root", err <= DDRM_TOL,
                           f"error {err:.3g}")
                    continue
                bets = [betting_bets(p, threshold) for p in parts]
                if how == "product":
                    lo, hi = roots(lambda v: sum(betting_log_wealth(p, c, v, every_t=False)
                                                 for p, c in zip(parts, bets)), 1, threshold)
                    lo, hi = lo[0], hi[0]
                else:
                    each = [roots(lambda v, p=p, c=c: betting_log_wealth(p, c, v, every_t=False),
                                  1, threshold + math.log(k)) for p, c in zip(parts, bets)]
                    lo, hi = max(e[0][0] for e in each), max(e[1][0] for e in each)
                _check(out, case, f"betting {how} merge side {side}: never past the root",
                       got[side] <= hi + SLACK, f"{got[side] - hi:.3g} past it")
                _check(out, case, f"betting {how} merge side {side}: near the root",
                       lo - got[side] <= BETTING_GAP, f"gap {lo - got[side]:.3g}")


CHECKS = (check_chunks, check_ddrm, check_betting, check_merges)


def fuzz(seeds) -> Outcome:
    out = Outcome()
    for seed in seeds:
        case = draw(seed)
        for check in CHECKS:
            try:
                check(case, out)
            except Exception:  # noqa: BLE001 (collected, reported at the end)
                out.failures.append((case.describe(), check.__name__, traceback.format_exc(limit=4)))
        out.cases[case.regime] += 1
    return out


def assert_passed(out: Outcome, cases: int):
    print(f"\nsequences: {sum(out.cases.values())} cases {dict(out.cases)}; betting bound below "
          f"the exact root by at most {max(out.gaps):.3g} (90% within "
          f"{np.percentile(out.gaps, 90):.3g}); DDRM within {max(out.ddrm_err):.3g} of its root; "
          f"failures {len(out.failures)}")
    report = "\n\n".join(" | ".join(map(str, f)) for f in out.failures[:20])
    assert sum(out.cases.values()) == cases
    assert not out.failures, f"{len(out.failures)} failures:\n{report}"


def test_fuzz_sequences_quick():
    """14 cases (2 per regime): part of the default ``make test``."""
    assert_passed(fuzz(range(300_000, 300_014)), 14)


@pytest.mark.slow
def test_fuzz_sequences_full():
    """1,050 cases (150 per regime)."""
    assert_passed(fuzz(range(1_050)), 1_050)


def test_the_checks_can_fail(monkeypatch):
    # The references are not vacuous: DDRM bounds raised by 1e-8, betting bounds raised by 2e-4
    # (the grid's tangents replaced by something past the root) and DDRM exponents off by 1e-6
    # each fail.
    from elcvx.sequences import betting as _betting
    from elcvx.sequences import ddrm as _ddrm

    case = next(c for c in map(draw, range(300_000, 300_100)) if c.regime == "exponential"
                and c.w.size > 20)
    out = Outcome()
    check_ddrm(case, out)
    check_betting(case, out)
    assert not out.failures
    real_ddrm, real_betting = _ddrm.lower_bounds, _betting.bound
    monkeypatch.setattr(_ddrm, "lower_bounds", lambda *a: np.minimum(real_ddrm(*a) + 1e-8, 1.0))
    monkeypatch.setattr(_betting, "bound", lambda *a: np.minimum(real_betting(*a) + 2e-4, 1.0))
    check_ddrm(case, out)
    check_betting(case, out)
    failed = {what for _, what, _ in out.failures}
    assert {"DDRM side 0: the root", "betting side 0: never past the root"} <= failed
    x = case.sides[0]
    threshold = math.log(2 / (1 - case.level))
    a = ddrm_exponents(x, case.tail)
    lo, _ = ddrm_roots(np.arange(1, x.size + 1), a, threshold)
    a += 1e-6
    moved, _ = ddrm_roots(np.arange(1, x.size + 1), a, threshold)
    assert np.max(np.abs(moved - lo)) > DDRM_TOL
