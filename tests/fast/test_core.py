"""The EL estimate, interval and profile on the fast path: hand-checkable cases and invariants.

Cross-validation against the cvxpy path is in tests/cvx/test_paths.py.
"""

import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import Sample
from elcvx.testing import assert_agree


def reference_beta(w, c, wmin, wmax):
    """beta* by plain bisection on the derivative (independent of elcvx's Newton iteration)."""
    d = np.asarray(w, float) - 1.0
    c = np.ones_like(d) if c is None else np.asarray(c, float)
    low = 0.0 if np.isinf(wmax) else -1.0 / (wmax - 1.0)
    high = 1.0 / (1.0 - wmin)

    def g(b):
        den = 1.0 + b * d
        if np.any(den <= 0):
            return -np.inf if b > 0 else np.inf
        return float(np.sum(c * d / den))

    if g(0.0) == 0:
        return 0.0
    a, b = (0.0, high) if g(0.0) > 0 else (low, 0.0)
    if g(0.0) > 0 and g(high) >= 0:
        return high
    if g(0.0) < 0 and g(low) <= 0:
        return low
    for _ in range(200):
        mid = 0.5 * (a + b)
        if g(mid) > 0:
            a = mid
        else:
            b = mid
    return 0.5 * (a + b)


TINY = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)


def test_estimate_matches_closed_form_with_reference_beta():
    beta = reference_beta(TINY.w, None, 0.0, 10.0)
    # eq. (vhatmle) with rho = 1/2, evaluated directly.
    rho = 0.5
    expected = rho + np.mean(TINY.w * (TINY.r - rho) / (1 + beta * (TINY.w - 1)))
    res = elcvx.estimate(TINY, method="fast")
    assert_agree(res.beta, beta, tol=1e-12, what="beta*")
    assert_agree(res.value, expected, tol=1e-12, what="estimate")
    # Both extreme weights are not observed but the root is interior: a point estimate.
    assert res.value_range.low == res.value_range.high == res.value
    assert res.w_ex is None and res.mass_ex == 0.0
    # sum_n log q_n = -N log N - l*_mle (docs/primal-dual.md, section 1).
    assert_agree(np.sum(np.log(res.q)), -4 * np.log(4) - res.loglik, tol=1e-12)


def test_sum_of_weights_equal_to_n_gives_ips():
    # sum w = N: beta* = 0 (paper, after eq. (betastar)) and the estimate is IPS for every rho.
    s = Sample([0.5, 1.5, 1.0], [0.0, 1.0, 0.3], wmax=4)
    ips = (0.5 * 0 + 1.5 * 1 + 1.0 * 0.3) / 3
    for rho in (0.0, 0.5, 1.0):
        res = elcvx.estimate(s, rho=rho)
        assert res.beta == 0.0
        assert_agree(res.value, ips, tol=1e-14)
    assert_agree(res.q, np.full(3, 1 / 3), tol=1e-14)


def test_all_weights_zero():
    # beta* = -1/(wmax-1) (the derivative -sum 1/(1-beta) is negative everywhere); the extra
    # atom at wmax carries mass 1/wmax and all the importance-weighted mass: V(rho) = rho.
    s = Sample(np.zeros(5), np.ones(5), wmax=8)
    res = elcvx.estimate(s, rho=0.25)
    assert_agree(res.beta, -1 / 7, tol=1e-14)
    assert res.w_ex == 8.0
    assert_agree(res.mass_ex, 1 / 8, tol=1e-12)
    assert_agree(res.value, 0.25, tol=1e-12)
    assert res.value_range == (0.0, 1.0)
    ci = elcvx.interval(s)
    assert (ci.low, ci.high) == (0.0, 1.0)


def test_wmax_infinite_and_weights_below_one():
    # wmax = inf forbids beta < 0, so beta* = 0 and the atom at infinity takes the missing
    # importance-weighted mass 1 - mean(w): V(rho) = IPS + rho (1 - mean(w)).
    s = Sample([0.5, 0.2, 0.8], [1.0, 0.0, 1.0], wmax=np.inf)
    res = elcvx.estimate(s, rho=1.0)
    ips = (0.5 + 0.8) / 3
    assert res.beta == 0.0
    assert_agree(res.value, ips + (1 - 0.5), tol=1e-14)
    assert_agree(res.value_range.low, ips, tol=1e-14)
    assert res.w_ex == np.inf and res.mass_ex == 0.0
    ci = elcvx.interval(s)
    assert 0.0 <= ci.low <= res.value_range.low <= res.value_range.high <= ci.high <= 1.0


def test_single_example():
    s = Sample([3.0], [1.0], wmax=10)
    res = elcvx.estimate(s)
    # N = 1, w = 3 > 1: beta* sits at 1/(1 - wmin) = 1 (derivative 2/(1+2 beta) > 0 throughout),
    # and the extra atom at wmin = 0 takes mass 1 - 1/3.
    assert res.beta == 1.0
    assert res.w_ex == 0.0
    assert_agree(res.mass_ex, 2 / 3, tol=1e-14)
    assert_agree(res.value, 1.0, tol=1e-14)  # q w r = (1/3)(3)(1) = 1; the atom has w = 0
    ci = elcvx.interval(s)
    assert 0.0 <= ci.low < 1.0 and ci.high == pytest.approx(1.0, abs=1e-12)


def test_all_rewards_at_rmax_lower_bound_below_rmax():
    # Section "The importance of E[w] = 1": the lower bound stays below rmax even if every
    # observed reward is rmax, because Q may put mass on the zero-reward atoms.
    rng = np.random.default_rng(0)
    w = rng.choice([0.0, 2.0, 20.0], size=50, p=[0.45, 0.5, 0.05])
    s = Sample(w, np.full(50, 5.0), wmax=20, rmin=-1.0, rmax=5.0)
    ci = elcvx.interval(s)
    assert -1.0 < ci.low < 5.0 - 1e-3
    assert ci.high == pytest.approx(5.0, abs=1e-9)
    s0 = s.with_rewards(np.full(50, -1.0))
    ci0 = elcvx.interval(s0)
    assert ci0.low == pytest.approx(-1.0, abs=1e-9) and -1.0 + 1e-3 < ci0.high < 5.0


def random_sample(rng, n, *, wmax=50.0, counts=False, rmin=0.0, rmax=1.0):
    w = rng.choice([0.0, 0.5, 2.0, wmax], size=n, p=[0.4, 0.3, 0.28, 0.02])
    w = np.where(rng.random(n) < 0.5, w, rng.uniform(0, wmax / 5, n))
    r = rng.uniform(rmin, rmax, n)
    c = rng.integers(1, 4, n).astype(float) if counts else None
    return Sample(w, r, counts=c, wmax=wmax, rmin=rmin, rmax=rmax)


@pytest.mark.parametrize("seed", range(6))
def test_interval_is_profile_level_set(seed):
    # The bounds solve one program each; bisection on the profile statistic finds the same set.
    rng = np.random.default_rng(seed)
    s = random_sample(rng, int(rng.integers(5, 200)), counts=seed % 2 == 1)
    ci = elcvx.interval(s, confidence_level=0.9)
    est = elcvx.estimate(s)
    q = stats.chi2.ppf(0.9, 1)

    def inside(v):
        return elcvx.profile(s, v).statistic[0] <= q

    def bisect(a, b):  # a inside, b outside
        for _ in range(60):
            m = 0.5 * (a + b)
            a, b = (m, b) if inside(m) else (a, m)
        return 0.5 * (a + b)

    low = bisect(est.value_range.low, 0.0) if not inside(0.0) else 0.0
    high = bisect(est.value_range.high, 1.0) if not inside(1.0) else 1.0
    assert_agree(ci.low, low, tol=1e-7, what="low")
    assert_agree(ci.high, high, tol=1e-7, what="high")
    # and the statistic at the bounds is the quantile (when the bound is interior)
    stat = elcvx.profile(s, [ci.low, ci.high]).statistic
    for b, st in zip((ci.low, ci.high), stat):
        if 0 < b < 1:
            assert_agree(st, q, tol=1e-6, what="statistic at bound")


@pytest.mark.parametrize("seed", range(5))
def test_invariants(seed):
    rng = np.random.default_rng(100 + seed)
    s = random_sample(rng, 40, rmin=-2.0, rmax=3.0)
    ci = elcvx.interval(s)
    est = elcvx.estimate(s)
    assert s.rmin <= ci.low <= est.value_range.low <= est.value_range.high <= ci.high <= s.rmax
    # Reward flip: high(r) = rmax + rmin - low(rmax + rmin - r).
    flipped = elcvx.interval(s.with_rewards(s.rmax + s.rmin - s.r))
    assert_agree(ci.high, s.rmax + s.rmin - flipped.low, scale=5, tol=1e-12)
    assert_agree(ci.low, s.rmax + s.rmin - flipped.high, scale=5, tol=1e-12)
    # Permutation.
    perm = rng.permutation(s.n_rows)
    ci_p = elcvx.interval(Sample(s.w[perm], s.r[perm], wmax=s.wmax, rmin=s.rmin, rmax=s.rmax))
    assert_agree([ci_p.low, ci_p.high], [ci.low, ci.high], scale=5, tol=1e-10)
    # Widens with the confidence level.
    widths = [np.subtract(*elcvx.interval(s, confidence_level=a)[::-1]) for a in (0.5, 0.9, 0.99)]
    assert widths[0] < widths[1] < widths[2]


def test_counts_equal_duplicated_rows_and_compress():
    rng = np.random.default_rng(7)
    s = random_sample(rng, 30, counts=True)
    expanded = Sample(np.repeat(s.w, s.c.astype(int)), np.repeat(s.r, s.c.astype(int)), wmax=s.wmax)
    a, b = elcvx.interval(s), elcvx.interval(expanded)
    assert_agree([a.low, a.high], [b.low, b.high], tol=1e-10)
    assert_agree(elcvx.estimate(s).value, elcvx.estimate(expanded).value, tol=1e-12)
    c = expanded.compress()
    assert c.n == expanded.n and c.n_rows <= s.n_rows
    cc = elcvx.interval(c)
    assert_agree([cc.low, cc.high], [b.low, b.high], tol=1e-10)


def test_compress_groups_identical_rows():
    s = Sample([1.0, 2.0, 1.0, 1.0, 0.0], [0.5, 0.5, 0.5, 0.25, 0.5], counts=[1, 2, 3, 4, 0.5], wmax=3)
    c = s.compress()
    rows = sorted(zip(c.w.tolist(), c.r.tolist(), c.counts.tolist()))
    assert rows == [(0.0, 0.5, 0.5), (1.0, 0.25, 4.0), (1.0, 0.5, 4.0), (2.0, 0.5, 2.0)]


def test_observed_extremes_make_a_point_estimate():
    # Paper, after eq. (vhatmle): once wmin and wmax are both observed, the estimate is a point.
    s = Sample([0.0, 10.0, 0.5, 0.5, 1.0], [1.0, 0.0, 0.5, 1.0, 0.0], wmax=10)
    res = elcvx.estimate(s)
    assert res.value_range.low == res.value_range.high


def test_large_weights():
    rng = np.random.default_rng(3)
    n = 1000
    w = np.where(rng.random(n) < 1e-3, 1e6, rng.uniform(0, 1.5, n))
    s = Sample(w, rng.integers(0, 2, n).astype(float), wmax=1e6)
    est, ci = elcvx.estimate(s, method="fast"), elcvx.interval(s, method="fast")
    assert 0 <= ci.low <= est.value_range.low <= est.value_range.high <= ci.high <= 1
    assert ci.status == "optimal"


@pytest.mark.parametrize("calibration", ["chi2", "f"])
def test_calibration_quantiles(calibration):
    s = random_sample(np.random.default_rng(1), 25)
    ci = elcvx.interval(s, calibration=calibration, confidence_level=0.9)
    # scipy's quantiles, the two laws named in the docstring.
    expected = stats.chi2.ppf(0.9, 1) if calibration == "chi2" else stats.f.ppf(0.9, 1, 24)
    assert ci.quantile == expected
    prof = elcvx.profile(s, [ci.low, ci.high], calibration=calibration)
    assert_agree(prof.pvalue, [0.1, 0.1], tol=1e-6)


def test_f_calibration_below_two_examples_is_whole_range():
    s = Sample([2.0], [0.5], wmax=4, rmin=-1, rmax=1)
    assert tuple(elcvx.interval(s, calibration="f")) == (-1.0, 1.0)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(w=[1.0, np.nan], r=[0, 1], wmax=2), "w[1]"),
        (dict(w=[1.0, -1.0], r=[0, 1], wmax=2), "w[1]"),
        (dict(w=[1.0, 3.0], r=[0, 1], wmax=2), "w[1]"),
        (dict(w=[1.0, 1.0], r=[0, 2], wmax=2), "r[1]"),
        (dict(w=[1.0, 1.0], r=[0, np.inf], wmax=2), "r[1]"),
        (dict(w=[1.0, 1.0], r=[0], wmax=2), "r has length 1"),
        (dict(w=[], r=[], wmax=2), "w is empty"),
        (dict(w=[0.5], r=[0], wmin=1.0, wmax=2), "wmin=1.0"),
        (dict(w=[0.5], r=[0], wmax=1.0), "wmax=1.0"),
        (dict(w=[0.5], r=[0], wmax=2, counts=[0.0]), "counts[0]=0.0"),
        (dict(w=[0.5], r=[0], wmax=2, rmin=1.0, rmax=1.0), "rmin=1.0"),
    ],
)
def test_bad_sample_input(kwargs, field):
    with pytest.raises(elcvx.InvalidInputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        Sample(kwargs.pop("w"), kwargs.pop("r"), **kwargs)


def test_bad_options():
    with pytest.raises(ValueError, match="method='magic'.*'auto', 'fast', 'cvxpy'"):
        elcvx.estimate(TINY, method="magic")
    with pytest.raises(elcvx.InvalidInputError, match="calibration='t'"):
        elcvx.interval(TINY, calibration="t")
    for level in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(elcvx.InvalidInputError, match="confidence_level"):
            elcvx.interval(TINY, confidence_level=level)
    with pytest.raises(elcvx.InvalidInputError, match="rho=2.0"):
        elcvx.estimate(TINY, rho=2.0)
    with pytest.raises(elcvx.InvalidInputError, match="must be an elcvx.Sample"):
        elcvx.estimate([1.0, 2.0])


def test_from_probs():
    s = Sample.from_probs([1.0, 0.0, 1.0], [0.1, 0.9, 0.9], [1.0, 0.0, 0.0], pmin=0.1)
    assert s.wmax == 10.0
    assert_agree(s.w, [10.0, 0.0, 1 / 0.9], tol=1e-15)
    with pytest.raises(elcvx.InvalidInputError, match=r"logging_prob\[0\]=0.05 is below pmin=0.1"):
        Sample.from_probs([1.0], [0.05], [1.0], pmin=0.1)
    with pytest.raises(elcvx.InvalidInputError, match=r"logging_prob\[0\]=0.0"):
        Sample.from_probs([1.0], [0.0], [1.0])
    assert Sample.from_probs([1.0], [0.5], [1.0]).wmax == np.inf


def test_fast_path_is_robust_and_takes_few_passes():
    # Random samples across the edge cases of the issue (N = 1, weights in {0, wmax}, all
    # weights equal, wmax = 1e6 or inf, constant rewards, counts, wide and narrow levels): the
    # fast path must reach an optimal status, keep the order of the bounds, and stay within a
    # bounded number of passes over the data (the worst seen when this was written was 146).
    rng = np.random.default_rng(20201206)
    for _ in range(300):
        n = int(rng.choice([1, 2, 3, 10, 100, 2000]))
        wmax = float(rng.choice([2.0, 10.0, 1e3, 1e6, np.inf]))
        top = wmax if np.isfinite(wmax) else 50.0
        kind = rng.integers(0, 4)
        w = [rng.choice([0.0, 2.0, top], n), rng.uniform(0, min(top, 20), n), np.ones(n),
             rng.choice([0.0, top], n)][kind]
        r = [rng.integers(0, 2, n).astype(float), rng.random(n), np.ones(n), np.zeros(n)][rng.integers(0, 4)]
        c = rng.integers(1, 5, n).astype(float) if rng.random() < 0.3 else None
        s = Sample(w, r, counts=c, wmax=wmax)
        est = elcvx.estimate(s, method="fast")
        ci = elcvx.interval(s, method="fast", calibration=str(rng.choice(["chi2", "f"])),
                            confidence_level=float(rng.choice([0.5, 0.95, 0.999])))
        assert ci.work[0] <= 250, (w, r, wmax)  # the MLE's passes and the two bounds'
        # (the bounds may be closed forms, with no pass; a "whole range" interval solves nothing)
        assert ci.work[0] >= est.work[0] > 0 or ci.status.startswith("whole range")
        assert est.status.startswith("optimal") and ci.status.startswith(("optimal", "whole range"))
        assert -1e-12 <= ci.low <= est.value_range.low + 1e-9
        assert est.value_range.high <= ci.high + 1e-9 and ci.high <= 1 + 1e-12


def test_bounds_solved_by_hand_with_an_observed_extreme_weight():
    # Found by tests/cvx/test_paths.py (the fast path once returned 0 here). One example w = wmax = 2,
    # r = 1: beta* = 1, q_mle = 1/2, l* = log 2, so phi = -log 2 - q/2 and the lower bound is
    # min 2 q s.t. log q >= phi (the atoms at 0 and 2 absorb the rest): 2 (1/2) exp(-q/2).
    q = stats.chi2.ppf(0.95, 1)
    ci = elcvx.interval(Sample([2.0], [1.0], wmax=2.0), method="fast")
    assert_agree(ci.low, np.exp(-q / 2), tol=1e-12)
    # w = (2, 0), r = (0, 0): on 1 - r the lower bound is min 2 q1 s.t. q1 q2 >= exp(-q/2)/4 with
    # q2 <= 1/2 (E_Q[w] = 1 leaves the atom at wmax the rest), i.e. exp(-q/2); high = 1 - that.
    ci = elcvx.interval(Sample([2.0, 0.0], [0.0, 0.0], wmax=2.0), method="fast")
    assert_agree(ci.high, 1 - np.exp(-q / 2), tol=1e-12)
    assert ci.low == 0.0
