"""Right answers at the numerical extremes: huge and tiny weights, weights next to 1.

Each test is a reproducer that once gave a wrong number labelled optimal (or no answer), with a
reference computed independently of the path under test: an exact answer, the cvxpy path on a
nearby sample that it solves, or a one-dimensional problem solved with scipy.
"""

import numpy as np
import pytest
from scipy import optimize, stats

import elcvx
from elcvx import Sample
from elcvx.testing import assert_agree

CHI2_95 = stats.chi2.ppf(0.95, 1)


# --- huge weights ---------------------------------------------------------------------------------
def test_huge_weight_constant_reward_estimate_is_the_reward():
    # One weight of 1e16 among twenty zeros: the MLE's Newton iteration once stopped on a
    # derivative scaled by sum |w - 1| = 1e16 and returned 1.0 (the exact answer is the constant
    # reward, 0.3: beta* is interior, so no mass is left to the extra atom).
    s = Sample([1e16] + [0.0] * 20, [0.3] * 21, wmax=np.inf)
    for method in ("fast", "auto"):
        est = elcvx.estimate(s, method=method)
        assert est.value_range.low == est.value_range.high
        assert_agree(est.value, 0.3, tol=1e-12, what=f"estimate ({method})")
    # wmax finite: the error was 1.6e-5 (0.3000158); the fast path must give 0.3, Clarabel's
    # own answer 0.3 within its certified error (at most 1e-6 of the range: it was 2.8e-8).
    s = Sample([1e12, 0.0, 0.0], [0.3] * 3, wmax=1e13)
    assert_agree(elcvx.estimate(s, method="fast").value, 0.3, tol=1e-12, what="fast")
    cvx = elcvx.estimate(s, method="cvxpy")
    assert abs(cvx.value - 0.3) <= cvx.error <= 1e-6, (cvx.value, cvx.error)


@pytest.mark.parametrize("weight", [1e10, 1e12, 1e15, 1e16])
def test_huge_weight_beta_is_the_root(weight):
    # beta* for {W, 0 x 20}: (W - 1)/(1 + beta (W - 1)) = 20/(1 - beta), solved by hand:
    # beta = (W - 21)/(21 (W - 1)). The error of the old iteration grew with W (0.012 for 0.048).
    s = Sample([weight] + [0.0] * 20, [0.3] * 21, wmax=np.inf)
    expected = (weight - 21.0) / (21.0 * (weight - 1.0))
    assert_agree(elcvx.estimate(s, method="fast").beta, expected, tol=1e-12)


def test_huge_weight_interval():
    # The same sample's interval was (0.0824, 0.8078). Reference: the cvxpy path at W = 1e12,
    # (0.04395001934507442, 0.897449954861492), measured at commit 1c5b36a; between W = 1e8,
    # 1e10 and 1e12 the cvxpy bounds move by 7.4e-9 and 7.4e-11 (as 1/W), so at W = 1e16 they
    # are within 1e-12 of those numbers. The cvxpy path itself cannot solve W = 1e16.
    s = Sample([1e16] + [0.0] * 20, [0.3] * 21, wmax=np.inf)
    ci = elcvx.interval(s)
    assert ci.method == "fast" and ci.status == "optimal"
    assert_agree(ci.low, 0.04395001934507442, tol=1e-10, what="low")
    assert_agree(ci.high, 0.897449954861492, tol=1e-10, what="high")


@pytest.mark.parametrize("weight", [1e20, 1e30, 1e50, 1e150, 1e200, 1e300])
@pytest.mark.parametrize("at_wmax", [True, False])
def test_weights_up_to_the_largest_double(weight, at_wmax):
    # With wmax = weight = 1e30 the fast bound once returned 0.147532 (labelled optimal): in the
    # cone coordinates it worked in, the atom at wmax had a gradient of 2.4e-32 for a weighted
    # mass of -0.024, which passed every tolerance. Beyond 1e150 squares overflowed and warnings
    # escaped. Reference: the cvxpy path at W = wmax = 1e12, (0.14759543744631604,
    # 0.9778198389274505) (at W = 1e10 it differs by 7e-12, falling as 1/W), and wmax = inf.
    s = Sample([weight, 0.0, 0.5, 2.0], [1.0, 0.0, 1.0, 0.0], wmax=weight if at_wmax else np.inf)
    ci = elcvx.interval(s, method="fast")
    assert_agree([ci.low, ci.high], [0.14759543744631604, 0.9778198389274505], tol=1e-9)
    est = elcvx.estimate(s, method="fast")
    assert est.value_range.low <= est.value <= est.value_range.high
    assert ci.low <= est.value_range.low and est.value_range.high <= ci.high
    # The interval's ends are where the profile statistic is the quantile (chi2(1) at 95%). At
    # weights from 1e200 the 2-d profile's Hessian overflowed and it stopped at 3.133, labelled
    # optimal; such weights now go to the general solver.
    prof = elcvx.profile(s, [ci.low, ci.high], method="fast")
    assert_agree(prof.statistic, [3.841458820694124] * 2, tol=1e-6)


def test_the_cvxpy_path_fails_cleanly_where_clarabel_cannot_go():
    # Clarabel cannot solve with a weight of 1e200; the certificate must say so (a SolverError
    # naming the reason), with no warning escaping, and the default path must still answer.
    s = Sample([1e200, 0.0, 0.5, 2.0], [0.3, 0.2, 0.9, 0.4], wmax=np.inf)
    with pytest.raises(elcvx.SolverError, match="failed its check"):
        elcvx.interval(s, method="cvxpy")
    assert elcvx.interval(s).method == "fast"


def test_huge_weights_respect_the_affine_reward_map():
    # r -> 1 - r maps the estimate (with rho -> 1 - rho) and swaps the bounds. The early stop
    # broke this on 102 of 3,000 random samples with weights up to 1e16.
    rng = np.random.default_rng(12)
    for _ in range(20):
        n = int(rng.integers(3, 40))
        w = np.concatenate([10.0 ** rng.uniform(10, 16, 2), rng.uniform(0, 3, n)])
        r = rng.random(w.size)
        s, flipped = Sample(w, r, wmax=np.inf), Sample(w, 1.0 - r, wmax=np.inf)
        est, est_f = elcvx.estimate(s, rho=0.2), elcvx.estimate(flipped, rho=0.8)
        assert_agree(est.value, 1.0 - est_f.value, tol=1e-9, what=f"estimate {w[:2]}")
        (lo, hi), (lo_f, hi_f) = elcvx.interval(s), elcvx.interval(flipped)
        assert_agree([lo, hi], [1.0 - hi_f, 1.0 - lo_f], tol=1e-9, what=f"interval {w[:2]}")
        assert lo <= est.value_range.low and est.value_range.high <= hi


# --- tiny weights ---------------------------------------------------------------------------------
@pytest.mark.parametrize("tiny", [1e-300, 1e-200, 1e-139, 1e-100, 1e-60, 1e-30, 1e-20, 0.0])
def test_tiny_weight_does_not_collapse_the_interval(tiny):
    # A weight between ~1e-139 and 1e-30 beside wmin = 0 made the face gamma + beta wmin = 0 a
    # barrier in all but name: the bound's iteration landed on it and returned (1.5e-47, 1.0)
    # labelled optimal. Reference: the cvxpy path on w = 1e-139, (0.12075192669294954,
    # 0.8792480733070505) (commit 1c5b36a); a weight of 1e-139 instead of 0 moves the bounds by
    # far less than 1e-12.
    s = Sample([tiny, 1.0, 2.0], [0.5] * 3, wmax=10)
    ci = elcvx.interval(s, method="fast")
    assert_agree(ci.low, 0.12075192669294954, tol=1e-10, what="low")
    assert_agree(ci.high, 0.8792480733070505, tol=1e-10, what="high")


# --- weights next to 1 ----------------------------------------------------------------------------
def on_policy_bound(u, quantile):
    """The lower bound when every weight is 1, by scipy: a one-dimensional problem.

    With w = 1 the MLE is beta* = 0 (l* = 0) and the bound's dual depends on gamma and beta only
    through s = gamma + beta >= 0: max_s exp(-quantile/(2N)) geomean(s + u) - s.
    """
    u = np.asarray(u, float)
    K = np.exp(-quantile / (2 * u.size))

    def minus(s):
        return -(K * np.exp(np.mean(np.log(s + u))) - s)

    res = optimize.minimize_scalar(minus, bounds=(0.0, 10.0), method="bounded",
                                   options={"xatol": 1e-14})
    return -res.fun


NEAR_ONE = [1.00000000005408, 1.00000000002147, 1.00000000003554, 0.99999999993462,
            0.99999999998704]
NEAR_ONE_R = [0.93, 0.36, 0.57, 0.32, 0.59]


@pytest.mark.parametrize("method", ["fast", "cvxpy", "auto"])
def test_weights_within_1e_10_of_one(method):
    # target = logging through float32: the fast path raised max_iter on the upper bound and the
    # cvxpy path failed the MLE's check (its 1-d dual is linear to 1e-20: the Newton decrement
    # overstated the gap). Reference: the on-policy answers, mean(r) and the 1-d bound.
    s = Sample(NEAR_ONE, NEAR_ONE_R, wmax=2)
    assert_agree(elcvx.estimate(s, method=method).value, np.mean(NEAR_ONE_R), tol=1e-9)
    low, high = elcvx.interval(s, method=method)
    u = np.asarray(NEAR_ONE_R)
    assert_agree(low, on_policy_bound(u, CHI2_95), tol=1e-8, what="low")
    assert_agree(high, 1.0 - on_policy_bound(1.0 - u, CHI2_95), tol=1e-8, what="high")


def test_weights_next_to_one_with_a_huge_threshold():
    # confidence 0.999 with the F(1, 3) quantile (167.5): a ball so wide that the bounds are
    # within 1e-12 of the ends of the range, reached at a dual point of size 1e-13. The fast
    # path cycled between a face and the interior and raised max_iter.
    s = Sample([1.00840336] * 4, [0.0, 1.0, 1.0, 1.0], wmax=np.inf)
    quantile = stats.f.ppf(0.999, 1, 3)
    for method in ("fast", "auto"):
        low, high = elcvx.interval(s, confidence_level=0.999, calibration="f", method=method)
        assert 0.0 <= low <= 1e-12 and 1.0 - 1e-12 <= high <= 1.0
    # The on-policy reference, to the same absolute accuracy.
    assert on_policy_bound([0.0, 1.0, 1.0, 1.0], quantile) <= 1e-12


def test_float32_rounded_on_policy_logs_solve_on_every_path():
    # 40 logs whose target and logging probabilities are equal but stored through float32: the
    # fast path failed 13 of them, the cvxpy path 29. Each must solve on both paths, agree, and
    # match the on-policy answer (all weights exactly 1) to the rounding's size.
    rng = np.random.default_rng(40)
    for i in range(40):
        n = int(rng.integers(3, 60))
        p = rng.uniform(0.05, 1.0, n)
        w = np.float32(p).astype(float) / p  # within ~6e-8 of 1
        r = rng.integers(0, 2, n).astype(float) if i % 2 else rng.random(n)
        s = Sample(w, r, wmax=20.0)
        fast, cvx = elcvx.interval(s, method="fast"), elcvx.interval(s, method="cvxpy")
        assert_agree([fast.low, fast.high], [cvx.low, cvx.high], what=f"log {i}")
        on = elcvx.interval(Sample(np.ones(n), r, wmax=20.0), method="fast")
        assert_agree([fast.low, fast.high], [on.low, on.high], tol=1e-5, what=f"log {i}")
        assert_agree(elcvx.estimate(s, method="cvxpy").value, elcvx.estimate(s, method="fast").value,
                     what=f"estimate {i}")


# --- found by the fuzz suite (tests/fast/test_fuzz.py) ---------------------------------------------
@pytest.mark.parametrize("sample, v, expected", [
    # v an ulp above the constant reward: the 2-d method's line search failed; the general
    # solver (elcvx.fast.solve) answers. Reference: the cvxpy path (0).
    (Sample([1.0, 1.0], [0.5, 0.5], wmax=10.0), 0.5 + 1e-15, 0.0),
    # v at the estimate of a weight an ulp from 1: max_iter. Reference: cvxpy (0).
    (Sample([0.9999999999900725], [1.0], wmax=10.0), 0.9999999999889694, 0.0),
    # max_iter. Reference: cvxpy, 1.6184076 (also the barrier solver's).
    (Sample([2.2675209995947743, 8.315185217134125, 1.9072614860109738], [0.0] * 3, wmax=100.0),
     0.23641788227798988, 1.61840763),
])
def test_profile_where_the_active_set_method_fails(sample, v, expected):
    stat = elcvx.profile(sample, [v], method="fast").statistic
    assert_agree(stat, [expected], tol=1e-6, scale=1.0)


def test_the_cvxpy_profile_rejects_a_corner_violated_above_rounding():
    # Clarabel's point broke a corner constraint by 6e-6 (|tau| ~ 1e4) and was certified with a
    # tolerance of 1e-9 |tau|: the statistic came out 0.41674092. Reference: the fast path and
    # the point evaluated in 50-digit arithmetic (0.41673283).
    s = Sample([0.9274315099666071, 0.19140885740171557, 0.00012977248564065912],
               [0.75, 0.75, 0.5], wmax=2.6086298664236875, rmin=0.5, rmax=0.75)
    for method in ("fast", "cvxpy"):
        stat = elcvx.profile(s, [0.7499964381237036], method=method).statistic
        assert_agree(stat, [0.41673283], tol=1e-7, scale=1.0, what=method)


def test_the_cvxpy_profile_at_a_feasible_end_is_the_mle():
    # Every reward 0, so v = 0 is the MLE's own value: the statistic is exactly 0 (cvxpy gave
    # 7.7e-4 from a program without an interior there).
    s = Sample([1.3052353446003582, 5463116546430447.0, 305252844595129.8, 151288427497051.4],
               [0.0] * 4, counts=[3.0, 3.0, 2.0, 2.0], wmax=np.inf)
    assert elcvx.profile(s, [0.0], method="cvxpy").statistic.tolist() == [0.0]


def test_weights_beyond_1e300_are_refused_by_name():
    # Beyond 1e300, N (1 + beta (w - 1)) overflowed: q became 0 and the estimate lost the row's
    # weighted mass (0.35 where 1e300 gives 0.25), or the MLE stopped at beta = 0 (an infinite
    # derivative met an infinite rounding floor).
    with pytest.raises(elcvx.InvalidInputError, match=r"w\[0\]=1e\+308 is outside"):
        Sample([1e308, 1e308, 0.0, 0.0, 0.5], [0.3] * 5, wmax=np.inf)
    s = Sample([1e300, 1e300, 0.0, 0.0, 0.5], [0.3, 0.2, 0.2, 0.2, 0.2], wmax=np.inf)
    est = elcvx.estimate(s)
    assert 0 < est.beta < 1 and est.value_range.low <= est.value <= est.value_range.high


def test_the_cvxpy_profile_is_not_short_where_the_dual_is_flat():
    # Weights within 1e-6 of 1: the profile's dual is linear to 1e-12 in beta, and Clarabel's
    # point stopped 1.07 short of the optimal corner, l_v short by 9e-7. Its certificate took
    # the curvature term of the last Newton step (1e-12) for the gain; the gain of a step that
    # stops at a constraint is linear. Reference: the fast path (0.33339486, which the barrier
    # solver and a 50-digit evaluation of the two points confirm).
    rng = np.random.default_rng(11)
    w = 1 + rng.choice([-1, 1], 300) * 10 ** rng.uniform(-7, -6, 300)
    s = Sample(w, rng.integers(0, 2, 300).astype(float), wmax=2.0)
    fast = elcvx.profile(s, [0.5], method="fast").statistic
    cvx = elcvx.profile(s, [0.5], method="cvxpy").statistic
    assert_agree(cvx, fast, tol=1e-7, scale=1.0)
    assert_agree(fast, [0.33339486], tol=1e-7, scale=1.0)


def test_the_cvxpy_path_fails_cleanly_on_an_overflowing_refinement():
    # Weights of 1e16 and 5e-293 together: the certificate's Newton system overflowed, and
    # LAPACK printed "DLASCL parameter number 4 had an illegal value" and raised LinAlgError.
    # Found by the fuzz suite (seed 161, shrunk); the fast path answers.
    s = Sample([0.7859039380510903, 0.8727827283328983, 2.2506175426824395, 1e16,
                2.239805630117991, 6.183799701473549e-15, 2.0176956848008345,
                5.363497617985413e-293, 0.0802718676775872, 0.10229994341847826],
               [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0], wmax=np.inf)
    try:
        elcvx.interval(s, method="cvxpy")
    except elcvx.SolverError:
        pass  # Clarabel cannot go there: a clean failure is the right answer
    assert elcvx.interval(s).method == "fast"
