"""The closed forms the fast path takes for the paper's small duals (one or two variables, two
atoms) instead of a general routine: each against a reference written here (scipy's NNLS, the
ratio test on whole arrays, numpy's lstsq, the KKT system of a Newton step on one face), and a
small injected error shown to be caught by each comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import nnls

from elcvx.fast import active_set, cone, starts


def _cases(seed, count=400):
    """Random ``(A, g)``: one or two atoms' rows of one or two variables, with the shapes
    the duals have (an atom at 0, one at wmax), rows of mixed sizes, and ``-g`` inside, on
    and outside their cone."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        p, m = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        A = rng.standard_normal((p, m)) * 10.0 ** rng.integers(-3, 3, (p, 1))
        if i % 5 == 0:
            A[:, 0] = np.abs(A[:, 0])  # (rows of one sign in the first variable)
        mu = np.maximum(rng.standard_normal(p), 0.0)
        g = -A.T @ mu if i % 3 else rng.standard_normal(m)
        yield A, g


def _nnls_agrees(fit, A, g):
    """Whether ``fit = (mu, off)`` is scipy's NNLS of ``A'`` and ``-g``: the same residual to
    1e-12 of ``g``'s size, and (the fit is unique: rows independent) the same masses, each
    times its row's size to 1e-10 of it (a row of size 1e-3 beside one of 10 takes a mass of
    1e-11 or none alike: rounding)."""
    mu_ref, off_ref = nnls(A.T, -g)
    mu, off = fit
    scale = max(1.0, float(np.abs(g).max()))
    if abs(off - off_ref) > 1e-12 * scale:
        return False
    if np.linalg.matrix_rank(A) == len(A):
        return bool(np.all(np.abs(mu - mu_ref) * np.linalg.norm(A, axis=1) <= 1e-10 * scale))
    return True


@pytest.mark.parametrize("seed", range(3))
def test_the_cone_fit_is_nnls(seed):
    closed = 0
    for A, g in _cases(seed):
        fit = cone.closed_form(A, g.tolist())
        if fit is None:
            continue
        closed += 1
        assert np.all(fit[0] >= 0)
        assert _nnls_agrees(fit, A, g), (A, g, fit, nnls(A.T, -g))
    assert closed > 300  # (the closed form is the common case, not the exception)


def test_the_cone_fit_leaves_ambiguous_fits_to_nnls():
    # Two atoms of one variable on the same side: any mix of them fits, scipy's choice stands.
    assert cone.closed_form(np.array([[-1.0], [-0.5]]), [0.3]) is None
    # Two rows within 1e-8 of parallel: ill-conditioned.
    assert cone.closed_form(np.array([[1.0, 0.0], [1.0, 1e-9]]), [-1.0, 0.0]) is None
    # Three variables, or three atoms: scipy's.
    assert cone.closed_form(np.eye(2, 3), [1.0, 0.0, 0.0]) is None
    assert cone.closed_form(np.eye(3, 2), [1.0, 0.0]) is None
    # Of opposite signs (the MLE's atoms at 0 and wmax): the one on g's side alone.
    mu, off = cone.closed_form(np.array([[-1.0], [0.9]]), [-0.45])
    assert mu.tolist() == [0.0, 0.5] and off == 0.0


def test_the_nnls_comparison_catches_a_small_error():
    A, g = np.array([[1.0, 0.0], [0.1, 1.0]]), np.array([-0.3, -0.7])
    mu, off = cone.closed_form(A, g.tolist())
    assert _nnls_agrees((mu, off), A, g)
    assert not _nnls_agrees((mu * (1 + 1e-7), off), A, g)
    assert not _nnls_agrees((mu, off + 1e-10), A, g)


def _ratio_test_reference(A, h, x, d, active):
    """The ratio test on whole arrays (the general code's operations)."""
    s = A @ x + h
    rate = A @ d
    rate[active] = 0.0
    rate[np.abs(rate) <= 1e-14 * (np.abs(A) @ np.abs(d))] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(rate < 0, np.maximum(s, 0.0) / -rate, np.inf)
    while len(ratios):
        hit = int(np.argmin(ratios))
        if ratios[hit] > 0.0 or active_set._independent(A, active + [hit]):
            return hit, float(ratios[hit])
        ratios[hit] = np.inf
    return 0, math.inf


def _ratio_cases(seed, count=600):
    """Ratio tests with slacks of 0 (on a face) and just below (off by rounding), rows
    repeated (ties), rows in the working set and small steps."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        p, m = int(rng.integers(1, 7)), int(rng.integers(1, 4))
        A = rng.standard_normal((p, m))
        if i % 7 == 0 and p > 1:
            A[1] = A[0]
        x, d = rng.standard_normal(m), rng.standard_normal(m)
        h = -(A @ x) + np.where(rng.random(p) < 0.3, 0.0, np.abs(rng.standard_normal(p)))
        h[rng.random(p) < 0.1] *= 1 + 1e-16
        if i % 11 == 0:
            d = 1e-15 * d
        if i % 13 == 0:
            x, h = np.zeros(m), np.zeros(p)  # (every slack 0: the start on every face)
        active = [int(j) for j in np.flatnonzero(rng.random(p) < 0.2)][:m - 1]
        yield A, h, x, d, active


@pytest.mark.parametrize("seed", range(2))
def test_the_row_by_row_ratio_test_is_the_array_one(seed):
    for A, h, x, d, active in _ratio_cases(seed):
        got = active_set._ratio_test(A, h, x, d, list(active))
        want = _ratio_test_reference(A, h, x, d, list(active))
        assert got[0] == want[0] and repr(got[1]) == repr(want[1]), (A, h, x, d, active)


def test_the_ratio_comparison_catches_a_dropped_rounding_filter(monkeypatch):
    # A rate of -2.2e-16 from terms of size one is rounding: no crossing. Without the filter the
    # first row would block the step at a ratio of 4.5e15.
    A, h, x = np.array([[1.0, 1.0], [1.0, 2.0]]), np.array([1.0, 1.0]), np.zeros(2)
    d = np.array([-1.0, 1.0 - 2.0 ** -52])  # (rate -2.2e-16: the rounding of 1 - 1)
    want = _ratio_test_reference(A, h, x, d, [])
    assert active_set._ratio_test(A, h, x, d, []) == want == (0, math.inf)
    real = active_set._nearest

    def unfiltered(A, s, rate, d, active):
        return real(A, s, rate, d * 0.0, active)  # (the noise level taken as 0)

    monkeypatch.setattr(active_set, "_nearest", unfiltered)
    assert active_set._ratio_test(A, h, x, d, []) != want


def _multipliers_reference(g, A, active):
    """The working set's least squares multipliers and KKT residual by numpy's lstsq."""
    mu = np.linalg.lstsq(A[active].T, -g, rcond=None)[0]
    residual = g + A[active].T @ mu
    return mu, max(float(np.abs(residual).max()), float(-min(mu.min(), 0.0)))


def _multipliers_agree(got, want, g):
    """The same multiplier and residual to 1e-12 of ``g``'s size."""
    (masses, residual), (mu, residual_ref) = got, want
    scale = max(1.0, float(np.abs(g).max()))
    return bool(np.all(np.abs(masses[masses != 0] - mu) <= 1e-12 * scale)
                and abs(residual - residual_ref) <= 1e-12 * scale)


def test_one_constraints_multiplier_is_lstsqs():
    rng = np.random.default_rng(5)
    for _ in range(500):
        m, p = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        A, g = rng.standard_normal((p, m)), rng.standard_normal(m)
        if rng.random() < 0.5:
            g = -A[0] * rng.random()  # (g balanced by the constraint: a KKT point)
        active = [int(rng.integers(p))]
        got = active_set._multipliers(g, A, active)
        assert _multipliers_agree(got, _multipliers_reference(g, A, active), g)


def test_the_multiplier_comparison_catches_a_small_error():
    A, g = np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([-0.4, -0.9])
    masses, residual = active_set._multipliers(g, A, [0])
    want = _multipliers_reference(g, A, [0])
    assert _multipliers_agree((masses, residual), want, g)
    assert not _multipliers_agree((masses * (1 + 1e-9), residual), want, g)
    assert not _multipliers_agree((masses, residual + 1e-11), want, g)


def _kkt_reference(g, H, a):
    """The Newton step on the line ``a . d = 0`` and its multiplier from the KKT system
    ``[[H, a], [a', 0]] (d, mu) = (-g, 0)``."""
    K = np.zeros((3, 3))
    K[:2, :2], K[:2, 2], K[2, :2] = H, a, a
    sol = np.linalg.solve(K, np.r_[-g, 0.0])
    return sol[:2], sol[2]


def _step_agrees(d, mu, ref, g):
    d_ref, mu_ref = ref
    scale = max(1.0, float(np.abs(d_ref).max()))
    return bool(np.all(np.abs(d - d_ref) <= 1e-9 * scale)
                and abs(float(mu[0]) - mu_ref) <= 1e-9 * max(1.0, abs(mu_ref)))


def test_the_newton_step_on_one_face_is_the_kkt_systems():
    rng = np.random.default_rng(11)
    for _ in range(300):
        L = rng.standard_normal((2, 2)) * 10.0 ** rng.integers(-2, 3, (1, 2))
        H = -(L @ L.T) - 1e-3 * np.eye(2)  # (negative definite, of mixed scales)
        g, a = rng.standard_normal(2), rng.standard_normal(2)
        d, mu = active_set._face_step(g, H, a[None, :], np.zeros(2))
        assert _step_agrees(d, mu, _kkt_reference(g, H, a), g)
        assert abs(float(a @ d)) <= 1e-12 * np.abs(a).max() * np.abs(d).max()


def test_the_step_comparison_catches_a_small_error():
    g, H, a = np.array([0.3, -0.2]), np.array([[-2.0, 0.5], [0.5, -1.0]]), np.array([1.0, 1.0])
    d, mu = active_set._face_step(g, H, a[None, :], np.zeros(2))
    ref = _kkt_reference(g, H, a)
    assert _step_agrees(d, mu, ref, g)
    assert not _step_agrees(d, mu * (1 + 1e-7), ref, g)
    assert not _step_agrees(d * (1 + 1e-7), mu, ref, g)


def test_lapacks_eigenpair_of_one_number():
    # _face_step reads a face of one direction's curvature without eigh: this is what eigh gives.
    rng = np.random.default_rng(2)
    for value in np.r_[rng.standard_normal(50) * 10.0 ** rng.integers(-300, 300, 50), 0.0, -0.0]:
        vals, vecs = np.linalg.eigh(np.array([[value]]))
        assert vals.tolist() == [value] and vecs.tolist() == [[1.0]]


def _lstsq_cases(seed, count=3000):
    """One equation in one unknown, ``(M, b)``, of sizes from 1e-120 to 1e120 (with zeros),
    so that both the closed form's range and numpy's call beyond it are met."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        m = rng.standard_normal() * 10.0 ** rng.uniform(-120, 120)
        b = rng.standard_normal() * 10.0 ** rng.uniform(-120, 120) if i % 50 else 0.0
        yield np.array([[m]]), np.array([b])


def test_one_unknowns_least_squares_is_lstsqs_to_the_bit():
    # The bound's start (:func:`elcvx.fast.starts.least_squares`) solves M coef = s by LAPACK's
    # arithmetic without numpy's call: the same bits as np.linalg.lstsq, whatever the sizes.
    for M, b in _lstsq_cases(3):
        got = starts.least_squares(M, b)
        want = np.linalg.lstsq(M, b, rcond=None)[0]
        assert got.tobytes() == want.tobytes(), (M, b, got, want)
    # (And larger systems are numpy's.)
    M, b = np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])
    assert starts.least_squares(M, b).tobytes() == np.linalg.lstsq(M, b, rcond=None)[0].tobytes()


def test_the_least_squares_comparison_catches_the_quotient():
    # b / m, the obvious closed form, differs from LAPACK's b * (1 / m) in the last bit about
    # one time in four: the bitwise comparison above would catch it.
    differ = sum(float(b[0]) / float(M[0, 0]) != np.linalg.lstsq(M, b, rcond=None)[0][0]
                 for M, b in _lstsq_cases(4, 400))
    assert differ > 20
