"""The solver of tests/reference_models.py: each program a concave maximisation over a dual
point ``y`` subject to one linear inequality per atom, ``A y + hA >= 0``, solved to the
rounding of long double and certified (tests only; numpy and scipy, nothing of ``elcvx``).

* :class:`Likelihood`: ``sum c log(phi . y) - y . t`` (``q = 1 / (phi . y)``);
* :class:`Bound`: ``K geomean_c(phi . y + h) - y . t`` (``q = kappa / (phi . y + h)``).

:func:`solve` runs a log-barrier method (``mu`` falling by 10) from a strictly feasible start to
rank the atoms, then Newton's method on the KKT system of a face (the gradient equations, which
are the primal moment equations, and the face's equalities): residuals in long double, steps
from the float64 Jacobian (iterative refinement), least squares where masses are not unique.
Faces are tried until one's point passes :class:`Certificate` (primal moment equations, dual
inequalities, non-negative masses, duality gap, each to :data:`CERTIFIED`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, nnls

LD = np.longdouble  # the residuals' precision (80-bit on x86-64: 3 more digits than float64)
CERTIFIED = 1e-9  # the certificate's tolerances (relative residuals, gap): 1e-3 of the tests' 1e-6


class NotCertified(Exception):
    """The reference could not certify its own answer (the case is skipped, and counted)."""


def support_points(m) -> np.ndarray:
    """The moment vectors of every row and atom of a model, one per row."""
    return np.vstack([m.phi, m.atoms]) if len(m.atoms) else m.phi


# ---------------------------------------------------------------------------------------------
# The two objectives
# ---------------------------------------------------------------------------------------------
def _positive_start(m, size: float) -> np.ndarray:
    """A dual point positive on every row and atom (with the value functional, if any): at
    least ``size`` on the mass column and on every column that is non-negative on every support
    point (the weights; an atom at infinity is positive through its weight's column), scaled
    up until it outweighs the value functional."""
    S = support_points(m)
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

    def __init__(self, m):
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

    def __init__(self, m, K: float):
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


