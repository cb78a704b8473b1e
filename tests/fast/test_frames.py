"""The coordinates of the bound's dual (:mod:`elcvx.passes.frames`), against the definitions.

Each test writes ``a = gamma + beta w + lambda . g + h`` of the user's coordinates itself and
checks that a frame's point, rows, linear term and means give the same numbers: a frame is
the same dual with other roundings, and the bound's certificate (which reads the frame's sums)
is only as right as these maps."""

from __future__ import annotations

import numpy as np
import pytest

from elcvx import Sample
from elcvx.constraints import MomentConstraint
from elcvx.passes.frames import BoundFrame
from elcvx.passes.kernels import BoundSums
from elcvx.model import Moments


def _model(seed, k=2):
    rng = np.random.default_rng(seed)
    n = 40
    w = rng.gamma(2.0, 1.0, n)
    s = Sample(w, rng.random(n), wmax=20.0)
    cons = [MomentConstraint(w * rng.random(n), 0.4 + 0.1 * j, atom_range=(0.0, 20.0),
                             name=f"g{j}") for j in range(k)]
    return Moments(s, cons), rng


def _mixing(rng, m):
    T = np.triu(rng.normal(size=(m, m)), 1) + np.eye(m)
    return T


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mixed", [False, True])
def test_a_frames_point_gives_every_row_and_atom_the_users_a(seed, mixed):
    data, rng = _model(seed)
    b = data.b
    T = _mixing(rng, 2 + len(b)) if mixed else None
    frame = BoundFrame(True, b, T)
    y_user = rng.normal(size=2 + len(b))
    y = frame.from_user(y_user)
    # The rows: a = gamma + beta w + lambda . g (h aside), written from the definition, and the
    # frame's features (1, w - 1, g - b) mixed by T: F' = T' F.
    g = data.Gt
    a_user = y_user[0] + y_user[1] * data.w + y_user[2:] @ g
    F = np.vstack([np.ones_like(data.w), data.w - 1.0, g - b[:, None]])
    Fm = F if T is None else T.T @ F
    np.testing.assert_allclose(Fm.T @ y, a_user, rtol=1e-12, atol=1e-12)
    if mixed:  # (the check can fail: features mixed by T instead of T')
        assert not np.allclose((T @ F).T @ y, a_user, rtol=1e-6)
    # The atoms' rows: the same constraint values as the user's rows at the same point.
    B_user, floor_user = data.bound_rows()
    B, floor = frame.rows(data)
    np.testing.assert_allclose(B @ y + floor, B_user @ y_user + floor_user, rtol=1e-12,
                               atol=1e-12)
    # The linear term lin . y = gamma + beta + lambda . b (E_Q[(1, w, g)] = (1, 1, b)).
    assert frame.lin() @ y == pytest.approx(y_user[0] + y_user[1] + y_user[2:] @ b, rel=1e-12)
    # And back.
    np.testing.assert_allclose(frame.to_user(y), y_user, rtol=1e-12, atol=1e-12)
    # Means of F' / a under any weights map to those of (1, w, g) / a.
    q = rng.random(data.w.size)
    want = np.vstack([np.ones_like(data.w), data.w, g]) @ q
    np.testing.assert_allclose(frame.means_to_user(Fm @ q), want, rtol=1e-12)


def test_the_users_frame_changes_nothing():
    data, rng = _model(0)
    frame = BoundFrame(False, data.b)
    y = rng.normal(size=4)
    assert np.array_equal(frame.from_user(y), y) and np.array_equal(frame.to_user(y), y)
    assert np.array_equal(frame.lin(), np.r_[1.0, 1.0, data.b])


def test_decorrelated_makes_the_scatter_diagonal():
    # A scatter with two nearly equal features (the case of fuzz seed 84): mixed by T, the
    # features' correlation matrix (under G) is well conditioned where it was singular to 1e-11
    # (not diagonal: the features' coefficients are rounded to 24 bits), and the feature equal
    # to another but for 1e-6 mixes with it by exactly -1.
    rng = np.random.default_rng(1)
    n = 200
    x = rng.random(n) + 0.5
    F = np.vstack([np.ones(n), x, x + 1e-6 * rng.random(n), rng.random(n)])
    c = np.ones(n)
    r = F / (1.0 + x)
    mean = r @ c / n
    dev = r - mean[:, None]
    sums = BoundSums(0.0, 0.0, float(n), mean, dev @ dev.T, np.zeros(4))
    frame = BoundFrame.decorrelated(np.zeros(2), sums)
    G = r @ r.T

    def condition(S):
        d = np.sqrt(np.diag(S))
        return np.linalg.cond(S / np.outer(d, d))

    assert condition(G) > 1e10
    assert condition(frame.T.T @ G @ frame.T) < 2.0
    assert frame.T[1, 2] == -1.0
    assert np.array_equal(np.diag(frame.T), np.ones(4))
