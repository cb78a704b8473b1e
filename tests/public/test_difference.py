"""The difference of two policies on one log (elcvx.difference).

The reference is the primal program written here from the model's definition (Q on the rows
and the atoms at the vertices of the two weight ranges, E_Q[1] = E_Q[w_a] = E_Q[w_b] = 1) and
solved by Clarabel, unpolished.
"""

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import Sample
from elcvx import difference
from elcvx.testing import assert_agree

CHI2_95 = stats.chi2.ppf(0.95, 1)


def two_policies(n, seed, wmax=3.0):
    """A uniform logging policy over 3 actions; pi_a and pi_b favour action 0 by 0.8 and 0.7."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    pa, pb = np.where(a == 0, 0.8, 0.1), np.where(a == 0, 0.7, 0.15)
    r = (rng.random(n) < np.where(a == 0, 0.6, 0.4)).astype(float)
    return Sample(3 * pa, r, wmax=wmax), Sample(3 * pb, r, wmax=wmax)


def reference(sa, sb, side, atoms=None):
    """The lower (upper) end by the primal: min (max) E_Q[(w_a - w_b) r] over the ball, with
    the atoms ``(w_a, w_b)`` given (default: the four vertices)."""
    wa, wb, r, n = sa.w, sb.w, sa.r, sa.n
    if atoms is None:
        atoms = [(x, y) for x in (sa.wmin, sa.wmax) for y in (sb.wmin, sb.wmax)]
    # (q = y / N: masses of size one, which Clarabel solves more surely than 1/N.)
    y, m = cp.Variable(sa.n_rows, nonneg=True), cp.Variable(len(atoms), nonneg=True)
    q = y / n
    mr = cp.Variable(len(atoms), nonneg=True)  # the mass of each atom with reward 1
    spread = np.array([x - y for x, y in atoms])
    mle = cp.Problem(cp.Maximize(cp.sum(cp.log(y)) / n), [
        cp.sum(q) + cp.sum(m) == 1, wa @ q + np.array([x for x, _ in atoms]) @ m == 1,
        wb @ q + np.array([y for _, y in atoms]) @ m == 1])
    mle.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    L = mle.value * n
    value = ((wa - wb) * r) @ q + spread @ mr
    sign = 1 if side == "lower" else -1
    ball = cp.Problem(cp.Minimize(sign * value), [
        cp.sum(q) + cp.sum(m) == 1, wa @ q + np.array([x for x, _ in atoms]) @ m == 1,
        wb @ q + np.array([y for _, y in atoms]) @ m == 1, mr <= m,
        cp.sum(cp.log(y)) >= L - CHI2_95 / 2])
    ball.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert mle.status == ball.status == "optimal"
    return sign * ball.value


@pytest.mark.parametrize("seed", range(3))
def test_the_interval_matches_the_primal_program(seed):
    sa, sb = two_policies(120, seed)
    d = difference(sa, sb, method="fast")
    assert_agree([d.low, d.high], [reference(sa, sb, "lower"), reference(sa, sb, "upper")])
    assert d.low <= d.estimate_range.low <= d.estimate <= d.estimate_range.high <= d.high

    # The cvxpy path is Clarabel's own solution of the package's builders (mle_primal with the
    # constraint E_Q[w_b] = 1, lower_bound_primal with value=), certified: it must meet the
    # same independent reference.
    c = difference(sa, sb, method="cvxpy")
    assert c.method == "cvxpy"
    assert_agree([c.estimate, c.low, c.high], [d.estimate, d.low, d.high])


@pytest.mark.parametrize("wmax_a", [5.0, math.inf])
def test_the_two_paths_agree_with_an_unbounded_weight(wmax_a):
    # One policy's weight range unbounded: its atom at w_a = inf has w_b / w_a -> 0 (the
    # model's per-unit-weight convention), on both paths.
    rng = np.random.default_rng(3)
    n = 300
    r = rng.uniform(size=n)
    sa = Sample(rng.choice([0, 2.5], n, p=[0.6, 0.4]), r, wmax=wmax_a)
    sb = Sample(rng.choice([0, 1.5, 3], n, p=[0.3, 0.5, 0.2]), r, wmax=4)
    fast, cvx = difference(sa, sb, method="fast"), difference(sa, sb, method="cvxpy")
    assert (fast.method, cvx.method) == ("fast", "cvxpy")
    assert_agree([cvx.estimate, cvx.low, cvx.high], [fast.estimate, fast.low, fast.high])
    if math.isfinite(wmax_a):
        assert_agree([fast.low, fast.high], [reference(sa, sb, "lower"), reference(sa, sb, "upper")])


def test_a_policy_against_itself_follows_the_model():
    # Equal logged weights do not make two policies equal where nothing was logged: with the
    # default atoms (an unlogged example may have w_a = wmax and w_b = 0) the interval is the
    # model's, not [0, 0] (it was, by a short-circuit, and jumped to the model's width when one
    # weight moved by 1e-12). With atoms that say the policies agree there too, it is [0, 0].
    sa, _ = two_policies(50, 0)
    d = difference(sa, sa)
    assert d.estimate == 0.0 and d.status.startswith("optimal")
    assert_agree([d.low, d.high], [reference(sa, sa, "lower"), reference(sa, sa, "upper")])
    assert d.low < -0.01 and d.high > 0.01
    moved = Sample(sa.w + np.r_[1e-12, np.zeros(sa.n_rows - 1)], sa.r, wmax=sa.wmax)
    near = difference(sa, moved)
    assert_agree([near.low, near.high], [d.low, d.high], tol=1e-9)
    same = difference(sa, sa, atoms=[(0, 0), (3, 3)])
    assert max(abs(same.estimate), abs(same.low), abs(same.high)) <= 1e-9


def test_atoms_of_two_deterministic_policies():
    # Deterministic policies put weight 1/h on their action: at an unlogged example both weights
    # are 0, one is, or both are equal. With weight bounds 4 and 8 those atoms are (0, 0),
    # (4, 0), (0, 8) and (4, 4): not the vertex (4, 8), where both are positive and unequal.
    # The interval is the primal program's with the same atoms, and within the default one
    # (equal here: the vertex (4, 8) carries no mass).
    rng = np.random.default_rng(5)
    n = 200
    a = rng.integers(0, 3, n)
    h = np.where(a == 0, 0.5, 0.25)
    x = rng.random(n)
    pa, pb = (x < 0.5).astype(int), (x < 0.7).astype(int)
    r = (rng.random(n) < np.where(a == 0, 0.6, 0.4)).astype(float)
    sa, sb = Sample((a == pa) / h, r, wmax=4), Sample((a == pb) / h, r, wmax=8)
    atoms = [(0, 0), (4, 0), (0, 8), (4, 4)]
    d = difference(sa, sb, atoms=atoms)
    assert_agree([d.low, d.high], [reference(sa, sb, "lower", atoms), reference(sa, sb, "upper", atoms)])
    default = difference(sa, sb)
    assert default.low <= d.low + 1e-12 and d.high <= default.high + 1e-12  # (fewer atoms)
    with pytest.raises(elcvx.InvalidInputError, match=r"atoms\[0\] has w_b=9"):
        difference(sa, sb, atoms=[(0, 9)])


def test_an_unbounded_weight_on_either_side():
    # wmax = inf on sample_b only was refused ("w_b=inf must be finite") while the swapped call
    # worked: the model is symmetric, V(a) - V(b) = -(V(b) - V(a)).
    rng = np.random.default_rng(3)
    n = 300
    r = rng.uniform(size=n)
    sa = Sample(rng.choice([0, 1.5, 3], n, p=[0.3, 0.5, 0.2]), r, wmax=4)
    sb = Sample(rng.choice([0, 2.5], n, p=[0.6, 0.4]), r, wmax=math.inf)
    ab, ba = difference(sa, sb), difference(sb, sa)
    assert ab.status.startswith("optimal")
    assert_agree([ab.estimate, ab.low, ab.high], [-ba.estimate, -ba.high, -ba.low], tol=1e-12)


def test_swapping_the_policies_negates_everything():
    sa, sb = two_policies(300, 4)
    ab, ba = difference(sa, sb), difference(sb, sa)
    assert_agree(ab.estimate, -ba.estimate, tol=1e-9)
    assert_agree([ab.low, ab.high], [-ba.high, -ba.low], tol=1e-8)


def test_the_interval_is_on_the_user_scale():
    # Rewards in [-1, 3] instead of [0, 1]: the difference scales by rmax - rmin = 4.
    sa, sb = two_policies(200, 5)
    unit = difference(sa, sb)
    wide = difference(Sample(sa.w, 4 * sa.r - 1, wmax=3, rmin=-1, rmax=3),
                      Sample(sb.w, 4 * sb.r - 1, wmax=3, rmin=-1, rmax=3))
    assert_agree([wide.estimate, wide.low, wide.high],
                 [4 * unit.estimate, 4 * unit.low, 4 * unit.high], tol=1e-9)


def test_mismatched_logs_are_named():
    sa, sb = two_policies(30, 0)
    with pytest.raises(elcvx.InvalidInputError, match="share their rewards"):
        difference(sa, Sample(sb.w, 1.0 - sb.r, wmax=3))
    with pytest.raises(elcvx.InvalidInputError, match="sample_b has 29"):
        difference(sa, Sample(sb.w[:29], sb.r[:29], wmax=3))
    with pytest.raises(elcvx.InvalidInputError, match="same counts"):
        difference(sa, Sample(sb.w, sb.r, wmax=3, counts=np.ones(30)))
    with pytest.raises(elcvx.InvalidInputError, match="finite wmax"):
        difference(Sample(sa.w, sa.r, wmax=math.inf), Sample(sb.w, sb.r, wmax=math.inf))


def test_the_estimate_range_stays_inside_the_reward_span():
    # The fuzz's seed 389 (tests/public/test_fuzz_models.py): policy a puts no weight anywhere, so
    # every row's mass of b sits at the atoms and the range's top is exactly rmax - rmin = 1;
    # the sums gave 1.0000000000000004 before the range was kept inside [-span, span].
    a = Sample([0.0, 0.0], [0.5, 0.0], counts=[3.0, 2.0], wmax=10.0)
    b = Sample([0.0, 10.0], [0.5, 0.0], counts=[3.0, 2.0], wmax=10.0)
    d = difference(a, b)
    assert -1.0 <= d.estimate_range.low <= d.estimate <= d.estimate_range.high <= 1.0
    assert -1.0 <= d.low <= d.high <= 1.0


@pytest.mark.parametrize("method", ["fast", "cvxpy", "auto"])
def test_a_bound_at_the_end_of_the_range(method):
    # Issue 24, item 2 (fuzz seed 389, shrunk): one row with both weights 0, counted 3 times,
    # wmax = 10. By hand: E_Q[w_a] = E_Q[w_b] = 1 needs the atoms; the MLE puts 0.1 on (10, 10)
    # and 0.9 on the row. The difference -1 (unit scale) is reached by 0.1 on (0, 10) with
    # reward 1 and 0.1 on (10, 0) with reward 0, the row keeping 0.8: its statistic
    # 2 * 3 * log(0.9 / 0.8) = 0.707 is below the 90% quantile 2.706, so the interval is the
    # whole range [-1, 1] (and +1 by symmetry). The bound's dual reaches it only as the row's
    # a -> 0 (kappa = 2e-14): the certificate divided the rounding of E_Q~[h] - D by kappa
    # ("likelihood made up at 0.0095") though its correction of the rows was exactly 0.
    s = Sample([0.0], [0.5], counts=[3.0], wmax=10.0)
    assert 2 * 3 * math.log(0.9 / 0.8) < stats.chi2.ppf(0.9, 1)
    d = difference(s, s, confidence_level=0.9, method=method)
    assert d.status == "optimal"
    assert_agree([d.low, d.high], [-1.0, 1.0], scale=1.0)
    assert d.estimate == 0.0
