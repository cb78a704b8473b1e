r"""The cvxpy path: the EL computations as cvxpy programs solved by Clarabel, with certificates.

Same contract as :mod:`elcvx._fast`: rewards rescaled to ``[0, 1]`` (``u``), counts ``c``,
``N = sum(c)``, and the tuples of :mod:`elcvx._solutions`.

How a number is produced
------------------------
1. The primary formulation (table below) is solved by :meth:`Program.solve`, which walks
   through Clarabel settings in a documented order (:data:`elcvx.programs.base.ATTEMPTS`: tight
   tolerances; shorter steps; shorter steps still with tolerances of 1e-8).
2. No status is taken on trust. The low-dimensional dual point is read off the solution (the
   dual program's variables, or the primal's constraint multipliers), refined by a few Newton
   steps on its active face (:func:`_polish_2d`; the solver's argmax is accurate to only about
   1e-6), and **certified** in numpy from the closed forms: the primal weights ``q`` implied by
   the dual point, with nonnegative masses on the extra atoms, must satisfy the primal
   constraints to :data:`FEAS_TOL`, and (lower bound) the primal objective at that ``q`` must
   equal the dual objective to :data:`GAP_TOL`. A solution that fails is a failed attempt, even
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

Which formulation is primary was measured on 100 random samples (N = 10 ... 1e4; epsilon-greedy,
continuous and heavy-tailed weights up to 1e6, ``wmax`` finite or infinite; binary and
continuous rewards; counts). "Single" is the share of single Clarabel solves at the tight
settings that did not end ``optimal`` with the right value (before the scaling of
:mod:`elcvx.programs.empirical_likelihood` in brackets):

===================  =============================  ============================
computation          primary: single (unscaled)     fallback: single (unscaled)
===================  =============================  ============================
:func:`mle`          ``mle_primal``: 2% (29%)       ``mle_dual``: 8% (26%)
:func:`profile`      ``profile_primal``: 8% (33%)   ``profile_dual``: 12% (19%)
:func:`lower_bound`  ``lower_bound_primal``: 38%     ``lower_bound_dual``: 31%
                     (31%)                          (27%), then the profile root
===================  =============================  ============================

The lower bound now takes ``lower_bound_dual`` first, with the settings of
:data:`elcvx.programs.base.BOUND_ATTEMPTS` (shorter steps first): at N = 1e4 that solved 15 of
16 bounds at once, against 6 of 16 for the primal at the tight settings. Its two formulations
take turns at each setting (dual, then primal, then the next setting), rather than one
formulation going through every setting first.

With the fallbacks and certificates, 150 further random samples gave no failure, and agreed
with :mod:`elcvx._fast` to 1e-13 (``l*_mle``, relative), 1e-8 (estimate), 4e-11 (bounds) and
7e-10 (profile statistic, relative). The lower bound's program is hard for Clarabel whatever
the scaling (its step length collapses mid-way); shorter steps rescue most cases, the dual and
the profile root the rest.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import nnls

from . import programs as P
from ._solutions import BoundSolution, MLESolution, ProfileSolution
from .errors import SolverError
from .programs.base import BOUND_ATTEMPTS
from .programs.base import sample_data as _data

# Certificate tolerances. The atom masses recovered from a dual point may be negative by at most
# FEAS_TOL (the primal constraints are rows of size O(1) in the scaled programs), and for the
# lower bound the primal objective at the recovered q may exceed the dual objective by at most
# GAP_TOL * max(1, |v|). A solution with an error near 1e-3 fails both by orders of magnitude.
FEAS_TOL = 1e-8
GAP_TOL = 1e-8
# For the MLE and the profile, whose duals are self-concordant (minus sums of logs of affine
# functions), the Newton decrement on the active face bounds the suboptimality of the dual
# value: it must be below VALUE_TOL * max(1, |l|). This is what certifies l_v for v within a
# hair of 0 or 1, where a residual of FEAS_TOL in E_Q[w u] = v would be a large move of v.
VALUE_TOL = 1e-10

# Formulation order per computation (primary first). Measured on random samples; see the module
# docstring and tests/test_programs.py.
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


def _inv(x):
    return 0.0 if math.isinf(x) else 1.0 / x


def _two_atoms(s0, s1, wmin, wmax):
    """Masses ``(m_lo, z_hi)`` of the atoms at ``wmin`` and (weighted) ``wmax`` that complete
    ``sum c q = s0`` and ``sum c q w = s1`` to ``E_Q[1] = E_Q[w] = 1``."""
    ihi = _inv(wmax)
    det = 1.0 - wmin * ihi
    r0, r1 = 1.0 - s0, 1.0 - s1
    return (r0 - ihi * r1) / det, (r1 - wmin * r0) / det


def _polish_2d(x, oracle, A, b, steps=4):
    """Refine a solver's 2-d dual point ``x`` by Newton steps on its active face.

    ``oracle(x)`` returns ``(f, g, H)`` (a concave objective, its gradient and Hessian) or
    ``None`` outside its domain; the constraints are ``A x >= b``. The constraints that the
    solver left tight (slack below ``1e-6 (|A_i|_1 |x|_inf + |b_i|)``) are taken as active, and
    each step solves the Newton system on them as equalities, which also moves ``x`` exactly
    onto them; a constraint whose multiplier comes out negative is released, and one that the
    step would cross is added. A step is refused, and the last point stands, if it leaves the
    domain or the feasible set, or lowers ``f`` beyond rounding (the first step, which also
    projects a slightly infeasible point onto its face, by at most ``1e-6``, unless it is large:
    over ``1e-3 max(|x|, 1)``). Interior-point solvers meet their tolerances on the objective
    and the residuals, which leaves the argmax of these flat duals accurate to only about
    ``1e-6``; two or three steps make it accurate to rounding. At most four steps are taken:
    the certificate that follows, not this refinement, decides whether the point is optimal.

    Returns the point and twice the quadratic model's gain ``2 g.dx + dx' H dx`` of one more
    step on its face (the Newton decrement for a step that no constraint stops).
    """
    x = np.asarray(x, dtype=float)
    cur = oracle(x)
    if cur is None:
        return x, math.inf
    _, keep = np.unique(np.column_stack([A, b]), axis=0, return_index=True)
    A, b = A[np.sort(keep)], b[np.sort(keep)]  # e.g. both corners at wmin = 0 are one point
    size = np.maximum(np.abs(A).sum(axis=1) * np.max(np.abs(x)) + np.abs(b), 1e-300)
    active = (A @ x - b) <= 1e-6 * size

    def newton(x, g, H):
        """The Newton step on the active face (releasing constraints with negative multipliers)."""
        for _release in range(A.shape[0] + 1):
            rows = np.flatnonzero(active)
            k = rows.size
            kkt = np.zeros((2 + k, 2 + k))
            kkt[:2, :2] = H
            kkt[:2, 2:] = A[rows].T
            kkt[2:, :2] = A[rows]
            rhs = np.concatenate([-g, b[rows] - A[rows] @ x])
            if not (np.all(np.isfinite(kkt)) and np.all(np.isfinite(rhs))):
                return None  # overflow at extreme weights: LAPACK would complain, not solve
            sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
            # g + H dx + A' mu = 0: at a genuinely active constraint of max f s.t. A x >= b
            # the multiplier mu is >= 0 (the gradient points out of the feasible set).
            mu = sol[2:]
            if k == 0 or mu.min() >= 0:
                return sol[:2]
            active[rows[int(np.argmin(mu))]] = False
        return None

    def step_on_face(x, g, H):
        """A Newton step that respects every constraint: a constraint the step would cross is
        added to the face and the step recomputed (a few times at most)."""
        for _add in range(A.shape[0] + 1):
            dx = newton(x, g, H)
            if dx is None or not np.all(np.isfinite(dx)):
                return None
            crossed = (A @ (x + dx) - b < -1e-12 * np.maximum(size, 1.0)) & ~active
            if not crossed.any():
                return dx
            active[crossed] = True
        return None

    for step in range(steps):
        f, g, H = cur
        dx = step_on_face(x, g, H)
        if dx is None or not np.any(dx):
            break
        # A large step is taken only if it raises f: where the dual is nearly flat (weights
        # within 1e-6 of 1 leave it linear to 1e-12 along one direction) the solver's point
        # can lie anywhere along that direction, and the optimum is at a constraint a large
        # step away. The certificate, not the step, decides whether the point is optimal.
        large = np.max(np.abs(dx)) > 1e-3 * max(np.max(np.abs(x)), 1.0)
        new = x + dx
        if np.any(A @ new - b < -1e-12 * np.maximum(size, 1.0)):
            break
        nxt = oracle(new)
        # The first step may lower f a little: it also moves a slightly infeasible point onto
        # its face. Later steps are Newton steps on the face and must not.
        allowed = (1e-6 if step == 0 and not large else 1e-12) * max(1.0, abs(f))
        if nxt is None or nxt[0] < f - allowed:
            break
        x, cur = new, nxt
    # The Newton decrement at the final point, on its face: for a self-concordant objective
    # (minus a sum of logs of affine functions) f_face* - f <= decrement when it is below 0.68^2.
    dx = step_on_face(x, cur[1], cur[2])
    # Twice the gain of the quadratic model along that step, 2 g.dx + dx' H dx: for a Newton
    # step in the interior it is -dx' H dx, but where the step stops at a constraint it also
    # counts the linear gain (the dual is nearly linear in beta when the weights are within 1e-6
    # of 1, and a point 1.07 short of the optimal corner had a curvature term of 1e-12).
    decrement = math.inf if dx is None else max(
        0.0, float(2.0 * cur[1] @ dx + dx @ cur[2] @ dx))
    return x, decrement


# ------------------------------------------------------------------------------------------------
# MLE
# ------------------------------------------------------------------------------------------------
def beta_bounds(wmin, wmax):
    """``[-1/(wmax - 1), 1/(1 - wmin)]`` (lower end 0 when ``wmax = inf``)."""
    return (0.0 if math.isinf(wmax) else -1.0 / (wmax - 1.0)), 1.0 / (1.0 - wmin)


def _polish_beta(beta, x, c, lo, hi, d, steps=3):
    """Refine the solver's ``beta`` by at most ``steps`` Newton steps on the 1-d dual.

    An interior-point solver meets its tolerance on the *objective*; its ``beta`` (the argmax of
    a flat concave function) is then accurate only to about ``1e-6`` relative, and ``q`` with
    it. Each step is kept inside ``[lo, hi]``, must be small (at most ``1e-4`` of the interval:
    this refines a solution, it does not find one) and must not lower the objective; otherwise
    the solver's ``beta`` stands.
    """
    f = float(c @ np.log(d))
    for _ in range(steps):
        r = x / d
        g, h = float(c @ r), float(c @ (r * r))
        if h <= 0:
            break
        new = min(max(beta + g / h, lo), hi)
        if new == beta or abs(new - beta) > 1e-4 * (hi - lo):
            break
        d_new = 1.0 + new * x
        if not np.all(d_new > 0):
            break
        f_new = float(c @ np.log(d_new))
        if f_new < f:
            break
        beta, d, f = new, d_new, f_new
    return beta, d


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
    """``(beta, l*_mle, q)`` if ``beta`` is certified optimal for the MLE dual, else a :class:`Rejected` reason.

    ``beta`` is clipped to its interval, and moved onto an end of it when it lies within
    ``1e-6`` (of the interval's length) of that end or the derivative points to it, and the end
    is optimal (the derivative points outwards there: an exact test, so the move is safe), then
    refined by Newton steps (:func:`_polish_beta`). Certified when the primal weights ``q = 1/(N
    (1 + beta (w - 1)))`` with nonnegative extra-atom masses satisfy the primal constraints to
    :data:`FEAS_TOL` and a bound on the gap, the Newton decrement (zero at an optimal end) or
    the tangent line's rise to the end, is below :data:`VALUE_TOL` ``* max(1, l)``.
    """
    w, _, c, N, wmin, wmax = _data(sample)
    if beta is None or not np.isfinite(beta):
        return Rejected("no dual point")
    lo, hi = beta_bounds(wmin, wmax)
    beta = min(max(float(beta), lo), hi)
    x = w - 1.0
    d = 1.0 + beta * x
    uphill = float(c @ (x / d)) if np.all(d > 0) else 0.0  # the derivative's sign at beta
    for end, sign in ((lo, -1.0), (hi, 1.0)):
        near = abs(beta - end) <= 1e-6 * (hi - lo)
        # Also the end the derivative points to, however far: the objective is nearly linear
        # when every weight is within 1e-8 of 1, and the solver's beta then anywhere.
        if (near or sign * uphill > 0) and beta != end:
            d = 1.0 + end * x
            if np.all(d > 0) and sign * float(c @ (x / d)) >= 0:
                beta = end
    d = 1.0 + beta * x
    if not np.all(d > 0):
        return Rejected("outside the domain")
    beta, d = _polish_beta(beta, x, c, lo, hi, d)
    q = 1.0 / (N * d)
    m_lo, z_hi = _two_atoms(float(c @ q), float((c * w) @ q), wmin, wmax)
    r = x / d
    g, h = float(c @ r), float(c @ (r * r))
    outward = (beta == lo and g <= 0) or (beta == hi and g >= 0)
    decrement = 0.0 if outward or h <= 0 else g * g / h
    # Concavity also bounds the gap by the tangent line over the interval: the certificate
    # where the objective is nearly linear (every weight within 1e-8 of 1), so that its
    # decrement g^2/h overstates the gap and beta may lie anywhere in the interval.
    decrement = min(decrement, g * ((hi if g > 0 else lo) - beta))
    loglik = float(c @ np.log1p(beta * x))
    # Written so that NaN (from weights near 1e308) fails.
    if not min(m_lo, z_hi) >= -FEAS_TOL:
        return Rejected(f"an extra atom's mass is {min(m_lo, z_hi):.2g}")
    if not decrement <= VALUE_TOL * max(1.0, abs(loglik)):
        return Rejected(f"the gap may be {decrement:.2g}")
    return beta, loglik, q


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
            program.solve(check=check)
        except SolverError as exc:
            errors.append(exc)
            continue
        beta, loglik, q = found["sol"]
        return MLESolution(beta=beta, loglik=loglik, q=q, status=_status(form, MLE_ORDER, program))
    raise _fail("the MLE", errors)


def _scalar(x):
    if x is None:
        return None
    return float(np.asarray(x, dtype=float).reshape(-1)[0])


def _status(form, order, program, settings_index=None):
    """``"optimal"``, qualified by the fallbacks that were needed to get there
    (``settings_index``: of the attempt that solved, when it is not the program's log's)."""
    notes = []
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
def _corner_matrix(wmin, wmax):
    """Rows ``E_Q[1], E_Q[w], E_Q[w u]`` of the corner atoms ``m_l0, m_l1, z_h0, z_h1``."""
    ihi = _inv(wmax)
    return np.array([[1.0, 1.0, ihi, ihi],
                     [wmin, wmin, 1.0, 1.0],
                     [0.0, wmin, 0.0, 1.0]])


@_quietly
def certify_profile(beta, tau, v, sample):
    """``(l_v, beta, tau)`` if ``(beta, tau)`` certifies the profile dual at ``v``, else a :class:`Rejected` reason.

    The point is first refined by Newton steps on its active face (:func:`_polish_2d`).

    Dual feasibility: ``1 + beta (w - 1) + tau (w u - v) > 0`` on every row and the four corner
    constraints hold to 1e-9. Primal feasibility: ``q_n = 1/(N (1 + beta (w_n - 1) +
    tau (w_n u_n - v)))`` plus nonnegative corner-atom masses (a 3 x 4 nonnegative least-squares
    problem) meet ``E_Q[1] = E_Q[w] = 1``, ``E_Q[w u] = v`` to :data:`FEAS_TOL`. Then the primal
    value ``sum c log q`` equals ``-N log N - l_v(beta, tau)``, which certifies both. Near
    ``v = 0`` or ``1`` a residual in ``E_Q[w u] = v`` is a large move of ``v``, so the Newton
    decrement on the active face must also be below :data:`VALUE_TOL` ``* max(1, |l_v|)``.
    """
    w, u, c, N, wmin, wmax = _data(sample)
    if beta is None or tau is None or not (np.isfinite(beta) and np.isfinite(tau)):
        return Rejected("no dual point")
    ihi = _inv(wmax)
    zb, zt = w - 1.0, w * u - v

    def oracle(x):
        d = 1.0 + x[0] * zb + x[1] * zt
        if not np.all(d > 0):
            return None
        r1, r2 = zb / d, zt / d
        g = np.array([c @ r1, c @ r2]) / N
        h12 = c @ (r1 * r2)
        H = -np.array([[c @ (r1 * r1), h12], [h12, c @ (r2 * r2)]]) / N
        return float(c @ np.log(d)) / N, g, H

    A = np.array([[wmin - 1.0, -v], [wmin - 1.0, wmin - v],
                  [1.0 - ihi, -ihi * v], [1.0 - ihi, 1.0 - ihi * v]])
    b = np.array([-1.0, -1.0, -ihi, -ihi])
    (beta, tau), decrement = _polish_2d(np.array([beta, tau]), oracle, A, b)
    corners = np.array([1 + beta * (wmin - 1) - tau * v,
                        1 + beta * (wmin - 1) + tau * (wmin - v),
                        ihi + beta * (1 - ihi) - ihi * tau * v,
                        ihi + beta * (1 - ihi) + tau * (1 - ihi * v)])
    # The polish lands on active corners exactly: a violation above rounding is an error.
    if not corners.min() >= -1e-12 * max(1.0, abs(beta), abs(tau)):
        return Rejected("a corner constraint is violated")
    d = 1.0 + beta * (w - 1.0) + tau * (w * u - v)
    if not np.all(d > 0):
        return Rejected("outside the domain")
    q = 1.0 / (N * d)
    residual = np.array([1.0 - c @ q, 1.0 - (c * w) @ q, v - (c * w * u) @ q])
    _, rnorm = nnls(_corner_matrix(wmin, wmax), residual)
    value = float(c @ np.log(d))
    if not rnorm <= FEAS_TOL:
        return Rejected(f"the primal constraints are off by {rnorm:.2g}")
    if not N * decrement <= VALUE_TOL * max(1.0, abs(value)):
        return Rejected(f"the gap may be {N * decrement:.2g}")
    return value, float(beta), float(tau)


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


def _profile_infeasible(v, sample):
    """True when no distribution on the sample and the corners has ``E_Q[w u] = v``."""
    w, u = sample.w, sample.u
    if not 0.0 <= v <= 1.0:
        return True
    if v == 0.0:
        return bool(np.any(w * u > 0))
    if v == 1.0:
        return bool(np.any(w * (1.0 - u) > 0))
    return False


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
        if _profile_infeasible(vi, sample):
            continue
        if vi in (0.0, 1.0):
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
                program.solve(check=check, v=float(vi))
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
    """``(v_lb, beta, gamma, kappa, q)`` if ``(beta, gamma)`` is certified, else a :class:`Rejected` reason.

    The point is first refined by Newton steps on its active face (:func:`_polish_2d`) of the
    dual with ``kappa`` eliminated, ``max N kappa(beta, gamma) - gamma - beta``.

    With ``kappa`` at its optimum given ``(beta, gamma)`` (``log(N kappa) = phi/N + log N +
    mean_c log a``, ``a = gamma + beta w + w u``) the dual objective is
    ``D = N kappa - gamma - beta`` (a lower bound on ``v_lb`` for any dual-feasible point), the
    primal weights are ``q = kappa / a`` and they meet the log-likelihood constraint with
    equality. Certified when ``q`` plus nonnegative masses on the atoms ``(wmin, 0)``,
    ``(wmax, 0)`` meets ``E_Q[1] = E_Q[w] = 1`` to :data:`FEAS_TOL` and the primal objective
    ``sum c q w u`` exceeds ``D`` by at most :data:`GAP_TOL` ``* max(1, |D|)``. A dual point that
    violates ``gamma + beta wmin >= 0`` or ``gamma + beta wmax >= 0`` by rounding is first moved
    onto the constraint (``gamma`` raised).
    """
    w, u, c, N, wmin, wmax = _data(sample, side)
    if beta is None or gamma is None or not (np.isfinite(beta) and np.isfinite(gamma)):
        return Rejected("no dual point")
    psi = phi / N + math.log(N)
    wu = w * u

    def oracle(x):
        a = x[1] + x[0] * w + wu
        if not np.all(a > 0):
            return None
        log_k = psi + float(c @ np.log(a)) / N
        if log_k > 700:
            return None
        K = math.exp(log_k)
        r1, r0 = w / a, 1.0 / a
        m1 = np.array([c @ r1, c @ r0]) / N
        h01 = c @ (r1 * r0)
        M2 = np.array([[c @ (r1 * r1), h01], [h01, c @ (r0 * r0)]]) / N
        return K - x[0] - x[1], K * m1 - 1.0, K * (np.outer(m1, m1) - M2)

    ihi = _inv(wmax)
    A = np.array([[wmin, 1.0], [1.0, ihi]])
    (beta, gamma), _ = _polish_2d(np.array([beta, gamma]), oracle, A, np.zeros(2))
    beta, gamma = float(beta), float(gamma)
    if math.isinf(wmax):
        beta = max(beta, 0.0)
        gamma = max(gamma, -beta * wmin)
    else:
        gamma = max(gamma, -beta * wmin, -beta * wmax)
    a = gamma + beta * w + w * u
    if not np.all(a > 0):
        return Rejected("outside the domain")
    log_k = psi + float(c @ np.log(a)) / N
    if log_k > 700:
        return Rejected("kappa overflows")
    K = math.exp(log_k)
    D = K - gamma - beta
    q = K / (N * a)
    m_lo, z_hi = _two_atoms(float(c @ q), float((c * w) @ q), wmin, wmax)
    primal = float((c * w * u) @ q)
    if not min(m_lo, z_hi) >= -FEAS_TOL:
        return Rejected(f"an extra atom's mass is {min(m_lo, z_hi):.2g}")
    if not abs(primal - D) <= GAP_TOL * max(1.0, abs(D)):
        return Rejected(f"the duality gap is {abs(primal - D):.2g}")
    return D, beta, gamma, K / N, q


def lower_bound(sample, *, loglik, quantile, side="lower") -> BoundSolution:
    """The lower end ``v_lb`` of the interval on the unit scale (of ``1 - u`` for ``side="upper"``).

    ``phi = -N log N - loglik - quantile / 2``. Solved by :func:`lower_bound_primal` (fallback:
    :func:`lower_bound_dual`), then certified (:func:`certify_lower_bound`).

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
    for index, settings in enumerate(BOUND_ATTEMPTS):
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
        sample = sample.with_rewards(sample.rmax + sample.rmin - sample.r)
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

