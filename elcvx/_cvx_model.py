"""The cvxpy path for moment-constrained models (:mod:`elcvx.constraints`).

Clarabel's own primal ``q`` and multipliers from the builders of :mod:`elcvx.programs` with
``constraints=``, certified together (primal feasibility and the duality gap), not polished:
this is the side of the cross-check against :mod:`elcvx._moment` that must be the solver's own
answer. Where Clarabel's own pair misses the certificate's tolerances (its accuracy, on some
large samples), its dual point is refined as :mod:`elcvx._cvx` refines every point, by at most
:data:`~elcvx._cvx.POLISH_ITER` iterations of the fast path's method, which must end
certified; the status then says ``"refined from Clarabel's point"``, and the tests' cross-checks
require its absence. Same contract and certificate tolerances as :mod:`elcvx._cvx`.
"""

from __future__ import annotations

import math

import numpy as np

from . import _moment
from . import programs as P
from ._cvx import FEAS_TOL, GAP_TOL, POLISH_ITER, Rejected, _checked, _fail, _scalar, _status
from ._solutions import BoundSolution, MLESolution, ProfileSolution
from .programs.base import BOUND_ATTEMPTS
from .errors import SolverError


def _model_point(program, k, extra=()):
    """The dual point ``(beta, lambda_1..k, extra...)`` from the primal's multipliers."""
    names = ["weight"] + [f"g{j}" for j in range(k)] + list(extra)
    values = [program.constraints[name].dual_value for name in names]
    if any(v is None for v in values):
        return None
    return np.array([_scalar(v) for v in values])


def _primal_violation(program):
    """The largest violation of the primal program's constraints at Clarabel's point."""
    return max(float(np.max(c.violation())) for c in program.problem.constraints)


def _certify_model(program, data, value, point, loglik_primal):
    """``(l, q)`` if Clarabel's primal (``q``, atom masses) and dual (``point``) agree, else a
    :class:`Rejected` reason. ``l`` is the dual likelihood ``sum c log(1 + D x)``; the primal's
    is ``-N log N - sum c log q``, which it bounds from above for feasible pairs (weak duality):
    their gap must be below ``GAP_TOL`` times ``max(N, |l|)``, and the primal's constraints
    must hold to :data:`FEAS_TOL` (the programs are scaled to rows of size one)."""
    if point is None:
        return Rejected("no dual point")
    D = data.features(value)
    with np.errstate(all="ignore"):
        a = 1.0 + D @ point
        if not np.all(a > 0):
            return Rejected("the dual point is outside the likelihood's domain")
        c = 1.0 if data.c is None else data.c
        l_dual = float(np.sum(c * np.log(a)))
    violation = _primal_violation(program)
    if not violation <= FEAS_TOL:
        return Rejected(f"the primal constraints are off by {violation:.2g}")
    gap = loglik_primal - l_dual
    if not abs(gap) <= GAP_TOL * max(data.n, abs(l_dual)):
        return Rejected(f"the duality gap is {gap:.2g}")
    return l_dual, program.variables["q"].value


REFINED = "refined from Clarabel's point"


def _or_refined(own, data, value, point):
    """Clarabel's own certified ``(l, q, point, notes)``; else, where it has a dual point, that
    point refined (:data:`REFINED`) and certified, or the original rejection."""
    if not isinstance(own, Rejected):
        return (*own, point, ())
    if point is None:
        return own
    if value is None:
        sol = _moment.mle_of(data, start=point, max_iter=POLISH_ITER)
        x = np.r_[sol.beta, sol.lambdas]
        loglik, q = sol.loglik, sol.q
    else:
        sol = _moment.profile_of(data, [value], starts=[point], max_iter=POLISH_ITER)
        x = np.r_[sol.beta[0], sol.tau[0]]  # (what the profile reports of the point)
        loglik, q = float(sol.loglik[0]), None
    if not sol.status.startswith("optimal"):
        return Rejected(f"{own}; refined from its dual point: {sol.status}")
    return loglik, q, x, (REFINED,)


def _solve_model(program, check, what, attempts=None, **parameters):
    found = {}
    try:
        program.solve(check=lambda p: _checked(found, check(p)), attempts=attempts, **parameters)
    except SolverError as exc:
        raise _fail(what, [exc]) from None
    return found["sol"]


def _primal_loglik(program, data):
    q = program.variables["q"].value
    c = 1.0 if data.c is None else data.c
    return -data.n * math.log(data.n) - float(np.sum(c * np.log(np.maximum(q, 1e-300))))


def model_mle(sample, constraints, atoms) -> MLESolution:
    """The constrained MLE from :func:`~elcvx.programs.mle_primal` with ``constraints``: its ``q``
    and its multipliers (``beta``: ``weight``, ``lambda_j``: ``g{j}``), certified together."""
    data = _moment.Moments(sample, constraints, atoms)
    program = P.mle_primal(sample, constraints=constraints, atoms=atoms)

    def check(p):
        point = _model_point(p, data.k)
        own = _certify_model(p, data, None, point, _primal_loglik(p, data))
        return _or_refined(own, data, None, point)

    loglik, q, point, notes = _solve_model(program, check, "the constrained MLE")
    return MLESolution(beta=float(point[0]), loglik=loglik, q=np.asarray(q, dtype=float),
                       status=_status("primal", ("primal",), program, notes=notes),
                       lambdas=tuple(float(t) for t in point[1:]))


def model_profile(sample, constraints, atoms, v) -> ProfileSolution:
    """``l_v`` of the constrained profile (:func:`~elcvx.programs.profile_primal`) for each
    ``v`` strictly inside ``(0, 1)`` (``inf`` elsewhere), certified like :func:`model_mle`."""
    data = _moment.Moments(sample, constraints, atoms)
    v = np.atleast_1d(np.asarray(v, dtype=float))
    out = [np.full(v.shape, np.inf), np.full(v.shape, np.nan), np.full(v.shape, np.nan)]
    program = P.profile_primal(sample, constraints=constraints, atoms=atoms)
    statuses = set()
    for i, vi in enumerate(v):
        if not 0.0 < vi < 1.0:
            continue
        def check(p, vi=vi):
            point = _model_point(p, data.k, ("value",))
            own = _certify_model(p, data, vi, point, _primal_loglik(p, data))
            return _or_refined(own, data, vi, point)

        loglik, _, point, notes = _solve_model(program, check,
                                               f"the constrained profile at v = {vi!r}", v=float(vi))
        out[0][i], out[1][i], out[2][i] = loglik, point[0], point[-1]
        statuses.add(_status("primal", ("primal",), program, notes=notes))
    status = "optimal" if statuses <= {"optimal"} else ", ".join(sorted(statuses))
    return ProfileSolution(loglik=out[0], beta=out[1], tau=out[2], status=status)


def model_lower_bound(sample, constraints, atoms, loglik, quantile, side="lower",
                      value=None) -> BoundSolution:
    """The constrained lower bound from :func:`~elcvx.programs.lower_bound_primal`: Clarabel's
    ``q`` and value, certified by the dual objective ``K geomean_c(gamma + beta w + lambda . g +
    h) - gamma - beta - lambda . b`` at its multipliers (a lower bound on the optimum for any
    dual-feasible point, so primal minus dual is the gap). ``h = w u`` (``w (1 - u)`` for
    ``side="upper"``), or ``value = (h, h_lo, h_hi)`` as in :class:`elcvx._moment.Moments`."""
    data = _moment.Moments(sample, constraints, atoms, side=side, value=value)
    N = data.n
    phi = -N * math.log(N) - float(loglik) - float(quantile) / 2.0
    program = P.lower_bound_primal(sample, side=side, constraints=constraints, atoms=atoms,
                                   value=None if value is None else (data.h, data.h_lo))
    B, floor = _moment._bound_rows(data.atoms, data.h_lo)

    def check(p):
        names = ["mass", "weight"] + [f"g{j}" for j in range(data.k)]
        values = [p.constraints[name].dual_value for name in names]
        if any(x is None for x in values):
            return Rejected("no dual point")
        y = np.array([_scalar(x) for x in values])
        own = own_check(p, y)
        if not isinstance(own, Rejected):
            kappa = _scalar(p.constraints["loglik"].dual_value) / N
            return (*own, np.asarray(p.variables["q"].value, dtype=float), kappa, ())
        # phi = -N log N - l* - quantile/2: the same K as l = -N log N - phi with no quantile.
        sol = _moment.lower_bound_of(data, -N * math.log(N) - phi, 0.0, start=np.r_[y],
                                     max_iter=POLISH_ITER)
        if not sol.status.startswith("optimal"):
            return Rejected(f"{own}; refined from its dual point: {sol.status}")
        return (sol.value, np.r_[sol.gamma, sol.beta, sol.lambdas], sol.q, sol.kappa,
                (REFINED,))

    def own_check(p, y):
        """Clarabel's own pair: ``(value, y)`` if certified, else a :class:`Rejected` reason."""
        if not np.all(B @ y + floor >= -FEAS_TOL):
            return Rejected("an atom's dual constraint is violated")
        with np.errstate(all="ignore"):
            a = np.column_stack([np.ones_like(data.w), data.w, data.G]) @ y + data.h
            if not np.all(a > 0):
                return Rejected("the dual point is outside the domain")
            c = 1.0 if data.c is None else data.c
            dual = math.exp(phi / N + math.log(N) + float(np.sum(c * np.log(a))) / N) \
                - y @ np.r_[1.0, 1.0, data.b]
        primal = float(p.problem.value)
        violation = _primal_violation(p)
        if not violation <= FEAS_TOL:
            return Rejected(f"the primal constraints are off by {violation:.2g}")
        if not abs(primal - dual) <= GAP_TOL * max(1.0, abs(primal)):
            return Rejected(f"the duality gap is {primal - dual:.2g}")
        return primal, y

    value, y, q, kappa, notes = _solve_model(program, check, f"the constrained {side} bound",
                                             attempts=BOUND_ATTEMPTS, phi=phi)
    return BoundSolution(value=value, beta=float(y[1]), gamma=float(y[0]), kappa=kappa, q=q,
                         status=_status("primal", ("primal",), program, notes=notes),
                         lambdas=tuple(float(t) for t in y[2:]))
