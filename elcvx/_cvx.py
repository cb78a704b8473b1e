r"""The cvxpy path: the EL computations as cvxpy programs solved by Clarabel, with certificates.

Same contract as the fast path (:mod:`elcvx._moment`): rewards rescaled to ``[0, 1]`` (``u``),
counts ``c``, ``N = sum(c)``, and the tuples of :mod:`elcvx._solutions`.

How a number is produced
------------------------
1. The formulation tried first (below) is solved by :meth:`Program.solve`, which walks
   through Clarabel settings in a documented order
   (:data:`elcvx.programs.base.REFINED_ATTEMPTS`: tolerances of 1e-6, which the refinement
   below completes; then tight tolerances; shorter steps; shorter steps still with tolerances
   of 1e-8).
2. No status is taken on trust. The low-dimensional dual point is read off the solution (the
   dual program's variables, or the primal's constraint multipliers), must lie on the dual's
   feasible set (up to 1e-7 of a constraint's size), and is refined by at most
   :data:`POLISH_ITER` iterations of the fast path's own active-set method started there (the
   solver's argmax is accurate to only about 1e-6), which must end **certified** in numpy from
   the closed forms: the primal weights ``q`` implied by the dual point, with nonnegative
   masses on the extra atoms, must satisfy the primal constraints to :data:`FEAS_TOL`, and
   (lower bound) the primal objective at that ``q`` must equal the dual objective to
   :data:`GAP_TOL`. The two paths thus share the certificate and the refinement, so their
   agreement alone does not show that a program is declared right:
   tests/test_clarabel_unpolished.py compares Clarabel's own objective with the fast path's. A solution that fails is a failed attempt, even
   when Clarabel says ``optimal`` (it was measured doing so with errors near 1e-3, and with
   ``|beta| ~ 1e13`` on an unbounded profile dual); a solution that passes is accepted even when
   Clarabel stopped at ``optimal_inaccurate`` or "insufficient progress" (its last iterate),
   and the status says so.
3. If every attempt on the primary formulation fails, the other formulation is tried the same
   way; for the lower bound, then the left root of ``2 (l_v - l*_mle) = quantile`` on
   :func:`profile` (Brent's method), converted to the bound's dual and certified. If all fail,
   :class:`~elcvx.SolverError` names Clarabel and the last status.
4. The reported numbers are the closed forms at the certified dual point: ``l*_mle`` and
   ``l_v`` are the dual objectives, ``v_lb`` is the dual objective with ``kappa`` at its
   optimum given ``(beta, gamma)`` (a lower bound on the optimum by weak duality, equal to it
   within the certificate), and ``q`` are the paper's primal-dual relations.

Which formulation is tried first
--------------------------------
The MLE and the profile take their primal first (:func:`~elcvx.programs.mle_primal`,
:func:`~elcvx.programs.profile_primal`), the lower bound its dual
(:func:`~elcvx.programs.lower_bound_dual`) with the shorter steps of
:data:`elcvx.programs.base.REFINED_BOUND_ATTEMPTS` first. The order was chosen by measuring how
often a single Clarabel solve of each formulation fails on random samples; the documentation's
performance page has that table, which ``benchmarks/bench_formulations.py`` regenerates. The
bound's two formulations take turns at each setting (dual, then primal, then the next setting),
so that one failing at every setting does not hold up the other.

The lower bound's program is hard for Clarabel whatever the scaling (its step length
collapses mid-way); shorter steps rescue most cases, the primal and the profile root the rest.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from . import _moment
from . import programs as P
from ._passes import FEAS_TOL, GAP_TOL
from ._solutions import BoundSolution, MLESolution, ProfileSolution
from .errors import SolverError
from .programs.base import REFINED_ATTEMPTS, REFINED_BOUND_ATTEMPTS
from .programs.base import sample_data as _data

# Iterations of the fast path's active-set method from Clarabel's dual point: they refine it (an
# interior-point solver's argmax of these flat duals is accurate to about 1e-6, two or three
# Newton steps make it accurate to rounding); the certificate that ends them decides.
POLISH_ITER = 8

# Formulation order per computation (the one tried first, first): chosen by measurement, see the
# module docstring.
MLE_ORDER = ("primal", "dual")
PROFILE_ORDER = ("primal", "dual")
LOWER_BOUND_ORDER = ("dual", "primal")


class Rejected(str):
    """What a certificate returns instead of a solution: the reason it failed (shown in the
    :class:`~elcvx.SolverError` when every attempt fails)."""


def _checked(found, certificate):
    """Store a certificate's outcome in ``found["sol"]``; the check's answer for
    :meth:`~elcvx.programs.base.Program.solve` (``True``, or the reason for rejecting)."""
    found["sol"] = certificate
    return certificate if isinstance(certificate, Rejected) else True


def _fail(what, errors):
    last = errors[-1] if errors else None
    status = getattr(last, "status", "not solved")
    detail = "; ".join(str(e) for e in errors)
    return SolverError(f"the cvxpy path could not solve {what}: {detail}",
                       solver="CLARABEL", status=status)


# ------------------------------------------------------------------------------------------------
# MLE
# ------------------------------------------------------------------------------------------------
def _quietly(certificate):
    """Run a certificate with numpy's floating-point warnings off: overflow (weights near 1e308)
    yields inf or NaN, which every test below fails."""

    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return certificate(*args, **kwargs)

    run.__name__, run.__doc__ = certificate.__name__, certificate.__doc__
    return run


@_quietly
def certify_mle(beta, sample):
    """``(beta, l*_mle, q, status)`` if Clarabel's ``beta`` certifies the MLE, else a
    :class:`Rejected` reason (``status``: ``"optimal (bound)"`` where an extra atom carries mass).

    From ``beta`` (on the dual's feasible set up to rounding), at most :data:`POLISH_ITER`
    iterations of the fast path's active-set method (:func:`elcvx._moment.mle_of`) must end
    certified: ``q`` with nonnegative extra-atom masses meets the primal constraints to
    :data:`FEAS_TOL` at a point where no Newton step gains above rounding.
    """
    if beta is None or not np.isfinite(beta):
        return Rejected("no dual point")
    sol = _moment.mle_of(_moment.Moments(sample, ()), start=[beta], max_iter=POLISH_ITER)
    if not sol.status.startswith("optimal"):
        return Rejected(f"not certified from the solver's point ({sol.status})")
    return sol.beta, sol.loglik, sol.q, sol.status


def _shows_progress(label):
    """On a terminal, ``label ... 12 s`` on stderr while the decorated solve runs over a few
    seconds (:func:`elcvx.io.progress.stage`); ``label`` may be a function of the arguments."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            from .io.progress import stage

            with stage(label(*args, **kwargs) if callable(label) else label):
                return fn(*args, **kwargs)

        return run

    return wrap


@_shows_progress("elcvx: cvxpy path: the MLE")
def mle(sample) -> MLESolution:
    """``beta*``, ``l*_mle`` and ``q`` from :func:`~elcvx.programs.mle_primal` (``beta*`` is the
    multiplier of ``E_Q[w] = 1``), falling back to :func:`~elcvx.programs.mle_dual`; the point is
    refined and certified by :func:`certify_mle`.

    Raises :class:`~elcvx.SolverError` when neither formulation yields a certified solution.
    """
    readers = {
        "dual": (P.mle_dual, lambda p: p.variables["beta"].value),
        "primal": (P.mle_primal, lambda p: p.constraints["weight"].dual_value),
    }
    errors = []
    for form in MLE_ORDER:
        build, read = readers[form]
        program = build(sample)
        found = {}

        def check(p, read=read, found=found):
            return _checked(found, certify_mle(_scalar(read(p)), sample))

        try:
            program.solve(check=check, attempts=REFINED_ATTEMPTS)
        except SolverError as exc:
            errors.append(exc)
            continue
        beta, loglik, q, certified = found["sol"]
        notes = ["bound"] if certified == "optimal (bound)" else []
        return MLESolution(beta=beta, loglik=loglik, q=q,
                           status=_status(form, MLE_ORDER, program, notes=notes))
    raise _fail("the MLE", errors)


def _scalar(x):
    if x is None:
        return None
    return float(np.asarray(x, dtype=float).reshape(-1)[0])


def _status(form, order, program, settings_index=None, notes=()):
    """``"optimal"``, qualified by ``notes`` and the fallbacks that were needed to get there
    (``settings_index``: of the attempt that solved, when it is not the program's log's)."""
    notes = list(notes)
    if form != order[0]:
        notes.append(f"{form} formulation")
    index = program.log[-1][0] if settings_index is None and program.log else settings_index
    if index:
        notes.append(f"settings #{index}")
    if program.log and program.log[-1][1] != "optimal":
        notes.append(f"certified; Clarabel: {program.log[-1][1].replace(' (certified)', '')}")
    return "optimal" + (f" ({', '.join(notes)})" if notes else "")


# ------------------------------------------------------------------------------------------------
# Profile likelihood
# ------------------------------------------------------------------------------------------------
@_quietly
def certify_profile(beta, tau, v, sample):
    """``(l_v, beta, tau)`` if Clarabel's ``(beta, tau)`` certifies the profile dual at ``v``,
    else a :class:`Rejected` reason: as :func:`certify_mle`, by
    :func:`elcvx._moment.profile_of` from that point (``q`` and the corner atoms' masses meet
    ``E_Q[1] = E_Q[w] = 1`` and ``E_Q[w u] = v`` to :data:`FEAS_TOL`)."""
    if beta is None or tau is None or not (np.isfinite(beta) and np.isfinite(tau)):
        return Rejected("no dual point")
    if not 0.0 < v < 1.0:
        return Rejected(f"v = {v!r} is not inside (0, 1), where the dual has its optimum")
    sol = _moment.profile_of(_moment.Moments(sample, ()), [v], starts=[[beta, tau]],
                             max_iter=POLISH_ITER)
    if not sol.status.startswith("optimal"):
        return Rejected(f"not certified from the solver's point ({sol.status})")
    return float(sol.loglik[0]), float(sol.beta[0]), float(sol.tau[0])


def _profile_gap(program, sample, sol):
    """``sol`` if Clarabel's primal ``q`` confirms it, else a :class:`Rejected` reason.

    ``-N log N - sum c log q`` (primal) bounds ``l_v`` from above and the dual point's ``l``
    from below, so their gap bounds how far the dual point stops short. Where the dual is flat
    in ``beta`` (every weight within 1e-6 of 1) the decrement on the point's face can miss a
    shortfall of 1e-6 that the gap shows; the bound ``1e-9 max(N, |l|)`` is Clarabel's
    accuracy on the programs' averaged objective."""
    w, _, c, N, _, _ = _data(sample)
    q = program.variables["q"].value
    if q is None or not np.all(q > 0):
        return Rejected("no primal q")
    gap = -N * math.log(N) - float(c @ np.log(q)) - sol[0]
    if not abs(gap) <= 1e-9 * max(N, abs(sol[0])):
        return Rejected(f"the primal-dual gap is {gap:.2g}")
    return sol


@_shows_progress(lambda sample, v: f"elcvx: cvxpy path: the profile at {np.size(v)} values")
def profile(sample, v) -> ProfileSolution:
    """``l_v`` (and the dual ``beta``, ``tau``) for each ``v`` in a 1-d array, unit scale.

    :func:`~elcvx.programs.profile_primal` first (``beta``, ``tau`` are the multipliers of
    ``E_Q[w] = 1`` and ``E_Q[w u] = v``), :func:`~elcvx.programs.profile_dual` as fallback; each
    point certified by :func:`certify_profile`. One program per formulation is compiled and
    re-solved for every ``v`` (``v`` is a :class:`cvxpy.Parameter`). Where the primal is
    infeasible (``v`` outside ``[0, 1]``, or at
    an end the data exclude) ``l_v = inf`` and ``beta = tau = nan``, without a solve.
    """
    v = np.atleast_1d(np.asarray(v, dtype=float))
    if v.ndim != 1:
        raise ValueError("v must be a scalar or a 1-d array")
    out_l = np.full(v.shape, np.inf)
    out_b = np.full(v.shape, np.nan)
    out_t = np.full(v.shape, np.nan)
    builders = {"dual": P.profile_dual, "primal": P.profile_primal}
    readers = {
        "dual": lambda p: (p.variables["beta"].value, p.variables["tau"].value),
        "primal": lambda p: (p.constraints["weight"].dual_value, p.constraints["value"].dual_value),
    }
    programs = {}
    statuses = set()
    for i, vi in enumerate(v):
        if np.isnan(vi):
            raise ValueError(f"v[{i}] is NaN")
        if not 0.0 < vi < 1.0:
            if not _moment.at_the_edge(_moment.Moments(sample, ()), vi):
                continue  # no distribution on the sample and the atoms has E_Q[w u] = v
            # A feasible end: the data leave no w u (w (1 - u)) mass, so the MLE, whose free
            # atom can take that reward, meets E_Q[w u] = v: l_v = l*_mle (no program needed,
            # and its dual has no interior there).
            m = mle(sample)
            out_l[i], out_b[i], out_t[i] = m.loglik, m.beta, 0.0
            continue
        errors = []
        for form in PROFILE_ORDER:
            if form not in programs:
                programs[form] = builders[form](sample)
            program = programs[form]
            found = {}

            def check(p, form=form, found=found, vi=vi):
                b, t = readers[form](p)
                sol = certify_profile(_scalar(b), _scalar(t), vi, sample)
                if form == "primal" and not isinstance(sol, Rejected):
                    sol = _profile_gap(p, sample, sol)
                return _checked(found, sol)

            try:
                program.solve(check=check, attempts=REFINED_ATTEMPTS, v=float(vi))
            except SolverError as exc:
                errors.append(exc)
                continue
            out_l[i], out_b[i], out_t[i] = found["sol"]
            statuses.add(_status(form, PROFILE_ORDER, program))
            break
        else:
            raise _fail(f"the profile likelihood at v = {vi!r}", errors)
    status = "optimal" if statuses <= {"optimal"} else ", ".join(sorted(statuses))
    return ProfileSolution(loglik=out_l, beta=out_b, tau=out_t, status=status)


# ------------------------------------------------------------------------------------------------
# Lower bound
# ------------------------------------------------------------------------------------------------
@_quietly
def certify_lower_bound(beta, gamma, phi, sample, side="lower"):
    """``(v_lb, beta, gamma, kappa, q)`` if Clarabel's ``(beta, gamma)`` certifies the lower
    bound, else a :class:`Rejected` reason: as :func:`certify_mle`, by
    :func:`elcvx._moment.lower_bound_of` from that point on the dual with ``kappa``
    eliminated (``log(N kappa) = phi/N + log N + mean_c log a``); certified when ``q = kappa /
    a`` with nonnegative atom masses meets ``E_Q[1] = E_Q[w] = 1`` to :data:`FEAS_TOL` and the
    primal objective equals the dual one to :data:`GAP_TOL` ``* max(1, |v|)``.
    """
    if beta is None or gamma is None or not (np.isfinite(beta) and np.isfinite(gamma)):
        return Rejected("no dual point")
    # phi = -N log N - l* - quantile / 2: the same K = exp(-(l* + quantile/2)/N) as l = -N log
    # N - phi with no quantile.
    loglik = -sample.n * math.log(sample.n) - phi
    sol = _moment.lower_bound_of(_moment.Moments(sample, (), side=side), loglik, 0.0,
                                 start=[gamma, beta], max_iter=POLISH_ITER)
    if not sol.status.startswith("optimal"):
        return Rejected(f"not certified from the solver's point ({sol.status})")
    return sol.value, sol.beta, sol.gamma, sol.kappa, sol.q


@_shows_progress(lambda sample, side="lower", **_: f"elcvx: cvxpy path: the {side} bound")
def lower_bound(sample, *, loglik, quantile, side="lower") -> BoundSolution:
    """The lower end ``v_lb`` of the interval on the unit scale (of ``1 - u`` for ``side="upper"``).

    ``phi = -N log N - loglik - quantile / 2``. Solved by :func:`~elcvx.programs.lower_bound_dual`
    and :func:`~elcvx.programs.lower_bound_primal` in turn at each setting (see the module
    docstring), each solution certified (:func:`certify_lower_bound`); the profile root last.

    ``quantile = 0`` makes the likelihood ball the single MLE: the bound is then
    ``sum c q_mle w u`` and the multipliers are unbounded (``kappa = inf``, ``beta = gamma =
    nan``). ``quantile = inf`` makes the ball everything: the bound is 0, with zero multipliers.
    When every ``w u`` is 0 the bound is 0 (``q`` is then the MLE's, one of many optima).
    """
    w, u, c, N, wmin, wmax = _data(sample, side)
    quantile = float(quantile)
    if not quantile >= 0:
        raise ValueError(f"quantile={quantile!r} must be >= 0")
    if quantile == math.inf:
        return BoundSolution(value=0.0, beta=0.0, gamma=0.0, kappa=0.0, q=np.zeros_like(w),
                             status="optimal (quantile = inf)")
    if quantile == 0:
        m = mle(sample)
        return BoundSolution(value=float((c * w * u) @ m.q), beta=math.nan, gamma=math.nan,
                             kappa=math.inf, q=m.q, status="optimal (quantile = 0: the MLE)")
    if not np.any(w * u > 0):
        # Every E_Q[w u] is 0: so is the bound, and the dual optimum is the limit
        # beta = gamma = kappa = 0 (a = w u = 0 puts it on the edge of the exponential cone).
        m = mle(sample)
        return BoundSolution(value=0.0, beta=0.0, gamma=0.0, kappa=0.0, q=m.q,
                             status="optimal (every w u is 0)")
    phi = -N * math.log(N) - float(loglik) - quantile / 2.0
    builders = {"primal": P.lower_bound_primal, "dual": P.lower_bound_dual}
    readers = {
        "primal": lambda p: (p.constraints["weight"].dual_value, p.constraints["mass"].dual_value),
        "dual": lambda p: (p.variables["beta"].value, p.variables["gamma"].value),
    }
    errors = []
    programs = {}
    # Settings by settings, each formulation in turn: where one formulation fails at every
    # setting (seen at N = 1e5), the other is tried before the slower settings are.
    for index, settings in enumerate(REFINED_BOUND_ATTEMPTS):
        for form in LOWER_BOUND_ORDER:
            if form not in programs:
                programs[form] = builders[form](sample, side=side)
            program = programs[form]
            found = {}

            def check(p, form=form, found=found):
                b, g = readers[form](p)
                return _checked(found, certify_lower_bound(_scalar(b), _scalar(g), phi, sample,
                                                           side))

            try:
                program.solve(check=check, phi=phi, attempts=(settings,))
            except SolverError as exc:
                errors.append(exc)
                continue
            value, beta, gamma, kappa, q = found["sol"]
            return BoundSolution(value=value, beta=beta, gamma=gamma, kappa=kappa, q=q,
                                 status=_status(form, LOWER_BOUND_ORDER, program, index))
    try:
        sol = _lower_bound_by_profile(sample, loglik, quantile, phi, side)
    except SolverError as exc:
        errors.append(exc)
        sol = None
    if sol is not None:
        return sol
    raise _fail(f"the {side} bound", errors)


def _lower_bound_by_profile(sample, loglik, quantile, phi, side):
    """Last resort: the left root of ``2 (l_v - l*_mle) = quantile`` by Brent's method on
    :func:`profile`, converted to the lower-bound dual and certified.

    At the root the two programs share their primal ``q``: ``kappa / (gamma + beta w + w u) =
    1 / (N (1 + beta_v (w - 1) + tau_v (w u - v)))`` gives ``kappa = 1/(N tau_v)``,
    ``beta = beta_v / tau_v`` and ``gamma = (1 - beta_v - tau_v v) / tau_v``, which
    :func:`certify_lower_bound` refines and certifies. ``None`` if that fails.
    """
    from scipy.optimize import brentq

    if side == "upper":
        # (Clipped: rmax + rmin - rmin can round above rmax.)
        sample = sample.with_rewards(np.clip(sample.rmax + sample.rmin - sample.r, sample.rmin,
                                             sample.rmax))
    w, u, c, N, _, _ = _data(sample)
    m = mle(sample)
    # The low end of the estimate set, where l_v = l*_mle (clipped: rounding can put it above 1).
    hi = min(float((c * w * u) @ m.q), 1.0)
    last = {}

    def excess(v):
        sol = profile(sample, np.array([v]))
        last[v] = (sol.beta[0], sol.tau[0])
        return 2.0 * (sol.loglik[0] - loglik) - quantile

    if not excess(hi) < 0:
        return None
    lo = hi
    for _ in range(60):
        lo *= 0.5
        if excess(lo) > 0:
            break
    else:
        return None
    v = brentq(excess, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=200)
    if v not in last:
        excess(v)
    beta_v, tau_v = last[v]
    if not tau_v > 0:
        return None
    sol = certify_lower_bound(beta_v / tau_v, (1.0 - beta_v - tau_v * v) / tau_v, phi, sample)
    if isinstance(sol, Rejected):
        return None
    value, beta, gamma, kappa, q = sol
    return BoundSolution(value=value, beta=beta, gamma=gamma, kappa=kappa, q=q,
                         status="optimal (root of the profile likelihood, certified)")

