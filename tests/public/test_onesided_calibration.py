"""calibration="signed-bootstrap": the one-sided threshold against a bootstrap written here, and
the thin-asymptotics note (elcvx.thin) against its definition, on results and in the CLI."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import thin
from elcvx._validation import EL_CALIBRATIONS
from elcvx.errors import InvalidInputError


def _log(n=120, seed=3):
    """A small log with a rare large weight (12 on about 5% of rows) and skewed rewards."""
    rng = np.random.default_rng(seed)
    big = rng.random(n) < 0.05
    w = np.where(big, 12.0, rng.choice([0.3, 0.6], n))
    r = np.where(big, rng.random(n) < 0.8, rng.random(n) < 0.5).astype(float)
    return elcvx.Sample(w, r, wmin=0.2, wmax=12.0)


def test_is_a_calibration_of_interval():
    assert "signed-bootstrap" in EL_CALIBRATIONS


@pytest.mark.parametrize("side", ["lower", "upper"])
def test_threshold_is_the_signed_roots_bootstrap_in_the_world_at_the_chi2_bound(side):
    """The threshold, rebuilt from its definition with the public functions: the world is ``Q``
    at the chi-square(1) one-sided bound (rows ``c Q`` plus the zero-reward atom); each resample
    of N rows from it gives ``T = profile statistic at the world's value`` and the sign of (its
    estimate - that value); the threshold is ``max(z^2, c^2)``, ``c`` the 95% bootstrap critical
    value of the signed roots (of B = 199: the 191st smallest)."""
    s = _log().compress()
    alternative = "greater" if side == "lower" else "less"
    b, seed = 199, 7
    got = elcvx.interval(s, alternative=alternative, calibration="signed-bootstrap",
                         resamples=b, random_state=seed)
    chi2 = elcvx.interval(s, alternative=alternative, calibration="chi2")
    bound = chi2.lower if side == "lower" else chi2.upper
    u = s.u if side == "lower" else 1.0 - s.u
    w, p = s.w, s.c * bound.q
    if bound.w_ex is not None and bound.mass_ex > 0:
        w, u, p = np.append(w, bound.w_ex), np.append(u, 0.0), np.append(p, bound.mass_ex)
    v = float(np.dot(p / p.sum(), w * u))
    # The world's value is the chi-square bound (on the program's scale: 1 - u for the upper).
    assert v == pytest.approx(chi2.low if side == "lower" else 1.0 - chi2.high, abs=1e-6)
    order = np.lexsort((u, w))  # rows in (w, u) order, as the resampler merges them
    w, u, p = w[order], u[order], p[order] / p.sum()
    counts = np.random.default_rng(seed).multinomial(int(s.n), p, size=b)
    roots = []
    for k in counts:
        keep = k > 0
        one = elcvx.Sample(w[keep], u[keep], counts=k[keep], wmin=s.wmin, wmax=s.wmax)
        t = float(elcvx.profile(one, [v]).statistic[0])
        # The resample's estimate without its extra atom's reward: the sign of E_Q[w u] - v over
        # the rows, with the MLE's Q (rho = 0 and rho = 1 agree on the side wherever it matters).
        lo = elcvx.estimate(one, rho=0.0).value
        hi = elcvx.estimate(one, rho=1.0).value
        sign = 1.0 if lo > v else -1.0 if hi < v else 0.0
        roots.append(sign * math.sqrt(t))
    roots = np.sort(roots)
    # The largest c with (1 + #{r_b >= c}) / (B + 1) >= 0.05: 1 + 9 = 10 of the 200.
    c = roots[190]
    want = max(stats.norm.ppf(0.95) ** 2, c * c if c > 0 else 0.0)
    assert got.quantile == pytest.approx(want, rel=1e-6)
    assert got.quantile >= chi2.quantile
    solved = elcvx.interval(s, alternative=alternative, calibration="chi2",
                            confidence_level=stats.chi2.cdf(got.quantile, 1) / 2 + 0.5)
    assert (got.low, got.high) == pytest.approx((solved.low, solved.high), abs=1e-7)


def test_two_sided_uses_each_tail_at_half_alpha():
    """Two-sided at 90%: its lower end is the one-sided 95% lower bound (the same stream: the
    lower side draws first), and its ``quantile`` the larger of the two ends' thresholds."""
    s = _log()
    two = elcvx.interval(s, confidence_level=0.9, calibration="signed-bootstrap", resamples=199,
                         random_state=4)
    low = elcvx.interval(s, confidence_level=0.95, alternative="greater",
                         calibration="signed-bootstrap", resamples=199, random_state=4)
    assert two.low == low.low
    assert two.quantile >= low.quantile >= stats.chi2.ppf(0.9, 1)


def test_refused_where_it_has_no_meaning():
    s = _log()
    with pytest.raises(InvalidInputError, match="signed-bootstrap.*profile"):
        elcvx.profile(s, [0.5], calibration="signed-bootstrap")
    cv = elcvx.MomentConstraint(s.w * 0.5, target=0.5, atom_range=(0.0, 6.0))
    with pytest.raises(InvalidInputError, match="calibration='signed-bootstrap' is not available"):
        elcvx.interval(s, alternative="greater", calibration="signed-bootstrap", constraints=[cv])


def _rows_reference(w):
    """The carrying rows from the definition, plain float sums: (sum w^2)^2 / sum w^4."""
    return sum(a ** 2 for a in w) ** 2 / sum(a ** 4 for a in w)


def test_carrying_rows_against_its_definition():
    rng = np.random.default_rng(1)
    w, r = rng.exponential(1.0, 300), rng.random(300)
    assert thin.carrying_rows(elcvx.Sample(w, r)) == pytest.approx(_rows_reference(w), rel=1e-12)
    # Counts are repeated rows.
    c = rng.integers(1, 4, 300)
    assert thin.carrying_rows(elcvx.Sample(w, r, counts=c)) == pytest.approx(
        _rows_reference(np.repeat(w, c)), rel=1e-12)
    # 4 rows of weight 20 among zeros: 4 rows, whatever the rewards; and no overflow at 1e80.
    for top in (20.0, 1e80):
        s = elcvx.Sample([0.0] * 96 + [top] * 4, [0.0] * 96 + [1, 1, 0, 0], wmax=top)
        assert thin.carrying_rows(s) == pytest.approx(4.0, rel=1e-12)
    assert thin.carrying_rows(elcvx.Sample([0.0, 0.0], [1.0, 0.0], wmax=5)) == 0.0


def _thin_log():
    """Half of sum w r on 4 rows (weight 50): 4 * 50 = 200 against 200 from 400 rows of 1;
    (sum w^2)^2 / sum w^4 = 10400^2 / 25000400 = 4.3 rows."""
    w = np.concatenate([np.full(4, 50.0), np.full(400, 1.0), np.full(196, 0.0)])
    r = np.concatenate([np.ones(4), np.tile([0.0, 1.0], 200), np.zeros(196)])
    return elcvx.Sample(w, r, wmax=50.0)


def test_the_note_on_a_thin_log_and_not_on_a_benign_one():
    res = elcvx.interval(_thin_log(), alternative="greater")
    (note,) = thin.of(res.notes)
    assert "about 4 rows carry the large weights" in note and "el-betting" in note
    rng = np.random.default_rng(0)
    benign = elcvx.Sample(rng.uniform(0.5, 1.5, 2000), rng.random(2000), wmax=2.0)
    assert thin.carrying_rows(benign) > 1000
    assert thin.of(elcvx.interval(benign).notes) == []


def test_the_cli_prints_the_note(tmp_path, capsys):
    from elcvx.cli import main

    s = _thin_log()
    path = tmp_path / "log.csv"
    np.savetxt(path, np.column_stack([s.w, s.r]), delimiter=",", header="w,r", comments="")
    assert main(["evaluate", str(path), "--weight-col", "w", "--reward-col", "r", "--wmax", "50",
                 "--alternative", "greater"]) == 0
    out = capsys.readouterr().out
    assert "note: thin asymptotics: about" in out


@pytest.mark.slow
def test_coverage_where_the_chi2_bound_fails():
    """Two-point weights w in {0, 100}, N = 300 (about 3 rows of weight 100), rewards
    Bernoulli(1/2): the first 300 logs of the one-sided study's cell (docs/onesided). The chi-square
    one-sided 95% bound exceeds the value on 11.7% of them, beyond delta + 2 SE = 7.5%; the
    signed-root bootstrap's on 5.7%."""
    from elcvx.experiments import onesided

    _, _, rows = onesided.one_cell(("two-point-100", 300, 300, 2026))
    a = np.array(rows)
    rates = (a[:, 1:3] > a[:, :1]).mean(axis=0)
    limit = 0.05 + 2 * math.sqrt(0.05 * 0.95 / 300)
    assert list(onesided.CALIBRATIONS) == ["chi2", "signed-bootstrap"]
    assert rates[0] > limit >= rates[1]
