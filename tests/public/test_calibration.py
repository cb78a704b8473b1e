"""``calibration="bootstrap"`` (elcvx.calibration.bootstrap) and the calibration study.

The batch solver is checked against the fast path's scalar solvers on every resample (an
independent implementation: active-set Newton on each resample alone); the critical value and
p-value against their closed forms on a known set of statistics; the interval against its own
definition (the profile statistic at each endpoint equals the threshold).
"""

import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import Sample, cli
from elcvx.calibration import bootstrap
from elcvx import dispatch
from elcvx import fast
from elcvx.errors import InvalidInputError
from elcvx.experiments import calibration, synthetic
from elcvx.testing import assert_agree

CHI2 = stats.chi2.ppf(0.95, 1)


def synthetic_sample(n, index, seed=2020):
    rng = synthetic.replicate_rng(seed, n, index)
    env = synthetic.draw_environment(rng)
    return env.sample(n, rng), env.value


def continuous_sample(n=60, wmax=np.inf, seed=3):
    rng = np.random.default_rng(seed)
    w = rng.exponential(1.0, n)
    return Sample(np.minimum(w, 8.0), rng.uniform(size=n), wmax=wmax)


def scalar_statistics(w, u, counts, wmin, wmax, v0):
    out = []
    for c in counts:
        keep = c > 0
        one = Sample(w[keep], u[keep], counts=c[keep], wmin=wmin, wmax=wmax)
        mle = fast.mle(one, ())
        prof = fast.profile(one, (), [v0], mle_sol=mle)
        out.append(max(2.0 * (prof.loglik[0] - mle.loglik), 0.0))
    return np.array(out)


@pytest.mark.parametrize("sample", [
    synthetic_sample(10, 0)[0],        # every resample leans on the extra atom (corners bind)
    synthetic_sample(10_000, 1)[0],    # about one w = 1000 row: K* = 0 in a third of resamples
    synthetic_sample(100_000, 5)[0],   # about ten
    continuous_sample(),               # wmax = inf: the corner constraints are beta + tau r >= 0
    continuous_sample(wmax=10.0),
], ids=["N=10", "N=1e4", "N=1e5", "wmax=inf", "wmax=10"])
def test_batch_statistics_match_the_fast_path_resample_by_resample(sample):
    s = sample.compress()
    mle, _ = dispatch.mle(s, "fast")
    w, u, p, v0 = bootstrap.world(s, mle)
    counts = np.random.default_rng(0).multinomial(int(s.n), p, size=20).astype(float)
    batch, fallbacks = bootstrap.batch_statistics(w, u, counts, s.wmin, s.wmax, v0)
    assert fallbacks == 0
    assert_agree(batch, scalar_statistics(w, u, counts, s.wmin, s.wmax, v0), scale=1.0,
                 tol=1e-6, what="bootstrap statistics")


def test_world_is_the_fitted_el_distribution():
    s, _ = synthetic_sample(1000, 2)
    mle, _ = dispatch.mle(s, "fast")
    w, u, p, v0 = bootstrap.world(s, mle)
    assert abs(p.sum() - 1.0) < 1e-12
    assert abs(np.dot(p, w) - 1.0) < 1e-9  # E_Q[w] = 1, as the truth
    # Its value is the EL point estimate with the extra atom's reward at the midpoint.
    assert_agree(v0, s.to_unit(elcvx.estimate(s, rho=0.5, method="fast").value), what="v0")


def test_critical_value_and_pvalue_closed_forms():
    t = np.arange(1.0, 1000.0)  # B = 999 distinct statistics 1..999
    # p(t) = (1 + #{T >= t}) / 1000 >= 0.05 iff #{T >= t} >= 49 iff t <= 951.
    assert bootstrap.critical_value(t, 0.95) == 951.0
    np.testing.assert_allclose(bootstrap.pvalue(t, [951.0, 951.5, 0.0, np.inf]),
                               [50 / 1000, 49 / 1000, 1.0, 0.0])
    # With 19 resamples at 95% no statistic has 0 others above it and a p-value >= 0.05 ...
    assert bootstrap.critical_value(np.arange(1.0, 20.0), 0.95) == np.inf
    # ... and with 39, the largest does: p = (1 + 1) / 40.
    assert bootstrap.critical_value(np.arange(1.0, 40.0), 0.95) == 39.0


def test_bootstrap_interval_is_reproducible_and_at_least_the_chi2_interval():
    s, _ = synthetic_sample(100_000, 5)
    a = elcvx.interval(s, calibration="bootstrap", random_state=7)
    b = elcvx.interval(s, calibration="bootstrap", random_state=7)
    chi2 = elcvx.interval(s)
    assert (a.low, a.high, a.quantile) == (b.low, b.high, b.quantile)
    assert a.calibration == "bootstrap" and a.quantile >= CHI2
    assert a.low <= chi2.low and a.high >= chi2.high
    # On this sample the bootstrap raises the threshold (it would not be tested otherwise) ...
    assert a.quantile > CHI2 + 0.1
    # ... and each endpoint is on the level set of the profile statistic at that threshold.
    prof = elcvx.profile(s, [a.low, a.high], method="fast")
    assert_agree(prof.statistic, [a.quantile, a.quantile], tol=1e-5, what="statistic at endpoints")


def test_bootstrap_threshold_does_not_depend_on_the_path():
    s = continuous_sample(n=40, wmax=10.0)
    fast = elcvx.interval(s, calibration="bootstrap", method="fast", random_state=1)
    cvx = elcvx.interval(s, calibration="bootstrap", method="cvxpy", random_state=1)
    assert fast.quantile == cvx.quantile
    assert fast.method == "fast" and cvx.method == "cvxpy"
    assert_agree([cvx.low, cvx.high], [fast.low, fast.high], what="bounds")


def test_profile_pvalue_agrees_with_the_bootstrap_interval():
    s, _ = synthetic_sample(100_000, 5)
    ci = elcvx.interval(s, calibration="bootstrap", random_state=3)
    width = ci.high - ci.low
    v = [ci.low - 0.01 * width, ci.low + 0.01 * width, ci.high - 0.01 * width, ci.high + 0.01 * width]
    res = elcvx.profile(s, v, calibration="bootstrap", random_state=3)
    inside = res.pvalue >= 0.05
    assert inside.tolist() == [False, True, True, False]


@pytest.mark.parametrize("kw, field", [
    ({"resamples": 5}, "resamples"), ({"resamples": 99.5}, "resamples"),
    ({"random_state": -1}, "random_state"), ({"random_state": "seed"}, "random_state"),
])
def test_bad_bootstrap_options_name_the_field(kw, field):
    s, _ = synthetic_sample(100, 0)
    with pytest.raises(InvalidInputError, match=field):
        elcvx.interval(s, calibration="bootstrap", **kw)


def test_bootstrap_with_constraints_is_refused():
    s = continuous_sample(n=30, wmax=10.0)
    cv = elcvx.MomentConstraint(s.w * 0.5, target=0.5, atom_range=(0.0, 5.0))
    with pytest.raises(InvalidInputError, match="bootstrap"):
        elcvx.interval(s, calibration="bootstrap", constraints=[cv])


def test_cli_evaluate_with_bootstrap(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("w,r\n0,0\n2,1\n2,0.5\n0.5,1\n3,1\n1,0\n")
    assert cli.main(["evaluate", str(path), "--wmax", "10", "--calibration", "bootstrap"]) == 0
    out = capsys.readouterr().out
    assert "EL interval: bootstrap calibration" in out and "CR(-2): chi2" in out


def test_calibration_study_reruns_the_synthetic_draws():
    cal = calibration.run_study((200,), 3, 2020, jobs=1, resamples=99, progress=False)
    syn = synthetic.run_study((200,), 3, 2020, jobs=1, progress=False)
    j = list(synthetic.INTERVAL_METHODS).index("el-chi2")
    _, lows, highs, q, stat, k, s = cal._cols(200)
    np.testing.assert_array_equal(lows[:, 0], syn.lows[200][:, j])
    np.testing.assert_array_equal(highs[:, 0], syn.highs[200][:, j])
    assert np.all(q >= CHI2) and np.all(k == 0)  # P(w = 1000) N = 0.02: no such rows here
    rows = cal.coverage_table()
    assert [r["method"] for r in rows] == list(calibration.METHODS)
    assert rows[0]["draws"] == 3 and rows[0]["width_vs_chi2"] == 1.0


def test_resamples_the_batch_cannot_settle_go_to_the_package_solvers(monkeypatch):
    s = synthetic_sample(10_000, 1)[0].compress()
    mle, _ = dispatch.mle(s, "fast")
    w, u, p, v0 = bootstrap.world(s, mle)
    counts = np.random.default_rng(1).multinomial(int(s.n), p, size=5).astype(float)
    expected = scalar_statistics(w, u, counts, s.wmin, s.wmax, v0)
    fail = bootstrap._profile(np.zeros(1), np.zeros(1), np.ones((5, 1)), np.zeros(5))
    monkeypatch.setattr(bootstrap, "_profile", lambda *a: (fail[0], fail[1], np.zeros(5, dtype=bool)))
    monkeypatch.setattr(bootstrap, "_edge_max", lambda d, e, c, G, h, k: np.full(c.shape[0], -np.inf))
    got, fallbacks = bootstrap.batch_statistics(w, u, counts, s.wmin, s.wmax, v0)
    assert fallbacks == 5
    assert_agree(got, expected, tol=1e-6, what="fallback statistics")
