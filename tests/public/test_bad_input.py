"""Bad input (each error names the field and value) and shared state.

Every check raises :class:`elcvx.InvalidInputError` (a ``ValueError``) naming the field and the
value; every array a result or a sample hands out is read-only, so writing to it cannot change a
later answer.
"""

import copy
import pickle

import numpy as np
import pytest

import elcvx
from elcvx import InvalidInputError, Sample, _validation


@pytest.fixture
def small():
    return Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)


# ------------------------------------------------------------------------------------------------
# Item 4: reward ranges (and counts) whose arithmetic overflows
# ------------------------------------------------------------------------------------------------
def test_overflowing_reward_range_is_rejected():
    # Reproducer: Sample([0.5, 1.5], [0, 1], wmax=2, rmin=-1.5e308, rmax=1.5e308), then
    # estimate(s, method="fast").value was NaN (rmax - rmin overflows) and the cvxpy path raised
    # a raw cvxpy ValueError.
    with pytest.raises(InvalidInputError, match=r"rmin=-1\.5e\+308.*rmax=1\.5e\+308") as info:
        Sample([0.5, 1.5], [0, 1], wmax=2, rmin=-1.5e308, rmax=1.5e308)
    assert "rmax - rmin must be finite" in str(info.value)
    with pytest.raises(InvalidInputError, match="rmax - rmin must be finite"):
        Sample.from_probs([0.5], [0.5], [0.0], pmin=0.5, rmin=-1e308, rmax=1e308)


@pytest.mark.parametrize("rmin, rmax", [
    (0.0, 1e-300),                       # a tiny range
    (0.0, 5e-324),                       # the smallest positive (subnormal) range
    (1.0, float(np.nextafter(1.0, 2.0))),  # one ulp
    (-1e300, float(np.nextafter(-1e300, 0.0))),
    (-8e307, 8e307),                     # huge but finite: rmax - rmin = 1.6e308
    (-1.0, float(np.finfo(float).max)),  # rmax - rmin rounds to the largest float
])
@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_extreme_finite_reward_ranges_give_finite_answers(rmin, rmax, method):
    # Item 4's check of to_user / to_unit: every accepted range keeps u in [0, 1] and every
    # reported number finite and in [rmin, rmax] (a RuntimeWarning from elcvx fails the test).
    r = [rmin, rmax, rmin, rmax]
    s = Sample([0.5, 1.5, 2.0, 0.0], r, wmax=4, rmin=rmin, rmax=rmax)
    assert np.all(np.isfinite(s.u)) and np.all((s.u >= 0) & (s.u <= 1))
    assert s.u.tolist() == [0.0, 1.0, 0.0, 1.0]
    assert s.to_user(0.0) == rmin and s.to_user(1.0) == rmax
    assert s.to_unit(rmin) == 0.0 and np.isfinite(s.to_unit(rmax))
    est = elcvx.estimate(s, method=method)
    low, high = elcvx.interval(s, method=method)
    prof = elcvx.profile(s, [rmin, est.value, rmax], method=method)
    for x in (est.value, *est.value_range, low, high):
        assert np.isfinite(x) and rmin <= x <= rmax
    assert not np.isnan(prof.statistic).any()


def test_overflowing_or_subnormal_counts_are_rejected():
    # Reproducer: Sample([0.5, 1.5], [0, 1], wmax=2, counts=[1e308, 1e308]): N = sum(counts)
    # overflowed to inf; with counts=[1e-320, 1e-320] 1/N overflows and estimate(s).value was NaN.
    with pytest.raises(InvalidInputError, match=r"counts.*N=inf"):
        Sample([0.5, 1.5], [0, 1], wmax=2, counts=[1e308, 1e308])
    with pytest.raises(InvalidInputError, match=r"counts.*N=2e-320"):
        Sample([0.5, 1.5], [0, 1], wmax=2, counts=[1e-320, 1e-320])


# ------------------------------------------------------------------------------------------------
# Item 5: results and samples share no writable state with the MLE cache or the caller
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_writing_to_an_estimate_cannot_change_the_next(small, method):
    # Reproducer: e = elcvx.estimate(s); e.q[:] = 0 changed the next elcvx.estimate(s).value
    # (0.7839 became 0.5): q was the cached MLE's own writable array.
    first = elcvx.estimate(small, method=method)
    assert not first.q.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first.q[:] = 0
    with pytest.raises(ValueError):
        first.q.flags.writeable = True  # a read-only view of the read-only cached array
    again = elcvx.estimate(small, method=method)
    assert again.value == first.value == pytest.approx(0.783911, abs=1e-6)
    assert np.all(again.q > 0)


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_every_result_array_is_read_only(small, method):
    # Reproducer (item 5): every array of EstimateResult, BoundResult (inside IntervalResult) and
    # ProfileResult was writable.
    ci = elcvx.interval(small, method=method)
    prof = elcvx.profile(small, [0.2, 0.5, 2.0], method=method)
    arrays = {"estimate.q": elcvx.estimate(small, method=method).q,
              "lower.q": ci.lower.q, "upper.q": ci.upper.q,
              **{f"profile.{k}": getattr(prof, k) for k in ("v", "statistic", "pvalue", "beta", "tau")}}
    for name, a in arrays.items():
        assert isinstance(a, np.ndarray), name
        assert not a.flags.writeable, name
    assert elcvx.interval(small, method=method).low == ci.low


def test_profile_does_not_keep_the_callers_array(small):
    # Item 5: profile(s, v) held the caller's float64 array v itself; freezing it would have
    # frozen the caller's array, and writing to v would have changed the result.
    v = np.array([0.5, 0.9])
    prof = elcvx.profile(small, v)
    v[0] = 0.1
    assert v.flags.writeable
    assert prof.v.tolist() == [0.5, 0.9]


@pytest.mark.parametrize("counts", [None, [1.0, 2.0, 1.0, 3.0]])
@pytest.mark.parametrize("rmax", [1.0, 2.0])
def test_no_sample_attribute_is_writable(counts, rmax):
    # Reproducer (item 5): Sample.c returned a writable array of ones, Sample.u a writable array,
    # and s.w.flags.writeable = True made the sample's own data writable.
    s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10, counts=counts, rmax=rmax)
    elcvx.estimate(s)  # fills the MLE cache
    for t in (s, pickle.loads(pickle.dumps(s)), copy.deepcopy(s), copy.copy(s)):
        for name in ("w", "r", "counts", "c", "u"):
            a = getattr(t, name)
            if a is None:
                continue
            assert not a.flags.writeable, name
            if name in ("w", "r", "counts"):
                with pytest.raises(ValueError):
                    a.flags.writeable = True
        assert elcvx.estimate(t).value == elcvx.estimate(s).value
        assert not elcvx.estimate(t).q.flags.writeable


# ------------------------------------------------------------------------------------------------
# Item 7: small input checks
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["w", "r", "counts"])
def test_masked_arrays_are_rejected(field):
    # Reproducer: Sample(np.ma.masked_array([0.5, 1.5], mask=[0, 1]), [0, 1], wmax=2) silently
    # used the masked value 1.5.
    args = {"w": [0.5, 1.5], "r": [0.0, 1.0], "counts": [1.0, 2.0]}
    args[field] = np.ma.masked_array(args[field], mask=[False, True])
    with pytest.raises(InvalidInputError, match=rf"{field} is a masked array with 1 masked value.*"
                                                r"not supported.*drop.*fill"):
        Sample(args["w"], args["r"], counts=args["counts"], wmax=2)


def test_masked_array_without_masked_values_is_its_data():
    # Nothing masked: the data are the values (trivially correct).
    s = Sample(np.ma.masked_array([0.5, 1.5]), np.ma.masked_array([0.0, 1.0], mask=False), wmax=2)
    assert s.w.tolist() == [0.5, 1.5] and s.r.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("field", ["w", "r", "counts"])
def test_complex_input_is_rejected(field):
    # Reproducer: Sample([0.5, 1.5 + 1j], [0, 1], wmax=2) dropped the imaginary part with only a
    # ComplexWarning.
    args = {"w": [0.5, 1.5], "r": [0.0, 1.0], "counts": [1.0, 2.0]}
    args[field] = [args[field][0], args[field][1] + 1j]
    with pytest.raises(InvalidInputError, match=rf"{field}\[1\]=\(.*\+1j\) is complex"):
        Sample(args["w"], args["r"], counts=args["counts"], wmax=2)
    with pytest.raises(InvalidInputError, match=r"w\[0\]=\(0\.5\+0j\) is complex"):
        Sample(np.array([0.5, 1.5], dtype=complex), [0, 1], wmax=2)


ODD_OPTIONS = [np.array(["fast"]), ["fast"], ("fast",), {"fast": 1}, None, b"fast", 1, "FAST"]


@pytest.mark.parametrize("value", ODD_OPTIONS, ids=repr)
@pytest.mark.parametrize("call", ["estimate", "interval", "profile"])
def test_odd_method_values_are_rejected(small, call, value):
    # Reproducer: elcvx.estimate(s, method=np.array(["fast"])) raised TypeError "unhashable".
    args = (small, [0.5]) if call == "profile" else (small,)
    with pytest.raises(InvalidInputError, match=r"method=.* is not valid; choose one of 'auto'"):
        getattr(elcvx, call)(*args, method=value)


@pytest.mark.parametrize("value", [np.array(["f"]), ["chi2"], {"f"}, None, 2, "F"], ids=repr)
@pytest.mark.parametrize("call", ["interval", "profile"])
def test_odd_calibration_values_are_rejected(small, call, value):
    # Reproducer: elcvx.interval(s, calibration=np.array(["f"])) was accepted and returned the
    # array as the result's calibration.
    args = (small, [0.5]) if call == "profile" else (small,)
    if call == "interval" and value is None:  # interval's default, resolved by the alternative
        assert elcvx.interval(small, calibration=None).calibration == "chi2"
        return
    with pytest.raises(InvalidInputError, match=r"calibration=.* is not valid; choose one of 'chi2'"):
        getattr(elcvx, call)(*args, calibration=value)


def test_numpy_string_options_are_plain_strings(small):
    # np.str_ is a str: accepted, and the result holds a plain str.
    ci = elcvx.interval(small, calibration=np.str_("f"), method=np.str_("fast"))
    assert type(ci.calibration) is str and ci.calibration == "f"
    assert elcvx.estimate(small, method=np.str_("fast")).value == elcvx.estimate(small).value


@pytest.mark.parametrize("v, message", [
    ("abc", r"v must be an array of numbers, got str 'abc'"),   # was a plain ValueError
    ([[0.1]], r"v must be 1-dimensional, got shape \(1, 1\)"),
    ([np.nan], r"v\[0\]=nan is not a number"),
    ([0.5, 1 + 2j], r"v\[1\]=\(1\+2j\) is complex"),
])
def test_bad_profile_values_are_rejected(small, v, message):
    # Reproducers: elcvx.profile(s, "abc") (a plain ValueError from float conversion),
    # profile(s, [[0.1]]) and profile(s, [np.nan]).
    with pytest.raises(InvalidInputError, match=message):
        elcvx.profile(small, v)


def test_profile_still_accepts_scalars_infinities_and_empty(small):
    prof = elcvx.profile(small, 0.5)
    assert prof.v.shape == (1,)
    assert elcvx.profile(small, [-np.inf, np.inf]).statistic.tolist() == [np.inf, np.inf]
    assert elcvx.profile(small, []).statistic.shape == (0,)


# ------------------------------------------------------------------------------------------------
# Issue 36, item 4: a weight above wmax by rounding only
# ------------------------------------------------------------------------------------------------
def test_a_weight_above_wmax_by_rounding_is_wmax():
    """``1 / (eps / K)`` is one unit in the last place above ``K / eps`` at K = 9, eps = 0.56654
    (the fuzz's epsilon-greedy log): the weight is wmax, rounded, so it is accepted and read as
    wmax; 4 units (``_validation.ROUNDING_ULPS``) are forgiven, 5 are refused as before."""
    K, eps = 9, 0.56654
    w, wmax = 1 / (eps / K), K / eps
    assert w == np.nextafter(wmax, np.inf)  # (the case: one ulp above)
    s = Sample([w, 0.5], [0.0, 1.0], wmax=wmax)
    assert s.w.tolist() == [wmax, 0.5] and s.w_observed == (0.5, wmax)
    four = float(wmax + 4 * np.spacing(wmax))
    assert Sample([four, 0.5], [0.0, 1.0], wmax=wmax).w[0] == wmax
    five = float(wmax + 5 * np.spacing(wmax))
    with pytest.raises(InvalidInputError) as info:
        Sample([0.5, five], [0.0, 1.0], wmax=wmax)
    err = info.value
    assert (err.field, err.index, err.value) == ("w", 1, five)
    assert str(err) == (f"w[1]={five!r} is outside [0.0, {wmax!r}] (1 such value) "
                        "(the weights must lie in [wmin, wmax])")
    # and a weight below a positive wmin by rounding is wmin
    assert Sample([0.1 - np.spacing(0.1), 2.0], [0.0, 1.0], wmin=0.1, wmax=5.0).w[0] == 0.1


@pytest.mark.parametrize("K", [2, 3, 9, 10, 37])
@pytest.mark.parametrize("eps", [0.05, 0.1, 0.3, 0.56654, 0.9])
def test_epsilon_greedy_weights_build_with_either_bound(K, eps):
    """The weights of an epsilon-greedy log (``1 / (eps / K)`` on an explored action, ``1 / (1 -
    eps + eps / K)`` on the greedy one) against ``wmax = K / eps`` given by hand, and through
    :meth:`Sample.from_probs` with ``pmin = eps / K``: every weight is within ``[0, wmax]``."""
    greedy = 1 - eps + eps / K
    w = np.array([1 / (eps / K), 1 / greedy, 0.0])
    s = Sample(w, [1.0, 0.0, 0.5], wmax=K / eps)
    assert s.w.max() <= s.wmax and abs(s.w[0] - s.wmax) <= 4 * np.spacing(s.wmax)
    p = Sample.from_probs([1.0, 1.0, 0.0], [eps / K, greedy, eps / K], [1.0, 0.0, 0.5], pmin=eps / K)
    assert p.w.max() <= p.wmax == 1 / (eps / K)
    assert abs(p.w[1] - 1 / greedy) == 0.0


# ------------------------------------------------------------------------------------------------
# Issue 15: an error's facts are attributes as well as words
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, 3])
def test_a_bad_weight_names_field_index_and_value(k):
    w = np.ones(5)
    w[k] = 7.0
    w[4] = 8.0
    with pytest.raises(InvalidInputError) as info:
        Sample(w, [0.5] * 5, wmax=5)
    err = info.value
    assert (err.field, err.index, err.value) == ("w", k, 7.0)
    assert err.reason == "is outside [0.0, 5.0] (2 such values) (the weights must lie in [wmin, wmax])"
    assert str(err) == f"w[{k}]=7.0 {err.reason}"  # the message is the one users always saw


@pytest.mark.parametrize("build, field, index, value", [
    (lambda: Sample([1.0, np.inf], [0.5, 0.5]), "w", 1, np.inf),
    (lambda: Sample([1.0, 1.0], [0.5, 0.5], counts=[1.0, -2.0]), "counts", 1, -2.0),
    (lambda: Sample.from_probs([1.0, 1.0], [0.5, 0.0], [0.5, 0.5]), "logging_prob", 1, 0.0),
    (lambda: Sample.from_probs([1.0], [0.05], [0.5], pmin=0.1), "logging_prob", 0, 0.05),
    (lambda: Sample([1.0], [0.5], wmax=0.5), "wmax", None, 0.5),
    (lambda: Sample.from_probs([1.0], [0.5], [0.5], pmin=2), "pmin", None, 2),
    (lambda: elcvx.estimate([1.0]), "sample", None, [1.0]),
])
def test_sample_validation_sets_the_fields(build, field, index, value):
    with pytest.raises(InvalidInputError) as info:
        build()
    err = info.value
    assert (err.field, err.index, err.value) == (field, index, value)
    assert (err.reason is None) == (index is None)


def test_the_fields_are_optional_and_keyword_only():
    err = InvalidInputError("a message")
    assert str(err) == "a message" and (err.field, err.index, err.value, err.reason) == (None,) * 4
    with pytest.raises(TypeError):
        InvalidInputError("a message", "w")


# ------------------------------------------------------------------------------------------------
# Issue 28: a long array is copied and scanned chunk by chunk; nothing it checks is missed
# ------------------------------------------------------------------------------------------------
LONG = 3 * (1 << 17) + 5  # (three chunks and a piece of a fourth)


@pytest.mark.parametrize("k, bad, reason", [
    (LONG - 1, np.nan, "is not finite"), (2 * (1 << 17) + 7, np.inf, "is not finite"),
    ((1 << 17), -np.inf, "is not finite"), (LONG - 3, 11.0, "is outside [0.0, 10.0]"),
    (1, -0.5, "is outside [0.0, 10.0]"),
])
@pytest.mark.parametrize("threads", ["1", "2", "3"])  # (the chunks split among the threads)
def test_a_bad_weight_in_any_chunk_of_a_long_log_is_named(k, bad, reason, threads, monkeypatch):
    monkeypatch.setenv("ELCVX_NUM_THREADS", threads)
    monkeypatch.setattr(_validation, "_THREADED", 1 << 17)  # (threads from 32 MB: here from 1 MB)
    w = np.random.default_rng(k).uniform(0.0, 10.0, LONG)
    w[k] = bad
    with pytest.raises(InvalidInputError) as info:
        Sample(w, np.zeros(LONG), wmax=10.0)
    err = info.value
    assert (err.field, err.index) == ("w", k) and err.reason.startswith(reason)
    assert np.isnan(err.value) if np.isnan(bad) else err.value == bad


def test_a_long_log_is_copied_whole_with_its_least_and_largest_weight():
    base = np.random.default_rng(5).uniform(0.0, 10.0, 2 * LONG)
    w = base[::2]  # (a strided view: copied, not referenced)
    given = w.copy()
    s = Sample(w, np.ones(LONG), wmax=10.0)
    assert np.array_equal(s.w, given) and not np.shares_memory(s.w, base)
    # The least and largest weight, as numpy's own reductions of the user's array give them.
    assert s.w_observed == (float(np.min(given)), float(np.max(given)))
    base[:] = 3.0  # the user's array changes; the sample's does not
    assert np.array_equal(s.w, given)


@pytest.mark.parametrize("threads", ["1", "2", "3", "8"])
@pytest.mark.parametrize("least, largest", [(LONG - 2, (1 << 17) + 3), (3, LONG - 1)])
def test_a_long_log_copied_on_several_threads_is_the_same_copy(threads, least, largest,
                                                               monkeypatch):
    # The chunks are shared among the threads, a run each: the copy is the user's array to the
    # last bit, and its least and largest weight are found in whichever run holds them.
    monkeypatch.setenv("ELCVX_NUM_THREADS", threads)
    monkeypatch.setattr(_validation, "_THREADED", 1 << 17)  # (threads from 32 MB: here from 1 MB)
    w = np.random.default_rng(least).uniform(1.0, 9.0, LONG)
    w[least], w[largest] = 0.25, 9.75
    s = Sample(w, np.ones(LONG), wmax=10.0)
    assert s.w.tobytes() == w.tobytes() and not np.shares_memory(s.w, w)
    assert s.w_observed == (0.25, 9.75)
