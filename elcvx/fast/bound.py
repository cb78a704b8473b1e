"""The fast path's bound (:func:`lower_bound`): ``min E_Q[h]`` over the likelihood ball, with
any number of moment constraints, on its dual ``(gamma, beta, lambda)``, certified
(:func:`elcvx.certify.bound`).

The method and its fallbacks are those of the likelihood programs (:mod:`elcvx.fast.solve`):
the active-set Newton method from the profile's quadratic approximation at the MLE, certified
Newton steps to the rounding floor, the barrier method, again from the plain start, along a
flat valley. Where none is certified in the user's coordinates, the dual is solved again in
other coordinates (:mod:`elcvx.passes.frames`): the same dual, other roundings.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import nnls

from .. import certify
from ..model import model_of
from ..solutions import BoundSolution
from .active_set import MAX_ITER, along_the_valley
from ..passes.frames import BoundFrame
from ..passes.objectives import BoundOracle, Work, memo
from .solve import _at_the_mle, _barrier_from, _held_at_zero, _null_features, _polished, _solve
from ..status import OPTIMAL, Status
from .starts import _given_start, _quadratic_start, _start
from ..verdict import bound_failure, bound_given, given_starts, read_bound


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
        return BoundSolution(0.0, 0.0, 0.0, 0.0, mle_sol.q_field,
                             Status("optimal", "h = 0 everywhere"),
                             work=work.counts(), sums=mle_sol.sums[:2], error=0.0)
    if mle_sol is not None and _within_reach_of_zero(data, K * total / n, K, lin, B, floor):
        return BoundSolution(0.0, 0.0, 0.0, 0.0, mle_sol.q_field,
                             Status("optimal", "bound within 1e-13 of 0"),
                             work=work.counts(), sums=mle_sol.sums[:2], error=1e-13)
    given = dict(data=data, K=K, quantile=quantile, mle_gap=mle_gap, work=work, reach=reach,
                 mle_sol=mle_sol, start=start, max_iter=max_iter, start_at_mle=start_at_mle,
                 top=_value_top(data, mle_sol) if carried is not None else math.inf)
    out, _ = _bound_in(BoundFrame(False, data.b), **given)
    if not out.status.optimal and max_iter:
        # At a target within 1e-4 of the feasible set's edge, |lambda| = 1e5: in the user's
        # coordinates gamma + lambda . g cancels to a's last digits, and the method stalls or
        # its point is not certified. Again in centred ones, then in centred ones decorrelated
        # at the point where that stopped (:mod:`elcvx.passes.frames`; a failure's cost only).
        alt, last = _bound_in(BoundFrame(True, data.b), **given)
        if alt.status.optimal:
            return alt
        mixed = None if last is None else BoundFrame.decorrelated(data.b, last.sums)
        if mixed is not None:
            alt, _ = _bound_in(mixed, **given)
            if alt.status.optimal:
                return alt
    return out


def _bound_in(frame, *, data, K, quantile, mle_gap, work, reach, mle_sol, start, max_iter,
              start_at_mle, top):
    """``(solution, last pass)``: :func:`lower_bound_of`'s solution, the method run in the
    coordinates of ``frame`` (:class:`~elcvx.passes.frames.BoundFrame`): the same dual, other
    roundings. The solution is reported in the user's coordinates."""
    lin = frame.lin()
    raw = BoundOracle(data, K, lin, work, floor=reach, frame=frame)
    oracle = memo(raw)
    B, floor = frame.rows(data)
    bound = dict(data=data, K=K, lin=lin, B=B, floor=floor, raw=raw, work=work,
                 quantile=quantile, mle_gap=mle_gap, frame=frame, top=top)
    return _bound_run(oracle, raw, bound, frame, data=data, quantile=quantile, work=work,
                      mle_sol=mle_sol, start=start, max_iter=max_iter,
                      start_at_mle=start_at_mle), raw.last


def _bound_run(oracle, raw, bound, frame, *, data, quantile, work, mle_sol, start, max_iter,
               start_at_mle):
    """:func:`_bound_in`'s method: the starts, the solve and its fallbacks."""
    B, floor, lin = bound["B"], bound["floor"], bound["lin"]
    if start is not None and max_iter == 0:
        return bound_given(oracle, start, bound)  # another solver's point, as it is
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
        return bound_failure(data, work, "no feasible start")

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
                return (y, math.nan, Status("no feasible start")), bound_failure(
                    data, work, "no feasible start")
            yr, f, status = _solve(sub, yr, B[:, keep], floor, max_iter, gap_tol=1e-15,
                                   lin=lin[keep])
            return (embed(yr), f, status), read_bound(embed(yr), f, status, **bound)
        y, f, status = _solve(oracle, y, B, floor, max_iter, gap_tol=1e-15, lin=lin)
        out = read_bound(y, f, status, **bound)
        if status.optimal and not out.status.optimal:
            # As for the likelihood: the method's stopping rule was met, not the certificate's
            # (a dual nearly flat along a direction the likelihood constraint is not; a
            # gradient of 1e-12 at N = 1e7); Newton steps to the rounding floor, each certified.
            out = _polished(lambda y, st: read_bound(y, oracle(y)[0], st, **bound), oracle, y,
                            B, floor, lin) or out
        return (y, f, status), out

    tried, out = solved(y)
    if out.status.optimal:
        return out
    if max_iter == MAX_ITER:
        # As for the likelihood (:func:`_likelihood`): the barrier method, certified.
        yb, f, status = _barrier_from(oracle, B, floor, tried[0])
        for yb in given_starts(B, floor, yb, oracle) if status.optimal else ():
            alt = read_bound(yb, oracle(yb)[0], OPTIMAL, **bound)
            if alt.status.optimal:
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
            if alt.status.optimal:
                return alt
            points.append(again)
    for yv, _, status in points:
        # A dual nearly flat along its faces (a constraint nearly redundant), rising along the
        # valley by 1e-9 up to a face the method did not reach: from there.
        down = along_the_valley(oracle, yv, B, floor) if status.optimal else None
        if down is not None:
            _, alt = solved(down)
            if alt.status.optimal:
                return alt
    for yv, fv, status in points:
        # The method stalled (a dual linear on one row: no curvature to go by) where the
        # certificate, which judges the point and not the iteration, accepts it.
        alt = read_bound(yv, fv, OPTIMAL, **bound) if not status.optimal else None
        if alt is not None and alt.status.optimal:
            return alt
    return out


def _value_top(data, mle_sol):
    """An upper bound on ``E_Q*[h]`` at the true MLE ``Q*`` of a policy's value (``mle_sol``,
    of these rows: :func:`_at_the_mle`), for the certificate's mixing: the rows' part of the
    estimate (its atoms at ``h = 0``) plus its certified error, which holds for any ``rho``
    (``w u`` on the lower side, ``w (1 - u)`` on the upper), and the sums' rounding; inf where
    the estimate is not certified."""
    error = mle_sol.error
    # (Plainly optimal: an MLE that needed a fallback, Clarabel's qualified answer, gives no top.)
    if not (mle_sol.status == OPTIMAL and math.isfinite(error) and len(mle_sol.sums) >= 3
            and mle_sol.sums[2] is not None):
        return math.inf
    _, wq, value = mle_sol.sums[:3]
    rows = wq - value if data.side == "upper" else value
    return float(rows) + float(error) + certify.ROUNDING


def _within_reach_of_zero(data, K_mean_h, K, lin, B, floor):
    """Whether the bound is 0 to within 1e-13 (a ball so wide that ``K`` underflows): with
    ``h >= 0`` everywhere the bound is at least 0, and by AM-GM (``geomean <= mean``) the dual
    objective is at most ``K mean(h) + (K mean(F) - lin) . y``; where that slope is
    non-positive on the whole cone ``B y >= 0`` (it is ``-B' mu`` for some ``mu >= 0``:
    Farkas), the bound is at most ``K mean(h)`` (``K_mean_h``). The dual's supremum would
    otherwise be approached only as ``y -> 0``, one halving at a time."""
    if not K_mean_h <= 1e-13 or np.any(floor) or not data.nonnegative:  # (the cheapest first)
        return False
    slope = K * np.r_[1.0, data.stats().sum_F / data.n] - lin
    if not np.all(np.isfinite(slope)):
        return False
    top = float(np.abs(slope).max())
    if top == 0.0:
        return True
    _, off = nnls(B.T, -slope / top)
    return off <= 1e-12
