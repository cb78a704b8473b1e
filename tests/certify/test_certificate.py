"""The certificate (elcvx/certify.py): what "optimal" promises, on both paths, and the models at
the edges of the moment-constrained programs where the promise was once broken.

"optimal" promises the estimate, each end of an interval and the likelihoods to 1e-6 of the
reward range (``elcvx.certify.VALUE_TOL``). The references here are independent of the package's
solvers: the MLE by a 40-digit bisection on its derivative (``fast2d_reference.reference_estimate``),
the bounds by the 2-d solvers of ``tests/fast2d_reference.py`` (the package's fast path before
the active-set method), and models whose constrained answer is, by their construction, an
unconstrained one (a column equal to ``w - 1``, or constant, with atoms that agree).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import elcvx
import fast2d_reference as fast2d
from elcvx import InvalidInputError, MomentConstraint, Sample, certify
from elcvx import cvx
from elcvx import fast
from elcvx.errors import InfeasibleConstraintsError
from fast2d_reference import reference_estimate

CHI2_95 = stats.chi2.ppf(0.95, 1)
METHODS = ("fast", "cvxpy", "auto")


def _reference_value(sample, rho_unit):
    base, wmass = reference_estimate(sample)
    return sample.rmin + (sample.rmax - sample.rmin) * (base + wmass * rho_unit)


def _reference_bounds(sample):
    """Both ends of the 95% interval on the unit scale, by the 2-d solvers."""
    fm = fast2d.mle(sample.w, sample.u, sample.counts, sample.wmin, sample.wmax)
    ends = []
    for u in (sample.u, 1.0 - sample.u):
        fb = fast2d.lower_bound(sample.w, u, sample.counts, sample.wmin, sample.wmax, fm.loglik,
                                CHI2_95, q_mle=fm.q, beta_mle=fm.beta)
        assert fb.status.startswith("optimal")
        ends.append(fb.value)
    return ends[0], 1.0 - ends[1]


# ------------------------------------------------------------------------------------------------
# Numbers labelled optimal that were wrong (issue 24, item 1)
# ------------------------------------------------------------------------------------------------
def test_a_constant_column_is_the_unconstrained_model_on_every_path():
    # The example: a constant column with its own value as target is redundant with
    # E_Q[1] = 1 (its atoms' masses must balance), so the estimate is the unconstrained one.
    # Clarabel's own answer was 3.2784568020 against 3.2784630258, labelled "optimal".
    s = Sample([0.5, 4, 0, 1.25, 10, 1.25],
               [3.5064788181462063, 2.1934000155977658, 2.407033018710721, 3.6999157217071477,
                2.194820479490947, 4.7993641928966015], counts=[4, 2, 2, 1, 4, 5],
               wmax=15.85288775897137, rmax=5)
    k = -1.057703580212635
    c = MomentConstraint(np.full(6, k), k, atom_range=(k - 1, k + 1))
    reference = _reference_value(s, 0.5)
    assert reference == pytest.approx(3.2784630258, abs=1e-9)  # the reference
    for method in METHODS:
        est = elcvx.estimate(s, constraints=[c], rho="midpoint", method=method)
        assert est.status.startswith("optimal"), (method, est.status)
        assert abs(est.value - reference) <= 1e-6 * (s.rmax - s.rmin), method
        assert 0 <= est.error <= 1e-6


def test_a_column_equal_to_w_minus_1_is_the_unconstrained_model():
    # Item 2's example: g = w - 1 with atoms [[0, -1], [20, 19]] (the same relation at the
    # atoms): the constraint is E_Q[w] = 1 again, and the dual is flat along one direction. The
    # fast path stopped at max_iter and auto returned Clarabel's answer 1.2e-5 off.
    rng = np.random.default_rng(4)
    s = Sample(rng.choice([0.0, 0.5, 2.0, 10.0, 20.0], 40), rng.random(40), wmax=20)
    c = MomentConstraint(s.w - 1, 0.0, atom_range=(-1, 19))
    value = _reference_value(s, 0.5)
    low, high = _reference_bounds(s)
    for method in METHODS:
        est = elcvx.estimate(s, constraints=[c], atoms=[[0, -1], [20, 19]], rho="midpoint",
                             method=method)
        ci = elcvx.interval(s, constraints=[c], atoms=[[0, -1], [20, 19]], method=method)
        assert est.status.startswith("optimal") and ci.status.startswith("optimal"), method
        assert abs(est.value - value) <= 1e-6, method
        assert abs(ci.low - low) <= 1e-6 and abs(ci.high - high) <= 1e-6, method


def test_the_certificate_bounds_the_error_it_reports():
    # Points moved off the optimum by 1e-9 .. 1e-3: each is either rejected or certified with an
    # error bound that covers its true error (the references'), for the estimate at any rho and
    # for the bounds. A point 1e-3 off is rejected.
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        n = int(rng.choice([5, 40, 300]))
        s = Sample(rng.uniform(0, 6, n), rng.random(n), wmax=8)
        base, wmass = reference_estimate(s)
        m = fast.mle(s, ())
        low, high = _reference_bounds(s)
        for off in (1e-9, 1e-7, 1e-5, 1e-3):
            sol = cvx.certify_mle([m.beta + off], s)
            if off == 1e-3:
                assert sol.status != "optimal", seed
            if sol.status != "optimal":
                continue
            mass, wq = sol.sums[0], sol.sums[1]
            for rho in (0.0, 0.5, 1.0):
                ours = sol.sums[2] + rho * (1.0 - wq)
                assert abs(ours - (base + wmass * rho)) <= sol.error, (seed, off, rho)
        lo = fast.lower_bound(s, (), m.loglik, CHI2_95, mle_sol=m)
        for off in (1e-9, 1e-7, 1e-5, 1e-3):
            sol = cvx.certify_lower_bound([lo.gamma + off, lo.beta], s, loglik=m.loglik,
                                           quantile=CHI2_95, mle_gap=m.gap)
            if off == 1e-3:
                assert sol.status != "optimal", seed
            if sol.status == "optimal":
                assert abs(sol.value - low) <= sol.error + 1e-13, (seed, off)


def test_the_bound_check_fails_on_a_small_error():
    # The comparison above can fail: a certified error bound that was 1e-3 too small would be
    # caught (the points 1e-5 off carry true errors near 1e-6).
    s = Sample(np.random.default_rng(7).uniform(0, 6, 300), np.random.default_rng(8).random(300),
               wmax=8)
    base, wmass = reference_estimate(s)
    m = fast.mle(s, ())
    sol = cvx.certify_mle([m.beta + 1e-5], s)
    true_error = abs(sol.sums[2] + 0.5 * (1.0 - sol.sums[1]) - (base + 0.5 * wmass))
    assert true_error > 1e-9
    assert not true_error <= sol.error * 1e-3


def _moved_bounds(top=None):
    """``(true error, certified error)`` of bound dual points moved off the fast path's solution
    by 1e-9 .. 1e-3 either way and certified with the MLE at hand (so the certificate mixes
    with the MLE's certified value, :func:`elcvx.fast.bound._value_top`; ``top``: another
    function in its place), on both sides, against the 2-d solvers' bounds."""
    from elcvx.fast import bound
    from elcvx.model import model_of

    pairs = []
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        n = int(rng.choice([5, 40, 300]))
        s = Sample(rng.uniform(0, 6, n), rng.random(n), wmax=8)
        m = fast.mle(s, ())
        low, high = _reference_bounds(s)
        for side, want in (("lower", low), ("upper", 1.0 - high)):
            sol = fast.lower_bound(s, (), m.loglik, CHI2_95, side=side, mle_sol=m)
            y = np.r_[sol.gamma, sol.beta]
            model = model_of(s, (), None, side)
            for off in (1e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, -1e-9, -1e-7, -1e-5, -1e-3):
                start = y + off * np.abs(y).max()
                with pytest.MonkeyPatch.context() as mp:
                    if top is not None:
                        mp.setattr(bound, "_value_top", top)
                    moved = fast.lower_bound_of(model, m.loglik, CHI2_95, m, start=start,
                                                max_iter=0)
                if moved.status == "optimal":
                    pairs.append((abs(moved.value - want), moved.error))
    return pairs


def test_the_bound_certificate_with_the_mles_value_bounds_its_error():
    # The bound's certificate makes up the likelihood its correction lost by mixing with the true
    # MLE, whose E_Q[h] it takes as the estimate plus its certified error (not the top of the
    # range): each moved point it certifies has an error bound that covers its true error, and
    # it certifies the points the range alone did and more (82 of 120 against 80, when this was
    # written).
    pairs = _moved_bounds()
    assert len(pairs) >= len(_moved_bounds(top=lambda data, mle_sol: math.inf))
    for true, error in pairs:
        assert true <= error + 1e-13, (true, error)


def test_the_bound_check_fails_on_a_wrong_value_at_the_mle():
    # The comparison above can fail: taking the MLE's E_Q[h] as 0 (below the estimate) makes the
    # mixing free, and certified errors fall far below the true ones.
    pairs = _moved_bounds(top=lambda data, mle_sol: 0.0)
    assert max(true - error for true, error in pairs) > 1e-8


# ------------------------------------------------------------------------------------------------
# Feasible models that failed (item 2)
# ------------------------------------------------------------------------------------------------
def _single_and_duplicate(seed):
    rng = np.random.default_rng(seed)
    n = 30
    s = Sample(rng.uniform(0, 20, n), rng.random(n), wmax=20)
    f = rng.random(n)
    single = [MomentConstraint(s.w * f, 0.5, atom_range=(0, 20))]
    twice = single * 2
    # Atoms that say the two columns are one (g1 = g2 at every atom): the same model.
    atoms_single = [[0, 0], [0, 20], [20, 0], [20, 20]]
    atoms_twice = [[w, g, g] for w, g in atoms_single]
    return s, (single, atoms_single), (twice, atoms_twice)


@pytest.mark.parametrize("seed", [358, 359, 5])
def test_a_constraint_listed_twice_is_the_same_model(seed):
    s, (one, a1), (two, a2) = _single_and_duplicate(seed)
    for method in ("fast", "auto"):
        e1 = elcvx.estimate(s, constraints=one, atoms=a1, method=method)
        e2 = elcvx.estimate(s, constraints=two, atoms=a2, method=method)
        i1 = elcvx.interval(s, constraints=one, atoms=a1, method=method)
        i2 = elcvx.interval(s, constraints=two, atoms=a2, method=method)
        assert e2.status.startswith("optimal") and i2.status.startswith("optimal")
        assert abs(e1.value - e2.value) <= 1e-6 and abs(i1.low - i2.low) <= 1e-6
        assert abs(i1.high - i2.high) <= 1e-6
    # With the default atoms (every vertex of the two ranges) the fast path solves it too.
    assert elcvx.interval(s, constraints=two, method="fast").status.startswith("optimal")


def test_a_linearly_dependent_column_with_huge_weights_is_solved():
    # g3 = g1 + 2 g2 with targets to match, weights 0 .. 1e6 at N = 5: the active-set method
    # stalled (max_iter); the barrier fallback and the certificate answer it.
    w = np.array([0.5, 1e6, 0.0, 0.5, 5e5])
    f = np.array([0.31, 0.62, 0.18, 0.77, 0.45])
    s = Sample(w, np.array([0.2, 0.9, 0.4, 0.6, 0.1]), wmax=1e6)
    g1 = s.w * f
    cs = [MomentConstraint(g1, 0.5, atom_range=(0, 1e6)), MomentConstraint(f, 0.5, atom_range=(0, 1)),
          MomentConstraint(g1 + 2 * f, 1.5, atom_range=(0, 1e6 + 2))]
    fast = elcvx.interval(s, constraints=cs, method="fast")
    auto = elcvx.interval(s, constraints=cs, method="auto")
    assert fast.status.startswith("optimal") and auto.method == "fast"
    assert fast.lower.value <= elcvx.estimate(s, constraints=cs, method="fast").value <= fast.high


# ------------------------------------------------------------------------------------------------
# Infeasible targets (item 3)
# ------------------------------------------------------------------------------------------------
def test_a_target_outside_the_column_range_is_named():
    # f and its atoms lie in [0, 1]: E_Q[f] = 1.5 cannot hold, whatever Q.
    rng = np.random.default_rng(0)
    s = Sample(rng.uniform(0, 4, 50), rng.random(50), wmax=5)
    c = MomentConstraint(rng.random(50), 1.5, atom_range=(0, 1), name="f")
    for method in METHODS:
        with pytest.raises(InfeasibleConstraintsError, match=r"constraint 0 \(f\) has target 1\.5") as e:
            elcvx.estimate(s, constraints=[c], method=method)
        assert e.value.index == 0 and e.value.value == 1.5 and isinstance(e.value, InvalidInputError)


def test_conflicting_targets_are_named_together():
    # The same column with targets 0.2 and 0.8, and atoms that agree (g1 = g2 at each): each
    # target is possible alone, not both.
    rng = np.random.default_rng(1)
    s = Sample(rng.uniform(0, 4, 50), rng.random(50), wmax=5)
    f = rng.random(50)
    cs = [MomentConstraint(f, 0.2, atom_range=(0, 1), name="low"),
          MomentConstraint(f, 0.8, atom_range=(0, 1), name="high")]
    atoms = [[w, g, g] for w in (0, 5) for g in (0, 1)]
    with pytest.raises(InfeasibleConstraintsError, match=r"0 \(low\), 1 \(high\)"):
        elcvx.interval(s, constraints=cs, atoms=atoms, method="auto")
    # With the default atoms (every vertex of the two ranges) an unlogged example may have g1 =
    # 0 and g2 = 1, and the model holds.
    assert elcvx.interval(s, constraints=cs, method="fast").status.startswith("optimal")


def test_a_target_at_the_edge_is_infeasible_with_every_row_kept():
    # E_Q[w 1[a = 0]] = 0 with a logged row of positive weight on action 0 and atoms at 0:
    # only a distribution without that row meets it.
    s = Sample([2.0, 0.5, 0.0], [0.3, 0.6, 0.9], wmax=4)
    c = MomentConstraint(s.w * np.array([1.0, 0.0, 0.0]), 0.0, atom_range=(0, 4))
    with pytest.raises(InfeasibleConstraintsError):
        elcvx.estimate(s, constraints=[c], method="fast")


# ------------------------------------------------------------------------------------------------
# The helpers at wmax = inf, and their checks (item 5)
# ------------------------------------------------------------------------------------------------
def _bandit_log(n=200, K=3, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    a = rng.integers(0, K, n)
    pi = np.zeros((n, K))
    pi[np.arange(n), (x > 0.5).astype(int)] = 1.0
    return a, pi, pi[np.arange(n), a] * K, rng.random(n)


@pytest.mark.parametrize("wmax", [3.0, np.inf])
def test_action_helpers_solve_with_the_sample_default_wmax(wmax):
    a, pi, w, r = _bandit_log()
    s = Sample(w, r, wmax=wmax)
    for cs, atoms in (elcvx.constraints.action_control_variates(s, a, pi),
                      elcvx.constraints.action_marginals(s, a, pi.mean(axis=0))):
        fast = elcvx.interval(s, constraints=cs, atoms=atoms, method="fast")
        cvx = elcvx.interval(s, constraints=cs, atoms=atoms, method="cvxpy")
        assert fast.status.startswith("optimal") and cvx.status.startswith("optimal")
        assert abs(fast.low - cvx.low) <= 1e-6 and abs(fast.high - cvx.high) <= 1e-6
        est = elcvx.estimate(s, constraints=cs, atoms=atoms, method="fast").value
        assert 0 <= fast.low <= est <= fast.high <= 1


def test_the_helpers_check_their_probabilities():
    a, pi, w, r = _bandit_log()
    s = Sample(w, r, wmax=3)
    for bad, field in ((pi * 2, r"target_probs\[0, \d\]=2\.0"), (pi - 0.1, r"-0\.1"),
                       (np.full(pi.shape, 0.5), r"sums to 1\.5")):
        with pytest.raises(InvalidInputError, match=field):
            elcvx.constraints.action_control_variates(s, a, bad)
    for bad in ((0, 1, 2), 5, (1,)):
        with pytest.raises(InvalidInputError, match=r"atom_range=.* must be a pair"):
            MomentConstraint([1.0, 2.0], 1.0, atom_range=bad)


@pytest.mark.parametrize("wmax", [4.0, np.inf])
def test_one_row_models_on_both_paths(wmax):
    # E_Q[w] = 1 and E_Q[g] = b with one row: the atoms carry the rest. The cvxpy path failed
    # on such models that the fast path solved.
    s = Sample([2.0], [0.3], wmax=wmax)
    c = MomentConstraint([0.5], 0.4, atom_range=(0, 1))
    fast, cvx = (elcvx.interval(s, constraints=[c], method=m) for m in ("fast", "cvxpy"))
    assert fast.status.startswith("optimal") and cvx.status.startswith("optimal")
    assert abs(fast.low - cvx.low) <= 1e-6 and abs(fast.high - cvx.high) <= 1e-6


def test_the_tolerances_are_the_promise():
    # What the docs promise: 1e-6 of the reward range for values.
    assert certify.VALUE_TOL == 1e-6


def test_a_one_row_bound_certificate_bounds_its_error():
    # Fuzz seed 1984 (tests/public/test_fuzz_models.py, FIXED): one row, listed atoms, the
    # bound at an LP's vertex where the row carries 1.8 times the ball's least mass. The
    # certificate of one row takes the exact likelihood change -N log(1 + e); dual points moved
    # off the solution by 1e-9 .. 1e-2 are each rejected or certified with an error bound that
    # covers their true error (reference_models: the primal and dual in cvxpy), and the
    # farthest is rejected.
    import math

    import model_cases as M
    import reference_models as R
    from elcvx.model import model_of

    case = M.draw(1984)
    constraints, atoms = case.package_inputs()
    data = M.reference_data(case)
    quantile = float(stats.chi2.ppf(case.level, 1))
    ref_mle = R.mle(data.likelihood())
    want = R.lower_bound(data.bound("lower"), ref_mle.loglik, quantile)
    m = fast.mle(case.sample, constraints, atoms)
    sol = fast.lower_bound(case.sample, constraints, m.loglik, quantile, atoms=atoms, mle_sol=m)
    assert sol.status == "optimal" and abs(sol.value - want) <= sol.error + 1e-13
    model = model_of(case.sample, constraints, atoms)
    y = np.r_[sol.gamma, sol.beta, sol.lambdas]
    certified = []
    for off in (1e-9, 1e-7, 1e-5, 1e-2):
        moved = fast.lower_bound_of(model, m.loglik, quantile, m, start=y + off * np.abs(y).max(),
                                    max_iter=0)
        if moved.status == "optimal":
            certified.append(off)
            assert math.isfinite(moved.error) and abs(moved.value - want) <= moved.error + 1e-13
    assert 1e-9 in certified and 1e-2 not in certified, certified


def _met_by_definition(off):
    """A fit meets the moments when its largest residual is within ROUNDING (numpy's max: a
    NaN anywhere is not met; no residual at all is)."""
    return bool(np.abs(off).max(initial=0.0) <= certify.ROUNDING)


def test_the_residual_check_is_its_definition():
    # certify._met reads the residuals as Python floats (fewer numpy calls): the same verdict
    # as the definition on residuals at, just above and just below the tolerance, with NaN
    # and inf in any place, and on none.
    r = certify.ROUNDING
    edge = [0.0, r, -r, np.nextafter(r, 1.0), -np.nextafter(r, 1.0), np.nextafter(r, 0.0),
            np.nan, np.inf, -np.inf, 1e-300, 1.0]
    rng = np.random.default_rng(7)
    cases = [np.zeros(0)] + [np.array([a, b]) for a in edge for b in edge]
    cases += [rng.choice(edge, size=int(rng.integers(1, 5))) for _ in range(300)]
    for off in cases:
        assert certify._met(off) == _met_by_definition(off), off
    # (The comparison can fail: a check that ignores the sign, or a NaN, is caught.)
    assert any((off.max(initial=0.0) <= r) != _met_by_definition(off) for off in cases)
    assert any(all(not abs(t) > r for t in off.tolist()) != _met_by_definition(off)
               for off in cases)
