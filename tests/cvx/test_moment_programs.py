"""The EL programs with moment constraints ``E_Q[g_j] = b_j`` (``constraints=``, ``atoms=``).

What is checked, and against what:

* on random samples (N = 5 .. 300; continuous and epsilon-greedy weights; ``wmax`` finite and
  infinite; with and without counts) with k = 0 .. 3 random constraints, each primal builder's
  optimum equals its dual's (the MLE; the lower bound at ``phi`` from the *constrained* MLE and
  the chi2 95% quantile; the profile inside the interval) to :data:`elcvx.testing.AGREEMENT`,
  and the primal's constraint multipliers are the dual's variables (the documented signs);
* closed forms: ``q`` from the dual's variables and the atom masses from its constraint
  multipliers meet every moment constraint; the lower bound's optimal ``Q`` meets them too, its
  likelihood constraint is tight, and the profile statistic at the interval's end is the
  quantile; a constraint implied by ``E_Q[1] = E_Q[w] = 1`` changes no optimum;
* mutation: a change of 1e-4 in any builder's objective or in one of its constraints'
  right-hand sides makes the primal = dual check fail whenever its first-order effect on the
  optimum exceeds the tolerance, which the chosen sample makes so for every builder's objective
  and every primal's moment constraints.

Every number here comes from two different programs (or a program and a closed form written
out in this file), never from one program checked against itself.
"""

from __future__ import annotations

import itertools
import math

import cvxpy as cp
import numpy as np
import pytest

from elcvx import programs as P
from elcvx.constraints import MomentConstraint, extra_atoms
from elcvx.errors import InvalidInputError
from elcvx.programs.base import Program
from elcvx.sample import Sample
from elcvx.testing import AGREEMENT, assert_agree

CHI2_95 = 3.841458820694124  # scipy.stats.chi2.ppf(0.95, 1)
MULTIPLIER_TOL = 1e-4  # an interior-point solver meets its tolerances on objective and residuals


# ------------------------------------------------------------------------------------------------
# Samples and constraints
# ------------------------------------------------------------------------------------------------
def draw_weights(rng, n, kind):
    """Weights and their largest possible value: continuous ratios, or epsilon-greedy (5 actions,
    epsilon 0.1, a deterministic target) with three distinct weights."""
    if kind == "continuous":
        return rng.uniform(0, 1, n) / rng.uniform(0.1, 0.9, n), 10.0
    p_greedy, p_other = 1 - 0.1 + 0.1 / 5, 0.1 / 5
    greedy = rng.random(n) < p_greedy
    w = np.where(greedy, np.where(rng.random(n) < 0.5, 1 / p_greedy, 0.0),
                 np.where(rng.random(n) < 0.25, 1 / p_other, 0.0))
    w[0] = 1 / p_greedy  # some w u > 0, else the lower bound is 0 at the edge of the cone
    return w, 1 / p_other


def make_case(seed, n, kind, wmax_kind, counts, k):
    """A sample and ``k`` constraints: ``g = w f`` (``f`` a random prediction in [0, 1]) whose
    target is the mean of ``w f`` over a fresh draw of 20000, atoms' range ``(0, top)`` with
    ``top`` the largest weight (finite also when ``wmax = inf``: at ``w = inf`` the atom's ``g``
    entry is the limit of ``g/w``, 0); and, second, ``g = f - mean(f)`` with target 0 and range
    ``(-1, 1)``."""
    rng = np.random.default_rng(seed)
    w, top = draw_weights(rng, n, kind)
    c = rng.integers(1, 4, n).astype(float) if counts else None
    sample = Sample(w, rng.random(n), counts=c, wmax=top if wmax_kind == "finite" else np.inf)
    constraints = []
    for j in range(k):
        f = rng.random(n)
        if j == 1:
            constraints.append(MomentConstraint(f - f.mean(), 0.0, (-1.0, 1.0), name=f"centred{j}"))
        else:
            w_fresh, _ = draw_weights(rng, 20000, kind)
            target = float(np.mean(w_fresh * rng.random(20000)))
            constraints.append(MomentConstraint(w * f, target, (0.0, top), name=f"cv{j}"))
    return sample, constraints


SIZES = (5, 12, 30, 80, 150, 300, 8, 40, 200)
CASES = [(i, SIZES[i % len(SIZES)], kind, wmax_kind, i % 3 == 1, k)
         for i, (_, kind, wmax_kind, k) in enumerate(itertools.product(
             range(2), ("continuous", "egreedy"), ("finite", "inf"), (0, 1, 2, 3)))]


def case_id(case):
    seed, n, kind, wmax_kind, counts, k = case
    return f"{kind}-N{n}-wmax_{wmax_kind}-k{k}" + ("-counts" if counts else "")


# ------------------------------------------------------------------------------------------------
# Closed forms, written out independently of the builders
# ------------------------------------------------------------------------------------------------
def columns(sample, constraints):
    k = len(constraints)
    G = np.column_stack([c.values for c in constraints]) if k else np.zeros((sample.n_rows, 0))
    return G, np.array([c.target for c in constraints], dtype=float)


def expectations(sample, constraints, q, table, x, rewards=None):
    """``(E_Q[1], E_Q[w], E_Q[g_1], ..., [E_Q[w u]])`` for ``q`` on the rows and the atoms'
    variables ``x``: the mass of an atom with ``w <= 1``, else its weighted mass ``z = w m``
    (contributing ``z/w``, ``z``, ``z g/w``, ``z r``; at ``w = inf`` ``0``, ``z``, ``z g``, ``z r``
    with ``g`` the limit of ``g/w``). ``rewards``: one per atom, for the value row."""
    G, _ = columns(sample, constraints)
    w, u, c = sample.w, sample.u, sample.c
    out = np.concatenate([[c @ q, (c * w) @ q], (c * q) @ G] + ([[(c * w * u) @ q]] if rewards is not None else []))
    for i, (row, xi) in enumerate(zip(table, x)):
        wa, ga = row[0], row[1:]
        r = 0.0 if rewards is None else rewards[i]
        if wa <= 1:
            atom = [xi, xi * wa, *(xi * ga)]
            atom += [xi * wa * r] if rewards is not None else []
        else:
            per = ga / wa if math.isfinite(wa) else ga
            atom = [xi / wa if math.isfinite(wa) else 0.0, xi, *(xi * per)]
            atom += [xi * r] if rewards is not None else []
        out = out + np.array(atom)
    return out


def targets(constraints, v=None):
    return np.array([1.0, 1.0, *(c.target for c in constraints)] + ([v] if v is not None else []))


def atom_values(program, keys):
    return np.array([float(program.constraints[k].dual_value) for k in keys])


def primal_atoms(program, labels):
    return np.array([float(program.variables.get("z_" + a, program.variables.get("m_" + a)).value)
                     for a in labels])


def check_agree(kind, primal_value, dual_value):
    """The cross-check: the scaled likelihood programs' values are ``-l/N`` (primal) and ``l/N``
    (dual); the bound's are both ``v_lb``."""
    actual = -primal_value if kind in ("mle", "profile") else primal_value
    assert_agree(actual, dual_value, tol=AGREEMENT, what=f"{kind}: primal vs dual")


def lambdas(program, k):
    return np.zeros(0) if k == 0 else np.asarray(program.variables["lambda"].value, dtype=float)


def g_multipliers(program, k):
    return np.array([float(program.constraints[f"g{j}"].dual_value) for j in range(k)])


def approx(actual, desired, scale=1.0):
    assert_agree(actual, desired, scale=scale, tol=MULTIPLIER_TOL)


# ------------------------------------------------------------------------------------------------
# Primal = dual on random cases, with the primal-dual relations
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_primal_equals_dual(case):
    sample, cons = make_case(*case)
    w, u, c, N = sample.w, sample.u, sample.c, sample.n
    G, b = columns(sample, cons)
    k = len(cons)
    table = extra_atoms(sample, cons)
    atoms = [f"atom{i}" for i in range(len(table))] if k else ["lo", "hi"]
    keys = [f"atom{i}" for i in range(len(table))] if k else ["wmin", "wmax"]

    # The MLE: -l*/N and l*/N.
    mp, md = P.mle_primal(sample, constraints=cons), P.mle_dual(sample, constraints=cons)
    check_agree("mle", mp.solve(), md.solve())
    loglik = N * md.problem.value
    beta, lam = float(md.variables["beta"].value), lambdas(md, k)
    scale = max(1.0, abs(beta), *np.abs(lam))
    approx(mp.constraints["weight"].dual_value, beta, scale)
    approx(g_multipliers(mp, k), lam, scale)
    approx(mp.constraints["mass"].dual_value, 1 - beta - lam @ b, scale)
    # q_n = 1/(N (1 + beta (w_n - 1) + lambda.(g_n - b))) and the dual's multipliers as atom
    # masses meet every constraint; so does the primal's own solution, to Clarabel's tolerance.
    q = 1 / (N * (1 + beta * (w - 1) + (G - b) @ lam))
    approx(expectations(sample, cons, q, table, atom_values(md, keys)), targets(cons))
    x = primal_atoms(mp, atoms)
    assert_agree(expectations(sample, cons, mp.variables["q"].value, table, x), targets(cons),
                 tol=1e-8)
    approx(N * mp.variables["q"].value, N * q)

    # The lower bound at phi from the constrained MLE, both ends.
    phi = -N * math.log(N) - loglik - CHI2_95 / 2
    lp, ld = P.lower_bound_primal(sample, constraints=cons), P.lower_bound_dual(sample, constraints=cons)
    low = lp.solve(phi=phi)
    check_agree("bound", low, ld.solve(phi=phi))
    assert -1e-9 <= low <= 1 + 1e-9
    gamma, beta, kappa = (float(ld.variables[n].value) for n in ("gamma", "beta", "kappa"))
    lam = lambdas(ld, k)
    scale = max(1.0, abs(gamma), abs(beta), *np.abs(lam))
    approx(lp.constraints["mass"].dual_value, gamma, scale)
    approx(lp.constraints["weight"].dual_value, beta, scale)
    approx(g_multipliers(lp, k), lam, scale)
    approx(lp.constraints["loglik"].dual_value / N, kappa, kappa)
    # Its optimal Q (the primal's, and kappa / a from the dual) meets every constraint, and the
    # likelihood constraint is tight: sum c log q = phi.
    a = gamma + beta * w + G @ lam + w * u
    approx(expectations(sample, cons, kappa / a, table, atom_values(ld, keys)), targets(cons))
    approx(c @ np.log(kappa / a) / N, phi / N)
    q = lp.variables["q"].value
    assert_agree(expectations(sample, cons, q, table, primal_atoms(lp, atoms)), targets(cons),
                 tol=1e-8)
    assert_agree(c @ np.log(q) / N, phi / N, tol=AGREEMENT)
    # kappa eliminated: v_lb = K geomean_c(a) - gamma - beta - lambda.b, K = exp(phi/N + log N).
    K = math.exp(phi / N + math.log(N))
    assert_agree(K * math.exp(c @ np.log(a) / N) - gamma - beta - lam @ b, low, tol=AGREEMENT)
    high = 1 - P.lower_bound_primal(sample, side="upper", constraints=cons).solve(phi=phi)
    assert low <= high + 1e-9

    # The profile inside the interval, and at its lower end (where 2 (l_v - l*) = quantile).
    pp, pd = P.profile_primal(sample, constraints=cons), P.profile_dual(sample, constraints=cons)
    profile_atoms = ([f"{a}{r}" for a in "lh" for r in (0, 1)] if not k
                     else [f"atom{i},{r}" for i in range(len(table)) for r in (0, 1)])
    profile_keys = [f"{a},{r}" for a in keys for r in (0, 1)]
    doubled = np.repeat(table, 2, axis=0)
    rewards = np.tile([0.0, 1.0], len(table))
    inside = [low + t * (high - low) for t in (0.25, 0.5, 0.75)]
    for v in inside + ([low] if low > 1e-3 else []):
        check_agree("profile", pp.solve(v=v), pd.solve(v=v))
        beta, tau, lam = (float(pd.variables["beta"].value), float(pd.variables["tau"].value),
                          lambdas(pd, k))
        scale = max(1.0, abs(beta), abs(tau), *np.abs(lam))
        approx(pp.constraints["value"].dual_value, tau, scale)
        approx(g_multipliers(pp, k), lam, scale)
        approx(pp.constraints["mass"].dual_value, 1 - beta - lam @ b - tau * v, scale)
        q = 1 / (N * (1 + beta * (w - 1) + (G - b) @ lam + tau * (w * u - v)))
        approx(expectations(sample, cons, q, doubled, atom_values(pd, profile_keys), rewards),
               targets(cons, v))
        assert_agree(expectations(sample, cons, pp.variables["q"].value, doubled,
                                  primal_atoms(pp, profile_atoms), rewards), targets(cons, v),
                     tol=1e-8)
        if v == low:
            approx(2 * (N * pd.problem.value - loglik), CHI2_95)


# ------------------------------------------------------------------------------------------------
# Closed-form cases
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed, n, counts", [(20, 6, False), (21, 60, True), (22, 200, False)])
def test_implied_constraint_changes_nothing(seed, n, counts):
    # E_Q[w - 1] = 0 follows from E_Q[1] = E_Q[w] = 1; at the atoms g = w - 1 exactly, so they
    # are given as rows (w, w - 1) at wmin and wmax. Every program keeps the paper's optimum.
    rng = np.random.default_rng(seed)
    w, _ = draw_weights(rng, n, "continuous")
    sample = Sample(w, rng.random(n), counts=rng.integers(1, 4, n).astype(float) if counts else None,
                    wmax=20.0)
    implied = dict(constraints=[MomentConstraint(w - 1, 0.0, (-1.0, 19.0), name="w - 1")],
                   atoms=[[sample.wmin, sample.wmin - 1], [sample.wmax, sample.wmax - 1]])
    N = sample.n
    for name in ("mle_primal", "mle_dual"):
        build = getattr(P, name)
        assert_agree(build(sample, **implied).solve(), build(sample).solve(), what=name)
    phi = -N * math.log(N) - N * P.mle_dual(sample).solve() - CHI2_95 / 2
    low = P.lower_bound_primal(sample).solve(phi=phi)
    for name in ("lower_bound_primal", "lower_bound_dual"):
        assert_agree(getattr(P, name)(sample, **implied).solve(phi=phi), low, what=name)
    for name in ("profile_primal", "profile_dual"):
        build = getattr(P, name)
        assert_agree(build(sample, **implied).solve(v=low + 0.05), build(sample).solve(v=low + 0.05),
                     what=name)


def test_no_constraints_is_the_papers_program():
    # constraints=() and atoms=None: the paper's handles; the default atoms passed explicitly
    # give the same optimum under the general names.
    sample, _ = make_case(30, 25, "continuous", "finite", False, 0)
    for name, handles in [("mle_primal", {"m_lo", "m_hi", "z_hi"}),
                          ("profile_primal", {"m_l0", "m_l1", "z_h0", "z_h1"}),
                          ("lower_bound_dual", {"wmin", "wmax"}),
                          ("profile_dual", {"wmin,0", "wmin,1", "wmax,0", "wmax,1"})]:
        program = getattr(P, name)(sample, constraints=())
        assert handles <= set(program.variables) | set(program.constraints)
        assert "atoms" not in program.info and "lambda" not in program.variables
    table = [[sample.wmin], [sample.wmax]]
    explicit = P.mle_primal(sample, atoms=table)
    assert {"m_atom0", "z_atom1", "m_atom1"} <= set(explicit.variables)
    assert_agree(explicit.solve(), P.mle_primal(sample).solve())


def test_bad_constraints_are_rejected():
    sample, (con,) = make_case(31, 10, "continuous", "finite", False, 1)
    short = MomentConstraint(con.values[:5], 0.0, (0.0, 1.0))
    for build in (P.mle_primal, P.profile_dual, P.lower_bound_dual):
        with pytest.raises(InvalidInputError, match="values but the sample has"):
            build(sample, constraints=[short])
        with pytest.raises(InvalidInputError, match="columns"):
            build(sample, constraints=[con], atoms=[[0.0], [10.0]])
        with pytest.raises(InvalidInputError, match="outside"):
            build(sample, constraints=[con], atoms=[[11.0, 0.0]])


# ------------------------------------------------------------------------------------------------
# Mutation: the cross-check catches a change of 1e-4
# ------------------------------------------------------------------------------------------------
EPS = 1e-4
PAIRS = {"mle_primal": "mle_dual", "profile_primal": "profile_dual",
         "lower_bound_primal": "lower_bound_dual"}
PAIRS.update({d: p for p, d in PAIRS.items()})


def mutants(program):
    """``(what, problem, first-order change of the optimum)`` for a solved ``program``: its
    objective scaled by ``1 + EPS``, and each constraint moved by ``EPS``: an equality's
    right-hand side, an inequality tightened (``a <= b`` becomes ``a + EPS <= b``; cvxpy stores
    ``b >= a`` so). The change is at least ``EPS |optimum|``, resp. ``EPS |multiplier|``, to
    first order (tightening, not loosening: loosening one of two identical rows, such as the
    profile's atoms at ``w = 0`` with rewards 0 and 1, changes nothing)."""
    problem = program.problem
    effects = {name: EPS * abs(float(con.dual_value)) for name, con in program.constraints.items()}
    objective = type(problem.objective)(problem.objective.expr * (1 + EPS))
    yield "objective", cp.Problem(objective, problem.constraints), EPS * abs(problem.value)
    for name, con in program.constraints.items():
        lhs, rhs = con.args
        changed = lhs == rhs + EPS if isinstance(con, cp.constraints.Equality) else lhs + EPS <= rhs
        others = [changed if other is con else other for other in problem.constraints]
        yield name, cp.Problem(problem.objective, others), effects[name]


@pytest.fixture(scope="module")
def mutation_case():
    # Targets moved 0.05 away from the sample's means: l*/N and every multiplier of the primals'
    # constraints are at least 0.046, so a change of 1e-4 moves each optimum by 4.6e-6 or more.
    sample, cons = make_case(5, 60, "continuous", "finite", False, 2)
    cons = [MomentConstraint(c.values, c.target + 0.05, c.atom_range, name=c.name) for c in cons]
    N = sample.n
    loglik = N * P.mle_dual(sample, constraints=cons).solve()
    phi = -N * math.log(N) - loglik - CHI2_95 / 2
    low = P.lower_bound_primal(sample, constraints=cons).solve(phi=phi)
    return sample, cons, dict(phi=phi, v=low + 0.02)


@pytest.mark.parametrize("name", list(PAIRS))
def test_mutation_fails_the_cross_check(name, mutation_case):
    sample, cons, values = mutation_case
    kind = "mle" if name.startswith("mle") else "profile" if name.startswith("profile") else "bound"
    program, partner = (getattr(P, n)(sample, constraints=cons) for n in (name, PAIRS[name]))
    params = {k: values[k] for k in program.parameters}
    order = (lambda x, y: (x, y)) if name.endswith("primal") else (lambda x, y: (y, x))
    value, other = program.solve(**params), partner.solve(**params)
    check_agree(kind, *order(value, other))  # unmutated: they agree
    detected = []
    for what, problem, effect in mutants(program):  # the mutants share the constraint objects
        if effect <= 3 * AGREEMENT * max(1.0, abs(other)):
            continue  # below the tolerance to first order (an atom without mass, say)
        mutant = Program(f"{name} ({what} + 1e-4)", problem, parameters=program.parameters)
        with pytest.raises(AssertionError, match="primal vs dual"):
            check_agree(kind, *order(mutant.solve(**params), other))
        detected.append(what)
    expected = {"objective"} | ({f"g{j}" for j in range(len(cons))} if name.endswith("primal") else set())
    assert expected <= set(detected), detected


def test_programs_speak_the_papers_units_and_take_constraints_later():
    # Program.log_likelihood() is sum_n c_n log Q_n (= -N log N - l*), atom_masses() the atoms'
    # probabilities, so that E_Q[1] = 1 reads directly; with_constraints() rebuilds the builder.
    import math

    import elcvx
    from elcvx import programs

    s = elcvx.Sample([0.0, 2.0, 2.0, 0.5, 3.0], [0.0, 1.0, 0.5, 1.0, 0.2], wmax=10,
                     counts=[1.0, 2.0, 1.0, 3.0, 1.0])
    c = elcvx.MomentConstraint(s.w * np.array([0.2, 0.7, 0.4, 0.9, 0.3]), 0.6,
                               atom_range=lambda w: (0.0, w))
    plain = programs.mle_primal(s)
    for program, model in ((plain, None), (plain.with_constraints([c]), [c])):
        program.solve()
        est = elcvx.estimate(s, constraints=model, method="fast")
        assert_agree(program.log_likelihood(), -s.n * math.log(s.n) - est.loglik, scale=s.n)
        q = program.variables["q"].value
        total = float(s.counts @ q) + sum(program.atom_masses().values())
        assert_agree(total, 1.0, what="E_Q[1]")
    assert plain.with_constraints([c]).name == programs.mle_primal(s, constraints=[c]).name
    with pytest.raises(ValueError, match="has not been solved"):
        programs.lower_bound_primal(s).log_likelihood()


def test_another_value_functional_primal_equals_dual():
    # value=(h, h_lo): the difference of two policies, h = (w_a - w_b) u with E_Q[w_b] = 1 and
    # atoms at the vertices of the two weight ranges (h_lo = min(w_a - w_b, 0) there). The
    # primal and the dual are written separately in the builder; the policy's own value as
    # value=(w u, 0) is the program without value=.
    rng = np.random.default_rng(8)
    n = 80
    wa, wb = rng.choice([0.0, 2.5], n, p=[0.6, 0.4]), rng.choice([0.0, 1.5, 3.0], n)
    sample = Sample(wa, rng.uniform(size=n), wmax=5)
    cons = [MomentConstraint(wb, 1.0, atom_range=(0.0, 4.0))]
    atoms = np.array([[0.0, 0.0], [0.0, 4.0], [5.0, 0.0], [5.0, 4.0]])
    N = sample.n
    loglik = N * P.mle_dual(sample, constraints=cons, atoms=atoms).solve()
    phi = -N * math.log(N) - loglik - CHI2_95 / 2
    h, h_lo = (wa - wb) * sample.u, np.minimum(atoms[:, 0] - atoms[:, 1], 0.0)
    for value in ((h, h_lo), (-h, -np.maximum(atoms[:, 0] - atoms[:, 1], 0.0))):
        primal, dual = (getattr(P, f"lower_bound_{form}")(sample, constraints=cons, atoms=atoms,
                                                          value=value) for form in ("primal", "dual"))
        check_agree("bound", primal.solve(phi=phi), dual.solve(phi=phi))
    own = P.lower_bound_primal(sample, constraints=cons, atoms=atoms,
                               value=(wa * sample.u, np.zeros(4))).solve(phi=phi)
    plain = P.lower_bound_dual(sample, constraints=cons, atoms=atoms).solve(phi=phi)
    check_agree("bound", own, plain)
    with pytest.raises(InvalidInputError, match="4 entries"):
        P.lower_bound_primal(sample, constraints=cons, atoms=atoms, value=(h, h_lo[:3]))
