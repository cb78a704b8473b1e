"""The realistic-data experiments (elcvx.experiments.realistic): data handling, transform, splits,
true values, paired tests, reproducibility, errors, and a quick end-to-end run of the CLI."""

from __future__ import annotations

import csv
import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from extras import need

from elcvx.experiments import realistic as R
from elcvx.experiments.realistic.data import _splits
from elcvx.experiments.realistic.policies import _features, _target_policy
from elcvx.experiments.realistic.tasks import _run_ope
from elcvx.experiments.cli import main as reproduce_main

ROOT = Path(__file__).resolve().parents[2]
DATA = R.find_data_dir(ROOT)  # ../shared/data/openml, else data/openml (elcvx datasets fetch)
needs_data = pytest.mark.skipif(DATA is None, reason=R.missing_data_reason(ROOT))


def _write(path: Path, text: str) -> Path:
    with gzip.open(path, "wt") as fh:
        fh.write(text)
    return path


@pytest.fixture
def tiny(tmp_path):
    """A 12-row, 3-class dataset written by hand."""
    rows = ["x1,x2,label"] + [f"{i},{i % 4},{i % 3}" for i in range(12)]
    _write(tmp_path / "9_tiny.csv.gz", "\n".join(rows) + "\n")
    return tmp_path


def test_supervised_to_bandit_rewards():
    y = np.array([0, 2, 1, 1])
    assert R.bandit_rewards(y, [0, 1, 1, 0]).tolist() == [1.0, 0.0, 1.0, 0.0]


def test_true_value_by_hand():
    # labels 0, 2, 1; pi puts (1, 0, 0), (0.5, 0.5, 0), (0, 0.25, 0.75) -> pi(y|x) = 1, 0, 0.25
    P = np.array([[1, 0, 0], [0.5, 0.5, 0], [0, 0.25, 0.75]])
    assert R.true_value(P, [0, 2, 1]) == pytest.approx((1 + 0 + 0.25) / 3, abs=1e-15)


def test_split_sizes():
    assert R.split_sizes(10_000, "ope") == (2000, 6000, 2000)
    assert R.split_sizes(10_000, "ci") == (2000, 6000, 2000)
    assert R.split_sizes(10_000, "learning") == (2000, 2000, 6000)
    assert R.split_sizes(150, "ope") == (30, 90, 30)
    assert sum(R.split_sizes(757, "learning")) == 757


def test_load_shuffles_once_and_truncates(tiny):
    a = R.load_dataset(tiny / "9_tiny.csv.gz", seed=1, max_rows=10)
    b = R.load_dataset(tiny / "9_tiny.csv.gz", seed=1, max_rows=10)
    c = R.load_dataset(tiny / "9_tiny.csv.gz", seed=2, max_rows=12)
    assert a.id == 9 and a.name == "tiny" and a.n == 10 and a.n_classes == 3
    np.testing.assert_array_equal(a.X, b.X)
    # rows stay intact: label = x1 mod 3, x2 = x1 mod 4
    np.testing.assert_array_equal(a.y, a.X[:, 0].astype(int) % 3)
    np.testing.assert_array_equal(a.X[:, 1], a.X[:, 0] % 4)
    assert sorted(c.X[:, 0].tolist()) == list(range(12))
    assert c.X[:, 0].tolist() != list(range(12))


def test_missing_folder_and_ids(tmp_path, tiny):
    with pytest.raises(R.DatasetError, match="does not exist"):
        R.load_folder(tmp_path / "nope")
    with pytest.raises(R.DatasetError, match="no '\\*.csv.gz'"):
        (tmp_path / "empty").mkdir()
        R.load_folder(tmp_path / "empty")
    with pytest.raises(R.DatasetError, match=r"\[77\] not in"):
        R.load_folder(tiny, datasets=[77])


@pytest.mark.parametrize("text, message", [
    ("a,b,klass\n1,2,0\n", "last column must be 'label'"),
    ("a,label\n" + "x,0\n" * 12, "not numeric"),
    ("a,label\n" + "1,0\n" * 11 + ",1\n", "missing or infinite"),
    ("a,label\n" + "1,0.5\n" * 12, "integers 0..K-1"),
    ("a,label\n" + "1,0\n" * 12, "single class"),
    ("a,label\n1,0\n2,1\n", "at least 10"),
])
def test_malformed_files(tmp_path, text, message):
    path = _write(tmp_path / "5_bad.csv.gz", text)
    with pytest.raises(R.DatasetError, match=message):
        R.load_dataset(path)


def test_not_gzip(tmp_path):
    p = tmp_path / "5_bad.csv.gz"
    p.write_text("a,label\n1,0\n")
    with pytest.raises(R.DatasetError, match="cannot be read as a gzip CSV"):
        R.load_dataset(p)


def test_strategy_args_and_weight_bound():
    assert R.strategy_args("epsilon=0.05") == "--epsilon 0.05"
    assert R.strategy_args("bag=32") == "--bag 32"
    assert R.strategy_args("cover=10") == "--cover 10"
    with pytest.raises(ValueError, match="is not one of"):
        R.strategy_args("softmax=1")
    P = np.array([[0.9, 0.05, 0.05], [0.0, 0.8, 0.2]])
    assert R.weight_bound("epsilon=0.1", P, 3) == pytest.approx(30.0)  # K / epsilon
    assert R.weight_bound("bag=10", P, 3) == pytest.approx(20.0)  # 1 / min positive p > n
    assert R.weight_bound("bag=10", np.eye(3), 3) == pytest.approx(10.0)  # one-hot: 1 / (1/n)
    assert R.weight_bound("cover=10", P, 3) == pytest.approx(20.0)


def test_paired_outcome():
    rng = np.random.default_rng(0)
    b = rng.random(60)
    assert R.paired_outcome(b - 0.1, b, higher_is_better=False) == "win"
    assert R.paired_outcome(b + 0.1, b, higher_is_better=False) == "loss"
    assert R.paired_outcome(b + 0.1, b, higher_is_better=True) == "win"
    assert R.paired_outcome(b, b, higher_is_better=True) == "tie"
    noise = rng.normal(0, 1, 60)
    assert R.paired_outcome(b + 1e-3 * noise, b, higher_is_better=True) == "tie"
    # Pairs flagged the same number differ by 0; the others are tested as they are.
    last_bits = b * (1 - 1e-15 * (1 + 0.1 * np.abs(noise)))  # smaller by rounding, every time
    assert R.paired_outcome(last_bits, b, higher_is_better=False) == "win"
    assert R.paired_outcome(last_bits, b, higher_is_better=False, same=np.ones(60, bool)) == "tie"
    half = np.arange(60) < 30
    assert R.paired_outcome(b - 0.1, b, higher_is_better=False, same=half) == "win"


def test_estimators_that_agree_to_certified_accuracy_tie_in_table_1():
    # EL and emp agree to 1e-12 on every replicate (EL's atom empty), EL a hair worse each time:
    # a tie, not 2 losses; IPS, worse by 0.05 in every replicate, loses both datasets. The
    # table's other comparisons need their estimators, so only these two rows are read.
    rows = []
    for dataset in (1, 2):
        for rep in range(5):
            truth = 0.5
            err = 0.01 * (rep + 1)
            for est, value in (("el", truth + err + 1e-12), ("emp", truth + err),
                               ("ips", truth + err + 0.05)):
                rows.append(dict(dataset=dataset, strategy="bag=10", replicate=rep,
                                 estimator=est, estimate=value, truth=truth))
    study = R.RealisticStudy(datasets=[1, 2], strategies=("bag=10",), tables=("ope",),
                             replicates=5, learning_replicates=2, seed=0, ope=rows)
    table = {r["versus"]: (r["wins"], r["ties"], r["losses"])
             for r in study.ope_table() if r["estimator"] == "el"}
    assert table["emp"] == (0, 2, 0)
    assert table["ips"] == (2, 0, 0)


def test_draw_actions_follows_pmf():
    P = np.tile([0.2, 0.0, 0.8], (20000, 1))
    a = R.draw_actions(P, np.random.default_rng(3))
    counts = np.bincount(a, minlength=3) / a.size
    assert counts[1] == 0
    assert counts[0] == pytest.approx(0.2, abs=0.01)


@needs_data
def test_quick_run_cli_columns_and_reproducibility(tmp_path):
    need("vowpalwabbit")
    args = ["reproduce", "realistic", "--data-dir", str(DATA), "--datasets", "1413,1473",
            "--strategies", "epsilon=0.1,bag=10", "--replicates", "4", "--learning-replicates", "3",
            "--jobs", "1", "--quiet"]
    assert reproduce_main(args + ["--out", str(tmp_path / "a")]) == 0
    assert reproduce_main(args + ["--out", str(tmp_path / "b"), "--jobs", "2"]) == 0

    def read(name, d="a"):
        with open(tmp_path / d / name, newline="") as fh:
            return list(csv.DictReader(fh))

    ope, ints, learn = read("ope.csv"), read("intervals.csv"), read("learning.csv")
    assert list(ope[0]) == ["dataset", "strategy", "replicate", "estimator", "estimate", "truth"]
    assert list(ints[0]) == ["dataset", "strategy", "replicate", "method", "low", "high", "truth"]
    assert list(learn[0]) == ["dataset", "strategy", "replicate", "objective", "true_value"]
    assert len(ope) == 2 * 2 * 4 * len(R.ESTIMATORS)
    assert len(ints) == 2 * 2 * 4 * len(R.INTERVAL_METHODS)
    assert len(learn) == 2 * 2 * 3 * len(R.OBJECTIVES)
    assert {r["strategy"] for r in ope} == {"epsilon=0.1", "bag=10"}
    for r in ints:
        assert float(r["low"]) <= float(r["high"])
    # same seed -> same numbers, whatever the number of jobs
    for name in ("ope.csv", "intervals.csv", "learning.csv"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()
    summary = (tmp_path / "a" / "summary.md").read_text()
    assert "Table 1" in summary and "Table 2" in summary and "Table 3" in summary
    # the truth is pi's accuracy on the evaluation rows: a multiple of 1/n_eval
    pol = {(r["dataset"], r["strategy"]): r for r in read("policies.csv") if r["table"] == "ope"}
    for r in ope:
        n_eval = int(pol[(r["dataset"], r["strategy"])]["n_eval"])
        t = float(r["truth"]) * n_eval
        assert abs(t - round(t)) < 1e-6
    assert int(pol[("1413", "bag=10")]["n_eval"]) == 30  # iris: 150 rows, 20/60/20


@needs_data
def test_merge_of_split_runs_equals_one_run(tmp_path, capsys):
    """Runs split by strategy, merged, give the rows and tables of one run of both strategies."""
    need("vowpalwabbit")
    common = ["reproduce", "realistic", "--data-dir", str(DATA), "--datasets", "1413,1473",
              "--replicates", "4", "--learning-replicates", "3", "--jobs", "1", "--quiet"]
    assert reproduce_main(common + ["--strategies", "epsilon=0.1,bag=10", "--out", str(tmp_path / "whole")]) == 0
    assert reproduce_main(common + ["--strategies", "bag=10", "--out", str(tmp_path / "p1")]) == 0
    assert reproduce_main(common + ["--strategies", "epsilon=0.1", "--out", str(tmp_path / "p2")]) == 0
    # a part stored gzip-compressed, as the committed runs are
    for name in ("ope.csv", "learning.csv"):
        raw = (tmp_path / "p2" / name).read_bytes()
        (tmp_path / "p2" / (name + ".gz")).write_bytes(gzip.compress(raw))
        (tmp_path / "p2" / name).unlink()
    # a copy of p1 as a third part: equal overlapping rows are allowed
    shutil.copytree(tmp_path / "p1", tmp_path / "p1-again")
    merge = ["reproduce", "realistic", "--merge", str(tmp_path / "p1"), str(tmp_path / "p2"),
             str(tmp_path / "p1-again"), "--out", str(tmp_path / "merged")]
    assert reproduce_main(merge) == 0
    capsys.readouterr()
    for name in ("ope.csv", "intervals.csv", "learning.csv"):
        assert (tmp_path / "merged" / name).read_text() == (tmp_path / "whole" / name).read_text(), name

    def table(d, name):
        with open(tmp_path / d / name, newline="") as fh:
            return list(csv.DictReader(fh))

    for name in ("table1_ope.csv", "table2_learning.csv", "table3_intervals.csv"):
        whole, merged = table("whole", name), table("merged", name)
        assert len(whole) == len(merged) > 0
        for w, m in zip(whole, merged):
            for k in w:  # counts and names exactly; means from the 10-digit CSVs to 1e-9
                if k in ("estimator", "versus", "strategy", "objective", "method", "wins", "ties", "losses",
                         "datasets", "n", "failed"):
                    assert w[k] == m[k], (name, k)
                else:
                    assert float(m[k]) == pytest.approx(float(w[k]), rel=1e-9, abs=1e-12), (name, k)
    summary = (tmp_path / "merged" / "summary.md").read_text()
    assert "Merged from 3 runs (seed 20200)" in summary
    assert "--strategies bag=10" in summary and "--strategies epsilon=0.1" in summary
    pols = table("merged", "policies.csv")
    assert sorted((r["table"], r["strategy"]) for r in pols) == sorted(
        (r["table"], r["strategy"]) for r in table("whole", "policies.csv"))


def test_merge_errors(tmp_path, capsys):
    def run(*folders):
        code = reproduce_main(["reproduce", "realistic", "--merge", *map(str, folders),
                               "--out", str(tmp_path / "out")])
        return code, capsys.readouterr().err

    assert "does not exist" in run(tmp_path / "missing")[1]
    (tmp_path / "empty").mkdir()
    assert "no ope.csv, intervals.csv, learning.csv" in run(tmp_path / "empty")[1]
    head = "dataset,strategy,replicate,objective,true_value\n"
    for d, text in {"a": head + "1,bag=10,0,ips,0.5\n1,bag=10,1,ips,0.5\n",
                    "b": head + "1,bag=10,0,ips,0.75\n",
                    "c": head + "2,bag=10,0,ips,0.5\n",
                    "d": head + "2,bag=10,1,ips,0.5\n",
                    "e": "dataset,strategy,replicate,objective\n1,bag=10,0,ips\n",
                    "f": head + "1,bag=10,zero,ips,0.5\n"}.items():
        (tmp_path / d).mkdir()
        (tmp_path / d / "learning.csv").write_text(text)
    code, err = run(tmp_path / "a", tmp_path / "b")
    assert code == 2 and "differs from the same row" in err
    code, err = run(tmp_path / "a", tmp_path / "c")
    assert code == 2 and "has 2 replicates but dataset 2, bag=10 has 1" in err
    code, err = run(tmp_path / "d")
    assert code == 2 and "has replicates [1], not 0..R-1" in err
    code, err = run(tmp_path / "e")
    assert code == 2 and "columns" in err
    code, err = run(tmp_path / "f")
    assert code == 2 and "line 2: malformed row" in err
    for d, seed in (("a", 1), ("c", 2)):
        (tmp_path / d / "summary.md").write_text(f"Command: `elcvx reproduce realistic --seed {seed}`\n")
    (tmp_path / "c" / "learning.csv").write_text(head + "2,bag=10,0,ips,0.5\n2,bag=10,1,ips,0.5\n")
    code, err = run(tmp_path / "a", tmp_path / "c")
    assert code == 2 and "different seeds [1, 2]" in err
    assert reproduce_main(["reproduce", "realistic", "--merge", str(tmp_path / "a"), "--data-dir", "x"]) == 2
    assert "not both" in capsys.readouterr().err
    assert reproduce_main(["reproduce", "realistic"]) == 2
    assert "not neither" in capsys.readouterr().err


@needs_data
def test_truth_by_hand_through_the_pipeline():
    """The OPE task's truth equals the target policy's accuracy computed here from the labels."""
    need("vowpalwabbit")
    ds = R.load_folder(DATA, datasets=[1473])[0]
    _, _, _, ope, _, info, _ = _run_ope((ds, 0, "epsilon=0.1", 7, 2, False))
    init, learn, ev = _splits(ds, "ope")
    h = R.train_logging_policy(ds.X[init], ds.y[init], ds.n_classes, "epsilon=0.1", R.dataset_rng(7, ds.id, 0, 0))
    P_learn = R.pmf(h, _features(ds.X[learn]), ds.n_classes)
    h.finish()
    pi = _target_policy(ds, learn, P_learn, R.dataset_rng(7, ds.id, 0, 1))
    greedy = pi.probs(ds.X[ev]).argmax(axis=1)
    assert info["truth"] == pytest.approx(np.mean(greedy == ds.y[ev]), abs=1e-15)
    assert all(r["truth"] == info["truth"] for r in ope)


@needs_data
def test_el_vs_snips_diagnostic_uses_the_table_1_logs():
    """docs/realistic/el_vs_snips.py's ``el`` column is Table 1's EL on the same evaluation logs."""
    need("vowpalwabbit")
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "docs" / "realistic" / "el_vs_snips.py"
    spec = importlib.util.spec_from_file_location("el_vs_snips", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ds = R.load_folder(DATA, datasets=[1473])[0]
    si = R.STRATEGIES.index("epsilon=0.05")
    _, _, _, ope, _, info, _ = _run_ope((ds, si, "epsilon=0.05", R.DEFAULT_SEED, 5, False))
    estimates, truth, atom = mod.evaluations(ds, "epsilon=0.05", 5, R.DEFAULT_SEED)
    assert truth == pytest.approx([r["truth"] for r in ope if r["estimator"] == "el"][0], rel=1e-15)
    for name, key in (("el", "el"), ("snips", "snips")):
        expected = [r["estimate"] for r in ope if r["estimator"] == key]
        assert estimates[name] == pytest.approx(expected, rel=1e-12, abs=1e-15)
    # with no mass on the atom the three EL variants are the same number
    for i, has_mass in enumerate(atom):
        if not has_mass:
            assert estimates["el-rho-self"][i] == pytest.approx(estimates["el"][i], abs=1e-12)


def test_cli_errors(tmp_path, capsys):
    assert reproduce_main(["reproduce", "realistic", "--data-dir", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
    _write(tmp_path / "3_bad.csv.gz", "a,b\n1,2\n")
    assert reproduce_main(["reproduce", "realistic", "--data-dir", str(tmp_path)]) == 2
    assert "last column must be 'label'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        reproduce_main(["reproduce", "realistic", "--data-dir", str(tmp_path), "--tables", "foo"])


def test_merge_takes_refit_counts_from_the_parts_summaries(tmp_path, capsys):
    # Runs before commit 26a43be wrote policies.csv with the refits of the first chunk of runs
    # only; their summary.md has the total. Without a summary.md, policies.csv is summed.
    head = "dataset,strategy,replicate,objective,true_value\n"
    for d, strategy in (("a", "bag=10"), ("b", "cover=10")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "learning.csv").write_text(
            head + "".join(f"1,{strategy},{i},{o},0.5\n" for i in range(2) for o in ("lower_bound", "ips")))
        (tmp_path / d / "policies.csv").write_text(f"dataset,strategy,table,fit_fallbacks\n1,{strategy},learning,1\n")
    (tmp_path / "a" / "summary.md").write_text(
        "* Learning fits whose fast path failed (refit with `method=\"auto\"`): 3; fits that failed both ways\n")
    assert reproduce_main(["reproduce", "realistic", "--merge", str(tmp_path / "a"), str(tmp_path / "b"),
                           "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "refit with `method=\"auto\"`): 4;" in summary  # 3 from a's summary + 1 from b's policies


@needs_data
def test_el_cv_rows_and_the_reward_predictor_on_a_small_dataset():
    """EL with the reward predictor (el-cv): finite rows in the reward range, intervals that hold
    the estimate, and the constraint built from r_hat fitted here independently (per-action VW
    regressions on the logging split's bandit feedback): ``expected = sum_a pi r_hat`` for a row."""
    vw = need("vowpalwabbit")
    import elcvx

    ds = R.load_folder(DATA, datasets=[1413])[0]  # iris: 150 rows, 3 actions, 30 per split
    strategy, seed, reps = "epsilon=0.1", 7, 3
    si = R.STRATEGIES.index(strategy)
    _, _, _, ope, ints, info, _ = _run_ope((ds, si, strategy, seed, reps, True))
    est = {r["replicate"]: r["estimate"] for r in ope if r["estimator"] == "el-cv"}
    dr = {r["replicate"]: r["estimate"] for r in ope if r["estimator"] == "dr"}
    ivs = {r["replicate"]: (r["low"], r["high"]) for r in ints if r["method"] == "el-cv-chi2"}
    assert sorted(est) == sorted(ivs) == sorted(dr) == list(range(reps))
    for rep, v in est.items():
        lo, hi = ivs[rep]
        assert np.isfinite([v, lo, hi, dr[rep]]).all()
        assert 0.0 <= lo <= v <= hi <= 1.0
    assert info["elcv_failures"] == 0 and info["elcv_failed_replicates"] == ""
    assert info["deterministic_target"] == 1

    # r_hat by hand: replay h's on-policy loop for its logged actions, then one VW squared-loss
    # regression per action on the rows where it was logged, 4 passes, clipped to [0, 1].
    init, learn, ev = _splits(ds, "ope")
    logged = []
    h = R.train_logging_policy(ds.X[init], ds.y[init], 3, strategy, R.dataset_rng(seed, ds.id, si, 0), log=logged)
    P_learn, P_eval = R.pmf(h, _features(ds.X[learn]), 3), R.pmf(h, _features(ds.X[ev]), 3)
    h.finish()
    text = ["| " + " ".join(f"f{j}:{v:.10g}" for j, v in enumerate(x) if v != 0.0) for x in ds.X]
    models = [vw.Workspace("--quiet") for _ in range(3)]
    for _ in range(4):
        for i, a in zip(range(init.start, init.stop), logged):
            models[a].learn(f"{float(a == ds.y[i]):g} {text[i]}")
    row = 0  # the first Evaluate row
    r_hat = np.clip([m.predict(text[ev.start + row]) for m in models], 0.0, 1.0)
    for m in models:
        m.finish()
    pi = _target_policy(ds, learn, P_learn, R.dataset_rng(seed, ds.id, si, 1))
    pi_row = pi.probs(ds.X[ev.start + row:ev.start + row + 1])[0]
    pi.close()
    assert (P_eval[row] > 0).all()  # epsilon-greedy: every action can be logged
    assert np.sort(pi_row).tolist() == [0.0, 0.0, 1.0]
    expected_row = float(np.sum(pi_row * r_hat))

    setup = R.ope_setup(ds, si, strategy, seed)
    assert setup.logged_init.tolist() == logged
    sample, actions, predicted, expected = setup.evaluation(0)
    assert expected[row] == pytest.approx(expected_row, abs=1e-12)
    assert predicted[row] == pytest.approx(r_hat[actions[row]], abs=1e-12)
    c = elcvx.constraints.reward_model(sample, predicted, expected, deterministic=True)
    assert c.values[row] == pytest.approx(sample.w[row] * r_hat[actions[row]] - expected_row, abs=1e-12)
    # the table's el-cv row is EL with this constraint (at the study's rho = 1/2)
    assert est[0] == pytest.approx(elcvx.estimate(sample, constraints=[c], rho="midpoint").value, abs=1e-12)
    assert dr[0] == pytest.approx(np.mean(expected + sample.w * (sample.r - predicted)), abs=1e-12)


def test_el_cv_failures_are_counted_not_dropped():
    """A failed el-cv solve is a nan row: counted in the tables and the summary, not dropped."""
    ope, ints, pols = [], [], []
    rng = np.random.default_rng(5)
    for d in (1, 2):
        for rep in range(4):
            for k in R.ESTIMATORS:
                v = np.nan if (d, rep, k) == (2, 1, "el-cv") else float(rng.random())
                ope.append(dict(dataset=d, strategy="bag=10", replicate=rep, estimator=k, estimate=v, truth=0.5))
            for m in R.INTERVAL_METHODS:
                lo, hi = (np.nan, np.nan) if (d, rep, m) == (2, 1, "el-cv-chi2") else (0.4, 0.6)
                ints.append(dict(dataset=d, strategy="bag=10", replicate=rep, method=m, low=lo, high=hi, truth=0.5))
        pols.append(dict(dataset=d, strategy="bag=10", table="ope", support_deficit=0.0, el_fallbacks=0,
                         elcv_fallbacks=int(d == 2), elcv_failures=2 * int(d == 2),
                         elcv_failed_replicates="1" if d == 2 else "",
                         elcv_error="estimate: SolverError: stalled" if d == 2 else "",
                         rhat_mse=0.1, truth=0.5))
    st = R.RealisticStudy(datasets=[1, 2], strategies=("bag=10",), tables=("ope", "ci"), replicates=4,
                          learning_replicates=0, seed=1, ope=ope, intervals=ints, policies=pols)
    t1 = {(r["estimator"], r["versus"]): r for r in st.ope_table()}
    assert t1["el-cv", "ips"]["failed"] == 1 and t1["el", "ips"]["failed"] == 0
    assert t1["el-cv", "snips"]["datasets"] == 2  # the other 3 evaluations of dataset 2 still count
    t3 = {r["method"]: r for r in st.ci_table()}
    assert (t3["el-cv-chi2"]["n"], t3["el-cv-chi2"]["failed"]) == (7, 1)
    assert (t3["el-chi2"]["n"], t3["el-chi2"]["failed"]) == (8, 0)
    summary = st.summary_markdown()
    assert "| 2 | bag=10 | 1 | 2 | 1 | estimate: SolverError: stalled |" in summary
    assert "failed both ways (`nan` rows, counted above): 2" in summary
