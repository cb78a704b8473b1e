"""The fast path's three programs (numpy only): the MLE, the profile likelihood at ``v`` and
the bound (its own module, :mod:`elcvx.fast.bound`), with any number of moment constraints (:mod:`elcvx.constraints`) or none (the
paper's), each solved on its low-dimensional dual and certified.

Each dual has a few variables (``1 + k`` for the estimate, ``2 + k`` for the profile and the
bound, with ``k`` constraints) and one linear constraint per extra atom. The active-set Newton
method of :mod:`elcvx.fast.active_set` solves it: Newton steps on the face of the atoms'
constraints that hold at equality, each one pass over the rows (value, gradient, Hessian and the
size of the objective's terms together: :mod:`elcvx.passes.objectives`), a handful of passes in
all. The optimum usually sits on some atoms' constraints (an atom carrying mass), which an
active-set method lands on exactly. The MLE with one feature starts from the root of its
gradient's series, the bound from the profile's quadratic approximation at the MLE, from sums of
the MLE's own passes (:mod:`elcvx.fast.starts`). Where the method stalls (a dual degenerate in
ways its working set does not see) the barrier method of :mod:`elcvx.fast.barrier` takes over;
where an MLE is still not certified (a target at the edge of what the constraints allow), it
is solved again with its features decorrelated (:func:`_decorrelated`).

Every answer is then **certified** from the last pass, independently of the iteration, by
:mod:`elcvx.verdict` (with :mod:`elcvx.certify`): the error of what the user reads (the
estimate, the bound, the likelihood) is bounded from an exactly feasible primal point built
next to the dual one, and the status is ``"optimal"`` only where that bound is within the
promised tolerance. The cvxpy path hands Clarabel's dual points to the same verdict
(:mod:`elcvx.cvx`); ``max_iter=0`` here does the same with another solver's point.

The programs are those of :mod:`elcvx.programs`: the MLE (``mle_dual``), the profile
(``profile_dual``) and the bound (``lower_bound_dual``), with the constraints' terms.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import at_the_edge, model_of
from ..solutions import MLESolution, ProfileSolution
from . import barrier
from ..status import OPTIMAL, Status
from .active_set import MAX_ITER, maximize
from ..passes.frames import decorrelating
from ..passes.objectives import LikelihoodOracle, Work, likelihood_q, memo
from .starts import _given_start, _interior_point, _onto_faces, _series_start, _start
from ..verdict import (AtTheMLE, Solved, given_starts, inside, likelihood_at, mle_at, mle_solution,
                       read_likelihood)


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
        return x, oracle(x)[0], OPTIMAL
    flat = (lambda d: 0.0) if lin is None else (lambda d: -float(lin @ d))
    out = maximize(oracle, x, A, h, kkt_tol=_KKT_TOL if kkt_tol is None else kkt_tol,
                   gap_tol=gap_tol, max_iter=max_iter, flat_slope=flat, polish=polish)
    moved = inside(A, h, out.x)
    if moved is not out.x:
        f = oracle(moved)[0]
        if math.isfinite(f):
            return moved, f, out.status
    return out.x, out.f, out.status


# The active-set method polishes the gradient (the primal q it gives) to this KKT residual; and
# where the certificate asks for more, to the rounding floor, in at most _POLISH_ITER steps.
_KKT_TOL = 1e-11


_POLISH_ITER = 4


def _polished(read, oracle, x, A, h, lin=None):
    """The certified solution (``read(x, OPTIMAL)``) after Newton steps towards the rounding
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
        if status.outcome != "polished":
            break
        out = read(x, OPTIMAL)
        if out.status.optimal:
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
    if start is not None and max_iter == 0:
        return mle_at(data, start)
    work = Work()
    A, h = data.atom_rows()
    x0 = np.zeros(A.shape[1]) if start is None else start
    return mle_solution(data, _likelihood(data, None, A, h, x0, work, max_iter,
                                          start is not None), work)


def _likelihood(data, value, A, h, x0, work, max_iter=MAX_ITER, given=False,
                mix=True) -> Solved:
    """``l = max sum c log(1 + D x)`` subject to ``A x + h >=
    0`` from near ``x0`` (``given``: from ``x0`` itself, see :func:`_given_start`), ``q = 1 /
    (N (1 + D x))`` (None for a model whose rows are not in memory, or a profile), certified
    (:func:`elcvx.certify.likelihood`; ``cert`` None without a feasible start);
    ``sums = (sum c q, sum c q w, sum c q h, AtTheMLE)`` for the MLE (``value`` None); ``x`` is
    None without a feasible start. ``D``: the model's features, with ``h - value`` last when
    ``value`` is given. ``q``, ``l`` and the certificate's sums are those of the last pass,
    at ``x`` (one more pass where that was another point)."""
    if given and max_iter == 0:
        # Another solver's point, as it is (:mod:`elcvx.verdict`).
        return likelihood_at(data, value, A, h, x0, work)
    raw = LikelihoodOracle(data, work, value)
    oracle = memo(raw)
    if given:
        x = _given_start(A, h, x0, oracle)
    else:
        # (Where x0 is outside the domain, the segment from the origin, where every term is 0.)
        x = _start(A, h, x0, oracle, anchor=np.zeros_like(x0))
        if x is not None and not x.any() and raw.origin is not None and len(x) == 1:
            x = _series_start(oracle, raw, A, h, x)
    if x is None:
        why = Status("no feasible start", "the point given" if given else "")
        return Solved(None, None, math.nan, why)
    x, _, status = _solve(oracle, x, A, h, max_iter)
    out = read_likelihood(data, value, A, h, x, raw, status)
    if (status.optimal and not out.status.optimal and out.cert is not None
            and out.cert.masses is not None):
        # The method's KKT tolerance was met, not the certificate's: where a constraint is nearly
        # redundant (a column within 1e-7 of w - 1), a gradient of 1e-12 is a large correction.
        # Newton steps to the rounding floor, each certified.
        out = _polished(lambda x, st: read_likelihood(data, value, A, h, x, raw, st), oracle, x, A, h) or out
    if not out.status.optimal and out.cert is not None and out.cert.certified:
        # A point whose faces are met to the ulps of |x| = 5e4 only (targets near the
        # feasible set's edge): a slack of 1e-12 at an atom carrying mass is a gap of N mu s.
        on = _onto_faces(A, h, out.x)
        if on is not out.x:
            alt = read_likelihood(data, value, A, h, on, raw, OPTIMAL)
            if alt.status.optimal:
                return alt
    if not out.status.optimal:
        # The active-set method stalled (a degenerate dual it does not see): the barrier
        # method from a strictly feasible point near where it stopped, certified on the faces
        # its end approaches.
        x, f, status = _barrier_from(oracle, A, h, out.x)
        for x in given_starts(A, h, x, oracle) if status.optimal else ():
            alt = read_likelihood(data, value, A, h, x, raw, OPTIMAL)
            if alt.status.optimal:
                return alt
        null = _null_features(data, A)
        if null:
            alt = _without(null, data, value, A, h, raw, oracle, max_iter)
            if alt is not None and alt.status.optimal:
                return alt
        if status.outcome == "unbounded":
            return Solved(None, None, math.nan, _UNBOUNDED)
        if mix and value is None:
            alt = _decorrelated(data, out.x, work, max_iter)
            if alt is not None:
                return alt
    return out


def _decorrelated(data, x, work, max_iter):
    """The MLE solved again with the model's features decorrelated under the weights ``c q^2``
    at ``x`` (:func:`elcvx.passes.frames.decorrelating`, :meth:`elcvx.model.Moments.mixed`), its
    dual point read back in the user's coordinates; None where that is not certified either.

    At a target within 1e-5 of the edge of what the constraints allow, the rows that carry the
    mass and the atom that does nearly share one direction of ``(w - 1, g - b)``: ``beta`` and
    ``lambda`` reach 6e5 with opposite signs, the atom's slack cannot be computed below 1e-10
    (the ulps of those terms), and its gap ``N mu s`` leaves the estimate's error bound at
    1e-5. In the mixed features the terms no longer cancel. A policy's value with rows in
    memory only (a difference's ``estimate_coef`` reads the features as they are)."""
    if x is None or not (data.in_memory and data.k and len(data.estimate_coef) <= 2):
        return None
    q = likelihood_q(data, x)
    if not np.all(np.isfinite(q)):
        return None
    D = data.Dt
    T = decorrelating((D * ((1.0 if data.c is None else data.c) * q * q)) @ D.T)
    if T is None:
        return None
    mixed = data.mixed(T)
    A, h = mixed.atom_rows()
    out = _likelihood(mixed, None, A, h, np.zeros(len(T)), work, max_iter, mix=False)
    if not out.status.optimal:
        return None
    # (The sums the bounds would reuse, AtTheMLE, are the mixed features': left out.)
    return out._replace(x=T @ out.x, sums=out.sums[:3] + (None,))


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
    return read_likelihood(data, value, A, h, embed(xr), raw, status)


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


#: The status of a model whose dual grows without bound: its primal is infeasible.
_UNBOUNDED = Status("infeasible", "the dual grows without bound: no distribution with every "
                    "logged row kept meets the moment constraints")


def _barrier_from(oracle, A, h, x):
    """``(x, f, status)``: :func:`elcvx.fast.barrier.maximize` from a strictly feasible point near
    ``x`` (an LP's, moved towards ``x`` while it stays so and in the oracle's domain)."""
    center = np.zeros(A.shape[1]) if x is None else np.asarray(x, dtype=float)
    p = _interior_point(A, h, center)
    if p is None or not math.isfinite(oracle(p)[0]):
        return center, math.nan, Status("no strictly feasible start")
    for t in (0.999, 0.99, 0.9, 0.5, 0.0):
        trial = p + t * (center - p)
        if np.all(A @ trial + h > 0) and math.isfinite(oracle(trial)[0]):
            break
    return barrier.maximize(oracle, trial, A, h)


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
            assert out.cert is not None  # (certified wherever there is a point)
            gaps[i] = out.cert.gap
    status = Status.merged(statuses)
    return ProfileSolution(loglik=out_l, beta=out_b, tau=out_t, status=status, work=work.counts(),
                           gap=gaps)
