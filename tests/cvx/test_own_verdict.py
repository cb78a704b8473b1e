"""The cvxpy path reaches its verdict without the fast path (elcvx/verdict.py): with every entry
of the fast path broken, it still solves and certifies; the fast method's polish of Clarabel's
point runs only where it is handed in (``polish=``, as elcvx.dispatch does), and says so."""

from __future__ import annotations

import numpy as np
import pytest

import elcvx
from elcvx import cvx, fast
from elcvx.status import Status

CHI2_95 = 3.841458820694124  # scipy.stats.chi2.ppf(0.95, 1)


def _sample(seed=5, n=80):
    rng = np.random.default_rng(seed)
    return elcvx.Sample(rng.choice([0.0, 0.5, 2.0, 4.0], n), rng.random(n).round(2), wmax=5)


def _broken(*args, **kwargs):
    raise AssertionError("the cvxpy path called the fast path")


def test_the_cvxpy_path_certifies_with_the_fast_path_broken(monkeypatch):
    s = _sample()
    want_m = cvx.mle(s)
    want_lo = cvx.lower_bound(s, loglik=want_m.loglik, quantile=CHI2_95, mle_sol=want_m)
    want_p = cvx.profile(s, [0.3])
    for module in (fast, fast.solve, fast.bound):
        for name in ("mle", "mle_of", "profile", "profile_of", "lower_bound", "lower_bound_of",
                     "_likelihood", "_bound_run", "maximize"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, _broken)
    m = cvx.mle(s)
    lo = cvx.lower_bound(s, loglik=m.loglik, quantile=CHI2_95, mle_sol=m)
    p = cvx.profile(s, [0.3])
    assert m.status.optimal and lo.status.optimal and p.status.optimal
    # The same numbers, bit for bit: the verdict is the same code on the same point.
    assert (m.loglik, m.beta, m.gap, m.error) == (want_m.loglik, want_m.beta, want_m.gap,
                                                  want_m.error)
    assert (lo.value, lo.gamma, lo.beta, lo.error) == (want_lo.value, want_lo.gamma,
                                                       want_lo.beta, want_lo.error)
    assert p.loglik.tolist() == want_p.loglik.tolist()


class _Polish:
    """A polish that records its calls and answers with the fast path's."""

    def __init__(self):
        self.calls = []

    def mle(self, data, x):
        self.calls.append("mle")
        return fast.polish.mle(data, x)

    def profile(self, data, v, x):
        self.calls.append("profile")
        return fast.polish.profile(data, v, x)

    def bound(self, data, loglik, quantile, y, mle_gap):
        self.calls.append("bound")
        return fast.polish.bound(data, loglik, quantile, y, mle_gap)


def test_the_polish_runs_only_where_no_answer_is_certified_and_is_named(monkeypatch):
    s = _sample()
    polish = _Polish()
    own = cvx.mle(s, polish=polish)
    assert own.status.optimal and cvx.REFINED not in own.status and polish.calls == []
    # Every Clarabel answer refused: without a polish the path fails, with it the fast method's
    # answer from Clarabel's last point is certified, and the status names it.
    refuse = Status("not certified", "refused by the test")
    real = cvx.solve.verdict.mle_at
    monkeypatch.setattr(cvx.solve.verdict, "mle_at",
                        lambda data, x: real(data, x)._replace(status=refuse))
    with pytest.raises(elcvx.SolverError):
        cvx.mle(s)
    m = cvx.mle(s, polish=polish)
    assert polish.calls == ["mle"]
    assert m.status == "optimal (Clarabel's point polished by the fast method)"
    assert m.status.optimal and m.status.fallbacks == (cvx.REFINED,)
    # Both certified: the true l* lies in [l, l + gap] for each.
    assert abs(m.loglik - own.loglik) <= max(m.gap, own.gap)
