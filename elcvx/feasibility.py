"""Whether a moment-constrained model can hold at all: a small LP on the rows and the atoms.

EL puts positive mass on every logged row (its likelihood is ``-inf`` otherwise) and nonnegative
mass on the extra atoms. Targets ``E_Q[g_j] = b_j`` that no such distribution meets make the
programs' duals unbounded, and no solver can give a number for them; the user should hear which
target is at fault. The LP ``max t`` over row masses ``p_n >= t`` and atom masses ``m_k >= 0``
subject to the moment constraints decides it (feasible with every row kept iff ``t > 0``), and
for each constraint the LP of ``min``/``max E_Q[g_j]`` under the others gives the range its
target must lie in.
"""

from __future__ import annotations

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
    M, t = _system(data)
    keep = [i for i in range(len(t)) if drop is None or i != 2 + drop]
    M, t = M[keep], t[keep]
    rows, cols = data.rows, M.shape[1]
    # max s: p_n - s/N >= 0, M [p, m] = t, s <= 1.
    cost = np.r_[np.zeros(cols), -1.0]
    A_ub = sparse.hstack([-sparse.eye(rows, cols), np.full((rows, 1), 1.0 / data.n)], format="csr")
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(rows), A_eq=np.hstack([M, np.zeros((len(t), 1))]),
                  b_eq=t, bounds=[(0, None)] * cols + [(None, 1.0)], method="highs")
    return float(-res.fun) if res.status == 0 else -1.0


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
    hold with every logged row kept, naming the constraint at fault where one is; else return
    (the model is feasible: a solver's failure on it is the solver's)."""
    if slack(data) > _KEPT:
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
