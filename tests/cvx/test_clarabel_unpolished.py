"""The fast path against Clarabel's own solution of the paper's programs, unpolished.

``tests/cvx/test_paths.py`` compares the two solver paths as users call them; the cvxpy path there
certifies Clarabel's point with the verdict the fast path shares (and, where that fails,
polishes it with the fast path's own active-set method), so it cannot show that the programs
themselves are right. Here each
builder of :mod:`elcvx.programs` (no constraints) is solved by :meth:`Program.solve` and its
``problem.value`` — Clarabel's objective, nothing recomputed — is compared with
:mod:`elcvx.fast.solve` (the active-set Newton method on the duals, written separately) on random samples: epsilon-greedy and continuous weights, ``wmax`` finite and
infinite, counts, binary and continuous rewards.

Tolerance: Clarabel stops when its relative duality gap is below ``tol_gap_rel`` of the
settings that solved (:data:`elcvx.programs.base.ATTEMPTS`, read from ``program.log``); the
value may differ from the optimum by that gap plus the effect of residuals of the same size, so
the check allows ``100 x tol_gap_rel`` of ``max(1, |v|)`` (1e-8 at the first settings). The
largest errors seen over these samples are about 2e-10 (the lower-bound primal). A likelihood
row moved by 1e-4 (the mutation of ``lower_bound_primal`` that once passed the polished
comparison) fails this check.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

from elcvx import Sample
from elcvx import fast
from elcvx import programs as P
from elcvx.programs.base import ATTEMPTS, Program
from elcvx.testing import assert_agree

CHI2_95 = 3.841458820694124  # scipy.stats.chi2.ppf(0.95, 1)


def draw(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    kind = seed % 3
    if kind == 0:
        w, wmax = rng.uniform(0, 1, n) / rng.uniform(0.1, 0.9, n), 10.0
    elif kind == 1:
        w, wmax = rng.choice([0.0, 1.25, 10.0], n, p=[0.5, 0.4, 0.1]), 10.0
    else:
        w, wmax = rng.exponential(size=n), math.inf
    u = rng.uniform(size=n) if seed % 2 else rng.binomial(1, 0.4, n).astype(float)
    counts = rng.integers(1, 5, n).astype(float) if seed % 4 == 0 else None
    return Sample(w, u, wmax=wmax, counts=counts)


def tolerance(program):
    index = program.log[-1][0]  # the settings that solved
    return 100 * ATTEMPTS[index]["tol_gap_rel"]


def fast_reference(s):
    m = fast.mle(s, ())
    ends = {side: fast.lower_bound(s, (), m.loglik, CHI2_95, side=side, mle_sol=m).value
            for side in ("lower", "upper")}
    return m, ends


@pytest.mark.parametrize("seed", range(12))
def test_programs_agree_with_the_fast_path(seed):
    s = draw(seed)
    N = s.n
    m, ends = fast_reference(s)
    for builder, sign in ((P.mle_primal, -1), (P.mle_dual, 1)):
        program = builder(s)
        value = program.solve()
        assert_agree(sign * value, m.loglik / N, tol=tolerance(program), what=program.name)
    phi = -N * math.log(N) - m.loglik - CHI2_95 / 2
    for builder in (P.lower_bound_primal, P.lower_bound_dual):
        for side in ("lower", "upper"):
            program = builder(s, side=side)
            assert_agree(program.solve(phi=phi), ends[side], tol=tolerance(program), what=program.name)
    # The profile at three values inside the interval: -l_v/N (primal) and l_v/N (dual).
    low, high = ends["lower"], 1.0 - ends["upper"]
    v = np.array([low + t * (high - low) for t in (0.2, 0.5, 0.8)])
    ref = fast.profile(s, (), v, mle_sol=m).loglik / N
    for builder, sign in ((P.profile_primal, -1), (P.profile_dual, 1)):
        program = builder(s)
        for vi, li in zip(v, ref):
            assert_agree(sign * program.solve(v=float(vi)), li, tol=tolerance(program),
                         what=f"{program.name} at v = {vi}")


def test_a_likelihood_row_moved_by_1e4_fails_the_check():
    s = draw(1)
    N = s.n
    m, ends = fast_reference(s)
    phi = -N * math.log(N) - m.loglik - CHI2_95 / 2
    program = P.lower_bound_primal(s)
    assert_agree(program.solve(phi=phi), ends["lower"], tol=tolerance(program))
    row = program.constraints["loglik"]
    moved = [c if c is not row else row.args[0] + 1e-4 <= row.args[1]  # phi/N + log N + 1e-4
             for c in program.problem.constraints]
    mutant = Program("lower_bound_primal (likelihood row + 1e-4)",
                     cp.Problem(program.problem.objective, moved), parameters=program.parameters)
    value = mutant.solve(phi=phi)
    with pytest.raises(AssertionError, match="exceeds tol"):
        assert_agree(value, ends["lower"], tol=tolerance(mutant))
