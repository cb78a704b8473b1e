"""Whether a moment-constrained model can hold at all: a small LP on the rows and the atoms.

EL puts positive mass on every logged row (its likelihood is ``-inf`` otherwise) and nonnegative
mass on the extra atoms. Targets ``E_Q[g_j] = b_j`` that no such distribution meets make the
programs' duals unbounded, and no solver can give a number for them; the user should hear which
target is at fault. The LP ``max t`` over row masses ``p_n >= t`` and atom masses ``m_k >= 0``
subject to the moment constraints decides it (feasible with every row kept iff ``t > 0``), and
for each constraint the LP of ``min``/``max E_Q[g_j]`` under the others gives the range its
target must lie in.

The LP is solved in floating point, and with weights of 1e11 beside masses of 1 its answer
can be wrong either way. So a model is named infeasible only when a **Farkas vector** proves
it (:func:`certificate`): a ``y`` with ``y . phi >= 0`` at every row and atom (``phi = (1, w,
g)``, an atom at ``w = inf`` its direction ``(0, 1, g / w)``) and ``y . t <= 0`` (``t = (1, 1,
b)``), strictly somewhere: then ``sum_n c_n Q_n y . phi_n + sum_k m_k y . phi_k = y . t``
cannot hold with every ``Q_n > 0``. The proof is checked in rounding-aware arithmetic
(:func:`proves`): each ``y . phi`` in floating point with a bound on its rounding error, and in
exact rational arithmetic where that bound leaves its sign open. Where no vector is proved,
the model is not named infeasible, and the solver's own error is raised.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from .errors import InfeasibleConstraintsError

# Below this share of the uniform mass 1/N, a row's least mass counts as none (rounding).
_KEPT = 1e-9


def _system(data):
    """``(M, t)``: the equality constraints ``M [p, m] = t`` on the rows' masses per example
    ``p`` (each row counted ``c`` times) and the atoms' scaled masses ``m``: ``E_Q[1] = 1``,
    ``E_Q[w] = 1``, ``E_Q[g_j] = b_j`` (the atoms' columns as :func:`elcvx.constraints.dual_rows`
    scales them)."""
    c = np.ones(data.rows) if data.c is None else np.asarray(data.c, dtype=float)
    F = np.vstack([np.ones(data.rows), data.w, data.Gt]) * c
    wa, ga = data.atoms[:, 0], data.atoms[:, 1:]
    finite = np.isfinite(wa)
    scale = np.where(finite, 1.0 / np.maximum(1.0, np.where(finite, wa, 1.0)), 1.0)
    atoms = np.column_stack([np.where(finite, scale, 0.0), np.where(finite, wa * scale, 1.0),
                             np.where(finite[:, None], ga * scale[:, None], ga)]).T
    return np.hstack([F, atoms]), np.r_[1.0, 1.0, data.b]


def slack(data, drop=None):
    """The largest least row mass (times ``N``) of a distribution meeting the constraints (but
    ``drop``, an index of a constraint left out): positive iff they can hold with every row
    kept; ``-1`` where they cannot hold at all."""
    return _slack_lp(data, drop)[0]


def _slack_lp(data, drop=None):
    """``(slack, y)``: :func:`slack` and the LP's multipliers of the moment constraints (None
    where it has none), the candidate Farkas vector of :func:`certificate`."""
    M, t = _system(data)
    keep = [i for i in range(len(t)) if drop is None or i != 2 + drop]
    M, t = M[keep], t[keep]
    rows, cols = data.rows, M.shape[1]
    # max s: p_n - s/N >= 0, M [p, m] = t, s <= 1.
    cost = np.r_[np.zeros(cols), -1.0]
    A_ub = sparse.hstack([-sparse.eye(rows, cols), np.full((rows, 1), 1.0 / data.n)], format="csr")
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(rows), A_eq=np.hstack([M, np.zeros((len(t), 1))]),
                  b_eq=t, bounds=[(0, None)] * cols + [(None, 1.0)], method="highs")
    y = getattr(getattr(res, "eqlin", None), "marginals", None)
    return (float(-res.fun) if res.status == 0 else -1.0), (None if y is None else np.asarray(y))


# ------------------------------------------------------------------------------------------------
# The Farkas vector
# ------------------------------------------------------------------------------------------------
_U = 2.0 ** -53  # the unit roundoff
# Below this share of the size of its terms, y . phi counts as 0 when a vector is moved onto
# the faces it meets (the LP's multipliers are accurate to about its tolerance, 1e-7).
_ON_FACE = 1e-7


def _columns(data):
    """``(R, A, t)``: the rows' moment vectors ``(1, w, g)`` (one column per row, counts left out:
    a positive factor), the atoms' (``(0, 1, g / w)`` at ``w = inf``) and the targets."""
    R = np.vstack([np.ones(data.rows), data.w, data.Gt])
    wa, ga = data.atoms[:, 0], data.atoms[:, 1:]
    finite = np.isfinite(wa)
    A = np.vstack([finite.astype(float), np.where(finite, wa, 1.0), ga.T])
    return R, A, np.r_[1.0, 1.0, data.b]


def _dots(y, cols):
    """``(a, err)``: ``y . col`` for each column in floating point, and a bound on the error of
    each from the exact value for the exact ``y`` that ``y`` rounds: ``d`` products and sums
    err by at most ``gamma_d sum |y_i col_i|`` (plus ``2**-1074`` each where they underflow),
    ``y``'s own rounding by ``u`` of the same; ``(2 d + 2) u`` covers both, and the rounding of
    the bound itself."""
    d = len(y)
    a = y @ cols
    err = (2 * d + 2) * _U * (np.abs(y) @ np.abs(cols)) + d * 2.0 ** -1074
    return a, err


def _exact_dots(y, cols):
    """``y . col`` of each (distinct) column, in rational arithmetic (``y`` as Fractions)."""
    return [sum((yi * Fraction(float(x)) for yi, x in zip(y, col) if x), Fraction(0))
            for col in np.unique(cols.T, axis=0)]


def proves(y, R, A, t, exact=None) -> bool:
    """Whether ``y`` proves that no distribution keeping every row meets the constraints.

    ``R``, ``A``, ``t`` as :func:`_columns` gives them; ``exact``: the Fractions ``y`` rounds (by
    default ``y`` itself). Two ways, each rigorous for the exact data:

    * **with a margin**: over every distribution (rows possibly dropped) the masses ``x`` of the
      columns (``c_n Q_n`` for a row) meet ``sum x (phi^0 + phi^1) = 2``, each ``phi^0 + phi^1
      = 1 + w >= 1`` (1 at ``w = inf``), so ``sum x (y . phi) >= 2 min(0, min y . phi / (1 +
      w))``; if ``y . t`` is below that, no distribution meets the constraints at all. The dot
      products are taken at their worst within their rounding bounds (:func:`_dots`).
    * **strictly**: every ``y . phi >= 0`` and ``y . t <= 0`` exactly (the signs the rounding
      bounds leave open decided in rational arithmetic), and ``y . t < 0`` or ``y . phi > 0`` at
      a row: then some row's mass must be 0.
    """
    y = np.asarray(y, dtype=float)
    if not (np.all(np.isfinite(y)) and np.any(y)):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        (ar, er), (aa, ea), (ty, et) = _dots(y, R), _dots(y, A), _dots(y, t[:, None])
        ty, et = float(ty[0]), float(et[0])
        nu_r, nu_a = 1.0 + R[1], np.where(A[0] > 0, 1.0 + A[1], 1.0)
        worst = max(0.0, float(np.max((er - ar) / nu_r, initial=0.0)),
                    float(np.max((ea - aa) / nu_a, initial=0.0)))
    if not all(np.isfinite(v) for v in (ty, et, worst, ar.sum(), aa.sum())):
        return False
    high = ty + et  # (y . t is at most this)
    if high < 0 and 2.0 * worst * (1 + 1e-12) < -high * (1 - 1e-12):
        return True
    exact = [Fraction(float(v)) for v in y] if exact is None else exact
    open_r, open_a = ar - er < 0, aa - ea < 0
    tied = _exact_dots(exact, np.hstack([R[:, open_r], A[:, open_a]]))
    if any(x < 0 for x in tied):
        return False
    ty = sum((yi * Fraction(float(x)) for yi, x in zip(exact, t)), Fraction(0))
    if ty > 0:
        return False
    return ty < 0 or bool(np.any(ar - er > 0)) or any(x > 0 for x in _exact_dots(
        exact, R[:, open_r]))


def _onto_faces(y, R, A, t):
    """``y`` moved exactly onto the faces it nearly meets: the Fractions of ``y`` projected onto
    the orthogonal complement of ``t`` (where ``y . t`` is nearly 0) and of the rows' and atoms'
    columns at which ``y . phi`` is within :data:`_ON_FACE` of the size of its terms (a basis of
    their span, chosen by a pivoted QR in floating point; the projection is exact). None where
    nothing is left of ``y``."""
    from scipy.linalg import qr

    cols = np.hstack([R, A])
    size = np.abs(y) @ np.abs(cols)
    near = np.abs(y @ cols) <= _ON_FACE * size
    face = np.unique(cols[:, near].T, axis=0).T
    basis = []
    if abs(y @ t) <= _ON_FACE * (np.abs(y) @ np.abs(t)):
        basis.append(t)
    if face.size:
        unit = face / np.maximum(np.abs(face).max(axis=0), 1e-300)
        if basis:  # (the rest of the span, beside t)
            tn = t / np.linalg.norm(t)
            unit = unit - np.outer(tn, tn @ unit)
        _, r, piv = qr(unit, mode="economic", pivoting=True)
        diag = np.abs(np.diag(r))
        rank = int(np.sum(diag > 1e-10 * max(diag.max(initial=0.0), 1e-300)))
        basis += [face[:, j] for j in piv[:rank]]
    if not basis or len(basis) >= len(y):
        return None
    B = [[Fraction(float(x)) for x in col] for col in basis]
    z = [Fraction(float(v)) for v in y]
    # z - B (B'B)^-1 B' z, exactly (Gram-Schmidt in rationals)
    ortho = []
    for b in B:
        for o, oo in ortho:
            f = sum(x * p for x, p in zip(b, o)) / oo
            b = [x - f * p for x, p in zip(b, o)]
        oo = sum(x * x for x in b)
        if oo:
            ortho.append((b, oo))
    for o, oo in ortho:
        f = sum(x * p for x, p in zip(z, o)) / oo
        z = [x - f * p for x, p in zip(z, o)]
    if not any(z):
        return None
    return z


def _farkas_lps(R, A, t):
    """Candidate Farkas vectors from two LPs over ``y`` in a box, each coordinate scaled by its
    largest entry and each column by its own: the least ``y . t`` with every ``y . phi >= 0``;
    and the largest sum of the rows' ``y . phi`` with every ``y . phi >= 0`` and ``y . t <=
    0`` (the strict kind: a row that must be dropped)."""
    cols = np.unique(np.hstack([R, A]).T, axis=0).T
    D = np.maximum(np.abs(np.hstack([cols, t[:, None]])).max(axis=1), 1e-300)
    unit = cols / D[:, None]
    unit = unit / np.maximum(np.abs(unit).max(axis=0), 1e-300)
    tu = t / D
    box = [(-1.0, 1.0)] * len(t)
    out = []
    res = linprog(tu, A_ub=-unit.T, b_ub=np.zeros(unit.shape[1]), bounds=box, method="highs")
    if res.status == 0:
        out.append(res.x / D)
    rows = np.unique(R.T, axis=0).T / D[:, None]
    rows = rows / np.maximum(np.abs(rows).max(axis=0), 1e-300)
    res = linprog(-rows.sum(axis=1), A_ub=np.vstack([-unit.T, tu]), b_ub=np.zeros(unit.shape[1] + 1),
                  bounds=box, method="highs")
    if res.status == 0:
        out.append(res.x / D)
    return out


def certificate(data, y=None):
    """A Farkas vector (Fractions) that :func:`proves` the model cannot hold with every row kept,
    or None. Candidates: ``y`` (the slack LP's multipliers of the constraints, if given; either
    sign), then those of :func:`_farkas_lps`, each as it is and moved exactly onto the faces it
    nearly meets (:func:`_onto_faces`)."""
    R, A, t = _columns(data)
    tried = [] if y is None else [-np.asarray(y, dtype=float), np.asarray(y, dtype=float)]
    for candidate in _candidates(tried, lambda: _farkas_lps(R, A, t)):
        if not (np.all(np.isfinite(candidate)) and np.any(candidate)):
            continue
        if proves(candidate, R, A, t):
            return [Fraction(float(v)) for v in candidate]
        z = _onto_faces(candidate, R, A, t)
        if z is not None and proves(np.array([float(v) for v in z]), R, A, t, exact=z):
            return z
    return None


def _candidates(first, more):
    yield from first
    yield from more()


def target_range(data, j):
    """``(lo, hi)``: the values ``E_Q[g_j]`` takes over the distributions keeping every row
    (their closure) that meet every other constraint."""
    M, t = _system(data)
    others = [i for i in range(len(t)) if i != 2 + j]
    cols = M.shape[1]
    ends = []
    for sign in (1.0, -1.0):
        res = linprog(sign * M[2 + j], A_eq=M[others], b_eq=t[others],
                      bounds=[(0, None)] * cols, method="highs")
        ends.append(sign * float(res.fun) if res.status == 0 else np.nan)
    return ends[0], ends[1]


def check(data, names):
    """Raise :class:`~elcvx.errors.InfeasibleConstraintsError` if the model's constraints cannot
    hold with every logged row kept (a Farkas vector proves it: :func:`certificate`), naming the
    constraint at fault where one is; else return (the model is feasible, or not proved
    infeasible: a solver's failure on it is the solver's)."""
    # (The LP's own verdict is not used: at weights of 1e9 it called infeasible models feasible.)
    if certificate(data, _slack_lp(data)[1]) is None:
        return
    culprits = [j for j in range(data.k) if slack(data, drop=j) > _KEPT]
    if len(culprits) == 1:
        j = culprits[0]
        lo, hi = target_range(data, j)
        b = float(data.b[j])
        reason = f"can only lie strictly inside ({lo:.6g}, {hi:.6g})"
        raise InfeasibleConstraintsError(
            f"the moment constraints cannot hold with every logged row kept: constraint {j} "
            f"({names[j]}) has target {b!r}, but with the rows and the other constraints "
            f"E_Q[{names[j]}] {reason} (the rows' values and its atom_range)",
            field="constraints", index=j, value=b, reason=reason)
    which = ", ".join(f"{j} ({names[j]})" for j in (culprits or range(data.k)))
    raise InfeasibleConstraintsError(
        "the moment constraints cannot hold with every logged row kept: no distribution on the "
        f"rows and the extra atoms meets the targets of constraints {which} together (check "
        "each target against the log, and the atoms' atom_range)", field="constraints")
