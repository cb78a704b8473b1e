"""The weight check where a sample is built from probabilities (issue 38, item 1).

``Sample.from_probs(logging_prob, target_prob, reward)`` — the two columns swapped — used to give
a confident wrong estimate without a word from Python, where ``read_log`` and the command line
warned. Here: the same check, issued once as a ``WeightWarning``, kept on the sample and on the
results users read first (``EstimateResult.notes``, ``IntervalResult.notes``); none on a correct
log, none from the plain constructor; the one-pass screen that spares the MLE agrees with the
full check; ``elcvx evaluate --strict`` turns a failed check into exit status 2.
"""

from __future__ import annotations

import copy
import json
import pickle
import warnings

import numpy as np
import pytest

import elcvx
from elcvx import Sample, checks, dispatch
from elcvx.cli import main
from elcvx.errors import WeightWarning
from sample_cases import draw

K, X = 5, 10  # actions, contexts
EPS_LOG, EPS_TARGET = 0.5, 0.1  # epsilon of the logging policy and of the target


def policies():
    """``(mu, H, P)``: the reward means ``mu[x, a]``, the epsilon-greedy logging policy ``H``
    (greedy on an action that is not the best) and the target ``P`` (epsilon-greedy on the
    best); both give every action a positive probability, so the swapped columns are valid
    probabilities too."""
    mu = np.random.default_rng(123).uniform(0.1, 0.9, (X, K))
    best = mu.argmax(axis=1)
    H = np.full((X, K), EPS_LOG / K)
    H[np.arange(X), (best + 1) % K] += 1 - EPS_LOG
    P = np.full((X, K), EPS_TARGET / K)
    P[np.arange(X), best] += 1 - EPS_TARGET
    return mu, H, P


def truth() -> float:
    """The target's value from its definition: contexts uniform, ``V = E_x sum_a P(a|x) mu(x, a)``."""
    mu, _, P = policies()
    return float(np.mean(np.sum(P * mu, axis=1)))


def epsilon_greedy_log(n=50_000, seed=0):
    """``(target_prob, logging_prob, reward)`` of the logged actions: ``n`` rows, 5 actions."""
    mu, H, P = policies()
    rng = np.random.default_rng(seed)
    x = rng.integers(X, size=n)
    a = (rng.random((n, 1)) > np.cumsum(H[x], axis=1)).sum(axis=1)  # a ~ H(.|x)
    r = (rng.random(n) < mu[x, a]).astype(float)
    return P[x, a], H[x, a], r


def weight_warnings(record):
    return [w for w in record if issubclass(w.category, WeightWarning)]


def test_swapped_columns_warn_once_and_the_note_is_on_the_results():
    target, logging, reward = epsilon_greedy_log()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = Sample.from_probs(logging, target, reward)  # swapped, no pmin
        est, ci = elcvx.estimate(s), elcvx.interval(s)
        again = est.confidence_interval()
        ev = elcvx.evaluate(s)
    weight = weight_warnings(caught)
    assert len(weight) == 1 and weight[0].filename == __file__  # once, at the user's line
    note = str(weight[0].message)
    assert note.startswith("the importance weights (target_prob / logging_prob) average ")
    assert "the probability columns are probably wrong" in note
    # the mean the note states, from the definition: sum H(a|x)^2 / P(a|x) over a, mean over x
    _, H, P = policies()
    mean = float(np.mean(np.sum(H**2 / P, axis=1)))
    said = float(note.split(" average ", 1)[1].split(" ", 1)[0])
    assert said == pytest.approx(mean, rel=0.01)  # (its standard error: 0.3% of it)
    assert s.notes == (note,)
    assert est.notes == (note,) and ci.notes == (note,) and again.notes == (note,)
    assert ev.notes.count(note) == 1 and sum("E[w] = 1" in n for n in ev.notes) == 1
    assert "notes=(" in repr(est) and "notes=(" in repr(ci)
    assert est.to_dict()["notes"] == [note]
    # what the note is about: the answer is confidently wrong
    v = truth()
    assert not ci.low <= v <= ci.high and abs(est.value - v) > 0.1


def test_a_correct_log_does_not_warn_and_its_interval_covers_the_truth():
    target, logging, reward = epsilon_greedy_log()
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeightWarning)
        s = Sample.from_probs(target, logging, reward, pmin=EPS_LOG / K)
        est, ci = elcvx.estimate(s), elcvx.interval(s)
    assert s.notes == () and est.notes == () and ci.notes == ()
    assert "notes" not in repr(est) and "notes" not in repr(ci)
    assert ci.low <= truth() <= ci.high


def test_the_check_shares_the_mle_with_the_estimate():
    target, logging, reward = epsilon_greedy_log(n=5_000)
    with pytest.warns(WeightWarning):
        s = Sample.from_probs(logging, target, reward)
    cached = dispatch._MLE_CACHE[s]["auto"]  # solved by the check, before any estimate
    assert elcvx.estimate(s).loglik == cached[0].loglik
    assert dispatch.mle(s, "fast") is cached  # "auto" solved on the fast path: the same answer
    # a log plainly fine costs no solve at all (the screen's one pass)
    good = Sample.from_probs(target, logging, reward, pmin=EPS_LOG / K)
    assert checks.plainly_fine(good) and good not in dispatch._MLE_CACHE


def test_the_constructor_does_not_check():
    # weights that do not average 1, given directly: the package's own samples and simulations
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeightWarning)
        s = Sample(np.tile([0.0, 3.0], 5_000), np.tile([0.0, 1.0], 5_000), wmax=10)
        assert elcvx.estimate(s).notes == ()
        target, logging, reward = epsilon_greedy_log(n=2_000)
        assert Sample.from_probs(logging, target, reward, check=False).notes == ()
    assert s.notes == () and not s.weight_check().plausible  # the check itself still says so


def test_notes_survive_compress_with_rewards_copy_and_pickle():
    target, logging, reward = epsilon_greedy_log(n=5_000)
    with pytest.warns(WeightWarning):
        s = Sample.from_probs(logging, target, reward)
    assert s.notes
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeightWarning)  # (carried, not checked again)
        for other in (s.compress(), s.with_rewards(1.0 - s.r), copy.deepcopy(s),
                      pickle.loads(pickle.dumps(s))):
            assert other.notes == s.notes


def test_read_log_warns_once_and_its_estimate_carries_the_note(tmp_path):
    pd = pytest.importorskip("pandas")
    target, logging, reward = epsilon_greedy_log(n=5_000)
    path = tmp_path / "swapped.csv"
    pd.DataFrame({"target_prob": logging, "logging_prob": target, "reward": reward}).to_csv(path, index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = elcvx.io.read_log(path)
    weight = weight_warnings(caught)
    assert len(weight) == 1  # the reader's own check, not also from_probs's
    note = str(weight[0].message)
    assert log.notes == (note,) and log.sample.notes == (note,)
    assert elcvx.estimate(log).notes == (note,) and elcvx.interval(log).notes == (note,)
    assert elcvx.evaluate(log).notes.count(note) == 1


@pytest.mark.parametrize("seed", range(0, 440, 4))
def test_the_screen_never_hides_a_note(seed):
    # plainly_fine(s) promises that weight_check(s) has nothing to say: on the fuzz suite's
    # samples (every regime, seed % 11)
    s = draw(seed).sample
    if checks.plainly_fine(s):
        assert s.weight_check().message == ""


@pytest.mark.parametrize("w, wmin, wmax, fine, says", [
    # mean 0.998 with wmax = inf: the atom at infinity carries 1 - mean = 0.002 > 1e-3
    (np.tile([0.0, 1.996], 500), 0.0, np.inf, False, "unobserved, unbounded weight"),
    # mean 0.9995: 0.0005 of weighted mass at infinity, under 1e-3
    (np.tile([0.0, 1.999], 500), 0.0, np.inf, True, ""),
    # every weight 1.04 > 1 with wmin = 0.5: the atom at wmin takes mass m with
    # (1 - m) 1.04 + 0.5 m = 1, m = 0.04 / 0.54, and weighted mass 0.5 m = 0.037: the screen
    # must ask, though the mean is within 0.05 of 1
    (np.full(1000, 1.04), 0.5, np.inf, False, "unobserved, unbounded weight"),
    # mean 1.06 with a finite wmax: outside the 0.05 tolerance, the statistic decides (N = 10,000:
    # se = 0.94 / 100, 6.4 standard errors, a statistic near 40 > 16)
    (np.tile([0.12, 2.0], 5000), 0.0, 10.0, False, "the probability columns are probably wrong"),
    # mean 1.06 in a small log (N = 1,000, 2 standard errors): the screen asks, the test clears it
    (np.tile([0.12, 2.0], 500), 0.0, 10.0, False, ""),
])
def test_the_screen_at_its_edges(w, wmin, wmax, fine, says):
    s = Sample(w, np.tile([0.0, 1.0], w.size // 2), wmin=wmin, wmax=wmax)
    assert checks.plainly_fine(s) is fine
    message = s.weight_check().message
    assert (says in message) if says else message == ""
    if wmin == 0.5:  # the weighted mass the comment derives
        assert s.weight_check().unobserved_wmass == pytest.approx(0.5 * 0.04 / 0.54, rel=1e-6)


def test_cli_strict_exits_2_with_one_line(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    target, logging, reward = epsilon_greedy_log()
    swapped, correct = tmp_path / "swapped.csv", tmp_path / "correct.csv"
    pd.DataFrame({"target_prob": logging, "logging_prob": target, "reward": reward}).to_csv(swapped, index=False)
    pd.DataFrame({"target_prob": target, "logging_prob": logging, "reward": reward}).to_csv(correct, index=False)
    # without --strict: the note, which says what --strict does, and exit status 0
    assert main(["evaluate", str(swapped)]) == 0
    out, err = capsys.readouterr()
    note = [line for line in out.splitlines() if "E[w] = 1" in line]
    assert len(note) == 1 and note[0].endswith("elcvx evaluate --strict makes a failed weight check an error (exit 2)")
    assert main(["evaluate", str(swapped), "--format", "json"]) == 0
    assert sum("--strict" in n for n in json.loads(capsys.readouterr().out)["notes"]) == 1
    # with it: one line on stderr, nothing on stdout, exit status 2
    assert main(["evaluate", str(swapped), "--strict"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith("elcvx: error: the weight check failed (--strict): the importance "
                          "weights (target_prob / logging_prob) average ")
    # a correct log with its bound passes; without a bound, wmax = inf fails the strict check
    # when the estimate depends on the unobserved weight (the help says so)
    assert main(["evaluate", str(correct), "--strict", "--pmin", str(EPS_LOG / K)]) == 0
    assert "note: the importance weights" not in capsys.readouterr().out


def test_cli_select_notes_a_wrong_candidate_and_strict_exits_2(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    # two actions logged uniformly; 'wrong' gives 0.9 to both (not a policy): its weights are
    # 1.8 on every row, so their mean, from the definition, is 1.8
    rng = np.random.default_rng(0)
    n = 5_000
    a = rng.integers(0, 2, n)
    df = pd.DataFrame({"logging_prob": 0.5, "reward": (rng.random(n) < np.where(a == 1, 0.8, 0.3)).astype(float),
                       "good": np.where(a == 1, 0.9, 0.1), "wrong": 0.9})
    df.to_csv(tmp_path / "c.csv", index=False)
    argv = ["select", str(tmp_path / "c.csv"), "--candidates", "good,wrong", "--pmin", "0.5"]
    assert main(argv) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and notes[0].startswith("note: the importance weights (wrong / logging_prob) average 1.8 ")
    assert notes[0].endswith("elcvx select --strict makes a failed weight check an error (exit 2)")
    assert main(argv + ["--strict"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "(wrong / logging_prob) average 1.8" in err
    assert main(["select", str(tmp_path / "c.csv"), "--candidates", "good", "--pmin", "0.5", "--strict"]) == 0
    assert "note:" not in capsys.readouterr().out
