"""The fast path's three programs (numpy only): the MLE, the profile likelihood at ``v`` and
the bound, with any number of moment constraints (:mod:`elcvx.constraints`) or none (the
paper's), each solved on its low-dimensional dual and certified.

Each dual has a few variables (``1 + k`` for the estimate, ``2 + k`` for the profile and the
bound, with ``k`` constraints) and one linear constraint per extra atom. The active-set Newton
method of :mod:`elcvx.fast.active_set` solves it: Newton steps on the face of the atoms'
constraints that hold at equality, each one pass over the rows (value, gradient, Hessian and the
size of the objective's terms together: :mod:`elcvx.fast.objectives`), a handful of passes in
all. The optimum usually sits on some atoms' constraints (an atom carrying mass), which an
active-set method lands on exactly. The MLE with one feature starts from the root of its
gradient's series, the bound from the profile's quadratic approximation at the MLE, from sums of
the MLE's own passes (:mod:`elcvx.fast.starts`). Where the method stalls (a dual degenerate in
ways its working set does not see) the barrier method of :mod:`elcvx.fast.barrier` takes over.

Every answer is then **certified** from the last pass, independently of the iteration, by
:mod:`elcvx.certify`: the error of what the user reads (the estimate, the bound, the
likelihood) is bounded from an exactly feasible primal point built next to the dual one, and
the status is ``"optimal"`` only where that bound is within the promised tolerance. The cvxpy
path certifies Clarabel's dual points by the same functions with ``max_iter=0``
(:mod:`elcvx.cvx`).

The programs are those of :mod:`elcvx.programs`: the MLE (``mle_dual``), the profile
(``profile_dual``) and the bound (``lower_bound_dual``), with the constraints' terms.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from scipy.optimize import nnls

from .. import certify
from ..model import Stats, at_the_edge, model_of
from ..solutions import BoundSolution, MLESolution, ProfileSolution
from . import barrier
from .active_set import MAX_ITER, along_the_valley, maximize, memo
from ..solutions import OnRead
from .objectives import BoundOracle, LikelihoodOracle, Work, bound_q, likelihood_q
from .frames import BoundFrame
from .starts import (_given_start, _given_starts, _inside, _interior_point, _onto_faces,
                     _quadratic_start, _series_start, _start)


class AtTheMLE(NamedTuple):
    """Sums a policy's MLE computes in its own passes for the bounds after it (so that neither
    bound makes a pass for them): the rows' :class:`Stats` (from the MLE's first pass, at the
    origin) and the bound's start sums at the MLE (:func:`_quadratic_start`), both for ``h =
    w u``; the upper side's follow (``w (1 - u) = (w - 1) + 1 - w u``). Carried as the last of
    :attr:`~elcvx.solutions.MLESolution.sums`; ``n`` and ``k`` identify the rows."""

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


def _at_the_mle(data, mle_sol):
    """The :class:`AtTheMLE` that ``mle_sol`` carries, if it is of these rows (a policy's
    value, the same ``n`` and ``k``), else None."""
    carried = mle_sol.sums[-1] if mle_sol is not None and mle_sol.sums else None
    if (isinstance(carried, AtTheMLE) and data.policy and carried.n == data.n
            and carried.k == data.k):
        return carried
    return None


def _solve(oracle, x, A, h, max_iter=MAX_ITER, gap_tol=0.0, kkt_tol=None, lin=None,
           polish=False):
    """``(x, f, status)``: the active-set Newton method from a feasible ``x``; with ``max_iter
    = 0``, ``x`` itself (another solver's point, for the certificate to judge). The objective
    along a direction ``d`` in which the rows' features vanish (a redundant constraint) is
    linear, of slope ``-lin . d`` (the bound's) or 0 (the likelihoods'). ``polish``: one
    Newton step to the rounding floor (:func:`_polished`)."""
    if max_iter == 0:
        return x, oracle(x)[0], "optimal"
    flat = (lambda d: 0.0) if lin is None else (lambda d: -float(lin @ d))
    out = maximize(oracle, x, A, h, kkt_tol=_KKT_TOL if kkt_tol is None else kkt_tol,
                   gap_tol=gap_tol, max_iter=max_iter, flat_slope=flat, polish=polish)
    inside = _inside(A, h, out.x)
    if inside is not out.x:
        f = oracle(inside)[0]
        if math.isfinite(f):
            return inside, f, out.status
    return out.x, out.f, out.status


# An atom whose (scaled) mass is above this carries mass: the MLE is on its constraint.
_MASS_TOL = 1e-8


# The active-set method polishes the gradient (the primal q it gives) to this KKT residual; and
# where the certificate asks for more, to the rounding floor, in at most _POLISH_ITER steps.
_KKT_TOL = 1e-11


_POLISH_ITER = 4


def _polished(read, oracle, x, A, h, lin=None):
    """The certified solution (``read(x, "optimal")``) after Newton steps towards the rounding
    floor of the gradient from ``x``, one at a time, each read and certified, until one is
    certified or :data:`_POLISH_ITER` are taken; None if none could be taken.

    Where the active-set method stops, ``f`` is at its rounding floor, not always the gradient:
    a bound's value of 0.5 is the difference of terms of 900, which hides a gradient of 1e-12,
    and the certificate of a bound on ``N`` rows loses ``N`` times the gradient in likelihood
    (at ``N = 1e7``, a gradient of 1e-13 is the most it allows); a nearly redundant constraint
    makes a gradient of 1e-12 a large correction too. The last step's pass is the certificate's,
    so each step costs one pass."""
    out = None
    for _ in range(_POLISH_ITER):
        x, _, status = _solve(oracle, x, A, h, kkt_tol=0.0, lin=lin, polish=True)
        if status != "polished":
            break
        out = read(x, "optimal")
        if out.status == "optimal":
            break
    return out


# ---------------------------------------------------------------------------------------------
# The three programs
# ---------------------------------------------------------------------------------------------
def mle(sample, constraints, atoms=None) -> MLESolution:
    """``l* = max sum c log(1 + beta (w - 1) + lambda . (g - b))`` over the atoms' constraints;
    ``q = 1 / (N (1 + ...))``. ``beta`` of the solution is ``x[0]``; ``lambdas`` the rest."""
    return mle_of(model_of(sample, constraints, atoms))


def mle_of(data, start=None, max_iter=MAX_ITER) -> MLESolution:
    """:func:`mle` of a :class:`Moments` model: from the origin, or from another solver's
    ``start`` (:func:`_given_start`) in at most ``max_iter`` iterations. Its ``sums`` end with
    an :class:`AtTheMLE` for the bounds."""
    work = Work()
    A, h = data.atom_rows()
    x0 = np.zeros(A.shape[1]) if start is None else start
    out = _likelihood(data, None, A, h, x0, work, max_iter, start is not None)
    if out.x is None:
        return _mle_failure(data, "no feasible start (an empty model?)", work)
    x = out.x
    return MLESolution(beta=float(x[0]), loglik=out.loglik, q=out.q, status=out.status,
                       work=work.counts(), lambdas=tuple(float(t) for t in x[1:]), sums=out.sums,
                       at_atom=bool(out.cert.masses.max(initial=0.0) > _MASS_TOL),
                       gap=out.cert.gap, error=out.error)


class _Solved(NamedTuple):
    """A likelihood program's solution (:func:`_likelihood`)."""

    x: np.ndarray | None
    q: OnRead | None
    loglik: float
    status: str
    sums: tuple = ()
    cert: certify.LikelihoodCertificate | None = None
    error: float = math.nan  # the MLE's certified estimate error (any rho)


def _likelihood(data, value, A, h, x0, work, max_iter=MAX_ITER, given=False) -> _Solved:
    """``l = max sum c log(1 + D x)`` subject to ``A x + h >=
    0`` from near ``x0`` (``given``: from ``x0`` itself, see :func:`_given_start`), ``q = 1 /
    (N (1 + D x))`` (None for a model whose rows are not in memory, or a profile), certified
    (:func:`elcvx.certify.likelihood`; ``cert`` None without a feasible start);
    ``sums = (sum c q, sum c q w, sum c q h, AtTheMLE)`` for the MLE (``value`` None); ``x`` is
    None without a feasible start. ``D``: the model's features, with ``h - value`` last when
    ``value`` is given. ``q``, ``l`` and the certificate's sums are those of the last pass,
    at ``x`` (one more pass where that was another point)."""
    raw = LikelihoodOracle(data, work, value)
    oracle = memo(raw)
    if given and max_iter == 0:
        # Another solver's point, as it is: the first of its candidates (on the faces it nearly
        # meets) that the certificate accepts.
        out = None
        for x in _given_starts(A, h, x0, oracle):
            out = _read(data, value, A, h, x, raw, "optimal")
            if out.status == "optimal":
                break
        return out if out is not None else _Solved(None, None, math.nan,
                                                   "no feasible start (the point given)")
    if given:
        x = _given_start(A, h, x0, oracle)
    else:
        # (Where x0 is outside the domain, the segment from the origin, where every term is 0.)
        x = _start(A, h, x0, oracle, anchor=np.zeros_like(x0))
        if x is not None and not np.any(x) and raw.origin is not None and len(x) == 1:
            x = _series_start(oracle, raw, A, h, x)
    if x is None:
        why = "no feasible start" + (" (the point given)" if given else "")
        return _Solved(None, None, math.nan, why)
    x, _, status = _solve(oracle, x, A, h, max_iter)
    out = _read(data, value, A, h, x, raw, status)
    if status == "optimal" and out.status != "optimal" and out.cert.masses is not None:
        # The method's KKT tolerance was met, not the certificate's: where a constraint is nearly
        # redundant (a column within 1e-7 of w - 1), a gradient of 1e-12 is a large correction.
        # Newton steps to the rounding floor, each certified.
        out = _polished(lambda x, st: _read(data, value, A, h, x, raw, st), oracle, x, A, h) or out
    if out.status != "optimal" and out.cert is not None and out.cert.certified:
        # A point whose faces are met to the ulps of |x| = 5e4 only (targets near the
        # feasible set's edge): a slack of 1e-12 at an atom carrying mass is a gap of N mu s.
        on = _onto_faces(A, h, out.x)
        if on is not out.x:
            alt = _read(data, value, A, h, on, raw, "optimal")
            if alt.status == "optimal":
                return alt
    if out.status != "optimal":
        # The active-set method stalled (a degenerate dual it does not see): the barrier
        # method from a strictly feasible point near where it stopped, certified on the faces
        # its end approaches.
        x, f, status = _barrier_from(oracle, A, h, out.x)
        for x in _given_starts(A, h, x, oracle) if status == "optimal" else ():
            alt = _read(data, value, A, h, x, raw, "optimal")
            if alt.status == "optimal":
                return alt
        null = _null_features(data, A)
        if null:
            alt = _without(null, data, value, A, h, raw, oracle, max_iter)
            if alt is not None and alt.status == "optimal":
                return alt
        if status == "unbounded":
            return _Solved(None, None, math.nan, _UNBOUNDED)
    return out


def _null_features(data, A):
    """The indices in ``x`` of the moment constraints met by every distribution to rounding:
    ``g - b`` within ``1e-12`` of ``max(1, |b|)`` of 0 on every row and atom (a zero-width
    ``atom_range`` at a target the rows meet but for the last bit). Such a constraint holds for
    every ``Q`` to the certificate's :data:`~elcvx.certify.ROUNDING`, yet its dual grows
    without bound along its ``lambda`` (every term gains, by ``1e-17`` of it): it is solved
    with that ``lambda`` at 0. Empty for rows not in memory."""
    if not (data.in_memory and data.k):
        return []
    out = []
    for j in range(data.k):
        tol = 1e-12 * max(1.0, abs(float(data.b[j])))
        if (np.abs(A[:, 1 + j]).max(initial=0.0) <= tol
                and np.abs(data.Gt[j] - data.b[j]).max(initial=0.0) <= tol):
            out.append(1 + j)
    return out


def _without(null, data, value, A, h, raw, oracle, max_iter):
    """:func:`_likelihood`'s solution with ``x`` held at 0 on the coordinates ``null``
    (:func:`_null_features`), read and certified on the whole model; None without a feasible
    start."""
    sub, keep, embed = _held_at_zero(oracle, null, A.shape[1])
    Ar = A[:, keep]
    xr = _start(Ar, h, np.zeros(len(keep)), sub, anchor=np.zeros(len(keep)))
    if xr is None:
        return None
    xr, _, status = _solve(sub, xr, Ar, h, max_iter)
    return _read(data, value, A, h, embed(xr), raw, status)


def _held_at_zero(oracle, null, m):
    """``(sub, keep, embed)``: ``oracle`` (of ``m`` coordinates) as a function of the
    coordinates ``keep``, those in ``null`` held at 0 (memoised), and ``embed``, which maps a
    point of ``sub`` back to all ``m``."""
    keep = np.array([i for i in range(m) if i not in null])

    def embed(xr):
        x = np.zeros(m)
        x[keep] = xr
        return x

    def restricted(xr):
        f, g, H, size = oracle(embed(xr))
        if g is None:
            return f, g, H, size
        return f, g[keep], H[np.ix_(keep, keep)], size

    return memo(restricted), keep, embed


def _read(data, value, A, h, x, raw, status) -> _Solved:
    """The solution at ``x`` from the oracle's pass there (one more pass where its last was at
    another point), certified (:func:`elcvx.certify.likelihood`), as :func:`_likelihood`
    returns it; ``status``: the solver's. The MLE's ``q`` is computed on its first read."""
    last = raw.last
    if last is None or not np.array_equal(last.x, x):
        raw(x, full=True)
        last = raw.last
    n = data.n
    sums = ()
    if value is None:
        carried = None
        if data.policy and data.side != "upper":  # (the MLE's model is the lower side's)
            origin = raw.origin.stats if raw.origin is not None else None
            stats = None if origin is None else Stats(origin[:data.k + 1], *origin[data.k + 1:], 0.0)
            carried = AtTheMLE(n, data.k, stats, last.bound_start)
        sums = (last.mass, float(last.mass + last.moments[0]), last.value_sum, carried)
    cert = certify.likelihood(data.n, data.c_min, A, h, x, last.mass, last.moments, last.q2,
                              value)
    error = math.nan if value is not None else _estimate_error(data, cert, last.q2)
    if status == "optimal":
        status = _verdict(cert, last.loglik, None if value is not None else error)
    q = None
    if value is None and data.in_memory:
        q = OnRead(functools.partial(likelihood_q, data, last.x))
    return _Solved(x, q, last.loglik, status, sums, cert, error)


#: The status of a model whose dual grows without bound: its primal is infeasible.
_UNBOUNDED = ("infeasible (the dual grows without bound: no distribution with every logged row "
              "kept meets the moment constraints)")


def _barrier_from(oracle, A, h, x):
    """``(x, f, status)``: :func:`elcvx.fast.barrier.maximize` from a strictly feasible point near
    ``x`` (an LP's, moved towards ``x`` while it stays so and in the oracle's domain)."""
    center = np.zeros(A.shape[1]) if x is None else np.asarray(x, dtype=float)
    p = _interior_point(A, h, center)
    if p is None or not math.isfinite(oracle(p)[0]):
        return center, math.nan, "no strictly feasible start"
    for t in (0.999, 0.99, 0.9, 0.5, 0.0):
        trial = p + t * (center - p)
        if np.all(A @ trial + h > 0) and math.isfinite(oracle(trial)[0]):
            break
    return barrier.maximize(oracle, trial, A, h)


def _estimate_error(data, cert, q2):
    """The certified error of the estimate (any ``rho``): :meth:`LikelihoodCertificate.value_error`
    with ``S = coef' sum c q^2 (1, d)(1, d)' coef`` (``|a_n| <= (1, d_n) . coef``; ``q2``: the
    pass's ``sum c q^2 (1, d)(1, d)'``)."""
    coef = np.zeros(len(q2))
    coef[:len(data.estimate_coef)] = data.estimate_coef
    return cert.value_error(float(coef @ q2 @ coef))


def _verdict(cert, loglik, estimate_error=None):
    """``"optimal"`` where ``cert`` bounds the log-likelihood's error by
    :data:`~elcvx.certify.LOGLIK_TOL` (relative) and ``estimate_error`` (the MLE's) by
    :data:`~elcvx.certify.VALUE_TOL`; else why not."""
    if not cert.certified:
        return f"not certified ({cert.reason})"
    if not cert.gap <= certify.LOGLIK_TOL * max(1.0, abs(loglik)):
        return f"not certified (the log-likelihood's gap is {cert.gap:.2g})"
    if estimate_error is not None and not estimate_error <= certify.VALUE_TOL:
        return f"not certified (the estimate's error bound is {estimate_error:.2g})"
    return "optimal"


def _mle_failure(data, why, work):
    nan = math.nan
    return MLESolution(beta=nan, loglik=nan, q=_nans(data), status=why, work=work.counts())


def _nans(data):
    """A failed solution's ``q``: NaN on every row (None for rows not in memory)."""
    return np.full(data.rows, math.nan) if data.in_memory else None


def profile(sample, constraints, v, atoms=None, mle_sol=None) -> ProfileSolution:
    """``l_v = max sum c log(1 + beta (w - 1) + lambda . (g - b) + tau (w u - v))`` for each
    ``v`` (unit scale), over the atoms' constraints at reward 0 and 1."""
    return profile_of(model_of(sample, constraints, atoms), v, mle_sol)


def profile_of(data, v, mle_sol=None, starts=None, max_iter=MAX_ITER) -> ProfileSolution:
    """:func:`profile` of a :class:`Moments` model (any value functional ``h``): ``v`` strictly
    inside the range of ``h``'s expectation, or at an end of a policy's value range where the
    rows leave no other value (:func:`at_the_edge`); other ``v`` get ``l_v = inf``. Each
    ``v`` from ``starts[i]`` if given (``(beta, lambda, tau)``), else from the MLE's point."""
    work = Work()
    v = np.atleast_1d(np.asarray(v, dtype=float))
    out_l, out_b, out_t = np.full(v.shape, math.inf), np.full(v.shape, math.nan), np.full(v.shape, math.nan)
    gaps = np.zeros(v.shape)
    statuses = set()
    base = None if mle_sol is None else np.r_[mle_sol.beta, mle_sol.lambdas, 0.0]
    lo, hi = data.value_range
    for i, vi in enumerate(v):
        if not lo < vi < hi:
            if at_the_edge(data, vi):
                mle_sol = mle_sol if mle_sol is not None else mle_of(data)
                statuses.add(mle_sol.status)
                out_l[i], out_b[i], out_t[i] = mle_sol.loglik, mle_sol.beta, 0.0
                gaps[i] = mle_sol.gap
            continue
        A, h = data.atom_rows(value=vi)
        x0 = starts[i] if starts is not None else base if base is not None else np.zeros(A.shape[1])
        out = _likelihood(data, vi, A, h, np.asarray(x0, dtype=float), work, max_iter,
                          starts is not None)
        statuses.add(out.status)
        if out.x is not None:
            out_l[i], out_b[i], out_t[i] = out.loglik, out.x[0], out.x[-1]
            gaps[i] = out.cert.gap
    status = "optimal" if statuses <= {"optimal"} else ", ".join(sorted(statuses))
    return ProfileSolution(loglik=out_l, beta=out_b, tau=out_t, status=status, work=work.counts(),
                           gap=gaps)


def lower_bound(sample, constraints, loglik, quantile, side="lower", atoms=None,
                mle_sol=None) -> BoundSolution:
    """``max_{gamma,beta,lambda} K geomean_c(gamma + beta w + lambda . g + w u) - gamma - beta
    - lambda . b`` over the atoms' constraints (zero reward at the atoms), ``K = exp(-(l* +
    quantile/2)/N)`` with ``l*`` the constrained MLE's; ``q = kappa / a``, ``kappa = K geomean /
    N``. ``side="upper"``: the same on ``1 - u``."""
    return lower_bound_of(model_of(sample, constraints, atoms, side), loglik, quantile, mle_sol)


def lower_bound_of(data, loglik, quantile, mle_sol=None, start=None,
                   max_iter=MAX_ITER, mle_gap=None) -> BoundSolution:
    """:func:`lower_bound` of a :class:`Moments` model: ``min E_Q[h]`` over the likelihood
    ball, ``h`` at its least ``h_lo`` on the atoms (``gamma + beta w_k + lambda . g_k + h_lo
    >= 0`` there); from ``start`` (``(gamma, beta, lambda)``) if given, else from the
    profile's quadratic approximation at the MLE. ``mle_gap``: the certified gap of ``loglik``
    (default ``mle_sol.gap``), which the bound's certificate allows for."""
    work = Work()
    if mle_gap is None:
        mle_gap = mle_sol.gap if mle_sol is not None else math.nan
    n = data.n
    K = math.exp(-(loglik + 0.5 * quantile) / n)
    lin = np.concatenate(([1.0, 1.0], data.b))
    carried = _at_the_mle(data, mle_sol)
    stats_at_mle, start_at_mle = (None, None) if carried is None else carried.for_side(data.side)
    if data._stats is None and stats_at_mle is not None:
        data._stats = stats_at_mle
    # f is a value of size at most K mean(|h|) (AM-GM): an absolute floor of that size on the
    # stopping rule's scale (a bound reached only as y -> 0 would otherwise be approached one
    # halving at a time), capped at 1 (the accuracy of a value on the unit scale).
    stats = data.stats()
    total = stats.sum_h if data.nonnegative else stats.sum_abs_h
    reach = min(1.0, K * total / n)
    # Atom rows in (gamma, beta, lambda): (1, w, g) / max(1, w); at w = inf, (0, 1, gbar).
    B, floor = data.bound_rows()
    if not (stats.sum_abs_h or np.any(floor)) and mle_sol is not None:
        # h = 0 on every row and atom: every Q in the ball (the MLE's) gives E_Q[h] = 0. The
        # dual is positively homogeneous: its supremum 0 is approached only as y -> 0.
        return BoundSolution(0.0, 0.0, 0.0, 0.0, mle_sol.q_field, "optimal (h = 0 everywhere)",
                             work=work.counts(), sums=mle_sol.sums[:2], error=0.0)
    if mle_sol is not None and _within_reach_of_zero(data, K * total / n, K, lin, B, floor):
        return BoundSolution(0.0, 0.0, 0.0, 0.0, mle_sol.q_field, "optimal (bound within 1e-13 of 0)",
                             work=work.counts(), sums=mle_sol.sums[:2], error=1e-13)
    given = dict(data=data, K=K, quantile=quantile, mle_gap=mle_gap, work=work, reach=reach,
                 mle_sol=mle_sol, start=start, max_iter=max_iter, start_at_mle=start_at_mle)
    out, _ = _bound_in(BoundFrame(False, data.b), **given)
    if out.status != "optimal" and max_iter:
        # At a target within 1e-4 of the feasible set's edge, |lambda| = 1e5: in the user's
        # coordinates gamma + lambda . g cancels to a's last digits, and the method stalls or
        # its point is not certified. Again in centred ones, then in centred ones decorrelated
        # at the point where that stopped (:mod:`elcvx.fast.frames`; a failure's cost only).
        alt, last = _bound_in(BoundFrame(True, data.b), **given)
        if alt.status == "optimal":
            return alt
        mixed = None if last is None else BoundFrame.decorrelated(data.b, last.sums)
        if mixed is not None:
            alt, _ = _bound_in(mixed, **given)
            if alt.status == "optimal":
                return alt
    return out


def _bound_in(frame, *, data, K, quantile, mle_gap, work, reach, mle_sol, start, max_iter,
              start_at_mle):
    """``(solution, last pass)``: :func:`lower_bound_of`'s solution, the method run in the
    coordinates of ``frame`` (:class:`~elcvx.fast.frames.BoundFrame`): the same dual, other
    roundings. The solution is reported in the user's coordinates."""
    lin = frame.lin()
    raw = BoundOracle(data, K, lin, work, floor=reach, frame=frame)
    oracle = memo(raw)
    B, floor = frame.rows(data)
    bound = dict(data=data, K=K, lin=lin, B=B, floor=floor, raw=raw, work=work,
                 quantile=quantile, mle_gap=mle_gap, frame=frame)
    return _bound_run(oracle, raw, bound, frame, data=data, quantile=quantile, work=work,
                      mle_sol=mle_sol, start=start, max_iter=max_iter,
                      start_at_mle=start_at_mle), raw.last


def _bound_run(oracle, raw, bound, frame, *, data, quantile, work, mle_sol, start, max_iter,
               start_at_mle):
    """:func:`_bound_in`'s method: the starts, the solve and its fallbacks."""
    B, floor, lin = bound["B"], bound["floor"], bound["lin"]
    if start is not None and max_iter == 0:
        # Another solver's point, as it is: the first of its candidates that is certified.
        out = None
        for y in _given_starts(B, floor, frame.from_user(start), oracle):
            out = _bound_read(y, oracle(y)[0], "optimal", **bound)
            if out.status == "optimal":
                break
        return out if out is not None else _bound_failure(data, work, "no feasible start")
    if start is not None:
        y = _given_start(B, floor, frame.from_user(start), oracle)
    elif mle_sol is not None and np.isfinite(mle_sol.beta):
        x_mle = np.array([mle_sol.beta, *mle_sol.lambdas])
        if frame.centred:  # (gamma' = gamma + beta + lambda . b = 1 exactly)
            y0 = frame.from_centred(np.concatenate(([1.0], x_mle)))
        else:
            y0 = np.concatenate(([1.0 - x_mle[0] - x_mle[1:] @ data.b], x_mle))
        y = _quadratic_start(data, x_mle, quantile, B, floor, y0, oracle, work, start_at_mle,
                             frame.centred, frame.from_centred if frame.centred else None)
    else:
        y = _start(B, floor, frame.from_user(np.r_[1.0, 0.0, np.zeros(data.k)]), oracle)
    if y is None:
        return _bound_failure(data, work, "no feasible start")

    # In centred coordinates, a constraint every distribution meets to rounding
    # (:func:`_null_features`) has a feature of 0 but for its last bits: its lambda is held at 0.
    null = ([1 + j for j in _null_features(data, data.bound_rows(True)[0][:, 1:])]
            if frame.centred and frame.T is None else [])

    def solved(y):
        # (A value on the unit scale: 1e-15 is below every digit reported, and ends the
        # approach to a bound of 0 reached only as y -> 0.)
        if null:
            sub, keep, embed = _held_at_zero(oracle, null, len(y))
            yr = _start(B[:, keep], floor, y[keep], sub, anchor=y[keep])
            if yr is None:
                return (y, math.nan, "no feasible start"), _bound_failure(data, work,
                                                                          "no feasible start")
            yr, f, status = _solve(sub, yr, B[:, keep], floor, max_iter, gap_tol=1e-15,
                                   lin=lin[keep])
            return (embed(yr), f, status), _bound_read(embed(yr), f, status, **bound)
        y, f, status = _solve(oracle, y, B, floor, max_iter, gap_tol=1e-15, lin=lin)
        out = _bound_read(y, f, status, **bound)
        if status == "optimal" and out.status != "optimal":
            # As for the likelihood: the method's stopping rule was met, not the certificate's
            # (a dual nearly flat along a direction the likelihood constraint is not; a
            # gradient of 1e-12 at N = 1e7); Newton steps to the rounding floor, each certified.
            out = _polished(lambda y, st: _bound_read(y, oracle(y)[0], st, **bound), oracle, y,
                            B, floor, lin) or out
        return (y, f, status), out

    tried, out = solved(y)
    if out.status == "optimal":
        return out
    if max_iter == MAX_ITER:
        # As for the likelihood (:func:`_likelihood`): the barrier method, certified.
        yb, f, status = _barrier_from(oracle, B, floor, tried[0])
        for yb in _given_starts(B, floor, yb, oracle) if status == "optimal" else ():
            alt = _bound_read(yb, oracle(yb)[0], "optimal", **bound)
            if alt.status == "optimal":
                return alt
    # The fallbacks below come after the barrier's: where it certifies, its answer is the
    # closer (1e-9 of the range where these give 1e-7).
    points = [tried]
    if start is None and mle_sol is not None:
        # The start from the MLE's point is at its scale: with targets within 1e-5 of the
        # feasible set's edge, |y| = 4e4 on a vertex of the atoms' faces, where the method
        # stalls in f's rounding. Again from the plain start (the cost of a failure only).
        plain = _start(B, floor, frame.from_user(np.r_[1.0, 0.0, np.zeros(data.k)]), oracle)
        if plain is not None:
            again, alt = solved(plain)
            if alt.status == "optimal":
                return alt
            points.append(again)
    for yv, _, status in points:
        # A dual nearly flat along its faces (a constraint nearly redundant), rising along the
        # valley by 1e-9 up to a face the method did not reach: from there.
        down = along_the_valley(oracle, yv, B, floor) if status == "optimal" else None
        if down is not None:
            _, alt = solved(down)
            if alt.status == "optimal":
                return alt
    for yv, fv, status in points:
        # The method stalled (a dual linear on one row: no curvature to go by) where the
        # certificate, which judges the point and not the iteration, accepts it.
        alt = _bound_read(yv, fv, "optimal", **bound) if status != "optimal" else None
        if alt is not None and alt.status == "optimal":
            return alt
    return out


def _bound_failure(data, work, why):
    nan = math.nan
    return BoundSolution(nan, nan, nan, nan, _nans(data), why, work=work.counts())


def _bound_read(y, f, status, *, data, K, lin, B, floor, raw, work, quantile, mle_gap, frame):
    """The bound's solution at ``y`` (dual value ``f``) from the oracle's pass there (one more
    where its last was at another point), certified (:func:`elcvx.certify.bound`); its ``q``
    is computed on its first read."""
    n = data.n
    if raw.last is None or not np.array_equal(raw.last.y, y):
        raw(y)  # the certificate's sums are read from the last evaluation
    last = raw.last
    kappa = last.kg / n
    q = (OnRead(functools.partial(bound_q, data, last.y, kappa, frame)) if data.in_memory
         else None)
    sums = last.sums
    # E_Q[1], E_Q[w], E_Q[g] on the rows (q = kappa / a)
    cq = kappa * sums.total * frame.means_to_user(sums.mean)
    lo, hi = data.value_range
    cert = certify.bound(n, data.c_min, B, floor, y, sums, K, lin, quantile, mle_gap, hi - lo)
    if status == "optimal" and not cert.certified:
        status = f"not certified ({cert.reason})"
    user = frame.to_user(y)
    return BoundSolution(value=float(f), beta=float(user[1]), gamma=float(user[0]),
                         kappa=float(kappa), q=q, status=status, work=work.counts(),
                         lambdas=tuple(float(t) for t in user[2:]),
                         sums=(float(cq[0]), float(cq[1])), error=cert.error)


def _within_reach_of_zero(data, K_mean_h, K, lin, B, floor):
    """Whether the bound is 0 to within 1e-13 (a ball so wide that ``K`` underflows): with
    ``h >= 0`` everywhere the bound is at least 0, and by AM-GM (``geomean <= mean``) the dual
    objective is at most ``K mean(h) + (K mean(F) - lin) . y``; where that slope is
    non-positive on the whole cone ``B y >= 0`` (it is ``-B' mu`` for some ``mu >= 0``:
    Farkas), the bound is at most ``K mean(h)`` (``K_mean_h``). The dual's supremum would
    otherwise be approached only as ``y -> 0``, one halving at a time."""
    if np.any(floor) or not data.nonnegative or not K_mean_h <= 1e-13:
        return False
    slope = K * np.r_[1.0, data.stats().sum_F / data.n] - lin
    if not np.all(np.isfinite(slope)):
        return False
    top = float(np.abs(slope).max())
    if top == 0.0:
        return True
    _, off = nnls(B.T, -slope / top)
    return off <= 1e-12
