"""One-sided EL bounds: ``alternative="greater" | "less"`` of interval and difference.

The reference is the primal program written here from its definition (Q on the rows and on the
four corner atoms ``{wmin, wmax} x {reward 0, reward 1}``, ``E_Q[1] = E_Q[w] = 1``, the
log-likelihood within ``q/2`` of its maximum) and solved by Clarabel, with the threshold of a
one-sided bound at level ``1 - alpha``: the square of the standard normal quantile at ``1 -
alpha`` (``scipy.stats.norm``), which is the chi-square(1) quantile at ``1 - 2 alpha``.
"""

import math

import cvxpy as cp
import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import InvalidInputError, Sample
from elcvx.constraints import MomentConstraint
from elcvx.testing import assert_agree

Z95 = stats.norm.ppf(0.95)  # 1.6448536269514722: the one-sided 95% normal quantile


def a_sample(seed, n=150, wmax=8.0):
    rng = np.random.default_rng(seed)
    w = rng.choice([0.0, 0.5, 1.5, 4.0], size=n, p=[0.3, 0.3, 0.3, 0.1])
    return Sample(w, rng.uniform(size=n), wmax=wmax)


def primal_end(s, quantile, side):
    """``min`` (side="lower") or ``max`` of ``E_Q[w u]`` over the likelihood ball, by Clarabel."""
    w, u, n = s.w, s.u, s.n_rows
    corners = np.array([s.wmin, s.wmax])
    q, m = cp.Variable(n, nonneg=True), cp.Variable(2, nonneg=True)
    m1 = cp.Variable(2, nonneg=True)  # the part of each corner's mass with reward 1
    feasible = [cp.sum(q) + cp.sum(m) == 1, w @ q + corners @ m == 1, m1 <= m]
    mle = cp.Problem(cp.Maximize(cp.sum(cp.log(q))), feasible)
    tol = dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    mle.solve(solver=cp.CLARABEL, **tol)
    value = (w * u) @ q + corners @ m1
    sign = 1.0 if side == "lower" else -1.0
    ball = cp.Problem(cp.Minimize(sign * value),
                      feasible + [cp.sum(cp.log(q)) >= mle.value - quantile / 2])
    ball.solve(solver=cp.CLARABEL, **tol)
    assert mle.status == ball.status == "optimal"
    return sign * ball.value


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
@pytest.mark.parametrize("seed", range(2))
def test_each_side_is_the_primal_end_at_the_squared_normal_quantile(seed, method):
    s = a_sample(seed)
    greater = elcvx.interval(s, alternative="greater", calibration="chi2", method=method)
    less = elcvx.interval(s, alternative="less", calibration="chi2", method=method)
    assert_agree([greater.quantile, less.quantile], [Z95 ** 2] * 2, tol=1e-12)
    assert_agree(greater.low, primal_end(s, Z95 ** 2, "lower"), what="lower bound")
    assert_agree(less.high, primal_end(s, Z95 ** 2, "upper"), what="upper bound")
    # The other end is the reward range's, and only one program was solved.
    assert (greater.high, less.low) == (s.rmax, s.rmin)
    assert greater.upper is None and less.lower is None
    assert (greater.alternative, less.alternative) == ("greater", "less")
    assert greater.status == less.status == "optimal"


def test_the_reference_tells_one_side_from_two():
    # The check above can fail: the two-sided 95% end (threshold 3.84 instead of 2.71) is
    # further out than the agreement tolerance.
    s = a_sample(0)
    two = elcvx.interval(s)
    with pytest.raises(AssertionError):
        assert_agree(two.low, primal_end(s, Z95 ** 2, "lower"))


def test_user_reward_scale_and_calibrations():
    s = a_sample(3)
    scaled = Sample(s.w, 2.0 + 3.0 * s.r, wmax=s.wmax, rmin=2.0, rmax=5.0)
    g = elcvx.interval(s, alternative="greater", calibration="chi2", confidence_level=0.9)
    gs = elcvx.interval(scaled, alternative="greater", calibration="chi2", confidence_level=0.9)
    assert_agree(gs.low, 2.0 + 3.0 * g.low)
    assert gs.high == 5.0
    # F: the F(1, N - 1) quantile at 1 - 2 alpha (scipy), N = 150.
    f = elcvx.interval(s, alternative="less", calibration="f", confidence_level=0.9)
    assert_agree(f.quantile, stats.f.ppf(0.8, 1, 149), tol=1e-12)
    assert_agree(f.high, primal_end(s, stats.f.ppf(0.8, 1, 149), "upper"))


def test_bootstrap_threshold_is_the_two_sided_one_at_one_minus_two_alpha():
    s = a_sample(4, n=60)
    one = elcvx.interval(s, alternative="greater", calibration="bootstrap", resamples=99)
    two = elcvx.interval(s, confidence_level=0.9, calibration="bootstrap", resamples=99)
    # (2 x 0.95 - 1 is 0.8999999999999999 in floating point: agreement to rounding.)
    assert_agree(one.quantile, two.quantile, tol=1e-12)
    assert one.quantile >= Z95 ** 2 - 1e-12
    assert_agree(one.low, two.low, tol=1e-12)


def test_with_a_moment_constraint_and_the_cvxpy_path():
    s = a_sample(5)
    rng = np.random.default_rng(5)
    g = s.w * rng.uniform(size=s.n_rows)  # a control variate with a known mean of 0.5
    cv = [MomentConstraint(g, 0.5, atom_range=(0.0, s.wmax))]
    for method in ("fast", "cvxpy"):
        one = elcvx.interval(s, alternative="greater", constraints=cv, method=method)
        two = elcvx.interval(s, confidence_level=0.9, constraints=cv, method=method)
        assert_agree(one.low, two.low, what=method)
        assert one.high == s.rmax
        assert_agree(one.quantile, two.quantile, tol=1e-12)


def test_difference_one_sided():
    rng = np.random.default_rng(6)
    a = rng.integers(0, 3, 200)
    r = (rng.random(200) < 0.5).astype(float)
    sa = Sample(3 * np.where(a == 0, 0.8, 0.1), r, wmax=3.0)
    sb = Sample(3 * np.where(a == 0, 0.6, 0.2), r, wmax=3.0)
    two = elcvx.difference(sa, sb, confidence_level=0.9)
    g = elcvx.difference(sa, sb, alternative="greater")
    le = elcvx.difference(sa, sb, alternative="less")
    assert_agree([g.low, le.high], [two.low, two.high])
    assert (g.high, le.low) == (1.0, -1.0)
    assert_agree(g.quantile, Z95 ** 2, tol=1e-12)
    assert g.alternative == "greater" and two.alternative == "two-sided"


def test_bad_alternative_and_level():
    s = a_sample(0, n=20)
    with pytest.raises(InvalidInputError, match="'two-sided', 'greater', 'less'"):
        elcvx.interval(s, alternative="above")
    with pytest.raises(InvalidInputError, match="confidence_level=0.5") as err:
        elcvx.interval(s, alternative="greater", confidence_level=0.5)
    assert err.value.field == "confidence_level"
    with pytest.raises(InvalidInputError, match="alternative"):
        elcvx.difference(s, s, alternative="up")
    # Two-sided below 0.5 stays allowed, as before.
    assert math.isfinite(elcvx.interval(s, confidence_level=0.3).low)


def test_the_command_line_one_sided_section(capsys):
    import csv
    import io
    import json

    from elcvx.baselines import lower_bound, upper_bound
    from elcvx.cli import main
    from elcvx.datasets import example_log

    s = example_log()
    assert main(["demo", "--alternative", "greater", "--format", "json"]) == 0
    section = json.loads(capsys.readouterr().out)["one_sided"]
    got = {b["method"]: b for b in section["bounds"]}
    assert list(got) == ["el", "ls", "ix", "eb", "el-betting"]
    el = elcvx.interval(s, alternative="greater")
    assert (got["el"]["low"], got["el"]["high"], got["el"]["parameter"]) == (el.low, 1.0, el.quantile)
    for name in ("ls", "eb", "el-betting"):
        ref = lower_bound(s, method=name)
        assert (got[name]["low"], got[name]["parameter"]) == (ref.low, ref.parameter)
    # CSV: one row per bound, named <method>:<alternative>; the table shows the upper bounds.
    assert main(["demo", "--alternative", "less", "--format", "csv"]) == 0
    rows = {r["method"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert float(rows["ls:less"]["high"]) == upper_bound(s, method="ls").high
    assert float(rows["el:less"]["high"]) == elcvx.interval(s, alternative="less").high
    assert main(["demo", "--alternative", "less"]) == 0
    table = capsys.readouterr().out
    assert ("one-sided 95% upper bounds (--alternative less; EL: signed-bootstrap calibration):"
            in table)
    assert f"{upper_bound(s, method='el-betting').high:.4f}" in table
    # Without --alternative the report has no such section; a bad value is a usage error.
    assert main(["demo", "--format", "json"]) == 0
    assert "one_sided" not in json.loads(capsys.readouterr().out)
    assert main(["demo", "--alternative", "above"]) == 2
    assert "--alternative" in capsys.readouterr().err


def ix_reference(target_prob, logging_prob, u, level, side):
    """IX written from its definition (Gabbianelli, Neu and Papini 2024): with ``gamma = 1/(2
    sqrt N)`` and ``delta = 1 - level``, the lower bound ``sum pi u / (p + gamma) / N - log(1/delta)
    / (2 gamma N)`` clipped to [0, 1]; the upper one is 1 minus that of ``1 - u``."""
    n = target_prob.size
    gamma = 1.0 / (2.0 * math.sqrt(n))
    x = u if side == "greater" else 1.0 - u
    low = float(np.sum(target_prob * x / (logging_prob + gamma))) / n \
        - math.log(1.0 / (1.0 - level)) / (2.0 * gamma * n)
    low = min(max(low, 0.0), 1.0)
    return (low if side == "greater" else 1.0 - low), gamma


@pytest.mark.parametrize("engine, extra", [("memory", []), ("stream", []),
                                           ("stream", ["--max-pairs", "1"])])
@pytest.mark.parametrize("side", ["greater", "less"])
def test_the_command_line_computes_ix_from_the_logging_probabilities(capsys, engine, extra, side):
    # The bundled log has target_prob and logging_prob columns: IX is in the one-sided section,
    # on every engine (stream: compressed to 6 (w, r) rows, or kept in chunks with --max-pairs 1,
    # the files read again for IX), at the library's value and the definition's.
    import json

    pytest.importorskip("pyarrow")
    from elcvx.baselines import lower_bound, upper_bound
    from elcvx.cli import main
    from elcvx.datasets import EXAMPLE_PMIN, example_log, example_log_path

    data = np.genfromtxt(example_log_path(), delimiter=",", names=True)
    ref, gamma = ix_reference(data["target_prob"], data["logging_prob"], data["reward"], 0.9, side)
    bound = lower_bound if side == "greater" else upper_bound
    lib = bound(example_log(), method="ix", confidence_level=0.9, logging_probs=data["logging_prob"])
    end = "low" if side == "greater" else "high"
    assert getattr(lib, end) == pytest.approx(ref, abs=1e-15)
    args = ["evaluate", str(example_log_path()), "--pmin", str(EXAMPLE_PMIN), "--alternative",
            side, "--confidence-level", "0.9", "--engine", engine, *extra]
    assert main([*args, "--format", "json"]) == 0
    section = json.loads(capsys.readouterr().out)["one_sided"]
    ix = {b["method"]: b for b in section["bounds"]}["ix"]
    assert ix[end] == pytest.approx(getattr(lib, end), abs=1e-15)
    assert ix["parameter_name"] == "gamma" and ix["parameter"] == pytest.approx(gamma, abs=1e-15)
    assert not any("IX: not computed" in n for n in section["notes"])
    assert main(args) == 0
    table = capsys.readouterr().out
    assert f"IX          {getattr(lib, end):>8.4f}   gamma = {gamma:.4g}" in table


def test_the_command_line_says_why_ix_is_left_out(tmp_path, capsys):
    # A log of weights has no logging probabilities: IX is left out, and a note says what it needs.
    import json

    from elcvx.cli import main

    path = tmp_path / "w.csv"
    path.write_text("w,r\n0,1\n2,0.5\n2,1\n0,0\n")
    assert main(["evaluate", str(path), "--wmax", "4", "--alternative", "greater",
                 "--format", "json"]) == 0
    section = json.loads(capsys.readouterr().out)["one_sided"]
    assert "ix" not in [b["method"] for b in section["bounds"]]
    assert any(n.startswith("IX: not computed: it needs the logging policy's probability of each "
                            "logged action") and "--logging-prob-col" in n
               for n in section["notes"])
