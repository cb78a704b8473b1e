"""The values kept per sample (elcvx.cache.PerSample): held outside the sample, for its lifetime
only, never pickled with it; a pickled sample computes them again to the same numbers."""

from __future__ import annotations

import gc
import pickle

import numpy as np

import elcvx
from elcvx import baselines, dispatch, model
from elcvx.cache import PerSample
from elcvx.cressie_read import _STATS, CressieReadStats

CACHES = (dispatch._MLE_CACHE, model._PAPER_ARRAYS, baselines._LOG_SUMS, _STATS)


def _sample():
    rng = np.random.default_rng(11)
    return elcvx.Sample(np.minimum(rng.gamma(2.0, 0.5, 40), 10.0), rng.random(40), wmax=10.0)


def _fill(s):
    elcvx.interval(s)
    baselines.ips(s)
    CressieReadStats.from_sample(s)


def test_values_are_kept_outside_the_sample_and_not_pickled():
    s = _sample()
    _fill(s)
    assert all(s in cache for cache in CACHES)
    # The sample holds its fields and notes only: nothing a cache computed.
    assert set(vars(s)) == {"w", "r", "counts", "wmin", "wmax", "rmin", "rmax", "n", "_w_span"}
    again = pickle.loads(pickle.dumps(s))
    assert not any(again in cache for cache in CACHES)
    assert tuple(elcvx.interval(again)) == tuple(elcvx.interval(s))


def test_an_entry_lives_as_long_as_its_sample():
    s = _sample()
    _fill(s)
    before = [len(cache) for cache in CACHES]
    del s
    gc.collect()
    assert [len(cache) for cache in CACHES] == [n - 1 for n in before]


def test_a_value_is_made_once_per_sample():
    cache, made = PerSample("test"), []
    a, b = _sample(), _sample()
    for s in (a, a, b):
        cache.get(s, lambda: made.append(1) or len(made))
    assert made == [1, 1] and cache[a] == 1 and cache[b] == 2
