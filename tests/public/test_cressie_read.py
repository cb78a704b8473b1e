"""Cressie-Read (lambda = -2): closed forms against hand calculations, the cvxpy programs, textbook
formulas and the paper's printed (wrong) formulas; the mergeable sufficient statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from scipy import stats

from elcvx import InvalidInputError, Sample, SolverError
from elcvx import cressie_read as cr
from elcvx.cressie_read import CressieReadStats, _exact_sum
from elcvx.programs import cr_estimate_primal, cr_lower_bound_primal
from elcvx.testing import assert_agree

CHI2_95 = stats.chi2.ppf(0.95, 1)  # scipy.stats: the chi-square(1) quantile, 3.841...

# The tiny sample of the docstrings: w = (0, 2, 2, 0.5), r = (0, 1, 0.5, 1), wmax = 10.
TINY = dict(w=[0.0, 2.0, 2.0, 0.5], r=[0.0, 1.0, 0.5, 1.0], wmax=10.0)


def tiny():
    return Sample(TINY["w"], TINY["r"], wmax=TINY["wmax"])


# ------------------------------------------------------------------------------------------------
# Hand calculation on the tiny sample
# ------------------------------------------------------------------------------------------------
def test_estimate_by_hand():
    # Hand calculation. mean(w) = 1.125 >= 1, so the extra atom is at wmin = 0. Augmented
    # atoms w = (0, 2, 2, .5, 0), g = w u = (0, 2, 1, .5, 0), M = 5: wbar = 4.5/5 = .9,
    # C_ww = 8.25 - 4.5^2/5 = 4.2, gbar = .7, C_wg = 6.25 - 4.5*3.5/5 = 3.1, so
    # V = .7 + (1 - .9) * 3.1/4.2 = 65/84; beta = M (1 - wbar)/C_ww = .5/4.2 = 5/42;
    # gamma = 1 + M (1 - wbar)^2/C_ww = 1 + .05/4.2 = 85/84; the atom's weighted mass is 0
    # (it sits at w = 0), so the value does not depend on rho.
    res = cr.estimate(tiny())
    assert_agree(res.value, 65 / 84, tol=1e-14, what="V")
    assert_agree(res.beta, 5 / 42, tol=1e-14, what="beta")
    assert_agree(res.gamma, 85 / 84, tol=1e-14, what="gamma")
    assert res.w_ex == 0.0 and res.wmass_ex == 0.0
    assert res.value_range == (res.value, res.value)
    # sum_j c_j Q_j^2 = 1/M + (1 - wbar)^2/C_ww, D = M^2 ||Q||^2 - M = 25 (.2 + .01/4.2) - 5
    assert_agree(res.divergence, 25 * (0.2 + 0.01 / 4.2) - 5, tol=1e-14, what="D_mle")
    # Q at the sample's weights: (gamma + beta (w - 1)) / 5
    assert_agree(res.weights(np.array(TINY["w"])),
                 (85 / 84 + 5 / 42 * (np.array(TINY["w"]) - 1)) / 5, tol=1e-14, what="Q")


def test_interval_by_hand():
    # Hand calculation (continuing test_estimate_by_hand), q = chi2(1) 95% quantile (scipy):
    # candidate (wmin = 0, 0): the estimate's own support, R = q/M^2,
    #   C_gg = 5.25 - 3.5^2/5 = 2.8, RSS = 2.8 - 3.1^2/4.2, bound = 65/84 - sqrt(R RSS);
    # candidate (wmax = 10, 0): w = (0, 2, 2, .5, 10), wbar = 2.9, C_ww = 108.25 - 14.5^2/5 = 66.2,
    #   C_wg = 6.25 - 14.5*3.5/5 = -3.9, V0 = .7 + (1 - 2.9)(-3.9)/66.2, RSS = 2.8 - 3.9^2/66.2,
    #   R = q/25 + (.2 + .01/4.2) - (.2 + 1.9^2/66.2).
    q = CHI2_95
    lb_lo = 65 / 84 - math.sqrt(q / 25 * (2.8 - 3.1**2 / 4.2))
    r_hi = q / 25 + 0.01 / 4.2 - 1.9**2 / 66.2
    lb_hi = 0.7 + 1.9 * 3.9 / 66.2 - math.sqrt(r_hi * (2.8 - 3.9**2 / 66.2))
    res = cr.interval(tiny())
    assert_agree(res.low, min(lb_lo, lb_hi), tol=1e-13, what="low")
    assert res.lower.w_ex == 10.0
    assert_agree([v for _, v in res.lower.candidates], [lb_lo, lb_hi], tol=1e-13, what="candidates")
    assert res.quantile == pytest.approx(q, rel=1e-15)
    low, high = res  # unpacks like IntervalResult
    assert (low, high) == (res.low, res.high) and res.confidence_level == 0.95


# ------------------------------------------------------------------------------------------------
# Closed forms against the cvxpy programs
# ------------------------------------------------------------------------------------------------
def _random_sample(seed_, n, wmin, wmax, counts, above):
    rng = np.random.default_rng(seed_)
    finite_top = min(wmax, 30.0)  # observed weights stay moderate; wmax may be far above
    levels = np.array([wmin, 0.5 * (wmin + 1), 1.5, 0.5 * (1 + finite_top), finite_top])
    p = [0.1, 0.2, 0.3, 0.3, 0.1] if above else [0.35, 0.35, 0.2, 0.08, 0.02]
    w = rng.choice(levels, size=n, p=p)
    r = rng.uniform(-1.0, 3.0, size=n)
    c = rng.integers(1, 4, size=n).astype(float) if counts else None
    return Sample(w, r, counts=c, wmin=wmin, wmax=wmax, rmin=-1.0, rmax=3.0)


CASES = [
    dict(seed_=1, n=12, wmin=0.0, wmax=10.0, counts=False, above=True),
    dict(seed_=2, n=12, wmin=0.0, wmax=10.0, counts=True, above=False),
    dict(seed_=3, n=30, wmin=0.2, wmax=50.0, counts=True, above=True),
    dict(seed_=4, n=30, wmin=0.2, wmax=50.0, counts=False, above=False),
    dict(seed_=5, n=8, wmin=0.0, wmax=1e4, counts=True, above=False),
    dict(seed_=6, n=20, wmin=0.0, wmax=np.inf, counts=True, above=False),
    dict(seed_=7, n=20, wmin=0.0, wmax=np.inf, counts=False, above=True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed_']}")
def test_estimate_matches_program(case):
    s = _random_sample(**case)
    res = cr.estimate(s)
    prog = cr_estimate_primal(s)  # default extra atom: the same rule, declared independently
    d_mle = prog.solve(rho=0.5)
    assert_agree(res.divergence, d_mle, scale=1.0, what="D_mle: closed form vs program")
    assert_agree(res.weights(s.w), prog.variables["q"].value, scale=1.0 / (s.n + 1), what="Q")
    assert_agree(res.wmass_ex, prog.variables["wq_ex"].value, what="extra atom's weighted mass")
    for rho in (s.rmin, 0.3, s.rmax):
        prog.solve(rho=s.to_unit(rho))
        expected = s.to_user(float(prog.variables["value"].value))  # clipped, as the value is
        assert_agree(cr.estimate(s, rho=rho).value, expected, scale=s.rmax - s.rmin,
                     what=f"V(rho={rho})")
    assert res.mass_ex >= 0 and res.wmass_ex >= 0  # proved in docs/baselines.md


@pytest.mark.parametrize("calibration", ["chi2", "f"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed_']}")
def test_interval_matches_programs(case, calibration):
    s = _random_sample(**case)
    res = cr.interval(s, calibration=calibration)
    # The program's own threshold: phi = D_mle (solved by the estimate program) + q (scipy).
    q = stats.chi2.ppf(0.95, 1) if calibration == "chi2" else stats.f.ppf(0.95, 1, s.n - 1)
    phi = cr_estimate_primal(s).solve() + q
    for side, bound in (("lower", res.lower), ("upper", res.upper)):
        values = []
        for w_ex, closed in bound.candidates:
            prog = cr_lower_bound_primal(s, w_ex=w_ex, side=side)
            try:
                v = prog.solve(phi=phi)
            except SolverError:
                assert closed is None, f"{side} candidate {w_ex}: program infeasible, closed form {closed}"
                continue
            assert closed is not None, f"{side} candidate {w_ex}: program gives {v}, closed form None"
            assert_agree(closed, v, scale=1.0, what=f"{side} candidate w_ex={w_ex}")
            values.append(v)
        best = float(np.clip(min(values), 0.0, 1.0))
        expected = s.to_user(best if side == "lower" else 1.0 - best)
        assert_agree(bound.value, expected, scale=s.rmax - s.rmin, what=f"{side} bound")
        assert not bound.degenerate


def test_wmax_inf_is_the_limit_of_large_wmax():
    # Continuity in wmax: the closed form at wmax = inf (the limit formulas) against the closed
    # form at wmax = 1e9 (the general formulas), which the program test checks up to 1e4.
    base = _random_sample(seed_=11, n=25, wmin=0.0, wmax=np.inf, counts=True, above=False)
    big = Sample(base.w, base.r, counts=base.counts, wmax=1e9, rmin=base.rmin, rmax=base.rmax)
    for rho in (base.rmin, 1.0, base.rmax):
        assert_agree(cr.estimate(base, rho=rho).value, cr.estimate(big, rho=rho).value,
                     scale=4.0, tol=1e-6, what="estimate")
    a, b = cr.interval(base), cr.interval(big)
    assert_agree([a.low, a.high], [b.low, b.high], scale=4.0, tol=1e-6, what="interval")


def test_wmax_inf_estimate_is_the_doubly_robust_formula():
    # Textbook formula: with the extra atom at infinity (mean(w) < 1, wmax = inf) the estimate is
    # rho + mean(w (r - rho)) (the doubly robust estimator with a constant predictor rho).
    s = Sample([0.0, 0.0, 2.0, 0.5], [1.0, 0.0, 0.25, 1.0], wmax=np.inf)  # mean(w) = .625
    for rho in (0.0, 0.5, 1.0):
        expected = rho + np.mean(s.w * (s.r - rho))
        res = cr.estimate(s, rho=rho)
        assert_agree(res.value, expected, tol=1e-14, what=f"rho={rho}")
        assert res.w_ex == np.inf and res.mass_ex == 0.0
        assert_agree(res.wmass_ex, 1 - 0.625, tol=1e-14, what="weighted mass at infinity")


# ------------------------------------------------------------------------------------------------
# The paper's printed formulas are wrong (shown numerically against the program)
# ------------------------------------------------------------------------------------------------
def _augmented(s, w_ex):
    w = np.append(s.w, w_ex)
    c = np.append(s.c, 1.0)
    return w, c


def test_printed_primal_weights_do_not_sum_to_one():
    s = _random_sample(seed_=1, n=12, wmin=0.0, wmax=10.0, counts=False, above=True)
    res = cr.estimate(s)
    w, c = _augmented(s, res.w_ex)
    M = s.n + 1
    printed = -(res.gamma + res.beta * w) / (2 * M)         # appendix, as printed
    printed_centered = -(res.gamma + res.beta * (w - 1)) / (2 * M)
    corrected = (res.gamma + res.beta * (w - 1)) / M
    # Sums: -(1 + beta)/2 and -1/2 (algebra: gamma + beta (wbar - 1) = 1), against 1.
    assert_agree(c @ printed, -(1 + res.beta) / 2, tol=1e-12, what="printed sum")
    assert_agree(c @ printed_centered, -0.5, tol=1e-12, what="printed sum, w - 1")
    prog = cr_estimate_primal(s)
    prog.solve()
    q_prog = np.append(prog.variables["q"].value, prog.variables["q_ex"].value)
    assert_agree(corrected, q_prog, scale=1 / M, what="corrected Q vs program")
    assert_agree(c @ q_prog, 1.0, what="program's Q sums to 1")


def test_printed_estimate_is_wrong():
    # Appendix: V = rho + (1/N) sum ((N/(N+1)) gamma w + (N/(N+1)) beta (w - 1)^2) (r - rho);
    # the program's value has w (w - 1) where the appendix prints (w - 1)^2.
    s = _random_sample(seed_=3, n=30, wmin=0.2, wmax=50.0, counts=True, above=True)
    res = cr.estimate(s, rho=1.0)
    rho_u, u, w, c, N = 0.5, s.u, s.w, s.c, s.n
    printed = rho_u + (c @ ((res.gamma * w + res.beta * (w - 1) ** 2) * (u - rho_u))) / (N + 1)
    corrected = rho_u + (c @ ((res.gamma * w + res.beta * w * (w - 1)) * (u - rho_u))) / (N + 1)
    prog = cr_estimate_primal(s)
    prog.solve(rho=rho_u)
    v_prog = float(prog.variables["value"].value)
    assert_agree(corrected, v_prog, what="corrected formula vs program")
    assert abs(printed - v_prog) > 1e-3, (printed, v_prog)


def test_printed_lower_bound_is_wrong():
    # Appendix: v_lb = x - sqrt(2 y z), y = cov(w, g)^2/var(w) - var(g) <= 0,
    # z = phi + (1 - wbar)^2/(2 var(w)), phi = chi2/2 - (sum_n (N Q_n^mle)^2 - 1), means over the
    # augmented support. Evaluated literally it is NaN or far from the program's bound.
    s = _random_sample(seed_=1, n=12, wmin=0.0, wmax=10.0, counts=False, above=True)
    est = cr.estimate(s)
    N, M = s.n, s.n + 1
    q_mle = est.weights(s.w)
    phi = CHI2_95 / 2 - np.sum(s.c * ((N * q_mle) ** 2 - 1))
    d_mle = cr_estimate_primal(s).solve()
    printed, programs = [], []
    for w_ex in (s.wmin, s.wmax):
        w, c = _augmented(s, w_ex)
        g = np.append(s.w * s.u, 0.0)
        mean = lambda x: (c @ x) / M  # noqa: E731
        var_w = mean(w * w) - mean(w) ** 2
        cov = mean(w * g) - mean(w) * mean(g)
        x = mean(g) + (1 - mean(w)) * cov / var_w
        y = cov**2 / var_w - (mean(g * g) - mean(g) ** 2)
        z = phi + (1 - mean(w)) ** 2 / (2 * var_w)
        with np.errstate(invalid="ignore"):
            printed.append(x - np.sqrt(2 * y * z))
        programs.append(cr_lower_bound_primal(s, w_ex=w_ex).solve(phi=d_mle + CHI2_95))
        assert y <= 0
    # Here 2 y z < 0 for both candidates: the printed bound is NaN (sqrt of a negative number).
    assert np.isnan(printed).all() or abs(np.nanmin(printed) - min(programs)) > 1e-3, printed
    assert_agree(cr.interval(s).lower.candidates[0][1], programs[0], what="corrected formula")


def test_half_chi2_threshold_undercovers_and_corrected_covers():
    # Simulation with a known value: epsilon-greedy logging that matches the deterministic target
    # with probability 0.6 (w = 1/0.6 or 0, E[w] = 1), Bernoulli(0.7) reward, so V = 0.7.
    # The threshold is the chi2(1) quantile q (CR(-2) ~ -2 log LR); the appendix's q/2 makes the
    # interval sqrt(2) narrower and undercovers.
    rng = np.random.default_rng(2020)
    level_half = stats.chi2.cdf(CHI2_95 / 2, 1)  # confidence level whose quantile is q/2
    reps, n, hit, hit_half = 600, 200, 0, 0
    for _ in range(reps):
        match = rng.random(n) < 0.6
        w = np.where(match, 1 / 0.6, 0.0)
        r = (rng.random(n) < 0.7).astype(float)
        s = Sample(w, r, wmax=1 / 0.6 * 1.5)
        lo, hi = cr.interval(s)
        hit += lo <= 0.7 <= hi
        lo, hi = cr.interval(s, confidence_level=level_half)
        hit_half += lo <= 0.7 <= hi
    # binomial standard error at 600 reps is ~0.009
    assert hit / reps >= 0.925, hit / reps
    assert hit_half / reps <= 0.87, hit_half / reps


def test_large_sample_half_width_is_the_regression_wald_interval():
    # Textbook formula: the regression (control-variate) estimator's Wald interval has half width
    # z * sqrt(RSS)/N, RSS the residual sum of squares of w u on (1, w) (numpy lstsq); the CR
    # interval's is sqrt(q RSS_aug)/(N + 1) on the augmented sample: equal up to O(1/N).
    rng = np.random.default_rng(5)
    n = 20000
    w = rng.choice([0.0, 0.5, 2.0, 4.0], size=n, p=[0.3, 0.3, 0.25, 0.15])
    r = np.clip(0.3 * w + rng.normal(0.3, 0.2, n), 0, 1)
    s = Sample(w, r, wmax=4.0)
    X = np.column_stack([np.ones(n), w])
    resid = w * r - X @ np.linalg.lstsq(X, w * r, rcond=None)[0]
    half = np.sqrt(CHI2_95 * resid @ resid) / n
    res = cr.interval(s)
    est = cr.estimate(s)
    assert_agree(est.value - res.low, half, tol=2e-3, scale=0.0, what="lower half width")
    assert_agree(res.high - est.value, half, tol=2e-3, scale=0.0, what="upper half width")


# ------------------------------------------------------------------------------------------------
# Degenerate data: honest, never NaN
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("calibration", ["chi2", "f"])
def test_single_example_is_whole_range(calibration):
    # N = 1: two atoms and two constraints fix Q, so E_Q[w u] cannot move (docs/baselines.md).
    s = Sample([2.0], [0.5], wmax=10, rmin=-1, rmax=1)
    res = cr.interval(s, calibration=calibration)
    assert (res.low, res.high) == (-1.0, 1.0)
    assert "whole range" in res.status or "degenerate" in res.status


def test_identical_rows_are_whole_range_not_a_point():
    # All examples at (w, r) = (2, .5): the program's answer would be the point 0.5 (hand
    # calculation: atoms at w = 2 and wmin = 0 give Q = 1/2 at w = 2, E_Q[w u] = .5).
    s = Sample([2.0] * 50, [0.5] * 50, wmax=10)
    res = cr.interval(s)
    assert (res.low, res.high) == (0.0, 1.0)
    assert res.lower.degenerate and res.upper.degenerate
    assert res.lower.candidates[0][1] == pytest.approx(0.5, abs=1e-12)


def test_equal_weights_and_constant_rewards():
    # Equal weights, varied rewards: spread within the one weight level, a proper interval around
    # the estimate. Constant rewards 0.3, varied weights: the interval contains 0.3 (docs proof).
    s = Sample([2.0] * 6, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], wmax=10)
    res, est = cr.interval(s), cr.estimate(s)
    assert 0.0 <= res.low < est.value < res.high <= 1.0
    s = Sample([0.0, 0.5, 2.0, 3.0, 2.0], [0.3] * 5, wmax=10)
    res = cr.interval(s)
    assert res.low < 0.3 < res.high and not res.lower.degenerate


@seed(20201)
@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from([0.0, 0.25, 1.0, 2.0, 5.0]),
                            st.sampled_from([0.0, 0.5, 1.0]), st.integers(1, 3)),
                  min_size=1, max_size=8),
    wmax=st.sampled_from([5.0, 20.0, np.inf]),
    level=st.sampled_from([0.5, 0.9, 0.99]),
)
def test_never_nan_and_estimate_inside(rows, wmax, level):
    w, r, c = (np.array(x, dtype=float) for x in zip(*rows))
    s = Sample(w, r, counts=c, wmax=wmax)
    est = cr.estimate(s)
    for calibration in ("chi2", "f"):
        res = cr.interval(s, confidence_level=level, calibration=calibration)
        values = [est.value, *est.value_range, res.low, res.high]
        assert all(np.isfinite(values)) and all(0.0 <= v <= 1.0 for v in values)
        assert res.low <= est.value <= res.high  # proved in docs/baselines.md


# ------------------------------------------------------------------------------------------------
# Sufficient statistics: exact, mergeable, validated
# ------------------------------------------------------------------------------------------------
def test_exact_sum_is_exact():
    # fractions.Fraction: the exact rational sum, including subnormals, signs and huge values.
    from fractions import Fraction

    rng = np.random.default_rng(0)
    x = rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, 500)
    x = np.concatenate([x, [0.0, 5e-324, -5e-324, 1.7e308, 1.0, 1e-16]])
    assert _exact_sum(x) == sum(Fraction(v) for v in x)


def test_statistics_by_hand():
    # Hand calculation for the tiny sample (u = r): sum c = 4, sum w = 4.5, sum w^2 = 8.25,
    # sum w u = 3.5, sum w^2 u = 6.25, sum w^2 u^2 = 5.25.
    st_ = CressieReadStats.from_sample(tiny())
    assert (st_.n, st_.sum_w, st_.sum_w2, st_.sum_wu, st_.sum_w2u, st_.sum_w2u2) == \
        (4.0, 4.5, 8.25, 3.5, 6.25, 5.25)


@seed(31415)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_split_merged_gives_the_whole_answer(data):
    n = data.draw(st.integers(2, 40), label="n")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="rng"))
    wmax = data.draw(st.sampled_from([3.0, 40.0, np.inf]), label="wmax")
    w = rng.choice([0.0, 0.1, 0.7, 1.3, 2.9], size=n)
    r = rng.uniform(-2, 5, size=n)
    c = rng.uniform(0.2, 3.0, size=n) if data.draw(st.booleans(), label="counts") else None
    whole = Sample(w, r, counts=c, wmax=wmax, rmin=-2, rmax=5)
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=4), label="cuts"))
    order = rng.permutation(n)  # any split: of a shuffled order
    parts = np.split(order, cuts)
    stats_ = [CressieReadStats(wmax=wmax, rmin=-2, rmax=5).update(
        w[p], r[p], None if c is None else c[p]) for p in parts]
    merged = sum(stats_[1:], stats_[0]) if len(stats_) > 1 else stats_[0]
    est_a, est_b = merged.estimate(), cr.estimate(whole)
    int_a, int_b = merged.interval(calibration="f"), cr.interval(whole, calibration="f")
    got = [est_a.value, *est_a.value_range, est_a.gamma, est_a.beta, int_a.low, int_a.high]
    want = [est_b.value, *est_b.value_range, est_b.gamma, est_b.beta, int_b.low, int_b.high]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_counts_are_exact_multiplicities():
    # Duplicated rows against counts (three of the first row, two of the third).
    w, r = np.array([0.3, 2.0, 5.0, 0.0]), np.array([0.1, 0.9, 0.6, 1.0])
    dup = Sample(np.repeat(w, [3, 1, 2, 1]), np.repeat(r, [3, 1, 2, 1]), wmax=6)
    cnt = Sample(w, r, counts=[3, 1, 2, 1], wmax=6)
    a, b = cr.estimate(dup), cr.estimate(cnt)
    np.testing.assert_allclose([a.value, a.gamma, a.beta], [b.value, b.gamma, b.beta], rtol=1e-12)
    a, b = cr.interval(dup), cr.interval(cnt)
    np.testing.assert_allclose([a.low, a.high], [b.low, b.high], rtol=1e-12)


def test_sum_of_statistics_and_methods_equal_functions():
    s = _random_sample(seed_=3, n=30, wmin=0.2, wmax=50.0, counts=True, above=True)
    halves = [CressieReadStats(wmin=0.2, wmax=50.0, rmin=-1, rmax=3).update(
        s.w[i::2], s.r[i::2], s.c[i::2]) for i in (0, 1)]
    merged = sum(halves)
    assert merged.estimate(rho=1.0).value == cr.estimate(s, rho=1.0).value
    assert tuple(merged.interval(confidence_level=0.9)) == tuple(cr.interval(s, confidence_level=0.9))


def test_merge_checks_bounds():
    a = CressieReadStats(wmax=10).update([1.0], [0.5])
    b = CressieReadStats(wmax=20).update([1.0], [0.5])
    with pytest.raises(InvalidInputError, match="wmax"):
        a + b
    with pytest.raises(InvalidInputError, match="rmax"):
        a + CressieReadStats(wmax=10, rmax=2).update([1.0], [0.5])


@pytest.mark.parametrize("w, r, counts, field", [
    ([1.0, np.nan], [0.5, 0.5], None, "w"),
    ([1.0, 11.0], [0.5, 0.5], None, "w"),
    ([1.0, 1.0], [0.5, 1.5], None, "r"),
    ([1.0, 1.0], [0.5], None, "r"),
    ([1.0, 1.0], [0.5, 0.5], [1, 0], "counts"),
    ([], [], None, "w"),
])
def test_update_validates_like_sample(w, r, counts, field):
    stats_ = CressieReadStats(wmax=10)
    with pytest.raises(InvalidInputError, match=rf"^{field}"):
        stats_.update(w, r, counts)
    assert stats_.n == 0  # nothing was added


def test_bounds_and_empty_statistics_are_checked():
    with pytest.raises(InvalidInputError, match="wmax"):
        CressieReadStats(wmax=0.5)
    with pytest.raises(InvalidInputError, match="rmin"):
        CressieReadStats(wmax=2, rmin=1, rmax=0)
    with pytest.raises(InvalidInputError, match="empty"):
        CressieReadStats(wmax=2).estimate()


@pytest.mark.parametrize("kwargs, field", [
    (dict(calibration="normal"), "calibration"),
    (dict(confidence_level=1.0), "confidence_level"),
    (dict(confidence_level=0.0), "confidence_level"),
    (dict(confidence_level=float("nan")), "confidence_level"),
])
def test_bad_interval_options(kwargs, field):
    with pytest.raises(InvalidInputError, match=field):
        cr.interval(tiny(), **kwargs)


def test_bad_estimate_options():
    with pytest.raises(InvalidInputError, match="rho"):
        cr.estimate(tiny(), rho=2.0)
    with pytest.raises(InvalidInputError, match="sample"):
        cr.estimate(np.ones(3))
    with pytest.raises(InvalidInputError, match="w_ex"):
        cr_lower_bound_primal(tiny(), w_ex=3.0)
    with pytest.raises(InvalidInputError, match="side"):
        cr_lower_bound_primal(tiny(), w_ex=0.0, side="middle")


def test_f_calibration_uses_scipy_f_quantile():
    # scipy.stats.f.ppf(0.9, 1, N - 1) with N = 4 examples.
    res = cr.interval(tiny(), confidence_level=0.9, calibration="f")
    assert res.quantile == pytest.approx(stats.f.ppf(0.9, 1, 3), rel=1e-15)
