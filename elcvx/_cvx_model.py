"""The cvxpy path for moment-constrained models (:mod:`elcvx.constraints`).

Clarabel's own primal ``q`` and multipliers from the builders of :mod:`elcvx.programs` with
``constraints=``, certified together (primal feasibility and the duality gap), not polished:
this is the side of the cross-check against :mod:`elcvx._moment` that must be the solver's own
answer. Same contract and certificate tolerances as :mod:`elcvx._cvx`.
"""

from __future__ import annotations

import math

import numpy as np

from . import _moment
from . import programs as P
from ._cvx import FEAS_TOL, GAP_TOL, Rejected, _checked, _fail, _scalar, _status
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
    sol = _solve_model(program, lambda p: _certify_model(
        p, data, None, _model_point(p, data.k), _primal_loglik(p, data)), "the constrained MLE")
    point = _model_point(program, data.k)
    loglik, q = sol
    return MLESolution(beta=float(point[0]), loglik=loglik, q=np.asarray(q, dtype=float),
                       status=_status("primal", ("primal",), program),
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
        loglik, _ = _solve_model(program, lambda p, vi=vi: _certify_model(
            p, data, vi, _model_point(p, data.k, ("value",)), _primal_loglik(p, data)),
            f"the constrained profile at v = {vi!r}", v=float(vi))
        point = _model_point(program, data.k, ("value",))
        out[0][i], out[1][i], out[2][i] = loglik, point[0], point[-1]
        statuses.add(_status("primal", ("primal",), program))
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

    value, y = _solve_model(program, check, f"the constrained {side} bound",
                            attempts=BOUND_ATTEMPTS, phi=phi)
    kappa = _scalar(program.constraints["loglik"].dual_value) / N
    return BoundSolution(value=value, beta=float(y[1]), gamma=float(y[0]), kappa=kappa,
                         q=np.asarray(program.variables["q"].value, dtype=float),
                         status=_status("primal", ("primal",), program),
                         lambdas=tuple(float(t) for t in y[2:]))
