"""The synthetic study of the paper's Figures 1 and 2 (elcvx.experiments.synthetic).

Fast tests check the environment (weights' law, rewards, value uniform), reproducibility and
independence from ``jobs``, and the output files. The ``slow`` test runs a reduced study and
checks only what holds by construction, never the paper's claims.
"""

import csv
import io
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from elcvx import Sample
from elcvx.errors import InvalidInputError
from elcvx.experiments import cli, synthetic
from elcvx.experiments.synthetic import (
    ESTIMATORS,
    INTERVAL_METHODS,
    draw_environment,
    epsilon_greedy_story,
    evaluate,
    max_entropy_weights,
    replicate_rng,
    run_study,
)

WEIGHTS = np.array([0.0, 2.0, 1000.0])


# ------------------------------------------------------------------------------------------------
# The weights' law
# ------------------------------------------------------------------------------------------------
def test_weight_law_has_the_appendix_moments():
    p = max_entropy_weights()
    assert p.shape == (3,) and np.all(p > 0)
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-13)
    assert math.isclose(p @ WEIGHTS, 1.0, rel_tol=1e-12)          # E_h[w] = 1
    assert math.isclose(p @ WEIGHTS**2, 100.0, rel_tol=1e-12)     # E_h[w^2] = 100 (appendix)


def test_weight_law_matches_the_hand_solution():
    # Solved by hand: 2 p2 + 1000 p3 = 1 and 4 p2 + 10^6 p3 = 100 give
    # p3 = 98 / 998000, p2 = (1 - 1000 p3) / 2, p1 = 1 - p2 - p3 (= 0.549 exactly).
    p3 = Fraction(98, 998000)
    p2 = (1 - 1000 * p3) / 2
    p1 = 1 - p2 - p3
    assert p1 == Fraction(549, 1000)
    np.testing.assert_allclose(max_entropy_weights(), [float(p1), float(p2), float(p3)], rtol=1e-12)


def test_three_points_are_determined_and_the_dual_agrees():
    # The constraint matrix [1; w; w^2] is a non-singular Vandermonde matrix: one feasible point,
    # so it is the maximum-entropy law; the general (dual) solver must find the same point.
    A = np.vstack([np.ones(3), WEIGHTS, WEIGHTS**2])
    assert np.linalg.matrix_rank(A) == 3
    np.testing.assert_allclose(synthetic.environment._max_entropy_dual(WEIGHTS, 100.0), max_entropy_weights(),
                               rtol=1e-6)


def test_max_entropy_on_a_larger_support():
    # Four points: the moments leave one free direction; the maximum-entropy law is the
    # exponential family in (w, w^2): log p affine in (1, w, w^2), and no feasible move along
    # the null space of the constraints increases the entropy.
    w = np.array([0.0, 0.5, 2.0, 100.0])
    p = max_entropy_weights(w, 5.0)
    A = np.vstack([np.ones_like(w), w, w * w])
    np.testing.assert_allclose(A @ p, [1.0, 1.0, 5.0], rtol=1e-8)
    coef, *_ = np.linalg.lstsq(A.T, np.log(p), rcond=None)
    np.testing.assert_allclose(A.T @ coef, np.log(p), atol=1e-6)
    null = np.linalg.svd(A)[2][-1]

    def entropy(q):
        return -float(np.sum(q * np.log(q)))

    for t in (-1e-3, 1e-3):
        q = p + t * null * p.min()
        assert np.all(q > 0)
        assert entropy(q) < entropy(p)


@pytest.mark.parametrize("weights, m2", [
    ((0.0, 2.0, 1000.0), 1e7),        # E[w^2] above what any law on [0, 1000] with E[w] = 1 has
    ((0.0, 2.0, 1000.0), 1.5),        # below what the support allows
    ((0.0, 0.5, 0.9), 1.0),           # all weights below 1: E[w] = 1 impossible
    ((2.0, 0.0, 1000.0), 100.0),      # not increasing
])
def test_max_entropy_rejects_impossible_laws(weights, m2):
    with pytest.raises(InvalidInputError):
        max_entropy_weights(weights, m2)


def test_epsilon_greedy_story_induces_the_same_law():
    story = epsilon_greedy_story()
    assert story["actions"] == 501 and story["epsilon"] == Fraction(501, 1000)
    # greedy action probability 1 - eps + eps/K = 1/2; every other action eps/K = 1/1000
    eps, k = story["epsilon"], story["actions"]
    assert 1 - eps + eps / k == Fraction(1, 2) and eps / k == Fraction(1, 1000)
    np.testing.assert_allclose(story["probs"], max_entropy_weights(), rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# Environments and samples
# ------------------------------------------------------------------------------------------------
def test_environments_have_value_e_wr_and_valid_reward_probabilities():
    rng = np.random.default_rng(7)
    for _ in range(500):
        env = draw_environment(rng)
        assert np.all((env.reward_probs >= 0) & (env.reward_probs <= 1))
        assert math.isclose(env.probs @ env.weights, 1.0, rel_tol=1e-12)   # E_h[w] = 1
        w, r, p = env.cells()
        assert math.isclose(p.sum(), 1.0, rel_tol=1e-12)
        # E_h[w r] over the cells is the value: IPS is unbiased for it by construction
        assert math.isclose(float(np.sum(p * w * r)), env.value, abs_tol=1e-12)


def test_value_is_uniform():
    # Kolmogorov-Smirnov against Uniform[0, 1] on 3000 draws with a fixed seed.
    rng = np.random.default_rng(12345)
    values = np.array([draw_environment(rng).value for _ in range(3000)])
    assert stats.kstest(values, "uniform").pvalue > 0.01
    # the reward probability at w = 1000 varies from draw to draw (not a constant function of V)
    rng = np.random.default_rng(1)
    pr = np.array([draw_environment(rng).reward_probs[2] for _ in range(500)])
    assert pr.std() > 0.2


def test_sample_is_a_multinomial_draw_with_counts():
    env = draw_environment(np.random.default_rng(3))
    s = env.sample(1000, np.random.default_rng(4))
    assert isinstance(s, Sample)
    assert s.n == 1000 and s.n_rows <= 6 and np.all(s.counts > 0)
    assert (s.wmin, s.wmax) == (0.0, 1000.0)
    # cell frequencies of a large sample match the cell probabilities
    w, r, p = env.cells()
    big = env.sample(2_000_000, np.random.default_rng(5))
    freq = np.zeros_like(p)
    for wi, ri, ci in zip(big.w, big.r, big.counts):
        freq[(w == wi) & (r == ri)] = ci / big.n
    np.testing.assert_allclose(freq, p, atol=5 * np.sqrt(p.max() / 2_000_000))


def test_sample_size_must_be_positive():
    env = draw_environment(np.random.default_rng(0))
    with pytest.raises(InvalidInputError):
        env.sample(0, np.random.default_rng(0))


def test_snips_convention_when_every_weight_is_zero():
    s = Sample([0.0, 0.0], [0.0, 1.0], counts=[3.0, 7.0], wmax=1000)
    est, low, high, events = evaluate(s)
    assert est[list(ESTIMATORS).index("snips")] == 0.5
    assert events["snips-undefined"] == 1
    assert np.all((low >= 0) & (low <= high) & (high <= 1))


# ------------------------------------------------------------------------------------------------
# The study: reproducibility, jobs, tables, files
# ------------------------------------------------------------------------------------------------
def _same(a, b):
    assert a.sizes == b.sizes
    for n in a.sizes:
        for field in ("truth", "estimates", "lows", "highs"):
            np.testing.assert_array_equal(getattr(a, field)[n], getattr(b, field)[n])
        assert a.events[n] == b.events[n]


def test_reproducible_from_the_seed():
    a = run_study((10, 50), 5, seed=11, jobs=1, progress=False)
    b = run_study((10, 50), 5, seed=11, jobs=1, progress=False)
    c = run_study((10, 50), 5, seed=12, jobs=1, progress=False)
    _same(a, b)
    assert not np.array_equal(a.truth[10], c.truth[10])


def test_results_do_not_depend_on_jobs_chunks_or_other_sizes():
    a = run_study((10, 30), 7, seed=3, jobs=1, chunk_size=7, progress=False)
    b = run_study((10, 30), 7, seed=3, jobs=2, chunk_size=2, progress=False)
    _same(a, b)
    only = run_study((30,), 7, seed=3, jobs=1, progress=False)
    np.testing.assert_array_equal(only.estimates[30], a.estimates[30])


def test_a_replicate_is_its_own_stream():
    study = run_study((25,), 4, seed=5, jobs=1, progress=False)
    rng = replicate_rng(5, 25, 2)
    env = draw_environment(rng)
    est, low, high, _ = evaluate(env.sample(25, rng))
    assert study.truth[25][2] == env.value
    np.testing.assert_array_equal(study.estimates[25][2], est)
    np.testing.assert_array_equal(study.lows[25][2], low)
    np.testing.assert_array_equal(study.highs[25][2], high)


def test_progress_lines_on_the_stream():
    buf = io.StringIO()
    run_study((10,), 4, seed=1, jobs=1, chunk_size=2, stream=buf)
    assert "ETA" in buf.getvalue() and "4/4" in buf.getvalue()


@pytest.mark.parametrize("kwargs", [
    {"replicates": 1}, {"jobs": 0}, {"sizes": ()}, {"sizes": (10, 10)}, {"sizes": (0,)},
    {"chunk_size": 0}, {"seed": -1}, {"confidence_level": 1.0},
])
def test_run_study_validates(kwargs):
    args = {"sizes": (10,), "replicates": 3, "seed": 0, "jobs": 1, "progress": False} | kwargs
    with pytest.raises(InvalidInputError):
        run_study(**args)


def test_tables_are_the_documented_statistics():
    study = run_study((10, 40), 6, seed=2, jobs=1, progress=False)
    mse = study.mse_table()
    assert [(r["n"], r["estimator"]) for r in mse] == [(n, e) for n in (10, 40) for e in ESTIMATORS]
    sq = (study.estimates[40][:, -1] - study.truth[40]) ** 2
    el = [r for r in mse if r["n"] == 40 and r["estimator"] == "el"][0]
    assert math.isclose(el["mse"], sq.mean()) and math.isclose(el["se"], sq.std(ddof=1) / math.sqrt(6))
    const = [r for r in mse if r["estimator"] == "constant"]
    for r in const:
        assert math.isclose(r["mse"], float(np.mean((study.truth[r["n"]] - 0.5) ** 2)))
    ivs = study.interval_table()
    assert [(r["n"], r["method"]) for r in ivs] == [(n, m) for n in (10, 40) for m in INTERVAL_METHODS]
    for r in ivs:
        assert 0 <= r["coverage"] <= 1 and r["coverage_se"] >= 0
        assert math.isclose(r["coverage_se"], math.sqrt(r["coverage"] * (1 - r["coverage"]) / 6))
        assert 0 <= r["width_p05"] <= r["width_p95"] <= 1


def test_written_files_have_the_documented_columns(tmp_path):
    study = run_study((10, 20), 3, seed=0, jobs=1, progress=False)
    paths = study.write(tmp_path, plots=False, command="test")
    assert {p.name for p in paths} == {"mse.csv", "intervals.csv", "summary.md"}
    with open(tmp_path / "mse.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["n", "estimator", "mse", "se"] and len(rows) == 1 + 2 * len(ESTIMATORS)
    assert {r[1] for r in rows[1:]} == {"constant", "clipped-dr", "snips", "ips", "emp", "cr", "el"}
    with open(tmp_path / "intervals.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["n", "method", "coverage", "coverage_se", "mean_width", "width_p05", "width_p95"]
    assert {r[1] for r in rows[1:]} == {"el-chi2", "el-f", "cr-chi2", "cr-f", "binomial", "gaussian"}
    assert len(rows) == 1 + 2 * len(INTERVAL_METHODS)
    text = (tmp_path / "summary.md").read_text()
    assert "Mean squared error" in text and "Coverage" in text and "claims" in text


def test_figures_are_small_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    study = run_study((10, 20), 3, seed=0, jobs=1, progress=False)
    paths = study.write(tmp_path, plots=True)
    pngs = [p for p in paths if p.suffix == ".png"]
    assert {p.name for p in pngs} == {"mse.png", "intervals.png"}
    for p in pngs:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert p.stat().st_size < 300_000


def test_cli_writes_the_outputs(tmp_path, capsys):
    out = tmp_path / "res"
    code = cli.main(["reproduce", "synthetic", "--replicates", "3", "--sizes", "10", "20",
                     "--jobs", "1", "--seed", "4", "--out", str(out), "--no-plots", "--quiet"])
    assert code == 0
    assert (out / "mse.csv").exists() and (out / "intervals.csv").exists()
    assert "--sizes 10 20" in (out / "summary.md").read_text()
    assert "wrote" in capsys.readouterr().out


def test_cli_parser_registers_on_another_command(tmp_path):
    import argparse

    parser = argparse.ArgumentParser(prog="elcvx")
    sub = parser.add_subparsers(dest="command", required=True)
    cli.add_reproduce_parser(sub)
    args = parser.parse_args(["reproduce", "synthetic", "--out", str(tmp_path)])
    assert args.replicates == 10_000 and args.jobs == 2 and args.sizes == list(synthetic.DEFAULT_SIZES)
    assert args.func is cli.run
    with pytest.raises(SystemExit):
        parser.parse_args(["reproduce", "synthetic", "--replicates", "0"])


def test_cli_reports_bad_input(tmp_path, capsys):
    code = cli.main(["reproduce", "synthetic", "--replicates", "1", "--sizes", "10", "--jobs", "1",
                     "--out", str(tmp_path), "--quiet"])
    assert code == 2
    assert "replicates" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------
# A reduced study: what holds by construction
# ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_reduced_study_by_construction():
    sizes = (10, 100, 1000, 100_000)
    reps = 2000
    study = run_study(sizes, reps, seed=2024, jobs=2, progress=False)
    names = list(ESTIMATORS)
    mse = {(r["n"], r["estimator"]): r for r in study.mse_table()}
    for n in sizes:
        v = study.truth[n]
        # V ~ Uniform[0, 1]: mean 1/2 (sd 1/sqrt(12)), and Constant's MSE is E[(V - 1/2)^2] = 1/12
        assert abs(v.mean() - 0.5) < 3 / math.sqrt(12 * reps)
        c = mse[n, "constant"]
        assert abs(c["mse"] - 1 / 12) < 3 * c["se"]
        # estimators that stay in the reward range do
        for e in ("clipped-dr", "snips", "cr", "el"):
            x = study.estimates[n][:, names.index(e)]
            assert np.all((x >= -1e-12) & (x <= 1 + 1e-12)), e
        lows, highs = study.lows[n], study.highs[n]
        assert np.all((lows >= 0) & (lows <= highs + 1e-12) & (highs <= 1))
        m = list(INTERVAL_METHODS)
        # the point estimate has likelihood-ratio statistic 0: inside its interval at any level
        el = study.estimates[n][:, names.index("el")]
        for k in ("el-chi2", "el-f"):
            j = m.index(k)
            assert np.all((lows[:, j] <= el + 1e-7) & (el <= highs[:, j] + 1e-7)), (n, k)
        # F(1, N-1) quantile > chi-square(1) quantile: the F interval contains the chi2 one
        for a, b in (("el-chi2", "el-f"), ("cr-chi2", "cr-f")):
            ja, jb = m.index(a), m.index(b)
            assert np.all(lows[:, jb] <= lows[:, ja] + 1e-7) and np.all(highs[:, ja] <= highs[:, jb] + 1e-7)
    # IPS is unbiased (E[IPS | environment] = V exactly): mean error within 3 SE where the
    # weight-1000 events are frequent enough for the SE to describe the error (N w-events >> 1)
    for n in (1000, 100_000):
        err = study.estimates[n][:, names.index("ips")] - study.truth[n]
        assert abs(err.mean()) < 3 * err.std(ddof=1) / math.sqrt(reps), n
    for r in study.interval_table():
        assert 0 <= r["coverage"] <= 1
