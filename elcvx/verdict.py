"""The verdict on a dual point, whichever solver found it: one pass over the rows at the point
(:mod:`elcvx.passes`), its certificate (:mod:`elcvx.certify`, which reads that pass's sums
only), and the solution with its status and certified errors.

Both paths reach their answers' status here and nowhere else: the fast path (:mod:`elcvx.fast`)
reads each point its Newton method ends at through :func:`read_likelihood` and
:func:`read_bound`; the cvxpy path (:mod:`elcvx.cvx`) hands Clarabel's dual point, as it is, to
:func:`mle_at`, :func:`profile_at` and :func:`bound_at`. A point is never moved by an iteration
here: another solver's point is only placed onto the atoms' faces it meets within an
interior-point solver's tolerance (:func:`given_starts`), and the first of those candidates the
certificate accepts is the answer. So the cvxpy path's verdict is independent of the fast
path's method: the two share the model, the passes and the certificate, nothing else.

The status (a :class:`~elcvx.status.Status`) is optimal only where the certificate bounds the
error of what the user reads by :data:`~elcvx.certify.VALUE_TOL` (a value on the unit scale)
and :data:`~elcvx.certify.LOGLIK_TOL` (a log-likelihood, relative): :func:`likelihood_status`;
else its outcome is ``"not certified"`` and its detail says why.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from . import certify
from .model import Stats
from .passes.frames import BoundFrame
from .passes.objectives import (BoundOracle, LikelihoodOracle, Work, bound_q, likelihood_q,
                                memo, same_point)
from .solutions import BoundSolution, MLESolution, OnRead, ProfileSolution
from .status import OPTIMAL, Status

# An atom whose (scaled) mass is above this carries mass: the MLE is on its constraint.
MASS_TOL = 1e-8


# ---------------------------------------------------------------------------------------------
# Another solver's point, made feasible
# ---------------------------------------------------------------------------------------------
#: How near (relative to a constraint's size) a face must be for another solver's point to be
#: moved onto it, for :func:`given_starts`' candidates in turn (0: only the constraints it
#: violates). Within 1e-9, a face is taken to be the point's (an interior point's tolerance).
SNAPS = (1e-9, 0.0, 1e-7, 1e-5)


def given_starts(A, h, x0, oracle):
    """Feasible points in the oracle's domain made of ``x0``, a point another solver found: ``x0``
    moved onto the constraints it violates by at most ``1e-7`` of their size (the rows are
    scaled to size one; interior-point solvers stop that close), then, in turn, onto every face
    it meets within :data:`SNAPS` of its size: an interior point approaches the faces of the
    optimum without landing on them, and a point ``s`` off a face that carries mass ``mu`` is a
    gap of ``N mu s`` to a certificate. Empty if ``x0`` violates a constraint by more, or no
    candidate lies in the domain: such a point certifies nothing."""
    x0 = np.asarray(x0, dtype=float)
    if not np.all(np.isfinite(x0)):
        return []
    size = np.maximum(1.0, np.abs(A) @ np.abs(x0) + np.abs(h))
    slack = A @ x0 + h
    if not np.all(slack >= -1e-7 * size):
        return []
    out = []
    for near in SNAPS:
        on = np.flatnonzero(slack < 0 if near == 0 else slack <= near * size)
        x = x0
        if on.size:
            M = A[on]
            x = inside(A, h, x0 - np.linalg.lstsq(M, M @ x0 + h[on], rcond=None)[0])
        if (np.all(A @ x + h >= -1e-15 * size) and not any(np.array_equal(x, y) for y in out)
                and math.isfinite(oracle(x)[0])):
            out.append(x)
    return out


def inside(A, h, x):
    """``x`` moved (least change) so that no computed slack ``A x + h`` is below
    :data:`~elcvx.certify.SLACK_TOL`'s half where one is below that tolerance by rounding (at
    most ``1e-12`` of the constraint's size): a point found on a face at ``|x| = 1e5`` is off it
    by ``1e-11`` in its last bits, which a certificate cannot tell from a violated constraint.
    Every face met to rounding is aimed at its face first, then at a slack of a few of its
    roundings where ``x``'s own rounding undoes the move (a slack ``s`` at an atom of mass
    ``mu`` costs ``N mu s`` in a certificate); ``x`` itself where no slack is below the
    tolerance, or none of these meets it."""
    slack = A @ x + h
    if slack.min(initial=0.0) >= -certify.SLACK_TOL:
        return x  # (the common case, first: this runs after every solve)
    size = np.maximum(1.0, np.abs(A) @ np.abs(x) + np.abs(h))
    tol = 0.5 * certify.SLACK_TOL
    if not np.all(slack >= -1e-12 * size):
        return x
    for margin in (0.0, 1e-16, 4e-16, 4e-15, 4e-14):
        out = x
        for _ in range(3):
            # (Every face met to rounding: moving off one may push x through another.)
            slack = A @ out + h
            if slack.min() >= -tol:
                return out
            on = np.flatnonzero(slack < max(margin * size.max(), tol))
            out = out - np.linalg.lstsq(A[on], slack[on] - margin * size[on], rcond=None)[0]
        if (A @ out + h).min() >= -tol:
            return out
    return x


def first_certified(candidates, read):
    """``read(x)`` of the first of ``candidates`` whose status is optimal; else the last one
    read (None if there is no candidate)."""
    out = None
    for x in candidates:
        out = read(x)
        if out.status.optimal:
            break
    return out


# ---------------------------------------------------------------------------------------------
# The likelihood programs (the MLE, the profile at v)
# ---------------------------------------------------------------------------------------------
class AtTheMLE(NamedTuple):
    """Sums a policy's MLE computes in its own passes for the bounds after it (so that neither
    bound makes a pass for them): the rows' :class:`Stats` (from the MLE's first pass, at the
    origin) and the bound's start sums at the MLE (:func:`elcvx.fast.starts._quadratic_start`),
    both for ``h = w u``; the upper side's follow (``w (1 - u) = (w - 1) + 1 - w u``). Carried
    as the last of :attr:`~elcvx.solutions.MLESolution.sums`; ``n`` and ``k`` identify the
    rows."""

    n: float
    k: int
    stats: Stats | None
    start: tuple | None  # (gram, sums) of (h, 1, D) / (1 + D x*)

    def for_side(self, side):
        """``(stats, start)`` for the bound of ``side``."""
        if side != "upper":
            return self.stats, self.start
        stats = None if self.stats is None else self.stats.other_side()
        if self.start is None:
            return stats, None
        gram, first = self.start
        L = np.eye(len(first))
        L[0, :3] = (-1.0, 1.0, 1.0)  # (w (1 - u)) / a = (w - 1)/a + 1/a - (w u)/a
        return stats, (L @ gram @ L.T, L @ first)


class Solved(NamedTuple):
    """A likelihood program's solution at a point (:func:`read_likelihood`)."""

    x: np.ndarray | None
    q: OnRead | None
    loglik: float
    status: Status
    sums: tuple = ()
    cert: certify.LikelihoodCertificate | None = None
    error: float = math.nan  # the MLE's certified estimate error (any rho)


def read_likelihood(data, value, A, h, x, raw, status) -> Solved:
    """The solution at ``x`` from the oracle ``raw``'s pass there (one more pass where its last
    was at another point), certified (:func:`elcvx.certify.likelihood`); ``status``: the
    solver's (a :class:`~elcvx.status.Status`), which stands only where it is optimal and the
    certificate agrees (:func:`likelihood_status`). ``value``: the profile's, None for the MLE,
    whose ``sums = (sum c q, sum c q w, sum c q h, AtTheMLE)``; the MLE's ``q`` is computed on
    its first read."""
    last = raw.last
    if last is None or not same_point(last.x, x):
        raw(x, full=True)
        last = raw.last
    n = data.n
    sums: tuple = ()
    if value is None:
        carried = None
        if data.policy and data.side != "upper":  # (the MLE's model is the lower side's)
            origin = raw.origin.stats if raw.origin is not None else None
            k = data.k  # (origin: sum c F (k + 1 sums), sum c h, sum c |h|, sum c (w - h))
            stats = (None if origin is None
                     else Stats(origin[:k + 1], origin[k + 1], origin[k + 2], origin[k + 3], 0.0))
            carried = AtTheMLE(n, data.k, stats, last.bound_start)
        sums = (last.mass, float(last.mass + last.moments[0]), last.value_sum, carried)
    cert = certify.likelihood(data.n, data.c_min, A, h, x, last.mass, last.moments, last.q2,
                              value)
    error = math.nan if value is not None else estimate_error(data, cert, last.q2)
    if status.optimal:
        status = likelihood_status(cert, last.loglik, None if value is not None else error)
    q = None
    if value is None and data.in_memory:
        q = OnRead(functools.partial(likelihood_q, data, last.x))
    return Solved(x, q, last.loglik, status, sums, cert, error)


def estimate_error(data, cert, q2):
    """The certified error of the estimate (any ``rho``): :meth:`LikelihoodCertificate.value_error`
    with ``S = coef' sum c q^2 (1, d)(1, d)' coef`` (``|a_n| <= (1, d_n) . coef``; ``q2``: the
    pass's ``sum c q^2 (1, d)(1, d)'``)."""
    coef = np.zeros(len(q2))
    coef[:len(data.estimate_coef)] = data.estimate_coef
    return cert.value_error(float(coef @ q2 @ coef))


def likelihood_status(cert, loglik, estimate_error=None) -> Status:
    """:data:`~elcvx.status.OPTIMAL` where ``cert`` bounds the log-likelihood's error by
    :data:`~elcvx.certify.LOGLIK_TOL` (relative) and ``estimate_error`` (the MLE's) by
    :data:`~elcvx.certify.VALUE_TOL`; else ``"not certified"``, and why not."""
    if not cert.certified:
        return Status("not certified", cert.reason)
    if not cert.gap <= certify.LOGLIK_TOL * max(1.0, abs(loglik)):
        return Status("not certified", f"the log-likelihood's gap is {cert.gap:.2g}")
    if estimate_error is not None and not estimate_error <= certify.VALUE_TOL:
        return Status("not certified", f"the estimate's error bound is {estimate_error:.2g}")
    return OPTIMAL


def likelihood_at(data, value, A, h, x0, work) -> Solved:
    """Another solver's point ``x0`` as it is: the first of its candidates (on the faces it
    nearly meets, :func:`given_starts`) that the certificate accepts, else the last read."""
    raw = LikelihoodOracle(data, work, value)
    oracle = memo(raw)
    out = first_certified(given_starts(A, h, x0, oracle),
                          lambda x: read_likelihood(data, value, A, h, x, raw, OPTIMAL))
    return out if out is not None else Solved(None, None, math.nan,
                                              Status("no feasible start", "the point given"))


def mle_solution(data, out, work) -> MLESolution:
    """The :class:`MLESolution` of a likelihood program's solution ``out`` (its point's
    ``beta`` first, then the ``lambdas``); without a point, a failure that says so."""
    if out.x is None:
        nan = math.nan
        return MLESolution(beta=nan, loglik=nan, q=nans(data),
                           status=Status("no feasible start", "an empty model?"),
                           work=work.counts())
    x = out.x
    return MLESolution(beta=float(x[0]), loglik=out.loglik, q=out.q, status=out.status,
                       work=work.counts(), lambdas=tuple(float(t) for t in x[1:]), sums=out.sums,
                       at_atom=bool(out.cert.masses.max(initial=0.0) > MASS_TOL),
                       gap=out.cert.gap, error=out.error)


def mle_at(data, x) -> MLESolution:
    """The MLE of the model ``data`` at another solver's dual point ``x = (beta, lambda)``, as it
    is: its status optimal where the certificate accepts it (:func:`likelihood_at`)."""
    work = Work()
    A, h = data.atom_rows()
    return mle_solution(data, likelihood_at(data, None, A, h, np.asarray(x, dtype=float), work),
                        work)


def profile_at(data, v, x) -> ProfileSolution:
    """The profile likelihood at ``v`` (strictly inside the range of ``E_Q[h]``) at another
    solver's dual point ``x = (beta, lambda, tau)``, as it is."""
    work = Work()
    A, h = data.atom_rows(value=v)
    out = likelihood_at(data, v, A, h, np.asarray(x, dtype=float), work)
    if out.x is None or out.cert is None:  # (no point: no certificate either)
        loglik, beta, tau, gap = math.inf, math.nan, math.nan, 0.0
    else:
        loglik, beta, tau, gap = out.loglik, out.x[0], out.x[-1], out.cert.gap
    return ProfileSolution(loglik=np.array([loglik]), beta=np.array([beta]),
                           tau=np.array([tau]), status=out.status, work=work.counts(),
                           gap=np.array([gap]))


def nans(data):
    """A failed solution's ``q``: NaN on every row (None for rows not in memory)."""
    return np.full(data.rows, math.nan) if data.in_memory else None


# ---------------------------------------------------------------------------------------------
# The bound
# ---------------------------------------------------------------------------------------------
def read_bound(y, f, status, *, data, K, lin, B, floor, raw, work, quantile, mle_gap, frame,
               top):
    """The bound's solution at ``y`` (in ``frame``'s coordinates, dual value ``f``) from the
    oracle ``raw``'s pass there (one more where its last was at another point), certified
    (:func:`elcvx.certify.bound`); ``status``: the solver's (a :class:`~elcvx.status.Status`),
    which stands only where it is optimal and the certificate agrees. Its ``q`` is computed on
    its first read."""
    n = data.n
    if raw.last is None or not same_point(raw.last.y, y):
        raw(y)  # the certificate's sums are read from the last evaluation
    last = raw.last
    kappa = last.kg / n
    q = (OnRead(functools.partial(bound_q, data, last.y, kappa, frame)) if data.in_memory
         else None)
    sums = last.sums
    # E_Q[1], E_Q[w], E_Q[g] on the rows (q = kappa / a)
    cq = kappa * sums.total * frame.means_to_user(sums.mean)
    lo, hi = data.value_range
    cert = certify.bound(n, data.c_min, B, floor, y, sums, K, lin, quantile, mle_gap, hi - lo,
                         top)
    if status.optimal and not cert.certified:
        status = Status("not certified", cert.reason)
    user = frame.to_user(y)
    return BoundSolution(value=float(f), beta=float(user[1]), gamma=float(user[0]),
                         kappa=float(kappa), q=q, status=status, work=work.counts(),
                         lambdas=tuple(float(t) for t in user[2:]),
                         sums=(float(cq[0]), float(cq[1])), error=cert.error)


def bound_failure(data, work, why) -> BoundSolution:
    """A bound that was not solved, and ``why`` (its status's outcome)."""
    nan = math.nan
    return BoundSolution(nan, nan, nan, nan, nans(data), Status(why), work=work.counts())


def bound_given(oracle, start, bound) -> BoundSolution:
    """Another solver's point ``start`` (``(gamma, beta, lambda)``, the user's coordinates) as it
    is: the first of its candidates (:func:`given_starts`) the certificate accepts, else the
    last read. ``bound``: :func:`read_bound`'s keywords, ``oracle`` its ``raw`` (memoised)."""
    frame = bound["frame"]
    out = first_certified(given_starts(bound["B"], bound["floor"], frame.from_user(start), oracle),
                          lambda y: read_bound(y, oracle(y)[0], OPTIMAL, **bound))
    return out if out is not None else bound_failure(bound["data"], bound["work"],
                                                     "no feasible start")


def bound_at(data, loglik, quantile, y, mle_gap) -> BoundSolution:
    """The bound of the model ``data`` at another solver's dual point ``y = (gamma, beta,
    lambda)``, as it is, for the MLE ``loglik`` with certified gap ``mle_gap``: its status
    optimal where the certificate accepts it (:func:`bound_given`), in the user's
    coordinates."""
    work = Work()
    K = math.exp(-(loglik + 0.5 * quantile) / data.n)
    frame = BoundFrame(False, data.b)
    lin = frame.lin()
    raw = BoundOracle(data, K, lin, work, frame=frame)
    B, floor = frame.rows(data)
    bound = dict(data=data, K=K, lin=lin, B=B, floor=floor, raw=raw, work=work,
                 quantile=quantile, mle_gap=mle_gap, frame=frame, top=math.inf)
    return bound_given(memo(raw), np.asarray(y, dtype=float), bound)
