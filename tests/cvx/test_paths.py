"""The fast path against the cvxpy path: estimate, both bounds and the profile statistic.

The fast path solves the low-dimensional duals by an active-set Newton method
(elcvx/fast.py); the cvxpy path declares the programs of elcvx.programs, solves them with
Clarabel and refines Clarabel's dual point by a few iterations of that method, which must end
certified (so a wrong program is caught here only when Clarabel's point is far from the
optimum: tests/cvx/test_clarabel_unpolished.py compares Clarabel's own objective). Agreement is required to ``elcvx.testing.AGREEMENT`` (1e-6) of the
reward range, over 50 samples drawn by hypothesis with a fixed seed, edge cases included (200 in
the slow suite, ``make test-slow``).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import elcvx
from elcvx import Sample
from elcvx.engines import blocks
from elcvx import fast
from elcvx.testing import assert_agree

WMAX = [2.0, 10.0, 1e3, 1e6, np.inf]


@st.composite
def samples(draw):
    n = draw(st.integers(1, 40))
    wmax = draw(st.sampled_from(WMAX))
    wmin = draw(st.sampled_from([0.0, 0.0, 0.25]))
    top = wmax if np.isfinite(wmax) else 30.0
    pool = draw(st.sampled_from(["greedy", "continuous", "ones", "extremes", "zeros", "mixed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if pool == "greedy":  # epsilon-greedy-like: few distinct weights, one large
        w = rng.choice([wmin, 2.0, top], n, p=[0.45, 0.5, 0.05])
    elif pool == "continuous":
        w = rng.uniform(wmin, min(top, 20.0), n)
    elif pool == "ones":  # sum w = N exactly: beta* = 0
        w = np.ones(n)
    elif pool == "extremes":  # wmin and/or wmax observed
        w = rng.choice([wmin, top], n)
    elif pool == "zeros":
        w = np.full(n, wmin)
    else:
        w = np.where(rng.random(n) < 0.5, wmin, rng.exponential(2.0, n)).clip(wmin, top)
    rmin, rmax = draw(st.sampled_from([(0.0, 1.0), (-1.0, 3.0)]))
    rewards = draw(st.sampled_from(["binary", "uniform", "all_max", "all_min"]))
    r = {"binary": rng.integers(0, 2, n).astype(float), "uniform": rng.random(n),
         "all_max": np.ones(n), "all_min": np.zeros(n)}[rewards]
    r = rmin + (rmax - rmin) * r
    counts = rng.integers(1, 4, n).astype(float) if draw(st.booleans()) else None
    return Sample(w, r, counts=counts, wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)


def _settings(examples):
    return settings(max_examples=examples, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# Each property runs on 50 samples in the default suite and on 200 in the slow one (``make
# test-slow``): the same strategy, checks and tolerances.
@_settings(50)
@given(samples())
def test_fast_and_cvxpy_paths_agree(sample):
    check_paths_agree(sample)


@pytest.mark.slow
@_settings(200)
@given(samples())
def test_fast_and_cvxpy_paths_agree_on_200_samples(sample):
    check_paths_agree(sample)


def check_paths_agree(sample):
    scale = sample.rmax - sample.rmin
    fast_est = elcvx.estimate(sample, method="fast")
    cvx_est = elcvx.estimate(sample, method="cvxpy")
    assert cvx_est.method == "cvxpy" and fast_est.method == "fast"
    assert_agree(cvx_est.value_range, fast_est.value_range, scale=scale, what="value range")
    assert_agree(cvx_est.loglik, fast_est.loglik, scale=1.0, what="l*_mle")
    fast_ci = elcvx.interval(sample, method="fast")
    cvx_ci = elcvx.interval(sample, method="cvxpy")
    assert_agree([cvx_ci.low, cvx_ci.high], [fast_ci.low, fast_ci.high], scale=scale, what="interval")
    # The profile statistic between the bounds and the estimate (finite there).
    v = [0.5 * (fast_ci.low + fast_est.value_range.low), 0.5 * (fast_est.value_range.high + fast_ci.high)]
    fast_p = elcvx.profile(sample, v, method="fast")
    cvx_p = elcvx.profile(sample, v, method="cvxpy")
    assert_agree(cvx_p.statistic, fast_p.statistic, scale=1.0, what="profile statistic")


@pytest.mark.parametrize("seed", [pytest.param(0, marks=pytest.mark.slow),
                                  pytest.param(1, marks=pytest.mark.slow), 2])
def test_paths_agree_on_larger_samples(seed):
    # N = 2000 with continuous weights up to 1e3 and counts: what a user's log looks like.
    rng = np.random.default_rng(seed)
    n = 2000
    w = np.where(rng.random(n) < 0.3, rng.uniform(0, 3, n), 0.0)
    w[rng.integers(0, n, 3)] = 1e3
    s = Sample(w, rng.random(n), counts=rng.integers(1, 3, n).astype(float), wmax=1e3)
    f, c = elcvx.interval(s, method="fast"), elcvx.interval(s, method="cvxpy")
    assert_agree([c.low, c.high], [f.low, f.high], what="interval")
    # and the bounds' duals describe the same primal solution (q on every row)
    assert_agree(c.lower.q * s.n, f.lower.q * s.n, scale=1.0, tol=1e-5, what="lower bound q")
    # the same with passes over blocks of 7 rows (the fast path's block loops, remainders included)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks, "BLOCK", 7)
        s7 = Sample(s.w, s.r, counts=s.counts, wmax=s.wmax)  # a fresh sample: the MLE is cached
        f7 = elcvx.interval(s7, method="fast")
    assert_agree([c.low, c.high], [f7.low, f7.high], what="interval, blocks of 7 rows")


@_settings(50)
@given(samples())
def test_fast_path_does_not_depend_on_its_block_size(sample):
    check_block_size(sample)


@pytest.mark.slow
@_settings(200)
@given(samples())
def test_fast_path_does_not_depend_on_its_block_size_on_200_samples(sample):
    check_block_size(sample)


def check_block_size(sample):
    """Blocks of 3 rows and a subsample warm start above 8 rows against one block: same numbers
    (estimate, interval, profile statistic).

    The reference is the one-block computation (every sample here has N <= 40 < the default
    block), itself held against the cvxpy path by the test above.
    """
    est, ci = elcvx.estimate(sample, method="fast"), elcvx.interval(sample, method="fast")
    v = [0.5 * (ci.low + est.value_range.low), 0.5 * (est.value_range.high + ci.high)]
    prof = elcvx.profile(sample, v, method="fast")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks, "BLOCK", 3)
        fresh = Sample(sample.w, sample.r, counts=sample.counts, wmin=sample.wmin, wmax=sample.wmax,
                       rmin=sample.rmin, rmax=sample.rmax)
        est3, ci3 = elcvx.estimate(fresh, method="fast"), elcvx.interval(fresh, method="fast")
        prof3 = elcvx.profile(fresh, v, method="fast")
    scale = sample.rmax - sample.rmin
    assert_agree(est.value_range, est3.value_range, scale=scale, tol=1e-9, what="value range")
    assert_agree(est.loglik, est3.loglik, scale=1.0, tol=1e-9, what="l*_mle")
    assert_agree([ci.low, ci.high], [ci3.low, ci3.high], scale=scale, tol=1e-9, what="interval")
    assert_agree(prof.statistic, prof3.statistic, scale=1.0, tol=1e-9, what="profile statistic")
    # each bound's q is its primal solution: E_Q[w u] over the sample (the zero-reward atoms add
    # nothing) is the bound on the unit scale. q comes from the dual point, which a gap of 1e-13
    # fixes only to about its square root, so the package's agreement bar (1e-6), not 1e-13; a q
    # left from another point (a rejected line-search trial) would be off by O(1).
    u = (sample.r - sample.rmin) / scale
    for side, res, uu in (("lower", ci.lower, u), ("upper", ci.upper, 1.0 - u)):
        if res is None:
            continue
        value_u = (res.value - sample.rmin) / scale
        value_u = value_u if side == "lower" else 1.0 - value_u
        assert_agree(float(np.sum(sample.c * res.q * sample.w * uu)), value_u, scale=1.0,
                     what=f"{side} bound from its q")


def test_weights_next_to_both_edges_with_zero_reward():
    """Found in the learning experiments (dataset 1481, epsilon = 0.1, run 37): weights down to
    1e-139 next to wmin = 0 and 179.99999 next to wmax = 180, with w u = 0, made the cone's faces
    log barriers in all but name; the fast path landed on one and stalled ("line search
    failed"), and 1/a^2 overflowed. The reference is the cvxpy path."""
    n = 98
    w = np.concatenate([10.0 ** np.linspace(-139, -4, n), [179.99999, 0.0122]])
    u = np.concatenate([(np.arange(n) % 7 == 0).astype(float), [0.0, 1.0]])
    s = Sample(w, u, wmax=180.0)
    fast, cvx = elcvx.interval(s, method="fast"), elcvx.interval(s, method="cvxpy")
    assert fast.method == "fast"
    assert_agree([cvx.low, cvx.high], [fast.low, fast.high], what="interval")
