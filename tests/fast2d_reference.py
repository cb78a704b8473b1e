"""A reference for the paper's programs (no constraint): the specialised solvers that elcvx's
fast path used before every program went through one active-set method (elcvx.fast.solve).

Kept here, outside the package, as an independent implementation to test against (as
tests/barrier_reference.py is for the constrained programs): a 1-d safeguarded Newton method
(rtsafe) on the MLE's derivative, a 2-d active-set Newton method in the cone coordinates of
the bound's dual, and the same 2-d method on the profile's dual with the four corner
constraints. They share only the block-wise passes (elcvx.engines.blocks) with the package.

* MLE: ``beta*`` maximises ``sum c log(1 + beta (w - 1))`` on ``[-1/(wmax-1), 1/(1-wmin)]``.
* Lower bound: ``max K geomean_c(gamma + beta w + w u) - gamma - beta`` over ``gamma + beta
  wmin >= 0``, ``gamma + beta wmax >= 0``, in the coordinates ``p = gamma + beta wmin``, ``m =
  (gamma + beta wmax)/wmax``, where the cone is the non-negative quadrant.
* Profile: ``sup sum c log(1 + beta (w - 1) + tau (w u - v))`` over the four corners.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from elcvx import Sample
from elcvx.calibration.bootstrap import _corner_constraints
from elcvx.engines.blocks import blocks as _blocks
from elcvx.engines.blocks import scratch as _scratch
from elcvx.engines.blocks import wsum as _wsum
from elcvx.passes.objectives import Work as _Work
from elcvx.solutions import BoundSolution, MLESolution, ProfileSolution

# The certificate's tolerances when these solvers were the package's.
FEAS_TOL = 1e-8
GAP_TOL = 1e-8

_MAX_ITER = 200
_SUBSAMPLE_ABOVE = 1 << 18
_SUBSAMPLE_SIZE = 1 << 16


# ---------------------------------------------------------------------------------------------
# MLE: one-dimensional
# ---------------------------------------------------------------------------------------------
def beta_bounds(wmin: float, wmax: float) -> tuple[float, float]:
    """The feasible interval of ``beta``: ``1 + beta (w - 1) >= 0`` at ``w = wmin`` and ``wmax``."""
    low = 0.0 if np.isinf(wmax) else -1.0 / (wmax - 1.0)
    return low, 1.0 / (1.0 - wmin)


def _mle_derivatives(beta, d, c, work, scratch=None, domain=False):
    """``(g, h, floor)``: the derivative ``g = sum c t`` and minus the second ``h = sum c t^2``
    of the MLE objective, ``t = d/(1 + beta d)``, and ``floor = sum c |t|``, the size of the
    terms that cancel in ``g`` (its rounding error is about ``1e-16 floor``).

    ``scratch``: two block-length arrays (from :func:`_scratch`), reused across calls.
    ``domain=True``: ``(None, None, None)`` when some ``1 + beta d <= 0``.
    """
    work.count(d.size)
    if scratch is None:
        scratch = _scratch(2, d.size)
    g = h = floor = 0.0
    for i, j in _blocks(d.size):
        t = np.multiply(d[i:j], beta, out=scratch[0, :j - i])
        t += 1.0
        if domain and not t.min() > 0:
            return None, None, None
        np.divide(d[i:j], t, out=t)
        ct = t if c is None else np.multiply(c[i:j], t, out=scratch[1, :j - i])
        g += float(ct.sum())
        h += float(np.dot(ct, t))
        floor += float(np.abs(ct, out=scratch[1, :j - i]).sum())
    return g, h, floor


def solve_beta(d, c, n, wmin, wmax, work, beta0=None):
    """``beta*`` for ``d = w - 1``: the root of the decreasing derivative, or a bound.

    Returns ``(beta, status)``; ``status`` is ``"optimal"`` or ``"optimal (bound)"`` when the
    maximum is at a constraint (the extra atom then carries mass).
    """
    g0 = scale = 0.0  # the derivative at beta = 0, sum(c w) - N, and its size sum c |d|
    absd = _scratch(1, d.size)[0]
    with np.errstate(over="ignore"):  # weights near 1e308: g0 = inf still has a sign
        for i, j in _blocks(d.size):
            cb = None if c is None else c[i:j]
            g0 += _wsum(cb, d[i:j])
            scale += _wsum(cb, np.abs(d[i:j], out=absd[:j - i]))
    if math.isfinite(scale) and abs(g0) <= 1e-15 * max(scale, n):
        return 0.0, "optimal"
    low, high = beta_bounds(wmin, wmax)
    # Bracket [a, b] with g(a) > 0 > g(b); the far end is the bound on the side of the root.
    if g0 > 0:
        a, b = 0.0, high
        edge_w = wmin  # the weight whose constraint binds at beta = high
    else:
        a, b = low, 0.0
        edge_w = wmax
    if (g0 < 0 and low == 0.0):  # wmax = inf: beta cannot be negative
        return 0.0, "optimal (bound)"
    # At the bound, the derivative is -inf when the binding weight is observed; otherwise check
    # its sign: a derivative that keeps the sign of g0 up to the bound means beta* is the bound.
    edge_beta = b if g0 > 0 else a
    # (w >= wmin and w <= wmax hold, so the edge weight is observed when it is the extreme one.)
    observed = np.isfinite(edge_w) and (d.min() if g0 > 0 else d.max()) == edge_w - 1.0
    if not observed:
        # 1 + beta d > 0 at the edge unless rounding puts a weight next to the edge onto it.
        g_edge, _, _ = _mle_derivatives(edge_beta, d, c, work, domain=True)
        if g_edge is None:
            g_edge = -np.inf if g0 > 0 else np.inf
        if (g0 > 0 and g_edge >= 0) or (g0 < 0 and g_edge <= 0):
            return edge_beta, "optimal (bound)"
    beta = beta0 if beta0 is not None and a < beta0 < b else 0.0
    scratch = _scratch(2, d.size)
    step = step_before = b - a
    for _ in range(_MAX_ITER):
        with np.errstate(over="ignore"):  # h = inf (t^2 overflows at beta = 0): bisect
            g, h, floor = _mle_derivatives(beta, d, c, work, scratch)
        if g > 0:
            a = beta
        else:
            b = beta
        newton = g / h if 0 < h < math.inf else None
        new = beta + newton if newton is not None else None
        # Bisect when Newton leaves the bracket or does not halve the step before last (as
        # Numerical Recipes' rtsafe): from beta = 0 with a weight of 1e100, the derivative is
        # about 1/beta and Newton steps only double beta, some 330 times.
        step, step_before = (new - beta if new is not None else math.inf), step
        if new is None or not (a < new < b) or abs(2.0 * step) > abs(step_before):
            new = 0.5 * (a + b)
            step = new - beta
        if abs(new - beta) <= 4e-16 * max(abs(beta), abs(new), 1e-300) or a >= b:
            return new, "optimal"
        # g at its rounding floor: the size of the terms at beta, not of d (with one weight of
        # 1e16, sum c |d| is 1e16 while the terms t at the root are about 1/beta).
        if abs(g) <= 1e-14 * floor and math.isfinite(floor):
            return beta, "optimal"
        beta = new
    return beta, "max_iter"


def mle(w, u, c, wmin, wmax) -> MLESolution:
    """The EL maximum-likelihood solution (paper eq. (betastar), appendix B)."""
    n = float(w.size) if c is None else float(c.sum())
    d = w - 1.0
    work = _Work()
    beta0 = None
    if w.size > _SUBSAMPLE_ABOVE:
        # Warm start from a strided subsample (copied: a strided view costs a cache line per
        # row at every pass): Newton then needs about two full passes.
        k = w.size // _SUBSAMPLE_SIZE
        sub_c = None if c is None else np.ascontiguousarray(c[::k])
        sub_d = np.ascontiguousarray(d[::k])
        sub_n = float(sub_d.size) if c is None else float(sub_c.sum())
        beta0, _ = solve_beta(sub_d, sub_c, sub_n, wmin, wmax, work)
    beta, status = solve_beta(d, c, n, wmin, wmax, work, beta0=beta0)
    # One pass for the log-likelihood and q = 1 / (N (1 + beta d)), written block by block.
    work.count(w.size)
    q = np.empty_like(w)
    log = _scratch(1, w.size)[0]
    loglik = 0.0
    # log1p(-1) = -inf: an edge weight at a bound beta; N (1 + beta d) = inf: q = 0 for a
    # weight near 1e308 (whose q is below the smallest double).
    with np.errstate(divide="ignore", over="ignore"):
        for i, j in _blocks(w.size):
            bd = np.multiply(d[i:j], beta, out=q[i:j])
            lg = np.log1p(bd, out=log[:j - i])
            loglik += _wsum(None if c is None else c[i:j], lg)
            bd += 1.0
            bd *= n
            np.reciprocal(bd, out=bd)
    return MLESolution(beta=float(beta), loglik=loglik, q=q, status=status, work=work.counts())


# ---------------------------------------------------------------------------------------------
# A small active-set Newton method: maximise a concave function of 2 variables on a polygon.
# ---------------------------------------------------------------------------------------------
def _maximize_2d(oracle, x0, G, h, scale, gap=None, soft=None, accurate=None):
    """Maximise a concave ``f`` subject to ``G x <= h`` (2 variables), from a feasible ``x0``.

    ``oracle(x) -> (f, grad, hess)``, with ``f = -inf`` outside the domain. Newton
    steps on the face of the active constraints, an Armijo line search that stops at the first
    constraint it meets (which then becomes active), and a constraint leaves the active set when
    its multiplier turns negative. Converges when the Newton decrement on the face is below
    ``1e-13 * scale(f, x)`` (``scale`` is the size of the terms that cancel in ``f``, so this is
    the rounding floor, plus an absolute floor where ``f`` is a value on the unit reward scale)
    and every active multiplier is non-negative; a line search that finds no increase counts as
    convergence when the decrement is below ``1e-9 * scale``. ``gap(x, grad)``, if given, is an
    upper bound on ``sup f - f(x)`` from concavity; the iteration also stops when it is below
    ``1e-13 * scale`` (which ends a slow approach to a supremum on the boundary of the domain).
    ``soft[i]`` marks a constraint on which ``f`` is ``-inf`` (a log of 0): it can never be
    active at the optimum, so steps stop short of it (at 90% of the way) instead of landing on
    it, as an interior-point method would. ``accurate(x, f, grad)``, if given, says whether a
    converged point's gradient is accurate enough; if not, up to three more Newton steps are
    taken (each accepted when it keeps ``f`` within rounding).
    """
    x = np.array(x0, dtype=float)
    active: list[int] = []
    f, g, H = oracle(x)
    just_added = None
    polished = 0
    for _ in range(_MAX_ITER):
        if gap is not None and gap(x, g) <= 1e-13 * scale(f, x):
            return x, f, g, "optimal"
        # Release an active constraint whose multiplier has turned negative (the gradient points
        # into the feasible side), unless it was met by the last step.
        if active:
            mult, *_ = np.linalg.lstsq(G[active].T, g, rcond=None)
            worst = int(np.argmin(mult))
            if mult[worst] < 0 and active[worst] != just_added:
                active.pop(worst)
        just_added = None
        # Direction: Newton on the face spanned by the inactive directions.
        if len(active) == 0:
            d = _newton_direction(g, H, x)
        elif len(active) == 1:
            n_ = G[active[0]]
            t = np.array([-n_[1], n_[0]])
            curv = float(t @ H @ t)
            slope = float(g @ t)
            if curv < 0:
                d = t * (-slope / curv)
            else:  # linear along the face (e.g. one example): go up it as far as allowed
                d = t * np.sign(slope) * max(np.linalg.norm(x), 1.0) / np.linalg.norm(t)
        else:
            d = np.zeros(2)
        decrement = float(g @ d)
        size = scale(f, x)
        polishing = False
        if decrement <= 1e-13 * size:
            # Stationary on the face: check the multipliers of the active constraints.
            # (After the Jacobi scaling in _newton_direction, a small decrement means a small
            # scaled gradient, except along a flat direction, which gets a long step instead.)
            if active:
                # The multipliers at the face's optimum, one Newton step d away: where the
                # curvature is large a gradient of 1e-10 can change sign within that step, and
                # judged at x the face would be left, re-entered and left again.
                mult, *_ = np.linalg.lstsq(G[active].T, g + H @ d, rcond=None)
                if not np.all(mult >= -1e-13 * size):
                    active.pop(int(np.argmin(mult)))
                    continue
            if accurate is None or accurate(x, f, g) or polished >= 3 or not np.any(d):
                return x, f, g, "optimal"
            # f is converged but the gradient, which the primal solution is read from, is not
            # yet (a decrement of 1e-21 can hide a gradient of 3e-8 where the curvature is
            # large): take the Newton step anyway, accepting any value within rounding.
            polished += 1
            polishing = True
        # Longest step that stays feasible.
        slack = h - G @ x
        rate = G @ d
        alpha_max = np.inf
        hit = None
        for i in range(G.shape[0]):
            if i not in active and rate[i] > 0:
                a_i = max(slack[i], 0.0) / rate[i]
                if a_i < alpha_max:
                    alpha_max, hit = a_i, i
        if hit is not None and soft is not None and soft[hit]:
            alpha, at_boundary = min(1.0, 0.9 * alpha_max), False
        else:
            alpha, at_boundary = min(1.0, alpha_max), alpha_max <= 1.0
        # Armijo backtracking; the trial point's derivatives come with its value, since the
        # first trial is almost always accepted (one pass over the data per iteration).
        for _ in range(40):
            trial = x + alpha * d
            if at_boundary:
                # Land exactly on the constraint met.
                gi = G[hit]
                trial = trial - (gi @ trial - h[hit]) / (gi @ gi) * gi
            ft, gt, Ht = oracle(trial)
            if at_boundary and gt is not None and float(gt @ d) < 0:
                # f falls towards the constraint: the ray's maximum is short of it, so the face
                # is not where the step should end. Landing on it anyway can be a trap: next to
                # a face on which some a_n is nearly 0 (a weight of 1e-139 beside wmin = 0) f is
                # finite but its curvature so large that Newton steps from there are ~1e-140.
                # Stop short of it instead, as for a soft constraint.
                alpha, at_boundary = 0.9 * alpha, False
                continue
            if ft >= f + 1e-4 * alpha * decrement:  # False for -inf and NaN
                break
            if polishing and ft >= f - 1e-13 * size:
                break
            alpha *= 0.5
            at_boundary = False
        else:
            if decrement <= 1e-9 * size:
                return x, f, g, "optimal"
            return x, f, g, "line search failed"
        x, f, g, H = trial, ft, gt, Ht
        if at_boundary:
            active.append(hit)
            just_added = hit
            if len(active) == 2 and abs(np.linalg.det(G[active])) < 1e-300:
                active.pop()
    return x, f, g, "max_iter"


def _newton_direction(g, H, x):
    """``-H^{-1} g`` for a negative definite ``H``; on a singular ``H``, Newton in its range.

    The test for singularity is made after a diagonal (Jacobi) scaling, so that coordinates of
    very different sizes (``p`` and ``m`` differ by ``wmax``, up to ``1e6``) do not pass for a
    flat direction. Along a flat direction (the bound depends on the denominators' scale only
    through ``gamma + beta`` when every weight is 1; a single example makes the objective linear)
    the objective is linear: the step goes up it as far as ``x`` is long, and the line search and
    the constraints cut it down.
    """
    diag = np.sqrt(np.where(-np.diag(H) > 0, -np.diag(H), 1.0))
    Hs = H / np.outer(diag, diag)
    gs = g / diag
    det = Hs[0, 0] * Hs[1, 1] - Hs[0, 1] * Hs[1, 0]
    if Hs[0, 0] < 0 and det > 1e-12:
        ds = -np.array([Hs[1, 1] * gs[0] - Hs[0, 1] * gs[1],
                        -Hs[1, 0] * gs[0] + Hs[0, 0] * gs[1]]) / det
        return ds / diag
    vals, vecs = np.linalg.eigh(Hs)
    length = max(np.linalg.norm(x * diag), 1.0)
    ds = np.zeros(2)
    for lam, vec in zip(vals, vecs.T):
        if lam < -1e-6:
            ds -= (vec @ gs) / lam * vec
        elif abs(vec @ gs) > 1e-9 * np.linalg.norm(gs):
            # A flat direction along which f rises. One along which the gradient is rounding
            # noise (every weight 1: f depends on gamma + beta only) gets no step: a long step
            # there would only run into a constraint and hide the Newton step in the range.
            ds += np.sign(vec @ gs) * length * vec
    return ds / diag


# ---------------------------------------------------------------------------------------------
# Lower bound of the interval
# ---------------------------------------------------------------------------------------------
def _cone_basis(wmin, wmax):
    """``T`` with ``(gamma, beta) = T (p, m)``: the cone's edges become the coordinate axes.

    ``p = gamma + beta wmin`` and ``m = (gamma + beta wmax) / wmax``, which tends to ``beta``
    (the constraint at ``w -> inf``) as ``wmax`` grows. In these units the gradient is minus the
    masses of the zero-reward atoms, the one at ``wmax`` weighted by ``wmax`` (its share of
    ``E_Q[w] = 1``), so tolerances on it mean the same at any ``wmax``: with ``m = gamma + beta
    wmax`` and ``wmax = 1e30``, a weighted mass of -0.024 was a gradient of 2.4e-32, and passed.
    """
    if np.isinf(wmax):
        return np.array([[1.0, -wmin], [0.0, 1.0]])
    span = wmax - wmin
    return np.array([[wmax / span, -wmin * wmax / span], [-1.0 / span, wmax / span]])


def _lower_bound_start(w, b, c, n, beta_mle, quantile, T, work):
    """A starting point from the profile dual's quadratic approximation (one pass, no log).

    At the bound, ``q_n`` is the profile solution ``1/(N (1 + beta' (w_n - 1) + tau (w_n u_n -
    v)))``, so ``a = (1 + beta' (w - 1) + tau (w u - v)) / tau``. Near the MLE, with
    ``d = 1 + beta* (w - 1)``, ``e = (w u - v_hat)/d`` and ``f = (w - 1)/d``, the profile
    statistic is about ``(N (v_hat - v))^2 / S`` where ``S = sum c e^2 - (sum c e f)^2 / sum c
    f^2`` (``e`` with the control variate ``f`` regressed out), so the bound is about
    ``v_hat - sqrt(q S)/N``, ``tau = sqrt(q / S)`` and ``beta' = beta* - tau sum c e f / sum c
    f^2``. Returned in the cone coordinates, nudged inside the quadrant.
    """
    work.count(w.size)
    # e needs v_hat, a sum over all rows, so the pass collects the sums of the expanded squares:
    # with z = b/d and g = 1/d, sum c e^2 = sum c z^2 - 2 v_hat sum c z g + v_hat^2 sum c g^2.
    # The expansion cancels when z is nearly constant; S below its rounding floor counts as 0.
    sc = _scratch(3, w.size)
    sums = np.zeros(7)  # sum c z, c z^2, c z g, c g^2, c z f, c g f, c f^2 (f = (w - 1)/d)
    for i, j in _blocks(w.size):
        k = j - i
        g = _inverse_mle_denominator(w[i:j], beta_mle, sc[0, :k])
        z = np.multiply(b[i:j], g, out=sc[1, :k])
        f = np.multiply(w[i:j], g, out=sc[2, :k])
        f -= g
        if c is not None:  # weight one factor of each product by c
            cb = c[i:j]
            cz, cg, cf = cb * z, cb * g, cb * f
        else:
            cz, cg, cf = z, g, f
        sums += (cz.sum(), np.dot(cz, z), np.dot(cz, g), np.dot(cg, g), np.dot(cz, f), np.dot(cg, f),
                 np.dot(cf, f))
    sz, szz, szg, sgg, szf, sgf, s_ff = (float(t) for t in sums)
    v_hat = sz / n
    s_ee = szz - 2.0 * v_hat * szg + v_hat * v_hat * sgg
    s_ef = szf - v_hat * sgf
    if s_ee <= 1e-12 * (szz + v_hat * v_hat * sgg):
        s_ee = 0.0
    S = s_ee - (s_ef * s_ef / s_ff if s_ff > 0 else 0.0)
    if not S > 0 or quantile <= 0:
        gamma, beta = 1.0 - beta_mle, beta_mle
    else:
        tau = np.sqrt(quantile / S)
        v = max(v_hat - np.sqrt(quantile * S) / n, 0.0)
        beta_p = beta_mle - (tau * s_ef / s_ff if s_ff > 0 else 0.0)
        gamma, beta = (1.0 - beta_p - tau * v) / tau, beta_p / tau
    x0 = np.linalg.solve(T, np.array([gamma, beta]))
    return np.maximum(x0, 1e-3 * max(1.0, float(np.abs(x0).max())))


def _inverse_mle_denominator(w, beta, out):
    """``1 / (1 + beta (w - 1))`` into ``out``."""
    np.multiply(w, beta, out=out)
    out += 1.0 - beta
    return np.reciprocal(out, out=out)


def _zero_reward_weights(w, b):
    """The distinct smallest and largest weights of the rows with ``w u = 0`` (a pass)."""
    lo, hi = np.inf, -np.inf
    for i, j in _blocks(w.size):
        z = w[i:j][b[i:j] == 0]
        if z.size:
            lo, hi = min(lo, float(z.min())), max(hi, float(z.max()))
    return sorted({lo, hi}) if lo <= hi else []


def _certify_bound(x, f, g):
    """``"optimal"`` if the dual point ``x`` (cone coordinates) certifies the lower bound ``f``.

    In the cone coordinates ``(p, m)`` (:func:`_cone_basis`) the gradient is minus the masses
    that the primal ``q = kappa / a`` leaves to the zero-reward atoms at ``wmin`` and ``wmax``
    (the atom at ``wmax`` weighted by ``wmax``), so ``q`` is primal feasible when ``g <= 0``; then ``-g . x`` is the primal objective minus the dual one (the duality
    gap). A point that fails is not an optimum, whatever the iteration's stopping rule said.
    """
    if g is None or not np.all(np.isfinite(g)):
        return "not certified (no gradient)"
    worst = float(g.max())
    if worst > FEAS_TOL:
        return f"not certified (an atom's mass is {-worst:.2g})"
    gap = float(-g @ x)
    if gap > GAP_TOL * max(1.0, abs(f)):
        return f"not certified (duality gap {gap:.2g})"
    return "optimal"


def lower_bound(w, u, c, wmin, wmax, loglik, quantile, q_mle=None, beta_mle=0.0,
                wu=None) -> BoundSolution:
    """Lower bound of the EL interval on rewards ``u`` (appendix C corrected: docs/primal-dual.md).

    Solves ``max_{gamma,beta} K geomean_c(gamma + beta w + w u) - gamma - beta`` with
    ``K = exp(-(loglik + quantile/2)/N)`` over ``gamma + beta wmin >= 0``,
    ``gamma + beta wmax >= 0``; then ``kappa = K geomean / N`` and ``q = kappa / a``.
    ``wu``: ``w * u``, if the caller has it (else computed).
    """
    n = float(w.size) if c is None else float(c.sum())
    work = _Work()
    b = w * u if wu is None else wu
    K = np.exp(-(loglik + 0.5 * quantile) / n)
    if not b.max() > 0:
        # Every w u is zero: the bound is 0, attained by any feasible Q (the MLE's, say).
        q = q_mle if q_mle is not None else np.full(w.shape, 1.0 / n)
        return BoundSolution(0.0, 0.0, 0.0, 0.0, q, "optimal (all w u = 0)")
    T = _cone_basis(wmin, wmax)
    lin = T.T @ np.array([1.0, 1.0])  # gradient of gamma + beta in (p, m)
    s = None if c is None else c / n
    # By AM-GM, geomean(a) <= mean(a) = T-linear in (p, m) + mean(b); where the resulting linear
    # majorant of the objective decreases along both axes, sup <= K mean(b). When that is below
    # the accuracy of a reward on [0, 1] (a ball so wide that K underflows), the bound is 0.
    mean_w = _wsum(c, w) / n
    slope = K * (T.T @ np.array([1.0, mean_w])) - lin
    if np.all(slope <= 0) and K * _wsum(c, b) / n <= 1e-13:
        q = q_mle if q_mle is not None else np.full(w.shape, 1.0 / n)
        return BoundSolution(0.0, 0.0, 0.0, 0.0, q, "optimal (bound within 1e-13 of 0)")

    r1_all = np.empty_like(w)  # 1/a of the last evaluation; becomes q at the end
    sc = _scratch(3, w.size)
    last = {}

    (t00, t01), (t10, t11) = T.tolist()
    lin0, lin1 = lin.tolist()

    def oracle(x):
        # Scalars in Python floats: at N ~ 1e3 the 2x2 algebra in numpy cost as much as the pass.
        p, m = float(x[0]), float(x[1])
        gamma, beta = t00 * p + t01 * m, t10 * p + t11 * m
        work.count(w.size)
        last.clear()  # r1_all is about to change
        # sums of s log a, s/a, s w/a, s/a^2, s w/a^2, s w^2/a^2 (s = c/N, or 1/N without counts)
        sl = s1 = s2 = s11 = s12 = s22 = 0.0
        for i, j in _blocks(w.size):
            k = j - i
            wb = w[i:j]
            a = np.multiply(wb, beta, out=sc[0, :k])
            a += b[i:j]
            a += gamma
            # a_n = 0 would mean q_n = inf: never optimal, so it is outside the domain (there
            # the geometric mean alone would be a finite 0 and mislead the line search).
            if not a.min() > 0:
                return -np.inf, None, None
            la = np.log(a, out=sc[1, :k])
            r1 = np.reciprocal(a, out=r1_all[i:j])
            r2 = np.multiply(wb, r1, out=sc[2, :k])
            if s is None:
                sl += float(la.sum())
                s1 += float(r1.sum())
                s2 += float(r2.sum())
                s11 += float(np.dot(r1, r1))
                s12 += float(np.dot(r1, r2))
                s22 += float(np.dot(r2, r2))
            else:
                sb = s[i:j]
                sr1 = np.multiply(sb, r1, out=sc[0, :k])
                sl += float(np.dot(sb, la))
                s1 += float(sr1.sum())
                s2 += float(np.dot(sb, r2))
                s11 += float(np.dot(sr1, r1))
                s12 += float(np.dot(sr1, r2))
                s22 += float(np.dot(np.multiply(sr1, wb, out=sc[1, :k]), r2))
        if not (math.isfinite(s11) and math.isfinite(s12) and math.isfinite(s22)):
            # Some a_n so small that 1/a_n^2 overflows (the caller ignores the warning): far from
            # the optimum, where a_n >= kappa c_n (as sum c q <= 1); the line search backs off.
            return -np.inf, None, None
        if s is None:
            sl, s1, s2, s11, s12, s22 = (t / w.size for t in (sl, s1, s2, s11, s12, s22))
        kg = K * math.exp(sl)
        # In (gamma, beta): gradient kg (m1, m2), Hessian kg (m m^T - M); then mapped through T.
        g0, g1 = kg * s1, kg * s2
        h00, h01, h11 = kg * (s1 * s1 - s11), kg * (s1 * s2 - s12), kg * (s2 * s2 - s22)
        grad = np.array([t00 * g0 + t10 * g1 - lin0, t01 * g0 + t11 * g1 - lin1])
        a00, a01 = t00 * h00 + t10 * h01, t00 * h01 + t10 * h11  # (T^T H)[0]
        a10, a11 = t01 * h00 + t11 * h01, t01 * h01 + t11 * h11  # (T^T H)[1]
        hess = np.array([[a00 * t00 + a01 * t10, a00 * t01 + a01 * t11],
                         [a10 * t00 + a11 * t10, a10 * t01 + a11 * t11]])
        last.update(x=x, kg=kg)
        return kg - (lin0 * p + lin1 * m), grad, hess

    x0 = _lower_bound_start(w, b, c, n, beta_mle, quantile, T, work)
    # The log's domain, a_n = gamma + beta w_n + w_n u_n > 0: rows with w u > 0 are inside it
    # anywhere in the cone; rows with w u = 0 need gamma + beta w > 0 at their smallest and
    # largest weight. Those two lines lie on or just inside the cone's faces, and f is -inf on
    # them (a log barrier), so they are never active: steps stop short of them (soft). Without
    # them, a row with w = 1e-139 next to wmin = 0 made the face p = 0 a barrier in all but name:
    # a step landed on it and the iteration stalled. Listed before the faces, so that a line on a
    # face (its weight observed with w u = 0) wins the tie and the face is never landed on.
    barrier = -np.array([[1.0, wz] for wz in _zero_reward_weights(w, b)]).reshape(-1, 2) @ T
    G = np.vstack([barrier, -np.eye(2)])
    h = np.zeros(len(G))
    soft = [True] * len(barrier) + [False, False]

    # f is a reward on [0, 1], at most K mean(w u) (AM-GM, where the slope above is <= 0): an
    # absolute floor of that size makes 1e-13 x scale an absolute accuracy of 1e-13 at worst.
    # Without a floor, a bound reached only in the limit x -> 0 would be approached one halving
    # at a time; with a floor of 1, a bound of 1e-13 (a ball so wide that K is 1e-9) would count
    # as converged long before its gradient, which the primal q is read from, is.
    floor = min(1.0, K * _wsum(c, b) / n)

    def scale(f, x):
        return abs(f) + abs(float(lin @ x)) + floor

    def gap(x, g):
        # Concavity: f(y) <= f(x) + g (y - x); over y >= 0 that is bounded only when g <= 0.
        return float(-g @ x) if np.all(g <= 0) else np.inf

    def accurate(x, f, g):
        return _certify_bound(x, f, g) == "optimal"

    with np.errstate(over="ignore"):  # the oracle detects overflow
        x, f, g, status = _maximize_2d(oracle, x0, G, h, scale, gap, soft, accurate)
        if status != "optimal":
            # The asymptotic start can be poor at tiny N; retry from the MLE's denominators.
            x0 = np.maximum(np.linalg.solve(T, [1.0 - beta_mle, beta_mle]), 1e-3)
            x, f, g, status = _maximize_2d(oracle, x0, G, h, scale, gap, soft, accurate)
        if last.get("x") is not x:  # r1_all is from another point (a later trial, or none)
            oracle(x)
    if status == "optimal":
        status = _certify_bound(x, f, g)
    gamma, beta = (float(t) for t in T @ x)
    kappa = last["kg"] / n
    q = np.multiply(r1_all, kappa, out=r1_all)
    return BoundSolution(value=float(f), beta=beta, gamma=gamma, kappa=float(kappa), q=q,
                         status=status, work=work.counts())


# ---------------------------------------------------------------------------------------------
# Profile likelihood
# ---------------------------------------------------------------------------------------------
_HUGE_WEIGHT = 1e150  # the profile's 2-d Newton method takes weights up to this


def profile(w, u, c, wmin, wmax, v, beta_mle=None) -> ProfileSolution:
    """``l_v = sup sum c log(1 + beta (w - 1) + tau (w u - v))`` for each ``v`` (paper eq. (lrdual))."""
    v = np.atleast_1d(np.asarray(v, dtype=float))
    d = w - 1.0
    b = w * u
    n = float(w.size) if c is None else float(c.sum())
    work = _Work()
    if beta_mle is None:
        beta_mle, _ = solve_beta(d, c, n, wmin, wmax, work)
    out_l = np.empty(v.shape)
    out_b = np.empty(v.shape)
    out_t = np.empty(v.shape)
    statuses = set()
    sc = _scratch(4, w.size)
    # Beyond 1e150 the Hessian's (w - 1)^2 / a^2 can overflow between the start and the optimum
    # (a weight of 1e300 stopped at a statistic of 3.13 for 3.84): those samples are left to
    # the general solver (elcvx.fast.solve), which works in scaled coordinates.
    huge = bool(d.size) and float(np.max(np.abs(d))) > _HUGE_WEIGHT
    for i, vi in enumerate(v):
        if huge and 0.0 < vi < 1.0:
            out_l[i], out_b[i], out_t[i] = np.nan, np.nan, np.nan
            statuses.add(f"a weight above {_HUGE_WEIGHT:g}: left to the general solver")
            continue
        if vi <= 0.0 or vi >= 1.0:
            # On or outside the range's edge: possible only if the data leave no w u (resp.
            # w (1 - u)) mass, and then the MLE's free atom can take that reward.
            possible = (vi == 0.0 and not np.any(b > 0)) or (vi == 1.0 and not np.any(w * (1 - u) > 0))
            if possible:
                beta, _ = solve_beta(d, c, n, wmin, wmax, work)
                out_l[i] = _wsum(c, np.log1p(beta * d))
                out_b[i], out_t[i] = beta, 0.0
            else:
                out_l[i], out_b[i], out_t[i] = np.inf, np.nan, np.nan
            continue
        def oracle(x, vi=vi):
            beta, tau = float(x[0]), float(x[1])
            work.count(d.size)
            f = g0 = g1 = h00 = h01 = h11 = 0.0
            for i, j in _blocks(d.size):
                k = j - i
                db = d[i:j]
                e = np.subtract(b[i:j], vi, out=sc[0, :k])
                a = np.multiply(db, beta, out=sc[1, :k])
                a += 1.0
                a += np.multiply(e, tau, out=sc[2, :k])
                if not a.min() > 0:
                    return -np.inf, None, None
                cb = None if c is None else c[i:j]
                f += _wsum(cb, np.log(a, out=sc[2, :k]))
                r = np.reciprocal(a, out=a)
                rd = np.multiply(r, db, out=sc[2, :k])
                re = np.multiply(r, e, out=e)
                crd = rd if cb is None else np.multiply(cb, rd, out=sc[1, :k])
                cre = re if cb is None else np.multiply(cb, re, out=sc[3, :k])
                g0 += float(crd.sum())
                g1 += float(cre.sum())
                h00 += float(np.dot(crd, rd))
                h01 += float(np.dot(crd, re))
                h11 += float(np.dot(cre, re))
            if not (math.isfinite(h00) and math.isfinite(h01) and math.isfinite(h11)):
                return -np.inf, None, None  # 1/a^2 overflowed: far from the optimum
            return f, np.array([g0, g1]), -np.array([[h00, h01], [h01, h11]])

        G, h = _corner_constraints(wmin, wmax, vi)

        def scale(f, x):
            return abs(f) + 1.0

        with np.errstate(over="ignore"):  # the oracle detects overflow
            x, f, _, status = _maximize_2d(oracle, np.array([beta_mle, 0.0]), G, h, scale)
        statuses.add(status)
        out_l[i], out_b[i], out_t[i] = f, x[0], x[1]
    status = "optimal" if statuses <= {"optimal"} else ",".join(sorted(statuses))
    return ProfileSolution(loglik=out_l, beta=out_b, tau=out_t, status=status, work=work.counts())


def reference_estimate(sample: Sample):
    """``(base, wmass)`` of eq. (vhatmle) on the unit reward scale, ``V(rho_u) = base + wmass
    rho_u``, with ``beta*`` found by bisection on the derivative of ``sum c log(1 + beta d)`` in
    ``decimal`` arithmetic (40 digits): independent of both solver paths."""
    comp = sample.compress()
    D = Decimal
    with localcontext() as ctx:
        ctx.prec = 40
        w = [D(float(x)) for x in comp.w]
        d = [x - 1 for x in w]
        c = [D(float(x)) for x in comp.counts]
        span = D(sample.rmax) - D(sample.rmin)
        u = [(D(float(x)) - D(sample.rmin)) / span for x in comp.r]
        n = sum(c)
        lo = D(0) if np.isinf(sample.wmax) else -1 / (D(sample.wmax) - 1)
        hi = 1 / (1 - D(sample.wmin))

        def g(b):  # None outside the log's domain
            tot = D(0)
            for ci, di in zip(c, d):
                den = 1 + b * di
                if den <= 0:
                    return None
                tot += ci * di / den
            return tot

        g0 = g(D(0))
        if g0 == 0:
            beta = D(0)
        else:
            a, b = (D(0), hi) if g0 > 0 else (lo, D(0))
            edge = hi if g0 > 0 else lo
            ge = g(edge)
            if ge is not None and ((g0 > 0 and ge >= 0) or (g0 < 0 and ge <= 0)):
                beta = edge
            else:
                for _ in range(140):
                    m = (a + b) / 2
                    gm = g(m)
                    if gm is None:  # past the domain: on the side of the edge
                        gm = D(-1) if g0 > 0 else D(1)
                    a, b = (m, b) if gm > 0 else (a, m)
                beta = (a + b) / 2
        cq = [ci / (n * (1 + beta * di)) for ci, di in zip(c, d)]
        base = sum(x * wi * ui for x, wi, ui in zip(cq, w, u))
        wmass = 1 - sum(x * wi for x, wi in zip(cq, w))
        return float(base), float(wmass)
