"""``elcvx.select``: bounds that hold together over K candidates, the paired gain, the rules.

The guarantee is checked by simulation on logs whose values are known exactly: a context-free
bandit with four actions, each rewarded with probability 1/2, logged uniformly (``p = 1/4``,
so ``wmax = 4``). Every candidate then has the value 1/2 and every gain is 0, whatever its
probabilities: the case where a selection's optimism is largest, since every candidate's bound
has the same chance to overshoot.
"""

import math

import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import InvalidInputError, Sample

ACTIONS = 4
#: Ten candidate policies over the four actions (fixed Dirichlet draws, seed 7).
POLICIES = np.random.default_rng(7).dirichlet(np.ones(ACTIONS), size=10)


def null_log(rng, n, mu=0.5):
    """``(probs (N, K), p0, r)``: a uniform log of ``n`` rows; each reward Bernoulli(``mu``)."""
    a = rng.integers(0, ACTIONS, n)
    r = (rng.random(n) < mu).astype(float)
    return POLICIES[:, a].T, np.full(n, 1.0 / ACTIONS), r


def failures(res, value=0.5):
    """Whether a statement of ``res`` is false at the true values (all ``value``, gains 0)."""
    return bool(np.any(res.low > value + 1e-12) or np.any(res.gain > 1e-12))


# ------------------------------------------------------------------------------------------------
# The simultaneous guarantee
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("baseline", ["logging", 0])
def test_the_family_wise_error_rate_is_at_most_delta_over_1000_logs(baseline):
    """LS holds at every N: the bounds and the gains (against the logging policy, or against
    a candidate) fail together in at most delta of 1,000 logs of 200 rows."""
    rng = np.random.default_rng(2026)
    fails = sum(failures(elcvx.select(*null_log(rng, 200), pmin=0.25, baseline=baseline,
                                      method="ls", confidence_level=0.9))
                for _ in range(1000))
    assert fails / 1000 <= 0.1


@pytest.mark.parametrize("logs", [60, pytest.param(200, marks=pytest.mark.slow)])
def test_an_uncorrected_choice_breaks_the_promise(logs):
    """Each bound at 90% for itself (what one call per candidate gives): the largest of ten
    one-sided EL bounds overshoots its candidate's value far more often than 10% of logs, while
    select's bounds at the same 90% hold together in at most 10% (one-sided EL is asymptotic;
    200 logs: the standard error of a 10% rate is 2.1%). The study's 200 logs are slow (``make
    test-slow``); the default suite runs the first 60 of them (same seed; 37% and 7% there, 29%
    and 2.5% over 200)."""
    rng = np.random.default_rng(11)
    chosen_over, family_fails = 0, 0
    for _ in range(logs):
        probs, p0, r = null_log(rng, 300)
        lows = [elcvx.interval(Sample(probs[:, k] / p0, r, wmax=4.0), confidence_level=0.9,
                               alternative="greater", calibration="chi2").low
                for k in range(probs.shape[1])]
        chosen_over += max(lows) > 0.5
        family_fails += failures(elcvx.select(probs, p0, r, pmin=0.25, confidence_level=0.9,
                                              baseline="logging"))
    assert chosen_over / logs > 0.25       # 10% + 7 standard errors at 200 logs
    assert family_fails / logs <= 0.1


@pytest.mark.slow
@pytest.mark.parametrize("method", ["el", "el-betting", "ix", "eb"])
def test_the_family_wise_error_rate_of_each_method(method):
    rng = np.random.default_rng(99)
    fails = sum(failures(elcvx.select(*null_log(rng, 300), pmin=0.25, baseline="logging",
                                      method=method, confidence_level=0.9))
                for _ in range(1000))
    assert fails / 1000 <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / 1000)


# ------------------------------------------------------------------------------------------------
# The numbers: each a separate call at the Bonferroni level, or a formula written here
# ------------------------------------------------------------------------------------------------
def a_log(seed=3, n=500):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, ACTIONS, n)
    mu = np.array([0.2, 0.4, 0.6, 0.8])
    r = (rng.random(n) < mu[a]).astype(float)
    return POLICIES[:4, a].T, np.full(n, 1.0 / ACTIONS), r


def test_el_numbers_are_those_of_separate_calls_at_the_bonferroni_level():
    probs, p0, r = a_log()
    res = elcvx.select(probs, p0, r, pmin=0.25, baseline=1)
    # 4 bounds and 3 gains (the baseline's own gain is 0, not a statement)
    assert res.statements == 7 and res.statement_level == 1 - 0.05 / 7
    for k in range(4):
        s = Sample(probs[:, k] / p0, r, wmax=4.0)
        assert res.low[k] == elcvx.interval(s, confidence_level=1 - 0.05 / 7,
                                            alternative="greater", calibration="chi2").low
        assert res.estimate[k] == elcvx.estimate(s).value
        if k != 1:
            d = elcvx.difference(s, Sample(probs[:, 1] / p0, r, wmax=4.0),
                                 confidence_level=1 - 0.05 / 7, alternative="greater")
            assert res.gain[k] == d.low
    assert res.gain[1] == 0.0


def test_ls_gain_is_the_ls_bound_of_z_written_here():
    """LS (Sakhi et al. 2024) on ``Z = w_k r + (1 - r) >= 0``, whose mean is ``1 + V_k -
    V_logging``: ``(exp(mean log(1 + lam Z) - log(1/delta)/N) - 1)/lam - 1``, ``lam = 1/sqrt(N)``."""
    probs, p0, r = a_log(n=400)
    res = elcvx.select(probs, p0, r, pmin=0.25, baseline="logging", method="ls")
    delta, lam = 0.05 / 8, 1 / math.sqrt(400)
    for k in range(4):
        z = probs[:, k] / p0 * r + (1 - r)
        low = math.expm1(np.mean(np.log1p(lam * z)) - math.log(1 / delta) / 400) / lam
        assert res.gain[k] == pytest.approx(low - 1, rel=1e-12, abs=1e-12)
        x = probs[:, k] / p0 * r  # the marginal LS bound at the same level
        marginal = math.expm1(np.mean(np.log1p(lam * x)) - math.log(1 / delta) / 400) / lam
        assert res.low[k] == pytest.approx(max(marginal, 0.0), rel=1e-12, abs=1e-12)


def test_el_betting_gain_is_the_bound_minus_the_baselines_upper_bound():
    from elcvx.baselines import upper_bound

    probs, p0, r = a_log(n=300)
    res = elcvx.select(probs, p0, r, pmin=0.25, baseline=0, method="el-betting")
    assert res.statements == 4 + 3 + 1
    top = upper_bound(Sample(probs[:, 0] / p0, r, wmax=4.0), method="el-betting",
                      confidence_level=1 - 0.05 / 8).high
    assert np.array_equal(res.gain[1:], res.low[1:] - top)


def test_the_paired_gain_is_tighter_than_two_marginal_bounds():
    """Two policies that agree on most rows (true gain 0.05 x 0.2 = 0.01): the paired EL bound
    certifies the gain, the difference of the two marginal bounds at the same level cannot."""
    rng = np.random.default_rng(5)
    n = 2000
    a = rng.integers(0, 2, n)
    r = (rng.random(n) < np.where(a == 1, 0.7, 0.5)).astype(float)
    pi1 = np.array([0.55, 0.5])  # candidate 0 moves 5% of the mass to the better action
    probs = np.where(a[:, None] == 1, pi1, 1 - pi1)
    res = elcvx.select(probs, np.full(n, 0.5), r, pmin=0.5, baseline=1)
    separate = elcvx.interval(Sample(probs[:, 1] / 0.5, r, wmax=2.0),
                              confidence_level=res.statement_level, alternative="less",
                              calibration="chi2").high
    assert res.gain[0] > 0.0 > res.low[0] - separate
    assert res.chosen == 0 and res.beats_baseline


# ------------------------------------------------------------------------------------------------
# The rules
# ------------------------------------------------------------------------------------------------
def two_action_log(n=600, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    r = (rng.random(n) < np.where(a == 1, 0.8, 0.3)).astype(float)
    return a, r


def test_gain_rule_keeps_the_baseline_when_nothing_beats_it():
    a, r = two_action_log()
    pi1 = np.array([0.5, 0.1, 0.2])  # the logging policy itself, and two worse ones
    probs = np.where(a[:, None] == 1, pi1, 1 - pi1)
    res = elcvx.select(probs, np.full(a.size, 0.5), r, pmin=0.5, baseline=0, rule="gain")
    assert res.chosen == 0 and res.certified_gain == 0.0 and not res.beats_baseline
    not_a_candidate = elcvx.select(probs[:, 1:], np.full(a.size, 0.5), r, pmin=0.5,
                                   baseline="logging", rule="gain")
    assert not_a_candidate.chosen is None and not not_a_candidate.is_chosen.any()
    assert "keep it" in not_a_candidate.guarantee


def test_each_rule_chooses_as_documented():
    a, r = two_action_log(n=3000)
    pi1 = np.array([0.95, 0.6, 0.5])
    probs = np.where(a[:, None] == 1, pi1, 1 - pi1)
    res = {rule: elcvx.select(probs, np.full(a.size, 0.5), r, pmin=0.5, baseline=2, rule=rule)
           for rule in ("gain", "bound", "estimate")}
    for rule, x in res.items():
        assert x.chosen == 0, rule
        assert x.chosen == int(np.argmax(x.low))
    assert res["gain"].beats_baseline and res["gain"].certified_gain == res["gain"].gain[0]
    # without a baseline the rule is "bound", and the gains are NaN
    plain = elcvx.select(probs, np.full(a.size, 0.5), r, pmin=0.5)
    assert plain.rule == "bound" and plain.statements == 3 and np.isnan(plain.gain).all()


def test_ties_go_to_the_baseline_then_to_the_first():
    from elcvx.selection import _choose

    low = np.array([0.3, 0.5, 0.5, 0.5])
    assert _choose("bound", low, low, low, None) == 1
    assert _choose("bound", low, low, low, 2) == 2
    gain = np.array([0.0, 0.2, 0.2, -0.1])
    assert _choose("gain", low, low, gain, 0) == 1
    assert _choose("estimate", np.array([9.0, 1.0, 2.0, 9.0]), low, gain, 0) == 2
    assert _choose("gain", low, low, np.array([0.0, -0.1, 0.0, 0.0]), 3) == 3


# ------------------------------------------------------------------------------------------------
# Input, output
# ------------------------------------------------------------------------------------------------
def test_a_dataframe_names_the_candidates_and_to_frame_has_one_row_each():
    pd = pytest.importorskip("pandas")
    probs, p0, r = a_log(n=300)
    frame = pd.DataFrame(probs, columns=["a", "b", "c", "d"])
    res = elcvx.select(frame, p0, r, pmin=0.25, baseline="c")
    out = res.to_frame()
    assert list(out.columns) == ["name", "estimate", "low", "gain", "is_chosen"]
    assert list(out["name"]) == ["a", "b", "c", "d"] and out["is_chosen"].sum() == 1
    assert out.attrs["chosen_name"] == res.chosen_name and out.attrs["baseline"] == "c"
    assert res.to_dict()["name"] == ["a", "b", "c", "d"]


@pytest.mark.parametrize("kwargs, field, words", [
    (dict(target_probs=[[0.5, 1.5]] * 3), "target_probs", "target_probs[0, 1]=1.5"),
    (dict(logging_probs=[0.5, 0.0, 0.5]), "logging_probs", "logging_probs[1]=0.0"),
    (dict(rewards=[0.0, 2.0, 1.0]), "r", "rewards"),
    (dict(baseline="nope"), "baseline", "'nope' is not a candidate"),
    (dict(baseline=5), "baseline", "0 to 1"),
    (dict(method="ips"), "method", "'el', 'el-betting', 'ls', 'ix', 'eb'"),
    (dict(rule="gain", baseline=None), "rule", "baseline="),
    (dict(wmax=[4.0]), "wmax", "one per candidate (2)"),
    (dict(pmin=0.6), "logging_probs", "below pmin"),
    (dict(target_probs=[[0.5, 1.0]] * 3, wmax=[4.0, 1.5]), "w", "candidate '1'"),
])
def test_bad_input_names_the_field(kwargs, field, words):
    args = dict(target_probs=[[0.5, 0.2]] * 3, logging_probs=[0.5, 0.5, 0.5],
                rewards=[0.0, 1.0, 1.0], pmin=0.5, baseline=0)
    args.update(kwargs)
    with pytest.raises(InvalidInputError) as e:
        elcvx.select(args.pop("target_probs"), args.pop("logging_probs"), args.pop("rewards"),
                     **args)
    assert e.value.field == field and words in str(e.value)


def test_the_guarantee_says_what_holds():
    probs, p0, r = a_log(n=300)
    res = elcvx.select(probs, p0, r, pmin=0.25, baseline="logging")
    text = res.guarantee
    assert "at least 0.95" in text and "8 statements" in text and "'logging'" in text
    assert res.rule == "bound" and not res.beats_baseline
    assert f"Chosen: '{res.chosen_name}' (rule 'bound'), not certified better than 'logging'" in text
    res = elcvx.select(probs, p0, r, pmin=0.25, baseline="logging", rule="gain")
    assert res.chosen is None and "No candidate is certified to beat 'logging'" in res.guarantee
    a, r = two_action_log()
    probs = np.where(a[:, None] == 1, [0.5, 0.9], [0.5, 0.1])
    res = elcvx.select(probs, np.full(a.size, 0.5), r, pmin=0.5, baseline=0)
    assert res.chosen == 1
    assert f"Chosen: '1' (rule 'bound'), certified better than '0' (gain >= {res.gain[1]:.6g})" \
        in res.guarantee
    # the level of each statement is the Bonferroni one
    assert res.statements == 3 and res.statement_level == 1 - 0.05 / 3
    assert stats.norm.ppf(res.statement_level) > stats.norm.ppf(0.95)


def test_threads_give_each_candidates_own_numbers():
    """From THREADED_ROWS rows the candidates run on several threads; the numbers are those of
    one thread, bit for bit."""
    from elcvx.selection import THREADED_ROWS

    probs, p0, r = a_log(seed=8, n=THREADED_ROWS)
    one = elcvx.select(probs, p0, r, pmin=0.25, baseline="logging", threads=1)
    two = elcvx.select(probs, p0, r, pmin=0.25, baseline="logging", threads=2)
    for field in ("estimate", "low", "gain"):
        assert np.array_equal(getattr(one, field), getattr(two, field)), field
    assert one.chosen == two.chosen
