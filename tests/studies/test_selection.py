"""The selection study (elcvx reproduce selection): its splits, draws, true values and scores
against the authors' definitions written out here, the choosing rule on hand cases, a smoke run
of the command, and the committed numbers the page quotes."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from elcvx.datasets import find_set_dir, missing_set_reason
from elcvx.errors import InvalidInputError
from elcvx.experiments.realistic.data import Dataset
from elcvx.experiments.selection import methods, protocol, report, study, training
from elcvx.testing import assert_agree

ROOT = Path(__file__).resolve().parents[2]
# ../shared/data/pessimism, else data/pessimism (elcvx datasets fetch --set pessimism)
DATA = find_set_dir("pessimism", ROOT)
COMMITTED = ROOT / "docs" / "selection"
NO_DATA = pytest.mark.skipif(DATA is None, reason=missing_set_reason("pessimism", ROOT))


def test_split_is_scikit_learns():
    # Expected rows printed by scikit-learn 1.9.1 (numpy 2.4.6) in a scratch venv:
    #   kept, held = train_test_split(rows, train_size=0.2 + 0.5, shuffle=True, random_state=0)
    #   train, log = train_test_split(kept, train_size=0.2 / (0.2 + 0.5), shuffle=True,
    #                                 random_state=0)
    train, log, held = protocol.split_indices(10)
    assert (train.tolist(), log.tolist(), held.tolist()) == ([0, 3], [5, 6, 1, 7, 9], [2, 8, 4])
    train, log, held = protocol.split_indices(846)  # vehicle's rows
    assert train[:5].tolist() == [282, 227, 619, 589, 388] and train[-1] == 431
    assert log[:5].tolist() == [473, 724, 599, 596, 176] and log[-1] == 524
    assert held[:5].tolist() == [506, 222, 612, 730, 661] and held[-1] == 358
    # The logged rows of the five datasets: the n_log of the published files' names
    # (yeast_742, vehicle_423, page-blocks_2737, optdigits_2810, kropt_14028).
    for n, n_log in ((1484, 742), (846, 423), (5473, 2737), (5620, 2810), (28056, 14028)):
        parts = protocol.split_indices(n)
        assert parts[1].size == n_log
        assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(n))


def test_split_against_scikit_learn_when_installed():
    sklearn = pytest.importorskip("sklearn.model_selection")
    for n in (10, 37, 101, 1484):
        rows = np.arange(n)
        kept, held = sklearn.train_test_split(rows, train_size=0.7, shuffle=True, random_state=0)
        train, log = sklearn.train_test_split(kept, train_size=0.2 / 0.7, shuffle=True,
                                              random_state=0)
        ours = protocol.split_indices(n)
        assert all(np.array_equal(a, b) for a, b in zip(ours, (train, log, held)))


def test_standardise_and_impute():
    X = np.array([[1.0, 5.0, np.nan], [2.0, 5.0, 4.0], [4.0, 5.0, 8.0], [np.nan, 5.0, 0.0]])
    Z = protocol.standardise(X)
    # Column 0: mean 7/3 and population deviation sqrt(14)/3 over 1, 2, 4, so (x - 7/3) * 3 /
    # sqrt(14); scikit-learn's StandardScaler gives -1.0690449676496978, -0.2672612419124245,
    # 1.3363062095621219 and keeps the nan, which is set to 0 here. A constant column is
    # centred only; column 2: (x - 4) / sqrt(32/3) over 4, 8, 0.
    s = math.sqrt(14) / 3
    assert_agree(Z[:, 0], [(1 - 7 / 3) / s, (2 - 7 / 3) / s, (4 - 7 / 3) / s, 0.0], tol=1e-15)
    assert_agree(Z[:, 0][:3], [-1.0690449676496978, -0.2672612419124245, 1.3363062095621219],
                 tol=1e-15)
    assert np.all(Z[:, 1] == 0.0)
    d = math.sqrt(32 / 3)
    assert_agree(Z[:, 2], [0.0, 0.0, 4 / d, -4 / d], tol=1e-15)
    with pytest.raises(InvalidInputError, match="feature 0 has no value"):
        protocol.standardise(np.array([[np.nan, 1.0], [np.nan, 2.0]]))


def authors_log(probs, labels, eta, seed):
    """The authors' draws, row by row: np.random.seed(seed); np.random.choice per row
    (SoftmaxDataPolicy.query); then get_reward's np.random.binomial(n=1, p=eta, size=n)."""
    rs = np.random.RandomState(seed)
    actions = np.array([rs.choice(probs.shape[1], p=row) for row in probs])
    p0 = probs[np.arange(actions.size), actions]
    flips = rs.binomial(n=1, p=eta, size=actions.size)
    return actions, p0, ((actions == labels) + flips) % 2


def test_logs_are_the_authors_draws():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 5, 400)
    for probs in (protocol.label_policy(labels, 5, 0.2, (0, 1)),
                  rng.dirichlet(np.ones(5), size=400)):
        a, p0, r = authors_log(probs, labels, 0.2, seed=7)
        rs = np.random.RandomState(7)
        ours_a, ours_p0 = protocol.draw_actions(probs, rs)
        ours_r = protocol.draw_rewards(ours_a, labels, 0.2, rs)
        assert np.array_equal(ours_a, a) and np.array_equal(ours_p0, p0)
        assert np.array_equal(ours_r, r.astype(float))


def test_label_policies():
    # K = 4: the logging policy at 0.2 puts e^5 / (e^5 + 3) on label + 1 for classes 0, 1.
    h = protocol.label_policy(np.array([0, 1, 2, 3]), 4, 0.2, (0, 1))
    peak = math.exp(5) / (math.exp(5) + 3)
    assert np.argmax(h, axis=1).tolist() == [1, 2, 2, 3]
    assert_agree(h.max(axis=1), peak, tol=1e-15)
    assert_agree(h.sum(axis=1), 1.0, tol=1e-15)


def test_true_value_by_hand():
    # Two held-out rows, K = 3, eta = 0.2 (E[r] = 0.8 on the label, 0.2 elsewhere):
    # row 1 (label 0): 0.5 * 0.8 + 0.5 * 0.2 = 0.5; row 2 (label 2): 0.8 * 0.8 + 0.2 * 0.2 = 0.68.
    probs = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    assert protocol.true_value(probs, np.array([0, 2]), 0.2) == pytest.approx(0.59, abs=1e-15)
    # The perfect policy: 0.2 + 0.6 p on every row, p = e^10 / (e^10 + K - 1).
    labels = np.array([0, 1, 2, 2, 1])
    p = math.exp(10) / (math.exp(10) + 2)
    assert_agree(protocol.true_value(protocol.label_policy(labels, 3, 0.1), labels, 0.2),
                 0.2 + 0.6 * p, tol=1e-15)


def test_score_by_hand():
    perfect, logging = 0.79, 0.58
    assert protocol.score(0.79, logging, perfect) == "BEST"
    assert protocol.score(0.58, logging, perfect) == "BETTER"  # a tie with the logging policy
    assert protocol.score(0.60, logging, perfect) == "BETTER"
    assert protocol.score(0.57, logging, perfect) == "WORSE"
    # BEST is "the perfect policy's value", even where the logging policy's is the same number.
    assert protocol.score(0.5, 0.5, 0.5) == "BEST"


def test_choose_breaks_ties_by_the_lowest_index():
    rng = np.random.default_rng(0)
    n = 200
    p0 = np.full(n, 0.5)
    r = rng.integers(0, 2, n).astype(float)
    same = np.full((n, 4), 0.5)  # four identical candidates: every number ties
    for method in ("ips", "snips", "ls"):
        c = methods.choose(method, same, p0, r, np.full(4, 2.0), 3)
        assert (c.index, c.last, c.tied) == (0, 3, 4), method
    # Candidate 2 takes the rewarded actions only: the largest IPS estimate, no tie.
    target = same.copy()
    target[:, 2] = np.where(r > 0, 1.0, 0.0)
    c = methods.choose("ips", target, p0, r, np.full(4, 2.0), 3)
    assert (c.index, c.last, c.tied) == (2, 2, 1)
    assert_agree(c.estimate[2], 2 * r.mean(), tol=1e-15)  # w = 1 / 0.5 on the rewarded rows
    assert np.isnan(c.low).all()
    with pytest.raises(InvalidInputError, match="method='nope'"):
        methods.choose("nope", same, p0, r, np.full(4, 2.0), 3)


@pytest.mark.skipif(methods.select_function() is not None, reason="elcvx.select is available")
def test_select_is_refused_cleanly_without_elcvx_select():
    assert "select" not in methods.available_methods()
    with pytest.raises(InvalidInputError, match="needs elcvx.select"):
        methods.choose("select", np.full((4, 4), 0.5), np.full(4, 0.5), np.ones(4),
                       np.full(4, 2.0), 3)
    with pytest.raises(InvalidInputError, match="select needs elcvx.select"):
        study.run_study(ROOT, methods=("select",))


def test_select_is_one_call_with_the_contracts_arguments(monkeypatch):
    # A stand-in for elcvx.select that records its call and answers per its contract (chosen,
    # low, estimate): the study's `select` is that one call, with the logging policy as the
    # baseline, every candidate's weight bound and the simultaneous level 0.95.
    import elcvx

    calls = []

    class Result:
        chosen, low, estimate = 1, np.array([0.1, 0.3, 0.2, 0.0]), np.zeros(4)

    def select(target_probs, logging_probs, rewards, **kw):
        calls.append((np.array(target_probs), np.array(logging_probs), np.array(rewards), kw))
        return Result()

    monkeypatch.setattr(elcvx, "select", select, raising=False)
    assert "select" in methods.available_methods()
    P = np.array([[0.5, 0.2, 0.3, 0.5], [0.1, 0.6, 0.3, 0.2]])
    c = methods.choose("select", P, np.array([0.5, 0.2]), np.array([1.0, 0.0]),
                       np.array([3.0, 4.0, 5.0, 6.0]), 3)
    assert (c.index, c.last, c.tied) == (1, 1, 1) and c.low[1] == 0.3
    (target, p0, r, kw), = calls
    assert np.array_equal(target, P) and np.array_equal(p0, [0.5, 0.2])
    assert np.array_equal(r, [1.0, 0.0])
    assert kw["baseline"] == 3 and kw["confidence_level"] == 0.95
    assert np.array_equal(kw["wmax"], [3.0, 4.0, 5.0, 6.0])


def objective(W, X, a, r, p, kind):
    """The authors' log_vhat_(sn_)importance_weighting at temperature 1, written directly."""
    v = X @ W
    pi = np.exp(v - v.max(axis=1, keepdims=True))
    pi_a = (pi / pi.sum(axis=1, keepdims=True))[np.arange(a.size), a]
    if kind == "ips":
        return math.log(np.sum(r * pi_a / (a.size * p)))
    return math.log(np.sum(r * pi_a / p)) - math.log(np.sum(pi_a / p))


@pytest.mark.parametrize("kind", ["ips", "snips"])
def test_one_training_step_is_the_objectives_gradient(kind):
    # From W = 0, one step of size s moves W by s times the gradient: compared with central
    # differences of the objective at W0 (one step taken first, so that pi is not uniform).
    rng = np.random.default_rng(1)
    n, d, k = 60, 3, 4
    X = rng.normal(size=(n, d))
    a = rng.integers(0, k, n)
    p = rng.uniform(0.1, 0.9, n)
    r = (rng.random(n) < 0.5).astype(float)
    W0 = training.train(X, a, r, p, k, kind, steps=1, step_size=0.5)
    W1 = training.train(X, a, r, p, k, kind, steps=2, step_size=0.5)
    eps = 1e-6
    numeric = np.zeros((d, k))
    for i in range(d):
        for j in range(k):
            E = np.zeros((d, k))
            E[i, j] = eps
            numeric[i, j] = (objective(W0 + E, X, a, r, p, kind)
                             - objective(W0 - E, X, a, r, p, kind)) / (2 * eps)
    assert_agree((W1 - W0) / 0.5, numeric, tol=1e-7)
    with pytest.raises(InvalidInputError, match="no positive reward"):
        training.train(X, a, np.zeros(n), p, k, kind, steps=1)


def test_a_tiny_dataset_with_missing_values():
    # 60 rows, K = 3, a feature missing on 5 rows: the study runs (the missing values imputed),
    # the label policies' true values are the closed forms on the held-out rows, and every
    # weight of every log is within its candidate's bound.
    rng = np.random.default_rng(2)
    y = np.tile([0, 1, 2], 20)
    X = np.column_stack([y + rng.normal(size=60), rng.normal(size=60)])
    X[:5, 1] = np.nan
    ds = Dataset(9, "tiny", X, y, 3)
    description, candidates, rows = study.run_dataset(ds, trials=2, steps=20,
                                                      methods=("ips", "ls"))
    # 60 - floor(0.7 * 60) = 18 rows held out; the five nan written above.
    assert description["missing"] == 5 and description["held_out"] == 18
    values = {c["candidate"]: c["value"] for c in candidates}
    p = math.exp(10) / (math.exp(10) + 2)
    assert_agree(values["perfect"], 0.2 + 0.6 * p, tol=1e-15)
    held = protocol.split_indices(60)[2]
    alt = np.where(np.isin(y[held], (0, 1)), (y[held] + 1) % 3, y[held])
    h_peak = math.exp(5) / (math.exp(5) + 2)
    on_label = np.where(alt == y[held], h_peak, (1 - h_peak) / 2)
    assert_agree(values["logging"], np.mean(0.2 + 0.6 * on_label), tol=1e-14)
    assert len(rows) == 2 * 2 and {r["outcome"] for r in rows} <= set(protocol.OUTCOMES)
    # Weight bounds: perfect e^10/(e^10 + 2) (e^5 + 2), trained 1 (e^5 + 2), logging e^5.
    assert_agree([c["wmax"] for c in candidates],
                 [p * (math.exp(5) + 2), math.exp(5) + 2, math.exp(5) + 2, math.exp(5)],
                 tol=1e-13)


@NO_DATA
def test_the_command_on_one_dataset(tmp_path, capsys):
    from elcvx.__main__ import main  # (the whole command: reproduce is the studies')

    argv = ["reproduce", "selection", "--data-dir", str(DATA), "--datasets", "vehicle",
            "--trials", "2", "--steps", "300", "--out", str(tmp_path), "--no-plots"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "selection study: 1 datasets x 2 trials" in out.out
    assert "[selection] vehicle" in out.err
    with open(tmp_path / "summary.csv", newline="") as fh:
        summary = list(csv.DictReader(fh))
    assert list(summary[0]) == ["dataset", "method", "best", "better", "worse", "regret",
                                "certified", "radius", "ties"]
    assert [r["method"] for r in summary] == list(methods.available_methods())
    for r in summary:
        assert int(r["best"]) + int(r["better"]) + int(r["worse"]) == 2
        assert float(r["regret"]) >= 0.0
        assert math.isnan(float(r["certified"])) == (r["method"] in ("ips", "snips"))
    with open(tmp_path / "trials.csv", newline="") as fh:
        trials = list(csv.DictReader(fh))
    assert len(trials) == 2 * len(summary)
    with open(tmp_path / "published.csv", newline="") as fh:
        pub = list(csv.DictReader(fh))
    assert {r["dataset"] for r in pub} == {"vehicle"} and len(pub) == 7
    assert "Not comparable with the published counts" in (tmp_path / "summary.md").read_text()
    assert main(argv[:-3] + ["--datasets", "nope", "--out", str(tmp_path)]) == 2
    assert "datasets ['nope'] not in" in capsys.readouterr().err


def test_published_counts_are_the_authors_files():
    pub = report.published()
    # Ten trials per (dataset, method) of the five datasets, seven methods each.
    assert len(pub) == 35 and all(r["best"] + r["better"] + r["worse"] == 10 for r in pub)
    # Two rows read off ope_ops/ops_results/yeast_742.csv and vehicle_423.csv by eye:
    # yeast SNIW has BEST in 8 trials and WORSE in trials 7 and 9; vehicle IX BEST in 5.
    by = {(r["dataset"], r["method"]): r for r in pub}
    assert (by["yeast", "snips"]["best"], by["yeast", "snips"]["worse"]) == (8, 2)
    assert (by["vehicle", "ix"]["best"], by["vehicle", "ix"]["better"]) == (5, 5)


@NO_DATA
@pytest.mark.slow
def test_yeast_trials_are_the_published_ones():
    # The published protocol on yeast (50,000 steps, 10 trials): IPS, SNIPS, LS, IX and EB
    # choose as in the authors' file trial by trial (ties do not occur here).
    st = study.run_study(DATA, datasets=["yeast"], methods=("ips", "snips", "ls", "ix", "eb"),
                         progress=False)
    counts = {r["method"]: (r["best"], r["better"], r["worse"]) for r in st.summary()}
    pub = {r["method"]: (r["best"], r["better"], r["worse"]) for r in report.published(["yeast"])}
    assert counts == {m: pub[m] for m in counts}


def _committed(name):
    with open(COMMITTED / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.skipif(not (COMMITTED / "summary.csv").exists(), reason="no committed run")
def test_the_page_shows_the_committed_run():
    summary = [dict(r, best=int(r["best"]), better=int(r["better"]), worse=int(r["worse"]),
                    regret=float(r["regret"]), certified=float(r["certified"]),
                    radius=float(r["radius"])) for r in _committed("summary.csv")]
    pub = report.published([r["dataset"] for r in summary])
    page = (ROOT / "docs" / "selection.md").read_text(encoding="utf-8")
    written = (COMMITTED / "summary.md").read_text(encoding="utf-8")
    for table in (report.counts_grid(summary, pub), report.regret_grid(summary)):
        assert "\n".join(table) in page and "\n".join(table) in written
    assert "\n".join(report.comparison_table(summary, pub)) in written
    # The page's claims: 23 of the 25 (dataset, method) pairs with published counts are equal,
    # the two others are EB's, decided by ties, and equal with the authors' tie rule.
    trials = _committed("trials.csv")
    comp = report.comparison(summary, pub, report.authors_counts(trials))
    assert sum(c["same"] for c in comp) == 23 and len(comp) == 25
    assert {(c["dataset"], c["method"]) for c in comp if not c["same"]} == {
        ("vehicle", "eb"), ("page-blocks", "eb")}
    assert all(c["same_authors_ties"] for c in comp)
    assert "23 of the 25" in " ".join(page.split())

