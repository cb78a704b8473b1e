"""The passes on threads (elcvx/engines/threads.py, elcvx/engines/blocks.fold_blocks) and q
computed on its first read (elcvx/solutions.OnRead).

* the estimate, the interval, the profile and every q are the same to the last bit on 1, 2
  and 3 threads (the blocks' partials merged in their order), with counts and with a moment
  constraint too, with the numpy kernels and with the numba twins (where numba is installed);
  the pool's threads do run the blocks; a merge in each thread's order instead is caught by the
  same comparison;
* ``ELCVX_NUM_THREADS`` and ``threads=`` take a positive integer, and name themselves when not;
* a result's ``q`` is not computed until it is read, then equals ``1 / (N (1 + beta (w - 1)))``
  (the estimate's) and ``kappa / (gamma + beta w + w u)`` (a bound's), from the definitions;
  a pickled result carries it.
"""

import math
import pickle
import threading

import numpy as np
import pytest

import elcvx
from elcvx.engines import backend, blocks, threads
from elcvx.errors import InvalidInputError
from elcvx.passes import kernels
from elcvx.model import Moments
from elcvx.solutions import OnRead

# Four blocks of 8,750 rows (with elcvx.engines.blocks.BLOCK = 10,000 here, to keep the tests
# short): 1, 2 and 3 threads split them 4, 2 + 2 and 1 + 1 + 2.
N = 35_000


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(blocks, "BLOCK", 10_000)


def sample(seed, counts=False):
    rng = np.random.default_rng(seed)
    w = np.minimum(rng.gamma(2.0, 0.5, N), 10.0)
    c = rng.integers(1, 4, N).astype(float) if counts else None
    return elcvx.Sample(w, rng.random(N), wmax=10.0, counts=c), rng


def answers(s, constraints=None):
    """Every number estimate, interval and profile report, and each q, as bytes."""
    est = elcvx.estimate(s, method="fast", constraints=constraints)
    ci = elcvx.interval(s, method="fast", constraints=constraints)
    prof = elcvx.profile(s, [0.45, est.value, 0.55], method="fast", constraints=constraints)
    numbers = np.r_[est.value, est.beta, est.loglik, est.error, est.lambdas, ci.low, ci.high,
                    ci.lower.kappa, ci.lower.gamma, ci.upper.beta, prof.statistic]
    assert est.status == ci.status == "optimal"
    return [numbers.tobytes(), est.q.tobytes(), ci.lower.q.tobytes(), ci.upper.q.tobytes()]


def fresh(s):
    """The same rows as a new Sample (the MLE is cached per sample)."""
    return elcvx.Sample(s.w, s.r, wmax=s.wmax, counts=s.counts)


try:
    import numba  # noqa: F401
    KERNELS = ["numpy", "numba"]
except ImportError:
    KERNELS = ["numpy", pytest.param("numba", marks=pytest.mark.skip(
        reason="the numba extra is not installed (pip install 'elcvx[numba]')"))]


@pytest.mark.parametrize("implementation", KERNELS)
@pytest.mark.parametrize("case", ["plain", "counts", "a control variate"])
def test_every_number_is_the_same_on_one_two_and_three_threads(case, implementation, monkeypatch):
    monkeypatch.setenv(backend.ENV, implementation)
    s, rng = sample(1, counts=case == "counts")
    cons = None
    if case == "a control variate":
        g = s.w * np.clip(s.r + rng.normal(0.0, 0.3, N), 0.0, 1.0)
        cons = elcvx.MomentConstraint(g, float(np.mean(g)) + 0.01, atom_range=(0.0, 10.0))
    got = {}
    for t in (1, 2, 3):
        monkeypatch.setenv("ELCVX_NUM_THREADS", str(t))
        got[t] = answers(fresh(s), cons)
    assert got[2] == got[1] and got[3] == got[1]


@pytest.mark.parametrize("implementation", KERNELS)
def test_the_pool_runs_the_blocks(implementation, monkeypatch):
    # Else the comparison above would compare one thread with itself.
    monkeypatch.setenv(backend.ENV, implementation)
    seen = set()
    kernel = kernels.loglik_block

    def spy(*args, **kwargs):
        seen.add(threading.current_thread().name.split("_")[0])
        return kernel(*args, **kwargs)

    data = Moments(sample(2)[0], (), threads=3)
    data.reduce(spy, kernels.add, np.array([0.01]), None, False, 1.0 / N, 0, None)
    assert seen == {"MainThread", "elcvx-pass"}


@pytest.mark.parametrize("implementation", KERNELS)
def test_a_merge_in_each_threads_order_is_caught(implementation, monkeypatch):
    # Each thread's run summed first, then the runs: the order of the sums then depends on the
    # thread count, and the comparison of the first test sees it.
    monkeypatch.setenv(backend.ENV, implementation)
    def merged_by_thread(kernel, merge, size, block_at, params, scratch_of, threads=1, out=None):
        ranges = list(blocks.blocks(size))
        cuts = [len(ranges) * t // threads for t in range(threads + 1)]
        total = None
        for t in range(threads):
            acc = None
            for i, j in ranges[cuts[t]:cuts[t + 1]]:
                part = kernel(block_at(i, j, scratch_of(0)[1]), scratch_of(0)[0][:, :j - i],
                              *params)
                if part is None:
                    return None
                acc = part if acc is None else merge(acc, part)
            if acc is not None:
                total = acc if total is None else merge(total, acc)
        return total

    s = sample(3)[0]
    data = {t: Moments(s, (), threads=t) for t in (1, 3)}
    x = np.array([0.0123])
    args = (kernels.loglik_block, kernels.add, x, None, False, 1.0 / N, 1, None)
    assert data[1].reduce(*args).tobytes() == data[3].reduce(*args).tobytes()
    monkeypatch.setattr("elcvx.model.fold_blocks", merged_by_thread)
    assert data[1].reduce(*args).tobytes() != data[3].reduce(*args).tobytes()


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_a_bad_thread_count_names_itself(value, monkeypatch):
    monkeypatch.setenv("ELCVX_NUM_THREADS", value)
    with pytest.raises(InvalidInputError, match="ELCVX_NUM_THREADS") as err:
        elcvx.estimate(sample(4)[0], method="fast")
    assert err.value.field == "ELCVX_NUM_THREADS" and err.value.value == value
    with pytest.raises(InvalidInputError, match="threads") as err:
        Moments(sample(4)[0], (), threads=float(value) if value != "two" else value)
    assert err.value.field == "threads"


def test_the_default_is_every_core(monkeypatch):
    monkeypatch.delenv("ELCVX_NUM_THREADS", raising=False)
    assert threads.num_threads() == threads.cores() >= 1
    monkeypatch.setenv("ELCVX_NUM_THREADS", " ")
    assert threads.num_threads() == threads.cores()
    monkeypatch.setenv("ELCVX_NUM_THREADS", "3")
    assert threads.num_threads() == 3 and threads.num_threads(2) == 2


def test_q_is_computed_when_read_and_is_the_definitions():
    s = sample(5)[0]
    est = elcvx.estimate(s, method="fast")
    ci = elcvx.interval(s, method="fast")
    # (Each result holds what it was given: the function that computes q, not yet called.)
    given = type(est).q.given(est)
    assert isinstance(given, OnRead) and isinstance(type(ci.lower).q.given(ci.lower), OnRead)
    # The paper's eq. (vhatmle)'s masses, and appendix C's kappa / (gamma + beta w + w u).
    expected = 1.0 / (s.n * (1.0 + est.beta * (s.w - 1.0)))
    np.testing.assert_allclose(est.q, expected, rtol=1e-14, atol=0)
    assert not est.q.flags.writeable and given() is given()  # (computed once, then kept)
    for side, h in ((ci.lower, s.w * s.u), (ci.upper, s.w * (1.0 - s.u))):
        np.testing.assert_allclose(side.q, side.kappa / (side.gamma + side.beta * s.w + h),
                                   rtol=1e-13, atol=0)
    # Pickled unread, it carries the array.
    again = pickle.loads(pickle.dumps(elcvx.estimate(fresh(s), method="fast")))
    assert again.q.tobytes() == est.q.tobytes()


def test_dot_products_are_taken_in_pieces_blas_keeps_on_one_thread(monkeypatch):
    # OpenBLAS runs a dot product of more than 10,000 terms on several threads; blocks.dot
    # never asks for one. Its value is the sum of the products (math.fsum of them exactly).
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=32_768), rng.normal(size=32_768)
    sizes = []
    real = np.dot
    monkeypatch.setattr(blocks.np, "dot", lambda a, b: sizes.append(a.size) or real(a, b))
    got = blocks.dot(x, y)
    assert max(sizes) <= blocks.DOT_MAX == 10_000 and sum(sizes) == x.size
    exact = math.fsum(x * y)  # (each product rounded once: 1e-16 of |x y| per term)
    assert abs(got - exact) <= 1e-15 * float(np.abs(x * y).sum())


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork is POSIX")
def test_a_forked_child_makes_its_own_pool():
    # The parent's pool threads do not exist in a child made by fork: a pass there must not
    # wait for them (multiprocessing's default start method on Linux).
    import multiprocessing

    s = sample(6)[0]
    data = Moments(s, (), threads=2)
    args = (kernels.loglik_block, kernels.add, np.array([0.01]), None, False, 1.0 / N, 0, None)
    here = data.reduce(*args)  # (the pool exists now)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        there = pool.apply_async(data.reduce, args).get(timeout=60)
    assert there.tobytes() == here.tobytes()
