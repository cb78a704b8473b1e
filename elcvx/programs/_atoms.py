"""The extra atoms of an EL program and the columns of its moment constraints, in the scaled
units the builders of :mod:`elcvx.programs.empirical_likelihood` share."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..constraints import check, extra_atoms


class Atoms:
    """The extra atoms of one program and the columns ``g`` of its moment constraints.

    Atom ``i`` (weight ``w_i``, constraint values ``g_i``, reward ``r_i`` in the profile) enters
    the primal through its mass (``w_i <= 1``) or its weighted mass (``w_i > 1``), i.e. with
    coefficients ``s_i, w_i s_i, g_i s_i, w_i r_i s_i`` in ``E_Q[1], E_Q[w], E_Q[g], E_Q[w u]``,
    ``s_i = 1`` or ``1/w_i`` (``0`` at ``w = inf``, where ``g_i`` is the limit of ``g s_i``).
    The dual constraint of the atom is the same column, so its multiplier is that variable.
    ``legacy`` (no constraints, the default atoms ``wmin``, ``wmax``): the paper's names.
    """

    def __init__(self, G, b, table, *, rewards=(None,), legacy=False):
        self.G, self.b, self.k = G, b, b.size
        index = [(i, r) for i in range(len(table)) for r in rewards]
        self.w = np.array([table[i, 0] for i, _ in index])
        self.r = np.array([r or 0 for _, r in index])
        self.weighted = self.w > 1
        self.s = 1.0 / np.maximum(self.w, 1.0)
        g = table[[i for i, _ in index], 1:].reshape(len(index), self.k)
        # The coefficient of a per-mass quantity (g, or a value's floor) per unit of the atom's
        # variable: 1/w for a weighted atom (its variable is w m), 1 otherwise and at w = inf
        # (where the quantity is already given per unit weight).
        self.per_unit = 1.0 / np.where(self.weighted & np.isfinite(self.w), self.w, 1.0)
        self.gcoef = g * self.per_unit[:, None]
        self.wcoef = np.where(self.weighted, 1.0, self.w)
        self.labels, self.keys = [], []
        for i, r in index:
            tail = "" if r is None else f",{r}"
            if legacy:
                self.labels.append(("lo", "hi")[i] if r is None else "lh"[i] + str(r))
                self.keys.append(("wmin", "wmax")[i] + tail)
            else:
                self.labels.append(f"atom{i}{tail}")
                self.keys.append(f"atom{i}{tail}")
        self.info = {} if legacy else dict(atoms=table)

    @classmethod
    def of(cls, sample, constraints, atoms, *, rewards=(None,)):
        """The atoms of ``sample`` under ``constraints`` (checked) and ``atoms`` (or default)."""
        constraints = check(sample, constraints)
        G = np.column_stack([c.values for c in constraints] or [np.zeros((sample.n_rows, 0))])
        b = np.array([c.target for c in constraints], dtype=float)
        legacy = not constraints and atoms is None
        table = extra_atoms(sample, constraints, atoms)
        return cls(G, b, table, rewards=rewards, legacy=legacy)

    # -- primal: one nonnegative variable per atom -------------------------------------------
    def variables(self, *, masses=True):
        """Create the atoms' variables; return the handles (``m_<label>`` expressions of the
        weighted ones too, if ``masses``)."""
        self.x = [cp.Variable(name=("z_" if wt else "m_") + label, nonneg=True)
                  for wt, label in zip(self.weighted, self.labels)]
        handles = {}
        for x, wt, s, label in zip(self.x, self.weighted, self.s, self.labels):
            if wt and masses:
                handles["m_" + label] = float(s) * x
            handles[x.name()] = x
        return handles

    def row(self, coef, keep=None):
        """``sum_i coef_i x_i`` over the atoms in ``keep``, atoms with one coefficient grouped."""
        groups = {}
        for i, x in enumerate(self.x):
            if keep is None or keep[i]:
                groups.setdefault(float(coef[i]), []).append(x)
        terms = [sum(xs[1:], xs[0]) if a == 1 else a * sum(xs[1:], xs[0])
                 for a, xs in groups.items()]
        return sum(terms[1:], terms[0]) if terms else 0.0

    def moment_rows(self, y, c, N, cw):
        """The primal's ``mass``, ``weight`` and ``g{j}`` constraints (``y = N q``)."""
        cons = dict(mass=(c / N) @ y + self.row(self.s) == 1,
                    weight=cw @ y + self.row(self.wcoef) == 1)
        for j in range(self.k):
            cons[f"g{j}"] = (c * self.G[:, j] / N) @ y + self.row(self.gcoef[:, j]) == self.b[j]
        return cons

    # -- dual: one inequality per atom ---------------------------------------------------------
    def dual_variable(self):
        """``(lambda, handles)``: the constraints' multipliers (``None``, ``{}`` if ``k = 0``)."""
        lam = cp.Variable(self.k, name="lambda") if self.k else None
        return lam, ({} if lam is None else {"lambda": lam})

    def plus(self, expr, lam, *, centred):
        """``expr + lambda.(g_n - b)`` (``centred``) or ``expr + lambda.g_n``, one per row."""
        return expr if lam is None else expr + (self.G - self.b * centred) @ lam

    def likelihood_rows(self, beta, lam, tau=None, v=None):
        """``1 + beta (w - 1) + lambda.(g - b) [+ tau (w r - v)] >= 0`` at each atom, times
        ``s``: the constraints of the MLE's and the profile's duals."""
        cons = {}
        for i, key in enumerate(self.keys):
            wt, s, w = self.weighted[i], float(self.s[i]), float(self.w[i])
            expr = s + beta * (1 - s) if wt else 1 + beta * (w - 1)
            if lam is not None:
                expr = expr + (self.gcoef[i] - s * self.b) @ lam
            if tau is not None:
                if self.r[i]:
                    expr = expr + (tau if wt else tau * w)
                expr = expr - (s * (tau * v) if wt else tau * v)
            cons[key] = expr >= 0
        return cons

    def bound_rows(self, gamma, beta, lam, floor=None):
        """``gamma + beta w + lambda.g [+ h_lo] >= 0`` at each atom, times ``s``: the lower
        bound's dual (``floor``: the value's least ``h_lo`` at each atom, else 0)."""
        cons = {}
        for i, key in enumerate(self.keys):
            s, w = float(self.s[i]), float(self.w[i])
            expr = s * gamma + beta if self.weighted[i] else gamma + beta * w
            if lam is not None:
                expr = expr + self.gcoef[i] @ lam
            if floor is not None and floor[i] != 0:
                expr = expr + float(floor[i] * self.per_unit[i])
            cons[key] = expr >= 0
        return cons
