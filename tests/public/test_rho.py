"""The extra atom's reward ``rho``: a number, ``"midpoint"``, ``"snips"``, ``"self-consistent"``.

Each rule is checked against an independent computation: ``beta*`` by scipy's bounded scalar
minimisation of ``-sum c log(1 + beta (w - 1))``, ``V(rho)`` by eq. (vhatmle) written out, the
self-consistent ``rho`` by scipy's root-finding of ``V(rho) = rho`` and SNIPS by its formula; on
the fast path and on the cvxpy path.
"""

import numpy as np
import pytest
from scipy import optimize

import elcvx
from elcvx import MomentConstraint, Sample
from elcvx.testing import assert_agree

# Mean weight below 1 and wmax never observed: the MLE puts mass on an atom at wmax.
W = np.array([0.0, 0.5, 0.5, 0.25, 2.0, 0.0, 0.5, 1.5])
R = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0])
C = np.array([3.0, 2.0, 5.0, 1.0, 1.0, 4.0, 2.0, 1.0])


def sample(rmin=0.0, rmax=1.0):
    return Sample(W, rmin + (rmax - rmin) * R, counts=C, wmax=20.0, rmin=rmin, rmax=rmax)


def v_hat(s, rho_u):
    """Eq. (vhatmle) on the unit scale with beta* from scipy (independent of elcvx's solvers)."""
    d = s.w - 1.0
    low, high = -1.0 / (s.wmax - 1.0), 1.0 / (1.0 - s.wmin)
    res = optimize.minimize_scalar(lambda b: -np.dot(s.c, np.log1p(b * d)), bounds=(low, high),
                                   method="bounded", options={"xatol": 1e-14})
    beta = res.x
    return rho_u + np.dot(s.c, s.w * (s.u - rho_u) / (1.0 + beta * d)) / s.n


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_self_consistent_rho_is_the_root_of_v_equals_rho(method):
    s = sample()
    res = elcvx.estimate(s, rho="self-consistent", method=method)
    root = optimize.brentq(lambda x: v_hat(s, x) - x, 0.0, 1.0, xtol=1e-14)
    assert res.depends_on_rho  # the atom carries mass: the rule matters here
    assert_agree(res.value, root, what="V(rho) = rho by root-finding")
    assert res.rho == res.value and res.rho_rule == "self-consistent"


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_self_consistent_rho_is_the_el_weighted_self_normalised_mean(method):
    # The fixed point of V(rho) = base + wmass rho is base / (1 - wmass)
    # = sum c q w u / sum c q w (docs/rho.md): SNIPS with the weights q w.
    s = sample(-1.0, 3.0)
    res = elcvx.estimate(s, rho="self-consistent", method=method)
    cqw = s.c * res.q * s.w
    assert_agree(res.value, -1.0 + 4.0 * np.dot(cqw, s.u) / cqw.sum(), scale=4.0,
                 what="sum c q w r / sum c q w")


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_snips_rho_is_the_authors_interpolation(method):
    # The authors' code reports snips * V(rmax) + (1 - snips) * V(rmin) on rewards in [0, 1];
    # on [rmin, rmax] the weight of V(rmax) is SNIPS on the unit scale.
    s = sample(2.0, 7.0)
    snips = float(np.dot(s.c, s.w * s.r) / np.dot(s.c, s.w))  # the formula, not elcvx.baselines
    vmin = elcvx.estimate(s, rho=2.0, method=method).value
    vmax = elcvx.estimate(s, rho=7.0, method=method).value
    res = elcvx.estimate(s, rho="snips", method=method)
    t = (snips - 2.0) / 5.0
    assert_agree(res.value, t * vmax + (1 - t) * vmin, scale=5.0, what="authors' interpolation")
    assert_agree(res.rho, snips, scale=5.0, what="rho = SNIPS")
    assert res.value_range == (vmin, vmax)


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_midpoint_and_numbers(method):
    s = sample(2.0, 7.0)
    mid = elcvx.estimate(s, rho="midpoint", method=method)
    assert mid.rho == 4.5 and mid.rho_rule == "midpoint"
    assert_agree(mid.value, 2.0 + 5.0 * v_hat(s, 0.5), scale=5.0, what="V(1/2)")
    for rho in (2.0, 3.0, 7.0):
        res = elcvx.estimate(s, rho=rho, method=method)
        assert res.rho == rho and res.rho_rule == "number"
        assert_agree(res.value, 2.0 + 5.0 * v_hat(s, (rho - 2.0) / 5.0), scale=5.0, what=f"V({rho})")


def test_the_rules_differ_here_and_coincide_without_atom_mass():
    s = sample()
    vals = {r: elcvx.estimate(s, rho=r).value for r in ("midpoint", "snips", "self-consistent")}
    assert len({round(v, 9) for v in vals.values()}) == 3
    # mean weight 1 (0.5 and 1.5): beta* = 0, no atom mass, every rule gives IPS = SNIPS.
    even = Sample([0.5, 1.5, 0.5, 1.5], [1.0, 0.0, 0.0, 1.0], wmax=20.0)
    for r in ("midpoint", "snips", "self-consistent", 0.0):
        res = elcvx.estimate(even, rho=r)
        assert not res.depends_on_rho
        assert_agree(res.value, 0.5, what=f"rho={r!r}")  # (0.5 + 1.5) / 4, by hand


def test_no_weight_on_the_rows_gives_the_midpoint():
    # Every w = 0: V(rho) = rho for every rho (every rho is a fixed point) and SNIPS is 0/0;
    # both rules take the midpoint, as the docstrings say.
    s = Sample([0.0, 0.0, 0.0], [1.0, 0.0, 1.0], wmax=5.0, rmin=-1.0, rmax=1.0)
    for r in ("snips", "self-consistent"):
        res = elcvx.estimate(s, rho=r)
        assert res.value == res.rho == 0.0
        assert res.value_range == (-1.0, 1.0)


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_rules_with_a_moment_constraint(method):
    # Several extra atoms: one rho for all, V(rho) = base + wmass rho with wmass = 1 - sum c q w.
    s = sample()
    g = s.w * np.where(np.arange(s.w.size) % 2 == 0, 0.2, 0.7)
    target = float(np.dot(s.c, g) / s.n) - 0.02
    cons = MomentConstraint(g, target, atom_range=(0.0, s.wmax))
    res = elcvx.estimate(s, rho="self-consistent", constraints=cons, method=method)
    cqw = s.c * res.q * s.w
    assert res.lambdas[0] != 0.0  # the constraint binds: q is not the plain MLE's
    assert_agree(res.value, np.dot(cqw, s.u) / cqw.sum(), what="sum c q w u / sum c q w")
    snips = float(np.dot(s.c, s.w * s.u) / np.dot(s.c, s.w))
    by_rule = elcvx.estimate(s, rho="snips", constraints=cons, method=method)
    by_number = elcvx.estimate(s, rho=snips, constraints=cons, method=method)
    assert_agree(by_rule.value, by_number.value, what="rho='snips' is rho=SNIPS")
    lo, hi = by_rule.value_range
    assert_agree(by_rule.value, lo + snips * (hi - lo), what="linear in rho")


@pytest.mark.parametrize("bad, match", [
    ("foo", r"rho='foo' is not valid; give a number in \[rmin, rmax\] = \[0.0, 1.0\] or one of "
            r"'midpoint', 'snips', 'self-consistent'"),
    ("SNIPS", "rho='SNIPS' is not valid"),
    (1.5, r"rho=1.5 is outside \[rmin, rmax\]"),
    (float("nan"), "rho=nan must be finite"),
    ([0.5], r"rho=\[0.5\] is not valid"),
])
def test_bad_rho_is_named(bad, match):
    with pytest.raises(elcvx.InvalidInputError, match=match):
        elcvx.estimate(sample(), rho=bad)


def test_repr_shows_the_range_only_when_rho_matters():
    s = sample()
    text = repr(elcvx.estimate(s, rho="snips"))
    lo, hi = elcvx.estimate(s).value_range
    assert f"value_range=({lo!r}, {hi!r})" in text and "(snips)" in text
    res = elcvx.estimate(Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10))
    # 0.78391080576523: the self-consistent rho of this sample as the 2-d solvers found it.
    assert_agree(res.rho, 0.78391080576523, tol=1e-12, what="rho")
    point = repr(res)
    assert "value_range" not in point and f"rho={res.rho!r} (self-consistent)" in point


def test_depends_on_rho_threshold_is_relative_to_the_reward_range():
    # wmass = 1 - sum c q w; the range's width is wmass (rmax - rmin): 1e-3 of the range is the
    # threshold whatever the units.
    for scale in (1.0, 1000.0):
        s = Sample([0.5, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 0.0], wmax=3.0, rmax=scale)
        res = elcvx.estimate(s)
        width = res.value_range.high - res.value_range.low
        assert_agree(width, res.wmass_ex * scale, scale=scale, what="width = wmass (rmax - rmin)")
        assert res.depends_on_rho == (res.wmass_ex > 1e-3)


# ------------------------------------------------------------------------------------------------
# The command line: --rho, and the estimate's range wherever the estimate is printed
# ------------------------------------------------------------------------------------------------
@pytest.fixture
def atom_log(tmp_path):
    """The counted sample above, one row per example, as a CSV log (rewards in [0, 1])."""
    path = tmp_path / "log.csv"
    rows = ["w,r"] + [f"{float(w)!r},{float(r)!r}" for w, r, c in zip(W, R, C) for _ in range(int(c))]
    path.write_text("\n".join(rows) + "\n")
    return path


def cli(capsys, *args):
    from elcvx.cli import main

    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("rho", ["midpoint", "snips", "self-consistent", "0.25"])
def test_cli_rho_json_and_table(capsys, atom_log, rho):
    want = elcvx.estimate(sample(), rho=rho if not rho[0].isdigit() else float(rho))
    base = ["evaluate", atom_log, "--weight-col", "w", "--reward-col", "r", "--wmax", "20", "--rho", rho]
    status, out, _ = cli(capsys, *base, "--format", "json")
    rep = __import__("json").loads(out)
    assert status == 0
    assert_agree(rep["results"][0]["estimate"], want.value, what="EL's estimate")
    assert_agree(rep["el_value_range"], list(want.value_range), what="its range")
    assert rep["el_depends_on_rho"] is True
    assert rep["rho"]["rule"] == want.rho_rule
    assert_agree(rep["rho"]["value"], want.rho, what="rho")
    status, out, _ = cli(capsys, *base)
    el = [line for line in out.splitlines() if line.startswith("EL ")][0]
    assert f"estimate over rho: {want.value_range.low:.4f} to {want.value_range.high:.4f}" in el
    assert f"shown at rho = {want.rho:.4g}" in out


def test_cli_csv_has_the_range_only_for_el_and_only_when_it_matters(capsys, atom_log):
    import csv
    import io

    status, out, _ = cli(capsys, "evaluate", atom_log, "--weight-col", "w", "--reward-col", "r",
                         "--wmax", "20", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    # (The log's rows, one per example, as the command reads them: sample()'s counts would sum
    # in another order.)
    log = elcvx.io.read_log(atom_log, weight="w", reward="r", wmax=20)
    lo, hi = elcvx.estimate(log.sample).value_range
    assert (float(rows[0]["estimate_low"]), float(rows[0]["estimate_high"])) == (lo, hi)
    assert_agree([lo, hi], elcvx.estimate(sample()).value_range, tol=1e-12)
    assert all(r["estimate_low"] == r["estimate_high"] == "" for r in rows[1:])
    # The bundled example log's estimate is a point: no range, no note.
    status, out, _ = cli(capsys, "demo", "--format", "csv")
    assert all(r["estimate_low"] == "" for r in csv.DictReader(io.StringIO(out)))
    status, out, _ = cli(capsys, "demo")
    assert "over rho" not in out and "note: EL" not in out


def test_cli_profile_shows_the_range(capsys, atom_log):
    status, out, _ = cli(capsys, "profile", atom_log, "--weight-col", "w", "--reward-col", "r",
                         "--wmax", "20", "--rho", "snips")
    want = elcvx.estimate(sample(), rho="snips")
    assert status == 0
    assert (f"EL estimate {want.value:.4f} (over rho: {want.value_range.low:.4f} to "
            f"{want.value_range.high:.4f}; rho = {want.rho:.4g} (snips))") in out


@pytest.mark.parametrize("rho, fragment", [
    ("middle", "argument --rho: 'middle' is not a number nor one of midpoint, snips, self-consistent"),
    ("1.5", "rho=1.5 is outside [rmin, rmax]"),
])
def test_cli_bad_rho(capsys, atom_log, rho, fragment):
    status, out, err = cli(capsys, "evaluate", atom_log, "--weight-col", "w", "--reward-col", "r",
                           "--wmax", "20", "--rho", rho)
    assert status == 2 and out == ""
    assert err.startswith("elcvx: error: ") and fragment in err and len(err.splitlines()) == 1
