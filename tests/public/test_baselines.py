"""The paper's baselines against hand calculations, textbook formulas and scipy."""

from __future__ import annotations


import numpy as np
import pytest
from scipy import stats

from elcvx import InvalidInputError, Sample
from elcvx import baselines as bl
from elcvx.testing import assert_agree

# The tiny sample of the docstrings: w = (0, 2, 2, 0.5), r = (0, 1, 0.5, 1), wmax = 10.
W = np.array([0.0, 2.0, 2.0, 0.5])
R = np.array([0.0, 1.0, 0.5, 1.0])


def tiny(**kw):
    return Sample(W, R, wmax=10, **kw)


def shifted():
    # The same data on the reward scale [-1, 3]: r' = -1 + 4 r.
    return Sample(W, -1 + 4 * R, wmax=10, rmin=-1, rmax=3)


# ------------------------------------------------------------------------------------------------
# Point estimates
# ------------------------------------------------------------------------------------------------
def test_ips_by_hand():
    # Hand calculation: (0*0 + 2*1 + 2*.5 + .5*1)/4 = 3.5/4.
    assert bl.ips(tiny()).value == 0.875
    # On [-1, 3]: rmin + mean(w (r - rmin)) = -1 + 4 * .875 = 2.5 (the unit-scale convention);
    # the textbook mean(w r') would be mean(w (-1 + 4 r)) = -1.125 + 3.5 = 2.375.
    assert bl.ips(shifted()).value == 2.5
    # Not clipped: one example with w = 10, r = 1 gives 10/1 on [0, 1].
    assert bl.ips(Sample([10.0], [1.0], wmax=10)).value == 10.0


def test_snips_by_hand():
    # Hand calculation: 3.5 / (0 + 2 + 2 + .5).
    assert_agree(bl.snips(tiny()).value, 3.5 / 4.5, tol=1e-15)
    assert_agree(bl.snips(shifted()).value, -1 + 4 * 3.5 / 4.5, tol=1e-15)


def test_snips_with_zero_weights_is_the_midpoint_never_nan():
    # 0/0: the documented convention is the reward midpoint, with a note.
    res = bl.snips(Sample([0.0, 0.0], [1.0, 0.0], wmax=5, rmin=-1.0, rmax=2.0))
    assert res.value == 0.5 and "undefined" in res.note


def test_clipped_dr_by_hand():
    # Hand calculation: .5 + (0*(0-.5) + 2*(1-.5) + 2*(.5-.5) + .5*(1-.5))/4 = .5 + 1.25/4.
    assert bl.clipped_dr(tiny()).value == 0.8125
    # rho = 0 is IPS: .875; rho = 1: 1 + (0*(-1) + 2*0 + 2*(-.5) + .5*0)/4 = .75.
    assert bl.clipped_dr(tiny(), rho=0.0).value == 0.875
    assert bl.clipped_dr(tiny(), rho=1.0).value == 0.75
    # Clipped at the top: .5 + 10 (1 - .5)/1 = 5.5 -> 1; at the bottom: .5 + 10 (0 - .5) -> 0.
    assert bl.clipped_dr(Sample([10.0], [1.0], wmax=10)).value == 1.0
    assert bl.clipped_dr(Sample([10.0], [0.0], wmax=10)).value == 0.0
    # On [-1, 3] the midpoint is 1: -1 + 4 * .8125.
    assert bl.clipped_dr(shifted()).value == -1 + 4 * 0.8125


def _beta_star_by_bisection(w, c, wmin, wmax):
    """beta* = argmax sum c log(1 + beta (w - 1)) on [-1/(wmax - 1), 1/(1 - wmin)] (paper
    section 3.2): bisection on the decreasing derivative sum c (w - 1)/(1 + beta (w - 1))."""
    lo = 0.0 if np.isinf(wmax) else -1.0 / (wmax - 1.0)
    hi = 1.0 / (1.0 - wmin)
    deriv = lambda b: np.sum(c * (w - 1) / (1 + b * (w - 1)))  # noqa: E731
    # the derivative is +inf / -inf at an end where 1 + beta (w - 1) = 0 for an observed w
    eps = 1e-15
    a, b = lo + eps * max(1, abs(lo)), hi - eps * max(1, abs(hi))
    if deriv(a) <= 0:
        return a
    if deriv(b) >= 0:
        return b
    for _ in range(200):
        m = 0.5 * (a + b)
        a, b = (m, b) if deriv(m) > 0 else (a, m)
    return 0.5 * (a + b)


@pytest.mark.parametrize("w, r, counts, wmin, wmax", [
    (W, R, None, 0.0, 10.0),                                       # wmin observed
    ([0.5, 0.5, 3.0, 1.0, 0.2], [1.0, 0.0, 0.3, 0.9, 0.4], [1, 2, 1, 3, 1], 0.0, 10.0),  # neither
    ([0.1, 0.3, 0.2, 4.0], [0.0, 1.0, 0.5, 0.5], None, 0.0, 20.0),  # mean(w) < 1
    ([0.1, 0.3, 0.2, 4.0], [0.0, 1.0, 0.5, 0.5], [2, 1, 1, 1], 0.0, np.inf),
])
def test_emp_against_independent_mle(w, r, counts, wmin, wmax):
    # Expected value: Q = 1/(N (1 + beta* (w - 1))) with beta* by the bisection above, then
    # sum c Q w r / sum c Q (the paper's section 3.2 formula for EMP).
    s = Sample(w, r, counts=counts, wmin=wmin, wmax=wmax)
    beta = _beta_star_by_bisection(s.w, s.c, wmin, wmax)
    q = 1.0 / (s.n * (1 + beta * (s.w - 1)))
    expected = np.sum(s.c * q * s.w * s.u) / np.sum(s.c * q)
    assert_agree(bl.emp(s).value, expected, tol=1e-7, what="EMP")


def test_emp_can_exceed_the_range():
    # Hand calculation: w = (2, 2), r = (1, 1), wmin = 0: beta* = 1/(1 - wmin) = 1 (the derivative
    # 2/(1 + beta) is positive throughout), Q = 1/(2 * 2) each, sum c Q = 1/2, sum c Q w r = 1,
    # so EMP = 2 (the extra atom at wmin = 0 holds half the mass and none of the w r).
    assert_agree(bl.emp(Sample([2.0, 2.0], [1.0, 1.0], wmax=10)).value, 2.0, tol=1e-9)


# ------------------------------------------------------------------------------------------------
# Intervals
# ------------------------------------------------------------------------------------------------
def test_gaussian_by_textbook_formula():
    # Textbook: mean(x) -+ z_{.975} std(x, ddof=1)/sqrt(N) with x = w r (numpy, scipy.stats.norm).
    x = W * R
    for level, ddof in ((0.95, 1), (0.5, 1), (0.5, 0)):
        half = stats.norm.ppf(0.5 + level / 2) * np.std(x, ddof=ddof) / 2
        res = bl.gaussian_interval(tiny(), confidence_level=level, ddof=ddof)
        assert_agree([res.low, res.high], np.clip([x.mean() - half, x.mean() + half], 0, 1),
                     tol=1e-14, what=f"level={level} ddof={ddof}")
        assert res.confidence_level == level and res.method == "gaussian"
        assert res.center == 0.875
    low, high = bl.gaussian_interval(tiny())  # unpacks as (low, high)
    res = bl.gaussian_interval(tiny())
    assert (low, high) == (res.low, res.high) and res[0] == low and len(res) == 2


def test_gaussian_on_user_scale():
    # The interval on [-1, 3] is the unit-scale one mapped by v -> -1 + 4 v (same data).
    a, b = bl.gaussian_interval(tiny(), confidence_level=0.5), bl.gaussian_interval(shifted(), confidence_level=0.5)
    assert_agree([b.low, b.high], [-1 + 4 * a.low, -1 + 4 * a.high], tol=1e-14)


def test_gaussian_single_example_is_whole_range():
    res = bl.gaussian_interval(Sample([2.0], [0.5], wmax=4, rmin=-1, rmax=1))
    assert (res.low, res.high) == (-1.0, 1.0) and "whole range" in res.note


def test_gaussian_fractional_counts_are_frequency_weights():
    # Textbook weighted variance with frequency weights: sum c (x - xbar)^2 / (sum c - 1).
    c = np.array([0.5, 2.5, 1.0, 3.0])
    x = W * R
    xbar = np.sum(c * x) / c.sum()
    s2 = np.sum(c * (x - xbar) ** 2) / (c.sum() - 1)
    half = stats.norm.ppf(0.9) * np.sqrt(s2 / c.sum())
    res = bl.gaussian_interval(Sample(W, R, counts=c, wmax=10), confidence_level=0.8)
    assert_agree([res.low, res.high], np.clip([xbar - half, xbar + half], 0, 1), tol=1e-14)


def test_clopper_pearson_matches_scipy_binomtest_for_integer_successes():
    # w in {0, wmax}, r in {0, 1}: y = w r / wmax is 0 or 1 and k is an integer; the expected
    # interval is scipy.stats.binomtest(k, n).proportion_ci(method="exact") times wmax, clipped.
    wmax = 4.0
    w = np.array([0, 4, 4, 4, 0, 4, 0, 0, 4, 0, 0, 0] * 3, dtype=float)
    r = np.array([0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0] * 3, dtype=float)
    s = Sample(w, r, wmax=wmax)
    k = int(np.sum(w * r / wmax))
    for level in (0.5, 0.9, 0.95):
        ci = stats.binomtest(k, w.size).proportion_ci(confidence_level=level, method="exact")
        res = bl.clopper_pearson_interval(s, confidence_level=level)
        assert_agree([res.low, res.high], np.clip([wmax * ci.low, wmax * ci.high], 0, 1),
                     tol=1e-12, what=f"level={level}")
        assert res.confidence_level == level


def test_clopper_pearson_counts_match_integer_trials():
    # counts as integers: the same binomtest with n = sum of counts.
    s = Sample([0.0, 4.0, 4.0], [0.0, 1.0, 0.0], counts=[5, 3, 2], wmax=4)
    ci = stats.binomtest(3, 10).proportion_ci(confidence_level=0.95, method="exact")
    res = bl.clopper_pearson_interval(s)
    assert_agree([res.low, res.high], np.clip([4 * ci.low, 4 * ci.high], 0, 1), tol=1e-12)


def test_clopper_pearson_fractional_successes_lie_between_integer_neighbours():
    # k = sum w r / wmax = (5 + 5 + 3)/5 = 2.6 successes in n = 100: the bounds are increasing in
    # k, so they lie strictly between scipy's exact intervals at k = 2 and k = 3 (binomtest).
    wmax = 5.0
    w = np.concatenate([[5.0, 5.0, 3.0], np.full(97, 0.5)])
    r = np.concatenate([[1.0, 1.0, 1.0], np.zeros(97)])
    s = Sample(w, r, wmax=wmax)
    for level in (0.3, 0.95):
        ci2 = stats.binomtest(2, 100).proportion_ci(confidence_level=level, method="exact")
        ci3 = stats.binomtest(3, 100).proportion_ci(confidence_level=level, method="exact")
        res = bl.clopper_pearson_interval(s, confidence_level=level)
        assert wmax * ci2.low < res.low < wmax * ci3.low
        assert wmax * ci2.high < res.high < wmax * ci3.high < 1.0


def test_clopper_pearson_extremes():
    # k = 0 (no reward): scipy gives low = 0 exactly; wmax = inf: whole range.
    res = bl.clopper_pearson_interval(Sample([1.0, 2.0], [0.0, 0.0], wmax=4))
    ci = stats.binomtest(0, 2).proportion_ci(method="exact")
    assert res.low == 0.0 and res.high == pytest.approx(min(1.0, 4 * ci.high), rel=1e-12)
    res = bl.clopper_pearson_interval(Sample([1.0, 2.0], [1.0, 1.0], wmax=np.inf, rmin=-2, rmax=2))
    assert (res.low, res.high) == (-2.0, 2.0) and "wmax = inf" in res.note


# ------------------------------------------------------------------------------------------------
# Counts, bad input
# ------------------------------------------------------------------------------------------------
ALL = [bl.ips, bl.snips, bl.clipped_dr, bl.emp, bl.gaussian_interval, bl.clopper_pearson_interval]


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.__name__)
def test_counts_equal_duplicated_rows(fn):
    w, r = np.array([0.3, 2.0, 5.0, 0.0, 1.0]), np.array([0.1, 0.9, 0.6, 1.0, 0.2])
    reps = [3, 1, 2, 1, 4]
    dup = Sample(np.repeat(w, reps), np.repeat(r, reps), wmax=6)
    cnt = Sample(w, r, counts=reps, wmax=6)
    a, b = fn(dup), fn(cnt)
    got = [a.value] if hasattr(a, "value") else [a.low, a.high]
    want = [b.value] if hasattr(b, "value") else [b.low, b.high]
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("fn", [bl.gaussian_interval, bl.clopper_pearson_interval],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1, float("nan"), "high"])
def test_bad_confidence_level(fn, level):
    with pytest.raises(InvalidInputError, match="confidence_level"):
        fn(tiny(), confidence_level=level)


def test_bad_options():
    with pytest.raises(InvalidInputError, match="ddof"):
        bl.gaussian_interval(tiny(), ddof=-1)
    with pytest.raises(InvalidInputError, match="rho"):
        bl.clipped_dr(tiny(), rho=1.5)
    for fn in ALL:
        with pytest.raises(InvalidInputError, match="sample"):
            fn(np.ones(3))
