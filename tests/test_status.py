"""A status is a value (elcvx/status.py): fields to test, the text it prints, and the statuses the
solvers and the public functions hand out are such values."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

import elcvx
from elcvx import fast
from elcvx.interval import _interval_status
from elcvx.status import OPTIMAL, Status


def test_the_text_is_outcome_then_detail_in_parentheses():
    s = Status("optimal", "dual formulation, settings #1",
               fallbacks=("dual formulation", "settings #1"))
    assert str(s) == "optimal (dual formulation, settings #1)"
    assert s == "optimal (dual formulation, settings #1)"
    assert hash(s) == hash("optimal (dual formulation, settings #1)")
    assert (s.outcome, s.detail, s.fallbacks, s.optimal) == (
        "optimal", "dual formulation, settings #1", ("dual formulation", "settings #1"), True)
    assert OPTIMAL == "optimal" and OPTIMAL.detail == "" and OPTIMAL.optimal
    assert not Status("not certified", "why").optimal
    # Outcomes that only begin like "optimal" are not optimal (the prefix test this replaces
    # would have taken them).
    assert not Status("optimality unknown").optimal


def test_a_status_prints_and_serialises_as_its_text():
    s = Status("not certified", "the log-likelihood's gap is 3e-08")
    text = "not certified (the log-likelihood's gap is 3e-08)"
    assert f"{s}" == text and f"{s:>60}" == f"{text:>60}" and repr(s) == repr(text)
    assert json.dumps({"status": s}) == json.dumps({"status": text})
    for back in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert back == text and back.outcome == "not certified" and not back.optimal


def test_a_status_is_immutable():
    with pytest.raises(AttributeError, match="immutable"):
        OPTIMAL.outcome = "failed"
    with pytest.raises(AttributeError, match="immutable"):
        del OPTIMAL.detail
    assert OPTIMAL.outcome == "optimal"


def test_of_reads_a_text_and_keeps_a_status():
    assert Status.of(OPTIMAL) is OPTIMAL
    s = Status.of("not certified (the dual point violates an atom's constraint by 1e-06)")
    assert (s.outcome, s.detail) == ("not certified",
                                     "the dual point violates an atom's constraint by 1e-06")
    assert Status.of("max_iter").outcome == "max_iter"
    assert Status.of("whole range: no f quantile at N=1").detail == ""


def test_merged_statuses_are_optimal_only_where_each_is():
    assert Status.merged([]) is OPTIMAL
    assert Status.merged([OPTIMAL, Status("optimal")]) is OPTIMAL
    both = Status.merged([Status("optimal", "dual formulation"), OPTIMAL])
    assert both == "optimal, optimal (dual formulation)" and both.optimal
    bad = Status.merged([OPTIMAL, Status("not certified", "x")])
    assert bad == "not certified (x), optimal" and not bad.optimal  # (sorted, as before)
    one = Status("max_iter")
    assert Status.merged([one, one]) is one


def test_an_interval_names_the_side_that_needed_a_fallback():
    lower = Status("optimal", "dual formulation", fallbacks=("dual formulation",))
    s = _interval_status(lower, OPTIMAL)
    assert s == "optimal (lower bound: dual formulation)" and s.optimal
    assert s.fallbacks == ("dual formulation",)
    clarabel = Status("optimal", "certified; Clarabel: optimal_inaccurate")
    assert _interval_status(OPTIMAL, clarabel) == (
        "optimal (upper bound: certified, Clarabel: optimal_inaccurate)")
    failed = _interval_status(OPTIMAL, Status("not certified", "x"))
    assert failed == "lower bound: optimal; upper bound: not certified (x)"
    assert not failed.optimal
    assert _interval_status(OPTIMAL, OPTIMAL) is OPTIMAL


def test_the_solvers_and_the_public_functions_hand_out_statuses():
    rng = np.random.default_rng(3)
    s = elcvx.Sample(rng.uniform(0, 4, 50), rng.random(50), wmax=5)
    m = fast.mle(s, ())
    assert isinstance(m.status, Status) and m.status.optimal and m.status == "optimal"
    for result in (elcvx.estimate(s), elcvx.interval(s)):
        assert isinstance(result.status, Status) and result.status.optimal
    # A point that certifies nothing: its status says why, as a value.
    bad = elcvx.verdict.mle_at(elcvx.model.Moments(s, ()), np.array([0.5]))
    assert isinstance(bad.status, Status) and not bad.status.optimal
    assert bad.status.outcome == "not certified" and bad.status.detail
