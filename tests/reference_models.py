r"""Independent references for the moment-constrained EL model (tests only).

Written from the definitions (docs/moment-constraints.md, the model and its three programs),
sharing nothing with ``elcvx``: not its builders (``elcvx.programs``), oracles (``_moment``,
``_duals``) or atoms (``elcvx.constraints.extra_atoms``, ``dual_rows``). numpy and scipy only.

**The model in moment space.** A distribution ``Q`` puts ``q_n`` on each of the ``c_n``
examples of row ``n`` and a mass ``m_i >= 0`` on each extra atom. Row ``n`` has the moment
vector ``phi_n = (1, w_n, g_n1, ..., g_nk)`` and the model asks

.. math:: \sum_n c_n q_n \phi_n + \sum_i m_i \alpha_i = t = (1, 1, b_1, ..., b_k),

with ``alpha_i = (1, w_i, g_i)`` for an atom of finite weight and the direction
``(0, 1, \bar g_i)`` for an atom at ``w = inf`` (a vanishing mass with a finite weighted mass;
``\bar g = \lim g / w``). Atoms are stored divided by ``max(1, |alpha_i|_inf)`` (their masses
are then weighted masses; nothing else changes). The difference of two policies is the same
model with the columns ``(1, w_a, w_b)``.

**The programs**, each a concave maximisation over the dual point ``y`` (one entry per column)
subject to one linear inequality per atom, ``alpha_i . y + h_i >= 0``:

* likelihood: ``max_y sum_n c_n log(phi_n . y) - y . t``; at the optimum ``y . t = N``,
  ``q_n = 1 / (phi_n . y)`` and ``l* = sum_n c_n log(phi_n . y / N)`` (so that
  ``max sum c log q = -N log N - l*``). The profile likelihood ``l_v`` is the likelihood of
  the model with one more column ``h`` (target ``v``), each atom split in two by its unknown
  reward ``r in {0, 1}`` (value coordinate ``w_i r``, ``r`` per unit weight at infinity).
* lower bound of ``E_Q[h]`` (``h_i``: the least value at atom ``i``): with ``kappa``
  eliminated, ``max_y K geomean_c(phi . y + h) - y . t`` with ``K = exp(-(l* + q/2) / N)``;
  ``q_n = kappa / (phi_n . y + h_n)``, ``kappa = K geomean / N``.

**The solver** (:mod:`reference_solver`): a log-barrier method finds the active atoms, then
Newton's method on the KKT system of that face, with residuals in long double, polishes the
point to rounding level; every answer carries its own certificate (the primal moment equations'
relative residual, the dual inequalities' worst violation, the least mass, the duality gap).

Columns that are linear combinations of the others on every support point (rows and atoms)
are dropped first if their targets agree (:func:`reduce_columns`): a redundant constraint
changes no distribution, and without it the dual has no flat direction. A target that disagrees
makes the model infeasible. An LP (:func:`support`) then tells which rows and atoms some
feasible distribution gives mass: the model is feasible iff every row ("a distribution with
every logged row kept and mass on the atoms meets the constraints"), and atoms that none can
give mass are dropped (an implicit equality would otherwise send the dual to infinity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import linprog

from reference_solver import Bound, Likelihood, NotCertified, Solution, solve, support_points  # noqa: F401

DEPENDENT = 1e-11  # a column within this relative residual of the others' span is dependent
CONSISTENT = 1e-9  # ... and redundant when its target is this close to the same combination


class Infeasible(Exception):
    """The model's targets cannot be met with every row kept."""


@dataclass(frozen=True)
class Model:
    """The model in moment space (see the module's docstring)."""

    phi: np.ndarray  # (n, d) rows' moment vectors
    c: np.ndarray  # (n,) counts
    target: np.ndarray  # (d,)
    atoms: np.ndarray  # (m, d) atoms' moment vectors, divided by max(1, |alpha|_inf)
    names: tuple  # the columns' names
    h: np.ndarray | None = None  # (n,) the value functional on the rows (bounds)
    h_atoms: np.ndarray | None = None  # (m,) its least value at each atom, scaled as the atoms
    atom_scale: np.ndarray | None = None  # (m,) what each atom was divided by

    def unscaled(self, masses) -> np.ndarray:
        """The atoms' masses (weighted masses at infinity) of the unscaled atom vectors."""
        return np.asarray(masses) / self.atom_scale

    @property
    def n(self) -> float:
        return float(self.c.sum())


def atom_vector(w: float, g) -> np.ndarray:
    """``alpha`` of an atom ``(w, g)``: ``(1, w, g)``, or ``(0, 1, g)`` (g the limits of g / w)
    at ``w = inf``."""
    g = np.asarray(g, dtype=float).ravel()
    return np.r_[0.0, 1.0, g] if math.isinf(w) else np.r_[1.0, w, g]


def model(phi, c, target, atoms, names, h=None, h_atoms=None) -> Model:
    """A :class:`Model` from unscaled atom vectors (and values)."""
    atoms = np.atleast_2d(np.asarray(atoms, dtype=float))
    s = np.maximum(1.0, np.abs(atoms).max(axis=1))
    ha = None if h_atoms is None else np.asarray(h_atoms, dtype=float) / s
    return Model(np.asarray(phi, dtype=float), np.asarray(c, dtype=float),
                 np.asarray(target, dtype=float), atoms / s[:, None], tuple(names),
                 None if h is None else np.asarray(h, dtype=float), ha, s)


# ---------------------------------------------------------------------------------------------
# The data of a policy's value and of a difference, and their programs' models
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PolicyData:
    """A policy's log on the unit reward scale with ``k`` constraints and explicit atoms.

    ``atom_points``: rows ``(w, g_1, ..., g_k)``, ``w`` possibly ``inf`` (then ``g`` are the
    limits of ``g / w``)."""

    w: np.ndarray
    u: np.ndarray
    c: np.ndarray
    G: np.ndarray  # (n, k)
    b: np.ndarray  # (k,)
    atom_points: np.ndarray  # (m, 1 + k)
    names: tuple = ()

    def _phi(self):
        return np.column_stack([np.ones_like(self.w), self.w, self.G])

    def _alphas(self):
        return np.array([atom_vector(p[0], p[1:]) for p in self.atom_points])

    def _names(self):
        k = self.G.shape[1]
        return ("mass", "weight") + (tuple(self.names) if self.names else
                                     tuple(f"g{j}" for j in range(k)))

    def likelihood(self) -> Model:
        return model(self._phi(), self.c, np.r_[1.0, 1.0, self.b], self._alphas(), self._names())

    def profile(self, v: float) -> Model:
        """The likelihood's model with ``E_Q[w u] = v``; each atom twice, at rewards 0 and 1."""
        alphas = self._alphas()
        per_unit = np.where(np.isinf(self.atom_points[:, 0]), 1.0, self.atom_points[:, 0])
        split = np.vstack([np.column_stack([alphas, per_unit * r]) for r in (0.0, 1.0)])
        return model(np.column_stack([self._phi(), self.w * self.u]), self.c,
                     np.r_[1.0, 1.0, self.b, v], split, self._names() + ("value",))

    def bound(self, side: str) -> Model:
        """``min E_Q[h]`` with ``h = w u`` (lower; atoms at reward 0) or ``h = -w u`` (upper,
        whose answer is minus the value; atoms at reward 1)."""
        alphas = self._alphas()
        if side == "lower":
            h, ha = self.w * self.u, np.zeros(len(alphas))
        else:
            per_unit = np.where(np.isinf(self.atom_points[:, 0]), 1.0, self.atom_points[:, 0])
            h, ha = -self.w * self.u, -per_unit
        return model(self._phi(), self.c, np.r_[1.0, 1.0, self.b], alphas, self._names(), h, ha)


@dataclass(frozen=True)
class DifferenceData:
    """Two policies' weights on one log (unit reward scale) and the atoms ``(w_a, w_b)``, at
    most one of them infinite (then the other entry is the limit of ``w_other / w_inf``, 0)."""

    wa: np.ndarray
    wb: np.ndarray
    u: np.ndarray
    c: np.ndarray
    atom_points: np.ndarray  # (m, 2)

    def _phi(self):
        return np.column_stack([np.ones_like(self.wa), self.wa, self.wb])

    def _alphas(self):
        out = []
        for wa, wb in self.atom_points:
            if math.isinf(wa):
                out.append([0.0, 1.0, 0.0])
            elif math.isinf(wb):
                out.append([0.0, 0.0, 1.0])
            else:
                out.append([1.0, wa, wb])
        return np.array(out)

    def _spread(self):
        """``h = (w_a - w_b) r`` per unit reward at each atom (per unit weight at infinity)."""
        wa, wb = self.atom_points[:, 0], self.atom_points[:, 1]
        return np.where(np.isinf(wa), 1.0, np.where(np.isinf(wb), -1.0,
                                                    np.nan_to_num(wa - wb, posinf=0, neginf=0)))

    def likelihood(self) -> Model:
        return model(self._phi(), self.c, np.ones(3), self._alphas(), ("mass", "w_a", "w_b"))

    def bound(self, side: str) -> Model:
        """``min E_Q[h]``, ``h = (w_a - w_b) u`` (lower) or its negative (upper, answer negated);
        an atom's least value is over its unknown reward in [0, 1]."""
        sign = 1.0 if side == "lower" else -1.0
        least = np.minimum(sign * self._spread(), 0.0)
        return model(self._phi(), self.c, np.ones(3), self._alphas(), ("mass", "w_a", "w_b"),
                     sign * (self.wa - self.wb) * self.u, least)


# ---------------------------------------------------------------------------------------------
# Redundant columns and feasibility
# ---------------------------------------------------------------------------------------------
def _in_span(S, cols, j):
    """``(coefficients, relative residual)`` of column ``j`` of ``S`` on the columns ``cols``."""
    scale = np.abs(S[:, j]).max()
    if scale == 0.0:
        return np.zeros(len(cols)), 0.0
    if not cols:
        return np.zeros(0), 1.0
    B = S[:, cols]
    norms = np.maximum(np.abs(B).max(axis=0), 1e-300)
    coef, *_ = np.linalg.lstsq(B / norms, S[:, j], rcond=None)
    coef = coef / norms
    resid = np.abs(B @ coef - S[:, j]).max() / scale
    return coef, resid


def reduce_columns(m: Model) -> Model:
    """The model without the columns that the others determine on every support point.

    Column ``j`` is dropped when it is (to :data:`DEPENDENT`) a combination of the columns kept
    before it and its target is the same combination of theirs (to :data:`CONSISTENT`); when
    the target is not, no ``Q`` meets both and :class:`Infeasible` names the column.
    """
    S = support_points(m)
    keep = []
    for j in range(S.shape[1]):
        coef, resid = _in_span(S, keep, j)
        if resid > DEPENDENT:
            keep.append(j)
            continue
        implied = float(coef @ m.target[keep]) if keep else 0.0
        scale = max(1.0, abs(m.target[j]), float(np.abs(coef * m.target[keep]).sum()) if keep else 0.0)
        if abs(implied - m.target[j]) > CONSISTENT * scale:
            raise Infeasible(f"the target of {m.names[j]} ({m.target[j]!r}) contradicts the "
                             f"other constraints, which imply {implied!r}")
    if len(keep) == S.shape[1]:
        return m
    return replace(m, phi=m.phi[:, keep], target=m.target[keep], atoms=m.atoms[:, keep],
                   names=tuple(m.names[j] for j in keep))


def support(m: Model):
    """``(rows, atoms)``: which rows and atoms some feasible ``Q`` (rows possibly dropped) can
    give positive mass. One LP on the cone ``sum c x phi / N + sum m alpha = lambda t``,
    ``x, m, lambda >= 0``, maximising ``sum min(x_n, 1) + sum min(m_i, 1)``: the sum of
    feasible points (scaled up) is feasible, so the optimum is 1 exactly on every coordinate
    that can be positive and 0 on the others (for infeasible targets, ``lambda = 0`` and every
    coordinate is 0: the mass coordinate is positive on every row and atom)."""
    n, d = m.phi.shape
    k = len(m.atoms)
    A_eq = np.column_stack([(m.c[:, None] * m.phi / m.n).T, m.atoms.T if k else np.zeros((d, 0)),
                            -m.target, np.zeros((d, n + k))])
    scale = np.maximum(np.abs(A_eq).max(axis=1), 1e-300)
    A_ub = np.column_stack([-np.eye(n + k), np.zeros((n + k, 1)), np.eye(n + k)])
    res = linprog(np.r_[np.zeros(n + k + 1), -np.ones(n + k)], A_ub=A_ub, b_ub=np.zeros(n + k),
                  A_eq=A_eq / scale[:, None], b_eq=np.zeros(d),
                  bounds=[(0, None)] * (n + k + 1) + [(0, 1)] * (n + k), method="highs")
    if res.status != 0:
        raise NotCertified(f"support LP: {res.message}")
    positive = res.x[n + k + 1:] > 0.5
    return positive[:n], positive[n:]


def prepare(m: Model):
    """``(model, kept atoms)``: redundant columns dropped (:func:`reduce_columns`), then the
    atoms that no feasible ``Q`` can give mass (an implicit equality, e.g. ``E_Q[g] = 0`` with
    ``g >= 0``: every atom with ``g > 0`` is out), then columns again; :class:`Infeasible` if a
    row cannot be kept."""
    m = reduce_columns(m)
    rows, atoms = support(m)
    if not rows.all():
        raise Infeasible(f"no distribution that meets the constraints keeps every row "
                         f"({int((~rows).sum())} of {rows.size} rows must be dropped)")
    kept = np.flatnonzero(atoms)
    if kept.size < len(m.atoms):
        m = replace(m, atoms=m.atoms[kept], atom_scale=m.atom_scale[kept],
                    h_atoms=None if m.h_atoms is None else m.h_atoms[kept])
        m = reduce_columns(m)
    return equilibrate(m), kept


def equilibrate(m: Model) -> Model:
    """The same model with each column divided by its largest entry on the support (so that a
    weight of 1e7 and a mass of 1 are of one size; the atoms re-normalised): the same ``q`` and
    values, the dual point divided by the scales, a far better conditioned KKT system."""
    D = np.maximum(np.abs(support_points(m)).max(axis=0), 1e-300)
    atoms = m.atoms / D
    s = np.maximum(np.abs(atoms).max(axis=1), 1e-300)
    return replace(m, phi=m.phi / D, target=m.target / D, atoms=atoms / s[:, None],
                   atom_scale=m.atom_scale * s,
                   h_atoms=None if m.h_atoms is None else m.h_atoms / s)


def direction_limit(m: Model, j0: int, direction) -> float:
    """``max theta`` such that the targets ``b + theta d`` (on the columns from ``j0``) are met
    by some ``Q`` with rows possibly dropped: the edge of the feasible targets along ``d``
    (``inf`` if unbounded)."""
    n, d = m.phi.shape
    k = len(m.atoms)
    dvec = np.zeros(d)
    dvec[j0:] = direction
    A_eq = np.column_stack([(m.c[:, None] * m.phi / m.n).T, m.atoms.T if k else np.zeros((d, 0)),
                            -dvec])
    scale = np.maximum(np.abs(A_eq).max(axis=1), 1e-300)
    res = linprog(np.r_[np.zeros(n + k), -1.0], A_eq=A_eq / scale[:, None], b_eq=m.target / scale,
                  bounds=[(0, None)] * (n + k) + [(None, None)], method="highs")
    if res.status == 3:
        return math.inf
    if res.status != 0:
        raise NotCertified(f"direction LP: {res.message}")
    return float(res.x[-1])


# ---------------------------------------------------------------------------------------------
# The numbers a user reads
# ---------------------------------------------------------------------------------------------
@dataclass
class MLE:
    loglik: float  # l*
    q: np.ndarray
    masses: np.ndarray  # each atom's mass (weighted mass at w = inf), unscaled
    solution: Solution


def mle(m: Model) -> MLE:
    """The constrained MLE (:func:`prepare` first; :class:`Infeasible` if it finds no
    distribution keeping every row)."""
    masses = np.zeros(len(m.atoms))
    m, kept = prepare(m)
    sol = solve(Likelihood(m))
    masses[kept] = m.unscaled(sol.masses)
    return MLE(sol.objective, sol.q, masses, sol)


def lower_bound(m: Model, loglik: float, quantile: float) -> float:
    """``min E_Q[h]`` (atoms at their least value) over the feasible ``Q`` in the likelihood
    ball ``sum c log q >= -N log N - l* - quantile / 2``."""
    m = prepare(m)[0]
    if not np.any(m.h) and not np.any(m.h_atoms):
        return 0.0
    # E_Q[h] is the same for every Q when h is a combination of the columns on every support
    # point (e.g. a constant reward): then it is that combination of the targets.
    S = np.vstack([m.phi, m.atoms])
    hv = np.r_[m.h, m.h_atoms]
    coef, *_ = np.linalg.lstsq(S, hv, rcond=None)
    if np.abs(S @ coef - hv).max() <= DEPENDENT * max(1.0, np.abs(hv).max()):
        return float(coef @ m.target)
    K = math.exp(-(loglik + quantile / 2.0) / m.n)
    try:
        return solve(Bound(m, K)).objective
    except NotCertified:
        value = _attained_in_ball(m, loglik, quantile)
        if value is None:
            raise
        return value


def _attained_in_ball(m: Model, loglik: float, quantile: float):
    """The least ``E_Q[h]`` over every feasible ``Q`` (an LP, rows possibly dropped), if some
    ``Q`` of the likelihood ball attains it (then the likelihood constraint is slack,
    ``kappa = 0``, and the dual's supremum is not attained); else None."""
    n, d = m.phi.shape
    k = len(m.atoms)
    A_eq = np.column_stack([(m.c[:, None] * m.phi / m.n).T, m.atoms.T])
    scale = np.maximum(np.abs(A_eq).max(axis=1), 1e-300)
    res = linprog(np.r_[m.c * m.h / m.n, m.h_atoms], A_eq=A_eq / scale[:, None],
                  b_eq=m.target / scale, bounds=[(0, None)] * (n + k), method="highs")
    if res.status != 0:
        return None
    least = float(res.fun)
    face = replace(m, phi=np.column_stack([m.phi, m.h]), target=np.r_[m.target, least],
                   atoms=np.column_stack([m.atoms, m.h_atoms]), names=m.names + ("value",),
                   h=None, h_atoms=None)
    try:
        inside = mle(face)
    except Infeasible:
        return None
    return least if 2.0 * (inside.loglik - loglik) <= quantile * (1 + 1e-9) else None
