"""An active-set Newton method: ``max f(x)`` subject to ``A x + h >= 0``, with few variables.

``f`` is concave and given by an oracle that makes one pass over the data per call and returns
``(f, grad, hess, size)``: ``f = -inf`` outside its domain, and ``size`` the magnitude of the
terms that cancel in ``f`` (its rounding error is about ``1e-16 size``). The constraints' rows
are scaled to size one, so that their multipliers are masses (probabilities).

Each iteration takes the Newton step on the *face* of the working set (the constraints held
at equality): the maximiser of the quadratic model on the face, from its null space, after a
diagonal (Jacobi) scaling so that coordinates of very different sizes are treated alike. The
working set's multipliers are read at the end of that step (where the curvature is large, a
gradient of ``1e-10`` can change sign within it), and a constraint whose multiplier is negative
leaves the working set before the step is taken. The step then goes as far as the nearest
blocking constraint (the ratio test), lands exactly on it and adds it, unless ``f`` falls
towards it (its maximum on the ray is short of the face) or is ``-inf`` on it (a row on the
face: a log barrier, never active at the optimum); then the step stops short, at 90% of the
way, as an interior-point method would. Armijo backtracking shortens a step that does not
gain; a full step along which ``f`` barely bends is extended by a safeguarded Newton search
on the ray (bisection inside the feasible segment), which reaches an optimum a factor ``1e100``
away in a handful of passes where plain Newton steps only double the distance.

The iteration stops at the rounding floor: when the face's Newton decrement is below
``1e-13 size`` and every multiplier is non-negative; and since the primal solution is read from
the gradient (the multipliers balance it), up to three more Newton steps are taken while the
KKT residual ``grad + A_W' mu`` exceeds ``kkt_tol`` (each accepted when it keeps ``f`` within
rounding). Where the dual is nearly flat (weights within 1e-10 of 1), the decrement can be
large while the nearest constraint is so close that the gain up to it, ``decrement x
alpha``, is below ``f``'s rounding: no step can show a gain there, so the point is optimal if
its KKT residual is met, and otherwise that constraint joins the working set without a step
(unless it is far in ``x``: then ``x`` moves onto it, accepted within rounding). At each new
point a concavity bound on the remaining gain, ``mu . (A x + h)`` with ``-g = A' mu, mu >= 0``,
also ends the iteration when negligible (a supremum approached only at a cone's apex). A
working set already tried at a point is not re-entered (a degenerate vertex cycled). Most
iterations cost one pass: dropping or adding a constraint without a step costs none.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.optimize import nnls

from ..status import OPTIMAL, Status
from . import cone

MAX_ITER = 200
#: The status of a polishing step taken (``maximize(polish=True)``).
POLISHED = Status("polished")
_FLOOR = 1e-13  # a Newton decrement below this times ``size`` is f's rounding
_LOOSE = 1e-9  # a line search that finds no gain, with a decrement below this, is converged
_MU_TOL = 1e-13  # a multiplier below -_MU_TOL (a mass) leaves the working set
_SHORT = 0.9  # a step that must not land on a face stops at this fraction of the way
_BENDS = 0.4  # a full step whose slope at its end is above this fraction of its start: extend
_ESCAPES = 20  # steps out of degenerate vertices at most (:func:`_settle`)


class Outcome(NamedTuple):
    x: np.ndarray
    f: float
    g: np.ndarray
    masses: np.ndarray  # the constraints' multipliers at x (0 off the working set)
    status: Status


def maximize(oracle, x0, A, h, *, kkt_tol=1e-11, gap_tol=0.0, max_iter=MAX_ITER,
             flat_slope=None, polish=False) -> Outcome:
    """Maximise a concave ``f`` subject to ``A x + h >= 0`` from a feasible ``x0`` (in the
    oracle's domain; on a face is fine). See the module's docstring; ``gap_tol``: an absolute
    accuracy of ``f`` that suffices (besides its rounding floor), for :func:`_gap`.
    ``flat_slope(d)``: ``f``'s exact slope along a direction ``d`` in which its Hessian is null
    (a redundant constraint: ``f`` is linear there), where the gradient's is rounding.
    ``polish``: one Newton step towards the rounding floor of the gradient from a point where
    ``f`` is at its own (no stop on ``f``'s concavity gap; each step accepted if ``f`` stays
    within rounding): the status is ``"polished"`` once a step is taken, else as above."""
    x = np.array(x0, dtype=float)
    f, g, H, size = oracle(x)
    none = np.zeros(len(A))
    if not math.isfinite(f):
        return Outcome(x, f, g, none, Status("start outside the domain"))
    # A polishing step starts on the faces x meets (independent ones): from an empty working set
    # the unconstrained step, far longer than the face's, only lands on a face met to rounding.
    it = _Iterate((x, f, g, H, size), _faces_met(A, h, x) if polish else [])
    soft = np.zeros(len(A), dtype=bool)  # faces on which f is -inf
    polished = 0

    for _ in range(max_iter):
        if it.moved and not polish:
            gap, masses = _gap(it.g, A, h, it.x)
            if gap <= max(_FLOOR * it.size, gap_tol):
                return Outcome(it.x, it.f, it.g, masses, OPTIMAL)
            it.moved = False
        active = it.active
        it.seen.add(frozenset(active))
        d, mu = _face_step(it.g, it.H, A[active] if active else A[:0], it.x, flat_slope)
        decrement = float(it.g @ d)
        stationary = decrement <= _FLOOR * it.size
        if active and mu.min() < -_MU_TOL:
            worst = active[int(np.argmin(mu))]
            if stationary and worst in it.blind:
                # Leaving the face means stepping into a constraint that is nearer than f's
                # rounding can tell: f cannot gain visibly anywhere (if x is a KKT point).
                out = _settle_or_escape(it, oracle, A, h, soft)
                if out is not None:
                    return out
                continue
            # (A multiplier within rounding of 0 at a degenerate vertex can send the working
            # set round a cycle: a face already tried here is not re-entered.)
            if ((stationary or worst != it.just_added)
                    and frozenset(active) - {worst} not in it.seen):
                active.remove(worst)
                it.just_added = None
                continue
        it.just_added = None
        # The ratio test: the nearest constraint that the step would cross.
        hit, alpha_max = _ratio_test(A, h, it.x, d, active)
        # The gain up to there, at most, by concavity: below f's rounding, no step can show it.
        visible = decrement * min(alpha_max, 1.0) > _FLOOR * it.size
        if stationary or not visible:
            masses, residual = _multipliers(it.g, A, active)
            if residual <= kkt_tol or (stationary and (polished >= 3 or not np.any(d))):
                out = _settle_or_escape(it, oracle, A, h, soft)
                if out is not None:
                    return out
                continue
        invisible = (not visible and not stationary and alpha_max > 0.0
                     and _independent(A, active + [hit]))
        # Where the face is near in f but not in x (a coordinate whose curvature is 1e-33 of
        # another's: a weight of 1e16), x must move onto it, at no visible gain.
        far = invisible and alpha_max * float(np.abs(d).max()) > 1e-9 * max(
            1.0, float(np.abs(it.x).max()))
        if alpha_max <= 0.0 or (invisible and not far):
            # Blocked where the step starts, or nearer than rounding: take the face in.
            active.append(hit)
            it.just_added = hit
            if alpha_max > 0.0:
                it.blind.add(hit)
            continue
        polishing = stationary
        polished += polishing  # f is converged, the gradient (q, the masses) not yet
        step = _line_search(oracle, it.x, it.f, d, decrement, it.size, A, h, active, hit,
                            alpha_max, soft, polishing or far or polish)
        if step is None:
            masses, residual = _multipliers(it.g, A, active)
            # f's rounding hides the gain; or x meets the KKT conditions (sufficient for a
            # concave f) while f is flat to rounding along the step (every weight 1).
            if decrement <= _LOOSE * it.size or residual <= kkt_tol:
                out = _settle_or_escape(it, oracle, A, h, soft)
                if out is not None:
                    return out
                continue
            return Outcome(it.x, it.f, it.g, none, Status("line search failed"))
        it.move(step)
        if polish:
            return Outcome(it.x, it.f, it.g, none, POLISHED)
        if step[5] and _independent(A, active + [hit]):  # (landed on the face hit)
            active.append(hit)
            it.just_added = hit
    return Outcome(it.x, it.f, it.g, none, Status("max_iter"))


class _Iterate:
    """:func:`maximize`'s state between iterations: the point ``x`` and the oracle's ``(f, g, H,
    size)`` there; the working set ``active``; ``just_added``, the constraint taken in last;
    ``blind``, those taken in without a step since the last step; ``seen``, the working sets
    tried at this ``x`` (dropping back into one cycles); ``moved``, whether ``x`` is new (its
    concavity gap not yet known); ``escapes``, the steps out of a degenerate vertex so far
    (:func:`_settle`)."""

    __slots__ = ("x", "f", "g", "H", "size", "active", "just_added", "blind", "seen", "moved",
                 "escapes")

    def __init__(self, point, active):
        self.x, self.f, self.g, self.H, self.size = point
        self.active: list[int] = active
        self.just_added = None
        self.blind: set[int] = set()
        self.seen: set[frozenset] = set()
        self.moved = True
        self.escapes = 0

    def move(self, step):
        """To the point of a line search's ``step`` (``(x, f, g, H, size, landed)``): a new
        ``x``, whose gap is not yet known and at which no working set has been tried."""
        self.x, self.f, self.g, self.H, self.size = step[:5]
        self.moved = True
        self.blind.clear()
        self.seen.clear()


def _settle_or_escape(it, oracle, A, h, soft):
    """:func:`_settle` at ``it``'s point: its outcome where the point is settled; else None,
    with ``it`` moved out of the degenerate vertex and its working set emptied."""
    settled, out = _settle(oracle, it.x, it.f, it.g, it.H, it.size, A, h, soft, it.escapes)
    if settled:
        return out
    it.move(out)
    it.escapes += 1
    it.active, it.just_added = [], None
    return None


def _settle(oracle, x, f, g, H, size, A, h, soft, escapes):
    """``(True, Outcome)`` where ``x`` is a KKT point: ``-g = A_N' mu`` with ``mu >= 0`` over
    the constraints ``N`` that ``x`` meets to rounding (nonnegative least squares: not only the
    working set's, which at a degenerate vertex — more constraints met than variables, an atom
    listed twice, a duplicate constraint — can be the wrong ones and their multipliers of
    either sign). Else ``(False, step)``: the step along the steepest ascent direction that
    keeps every such constraint (a small LP), found by the line search. After
    :data:`_ESCAPES` such steps, or where none gains, ``x`` is returned as it is (the
    certificate judges it)."""
    near = _met(A, h, x)
    masses = np.zeros(len(A))
    top = max(1.0, float(np.abs(g).max()))
    if near.size:
        mu, off = cone.fit(A[near], g, maxiter=50 * len(near) + 100)
        masses[near] = mu
    else:
        off = float(np.linalg.norm(g))
    if off <= 1e-10 * top or escapes >= _ESCAPES:
        return True, Outcome(x, f, g, masses, OPTIMAL)
    d = _ascent(g, H, A[near])
    decrement = float(g @ d) if d is not None else 0.0
    if not decrement > _FLOOR * size:
        return True, Outcome(x, f, g, masses, OPTIMAL)
    hit, alpha_max = _ratio_test(A, h, x, d, list(near))
    step = _line_search(oracle, x, f, d, decrement, size, A, h, [], hit, alpha_max, soft, False)
    if step is None:
        return True, Outcome(x, f, g, masses, OPTIMAL)
    return False, step


def _met(A, h, x):
    """The constraints ``x`` meets to rounding."""
    scale = np.maximum(1.0, np.abs(A) @ np.abs(x) + np.abs(h))
    return np.flatnonzero(A @ x + h <= 1e-12 * scale)


def _faces_met(A, h, x, g=None):
    """The constraints ``x`` meets to rounding, each independent of those before it; with the
    gradient ``g``, those that carry mass (a positive multiplier in ``-g = A_N' mu``, ``mu >=
    0``) only: a face met with no mass, at a degenerate vertex, would hold a step off a
    direction it needs (:func:`along_the_valley`)."""
    near = _met(A, h, x)
    if g is not None and near.size and np.all(np.isfinite(g)):
        mu, _ = nnls(A[near].T, -g, maxiter=50 * len(near) + 100)
        near = near[mu > 1e-12 * max(1.0, float(mu.max()))]
    rows: list[int] = []
    for i in near:
        if _independent(A, rows + [int(i)]):
            rows.append(int(i))
    return rows


def along_the_valley(oracle, x, A, h):
    """A point down a flat valley of ``f`` from ``x``, where its faces stop it, or None.

    At the optimum of a dual whose Hessian on the faces carrying mass has a direction of
    curvature below ``1e-9`` of the largest (a constraint nearly redundant: ``f`` rises by
    ``1e-9`` over a move of 10), the Newton method stops where the gain is below ``f``'s
    rounding, but the primal point its gradient gives is off (a certificate's correction, or its
    likelihood made up, at 1e-6). ``f`` rises along the direction the whole way: the point is
    the first face it meets (the ratio test), from which the method starts again."""
    f, g, H, size = oracle(x)
    if not (math.isfinite(f) and np.all(np.isfinite(H))):
        return None
    faces = _faces_met(A, h, x, g)
    Z = _null_space(A[faces] / np.linalg.norm(A[faces], axis=1, keepdims=True)) if faces else (
        np.eye(len(x)))
    if not Z.shape[1]:
        return None
    dg = -np.diag(H)
    diag = np.sqrt(np.where((dg > 0) & np.isfinite(dg), dg, 1.0))
    Zs = np.linalg.qr(Z * diag[:, None])[0]
    vals, vecs = np.linalg.eigh(Zs.T @ (H / np.outer(diag, diag)) @ Zs)
    for lam, vec in zip(vals, vecs.T):
        if lam < -1e-9 * max(1e-300, -vals.min()):
            continue
        v = (Zs @ vec) / diag
        slope = float(g @ v)
        if slope < 0:
            v, slope = -v, -slope
        if not slope > 0:
            continue
        hit, alpha = _ratio_test(A, h, x, v, faces)
        if not (0.0 < alpha < math.inf):
            continue
        y = _project(x + alpha * v, A, h, faces + [hit])
        if np.all(A @ y + h >= -1e-12 * np.maximum(1.0, np.abs(A) @ np.abs(y) + np.abs(h))) and (
                oracle(y)[0] >= f):
            return y
    return None


def _ascent(g, H, AN):
    """The ascent direction ``d`` with ``AN d >= 0`` that maximises ``g . d`` in the box of the
    Jacobi scaling (an LP), scaled to the Newton step along it; None if there is none."""
    from scipy.optimize import linprog

    m = g.size
    dg = -np.diag(H)
    diag = np.sqrt(np.where((dg > 0) & np.isfinite(dg), dg, 1.0))
    res = linprog(-g / diag, A_ub=-(AN / diag) if len(AN) else None,
                  b_ub=np.zeros(len(AN)) if len(AN) else None, bounds=[(-1.0, 1.0)] * m,
                  method="highs")
    if res.status != 0:
        return None
    d = res.x / diag
    slope, curv = float(g @ d), float(d @ H @ d)
    if not slope > 0:
        return None
    return d * (slope / -curv) if curv < 0 else d


def _gap(g, A, h, x):
    """``(gap, mu)``: an upper bound on ``sup f - f(x)`` over the feasible set, by concavity.

    Where ``-g = A' mu`` for some ``mu >= 0`` (Farkas: ``g`` points out of the feasible set),
    ``f(y) <= f(x) + g . (y - x) = f(x) + mu . (A x - A y) <= f(x) + mu . (A x + h)`` for every
    feasible ``y``; else the bound is infinite. It ends an approach to a supremum at the apex of
    a cone (a bound that is 0 to rounding, reached only as ``x -> 0``), where Newton steps only
    halve the distance."""
    gl = g.tolist()
    if not len(A) or not all(map(math.isfinite, gl)):
        return math.inf, np.zeros(len(A))
    mu, off = cone.fit(A, g, listed=gl)
    if not off <= 1e-12 * max(1.0, max(map(abs, gl))):
        return math.inf, mu
    return float(mu @ np.maximum(A @ x + h, 0.0)), mu


def _face_step(g, H, AW, x, flat_slope=None):
    """``(d, mu)``: the Newton step ``d`` on the face ``A_W d = 0`` and the multipliers ``mu``
    with ``g + H d + A_W' mu = 0`` at its end.

    After a Jacobi scaling, ``H`` is inverted on the face where it is well conditioned; along a
    flat direction (a linear ``f``: one example, every weight 1) the step goes up as far as
    ``x`` is long, or not at all where the slope is rounding noise, and the ratio test and the
    line search cut it down.
    """
    m = g.size
    if not len(AW) and m <= 2:
        d = _small_newton_step(g, H)
        if d is not None:
            return d, np.zeros(0)
    dg = -np.diag(H)
    diag = np.sqrt(np.where((dg > 0) & np.isfinite(dg), dg, 1.0))
    Hs = H / np.outer(diag, diag)
    gs = g / diag
    As = AW / diag
    Z = np.eye(m)
    if len(AW):
        # The face's directions in x, then scaled: a null space computed from the scaled rows
        # loses a direction's small component to cancellation (a weight of 1e16 makes one
        # coordinate's scale 1e-16 of another's), which the unscaling then multiplies back.
        Zx = _null_space(AW / np.linalg.norm(AW, axis=1, keepdims=True))
        Z = np.linalg.qr(Zx * diag[:, None])[0] if Zx.shape[1] else Zx
    ds = np.zeros(m)
    if Z.shape[1]:
        gr = Z.T @ gs
        curvature = Z.T @ Hs @ Z
        if curvature.shape == (1, 1):
            # (A face of one direction: LAPACK's eigenpair of one number is that number and 1.)
            vals, vecs = curvature[0], np.ones((1, 1))
        else:
            vals, vecs = np.linalg.eigh(curvature)
        c = vecs.T @ gr
        if vals.max() < -1e-12 * max(1.0, -vals.min()):
            p = vecs @ (-c / vals)
        else:
            length = max(float(np.linalg.norm(x * diag)), 1.0)
            p = np.zeros(len(vals))
            norm = float(np.linalg.norm(gr))
            null = 1e-12 * max(1.0, -vals.min())
            for lam, ci, vec in zip(vals, c, vecs.T):
                if flat_slope is not None and abs(lam) <= null:
                    # A null direction (f linear along it): its exact slope, not the rounding
                    # of the gradient's, which would send the step round the flat set; below
                    # the accuracy of the direction itself (unscaled from a weight of 1e6 it
                    # is known to about 1e-10), none.
                    direction = (Z @ vec) / diag
                    ci = flat_slope(direction)
                    if abs(ci) <= 1e-10 * float(np.linalg.norm(g) * np.linalg.norm(direction)):
                        ci = 0.0
                if lam < -1e-6:
                    p -= ci / lam * vec
                elif abs(ci) > 1e-9 * norm:
                    p += np.sign(ci) * length * vec
        ds = Z @ p
    if len(AW) == 1:  # (the least squares multiplier of one constraint: a projection)
        mu = np.array([-float(As[0] @ (gs + Hs @ ds)) / float(As[0] @ As[0])])
    else:
        mu = np.linalg.lstsq(As.T, -(gs + Hs @ ds), rcond=None)[0] if len(AW) else np.zeros(0)
    return ds / diag, mu


def _small_newton_step(g, H):
    """The common case of :func:`_face_step`, in closed form: no constraint in the working set,
    one or two variables, ``H`` negative definite after the Jacobi scaling (its eigenvalues
    ``-1 +- r``, ``r`` the scaled off-diagonal entry, below ``-1e-12`` of the largest in
    size): the Newton step ``-H^-1 g``, by the same scaling. None otherwise (the general
    method, with its flat directions)."""
    gl, Hl = g.tolist(), H.tolist()  # (Python floats: fewer numpy calls, the same values)
    if len(gl) == 1:
        dg = -Hl[0][0]
        if not (dg > 0 and math.isfinite(dg)):
            return None
        return np.array([gl[0] / dg])
    d0, d1 = -Hl[0][0], -Hl[1][1]
    if not (d0 > 0 and d1 > 0 and math.isfinite(d0) and math.isfinite(d1)):
        return None
    s0, s1 = math.sqrt(d0), math.sqrt(d1)
    r = Hl[0][1] / (s0 * s1)
    if not -1.0 + abs(r) < -1e-12 * (1.0 + abs(r)):
        return None
    g0, g1 = gl[0] / s0, gl[1] / s1
    det = 1.0 - r * r
    return np.array([(g0 + r * g1) / det / s0, (r * g0 + g1) / det / s1])


def _ratio_test(A, h, x, d, active):
    """``(i, alpha)``: the nearest constraint ``i`` off the working set that ``x + alpha d``
    meets (``alpha = inf`` if none). One met where the step starts (``alpha = 0``) is
    independent of the working set, else it is ignored: the step does not cross it but for
    rounding."""
    s = A @ x + h
    rate = A @ d
    if len(A) <= _FEW_ROWS:
        found = _nearest(A, s.tolist(), rate.tolist(), d, active)
        if found is not None:
            return found
    rate[active] = 0.0
    rate[np.abs(rate) <= 1e-14 * (np.abs(A) @ np.abs(d))] = 0.0  # rounding, not a crossing
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(rate < 0, np.maximum(s, 0.0) / -rate, np.inf)
    while len(ratios):
        hit = int(np.argmin(ratios))
        if ratios[hit] > 0.0 or _independent(A, active + [hit]):
            return hit, float(ratios[hit])
        ratios[hit] = np.inf
    return 0, math.inf


#: :func:`_ratio_test` goes through at most this many constraints one by one, in Python floats
#: (a few numpy calls less: the common case has two atoms).
_FEW_ROWS = 8


def _nearest(A, s, rate, d, active):
    """:func:`_ratio_test` on the slacks ``s`` and the rates ``rate`` (lists of floats), row
    by row, with the same operations (so the same answer); None where one is not finite
    (the array version's NaN handling)."""
    if not (all(map(math.isfinite, s)) and all(map(math.isfinite, rate))):
        return None
    noise = None
    crossings = []
    for i, r in enumerate(rate):
        if r < 0.0 and i not in active:
            if noise is None:
                noise = (np.abs(A) @ np.abs(d)).tolist()
            if -r <= 1e-14 * noise[i]:
                continue  # rounding, not a crossing
            crossings.append(((s[i] if s[i] > 0.0 else 0.0) / -r, i))
    crossings.sort()
    for ratio, i in crossings:
        if ratio == math.inf:
            break  # (as np.argmin of all inf: the first row, never reached)
        if ratio > 0.0 or _independent(A, active + [i]):
            return i, ratio
    return 0, math.inf


def _null_space(M):
    """An orthonormal basis of ``{z : M z = 0}`` (``M`` of full row rank)."""
    q, _ = np.linalg.qr(M.T, mode="complete")
    return q[:, M.shape[0]:]


def _independent(A, rows):
    """Whether the (normalised) rows of ``A`` are linearly independent."""
    M = A[rows]
    M = M / np.linalg.norm(M, axis=1, keepdims=True)
    sv = np.linalg.svd(M, compute_uv=False)
    return len(rows) <= A.shape[1] and sv.min() > 1e-10


def _multipliers(g, A, active):
    """``(masses, residual)``: least-squares multipliers of the working set at ``x`` (zeros
    elsewhere) and the largest entry of the KKT residual ``g + A_W' mu``."""
    masses = np.zeros(len(A))
    if not active:
        return masses, float(np.abs(g).max())
    if len(active) == 1:
        # (One constraint: the least squares multiplier is the projection.)
        a = A[active[0]]
        mu = np.array([-float(a @ g) / float(a @ a)])
    else:
        mu = np.linalg.lstsq(A[active].T, -g, rcond=None)[0]
    masses[active] = mu
    residual = g + A[active].T @ mu
    return masses, max(float(np.abs(residual).max()), float(-min(mu.min(), 0.0)))


def _project(x, A, h, rows):
    """``x`` moved (least change) onto ``A_i x + h_i = 0`` for ``i`` in ``rows``."""
    if not rows:
        return x
    M = A[rows]
    return x - np.linalg.lstsq(M, M @ x + h[rows], rcond=None)[0]


def _line_search(oracle, x, f, d, decrement, size, A, h, active, hit, alpha_max, soft, polishing):
    """``(x, f, g, H, size, landed)`` after the step along ``d``, or None if nothing gains."""
    landing = alpha_max <= 1.0 and not soft[hit]
    alpha = min(1.0, alpha_max if landing else _SHORT * alpha_max)
    for _ in range(60):
        trial = _project(x + alpha * d, A, h, active + [hit] if landing else active)
        ft, gt, Ht, st = oracle(trial)
        if landing and not math.isfinite(ft):
            soft[hit] = True  # f is -inf on the face (a row on it): never land there again
        if landing and (not math.isfinite(ft) or float(gt @ d) < 0):
            # f falls towards the face: its maximum on the ray is short of it. Landing anyway
            # can be a trap: next to a face on which some row's term is nearly 0 (a weight of
            # 1e-139 beside wmin = 0), f is finite but so curved that Newton steps are tiny.
            alpha, landing = _SHORT * alpha, False
            continue
        if ft >= f + 1e-4 * alpha * decrement:  # False for -inf and NaN
            if alpha == 1.0 and not landing and float(gt @ d) > _BENDS * decrement:
                return _ray_search(oracle, x, d, decrement, (trial, ft, gt, Ht, st), A, h,
                                   active, hit, alpha_max, soft)
            return trial, ft, gt, Ht, st, landing
        if polishing and ft >= f - _FLOOR * size:
            return trial, ft, gt, Ht, st, landing
        alpha *= 0.5
        landing = False
    return None


def _ray_search(oracle, x, d, slope0, first, A, h, active, hit, alpha_max, soft):
    """The full Newton step gained but ``f`` barely bent along it (``f`` like ``log`` of a
    coordinate near 0: each Newton step only doubles it): a safeguarded Newton iteration on the
    slope along the ray, bisecting the feasible segment when Newton does not halve its step
    (as Numerical Recipes' rtsafe), until the slope has fallen below a quarter of its start.
    Returns the best point found, as :func:`_line_search` does."""
    best = first + (False,)
    lo, hi = 1.0, alpha_max
    slope_lo, curv_lo = float(first[2] @ d), float(d @ first[3] @ d)
    step_before = 1.0  # the Newton step that led here, from 0 to 1
    for _ in range(60):
        if slope_lo <= 0.25 * slope0 or hi - lo <= 1e-12 * hi:
            break
        newton = lo + slope_lo / -curv_lo if curv_lo < 0 else math.inf
        landing = False
        if math.isfinite(hi) and hi == alpha_max and not soft[hit] and not newton < hi:
            new, landing = hi, True  # Newton leaves the segment: try its end, the face
        elif newton < hi and 2.0 * (newton - lo) <= step_before:
            new = newton
        else:
            new = 0.5 * (lo + hi) if math.isfinite(hi) else max(newton, 2.0 * lo)
        step_before = new - lo
        trial = _project(x + new * d, A, h, active + [hit] if landing else active)
        ft, gt, Ht, st = oracle(trial)
        if not math.isfinite(ft):
            if landing:
                soft[hit] = True
            hi = new
            continue
        slope = float(gt @ d)
        if ft > best[1]:
            best = (trial, ft, gt, Ht, st, landing)
        if landing and slope >= 0:
            break  # f rises up to the face: the step ends on it
        if slope > 0:
            lo, slope_lo, curv_lo = new, slope, float(d @ Ht @ d)
        else:
            hi = new
            if -slope <= 0.25 * slope0:
                break
    return best
