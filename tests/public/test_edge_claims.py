"""The last wrong claims and crashes the fuzzing found (issue 36, item 4), each against a reference
written here from the definitions, never against the package's own solvers.

* a broken numba (installed, but its import raises something other than ``ImportError``) made
  every estimate fail: the numpy kernels are used instead, with one warning;
* ``method="cvxpy"`` named feasible models infeasible (the feasibility LP misjudges at weights
  of 1e10), and every method raised ``SolverError`` on an infeasible one the LP called feasible:
  a model is now named infeasible only where a Farkas vector proves it
  (:func:`elcvx.feasibility.certificate`). The references: an interior point made exact in
  rational arithmetic (from :mod:`reference_models`' MLE), and a Farkas vector written from the
  definitions and checked in rational arithmetic;
* fast and auto failed a feasible 4-row model whose target is within 1e-5 of the edge (the
  MLE's multipliers at 6e5 cancel): it is solved again in decorrelated features; reference:
  the reference solver's MLE.

(A weight above ``wmax`` by rounding only: tests/public/test_bad_input.py.)
"""

import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import elcvx
import elcvx.cvx  # (its mle_of is replaced by a failing one below)
import reference_models as R
from elcvx import MomentConstraint, Sample, SolverError, feasibility
from elcvx.errors import InfeasibleConstraintsError
from elcvx.model import Moments
from elcvx.testing import assert_agree

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------------
# A numba whose import raises
# ------------------------------------------------------------------------------------------------
_BROKEN_NUMBA = """
import os, warnings
os.environ.pop("ELCVX_KERNELS", None)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")  # (every warning issued, not one a place)
    import elcvx
    from elcvx.engines import backend

    def numbers():
        s = elcvx.Sample([0.5, 2.0, 1.0, 0.0, 3.0, 1.5], [1.0, 0.0, 0.5, 1.0, 0.25, 0.75], wmax=4.0,
                         counts=[1, 2, 1, 3, 1, 1])
        g = elcvx.MomentConstraint([0.4, 1.0, 0.2, 0.0, 2.5, 0.3], 0.6, atom_range=(0.0, 4.0))
        e, i = elcvx.estimate(s, method="fast"), elcvx.interval(s, method="fast")
        c = elcvx.interval(s, constraints=[g], method="fast")
        assert e.status == i.status == c.status == "optimal", (e.status, i.status, c.status)
        return [e.value, i.low, i.high, c.low, c.high]

    got = [numbers(), numbers()]
    assert backend.kernels() == "numpy", backend.kernels()
told = [str(w.message) for w in caught if "numba" in str(w.message)]
assert len(told) == 1, told
assert told[0].startswith("elcvx: numba is installed but fails to import (%(error)s: "), told
assert "the numpy kernels are used instead" in told[0], told
os.environ["ELCVX_KERNELS"] = "numpy"
assert got == [numbers(), numbers()], got  # the numpy kernels' numbers, to the last bit
os.environ["ELCVX_KERNELS"] = "numba"
try:
    backend.kernels()
except elcvx.errors.MissingDependencyError as exc:
    assert "ELCVX_KERNELS=numba needs numba, which is installed but fails to import " \\
        "(%(error)s: " in str(exc), str(exc)
else:
    raise AssertionError("ELCVX_KERNELS=numba took a numba that does not import")
print("ok")
"""


@pytest.mark.parametrize("error", ["AttributeError", "SystemError", "OSError"])
def test_a_numba_that_fails_to_import_falls_back_to_numpy(tmp_path, error):
    """A ``numba`` package whose import raises ``error`` (as a broken llvmlite or an unsupported
    numpy does) first on the path of a fresh interpreter: estimates and intervals (with a moment
    constraint too) are those of ``ELCVX_KERNELS=numpy`` to the last bit, one warning names the
    error, and ``ELCVX_KERNELS=numba`` raises ``MissingDependencyError`` naming it. (Before the
    fix, the first estimate raised the import's ``error``.)"""
    fake = tmp_path / "numba"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        f"raise {error}('injected by the test: numba cannot be imported here')\n")
    out = subprocess.run([sys.executable, "-c", _BROKEN_NUMBA % {"error": error}], cwd=ROOT,
                         env={"PYTHONPATH": str(tmp_path), "ELCVX_NUM_THREADS": "1",
                              "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


# ------------------------------------------------------------------------------------------------
# References: an exact interior point, an exact Farkas vector
# ------------------------------------------------------------------------------------------------
def _exact(x):
    return Fraction(float(x))


def exact_interior_point(phi, c, alphas, t, q, masses):
    """Row masses ``p > 0`` (per example) and atom masses ``m >= 0`` with ``sum c p phi + sum m
    alpha = t`` exactly, from a floating-point point ``(q, masses)``: the residual is removed
    in rational arithmetic by moving the columns that carry the most mass (one per pivot of
    an exact elimination); None where that leaves a mass negative or the residual outside
    their span. ``phi`` (rows x d), ``alphas`` (atoms x d) as :mod:`reference_models` writes
    them."""
    cols = [[_exact(x) for x in row] for row in np.vstack([phi, alphas])]
    v = [_exact(ci) * _exact(qi) for ci, qi in zip(c, q)] + [_exact(m) for m in masses]
    target = [_exact(x) for x in t]
    d = len(target)
    residual = [target[i] - sum(col[i] * vj for col, vj in zip(cols, v)) for i in range(d)]
    size = [float(vj) * max(1.0, max(abs(float(x)) for x in col)) for col, vj in zip(cols, v)]
    work = [[col[i] for col in cols] + [residual[i]] for i in range(d)]
    pivots, used = [], set()
    for j in sorted(range(len(cols)), key=lambda j: -size[j]):
        free = [i for i in range(d) if i not in used and work[i][j] != 0]
        if not free:
            continue
        i = max(free, key=lambda i: abs(work[i][j]))
        used.add(i)
        pivots.append((i, j))
        for k in range(d):
            if k != i and work[k][j] != 0:
                f = work[k][j] / work[i][j]
                work[k] = [a - f * b for a, b in zip(work[k], work[i])]
        if len(used) == d:
            break
    if any(work[i][-1] != 0 for i in range(d) if i not in used):
        return None
    for i, j in pivots:
        v[j] += work[i][-1] / work[i][j]
    assert all(sum(col[i] * vj for col, vj in zip(cols, v)) == target[i] for i in range(d))
    n = len(q)
    if all(vj > 0 for vj in v[:n]) and all(vj >= 0 for vj in v[n:]):
        return v
    return None


def proves_infeasible(y, phi, alphas, t):
    """Farkas, exactly: ``y . phi >= 0`` at every row and atom, ``y . t <= 0``, and ``y . t <
    0`` or ``y . phi > 0`` at a row: no distribution with every row's mass positive meets
    ``sum c p phi + sum m alpha = t`` (dot it with ``y``)."""
    y = [Fraction(v) for v in y]

    def dot(col):
        return sum(yi * _exact(x) for yi, x in zip(y, col))

    rows, atoms, yt = [dot(r) for r in phi], [dot(a) for a in alphas], dot(t)
    return (min(rows + atoms) >= 0 and yt <= 0 and (yt < 0 or max(rows) > 0))


# ------------------------------------------------------------------------------------------------
# A feasible model at wmax = 7e10 that method="cvxpy" named infeasible
# ------------------------------------------------------------------------------------------------
# The search's case (60 rows, two random constraints and a copy of the first, wmax = 7e10, atoms
# at 7 of the 16 vertices) shrunk to the 7 rows that still gave the wrong verdict: the LP's
# largest least row mass came out below 1e-9 of 1/N, Clarabel did not solve the MLE, and
# method="cvxpy" raised InfeasibleConstraintsError naming g1; the fast path certified it.
_WMAX = 69963881769.55753
_G0 = [2883245984.431207, 14.414664768594909, 1.9413939989814262, 0.10772143084714005,
       1.7619726453856634, 0.51077073887407, 6.415668422151925]


def _feasible_at_7e10():
    s = Sample([3261362812.707645, 18.258491137654133, 5.9416536589426805, 2.0410450699188876,
                2.8787794851605697, 0.9077163356983697, 9.568040819667319],
               [0.2019312108944249, 0.5624304639821467, 0.8507954046460832, 0.19458008428634466,
                0.34636229887691694, 0.15473016198636702, 0.5273696930998159], wmax=_WMAX)
    tied = lambda w: (0.0, 1.0) if math.isinf(w) else (0.0, w)  # noqa: E731
    cons = [MomentConstraint(_G0, 0.44423530912584647, atom_range=tied, name="g0"),
            MomentConstraint([1.3171467993750192, 0.8392392531079498, 1.724523509339182,
                              1.3960629968323999, 0.33369054535185794, 1.2370991868370609,
                              0.6497845866171347], 0.8626822908059335,
                             atom_range=(-8.028045851826409, 9.458247181956494), name="g1"),
            MomentConstraint(_G0, 0.44423530912584647, atom_range=tied, name="copy")]
    lo, hi = -8.028045851826409, 9.458247181956494
    atoms = np.array([[0.0, 0.0, lo, 0.0], [_WMAX, 0.0, lo, 0.0], [_WMAX, 0.0, lo, _WMAX],
                      [_WMAX, 0.0, hi, 0.0], [_WMAX, 0.0, hi, _WMAX], [_WMAX, _WMAX, lo, 0.0],
                      [_WMAX, _WMAX, lo, _WMAX]])
    return s, cons, atoms


def _reference_model(s, cons, atoms):
    G = np.column_stack([c.values for c in cons])
    b = np.array([c.target for c in cons])
    return R.PolicyData(s.w, s.u, s.c, G, b, atoms).likelihood()


def test_the_model_at_7e10_is_feasible_and_cvxpy_does_not_call_it_infeasible():
    """The reference: the reference solver's MLE (rows' least mass 5.6e-13 of 1/N), made an
    exact interior point. Every method answers or raises SolverError, never the infeasibility
    the LP alone would claim (its largest least row mass is below 1e-9 of 1/N); the fast path
    certifies the estimate."""
    s, cons, atoms = _feasible_at_7e10()
    m = _reference_model(s, cons, atoms)
    mle = R.mle(m)
    point = exact_interior_point(m.phi, m.c, m.atoms * m.atom_scale[:, None], m.target, mle.q,
                                 mle.masses)
    assert point is not None
    data = Moments(s, cons, atoms)
    assert feasibility.slack(data) <= feasibility._KEPT  # (what the LP alone says)
    feasibility.check(data, [c.name for c in cons])  # (does not raise)
    assert feasibility.certificate(data) is None
    for method in ("cvxpy", "fast", "auto"):
        try:
            est = elcvx.estimate(s, constraints=cons, atoms=atoms, method=method)
        except SolverError:
            assert method == "cvxpy"
            continue
        assert est.status == "optimal", (method, est.status)


def test_an_unproved_farkas_vector_would_name_the_feasible_model(monkeypatch):
    """The check can fail: were every candidate taken as proof (the LP's verdict, as before),
    the feasible model at 7e10 would be named infeasible again."""
    s, cons, atoms = _feasible_at_7e10()
    monkeypatch.setattr(feasibility, "proves", lambda *args, **kw: True)
    with pytest.raises(InfeasibleConstraintsError):
        feasibility.check(Moments(s, cons, atoms), [c.name for c in cons])


# ------------------------------------------------------------------------------------------------
# An infeasible model at wmax = 1.3e9 that every method failed with SolverError
# ------------------------------------------------------------------------------------------------
_KAPPA = 0.7524189423583978  # the constant column
_HI = 1.7524189423583978  # its atom_range's upper end, and its target
_G1 = [1.28729724013355, -1.4741926433799664, 4.656508282680147, 0.6745827288836352,
       2.7008553178380086, -3.719108500945222, -9.07463784316634, 2.652168207303313,
       1.178725034312582, 2.3672803647150564]


def _infeasible_at_1e9():
    s = Sample([1.576154433119481, 19.655750765082594, 1.289118940492353, 9.789665003597417,
                8.180134701676804, 15.302063663230648, 1.4502890517078915, 9.969609379940678,
                17.251924589589652, 8.239487904106229],
               [0.5195435791899286, 0.006389541503153517, 0.5502923925747931, 0.9683384323137952,
                0.39805969640135064, 0.015837404203920213, 0.2437524127943822, 0.9464502965362778,
                0.8960113086608169, 0.473786886796417], wmax=1305458152.7271912)
    cons = [MomentConstraint(np.full(10, _KAPPA), _HI, atom_range=(_KAPPA - 1.0, _HI),
                             name="constant"),
            MomentConstraint(_G1, min(_G1), atom_range=(min(_G1), max(_G1)), name="g1")]
    return s, cons


def test_an_infeasible_model_at_1e9_is_named_on_every_method():
    """A constant column ``g = 0.75`` whose target is the upper end of its atom_range (1.75):
    only atoms can carry ``E_Q[g] = 1.75``, so every row must be dropped. The reference: the
    Farkas vector ``y = (1.75, 0, -1, 0)`` over ``(1, w, g, g1)``, checked exactly (each row
    gives 1, each atom ``1.75 - g >= 0``, the targets 0). The LP called it feasible (its least
    row mass 4e-9 of 1/N, at weights of 1.3e9), and every method raised SolverError; now each
    names it, as InvalidInputError."""
    s, cons = _infeasible_at_1e9()
    data = Moments(s, cons)
    phi = np.column_stack([np.ones(10), s.w, np.full(10, _KAPPA), _G1])
    alphas = np.array([R.atom_vector(p[0], p[1:]) for p in data.atoms])
    t = np.r_[1.0, 1.0, _HI, min(_G1)]
    assert proves_infeasible([_HI, 0.0, -1.0, 0.0], phi, alphas, t)
    assert feasibility.slack(data) > feasibility._KEPT  # (what the LP alone says)
    y = feasibility.certificate(data)
    assert y is not None and proves_infeasible(y, phi, alphas, t)
    for method in ("fast", "auto", "cvxpy"):
        for call in (elcvx.estimate, elcvx.interval):
            with pytest.raises(InfeasibleConstraintsError, match="constant|g1"):
                call(s, constraints=cons, method=method)


def test_a_farkas_vector_off_by_an_ulp_proves_nothing():
    """:func:`elcvx.feasibility.proves` is exact where it must be: the vector of the model at
    1.3e9 proves it; with its g coefficient one ulp larger in magnitude, ``y . phi`` at the
    atoms with ``g = 1.75`` is negative by 2e-16 while ``y . t`` is too (a margin that does
    not cover it), and it proves nothing."""
    s, cons = _infeasible_at_1e9()
    Rm, A, t = feasibility._columns(Moments(s, cons))
    y = np.array([_HI, 0.0, -1.0, 0.0])
    assert feasibility.proves(y, Rm, A, t)
    off = y.copy()
    off[2] = np.nextafter(-1.0, -2.0)
    phi = Rm.T
    alphas = A.T
    assert not proves_infeasible(off, phi, alphas, t)  # (the exact reference agrees)
    assert not feasibility.proves(off, Rm, A, t)


def test_a_feasible_difference_is_not_named_infeasible_when_clarabel_fails(monkeypatch):
    """A difference of two 3-row samples (``wmax_a = inf``, ``wmax_b = 6.1e5``), no constraint
    of the user's: a row with ``w_a = 1.7e9`` can keep at most 6e-10 of the mass, below the
    LP's 1e-9 of 1/N, so where Clarabel failed, method="cvxpy" named the model infeasible
    ("constraints 0 (w_b)"). The reference: the reference solver's MLE made an exact interior
    point. Clarabel's failure is injected here (on this log it solves it): the SolverError
    stands; both paths' own answers agree."""
    a = Sample([1745901770.2819145, 0.28386286879061634, 0.0],
               [0.0949645749664706, 0.6481733465661289, 0.7233084354466582], counts=[3.0, 3.0, 1.0])
    b = Sample([0.0, 0.0, 135.65098926718295], a.r, counts=a.counts, wmax=610458.0157679551)
    m = R.DifferenceData(a.w, b.w, a.u, a.c, np.array([[0.0, 0.0], [0.0, b.wmax], [np.inf, 0.0]]))
    m = m.likelihood()
    mle = R.mle(m)
    assert exact_interior_point(m.phi, m.c, m.atoms * m.atom_scale[:, None], m.target, mle.q,
                                mle.masses) is not None
    fast, cvx = (elcvx.difference(a, b, method=method) for method in ("fast", "cvxpy"))
    assert fast.status == cvx.status == "optimal"
    assert_agree([cvx.estimate, cvx.low, cvx.high], [fast.estimate, fast.low, fast.high],
                 what="difference, cvxpy against fast")

    def fails(*args, **kw):
        raise SolverError("injected: Clarabel did not solve the MLE", solver="CLARABEL",
                          status="injected")

    monkeypatch.setattr(elcvx.cvx, "mle_of", fails)
    with pytest.raises(SolverError, match="injected"):
        elcvx.difference(a, b, method="cvxpy")


# ------------------------------------------------------------------------------------------------
# A feasible 4-row model at the edge that the fast path (and auto) failed
# ------------------------------------------------------------------------------------------------
def test_a_target_near_the_edge_is_certified_in_decorrelated_features():
    """4 rows with counts, one ``E_Q[w f] = b`` with ``b`` within 1e-5 of what the constraint
    allows, atoms at 2 of the 4 vertices, ``wmax = 4.4``: the MLE's ``beta`` and ``lambda``
    reach 6e5 with opposite signs (the row carrying the mass and the atom at ``(wmax, wmax)``
    have nearly one direction of ``(w - 1, g - b)``), the atom's slack stayed at 1.4e-10, and
    the estimate's error bound at 1.1e-5: fast and auto raised SolverError. The MLE is now
    solved again in decorrelated features and certified. Reference: the reference solver's MLE
    (its estimate range, within AGREEMENT of the reward range, and within the certified
    error)."""
    s = Sample([0.00502782598468081, 0.06573883866587985, 0.16632660148931322, 0.7810601072342355],
               [0.04130364087279481, 0.5711840457812848, 0.3425476360831694, 0.5251765562707148],
               counts=[3.0, 4.0, 1.0, 4.0], wmax=4.398530245563882)
    g = [0.0026390399551967005, 0.027632304969077565, 0.14784640204630897, 0.588445177917895]
    cons = [MomentConstraint(g, 0.819043862519459,
                             atom_range=lambda w: (0.0, 1.0) if math.isinf(w) else (0.0, w))]
    atoms = np.array([[0.0, 0.0], [s.wmax, s.wmax]])
    ref = R.mle(R.PolicyData(s.w, s.u, s.c, np.array(g)[:, None], np.array([cons[0].target]),
                             atoms).likelihood())
    low = float((s.c * ref.q) @ (s.w * s.u))
    high = low + 1.0 - float((s.c * ref.q) @ s.w)
    for method in ("fast", "auto"):
        est = elcvx.estimate(s, constraints=cons, atoms=atoms, method=method)
        assert est.status == "optimal" and est.method == "fast", (method, est.status)
        assert_agree([est.value_range.low, est.value_range.high], [low, high], what=method)
        assert max(abs(est.value_range.low - low), abs(est.value_range.high - high)) <= est.error
        ci = elcvx.interval(s, constraints=cons, atoms=atoms, method=method)
        assert ci.status == "optimal" and ci.low <= est.value_range.low <= high <= ci.high
