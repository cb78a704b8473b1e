"""What the paper's programs share per sample (their atoms and atom rows, made once) and
what they must not (a constrained model's, a negated value's)."""

from __future__ import annotations

import numpy as np
import pytest

import elcvx
from elcvx import constraints as mc
from elcvx.calibration import quantiles
from elcvx.constraints import MomentConstraint
from elcvx.model import Moments, bound_rows


def _sample():
    rng = np.random.default_rng(3)
    w = np.minimum(rng.gamma(2.0, 0.5, 50), 10.0)
    return elcvx.Sample(w, rng.random(50), wmax=10.0)


def test_the_paper_models_share_their_atom_arrays():
    s = _sample()
    mle, lower, upper = Moments(s, ()), Moments(s, (), side="lower"), Moments(s, (), side="upper")
    assert mle.atoms is lower.atoms is upper.atoms
    assert lower.bound_rows()[0] is upper.bound_rows()[0]
    assert mle.atom_rows()[0] is upper.atom_rows()[0]
    # ... equal to what the definitions give, and read-only (no solver can change another's).
    np.testing.assert_array_equal(mle.atoms, [[0.0], [10.0]])
    for have, want in zip(lower.bound_rows(), bound_rows(mle.atoms, np.zeros(2))):
        np.testing.assert_array_equal(have, want)
    for have, want in zip(mle.atom_rows(), mc.dual_rows(mle.atoms, np.zeros(0))):
        np.testing.assert_array_equal(have, want)
    with pytest.raises(ValueError):
        lower.bound_rows()[0][0, 0] = 2.0


def test_other_models_make_their_own():
    s = _sample()
    paper = Moments(s, ())
    g = MomentConstraint(s.w * 0.5, 0.5, atom_range=(0.0, 1.0))
    constrained = Moments(s, [g])
    assert constrained.atoms is not paper.atoms and constrained.atoms.shape == (4, 2)
    negated = Moments(s, ()).negated()
    # (The negated value's least value at the atoms is -h_hi: its bound rows differ.)
    assert negated.bound_rows()[1].tolist() == (-paper.h_hi / np.maximum(1.0, paper.atoms[:, 0])).tolist()
    assert paper.bound_rows()[1].tolist() == [0.0, 0.0]
    other = Moments(s, (), value=(s.w, np.zeros(2), np.full(2, 1.0)))
    assert other.bound_rows()[0] is not paper.bound_rows()[0]


def test_the_kept_quantiles_are_scipys():
    from scipy import stats

    assert quantiles.quantile("chi2", 0.95, 10) == float(stats.chi2.ppf(0.95, 1))
    assert quantiles.quantile("f", 0.9, 7) == float(stats.f.ppf(0.9, 1, 6))
    assert quantiles.quantile("f", 0.9, 7.0) == quantiles.quantile("f", 0.9, 7)
    assert quantiles.quantile("f", 0.9, 1) == float("inf")
