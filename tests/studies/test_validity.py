"""The validity suite (elcvx.experiments.validity): its laws' exact values against integrals
written here from their definitions, its checker against an injected violation, and a small run
in which every finite-sample bound holds. The full run is `make test-validity` (docs/validity.md)."""

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from elcvx.experiments import validity
from elcvx.experiments.validity import distributions as dist
from elcvx.experiments.validity.report import failures, table
from elcvx.experiments.validity.run import DELTA, Bound, bounds, run_study
from elcvx.interval import interval
from elcvx.sample import Sample


def test_two_point_value_is_wmax_times_its_mass_times_the_reward():
    for wmax in (2, 10, 100):
        law = dist.by_name(f"two-point-{wmax}")
        assert law.value == pytest.approx(wmax * (1.0 / wmax) * 0.4, rel=1e-15)


def test_beta_value_is_the_integral_of_w_squared_over_wmax():
    law = dist.by_name("beta-10")
    a = 4.5 / 9.0  # a / (a + 4.5) = 1/10
    density = stats.beta(a, 4.5).pdf
    mean = integrate.quad(lambda b: 10 * b * density(b), 0, 1)[0]
    second = integrate.quad(lambda b: (10 * b) ** 2 / 10 * density(b), 0, 1)[0]  # E[w P(r=1|w)]
    assert mean == pytest.approx(1.0, rel=1e-7)
    assert law.value == pytest.approx(second, rel=1e-7)


def test_capped_pareto_value_and_range_from_the_density():
    law = dist.by_name("pareto-1.1-cap1000")
    alpha, cap, t = 1.1, 1000.0, 10.0
    pdf = lambda x: alpha * x ** (-alpha - 1.0)  # Pareto(alpha) on [1, inf)
    tail = cap ** -alpha  # P(X > cap): these rows have w = cap / m
    m = (integrate.quad(lambda x: x * pdf(x), 1, cap, limit=200)[0] + cap * tail)
    upper = integrate.quad(lambda x: x * pdf(x), t, cap, limit=200)[0] + cap * tail
    assert law.wmin == pytest.approx(1.0 / m, rel=1e-9)
    assert law.wmax == pytest.approx(cap / m, rel=1e-9)
    assert law.value == pytest.approx(0.2 + 0.6 * upper / m, rel=1e-9)


def test_softmax_laws_values_from_the_protocols_definition():
    # V = (1 - eta) p + eta (1 - p), p = e^(1/tau) / (e^(1/tau) + K - 1): the 10-action case.
    law = dist.by_name("softmax-k10-tau0.3-tau00.3-eta0.2-faulty0.5")
    p = math.exp(1 / 0.3) / (math.exp(1 / 0.3) + 9)
    assert law.value == pytest.approx(0.8 * p + 0.2 * (1 - p), rel=1e-14)
    a, b = law.pair
    assert law.candidate_values[a] == pytest.approx(law.value, rel=1e-14)
    # Its largest weight: the target's peak over the logging policy's rest, e^(1/0.3) (about 28).
    assert law.wmax == pytest.approx(math.exp(1 / 0.3), rel=1e-12)


@pytest.mark.parametrize("law", dist.DISTRIBUTIONS, ids=lambda d: d.name)
def test_every_law_draws_weights_in_its_range_with_mean_one(law):
    log = law.draw(200_000, np.random.default_rng(3))
    assert log.w.min() >= law.wmin and log.w.max() <= law.wmax
    assert set(np.unique(log.r)) <= {0.0, 1.0}
    # E[w] = 1 and E[w r] = V within 5 standard errors of their sample means.
    for x, mean in ((log.w, 1.0), (log.w * log.r, law.value)):
        assert abs(x.mean() - mean) < 5 * x.std() / math.sqrt(x.size)
    if log.probs is not None:
        wk = log.probs / log.p[:, None]
        got = (wk * log.r[:, None]).mean(axis=0)
        sd = (wk * log.r[:, None]).std(axis=0) / math.sqrt(log.w.size)
        assert np.all(np.abs(got - np.asarray(law.candidate_values)) < 5 * sd)


def test_the_suite_reads_the_el_calibrations_at_run_time(monkeypatch):
    from elcvx import _validation as iv
    monkeypatch.setattr(iv, "EL_CALIBRATIONS", iv.EL_CALIBRATIONS + ("new-one",))
    assert "el-new-one" in bounds()


def test_a_bound_shifted_up_is_caught_and_the_honest_one_passes():
    law = "two-point-2"

    def shifted(d, log, i):  # EL's bound moved up by 0.03, about one radius at N = 3000
        low = interval(Sample(log.w, log.r, wmin=d.wmin, wmax=d.wmax), alternative="greater",
                       calibration="chi2").low
        return np.array([low + 0.03]), np.array([d.value])

    def honest(d, log, i):
        low = interval(Sample(log.w, log.r, wmin=d.wmin, wmax=d.wmax), alternative="greater",
                       calibration="chi2").low
        return np.array([low]), np.array([d.value])

    chosen = {"shifted": Bound("shifted", "finite", "", shifted),
              "honest": Bound("honest", "finite", "", honest)}
    rows = run_study([law], (3000,), 60, jobs=1, progress=False, chosen=chosen)
    t = table(rows, {"shifted": "finite", "honest": "finite"})
    bad = failures(t)
    assert len(bad) == 1 and bad[0].startswith("shifted on two-point-2 at N=3000")
    assert next(r for r in t if r["bound"] == "shifted")["rate"] > 0.5


def test_an_asymptotic_bound_fails_only_inside_its_regime():
    # 30% of 100 logs above the value, every log without the thin note: > 3 SE at both N, a
    # failure only at N >= ASYMPTOTIC_MIN_N.
    rows = [{"law": "two-point-10", "n": n, "bounds": {"el-chi2": [30, 100, 1.0, 0, 0.1, 30, 100]}}
            for n in (300, validity.ASYMPTOTIC_MIN_N)]
    t = table(rows, {"el-chi2": "asymptotic"})
    assert [r["flag"] for r in t] == ["> 3 SE", "> 3 SE"]
    bad = failures(t)
    assert len(bad) == 1 and f"N={validity.ASYMPTOTIC_MIN_N}" in bad[0]


def test_an_asymptotic_bound_is_judged_on_the_logs_without_the_thin_note():
    n = validity.ASYMPTOTIC_MIN_N
    # 1,000 logs, 90 violations (9%): 80 of them on 300 logs where the note fired, 10 on the 700
    # without it (1.4%): the promise (level where the note is silent) holds.
    kept = {"law": "two-point-10", "n": n, "bounds": {"el-chi2": [90, 1000, 1.0, 0, 0.1, 10, 700]}}
    # The same overall rate with the violations on the silent logs (90 of 700, 12.9% > 5% + 3 SE
    # = 7.5% at 700 logs): it fails, and the sentence names the silent logs' count.
    broken = dict(kept, law="two-point-100", bounds={"el-chi2": [90, 1000, 1.0, 0, 0.1, 90, 700]})
    # The note fired on all but 50 logs: too few to judge (the note sent every other user to a
    # finite-sample bound), whatever their rate.
    unjudged = dict(kept, law="beta-10", bounds={"el-chi2": [90, 1000, 1.0, 0, 0.1, 40, 50]})
    t = table([kept, broken, unjudged], {"el-chi2": "asymptotic"})
    assert [r["flag"] for r in t] == ["", "> 3 SE", ""]
    assert t[0]["judged_rate"] == 10 / 700 and t[1]["limit"] == DELTA + 3 * math.sqrt(
        DELTA * (1 - DELTA) / 700)
    assert math.isnan(t[2]["judged_rate"])
    bad = failures(t)
    assert len(bad) == 1 and bad[0].startswith("el-chi2 on two-point-100") and "90/700" in bad[0]
    # A finite-sample bound is judged on every log, the note or not.
    t = table([kept], {"el-chi2": "finite"})
    assert t[0]["judged_rate"] == 0.09 and failures(t)


def test_a_cell_counted_before_the_split_is_run_again_only_where_it_is_judged():
    from elcvx.experiments.validity.run import counted

    old = [1, 10, 0.5, 0, 0.1]
    assert not counted(old, "asymptotic", validity.ASYMPTOTIC_MIN_N)
    assert counted(old, "asymptotic", 300) and counted(old, "finite", 10000)
    assert counted(old + [0, 9], "asymptotic", 10000)


def test_quick_run_every_finite_sample_bound_holds(tmp_path):
    rows, paths, bad = validity.reproduce(tmp_path, quick=True, jobs=1, progress=False)
    assert bad == []
    finite = [r for r in rows if r["kind"] == "finite"]
    names = {r["bound"] for r in finite}
    assert {"el-betting", "ls", "ix", "eb", "betting", "ddrm", "select-ls"} <= names
    assert all(r["logs"] == validity.QUICK["logs"] and r["rate"] <= DELTA + 3 * r["se"] for r in finite)
    assert {p.name for p in paths} == {"summary.csv", "summary.md"}
    # A second run resumes from the cells written: nothing is run, the same table comes back.
    again, _, _ = validity.reproduce(tmp_path, quick=True, jobs=1, progress=False, report_only=True)
    assert [(r["law"], r["n"], r["bound"], r["violations"]) for r in again] == \
        [(r["law"], r["n"], r["bound"], r["violations"]) for r in rows]


def test_cli_exit_status_names_the_cell(tmp_path, capsys):
    from elcvx.experiments.cli import main
    argv = ["reproduce", "validity", "--quick", "--report-only", "--out", str(tmp_path), "--quiet"]
    # One honest cell, then the same cell with 30 violations in 100 logs (delta + 3 SE = 0.115).
    cell = {"law": "two-point-10", "n": 20, "logs": validity.QUICK["logs"], "seed": 36,
            "resamples": 199, "bootstrap_max_n": 1000, "skipped": []}
    path = tmp_path / "cells.jsonl"
    path.write_text(json.dumps(dict(cell, bounds={"ls": [0, 100, 40.0, 0, 0.1]})) + "\n")
    assert main(argv) == 0
    path.write_text(json.dumps(dict(cell, bounds={"ls": [30, 100, 40.0, 0, 0.1]})) + "\n")
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "FAIL: ls on two-point-10 at N=20: violation rate 0.3000 (30/100 logs)" in err


def test_a_bound_skipped_where_it_did_not_apply_runs_once_it_does(tmp_path):
    # A cell written when "b" did not apply at its N (listed as skipped) is run for "b" now that
    # it applies, on the cell's logs; "a", counted there, is not run again.
    cell = {"law": "two-point-2", "n": 20, "logs": 5, "seed": 36, "resamples": 199,
            "bootstrap_max_n": 1000, "skipped": ["b"], "bounds": {"a": [0, 5, 1.0, 0, 0.1]}}
    (tmp_path / "cells.jsonl").write_text(json.dumps(cell) + "\n")
    calls = []

    def low(d, log, i):
        calls.append(i)
        return np.array([0.0]), np.array([d.value])

    chosen = {name: Bound(name, "finite", "", low) for name in ("a", "b")}
    rows = run_study(["two-point-2"], (20,), 5, jobs=1, progress=False, out=tmp_path, chosen=chosen)
    assert calls == [0, 1, 2, 3, 4]
    assert rows[0]["bounds"]["b"][:2] == [0, 5] and rows[0]["bounds"]["a"] == [0, 5, 1.0, 0, 0.1]
