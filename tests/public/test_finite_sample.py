"""The finite-sample bounds (elcvx.baselines.lower_bound / upper_bound).

References: hand computations written here, the authors' code of the LS paper run outside the
project, and the exact probability that a bound exceeds the value, by enumerating every log of
a small discrete bandit.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import optimize

import elcvx
from elcvx import InvalidInputError, Sample
from elcvx.baselines import lower_bound, upper_bound
from elcvx.estimators import el_betting
from elcvx.testing import assert_agree


def authors_inputs(n):
    """The inputs the authors' code was run on (see AUTHORS below): target and logging
    probabilities of the logged action and binary rewards, by formula."""
    i = np.arange(n)
    p0 = 0.02 + 0.96 * ((i * 37) % 101) / 100.0
    p1 = ((i * 53) % 97) / 96.0
    r = ((i * 7) % 3 == 0).astype(float)
    return p1, p0, r


# The lower bounds (and their "est_value") printed by the bound classes of otmhi/offpolicy_ls at
# commit 1fa73795f197d77e41d2e67972be4b09987711ab, ope_ops/evaluators.py, with delta = 0.05 and
# the inputs of authors_inputs(n): PsiBoundEstimator (LS), IXBoundEstimator,
# CIPSEmpBernsteinEstimator, called as bound(p1, p0, r) in a separate virtual environment
# (numpy 2.4, absl-py; their `policies` and `data` modules, which the bounds do not use,
# replaced by empty stand-ins).
AUTHORS = {
    200: {"ls": (0.30334450651455, 0.5119672294280448),
          "ix": (0.2691113668537927, 0.48094162737873475)},
    1000: {"ls": (0.5343451088898759, 0.6246141598329527),
           "ix": (0.49402878013611656, 0.5887621525811687),
           "eb": (0.21858704237950277, 0.6959744374467919)},
}


@pytest.mark.parametrize("n", [200, 1000])
def test_ls_and_ix_match_the_authors_code(n):
    p1, p0, r = authors_inputs(n)
    s = Sample(p1 / p0, r)
    ls = lower_bound(s, method="ls")
    ix = lower_bound(s, method="ix", logging_probs=p0)
    assert_agree([ls.low, ls.estimate], AUTHORS[n]["ls"], tol=1e-12)
    assert_agree([ix.low, ix.estimate], AUTHORS[n]["ix"], tol=1e-12)
    assert (ls.parameter, ix.parameter) == (1 / math.sqrt(n), 0.5 / math.sqrt(n))


def test_eb_differs_from_the_authors_code_by_the_variance_ddof_only():
    # Maurer and Pontil's bound uses the unbiased sample variance; the authors' code np.var
    # (ddof = 0). Add back the difference of the two square-root terms: their number.
    p1, p0, r = authors_inputs(1000)
    s = Sample(p1 / p0, r)
    eb = lower_bound(s, method="eb")
    x = np.minimum(p1 / p0, math.sqrt(1000)) * r
    conf = math.log(2 / 0.05)
    gap = math.sqrt(2 * conf / 1000) * (math.sqrt(x.var(ddof=1)) - math.sqrt(x.var(ddof=0)))
    assert gap > 1e-6  # the two differ visibly
    assert_agree(eb.low + gap, AUTHORS[1000]["eb"][0], tol=1e-12)
    assert_agree(eb.estimate, AUTHORS[1000]["eb"][1], tol=1e-12)


def test_hand_computed_values():
    # Rows x = w u = (0, 2, 1, 0.5) repeated 25 times, N = 100, delta = 0.05.
    s = Sample(np.tile([0.0, 2.0, 2.0, 0.5], 25), np.tile([0.0, 1.0, 0.5, 1.0], 25))
    # LS, lam = 0.1: mean log(1 + 0.1 x) = (log 1.2 + log 1.1 + log 1.05) / 4 = 0.0816057;
    # minus log(20)/100 = 0.0299573 gives 0.0516484; expm1 / 0.1 = 0.530056.
    assert_agree(lower_bound(s, method="ls").low, 0.5300518004043175, tol=1e-12)
    assert_agree(lower_bound(s, method="ls").low, math.expm1(
        (math.log(1.2) + math.log(1.1) + math.log(1.05)) / 4 - math.log(20) / 100) / 0.1, tol=1e-12)
    # IX with p = 0.5 on every row (pi = w / 2), gamma = 0.05: pi u / (p + gamma) = x / 1.1,
    # mean 3.5 / 4.4 = 0.795455; minus log(20) / (2 * 0.05 * 100) = 0.299573.
    ix = lower_bound(s, method="ix", logging_probs=np.full(100, 0.5))
    assert_agree(ix.low, 3.5 / 4.4 - math.log(20) / 10, tol=1e-12)
    # EB, M = 10 clips nothing: mean 0.875, unbiased variance 100/99 * 0.546875 (the squares
    # average (0 + 4 + 1 + 0.25)/4 = 1.3125, minus 0.875^2); the bound is negative: 0.
    assert lower_bound(s, method="eb").low == 0.0
    eb = lower_bound(s, method="eb", confidence_level=0.5, parameter=2.0)
    var = 100 / 99 * (1.3125 - 0.875 ** 2)
    assert_agree(eb.low, 0.875 - math.sqrt(2 * var * math.log(4) / 100) - 14 * math.log(4) / 297,
                 tol=1e-12)


def test_user_scale_upper_bounds_and_counts():
    rng = np.random.default_rng(0)
    w, u = rng.choice([0.0, 0.5, 3.0], 300, p=[0.4, 0.4, 0.2]), rng.uniform(size=300)
    p = 1.0 / np.where(w > 0, 3.0, 2.0)  # logging probabilities with w p <= 1
    s, scaled = Sample(w, u), Sample(w, 2 + 3 * u, rmin=2, rmax=5)
    reflected = Sample(w, 1 - u)
    for method in ("ls", "ix", "eb", "el-betting"):
        extra = dict(logging_probs=p) if method == "ix" else {}
        lo = lower_bound(s, method=method, **extra)
        assert_agree(lower_bound(scaled, method=method, **extra).low, 2 + 3 * lo.low, tol=1e-12)
        up = upper_bound(scaled, method=method, **extra)
        assert up.low == 2.0 and up.alternative == "less"
        assert_agree(up.high, 5 - 3 * lower_bound(reflected, method=method, **extra).low,
                     tol=1e-12)
    # Counts are multiplicities (el-betting excepted: it needs the rows in order).
    dup = Sample(np.r_[w, w[:50]], np.r_[u, u[:50]])
    cnt = Sample(w, u, counts=np.r_[np.full(50, 2.0), np.ones(250)])
    for method in ("ls", "eb"):
        assert_agree(lower_bound(cnt, method=method).low, lower_bound(dup, method=method).low,
                     tol=1e-12)
    assert_agree(lower_bound(cnt, method="ix", logging_probs=p).low,
                 lower_bound(dup, method="ix", logging_probs=np.r_[p, p[:50]]).low, tol=1e-12)
    with pytest.raises(InvalidInputError, match="counts"):
        lower_bound(cnt, method="el-betting")


# A bandit with three outcomes (w, u): E[w] = 1, V = E[w u] = 0.375 + 0.25 = 0.625, wmax = 3;
# the logging policy gives probability 1/3 to the actions with w > 0, 1/2 to the other.
OUTCOMES = [((0.0, 0.0), 0.5), ((1.5, 1.0), 0.25), ((2.5, 0.4), 0.25)]
V_EXACT = 0.625
DELTA = 0.3


def logs(n):
    """Every log of n rows in order: ``(probability, w, u)``."""
    for rows in itertools.product(OUTCOMES, repeat=n):
        yield (math.prod(p for _, p in rows), np.array([x[0] for x, _ in rows]),
               np.array([x[1] for x, _ in rows]))


@pytest.mark.parametrize("method", ["ls", "ix", "eb"])
def test_exact_probability_of_exceeding_the_value_is_at_most_delta(method):
    # These bounds depend on the log through its counts only: sum over the multinomial
    # compositions of N = 60 rows (1891 of them) instead of the 3^60 logs.
    n, total = 60, 0.0
    w, u = np.array([x[0] for x, _ in OUTCOMES]), np.array([x[1] for x, _ in OUTCOMES])
    extra = dict(logging_probs=np.array([0.5, 1 / 3, 1 / 3])) if method == "ix" else {}
    for k0 in range(n + 1):
        for k1 in range(n + 1 - k0):
            k = np.array([k0, k1, n - k0 - k1], dtype=float)
            prob = math.exp(math.lgamma(n + 1) - sum(math.lgamma(x + 1) for x in k)
                            + sum(x * math.log(p) for x, (_, p) in zip(k, OUTCOMES)))
            keep = k > 0
            s = Sample(w[keep], u[keep], counts=k[keep], wmax=3.0)
            kept = {"logging_probs": extra["logging_probs"][keep]} if extra else {}
            if lower_bound(s, method=method, confidence_level=1 - DELTA, **kept).low > V_EXACT:
                total += prob
    assert total <= DELTA
    if method != "eb":  # and informative: above V/2 at the expected counts (EB is 0 there)
        assert lower_bound(Sample(w, u, counts=n * np.array([0.5, 0.25, 0.25]), wmax=3.0),
                           method=method, confidence_level=1 - DELTA, **extra).low > V_EXACT / 2


def wealth_at_the_value(w, u, beta, tau):
    return float(np.prod(1 + beta * (w - 1) + tau * (w * u - V_EXACT)))


def test_el_betting_wealth_at_the_value_is_a_martingale():
    # E[K_N(V)] = 1 exactly over the 3^4 logs of N = 4 rows (one row per block), the identity
    # behind the bound's validity; and the bound exceeds V with probability at most delta.
    mean_wealth, exceed = 0.0, 0.0
    for prob, w, u in logs(4):
        beta, tau = el_betting.bets(w, u, 0.0, 3.0, DELTA)
        mean_wealth += prob * wealth_at_the_value(w, u, beta, tau)
        if el_betting.wealth_bound(w, u, beta, tau, math.log(1 / DELTA)) > V_EXACT:
            exceed += prob
    assert_agree(mean_wealth, 1.0, tol=1e-12)
    assert exceed <= DELTA


def test_the_martingale_check_catches_a_bet_that_reads_its_own_rows():
    # The same check fails when every row is bet on with EL's best bet at V on the whole log
    # (the rows it is about to read included): the mean wealth is no longer 1.
    mean_wealth = 0.0
    for prob, w, u in logs(4):
        best = elcvx.profile(Sample(w, u, wmax=3.0), V_EXACT)
        beta, tau = el_betting.safe(float(best.beta[0]), float(best.tau[0]), 0.0, 3.0)
        mean_wealth += prob * wealth_at_the_value(w, u, 0.8 * beta, 0.8 * tau)
    assert mean_wealth > 1.01


def test_el_betting_bets_are_safe_and_the_bisection_finds_the_root():
    rng = np.random.default_rng(1)
    n = 2000
    w = rng.choice([0.05, 1.0, 40.0], n, p=[0.5, 0.4875, 0.0125])  # E[w] = 1.0
    u = (rng.random(n) < np.where(w > 30, 0.9, 0.6)).astype(float)
    beta, tau = el_betting.bets(w, u, 0.05, 40.0, 0.05)
    assert np.all(tau >= 0)
    for wk in (0.05, 40.0):  # every factor is >= 1 - shrink at the corners, at v = 1
        for xk in (0.0, wk):
            assert np.all(1 + beta * (wk - 1) + tau * (xk - 1) >= 1 - el_betting.DEFAULT_SHRINK - 1e-12)
    threshold = math.log(20)
    low = el_betting.wealth_bound(w, u, beta, tau, threshold)
    g = lambda v: np.log(1 + beta * (w - 1) + tau * (w * u - v)).sum() - threshold  # noqa: E731
    root = optimize.brentq(g, 0.0, 1.0, xtol=1e-14)
    assert low <= root and root - low < 1e-11 and g(low) >= 0
    # and the bound uses E[w] = 1 with wmax = 40: tighter than LS on this heavy-tailed log.
    s = Sample(w, u, wmin=0.05, wmax=40.0)
    assert lower_bound(s, method="el-betting").low > lower_bound(s, method="ls").low


def test_safe_scales_to_the_corners():
    b, t = el_betting.safe(-0.5, 0.5, 0.0, 10.0)  # corner (10, 0): 1 - 4.5 - 0.5 < 0
    assert_agree(1 + b * 9 - t, 0.0, tol=1e-15)
    assert el_betting.safe(-0.1, 0.1, 0.0, np.inf) == (0.0, 0.0)  # slope -0.1 at w = inf
    assert el_betting.safe(0.1, 0.2, 0.0, np.inf) == (0.1, 0.2)


def test_bad_input():
    s = Sample([0.5, 2.0, 1.0], [0.0, 1.0, 0.5])
    with pytest.raises(InvalidInputError, match="'ls', 'ix', 'eb', 'el-betting'"):
        lower_bound(s, method="ips")
    with pytest.raises(InvalidInputError, match="logging_probs=") as err:
        lower_bound(s, method="ix")
    assert err.value.field == "logging_probs"
    with pytest.raises(InvalidInputError, match="method='ix' only"):
        lower_bound(s, method="ls", logging_probs=[0.5, 0.5, 0.5])
    with pytest.raises(InvalidInputError, match=r"logging_probs\[1\]=0.75 times its weight"):
        lower_bound(s, method="ix", logging_probs=[0.5, 0.75, 0.5])
    with pytest.raises(InvalidInputError, match=r"logging_probs\[0\]=0.0 is not in \(0, 1\]"):
        lower_bound(s, method="ix", logging_probs=[0.0, 0.5, 0.5])
    with pytest.raises(InvalidInputError, match="parameter=-1"):
        lower_bound(s, method="ls", parameter=-1)
    with pytest.raises(InvalidInputError, match=r"shrink\) must be in \(0, 1\]"):
        lower_bound(s, method="el-betting", parameter=1.5)
    with pytest.raises(InvalidInputError, match="confidence_level"):
        upper_bound(s, confidence_level=1.0)
    one = lower_bound(Sample([2.0], [1.0]), method="eb")
    assert one.low == 0.0 and "N=1" in one.note


def test_ix_in_chunks_is_the_in_memory_bound():
    # IX is a sum over the rows once gamma = 1/(2 sqrt N) is fixed: chunks in any grouping and
    # order give the in-memory bound (to the rounding of the additions), on either side.
    from elcvx.estimators.finite_sample import ix_bound_in_chunks

    rng = np.random.default_rng(3)
    p = rng.choice([0.1, 0.25, 0.5], 120)
    pi = rng.choice([0.0, 1.0], 120)
    s = Sample(pi / p, rng.random(120), counts=rng.integers(1, 4, 120).astype(float), wmax=10)
    cut = [0, 7, 50, 51, 120]
    parts = [(Sample(s.w[a:b], s.r[a:b], counts=s.counts[a:b], wmax=10), p[a:b])
             for a, b in zip(cut, cut[1:])][::-1]
    for side, bound, end in (("greater", lower_bound, "low"), ("less", upper_bound, "high")):
        whole = bound(s, method="ix", confidence_level=0.9, logging_probs=p)
        chunked = ix_bound_in_chunks(s, parts, confidence_level=0.9, alternative=side)
        assert getattr(chunked, end) == pytest.approx(getattr(whole, end), abs=1e-14)
        assert (chunked.parameter, chunked.n, chunked.method) == (whole.parameter, whole.n, "ix")
    with pytest.raises(InvalidInputError, match="logging_probs"):  # checked chunk by chunk
        ix_bound_in_chunks(s, [(parts[0][0], parts[0][1] * 20)])
