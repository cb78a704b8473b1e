r"""The cvxpy path: every EL program, with moment constraints or without (the paper's), as a
cvxpy program of :mod:`elcvx.programs` solved by Clarabel, its answer certified.

Same contract as the fast path (:mod:`elcvx.fast`): rewards rescaled to ``[0, 1]`` (``u``),
counts ``c``, ``N = sum(c)``, the model of :class:`elcvx.model.Moments` and the tuples of
:mod:`elcvx.solutions`.

How a number is produced
------------------------
1. The program is solved by :meth:`~elcvx.programs.base.Program.solve` with Clarabel, at the
   settings of :data:`ORDER`, formulation by formulation (the order below).
2. No status is taken on trust. Clarabel's dual point is read off the solution (the dual
   program's variables, or the primal's constraint multipliers), moved onto the atoms'
   constraints it violates by rounding, and **certified** there by :mod:`elcvx.verdict` and
   :mod:`elcvx.certify`, from one pass over the rows: the certificate bounds the error of what
   the user reads (the estimate, each bound, the likelihoods of the profile) and accepts the
   point where those bounds are within :data:`~elcvx.certify.VALUE_TOL` and
   :data:`~elcvx.certify.LOGLIK_TOL` — the same verdict as the fast path's. The reported numbers are the closed forms at Clarabel's
   point: Clarabel's own answer, with an optimal status (qualified by the formulation and
   settings it needed: its ``fallbacks``).
3. Where no attempt is certified (Clarabel's interior-point answers are accurate to about its
   tolerance, which the estimate's certificate magnifies by ``sqrt(N)``: its tighter settings
   come first for that reason), and a ``polish`` is given (:mod:`elcvx.dispatch` gives the fast
   path's, :mod:`elcvx.fast.polish`), the last dual point is **polished** by it and certified;
   the status then says ``"optimal (Clarabel's point polished by the fast method)"``
   (:data:`REFINED`; the tests' cross-checks of the two paths refuse it). For the lower bound,
   the left root of the profile likelihood is the last resort.
4. If all fail, :class:`~elcvx.SolverError` names Clarabel and the last status.

The verdict on each point is :mod:`elcvx.verdict`'s, the fast path's too (one pass at the point,
:mod:`elcvx.certify`'s certificate, the status): this package imports the model, the verdict
and the programs, never :mod:`elcvx.fast`.

Which formulation is tried first
--------------------------------
The MLE and the profile take their primal first (:func:`~elcvx.programs.mle_primal`,
:func:`~elcvx.programs.profile_primal`), the lower bound its dual
(:func:`~elcvx.programs.lower_bound_dual`), the two formulations taking turns at each setting
(one failing at every setting does not hold up the other). The order was chosen by measuring
how often a single Clarabel solve of each formulation fails on random samples
(``benchmarks/bench_formulations.py``; the documentation's performance page).
"""

from __future__ import annotations

import functools
import math

from typing import Protocol

import numpy as np

from .. import programs as P
from .. import verdict
from ..status import Status
from ..model import Moments, at_the_edge
from ..solutions import BoundSolution, MLESolution, ProfileSolution
from ..errors import SolverError
from ..programs.base import CERTIFIED_ATTEMPTS, CERTIFIED_BOUND_ATTEMPTS

MLE_ORDER = ("primal", "dual")
PROFILE_ORDER = ("primal", "dual")
LOWER_BOUND_ORDER = ("dual", "primal")

#: The status's note where Clarabel's last point was polished by the fast method.
REFINED = "Clarabel's point polished by the fast method"


class Polish(Protocol):
    """Where none of Clarabel's answers is certified, its last dual point refined by another
    method and certified (:mod:`elcvx.fast.polish`: the fast path's active-set method)."""

    def mle(self, data, x): ...

    def profile(self, data, v, x): ...

    def bound(self, data, loglik, quantile, y, mle_gap): ...


class Rejected(str):
    """What a certificate returns instead of a solution: the reason it failed (shown in the
    :class:`~elcvx.SolverError` when every attempt fails)."""


def _scalar(x):
    if x is None:
        return None
    return float(np.asarray(x, dtype=float).reshape(-1)[0])


def _vector(values):
    """Clarabel's dual point from its pieces (scalars and vectors); None if one is missing."""
    if any(v is None for v in values):
        return None
    return np.concatenate([np.asarray(v, dtype=float).reshape(-1) for v in values])


def _point(program, form, names):
    """The dual point of a solved program: the dual's variables ``names``, or the multipliers
    of the primal's constraints of the same meaning (``beta``: ``weight``, ``gamma``:
    ``mass``, ``tau``: ``value``, ``lambda``: ``g{j}``)."""
    if form == "dual":
        return _vector([program.variables[n].value for n in names if n in program.variables])
    primal = {"beta": ["weight"], "gamma": ["mass"], "tau": ["value"],
              "lambda": sorted((c for c in program.constraints if c.startswith("g")
                                and c[1:].isdigit()), key=lambda c: int(c[1:]))}
    return _vector([program.constraints[c].dual_value for n in names for c in primal[n]])


def _status(form, order, settings_index, clarabel_status) -> Status:
    """Optimal, qualified by the fallbacks that were needed (another formulation than the
    first, other settings) and by Clarabel's own status where it was not ``"optimal"``."""
    fallbacks = []
    if form != order[0]:
        fallbacks.append(f"{form} formulation")
    if settings_index:
        fallbacks.append(f"settings #{settings_index}")
    notes = list(fallbacks)
    if clarabel_status and clarabel_status != "optimal":
        notes.append(f"certified; Clarabel: {clarabel_status.replace(' (certified)', '')}")
    return Status("optimal", ", ".join(notes), fallbacks=fallbacks)


def _fail(what, errors):
    last = errors[-1] if errors else None
    status = getattr(last, "status", "not solved")
    detail = "; ".join(str(e) for e in errors) or "no attempt"
    return SolverError(f"the cvxpy path could not solve {what}: {detail}",
                       solver="CLARABEL", status=status)


def _run(what, builders, order, attempts, certify_at, refine_from, interleave=False,
         **parameters):
    """Clarabel's certified answer: ``(solution, status)``.

    ``builders[form]()`` builds a program and ``names[form]`` reads its dual point (see
    :func:`_point`); ``certify_at(point)`` is a solution whose status is ``"optimal"`` where
    the certificate accepts Clarabel's point; ``refine_from(point)`` the polished one (None:
    no polish, :class:`Polish`). Each
    ``(form, settings)`` pair is one attempt: formulation by formulation (``interleave``:
    setting by setting, the formulations taking turns)."""
    pairs = ([(form, i) for i in range(len(attempts)) for form in order] if interleave
             else [(form, i) for form in order for i in range(len(attempts))])
    programs, errors, last = {}, [], None
    for form, index in pairs:
        if form not in programs:
            programs[form] = builders[form]()
        program, found = programs[form], {}

        def check(p, form=form, found=found):
            nonlocal last
            point = _point(p, form, NAMES[what.kind])
            if point is None or not np.all(np.isfinite(point)):
                return Rejected("no dual point")
            last = point
            sol = certify_at(point)
            found["sol"] = sol
            return True if sol.status.optimal else Rejected(sol.status)

        try:
            program.solve(check=check, attempts=(attempts[index],), **parameters)
        except SolverError as exc:
            errors.append(exc)
            continue
        return found["sol"], _status(form, order, index, program.log[-1][1])
    if last is not None and refine_from is not None:
        sol = refine_from(last)
        if sol.status.optimal:
            return sol, Status("optimal", REFINED, fallbacks=(REFINED,))
        errors.append(SolverError(f"Clarabel's last point polished by the fast method: "
                                  f"{sol.status}", solver="CLARABEL", status=sol.status))
    raise _fail(what.text, errors)


def _shows_progress(label):
    """On a terminal, ``label ... 12 s`` on stderr while the decorated solve runs over a few
    seconds (:func:`elcvx.engines.progress.stage`); ``label`` may be a function of the arguments."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            from ..engines.progress import stage

            with stage(label(*args, **kwargs) if callable(label) else label):
                return fn(*args, **kwargs)

        return run

    return wrap


class _What:
    def __init__(self, kind, text):
        self.kind, self.text = kind, text


NAMES = {"mle": ("beta", "lambda"), "profile": ("beta", "lambda", "tau"),
         "bound": ("gamma", "beta", "lambda")}


# ------------------------------------------------------------------------------------------------
# The certificates at a given dual point (Clarabel's, or any: nothing is refined)
# ------------------------------------------------------------------------------------------------
def certify_mle(point, sample, constraints=(), atoms=None, *, data=None) -> MLESolution:
    """The MLE at the dual point ``(beta, lambda)``, as it is: status ``"optimal"`` where
    :mod:`elcvx.certify` accepts it, else why not (moved onto the atoms' faces it meets within
    rounding, :func:`elcvx.verdict.given_starts`)."""
    data = Moments(sample, constraints, atoms) if data is None else data
    return verdict.mle_at(data, point)


def certify_profile(point, v, sample, constraints=(), atoms=None, *, data=None) -> ProfileSolution:
    """The profile likelihood at ``v`` from the dual point ``(beta, lambda, tau)``, as it is."""
    data = Moments(sample, constraints, atoms) if data is None else data
    lo, hi = data.value_range
    if not lo < v < hi:
        nan = np.full(1, np.nan)
        return ProfileSolution(np.full(1, np.inf), nan, nan,
                               Status("not certified", f"v = {v!r} is not inside ({lo}, {hi}), "
                                      "where the dual has its optimum"))
    return verdict.profile_at(data, v, point)


def certify_lower_bound(point, sample, *, loglik, quantile, mle_gap, side="lower",
                        constraints=(), atoms=None, data=None) -> BoundSolution:
    """The lower bound from the dual point ``(gamma, beta, lambda)``, as it is, for the MLE
    ``loglik`` with certified gap ``mle_gap``."""
    if data is None:
        data = Moments(sample, constraints, atoms, side=side)
    return verdict.bound_at(data, loglik, quantile, point, mle_gap)


# ------------------------------------------------------------------------------------------------
# The three programs
# ------------------------------------------------------------------------------------------------
@_shows_progress("elcvx: cvxpy path: the MLE")
def mle(sample, constraints=(), atoms=None, *, polish: Polish | None = None) -> MLESolution:
    """The (constrained) MLE: Clarabel's answer to :func:`~elcvx.programs.mle_primal` (then
    :func:`~elcvx.programs.mle_dual`), certified at its dual point ``(beta, lambda)``; where
    none is, its last point polished by ``polish`` (:class:`Polish`), if given."""
    data = Moments(sample, constraints, atoms)
    return mle_of(data, sample, constraints, atoms, polish=polish)


def mle_of(data, sample, constraints=(), atoms=None, *,
           polish: Polish | None = None) -> MLESolution:
    """:func:`mle` of a model ``data`` of ``sample`` (e.g. a difference's)."""
    builders = {"primal": lambda: P.mle_primal(sample, constraints=constraints, atoms=atoms),
                "dual": lambda: P.mle_dual(sample, constraints=constraints, atoms=atoms)}
    sol, status = _run(
        _What("mle", "the MLE" + (" with constraints" if data.k else "")), builders, MLE_ORDER,
        CERTIFIED_ATTEMPTS, lambda x: certify_mle(x, sample, data=data),
        None if polish is None else lambda x: polish.mle(data, x))
    return sol._replace(status=status, work=(0, 0))


@_shows_progress(lambda sample, v, *_, **__: f"elcvx: cvxpy path: the profile at {np.size(v)} values")
def profile(sample, v, constraints=(), atoms=None, *,
            polish: Polish | None = None) -> ProfileSolution:
    """``l_v`` (and the dual ``beta``, ``tau``) for each ``v`` of a 1-d array (unit scale):
    Clarabel's answers to :func:`~elcvx.programs.profile_primal` (then
    :func:`~elcvx.programs.profile_dual`), one program compiled and re-solved for each ``v``
    (a :class:`cvxpy.Parameter`), each certified at its dual point (where none is, polished by
    ``polish``, if given). Where no distribution meets ``E_Q[h] = v`` (``v`` outside ``(0, 1)``, but for an end that the rows leave as the
    only value: :func:`elcvx.model.at_the_edge`), ``l_v = inf`` without a solve."""
    v = np.atleast_1d(np.asarray(v, dtype=float))
    if v.ndim != 1:
        raise ValueError("v must be a scalar or a 1-d array")
    data = Moments(sample, constraints, atoms)
    out_l, out_b, out_t = np.full(v.shape, np.inf), np.full(v.shape, np.nan), np.full(v.shape, np.nan)
    gaps = np.zeros(v.shape)
    builders = {"primal": lambda: P.profile_primal(sample, constraints=constraints, atoms=atoms),
                "dual": lambda: P.profile_dual(sample, constraints=constraints, atoms=atoms)}
    cached: dict[str, object] = {}
    statuses = set()
    for i, vi in enumerate(v):
        if np.isnan(vi):
            raise ValueError(f"v[{i}] is NaN")
        if not 0.0 < vi < 1.0:
            if at_the_edge(data, vi):
                m = mle_of(data, sample, constraints, atoms, polish=polish)
                out_l[i], out_b[i], out_t[i], gaps[i] = m.loglik, m.beta, 0.0, m.gap
                statuses.add(m.status)
            continue

        def build(form):
            return lambda: cached.setdefault(form, builders[form]())

        sol, status = _run(
            _What("profile", f"the profile likelihood at v = {vi!r}"),
            {f: build(f) for f in PROFILE_ORDER}, PROFILE_ORDER, CERTIFIED_ATTEMPTS,
            lambda x, vi=vi: certify_profile(x, vi, sample, data=data),
            None if polish is None else lambda x, vi=vi: polish.profile(data, vi, x),
            v=float(vi))
        out_l[i], out_b[i], out_t[i], gaps[i] = sol.loglik[0], sol.beta[0], sol.tau[0], sol.gap[0]
        statuses.add(status)
    status = Status.merged(statuses)
    return ProfileSolution(loglik=out_l, beta=out_b, tau=out_t, status=status, gap=gaps)


@_shows_progress(lambda sample, side="lower", **_: f"elcvx: cvxpy path: the {side} bound")
def lower_bound(sample, *, loglik, quantile, side="lower", constraints=(), atoms=None,
                value=None, mle_gap=0.0, mle_sol=None,
                polish: Polish | None = None) -> BoundSolution:
    """The lower end ``v_lb`` of the interval on the unit scale (of ``1 - u`` for
    ``side="upper"``; of ``value = (h, h_lo, h_hi)`` as in :class:`elcvx.model.Moments`).

    ``phi = -N log N - loglik - quantile / 2``, ``loglik`` the MLE's with certified gap
    ``mle_gap`` (``mle_sol``'s, if given). Clarabel's answers to
    :func:`~elcvx.programs.lower_bound_dual` and :func:`~elcvx.programs.lower_bound_primal` in
    turn at each setting, certified at their dual point ``(gamma, beta, lambda)`` (where none
    is, polished by ``polish``, if given); the profile root last.

    ``quantile = 0`` makes the likelihood ball the single MLE: the bound is then ``sum c q_mle
    w u`` and the multipliers are unbounded (``kappa = inf``, ``beta = gamma = nan``).
    ``quantile = inf`` makes the ball everything: the bound is the least value, 0.
    """
    if mle_sol is not None:
        loglik, mle_gap = mle_sol.loglik, mle_sol.gap
    quantile = float(quantile)
    if not quantile >= 0:
        raise ValueError(f"quantile={quantile!r} must be >= 0")
    data = Moments(sample, constraints, atoms, side=side, value=value)
    if quantile == math.inf:
        return BoundSolution(value=data.value_range[0], beta=0.0, gamma=0.0, kappa=0.0,
                             q=np.zeros(data.rows), status=Status("optimal", "quantile = inf"),
                             error=0.0)
    if quantile == 0:
        m = mle_of(data, sample, constraints, atoms, polish=polish)
        c = 1.0 if data.c is None else data.c
        return BoundSolution(value=float((c * data.h) @ m.q), beta=math.nan, gamma=math.nan,
                             kappa=math.inf, q=m.q,
                             status=Status("optimal", "quantile = 0: the MLE"), error=m.error)
    if data.policy and not np.any(data.h > 0):
        # Every E_Q[w u] is 0: so is the bound (the dual optimum is the limit y -> 0, on the
        # edge of the exponential cone).
        m = mle_of(data, sample, constraints, atoms, polish=polish)
        return BoundSolution(value=0.0, beta=0.0, gamma=0.0, kappa=0.0, q=m.q,
                             status=Status("optimal", "every w u is 0"), error=0.0)
    N = data.n
    phi = -N * math.log(N) - float(loglik) - quantile / 2.0
    h_lo = None if value is None else (data.h, data.h_lo)
    builders = {form: (lambda form=form: getattr(P, f"lower_bound_{form}")(
        sample, side=side, constraints=constraints, atoms=atoms, value=h_lo))
        for form in LOWER_BOUND_ORDER}

    def refine(y):
        return polish.bound(data, loglik, quantile, y, mle_gap)

    def at(y):
        return certify_lower_bound(y, sample, loglik=loglik, quantile=quantile, mle_gap=mle_gap,
                                   data=data)

    what = _What("bound", f"the {side} bound" + (" with constraints" if data.k else ""))
    try:
        sol, status = _run(what, builders, LOWER_BOUND_ORDER, CERTIFIED_BOUND_ATTEMPTS, at,
                           None if polish is None else refine, interleave=True, phi=phi)
        return sol._replace(status=status, work=(0, 0))
    except SolverError as exc:
        if value is not None or data.k:
            raise
        sol = _lower_bound_by_profile(sample, data, loglik, quantile, mle_gap, side, polish)
        if sol is None:
            raise exc from None
        return sol


def _lower_bound_by_profile(sample, data, loglik, quantile, mle_gap, side, polish=None):
    """Last resort (the paper's programs): the left root of ``2 (l_v - l*_mle) = quantile`` by
    Brent's method on :func:`profile`, converted to the lower-bound dual and certified.

    At the root the two programs share their primal ``q``: ``kappa / (gamma + beta w + w u) =
    1 / (N (1 + beta_v (w - 1) + tau_v (w u - v)))`` gives ``beta = beta_v / tau_v`` and
    ``gamma = (1 - beta_v - tau_v v) / tau_v``, which ``polish`` refines and the certificate
    certifies (without ``polish``, as it is). ``None`` if that fails.
    """
    from scipy.optimize import brentq

    if side == "upper":
        # (Clipped: rmax + rmin - rmin can round above rmax.)
        sample = sample.with_rewards(np.clip(sample.rmax + sample.rmin - sample.r, sample.rmin,
                                             sample.rmax))
    m = mle(sample, polish=polish)
    c = 1.0 if data.c is None else data.c
    # The low end of the estimate set, where l_v = l*_mle (clipped: rounding can put it above 1).
    hi = min(float((c * sample.w * sample.u) @ m.q), 1.0)
    last = {}

    def excess(v):
        try:
            sol = profile(sample, np.array([v]), polish=polish)
        except SolverError:
            return math.nan
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
    try:
        v = brentq(excess, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=200)
    except ValueError:
        return None
    if v not in last:
        excess(v)
    beta_v, tau_v = last[v]
    if not tau_v > 0:
        return None
    y = np.array([(1.0 - beta_v - tau_v * v) / tau_v, beta_v / tau_v])
    if polish is None:
        sol, how = verdict.bound_at(data, loglik, quantile, y, mle_gap), "certified"
    else:
        sol, how = polish.bound(data, loglik, quantile, y, mle_gap), "polished by the fast method"
    if not sol.status.optimal:
        return None
    return sol._replace(status=Status("optimal", f"root of the profile likelihood, {how}",
                                      fallbacks=("root of the profile likelihood",)),
                        work=(0, 0))
