"""Moment constraints (elcvx.constraints) on the fast path: closed-form checks and a reference.

The reference is a cvxpy program written here from the dual's definition (not elcvx's builders)
and solved by Clarabel, unpolished; agreement is to elcvx.testing.AGREEMENT.
"""

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import Sample
from elcvx import constraints as mc
from elcvx.constraints import MomentConstraint, extra_atoms
from elcvx.testing import assert_agree

CHI2_95 = stats.chi2.ppf(0.95, 1)


def sample_and_covariate(n, seed, wmax=10.0):
    rng = np.random.default_rng(seed)
    w = np.where(rng.random(n) < 0.4, 1.0 / rng.uniform(1.0 / wmax, 1.0, n), 0.0)
    r = rng.random(n)
    f = np.clip(r + rng.normal(0.0, 0.2, n), 0.0, 1.0)  # a covariate correlated with r
    return Sample(w, r, wmax=wmax), f


@pytest.mark.parametrize("seed", range(4))
def test_an_implied_constraint_changes_nothing(seed):
    # g = w - 1 with target 0 is E_Q[w] = 1 again; with the atoms' g tied to their weight,
    # (w, w - 1), the model is the paper's, so every number must be the unconstrained one.
    s, _ = sample_and_covariate(200, seed)
    c = MomentConstraint(s.w - 1.0, 0.0, atom_range=(-1.0, s.wmax - 1.0))
    atoms = [[s.wmin, s.wmin - 1.0], [s.wmax, s.wmax - 1.0]]
    plain, tied = elcvx.estimate(s, method="fast"), elcvx.estimate(s, constraints=c, atoms=atoms,
                                                                  method="fast")
    assert_agree(tied.loglik, plain.loglik, tol=1e-9, what="l*")
    assert_agree(tied.value, plain.value, tol=1e-9, what="estimate")
    ci_plain = elcvx.interval(s, method="fast")
    ci_tied = elcvx.interval(s, constraints=[c], atoms=atoms, method="fast")
    assert_agree([ci_tied.low, ci_tied.high], [ci_plain.low, ci_plain.high], tol=1e-9)


@pytest.mark.parametrize("rows", [1, 5])
def test_a_constraint_met_to_its_last_bit_everywhere_is_feasible(rows):
    # Issue 24, item 2 (fuzz seed 231): g constant on the rows, its atom_range of zero width at
    # that constant, and the target one ulp away. Every distribution meets it to rounding (the
    # certificate's ROUNDING), so the model is the paper's: on every method and in the
    # feasibility LP it is feasible, and the estimate is the 40-digit bisection's (the paper's
    # program, fast2d_reference) and the interval the one without the constraint. On the
    # constraint's lambda every term gains 1e-17 of it: the fast path's dual ran off along it
    # ("no feasible start").
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fast2d_reference import reference_estimate
    from elcvx import feasibility
    from elcvx.model import Moments

    k = 0.37033514786464117
    target = float(np.nextafter(k, 1.0))
    s = Sample([18.482673063069054, 0.5, 2.0, 0.0, 1.5][:rows], [0.1, 0.9, 0.3, 0.5, 1.0][:rows],
               counts=[0.2, 1.0, 2.0, 1.0, 3.0][:rows], wmax=50.0, rmin=-1.0)
    c = MomentConstraint(np.full(rows, k), target, atom_range=(k, k), name="g_const")
    assert feasibility.slack(Moments(s, [c])) > feasibility._KEPT
    base, wmass = reference_estimate(s)
    ci_plain = elcvx.interval(s, method="fast")
    for method in ("fast", "cvxpy", "auto"):
        est = elcvx.estimate(s, constraints=c, rho="midpoint", method=method)
        assert est.status.startswith("optimal"), (method, est.status)
        unit = [(x - s.rmin) / (s.rmax - s.rmin) for x in (est.value_range.low, est.value_range.high)]
        assert_agree(unit, [base, base + wmass], tol=1e-9, what=f"estimate range ({method})")
        ci = elcvx.interval(s, constraints=c, method=method)
        assert_agree([ci.low, ci.high], [ci_plain.low, ci_plain.high],
                     scale=s.rmax - s.rmin, what=f"interval ({method})")


@pytest.mark.parametrize("seed", range(4))
def test_the_bounds_lie_on_the_level_set(seed):
    # Two different duals: the profile statistic at each bound of the constrained interval is
    # the threshold, and 0 at the estimate.
    s, f = sample_and_covariate(300, seed)
    c = MomentConstraint(s.w * f, float(np.mean(s.w * f)) + 0.01, atom_range=(0.0, s.wmax))
    est = elcvx.estimate(s, constraints=c, method="fast")
    low, high = elcvx.interval(s, constraints=c, method="fast")
    stat = elcvx.profile(s, [low, high, est.value], constraints=c, method="fast").statistic
    assert_agree(stat, [CHI2_95, CHI2_95, 0.0], tol=1e-6)
    assert low < est.value < high


def test_the_constrained_mle_meets_its_constraint():
    s, f = sample_and_covariate(400, 7)
    target = float(np.mean(s.w * f)) - 0.02
    est = elcvx.estimate(s, constraints=MomentConstraint(s.w * f, target, atom_range=(0, 10)),
                         method="fast")
    assert est.wmass_ex == 0.0  # no mass left to the atoms on this sample
    assert_agree(np.sum(est.q * s.w * f), target, tol=1e-10)
    assert_agree(np.sum(est.q * s.w), 1.0, tol=1e-10)


def reference_mle(s, constraints, atoms):
    """l* of the constrained dual, declared here from its definition and solved by Clarabel."""
    x = cp.Variable(1 + len(constraints))
    D = np.column_stack([s.w - 1.0] + [c.values - c.target for c in constraints])
    b = np.array([c.target for c in constraints])
    rows = []
    for atom in atoms:
        w, g = atom[0], np.asarray(atom[1:])
        rows.append(1 + x[0] * (w - 1) + (x[1:] @ (g - b) if len(b) else 0) >= 0)
    prob = cp.Problem(cp.Maximize(cp.sum(cp.log(1 + D @ x)) / s.n), rows)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return prob.value * s.n


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_fast_constrained_mle_matches_clarabel(k):
    s, f = sample_and_covariate(150, 10 + k)
    rng = np.random.default_rng(k)
    constraints = []
    for j in range(k):
        g = s.w * np.clip(f + rng.normal(0, 0.3, s.n_rows), 0, 1)
        constraints.append(MomentConstraint(g, float(np.mean(g)) + 0.01 * (j - 1),
                                            atom_range=(0.0, s.wmax), name=f"g{j}"))
    atoms = extra_atoms(s, constraints)
    assert len(atoms) == 2 * 2 ** k  # every vertex of {wmin, wmax} x [0, wmax]^k
    fast = elcvx.estimate(s, constraints=constraints, method="fast")
    assert_agree(fast.loglik, reference_mle(s, constraints, atoms), tol=1e-6, scale=1.0)


def test_bad_constraints_are_named():
    s, f = sample_and_covariate(20, 0)
    with pytest.raises(elcvx.InvalidInputError, match="atom_range"):
        MomentConstraint(f, 0.5)
    with pytest.raises(elcvx.InvalidInputError, match="has 3 values but the sample has 20"):
        elcvx.estimate(s, constraints=MomentConstraint([1.0, 2.0, 3.0], 0.0, atom_range=(0, 3)))
    with pytest.raises(elcvx.InvalidInputError, match="constraints\\[0\\] must be"):
        elcvx.estimate(s, constraints=[f])
    with pytest.raises(elcvx.InvalidInputError, match="outside \\[wmin, wmax\\]"):
        elcvx.estimate(s, constraints=MomentConstraint(f, 0.5, (0, 1)), atoms=[[11.0, 0.5]])
    with pytest.raises(elcvx.InvalidInputError, match="lo <= hi"):
        MomentConstraint(f, 0.5, atom_range=(1, 0))


def simulate_bandit(n, seed):
    """Epsilon-greedy logging over 3 actions, a deterministic target, and a rough reward model."""
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    p = np.full((n, 3), 0.1)
    p[np.arange(n), (x >= 0.5).astype(int)] += 0.7
    a = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    target = np.where(x > 0.3, 2, 0)
    mean = np.where(a == 2, 0.2 + 0.7 * x, np.where(a == 0, 0.6 - 0.4 * x, 0.3))
    r = np.clip(mean + rng.uniform(-0.1, 0.1, n), 0, 1)
    w = (a == target) / p[np.arange(n), a]
    model = lambda act: np.where(act == 2, 0.1 + 0.9 * x, 0.45)  # noqa: E731
    return Sample(w, r, wmax=10.0), model(a), model(target), a, np.eye(3)[target]


def test_the_reward_model_constraint_is_doubly_robust_el():
    # E[w r_hat - sum_a pi r_hat] = 0 holds for any r_hat; a good r_hat narrows the interval.
    # On 10 logs of this simulation the mean width falls from 0.051 to 0.037 (measured, 40 logs).
    widths = []
    for seed in range(10):
        s, predicted, expected, _, _ = simulate_bandit(1000, seed)
        c = mc.reward_model(s, predicted, expected, deterministic=True)
        plain, dr = elcvx.interval(s, method="fast"), elcvx.interval(s, constraints=c, method="fast")
        widths.append((plain.high - plain.low, dr.high - dr.low))
        est = elcvx.estimate(s, constraints=c, method="fast")
        assert dr.low <= est.value_range.low and est.value_range.high <= dr.high
    plain_w, dr_w = np.mean(widths, axis=0)
    assert dr_w < 0.85 * plain_w


def test_the_reward_models_atoms_follow_the_weight():
    s, predicted, expected, _, _ = simulate_bandit(50, 0)
    c = mc.reward_model(s, predicted, expected, deterministic=True)
    # w = 0: g = -E_pi[r_hat] in [-1, 0]; w = wmax = 10: g = 9 r_hat in [0, 9].
    assert extra_atoms(s, [c]).tolist() == [[0.0, -1.0], [0.0, 0.0], [10.0, 0.0], [10.0, 9.0]]
    free = mc.reward_model(s, predicted, expected)
    assert extra_atoms(s, [free]).tolist() == [[0.0, -1.0], [0.0, 0.0], [10.0, -1.0], [10.0, 10.0]]
    with pytest.raises(elcvx.InvalidInputError, match="predicted"):
        mc.reward_model(s, predicted + 2.0, expected)


def test_action_constraints_hold_on_the_data_and_solve():
    s, _, _, a, pi = simulate_bandit(400, 3)
    cs, atoms = mc.action_control_variates(s, a, pi)
    assert len(cs) == 2 and atoms.shape[1] == 3
    # Each g_k has mean about 0 under the logging policy (that is why E_Q[g_k] = 0 is known).
    assert all(abs(np.mean(c.values)) < 0.15 for c in cs)
    ci = elcvx.interval(s, constraints=cs, atoms=atoms, method="fast")
    stat = elcvx.profile(s, [ci.low, ci.high], constraints=cs, atoms=atoms, method="fast").statistic
    assert_agree(stat, [CHI2_95, CHI2_95], tol=1e-6)
    marg, marg_atoms = mc.action_marginals(s, a, pi.mean(axis=0))
    assert [c.target for c in marg] == pytest.approx(pi.mean(axis=0)[:2].tolist())
    assert elcvx.estimate(s, constraints=marg, atoms=marg_atoms, method="fast").status == "optimal"


def constrained_models(seed):
    s, predicted, expected, a, pi = simulate_bandit(300, seed)
    actions, atoms = mc.action_control_variates(s, a, pi)
    return s, [([mc.reward_model(s, predicted, expected, deterministic=True)], None),
               (actions, atoms)]


@pytest.mark.parametrize("seed", range(3))
def test_fast_and_clarabels_own_answers_agree_with_constraints(seed):
    # The cvxpy side is Clarabel's own primal q and multipliers, certified by their duality gap
    # (no Newton polish): the estimate, l* and the bounds agree to AGREEMENT.
    s, models = constrained_models(seed)
    for constraints, atoms in models:
        kw = dict(constraints=constraints, atoms=atoms)
        fast, cvx = elcvx.estimate(s, method="fast", **kw), elcvx.estimate(s, method="cvxpy", **kw)
        assert cvx.method == "cvxpy"
        assert_agree(cvx.value, fast.value, what="estimate")
        assert_agree(cvx.loglik, fast.loglik, scale=s.n, what="l*")
        fast_ci, cvx_ci = (elcvx.interval(s, method=m, **kw) for m in ("fast", "cvxpy"))
        # Clarabel's own answers: none polished by the fast path's method from its point.
        assert elcvx.cvx.REFINED not in cvx.status + cvx_ci.status, (cvx.status, cvx_ci.status)
        assert "polished" not in cvx.status + cvx_ci.status, (cvx.status, cvx_ci.status)
        assert_agree(list(cvx_ci), list(fast_ci), what="interval")


def test_the_cross_check_fails_on_a_small_error():
    # The same comparison with the target of the constraint moved by 1e-4 on one side only.
    s, models = constrained_models(0)
    (c,), _ = models[0]
    moved = MomentConstraint(c.values, c.target + 1e-4, atom_range=c.atom_range)
    (lo, hi) = elcvx.interval(s, constraints=[c], method="fast")
    (lo_m, hi_m) = elcvx.interval(s, constraints=[moved], method="cvxpy")
    with pytest.raises(AssertionError):
        assert_agree([lo_m, hi_m], [lo, hi])
