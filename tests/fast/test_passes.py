"""The fast path's passes (elcvx/blocks.py, elcvx/kernels.py) and the passes they save.

* sums of logs taken by products of 16 terms agree with the logs one by one;
* the MLE with one feature starts from its gradient's series and ends at the same point as
  from the origin, at large N with one pass after the origin's instead of three;
* the bounds start from sums the MLE's passes computed (for both sides), and end where they
  end with a start pass of their own;
* the likelihood reported is ``sum log1p(beta (w - 1))`` to rounding.
"""

import math

import numpy as np
import pytest

import elcvx
from elcvx.engines import blocks
from elcvx import fast, verdict
from elcvx.fast import bound, solve
from elcvx.calibration import quantile
from elcvx.testing import assert_agree

CHI2_95 = quantile("chi2", 0.95, 1e6)


def continuous(n, seed=0):
    """Weights 1/p on 40% of the rows (p uniform in [0.1, 1]), E[w] about 1: at large N the
    MLE is near the origin (bench_core.py's sample)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 1.0, n)
    w = np.where(rng.random(n) < 0.4, 1.0 / p, 0.0)
    return elcvx.Sample(w, rng.random(n), wmax=10.0)


@pytest.mark.parametrize("n", [1, 7, 16, 17, 1000, 10_000])
@pytest.mark.parametrize("kind", ["near one", "spread", "large", "out of range", "counts"])
def test_log_sum_equals_the_sum_of_the_logs(n, kind):
    rng = np.random.default_rng(n)
    a = {"near one": 1.0 + rng.normal(0, 1e-3, n), "spread": np.exp(rng.normal(0, 5, n)),
         "large": rng.uniform(900, 9000, n), "out of range": np.exp(rng.normal(0, 60, n)),
         "counts": rng.uniform(0.5, 2.0, n)}[kind]
    c = rng.integers(1, 4, n).astype(float) if kind == "counts" else None
    logs = np.log(a) * (1.0 if c is None else c)
    got = blocks.log_sum(c, a, np.empty(n))
    # each product of 16 terms rounds at most 16 times: 1e-15 per term on the log scale
    assert abs(got - math.fsum(logs)) <= 1e-15 * (np.abs(logs).sum() + 16 * n)


def test_the_series_start_is_the_mle_two_passes_sooner(monkeypatch):
    s = continuous(200_000)
    series = fast.mle(s, ())
    monkeypatch.setattr(solve, "_series_start", lambda oracle, state, A, h, x0: x0)
    newton = fast.mle(s, ())
    assert series.status == newton.status == "optimal"
    assert series.work[0] == 2 and newton.work[0] == 4  # the origin's pass, then 1 (3) at x
    # each stops where its gradient is below kkt_tol = 1e-11 (elcvx/fast/solve.py): beta* to
    # 1e-11 over the curvature (about 3 here), whichever the path
    assert_agree(series.beta, newton.beta, tol=1e-11, what="beta*")
    assert_agree(series.loglik, newton.loglik, tol=1e-12, what="l*")
    assert_agree(series.q * s.n, newton.q * s.n, tol=1e-12, what="q")


def test_the_likelihood_is_the_sum_of_log1p():
    s = continuous(100_000, seed=3)
    sol = fast.mle(s, ())
    terms = np.log1p(sol.beta * (s.w - 1.0))
    assert abs(sol.loglik - math.fsum(terms)) <= 1e-13 * (1.0 + np.abs(terms).sum())
    assert_agree(np.sum(np.log(sol.q)), -s.n * np.log(s.n) - sol.loglik, tol=1e-9)


@pytest.mark.parametrize("side", ["lower", "upper"])
def test_the_bounds_start_from_the_mles_sums(side):
    s = continuous(100_000, seed=1)
    mle = fast.mle(s, ())
    carried = mle.sums[-1]
    assert isinstance(carried, verdict.AtTheMLE) and carried.start is not None
    own = mle._replace(sums=mle.sums[:3])  # no sums carried: the bound makes its own start pass
    a = fast.lower_bound(s, (), mle.loglik, CHI2_95, side=side, mle_sol=mle)
    b = fast.lower_bound(s, (), mle.loglik, CHI2_95, side=side, mle_sol=own)
    assert a.status == b.status == "optimal"
    assert a.work[0] == b.work[0] - 1
    assert_agree(a.value, b.value, tol=1e-12, what=f"{side} bound")
    assert_agree(a.q * s.n, b.q * s.n, tol=1e-6, what=f"{side} bound's q")


def test_a_sample_keeps_the_span_of_its_weights_and_passes_agree_without_it():
    s = continuous(50_000, seed=2)
    assert s._w_span == (s.w.min(), s.w.max())
    with_span = elcvx.interval(s, method="fast")
    bare = continuous(50_000, seed=2)
    object.__setattr__(bare, "_w_span", None)  # each block finds its own least and largest
    without = elcvx.interval(bare, method="fast")
    assert_agree([with_span.low, with_span.high], [without.low, without.high], tol=1e-13,
                 what="interval")


@pytest.mark.slow
def test_a_bound_at_ten_million_rows_is_certified_in_two_passes(monkeypatch):
    # bench_core.py's log at N = 1e7: each bound's value (about 0.5) is the difference of terms
    # of about 900, so at f's rounding the bound's correction loses 5e-6 of likelihood (its
    # rounding over kappa). Made up by mixing with the MLE, that cost 2.5e-6 times the range of
    # E_Q[h] (one more Newton step to certify each bound), and costs 1e-9 times the estimate's
    # distance to the bound: the MLE's 2 passes, each bound's start and 1 more.
    s = continuous(10_000_000, seed=0)
    monkeypatch.setattr(bound, "_barrier_from", lambda oracle, A, h, x: (x, math.nan, "skipped"))
    ci = elcvx.interval(s, method="fast")
    assert ci.status == "optimal" and ci.work[0] <= 2 + 2 * 2
    assert max(ci.lower.error, ci.upper.error) <= 1e-8
