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
