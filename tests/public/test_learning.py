"""Lower-bound policy learning (elcvx.learning, elcvx.programs.learning).

Where the expected numbers come from:

* gradients: central finite differences of the same objective (``FD_STEP``), to ``GRAD_TOL``
  relative to the largest component -- the issue's 1e-5;
* values: :func:`elcvx.interval` (lower end), :func:`elcvx.estimate` and the IPS mean, which
  ``tests/fast/test_core.py`` and ``tests/cvx/test_paths.py`` check against closed forms and Clarabel;
* true values of policies: :class:`elcvx.learning.SyntheticBandit`, whose expected rewards are
  known in closed form (a sigmoid of a linear score), integrated over 50 000 fixed contexts;
* the DPP program: the fast path, to ``elcvx.testing.AGREEMENT``.
"""

import math
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from extras import need

import elcvx
from elcvx import InvalidInputError, Sample, SolverError
from elcvx import fast
from elcvx.learning import (
    DifferentiablePolicy,
    FitResult,
    Learner,
    LinearSoftmaxPolicy,
    SyntheticBandit,
    VowpalWabbitPolicy,
    fit,
    lower_bound_weights,
    value_and_grad,
)
from elcvx.testing import assert_agree

FD_STEP = 1e-6
GRAD_TOL = 1e-5
CHI2_95 = 3.841458820694124  # scipy.stats.chi2.ppf(0.95, 1)


def finite_differences(f, x, h=FD_STEP):
    """Central differences of a scalar function, one coordinate at a time."""
    out = np.empty(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def assert_gradient(grad, fd, *, tol=GRAD_TOL, what=""):
    scale = float(np.max(np.abs(fd)))
    err = float(np.max(np.abs(grad - fd)))
    assert scale > 0, f"{what}: the finite differences are all zero, nothing is checked"
    assert err <= tol * scale, f"{what}: max error {err:.3g} vs tol {tol:g} x {scale:.3g}"


def value_at(w, r, **kw):
    counts = kw.pop("counts", None)
    wmin, wmax = kw.pop("wmin", 0.0), kw.pop("wmax")
    rmin, rmax = kw.pop("rmin", 0.0), kw.pop("rmax", 1.0)
    s = Sample(w, r, counts=counts, wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
    return value_and_grad(s, **kw)


# ------------------------------------------------------------------------------------------------
# The envelope-theorem gradient of the lower bound, d v_lb / d w
# ------------------------------------------------------------------------------------------------
def _case(name):
    rng = np.random.default_rng(7)
    n = 30
    if name == "interior":  # no extra atom carries mass, beta* interior
        w, u, wmin, wmax = rng.uniform(0.2, 2.0, n), rng.random(n), 0.0, 2.5
    elif name == "atom at wmax":  # mean w < 1: the MLE and the bound put mass on (wmax, 0)
        w, u, wmin, wmax = rng.uniform(0.0, 0.8, n), rng.random(n), 0.0, 5.0
    elif name == "wmax = inf":  # the bound's constraint beta >= 0 is active
        w, u, wmin, wmax = rng.uniform(0.0, 2.0, n), rng.random(n), 0.0, np.inf
    elif name == "binary rewards, wmin > 0":
        w, u, wmin, wmax = rng.uniform(0.3, 3.0, n), (rng.random(n) < 0.5) * 1.0, 0.25, 4.0
    elif name == "counts":
        w, u, wmin, wmax = rng.uniform(0.1, 2.0, n), rng.random(n), 0.0, 10.0
    else:
        raise ValueError(name)
    counts = rng.integers(1, 5, n).astype(float) if name == "counts" else None
    return w, u, counts, wmin, wmax


@pytest.mark.parametrize("name", ["interior", "atom at wmax", "wmax = inf",
                                  "binary rewards, wmin > 0", "counts"])
def test_lower_bound_gradient_matches_finite_differences(name):
    w, u, counts, wmin, wmax = _case(name)
    v, g = value_at(w, u, counts=counts, wmin=wmin, wmax=wmax)
    fd = finite_differences(lambda x: value_at(x, u, counts=counts, wmin=wmin, wmax=wmax)[0], w)
    assert_gradient(g, fd, what=name)
    # The value is the interval's lower end.
    s = Sample(w, u, counts=counts, wmin=wmin, wmax=wmax)
    assert_agree(v, elcvx.interval(s, method="fast").low, tol=1e-12, what="value")


def test_active_constraints_in_the_gradient_cases():
    """The named cases really exercise the active sets they are named after."""
    for name, at_atom, expect_atom in [("interior", False, None),
                                       ("atom at wmax", True, "wmax"),
                                       ("wmax = inf", False, "wmax")]:
        w, u, counts, wmin, wmax = _case(name)
        mle = fast.mle(Sample(w, u, counts=counts, wmin=wmin, wmax=wmax), ())
        s = elcvx.interval(Sample(w, u, counts=counts, wmin=wmin, wmax=wmax), method="fast")
        assert mle.status == "optimal" and mle.at_atom == at_atom, name
        if expect_atom is None:
            assert max(s.lower.mass_ex, s.lower.wmass_ex) < 1e-8, name
        else:
            assert s.lower.w_ex == wmax and s.lower.wmass_ex > 1e-3, name


def test_lower_bound_is_flat_where_both_programs_use_the_atom_at_zero():
    """With wmin = 0 and a large mean weight, beta* = 1 and gamma = 0: v_lb does not depend on w.

    Then ``1 + beta*(w - 1) = w`` and ``gamma + beta w + w u = w (beta + u)``, so ``K geomean(a) =
    exp(-q/2N) geomean(beta + u)`` and ``v_lb`` is locally constant; the envelope formula gives
    exactly 0 (``q_n (beta + u_n) = kappa / w_n = kappa beta*/d_n``).
    """
    rng = np.random.default_rng(0)
    w, u = rng.uniform(0.5, 3.0, 30), rng.random(30)
    mle = fast.mle(Sample(w, u, wmin=0.0, wmax=5.0), ())
    assert mle.status == "optimal" and mle.at_atom and mle.beta == 1.0
    v, g = value_at(w, u, wmax=5.0)
    assert np.max(np.abs(g)) < 1e-12
    fd = finite_differences(lambda x: value_at(x, u, wmax=5.0)[0], w)
    assert np.max(np.abs(fd)) < 1e-8


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 30), wmax=st.sampled_from([3.0, 20.0, np.inf]), seed=st.integers(0, 2**31),
       binary=st.booleans())
def test_lower_bound_gradient_property(n, wmax, seed, binary):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.0, 3.0 if np.isfinite(wmax) else 5.0, n)
    u = (rng.random(n) < 0.5) * 1.0 if binary else rng.random(n)
    s = Sample(w, u, wmax=wmax)
    res = elcvx.interval(s, method="fast")
    # Differentiable points only: a positive bound at a unique optimum (see value_and_grad).
    assume(res.low > 1e-6 and res.lower is not None)
    _, g = value_and_grad(s)
    fd = finite_differences(lambda x: value_at(x, u, wmax=wmax)[0], w)
    if np.max(np.abs(fd)) < 1e-8:  # flat (see the test above)
        assert np.max(np.abs(g)) < 1e-6
    else:
        assert_gradient(g, fd, what=f"n={n}, wmax={wmax}")


@pytest.mark.parametrize("objective", ["estimate", "ips"])
@pytest.mark.parametrize("name", ["interior", "atom at wmax", "counts"])
def test_estimate_and_ips_gradients(objective, name):
    w, u, counts, wmin, wmax = _case(name)
    v, g = value_at(w, u, counts=counts, wmin=wmin, wmax=wmax, objective=objective)
    fd = finite_differences(
        lambda x: value_at(x, u, counts=counts, wmin=wmin, wmax=wmax, objective=objective)[0], w)
    assert_gradient(g, fd, what=f"{objective}, {name}")
    s = Sample(w, u, counts=counts, wmin=wmin, wmax=wmax)
    expected = (elcvx.estimate(s, method="fast", rho="midpoint").value if objective == "estimate"
                else float(np.dot(s.c, w * u)) / s.n)
    assert_agree(v, expected, tol=1e-12, what="value")


def test_gradient_on_the_user_reward_scale():
    w, u, counts, wmin, wmax = _case("interior")
    r = -1.0 + 4.0 * u  # rewards on [-1, 3]
    v, g = value_at(w, r, wmax=wmax, rmin=-1.0, rmax=3.0)
    v_unit, g_unit = value_at(w, u, wmax=wmax)
    assert_agree(v, -1.0 + 4.0 * v_unit, tol=1e-12)
    assert_agree(g, 4.0 * g_unit, tol=1e-12)


# ------------------------------------------------------------------------------------------------
# Through the policy: chain rule to the parameters of the linear softmax policy
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_log():
    bandit = SyntheticBandit(n_features=3, n_actions=3, seed=0)
    return bandit, bandit.log(200, seed=1)


def test_softmax_vector_jacobian_product(small_log):
    _, (X, a, p, r) = small_log
    pol = LinearSoftmaxPolicy(3, 3)
    theta = np.random.default_rng(3).normal(size=12)
    g = np.random.default_rng(4).normal(size=a.size)

    def f(th):
        pol.set_params(th)
        return float(g @ pol.action_probs(X, a))

    pol.set_params(theta)
    assert_gradient(pol.grad_action_probs(X, a, g), finite_differences(f, theta), what="vjp")


@pytest.mark.parametrize("objective", ["lower_bound", "estimate", "ips"])
def test_policy_gradient_matches_finite_differences(small_log, objective):
    bandit, (X, a, p, r) = small_log
    pol = LinearSoftmaxPolicy(3, 3)
    theta = 0.5 * np.random.default_rng(5).normal(size=12)

    def objective_at(th):
        pol.set_params(th)
        w = pol.action_probs(X, a) / p
        return value_and_grad(Sample(w, r, wmax=bandit.wmax), objective=objective)

    _, g_w = objective_at(theta)
    pol.set_params(theta)
    g_theta = pol.grad_action_probs(X, a, g_w / p)
    fd = finite_differences(lambda th: objective_at(th)[0], theta, h=1e-5)
    assert_gradient(g_theta, fd, what=objective)


# ------------------------------------------------------------------------------------------------
# lower_bound_weights
# ------------------------------------------------------------------------------------------------
def test_lower_bound_weights_are_n_times_the_minimising_q():
    w, u, counts, wmin, wmax = _case("counts")
    s = Sample(w, u, counts=counts, wmin=wmin, wmax=wmax)
    weights = lower_bound_weights(s)
    lower = elcvx.interval(s, method="fast").lower
    assert_agree(weights, s.n * lower.q, tol=1e-12)
    assert_agree(lower_bound_weights(s, scale="none"), lower.q, tol=1e-12)
    # Q is a distribution on the rows plus the extra atom, with E_Q[w] = 1 ...
    assert_agree(np.dot(s.c, weights) / s.n + lower.mass_ex, 1.0, tol=1e-9)
    assert_agree(np.dot(s.c, weights * w) / s.n + lower.wmass_ex, 1.0, tol=1e-9)
    # ... and the weighted IPS value at Q is the bound (the atom has reward 0).
    assert_agree(np.dot(s.c, weights * w * u) / s.n, lower.value, tol=1e-9)


def test_lower_bound_weights_cvxpy_path_agrees():
    w, u, counts, wmin, wmax = _case("interior")
    s = Sample(w, u, wmin=wmin, wmax=wmax)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # cvxpy's "may be inaccurate" on a first try
        cvx = lower_bound_weights(s, method="cvxpy")
    # Clarabel's answer is certified (elcvx.cvx.inner.solve_certified): AGREEMENT.
    assert_agree(cvx, lower_bound_weights(s, method="fast"), what="N Q")


# ------------------------------------------------------------------------------------------------
# The DPP program
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_dpp_program_matches_fast_path_and_does_not_recompile(form, monkeypatch):
    from cvxpy.reductions.solvers.solving_chain import SolvingChain

    from elcvx.cvx.inner import solve_certified
    from elcvx.learning.objective import dro_phi
    from elcvx.programs.learning import dro_inner

    rng = np.random.default_rng(11)
    n, wmax = 60, 10.0
    u = rng.random(n)
    p = rng.uniform(0.1, 0.9, n)
    weights = [np.minimum(rng.random(n) / p, wmax) for _ in range(3)]
    prog = dro_inner(Sample(weights[0], u, wmax=wmax), form=form)
    assert prog.problem.is_dpp()
    assert set(prog.parameters) == {"w", "phi"}
    # Compiling goes through the solving chain's apply; re-substituting parameters does not.
    compilations = []
    original = SolvingChain.apply
    monkeypatch.setattr(SolvingChain, "apply", lambda self, *a, **kw: (compilations.append(1),
                                                                       original(self, *a, **kw))[1])
    for k, w in enumerate(weights):
        one = Sample(w, u, wmin=0.0, wmax=wmax)
        mle = fast.mle(one, ())
        assert dro_phi(w, wmax=wmax, quantile=CHI2_95) == pytest.approx(
            -n * np.log(n) - mle.loglik - CHI2_95 / 2, rel=1e-14)
        sol = solve_certified(prog, w=w, mle=mle, quantile=CHI2_95)
        ours = fast.lower_bound(one, (), mle.loglik, CHI2_95, mle_sol=mle)
        # Certified (the bound's error to 1e-7): AGREEMENT, as the other paths.
        assert_agree(sol.value, ours.value, what=f"{form} value, w #{k}")
        assert_agree(sol.q, ours.q, scale=1.0 / n, what=f"{form} q, w #{k}")
        assert_agree([sol.beta, sol.gamma, sol.kappa], [ours.beta, ours.gamma, ours.kappa],
                     what="duals")
    assert compilations == [1], "the program was compiled more than once"


def test_compile_times_table_has_the_measured_fields():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_learning.py"
    spec = importlib.util.spec_from_file_location("bench_learning", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    (row,) = bench.compile_times((50,), repeats=1)
    assert row["N"] == 50 and row["dpp_compile"] > row["dpp_substitute"] > 0
    assert set(row) >= {"const_build", "solve", "fast", "pays_after"}


# ------------------------------------------------------------------------------------------------
# fit
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bandit_log():
    """The example's regime, smaller: a weak epsilon-greedy logger (epsilon = 0.3)."""
    bandit = SyntheticBandit(n_features=4, n_actions=3, seed=0)
    return bandit, bandit.log(600, seed=1)


@pytest.mark.parametrize("solver", ["alternating", "direct"])
@pytest.mark.parametrize("objective", ["lower_bound", "estimate", "ips"])
def test_learned_policy_beats_the_logging_policy(bandit_log, solver, objective):
    bandit, (X, a, p, r) = bandit_log
    pol, history = fit(LinearSoftmaxPolicy(4, 3), X, a, p, r, objective=objective,
                       solver=solver, wmax=bandit.wmax)
    true_value = bandit.value(pol)
    # Margins: at seed 0 the logging policy's true value is 0.645 and every learned policy's
    # was measured >= 0.72 (the optimum is 0.843); 0.05 leaves room for BLAS-level noise.
    assert true_value > bandit.logging_value + 0.05
    assert true_value <= bandit.optimal_value
    assert history[-1].value > history[0].value  # the objective improved on the log


class RecordingSoftmax(LinearSoftmaxPolicy):
    """A learner that records its ridge penalty around each refit (the protocol, pluggable)."""

    def refit(self, X, actions, logging_prob, rewards, sample_weight):
        before = self.penalty(self.get_params())[0]
        super().refit(X, actions, logging_prob, rewards, sample_weight)
        self.penalties.append((before, self.penalty(self.get_params())[0]))


def test_alternating_history_what_holds_and_what_need_not(bandit_log):
    bandit, (X, a, p, r) = bandit_log
    pol = RecordingSoftmax(4, 3)
    pol.penalties = []
    h = fit(pol, X, a, p, r, passes=6, wmax=bandit.wmax).history
    assert [s.step for s in h] == list(range(7)) and len(pol.penalties) == 6
    for prev, step, (pen_start, pen_end) in zip(h, h[1:], pol.penalties):
        # With Q fixed at the previous policy, S(pi_old) is the bound at pi_old (the primal
        # value at the dual solution: equal to the solver's accuracy, AGREEMENT) ...
        assert_agree(step.surrogate_start, prev.value, what="S(pi_old) = v_lb(pi_old)")
        # ... and the learner (L-BFGS from a warm start) does not decrease S - penalty.
        assert step.surrogate_end - pen_end >= step.surrogate_start - pen_start - 1e-12
    # The bound itself need not increase: on this log it falls at some pass.
    drops = [k for k in range(1, len(h)) if h[k].value < h[k - 1].value - 1e-4]
    assert drops, "expected a pass where the lower bound falls (see fit's docstring)"


def test_alternating_without_penalty_stalls_after_one_pass(bandit_log):
    """l2 = 0: the first refit saturates the softmax, whose gradients then vanish (docs)."""
    bandit, (X, a, p, r) = bandit_log
    h = fit(LinearSoftmaxPolicy(4, 3, l2=0.0), X, a, p, r, passes=3, wmax=bandit.wmax).history
    assert h[1].value > h[0].value + 0.1
    assert_agree([s.value for s in h[2:]], [h[1].value] * 2, tol=1e-6)


def test_direct_solver_history_is_monotone_without_penalty(bandit_log):
    bandit, (X, a, p, r) = bandit_log
    res = fit(LinearSoftmaxPolicy(4, 3, l2=0.0), X, a, p, r, solver="direct", wmax=bandit.wmax,
              max_iter=50)
    values = [s.value for s in res.history]
    assert len(values) > 5
    # L-BFGS-B's line search only accepts decreases of -v_lb.
    assert all(b >= a_ - 1e-12 for a_, b in zip(values, values[1:]))
    assert_agree(res.value, values[-1], tol=1e-12)
    # The reported value is the bound of the returned policy.
    pol = res.policy
    s = Sample(pol.action_probs(X, a) / p, r, wmax=bandit.wmax)
    assert_agree(res.value, elcvx.interval(s, method="fast").low, tol=1e-9)


def test_direct_beats_alternating_on_the_objective_it_optimises(bandit_log):
    """Both maximise v_lb; the direct solver follows its gradient, the paper's heuristic does not."""
    bandit, (X, a, p, r) = bandit_log
    alt = fit(LinearSoftmaxPolicy(4, 3), X, a, p, r, wmax=bandit.wmax)
    direct = fit(LinearSoftmaxPolicy(4, 3), X, a, p, r, solver="direct", wmax=bandit.wmax)
    assert direct.value > alt.value


def test_fit_cvxpy_path_compiles_once_and_matches_fast(bandit_log, monkeypatch):
    import elcvx.programs.learning as pl

    bandit, (X, a, p, r) = bandit_log
    X, a, p, r = X[:150], a[:150], p[:150], r[:150]
    builds = []
    original = pl.dro_inner
    monkeypatch.setattr(pl, "dro_inner", lambda *args, **kw: (builds.append(1), original(*args, **kw))[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cvx = fit(LinearSoftmaxPolicy(4, 3), X, a, p, r, wmax=bandit.wmax, method="cvxpy", passes=2)
    fast = fit(LinearSoftmaxPolicy(4, 3), X, a, p, r, wmax=bandit.wmax, method="fast", passes=2)
    assert cvx.path == "cvxpy" and fast.path == "fast"
    assert builds == [1]  # one program for the whole fit
    # Certified inner solves: AGREEMENT.
    assert_agree([s.value for s in cvx.history], [s.value for s in fast.history])
    # Above the crossover, the fast path's duals are used.
    monkeypatch.setattr(pl, "DPP_MAX_ROWS", 100)
    above = fit(LinearSoftmaxPolicy(4, 3), X, a, p, r, wmax=bandit.wmax, method="cvxpy", passes=1)
    assert above.path == "fast" and builds == [1]


def test_fit_on_another_reward_scale_is_the_same_fit(bandit_log):
    bandit, (X, a, p, r) = bandit_log
    unit = fit(LinearSoftmaxPolicy(4, 3), X, a, p, r, solver="direct", wmax=bandit.wmax)
    scaled = fit(LinearSoftmaxPolicy(4, 3), X, a, p, 10.0 * r - 5.0, solver="direct",
                 wmax=bandit.wmax, rmin=-5.0, rmax=5.0)
    assert_agree(scaled.value, 10.0 * unit.value - 5.0, tol=1e-9)
    assert_agree(scaled.policy.get_params(), unit.policy.get_params(), tol=1e-9)


def test_fit_result_unpacks_and_describes_itself(small_log):
    bandit, (X, a, p, r) = small_log
    res = fit(LinearSoftmaxPolicy(3, 3), X, a, p, r, objective="ips", passes=2, wmax=bandit.wmax)
    assert isinstance(res, FitResult)
    policy, history = res
    assert policy is res.policy and len(history) == 3
    assert res.objective == "ips" and res.solver == "alternating" and res.n == 200
    assert res.message == "2 passes" and res.path == "closed form"


def test_default_wmax_is_infinite_and_valid(small_log):
    bandit, (X, a, p, r) = small_log
    res = fit(LinearSoftmaxPolicy(3, 3), X, a, p, r, passes=1)
    tighter = fit(LinearSoftmaxPolicy(3, 3), X, a, p, r, passes=1, wmax=bandit.wmax)
    # The same initial (uniform) policy: a finite wmax can only narrow the interval.
    assert tighter.history[0].value >= res.history[0].value - 1e-12


# ------------------------------------------------------------------------------------------------
# Learners and the protocols
# ------------------------------------------------------------------------------------------------
def test_protocols():
    assert isinstance(LinearSoftmaxPolicy(2, 2), DifferentiablePolicy)
    fake = VowpalWabbitPolicy(2, workspace=FakeWorkspace(2))
    assert isinstance(fake, Learner) and not isinstance(fake, DifferentiablePolicy)


def test_softmax_refit_improves_the_weighted_objective(small_log):
    _, (X, a, p, r) = small_log
    pol = LinearSoftmaxPolicy(3, 3, l2=0.0, max_iter=20)
    s = np.random.default_rng(0).uniform(0.5, 2.0, a.size)
    before = float(np.mean(s * pol.action_probs(X, a) / p * r))
    pol.refit(X, a, p, r, s)
    after = float(np.mean(s * pol.action_probs(X, a) / p * r))
    assert after > before + 0.05


class FakeWorkspace:
    """Honours the calls VowpalWabbitPolicy makes on vowpalwabbit.Workspace."""

    def __init__(self, n_actions, greedy=0):
        self.n_actions, self.greedy = n_actions, greedy
        self.learned, self.predicted, self.finished = [], [], False

    def learn(self, line):
        self.learned.append(line)

    def predict(self, line):
        self.predicted.append(line)
        pmf = [0.0] * self.n_actions
        pmf[self.greedy] = 1.0
        return pmf

    def finish(self):
        self.finished = True


def test_vw_adapter_with_a_fake_workspace():
    ws = FakeWorkspace(3, greedy=2)
    pol = VowpalWabbitPolicy(3, epsilon=0.3, workspace=ws)
    X = np.array([[1.0, 0.0], [0.5, -2.0]])
    assert_agree(pol.probs(X), [[0.1, 0.1, 0.8], [0.1, 0.1, 0.8]], tol=1e-12)
    assert ws.predicted == ["| f0:1", "| f0:0.5 f1:-2"]  # zero features are left out
    assert_agree(pol.action_probs(X, [2, 0]), [0.8, 0.1], tol=1e-12)
    pol.refit(X, [2, 0], [0.5, 0.25], [1.0, 0.5], [2.0, 0.0])
    # Label "action:cost:probability", 1-based, cost = -weight x reward; weight 0 is skipped.
    assert ws.learned == ["3:-2:0.5 | f0:1"]
    pol.close()
    assert ws.finished


def test_vw_adapter_missing_dependency_names_the_extra(monkeypatch):
    from elcvx.io import MissingDependencyError

    monkeypatch.setitem(sys.modules, "vowpalwabbit", None)
    with pytest.raises(MissingDependencyError, match=r"elcvx\[vw\]"):
        VowpalWabbitPolicy(3)


def test_vw_learner_beats_the_logging_policy(bandit_log):
    need("vowpalwabbit")
    bandit, (X, a, p, r) = bandit_log
    pol = VowpalWabbitPolicy(3)
    try:
        res = fit(pol, X, a, p, r, wmax=bandit.wmax)
        assert len(res.history) == 5
        assert bandit.value(pol) > bandit.logging_value + 0.05
    finally:
        pol.close()


def test_direct_solver_needs_a_differentiable_policy(small_log):
    _, (X, a, p, r) = small_log
    pol = VowpalWabbitPolicy(3, workspace=FakeWorkspace(3))
    with pytest.raises(InvalidInputError, match="solver='direct'"):
        fit(pol, X, a, p, r, solver="direct")


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change, match", [
    (dict(objective="lb"), "objective='lb'"),
    (dict(solver="sgd"), "solver='sgd'"),
    (dict(method="gpu"), "method='gpu'"),
    (dict(calibration="t"), "calibration='t'"),
    (dict(confidence_level=1.5), "confidence_level=1.5"),
    (dict(passes=0), "passes=0"),
    (dict(passes=1.5), "passes=1.5"),
    (dict(max_iter=-1), "max_iter=-1"),
    (dict(wmax=2.0), "wmax=2.0 is below max 1/logging_prob"),
    (dict(wmax=float("nan")), "wmax=nan"),
    (dict(rmin=1.0, rmax=0.0), "rmin=1.0"),
])
def test_fit_rejects_bad_options(small_log, change, match):
    _, (X, a, p, r) = small_log
    with pytest.raises(InvalidInputError, match=match.replace("(", r"\(").replace(".", r"\.")):
        fit(LinearSoftmaxPolicy(3, 3), X, a, p, r, **change)


def test_fit_rejects_bad_data(small_log):
    _, (X, a, p, r) = small_log
    pol = LinearSoftmaxPolicy(3, 3)
    bad = a.astype(float)
    bad[4] = 3
    with pytest.raises(InvalidInputError, match=r"actions\[4\]=3\.0 is outside"):
        fit(pol, X, bad, p, r)
    bad[4] = 0.5
    with pytest.raises(InvalidInputError, match=r"actions\[4\]=0\.5 is not an integer"):
        fit(pol, X, bad, p, r)
    q = p.copy()
    q[2] = 0.0
    with pytest.raises(InvalidInputError, match=r"logging_prob\[2\]=0\.0 must lie in \(0, 1\]"):
        fit(pol, X, a, q, r)
    with pytest.raises(InvalidInputError, match=r"rewards\[0\]=2\.0 is outside"):
        fit(pol, X, a, p, np.r_[2.0, r[1:]])
    with pytest.raises(InvalidInputError, match="rewards has length 199 but actions has length 200"):
        fit(pol, X, a, p, r[1:])
    with pytest.raises(InvalidInputError, match="X has 2 columns but the policy has n_features=3"):
        fit(pol, X[:, :2], a, p, r)
    Y = X.copy()
    Y[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match=r"X\[3, 1\]=nan is not finite"):
        fit(pol, Y, a, p, r)
    with pytest.raises(InvalidInputError, match="X must be 2-dimensional"):
        fit(pol, X[:, 0], a, p, r)
    with pytest.raises(InvalidInputError, match="is not a Learner"):
        fit(object(), X, a, p, r)


def test_policy_and_helpers_reject_bad_input():
    with pytest.raises(InvalidInputError, match="n_actions=1 must be at least 2"):
        LinearSoftmaxPolicy(2, 1)
    with pytest.raises(InvalidInputError, match="l2=-1.0 must be >= 0"):
        LinearSoftmaxPolicy(2, 2, l2=-1.0)
    with pytest.raises(InvalidInputError, match="theta has length 3 but this policy has 6"):
        LinearSoftmaxPolicy(2, 2).set_params([1.0, 2.0, 3.0])
    with pytest.raises(InvalidInputError, match="sample must be an elcvx.Sample"):
        lower_bound_weights([1.0, 2.0])
    s = Sample([0.5, 1.5], [0.0, 1.0], wmax=2)
    with pytest.raises(InvalidInputError, match="scale='N'"):
        lower_bound_weights(s, scale="N")
    with pytest.raises(InvalidInputError, match="objective='value'"):
        value_and_grad(s, objective="value")
    with pytest.raises(InvalidInputError, match="rho=2.0 is outside"):
        value_and_grad(s, objective="estimate", rho=2.0)
    with pytest.raises(InvalidInputError, match="epsilon=1.5 must lie in"):
        VowpalWabbitPolicy(2, epsilon=1.5, workspace=FakeWorkspace(2))
    from elcvx.programs.learning import dro_inner

    with pytest.raises(InvalidInputError, match="form='both'"):
        dro_inner(s, form="both")


def test_synthetic_bandit_true_values_are_exact_expectations():
    bandit = SyntheticBandit(n_features=2, n_actions=3, seed=3, n_eval=1000)
    mu = bandit.expected_rewards(bandit.eval_contexts)
    # A deterministic policy that picks action 1 has the mean of mu[:, 1] as its value.
    assert_agree(bandit.value(lambda X: np.tile([0.0, 1.0, 0.0], (X.shape[0], 1))),
                 mu[:, 1].mean(), tol=1e-12)
    assert_agree(bandit.optimal_value, mu.max(axis=1).mean(), tol=1e-12)
    H = bandit.logging_probs(bandit.eval_contexts)
    assert_agree(H.sum(axis=1), np.ones(1000), tol=1e-12)
    assert H.min() == pytest.approx(bandit.pmin) and bandit.wmax == pytest.approx(1 / bandit.pmin)
    # The log's actions follow the logging policy: empirical frequencies (n = 20000) within 4 sd.
    X, a, p, r = bandit.log(20000, seed=0)
    assert_agree(p, bandit.logging_probs(X)[np.arange(a.size), a], tol=1e-12)
    greedy = p > 0.5
    assert abs(greedy.mean() - (1 - bandit.epsilon + bandit.pmin)) < 4 * math.sqrt(0.25 / 20000)


@pytest.mark.parametrize("rows, dpp_fails", [(150, False), (150, True), (1200, False)])
def test_auto_falls_back_to_cvxpy_where_the_fast_path_fails(bandit_log, monkeypatch, rows, dpp_fails):
    """method="auto": a fast-path failure (its numpy solver, elcvx.fast.solve) is
    re-solved by the compiled program (N <= DPP_MAX_ROWS) or, above it or when the program fails
    too, by elcvx.interval's certified cvxpy path. The reference is the fast path on the same
    weights."""
    import elcvx.programs.learning as pl
    from elcvx.learning.objective import Objective

    bandit, (X, a, p, r) = bandit_log
    if rows > a.size:
        bandit, (X, a, p, r) = bandit, bandit.log(rows, seed=2)
    p, r = p[:rows], r[:rows]
    pol = LinearSoftmaxPolicy(4, 3)
    w = pol.probs(X[:rows])[np.arange(rows), a[:rows]] / p
    inner = Objective("lower_bound", 3.841458820694124, "auto")
    reference = inner(Sample(w, r, wmax=bandit.wmax))
    assert reference.path == "fast"
    real = fast.lower_bound
    monkeypatch.setattr(fast, "lower_bound", lambda *args, **kw:
                        real(*args, **kw)._replace(status="max_iter"))
    compiled = []
    if dpp_fails:
        import elcvx.cvx.inner

        monkeypatch.setattr(elcvx.cvx.inner, "solve_certified", lambda *args, **kw: (_ for _ in ()).throw(
            SolverError("forced", solver="CLARABEL", status="user_limit")))
    else:
        original = pl.dro_inner
        monkeypatch.setattr(pl, "dro_inner", lambda *args, **kw: (compiled.append(1), original(*args, **kw))[1])
    got = inner(Sample(w, r, wmax=bandit.wmax))
    assert got.path == "cvxpy"
    assert compiled == ([1] if rows <= pl.DPP_MAX_ROWS and not dpp_fails else [])
    assert_agree(got.value, reference.value, tol=1e-6)
    # the gradient is built from q, which both cvxpy answers give certified: AGREEMENT
    assert_agree(got.grad, reference.grad, scale=float(np.abs(reference.grad).max()))
