"""elcvx.testing.check_kkt: the optimality conditions of a solved cvxpy program, read from its own
expressions and multipliers (cvxpy's solver tests check primal, dual and complementarity the
same way). Each builder of elcvx.programs passes it at Clarabel's answer, and each condition is
shown able to fail."""

import cvxpy as cp
import numpy as np
import pytest

import elcvx
from elcvx import programs
from elcvx.constraints import reward_model
from elcvx.testing import _gradient, check_kkt

BUILDERS = ["mle_primal", "mle_dual", "profile_primal", "profile_dual", "lower_bound_primal",
            "lower_bound_dual", "cr_estimate_primal", "cr_lower_bound_primal",
            "dro_inner_primal", "dro_inner_dual"]
WITH_CONSTRAINTS = BUILDERS[:6]


def _sample(seed=3, n=40):
    rng = np.random.default_rng(seed)
    w = np.minimum(rng.exponential(1.0, n), 8.0)
    return elcvx.Sample(w, rng.uniform(0, 1, n), wmax=10), rng


def _build(name, constrained=False):
    sample, rng = _sample()
    kwargs = {}
    if constrained:
        n = sample.w.size
        kwargs["constraints"] = [reward_model(sample, rng.uniform(0, 1, n), rng.uniform(0, 1, n))]
    if name == "cr_lower_bound_primal":
        kwargs["w_ex"] = 0.0
    program = getattr(programs, name)(sample, **kwargs)
    if name == "cr_lower_bound_primal":
        program.parameters["phi"].value = 4.0  # a ball around the minimiser (D_mle < 4 here)
    program.solve()
    return program


@pytest.mark.parametrize("name", BUILDERS)
def test_each_builder_meets_its_kkt_conditions(name):
    assert check_kkt(_build(name)).worst() <= 1e-5


@pytest.mark.parametrize("name", WITH_CONSTRAINTS)
def test_each_builder_with_a_moment_constraint_meets_its_kkt_conditions(name):
    assert check_kkt(_build(name, constrained=True)).worst() <= 1e-5


def test_a_moved_primal_point_fails():
    program = _build("mle_primal")
    q = program.problem.variables()[0]
    q.value = q.value * (1 + 1e-3)  # breaks sum c q = 1
    with pytest.raises(AssertionError, match="primal"):
        check_kkt(program)


def test_a_moved_multiplier_fails_stationarity():
    program = _build("lower_bound_dual")
    con = program.constraints["wmax"]
    con.dual_variables[0].value = con.dual_value + 1e-3
    with pytest.raises(AssertionError, match="stationarity"):
        check_kkt(program)


def test_a_negative_multiplier_fails_dual_feasibility():
    program = _build("lower_bound_dual")
    con = program.constraints["wmin"]
    con.dual_variables[0].value = np.asarray(-1e-3)
    with pytest.raises(AssertionError, match="dual"):
        check_kkt(program)


def test_a_multiplier_on_a_slack_constraint_fails_complementarity():
    # minimize x subject to x >= 1 and x <= 5: the second is slack, so its multiplier is 0
    x = cp.Variable()
    slack = x <= 5
    problem = cp.Problem(cp.Minimize(x), [x >= 1, slack])
    problem.solve(solver=cp.CLARABEL)
    check_kkt(problem)
    slack.dual_variables[0].value = np.asarray(1e-3)
    with pytest.raises(AssertionError, match="complementarity"):
        check_kkt(problem)


def test_gradient_of_a_scalar_broadcast_against_a_vector():
    # d/dK sum_n rel_entr(K, a_n) = sum_n (log(K / a_n) + 1): written from the definition. cvxpy
    # 1.9's own expr.grad returns the first term only (the reason check_kkt differentiates).
    K = cp.Variable(nonneg=True)
    a = np.array([0.4, 2.3, 1.3, 0.9])
    K.value = 0.8
    expr = cp.sum(cp.rel_entr(K, a))
    (jac,) = _gradient(expr).values()
    assert jac[0, 0] == pytest.approx(np.sum(np.log(0.8 / a) + 1), rel=1e-8)


def test_a_program_outside_the_rules_is_refused_at_build_naming_the_term():
    from elcvx.errors import InvalidInputError
    from elcvx.programs.base import Program

    x = cp.Variable(2)
    p = cp.Parameter(nonneg=True, value=1.0)
    Program("fine", cp.Problem(cp.Minimize(cp.sum(x)), [cp.log(x) >= 1]))
    with pytest.raises(InvalidInputError, match=r"mine is not a disciplined convex.*log\(var"):
        Program("mine", cp.Problem(cp.Minimize(cp.sum(x)), [cp.log(x) <= 1]))
    with pytest.raises(InvalidInputError, match=r"mine is convex but not DPP.*param"):
        Program("mine", cp.Problem(cp.Minimize(cp.sum(x)), [x * p * p >= 1]))
