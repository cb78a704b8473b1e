"""The numba twins of the block kernels (elcvx/passes/kernels_numba.py) and the choice of kernels
(elcvx/engines/backend.py).

* each twin and its numpy kernel give every sum of the kernel's layout within 1e-12 of the sum
  of its terms' absolute values of the sum written here from the kernels' definitions (math.fsum
  of the terms, each computed elementwise): blocks of 1, 15, 16, 17 (the log's groups of 16),
  1,025 (the twins' runs of 1,024) and 131,072 rows (a whole block), with and without counts,
  0 to 3 moment constraints, a profile's value column, the MLE's extra sums and the origin's;
  over several blocks, folded on threads, too;
* a point outside the domain (some ``1 + d x <= 0``, some ``a <= 0``, or NaN) gives None from
  both;
* ``q`` of a twin is its numpy kernel's to the last bit (the same operations);
* an error of 1e-9 in one sum of a twin is caught by the same comparison;
* ``ELCVX_KERNELS`` takes auto, numpy or numba and names itself when it is anything else.

The tolerance: the two implementations add the same rounded terms in different orders. Adding
``k`` terms in sequence errs by at most ``k u`` times the sum of their absolute values (``u =
1.1e-16``); the twins' longest sequence is a BLAS dot product of a run (at most 1,024 terms)
followed by the block's runs (at most 128), the numpy kernels' a BLAS dot product of 10,000
terms followed by ``math.fsum``: at most 1.2e-12 in the worst case, about 1e-14 for terms of
random signs. Each term's own rounding (a few units) adds less. 1e-12 leaves the worst case
a little room and the typical one a hundred times as much, and is a thousand times smaller
than the injected error it must catch.
"""

import math

import numpy as np
import pytest

pytest.importorskip("numba", reason="the numba extra is not installed (pip install 'elcvx[numba]')")

import elcvx  # noqa: E402
from elcvx.engines import backend, blocks  # noqa: E402
from elcvx.errors import InvalidInputError  # noqa: E402
from elcvx.passes import kernels, kernels_numba  # noqa: E402
from elcvx.model import Moments  # noqa: E402

TOL = 1e-12


def block(n, k, counts, seed):
    """A block of ``n`` rows with ``k`` constraints, as a model builds it (``D = (w - 1, g -
    b)``, ``F = (w, g)``, a policy's ``h = w u``), its kernels' scratch, and its columns."""
    rng = np.random.default_rng(seed)
    w = np.minimum(rng.gamma(2.0, 0.5, n), 10.0)
    w[rng.random(n) < 0.2] = 0.0
    u, G, b = rng.random(n), rng.random((k, n)), rng.random(k) * 0.5
    c = rng.integers(1, 5, n).astype(float) if counts else None
    Ft = np.vstack([w, G])
    rows = blocks.scratch_rows(1 + k)
    sc = blocks.scratch(rows + 2 + k, n)
    blk = blocks.model_block(w, Ft, G, b, c, None, u, False, True, 0, n, sc[rows:])
    D = np.vstack([w - 1.0, G - b[:, None]])
    return blk, sc[:rows], dict(w=w, h=w * u, D=D, F=Ft, c=np.ones(n) if c is None else c)


def sums(terms):
    """``(math.fsum, the sum of absolute values)`` of each row of terms."""
    return [(math.fsum(t), math.fsum(np.abs(t))) for t in terms]


def likelihood_sums(cols, x, value, scale, extra):
    """loglik_block's layout away from the origin, from its definitions: with ``a = 1 + d x``,
    ``q = scale / a``: ``sum c log1p(d x)``, ``sum c |log1p(d x)|``, ``sum c q``, ``sum c q d``,
    ``sum c q^2 d d' / scale``, the MLE's (``sum c q h``; and ``sum c (qh)^2, (qh) q, (qh) q d,
    q^2, q^2 d``, over scale), and ``sum c q^2 (1, d) / scale``."""
    c, h = cols["c"], cols["h"]
    D = cols["D"] if value is None else np.vstack([cols["D"], h - value])
    s = x @ D
    q = scale / (1.0 + s)
    r = D * q
    log = np.log1p(s)
    terms = [c * log, c * np.abs(log), c * q] + [c * rj for rj in r]
    terms += [c * ra * rb / scale for ra in r for rb in r]
    if extra:
        terms.append(c * q * h)
        if extra > 1:
            terms += [c * (q * h) ** 2 / scale, c * q * h * q / scale]
            terms += [c * q * h * rj / scale for rj in r]
            terms += [c * q * q / scale] + [c * q * rj / scale for rj in r]
    terms += [c * q * q / scale] + [c * q * rj / scale for rj in r]
    return sums(terms)


def origin_sums(cols, value, scale, extra):
    """loglik_block's layout at the origin: ``0, 0``, then times ``scale``: ``sum c``, ``sum c
    d``, ``sum c d d'``, (``extra & 2``) ``sum c d_0^j`` for j = 3 .. 10; then (``extra & 1``)
    ``sum c F``, ``sum c h``, ``sum c |h|``, ``sum c (w - h)``."""
    c, h, F = cols["c"], cols["h"], cols["F"]
    D = cols["D"] if value is None else np.vstack([cols["D"], h - value])
    terms = [0.0 * c, 0.0 * c, scale * c] + [scale * c * d for d in D]
    terms += [scale * c * da * db for da in D for db in D]
    if extra & 2:
        terms += [scale * c * D[0] ** j for j in range(3, 11)]
    if extra & 1:
        terms += [c * f for f in F] + [c * h, c * np.abs(h), c * (F[0] - h)]
    return sums(terms)


def bound_sums(cols, y):
    """bound_block's layout: with ``a = gamma + (beta, lambda) . F + h`` and ``r = (1, F) / a``:
    ``sum c log a``, ``sum c h / a``, ``sum c``, the mean of ``r``, its centred scatter ``sum
    c (r - mean)(r - mean)'``, ``sum c (h / a) r``."""
    c, h, F = cols["c"], cols["h"], cols["F"]
    a = y[0] + y[1:] @ F + h
    r = np.vstack([1.0 / a, F / a])
    total = math.fsum(c)
    mean = [math.fsum(c * rj) / total for rj in r]
    dev = [rj - mj for rj, mj in zip(r, mean)]
    out = sums([c * np.log(a), c * h / a, c])
    out += [(m, math.fsum(np.abs(c * rj)) / total) for m, rj in zip(mean, r)]
    # (The scatter's terms are the centred products: their rounding is relative to them.)
    out += sums([c * da * db for da in dev for db in dev])
    return out + sums([c * h / a * rj for rj in r])


def quadratic_sums(cols, x):
    """quadratic_block's layout: ``Y = (h, 1, D) / (1 + D x)``: ``sum c Y Y'``, ``sum c Y``."""
    c, h, D = cols["c"], cols["h"], cols["D"]
    inv = 1.0 / (1.0 + x @ D)
    Y = np.vstack([h * inv, inv, D * inv])
    return sums([c * ya * yb for ya in Y for yb in Y] + [c * y for y in Y])


def assert_sums(got, expected, what):
    """Each entry of ``got`` within TOL of the sum of its terms' absolute values of the exact
    sum."""
    got = np.asarray(got, dtype=float)
    assert got.shape == (len(expected),), what
    for i, (g, (e, size)) in enumerate(zip(got, expected)):
        assert abs(g - e) <= TOL * size + 1e-300, f"{what}: entry {i}: {g!r} against {e!r} (size {size:.3g})"


def both(monkeypatch, kernel, *args, **kwargs):
    """``kernel(*args)`` with the numpy kernels and with the numba twins."""
    out = []
    for name in ("numpy", "numba"):
        monkeypatch.setenv(backend.ENV, name)
        out.append(kernel(*args, **kwargs))
    return out


SIZES = [1, 15, 16, 17, 1025, 131_072]
# (A whole block's references take seconds each: those run with the slow tests.)
CASES = [(n, k, counts) for n in SIZES[:-1] for k in range(4) for counts in (False, True)]
CASES += [pytest.param(SIZES[-1], k, counts, marks=pytest.mark.slow)
          for k, counts in ((0, False), (1, True))]


@pytest.mark.parametrize("n, k, counts", CASES)
def test_each_twin_gives_its_kernels_sums(n, k, counts, monkeypatch):
    blk, sc, cols = block(n, k, counts, seed=n + 10 * k + counts)
    rng = np.random.default_rng(n + k)
    m, scale = 1 + k, 1.0 / max(n, 1)
    x = rng.normal(0.0, 0.05, m)
    what = f"n={n} k={k} counts={counts}"
    for extra in (0, 1, 2):
        for got in both(monkeypatch, kernels.loglik_block, blk, sc, x, None, False, scale, extra):
            assert_sums(got, likelihood_sums(cols, x, None, scale, extra), f"{what} extra={extra}")
    xv = np.r_[x, 0.2]  # (a profile's: h - value last)
    for got in both(monkeypatch, kernels.loglik_block, blk, sc, xv, 0.4, False, scale, 0):
        assert_sums(got, likelihood_sums(cols, xv, 0.4, scale, 0), f"{what} profile")
    for extra in (0, 1, 2, 3):
        for got in both(monkeypatch, kernels.loglik_block, blk, sc, np.zeros(m), None, True,
                        scale, extra):
            assert_sums(got, origin_sums(cols, None, scale, extra), f"{what} origin {extra}")
    y = np.r_[0.5, 0.3, rng.normal(0.0, 0.05, k)]
    for got in both(monkeypatch, kernels.bound_block, blk, sc, y):
        assert_sums(got, bound_sums(cols, y), f"{what} bound")
    for got in both(monkeypatch, kernels.quadratic_block, blk, sc, x):
        assert_sums(got, quadratic_sums(cols, x), f"{what} quadratic")


@pytest.mark.parametrize("counts", [False, True])
def test_q_is_the_same_to_the_last_bit(counts, monkeypatch):
    blk, sc, cols = block(1025, 2, counts, seed=3)
    x, y = np.array([0.03, -0.1, 0.2]), np.array([0.5, 0.3, 0.1, -0.2])
    for kernel, args in ((kernels.q_block, (x, None, 1e-3)), (kernels.q_block, (np.r_[x, 0.1], 0.4, 1e-3)),
                         (kernels.bound_q_block, (y, 0.7))):
        outs = [np.empty(1025), np.empty(1025)]
        for name, out in zip(("numpy", "numba"), outs):
            monkeypatch.setenv(backend.ENV, name)
            kernel(blk, sc, *args, out=out)
        assert outs[0].tobytes() == outs[1].tobytes()
    # (and the definitions': q = scale / (1 + d x))
    np.testing.assert_allclose(outs[0], 0.7 / (y[0] + y[1:] @ cols["F"] + cols["h"]), rtol=1e-15)


def test_outside_the_domain_both_give_none(monkeypatch):
    blk, sc, cols = block(1025, 1, False, seed=4)
    # w = 0 rows have d = -1: 1 + d x <= 0 at x >= 1 (the first row past the domain is the
    # last row of the block: every run is checked).
    x = np.array([1.0, 0.0])
    assert both(monkeypatch, kernels.loglik_block, blk, sc, x, None, False, 1e-3, 0) == [None, None]
    nan = np.array([np.nan, 0.0])
    assert both(monkeypatch, kernels.loglik_block, blk, sc, nan, None, False, 1e-3, 1) == [None, None]
    # a = gamma + beta w + h: gamma = 0 and w = 0 rows give a = 0.
    y = np.array([0.0, 1.0, 0.0])
    assert both(monkeypatch, kernels.bound_block, blk, sc, y) == [None, None]
    assert both(monkeypatch, kernels.bound_block, blk, sc, np.array([np.nan, 1.0, 0.0])) == [None, None]


def test_one_row_past_the_domain_in_the_last_run_is_found(monkeypatch):
    blk, sc, cols = block(2049, 0, False, seed=5)
    blk.Ft[0, :-1] = 1.0 + np.abs(blk.Ft[0, :-1])  # (w >= 1: d >= 0 ...)
    blk.Ft[0, -1] = 0.0  # (... but on the last row, where d = -1)
    for past, x in ((True, 1.0), (False, 0.999)):
        got = both(monkeypatch, kernels.loglik_block, blk, sc, np.array([x]), None, False, 1e-3, 0)
        assert [part is None for part in got] == [past, past]


def test_the_twins_fold_over_many_blocks_on_threads(monkeypatch):
    # Four blocks of 8,750 rows (blocks.BLOCK = 10,000 here), on 3 threads: the fold's sums are
    # the definitions' over all rows, for either kernels.
    monkeypatch.setattr(blocks, "BLOCK", 10_000)
    n = 35_000
    rng = np.random.default_rng(6)
    w = np.minimum(rng.gamma(2.0, 0.5, n), 10.0)
    s = elcvx.Sample(w, rng.random(n), wmax=10.0, counts=rng.integers(1, 4, n).astype(float))
    data = Moments(s, (), threads=3)
    cols = dict(w=w, h=w * s.u, D=(w - 1.0)[None, :], F=w[None, :], c=s.counts)
    x, y = np.array([0.02]), np.array([0.4, 0.5])
    for got in both(monkeypatch, data.reduce, kernels.loglik_block, kernels.add, x, None, False,
                    1.0 / n, 2, None):
        assert_sums(got, likelihood_sums(cols, x, None, 1.0 / n, 2), "fold, likelihood")
    for got in both(monkeypatch, data.reduce, kernels.bound_block, kernels.merge_moments, y):
        flat = [got.log_sum, got.h_sum, got.total, *got.mean, *got.scatter.ravel(), *got.h_r]
        assert_sums(flat, bound_sums(cols, y), "fold, bound")


def test_an_error_of_1e_9_in_one_sum_is_caught(monkeypatch):
    blk, sc, cols = block(1025, 1, True, seed=7)
    x = np.array([0.03, -0.1])
    expected = likelihood_sums(cols, x, None, 1e-3, 2)
    monkeypatch.setenv(backend.ENV, "numba")
    got = kernels.loglik_block(blk, sc, x, None, False, 1e-3, 2)
    assert_sums(got, expected, "untouched")
    real = kernels_numba._likelihood

    class Off:  # the compiled sums, one of them (the gradient's) off by 1e-9 of itself
        def __call__(self, *args):
            ok = real(*args)
            args[-1][3] *= 1.0 + 1e-9
            return ok

    monkeypatch.setattr(kernels_numba, "_likelihood", Off())
    with pytest.raises(AssertionError, match="entry 3"):
        assert_sums(kernels.loglik_block(blk, sc, x, None, False, 1e-3, 2), expected, "off")


@pytest.mark.parametrize("value, chosen", [(None, "numba"), ("", "numba"), ("auto", "numba"),
                                           (" NumPy ", "numpy"), ("numba", "numba")])
def test_elcvx_kernels_chooses(value, chosen, monkeypatch):
    if value is None:
        monkeypatch.delenv(backend.ENV, raising=False)
    else:
        monkeypatch.setenv(backend.ENV, value)
    assert backend.kernels() == chosen


@pytest.mark.parametrize("value", ["cuda", "1", "numpy,numba"])
def test_a_bad_elcvx_kernels_names_itself(value, monkeypatch):
    monkeypatch.setenv(backend.ENV, value)
    with pytest.raises(InvalidInputError, match="ELCVX_KERNELS=.*auto, numpy, numba") as err:
        elcvx.estimate(elcvx.Sample([0.5, 1.5], [0.0, 1.0], wmax=2.0), method="fast")
    assert err.value.field == "ELCVX_KERNELS" and err.value.value == value


def test_without_numba_auto_is_numpy_and_numba_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "numba", None)  # (an import of it fails)
    monkeypatch.setattr(backend, "CHOICE", backend.KernelChoice())
    monkeypatch.setenv(backend.ENV, "auto")
    assert backend.kernels() == "numpy"
    monkeypatch.setenv(backend.ENV, "numba")
    with pytest.raises(elcvx.errors.MissingDependencyError,
                       match=r"ELCVX_KERNELS=numba needs numba.*pip install 'elcvx\[numba\]'"):
        backend.kernels()
