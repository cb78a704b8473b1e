"""Another solver's dual point far out, where the pass's sums leave the floats: the certificate
refuses it with a reason (no numpy warning, no LinAlgError), and the path goes on to a point it
certifies. Found by the slow fuzz of the paper's programs (tests/fast/test_fuzz.py, seed 1360,
check 'paths'): Clarabel's lower-bound point on a one-row log of weight 1e-300 with wmax = inf."""

import warnings

import numpy as np
import pytest

import elcvx


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_a_row_of_weight_1e_300_says_nothing_on_either_path(method):
    # By hand: the row's weight is 0 to the floats' precision, so E_Q[w] = 1 is met by the atom
    # at w = inf alone, whose reward is free in [rmin, rmax]: every value in [0, 1] has
    # likelihood ratio 1, and the estimate is the atom's default reward, the range's midpoint.
    s = elcvx.Sample([1e-300], [0.6517594169419116], wmin=0.0, wmax=np.inf, rmin=0.0, rmax=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (before the fix: overflow in the certificate's sums,
        est = elcvx.estimate(s, method=method)  # then LinAlgError in its least squares)
        ci = elcvx.interval(s, method=method)
    assert est.status.startswith("optimal") and ci.status.startswith("optimal")
    assert est.value == pytest.approx(0.5, abs=1e-6)
    assert (ci.low, ci.high) == pytest.approx((0.0, 1.0), abs=1e-6)


def test_the_certificate_refuses_sums_that_overflowed():
    from elcvx import certify

    cert = certify.likelihood(1.0, 1.0, np.zeros((1, 1)), np.ones(1), np.zeros(1), np.inf,
                              np.zeros(1), np.ones((2, 2)))
    assert not cert.certified and "overflow" in cert.reason
