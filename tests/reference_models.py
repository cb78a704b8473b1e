r"""Independent references for the moment-constrained EL model (tests only).

Written from the definitions (docs/moment-constraints.md, DESIGN.md § "Moment constraints"),
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

**The solver.** A log-barrier method (``mu`` falling by 10) from a strictly feasible start finds
the active atoms; Newton's method on the KKT system of that face (the gradient equations, which
are the primal moment equations, and the active atoms' equalities, least squares where masses
are not unique) then polishes the point to rounding level; atoms are added or dropped until the
masses are non-negative and every atom's inequality holds. Every answer carries its own
certificate (:class:`Certificate`): the primal moment equations' relative residual, the dual
inequalities' worst violation, the least mass and the duality gap.

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
from scipy.optimize import linprog, nnls

DEPENDENT = 1e-11  # a column within this relative residual of the others' span is dependent
CONSISTENT = 1e-9  # ... and redundant when its target is this close to the same combination
LD = np.longdouble  # the residuals' precision (80-bit on x86-64: 3 more digits than float64)
CERTIFIED = 1e-9  # the certificate's tolerances (relative residuals, gap): 1e-3 of the tests' 1e-6


class Infeasible(Exception):
    """The model's targets cannot be met with every row kept."""


class NotCertified(Exception):
    """The reference could not certify its own answer (the case is skipped, and counted)."""


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
def _support(m: Model) -> np.ndarray:
    return np.vstack([m.phi, m.atoms]) if len(m.atoms) else m.phi


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
    S = _support(m)
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
    D = np.maximum(np.abs(_support(m)).max(axis=0), 1e-300)
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
# The two objectives
# ---------------------------------------------------------------------------------------------
def _positive_start(m: Model, size: float) -> np.ndarray:
    """A dual point positive on every row and atom (with the value functional, if any): at
    least ``size`` on the mass column and on every column that is non-negative on every support
    point (the weights; an atom at infinity is positive through its weight's column), scaled
    up until it outweighs the value functional."""
    S = _support(m)
    y = np.where(np.all(S >= 0, axis=0), 1.0, 0.0)
    y[0] = 1.0
    base = S @ y
    if m.h is None:
        return size * y
    h = np.r_[m.h, m.h_atoms]
    return max(size, 2.0 * float(np.max(-h / base))) * y


class Likelihood:
    """``f(y) = sum c log(phi . y) - y . t``; ``q = 1 / (phi . y)``. Computed in ``LD``
    (the Hessian, which only steers Newton's steps, in float64)."""

    def __init__(self, m: Model):
        self.m = m
        self.scale = m.n
        self.P, self.c, self.t = (np.asarray(x, dtype=LD) for x in (m.phi, m.c, m.target))

    def a(self, y):
        return self.P @ np.asarray(y, dtype=LD)

    def __call__(self, y, order=2):
        y = np.asarray(y, dtype=LD)
        a = self.a(y)
        if not np.all(a > 0):
            return -math.inf, None, None
        f = self.c @ np.log(a) - y @ self.t
        if order == 0:
            return f, None, None
        g = self.P.T @ (self.c / a) - self.t
        H = -(self.P.T * (self.c / a**2)) @ self.P
        return f, g, H.astype(float)

    def q(self, y):
        return 1.0 / self.a(y)

    def start(self):
        return _positive_start(self.m, 0.5 * self.m.n)


class Bound:
    """``f(y) = K geomean_c(phi . y + h) - y . t``; ``q = kappa / (phi . y + h)`` (in ``LD``)."""

    def __init__(self, m: Model, K: float):
        self.m = m
        self.K = LD(K)
        self.scale = 1.0
        self.P, self.c, self.t, self.h = (np.asarray(x, dtype=LD) for x in (m.phi, m.c, m.target, m.h))
        self.N = self.c.sum()

    def a(self, y):
        return self.P @ np.asarray(y, dtype=LD) + self.h

    def __call__(self, y, order=2):
        y = np.asarray(y, dtype=LD)
        a = self.a(y)
        if not np.all(a > 0):
            return -math.inf, None, None
        G = np.exp(self.c @ np.log(a) / self.N)
        f = self.K * G - y @ self.t
        if order == 0:
            return f, None, None
        s = self.P.T @ (self.c / a)
        g = self.K * G / self.N * s - self.t
        H = self.K * G / self.N * (np.outer(s, s) / self.N - (self.P.T * (self.c / a**2)) @ self.P)
        return f, g, H.astype(float)

    def q(self, y):
        a = self.a(y)
        kappa = self.K * np.exp(self.c @ np.log(a) / self.N) / self.N
        return kappa / a

    def start(self):
        return _positive_start(self.m, 2.0)


# ---------------------------------------------------------------------------------------------
# The solver: barrier, then Newton on the active face's KKT system
# ---------------------------------------------------------------------------------------------
@dataclass
class Certificate:
    moments: float  # the primal moment equations' largest relative residual
    dual: float  # the atoms' inequalities' largest violation (relative to |alpha| |y|)
    mass: float  # the least mass (relative to the total), negative if any mass is negative
    gap: float  # |primal - dual objective| relative to max(1, |objective|) (bounds), or
    #            |y . t - N| / N (likelihood)

    def ok(self) -> bool:
        return (self.moments <= CERTIFIED and self.dual <= CERTIFIED and self.mass >= -CERTIFIED
                and self.gap <= CERTIFIED)


@dataclass
class Solution:
    y: np.ndarray  # (LD)
    q: np.ndarray
    masses: np.ndarray
    objective: float  # the primal objective (the bound's value; the likelihood's l*)
    certificate: Certificate


def _interior_start(obj, A, hA):
    """A strictly feasible point: the objective's own start, else an LP's interior direction."""
    y = obj.start()
    if np.all(A @ y + hA > 0) and math.isfinite(obj(y, 0)[0]):
        return y.astype(LD)
    P, hP = obj.m.phi, (obj.m.h if isinstance(obj, Bound) else np.zeros(len(obj.m.phi)))
    M = np.vstack([P, A.astype(float)])
    hM = np.r_[hP, hA.astype(float)]
    d = M.shape[1]
    bound = 1e3 * max(1.0, obj.scale)
    res = linprog(np.r_[np.zeros(d), -1.0], A_ub=np.column_stack([-M, np.ones(len(M))]), b_ub=hM,
                  bounds=[(-bound, bound)] * d + [(None, 1.0)], method="highs")
    if res.status != 0 or res.x[-1] <= 0:
        raise NotCertified("no strictly feasible start")
    return res.x[:d].astype(LD)


def _barrier(obj, A, hA, y):
    """The log-barrier method on ``f + mu sum log(A y + hA)`` from a strictly feasible ``y``."""
    mu = 1e-1 * obj.scale
    Af = A.astype(float)
    while True:
        for _ in range(100):
            f, g, H = obj(y)
            s = A @ y + hA
            gb = (g + mu * (A.T @ (1.0 / s))).astype(float)
            Hb = H - mu * (Af.T * (1.0 / s.astype(float)**2)) @ Af
            try:
                step = np.linalg.solve(Hb, -gb)
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(Hb, -gb, rcond=None)[0]
            dec = float(gb @ step)  # the Newton decrement squared (ascent: H < 0)
            if not dec > 1e-15 * obj.scale:
                break
            fb = f + mu * np.sum(np.log(s))
            t = 1.0
            while t > 1e-20:
                z = y + LD(t) * step
                sz = A @ z + hA
                if np.all(sz > 0):
                    fz = obj(z, 0)[0]
                    if np.isfinite(fz) and fz + mu * np.sum(np.log(sz)) >= fb + 0.25 * t * dec:
                        break
                t *= 0.5
            else:
                break
            y = z
        if mu < 1e-14 * obj.scale:
            return y, mu
        mu /= 10.0


def _polish(obj, A, hA, y, active, masses):
    """Newton on the KKT system of the face ``active``: ``grad f + A_act' m = 0``,
    ``A_act y + hA_act = 0``, from ``(y, masses)``: residuals in ``LD``, steps from the float64
    Jacobian (iterative refinement), least squares where it is singular (atoms that nearly
    coincide; masses that are not unique). ``(y, masses)``."""
    act = np.flatnonzero(active)
    k = len(act)
    Aa, ha = A[act], hA[act]
    Af = Aa.astype(float)
    m_act = np.asarray(masses, dtype=LD)[act]
    scale = max(1.0, float(np.abs(obj.m.target).max()))
    best = None
    for _ in range(50):
        f, g, H = obj(y)
        if g is None:
            break
        r1 = g + Aa.T @ m_act
        r2 = Aa @ y + ha
        norm = max(float(np.abs(r1).max()) / scale, float(np.abs(r2).max()) if k else 0.0)
        if best is None or norm < best[0]:
            best = (norm, y.copy(), m_act.copy())
        if norm < 1e-19:
            break
        J = np.block([[H, Af.T], [Af, np.zeros((k, k))]])
        # symmetric equilibration (a row of zeros, a flat direction of the face, keeps its
        # scale: the least-norm step then leaves it alone)
        size = np.abs(J).max(axis=1)
        d = 1.0 / np.sqrt(np.maximum(size, 1e-12 * size.max()))
        rhs = -np.r_[r1, r2].astype(float) * d
        if not (np.all(np.isfinite(rhs)) and np.all(np.isfinite(J))):
            break  # a wrong face can send Newton away: keep the best point so far
        try:
            step = (d * np.linalg.lstsq(J * d[:, None] * d[None, :], rhs, rcond=None)[0]).astype(LD)
        except np.linalg.LinAlgError:
            break
        t = LD(1.0)
        while t > 1e-12:
            if np.all(obj.a(y + t * step[:len(y)]) > 0):
                break
            t *= LD(0.5)
        y = y + t * step[:len(y)]
        m_act = m_act + t * step[len(y):]
    _, y, m_act = best
    if k and m_act.min() < 0:
        # masses need not be unique (more active atoms than dimensions): non-negative ones by
        # NNLS, then least squares on NNLS's support (NNLS itself is accurate to ~1e-10 only)
        g = obj(y)[1].astype(float)
        nn, _ = nnls(Af.T, -g)
        support = nn > 0
        if support.any():
            exact = np.linalg.lstsq(Af[support].T, -g, rcond=None)[0]
            if exact.min() >= 0:
                nn[support] = exact
        m_act = nn.astype(LD)
    masses = np.zeros(len(A), dtype=LD)
    masses[act] = m_act
    return y, masses


def _row_size(obj, A, y, hA):
    """The size against which an atom's inequality ``A_i y + hA_i >= 0`` is measured: its
    terms, and at least the objective's scale (``N``; 1 for a bound, whose value moves by at
    most the violation times the atoms' mass, at most 1)."""
    return np.maximum(obj.scale, np.abs(A).max(axis=1) * np.abs(y).max() + np.abs(hA))


def _primal(obj, y, masses):
    """The primal objective at ``(q(y), masses)``: ``l* = -N log N - sum c log q`` for the
    likelihood, ``sum c q h + sum m h_i`` for a bound."""
    q = obj.q(y)
    if isinstance(obj, Likelihood):
        return obj.c @ np.log(1.0 / (q * obj.c.sum()))
    return (obj.c * q) @ obj.h + masses @ np.asarray(obj.m.h_atoms, dtype=LD)


def _certificate(obj, A, hA, y, masses) -> Certificate:
    m = obj.m
    cq = obj.c * obj.q(y)
    lhs = obj.P.T @ cq + A.T @ masses
    size = np.abs(obj.P).T @ cq + np.abs(A).T @ np.abs(masses) + np.abs(obj.t)
    moments = float(np.max(np.abs(lhs - obj.t) / np.maximum(size, 1e-300)))
    s = A @ y + hA
    ref = _row_size(obj, A, y, hA)
    dual = float(np.max(np.maximum(-s, 0.0) / np.maximum(ref, 1e-300))) if len(A) else 0.0
    mass = float(masses.min() / max(1.0, masses.sum())) if len(masses) else 0.0
    if isinstance(obj, Likelihood):
        gap = float(abs(y @ obj.t - m.n) / m.n)
    else:
        primal = _primal(obj, y, masses)
        gap = float(abs(primal - obj(y, 0)[0]) / max(1.0, abs(primal)))
    return Certificate(moments, dual, mass, gap)


def _from_face(obj, A, hA, y, est, active, tried):
    """Polish on ``active``, then add the most violated atom or drop the most negative mass
    until certified: a :class:`Solution`, or the last certificate."""
    cert = None
    for _ in range(2 * len(A) + 4):
        key = active.tobytes()
        if key in tried:
            break
        tried.add(key)
        yp, masses = _polish(obj, A, hA, y, active, est)
        cert = _certificate(obj, A, hA, yp, masses)
        if cert.ok():
            return Solution(yp, obj.q(yp).astype(float), masses.astype(float),
                            float(_primal(obj, yp, masses)), cert)
        slack = (A @ yp + hA) / np.maximum(_row_size(obj, A, yp, hA), 1e-300)
        neg = masses / max(1.0, masses.sum())
        active = active.copy()
        if len(A) and slack.min() < -CERTIFIED and (not active.any() or slack.min() <= neg.min()):
            active[int(np.argmin(slack))] = True
        elif len(A) and neg.min() < -CERTIFIED:
            active[int(np.argmin(neg))] = False
        else:
            break
    return cert


def solve(obj) -> Solution:
    """Maximise ``obj`` over the atoms' inequalities; certified or :class:`NotCertified`.

    The barrier's point ranks the atoms by mass over relative slack; the faces tried are the
    atoms whose ratio exceeds 1, then every leading set of the ranking, each corrected by
    :func:`_from_face` (a wrong face may overflow on its way: the certificate judges)."""
    with np.errstate(all="ignore"):
        return _solve(obj)


def _solve(obj) -> Solution:
    m = obj.m
    A = m.atoms.astype(LD)
    hA = np.zeros(len(A), dtype=LD) if m.h_atoms is None else m.h_atoms.astype(LD)
    y = _interior_start(obj, A, hA)
    y, mu = _barrier(obj, A, hA, y)
    s = A @ y + hA
    est = mu / s  # the barrier's masses
    ratio = (est / max(1.0, est.sum())) / (s / _row_size(obj, A, y, hA))
    faces = [ratio > 1.0]
    order = np.argsort(-ratio)
    for j in range(len(A) + 1):
        face = np.zeros(len(A), dtype=bool)
        face[order[:j]] = True
        faces.append(face)
    tried = set()
    certs = []
    for face in faces:
        out = _from_face(obj, A, hA, y, est, face, tried)
        if isinstance(out, Solution):
            return out
        if out is not None:
            certs.append(out)
    best = min(certs, key=lambda c: max(c.moments, c.dual, -c.mass, c.gap)) if certs else None
    raise NotCertified(f"{type(obj).__name__}: {best}")


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
