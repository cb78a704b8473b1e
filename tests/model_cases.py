"""The random cases of tests/public/test_fuzz_models.py: moment-constrained models, the constraint
helpers and differences of two policies, each drawn from ``np.random.default_rng(seed)`` in the
regime ``REGIMES[seed % len(REGIMES)]`` (:func:`draw`), so that a seed gives the same case on
every machine.

A :class:`Case` holds the data as arrays: :meth:`Case.package_inputs` turns them into the
package's inputs (``MomentConstraint``, ``atoms=``, a helper's output), and
:func:`reference_data` into the reference's (:mod:`reference_models`), each atom written out
from the definitions (the vertices of ``{wmin, wmax}`` times the constraints' ranges; the
helpers' atoms from their documented definitions), not from the package's builders.

Targets come from a distribution that keeps every row (the unconstrained model's maximum,
its atoms' mass spread over the atoms of the same weight) moved a fraction ``theta`` of the way
to the edge of the feasible targets along a random direction (an LP): inside (``theta < 1``),
at the edge (``theta = 1 - 1e-1 .. 1e-5``) or outside (``theta > 1``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np

import reference_models as R
from elcvx import Sample
from elcvx.constraints import MomentConstraint
from fuzz_support import unit_rewards

REGIMES = ("random", "constant", "duplicate", "dependent", "w_minus_1", "w_f_huge", "edge",
           "outside", "atoms", "wmax_inf", "few_rows", "helpers", "difference")
RANGES = ((0.0, 1.0), (-1.0, 1.0), (0.0, 5.0))
ROW_KEYS = ("predicted", "expected", "actions", "target_probs")  # a helper's per-row inputs
TIED_TO_W = "lambda w: (0.0, 1.0) if math.isinf(w) else (0.0, w)"  # the range of w f, f in [0, 1]


@dataclass
class Constraint:
    """One known moment as data: ``atom_range`` a pair, or the source of a callable
    ``lambda w: (lo, hi)`` (at ``w = inf``, the range of ``g / w``)."""

    values: np.ndarray
    target: float
    atom_range: object
    name: str

    def range_at(self, w: float) -> tuple:
        """The definition: the range of ``g`` at an atom of weight ``w``; a fixed pair is the
        range of a bounded ``g``, whose limit ``g / w`` at ``w = inf`` is 0."""
        if isinstance(self.atom_range, str):
            lo, hi = eval(self.atom_range, {"math": math})(w)  # noqa: S307 (the case's own source)
            return float(lo), float(hi)
        return (0.0, 0.0) if math.isinf(w) else tuple(map(float, self.atom_range))

    def package(self) -> MomentConstraint:
        rng = (eval(self.atom_range, {"math": math}) if isinstance(self.atom_range, str)  # noqa: S307
               else self.atom_range)
        return MomentConstraint(self.values, self.target, atom_range=rng, name=self.name)


@dataclass
class Case:
    seed: int
    regime: str
    note: str
    sample: Sample
    constraints: list = field(default_factory=list)  # of Constraint
    atoms: np.ndarray | None = None  # explicit atoms (w, g_1..g_k), or None for the vertices
    rho: object = None  # None (self-consistent), "midpoint" or a number
    level: float = 0.95
    intent: str = "inside"  # "inside", "edge", "outside", "invalid" (the LP decides feasibility)
    sample_b: Sample | None = None  # a difference's second policy
    diff_atoms: np.ndarray | None = None  # a difference's atoms= (w_a, w_b)
    helper: dict | None = None  # the helpers' regime: the helper's name and its inputs

    @property
    def kind(self) -> str:
        return "difference" if self.sample_b is not None else "policy"

    def package_inputs(self):
        """``(constraints, atoms)`` as a user passes them (a helper's output in its regime)."""
        import elcvx.constraints as ec

        h = self.helper
        if h is None:
            return [c.package() for c in self.constraints], self.atoms
        if h["name"] == "reward_model":
            return [ec.reward_model(self.sample, h["predicted"], h["expected"],
                                    deterministic=h["deterministic"])], None
        if h["name"] == "action_control_variates":
            return ec.action_control_variates(self.sample, h["actions"], h["target_probs"])
        if h["name"] == "action_marginals":
            return ec.action_marginals(self.sample, h["actions"], h["marginals"])
        if h["name"] == "bad_range":
            return [MomentConstraint(self.sample.w, 1.0, atom_range=h["atom_range"])], None
        raise AssertionError(h["name"])

    def subsample(self, keep) -> Case:
        """The same case on the rows ``keep`` (targets and atoms unchanged)."""
        def cut(s):
            return Sample(s.w[keep], s.r[keep], counts=None if s.counts is None else s.counts[keep],
                          wmin=s.wmin, wmax=s.wmax, rmin=s.rmin, rmax=s.rmax)

        helper = None if self.helper is None else {
            k: (v[keep] if k in ROW_KEYS else v) for k, v in self.helper.items()}
        return replace(self, sample=cut(self.sample),
                       constraints=[replace(c, values=c.values[keep]) for c in self.constraints],
                       sample_b=None if self.sample_b is None else cut(self.sample_b), helper=helper)


# ---------------------------------------------------------------------------------------------
# The reference's data, from the definitions
# ---------------------------------------------------------------------------------------------
def vertices(wmin, wmax, ranges_at) -> np.ndarray:
    """The default atoms: at each ``w`` in ``{wmin, wmax}`` every vertex of the constraints'
    ranges at ``w`` (``ranges_at(w)``: a list of pairs)."""
    rows = []
    for w in (wmin, wmax):
        rows.extend((w,) + corner for corner in itertools.product(*ranges_at(w)))
    k = len(ranges_at(wmin))
    return np.unique(np.array(rows, dtype=float).reshape(-1, 1 + k), axis=0)


def _unit(s: Sample):
    return (s.r - s.rmin) / (s.rmax - s.rmin)


def _helper_data(case: Case) -> R.PolicyData:
    """The helpers' models from their definitions (their docstrings)."""
    s, h = case.sample, case.helper
    c = np.ones(s.n_rows) if s.counts is None else s.counts
    ends = (s.wmin, s.wmax)
    if h["name"] == "reward_model":
        # g = w p - m on the unit scale; at an atom of weight w, p and m lie in [0, 1]:
        # g in [-1, w]; a deterministic target: [-1, 0] at w = 0, else (w - 1) p, so between 0
        # and w - 1; at w = inf, g / w -> p in [0, 1].
        p = (h["predicted"] - s.rmin) / (s.rmax - s.rmin)
        m = (h["expected"] - s.rmin) / (s.rmax - s.rmin)

        def at(w):
            if math.isinf(w):
                return [(0.0, 1.0)]
            if h["deterministic"]:
                return [(-1.0, 0.0)] if w == 0 else [(min(0.0, w - 1.0), max(0.0, w - 1.0))]
            return [(-1.0, w)]

        return R.PolicyData(s.w, _unit(s), c, (s.w * p - m)[:, None], np.zeros(1),
                            vertices(*ends, at), ("reward model",))
    a = h["actions"]
    if h["name"] == "action_control_variates":
        pi = h["target_probs"]
        K = pi.shape[1]
        G = np.column_stack([s.w * (a == k) - pi[:, k] for k in range(K - 1)])
        # an unlogged example: action k, target distribution at a vertex e_j of the simplex:
        # g = w e_k - e_j (per unit weight e_k at w = inf); the first K - 1 coordinates
        rows = []
        for w in ends:
            for k in range(K):
                if math.isinf(w):
                    rows.append(np.r_[w, np.eye(K)[k, :K - 1]])
                else:
                    rows.extend(np.r_[w, (w * np.eye(K)[k] - np.eye(K)[j])[:K - 1]] for j in range(K))
        return R.PolicyData(s.w, _unit(s), c, G, np.zeros(K - 1), np.array(rows),
                            tuple(f"action {k}" for k in range(K - 1)))
    p = np.asarray(h["marginals"], dtype=float)
    K = p.size
    G = np.column_stack([s.w * (a == k) for k in range(K - 1)])
    rows = [np.r_[w, ((1.0 if math.isinf(w) else w) * np.eye(K)[k])[:K - 1]]
            for w in ends for k in range(K)]
    return R.PolicyData(s.w, _unit(s), c, G, p[:K - 1], np.array(rows),
                        tuple(f"action {k}" for k in range(K - 1)))


def reference_data(case: Case):
    """:class:`reference_models.PolicyData` or ``DifferenceData`` of the case."""
    s = case.sample
    c = np.ones(s.n_rows) if s.counts is None else s.counts
    if case.sample_b is not None:
        b = case.sample_b
        pts = case.diff_atoms
        if pts is None:
            pts = np.array([(wa, wb) for wa in (s.wmin, s.wmax) for wb in (b.wmin, b.wmax)])
        return R.DifferenceData(s.w, b.w, _unit(s), c, np.asarray(pts, dtype=float))
    if case.helper is not None:
        return _helper_data(case)
    cons = case.constraints
    G = np.column_stack([x.values for x in cons]) if cons else np.zeros((s.n_rows, 0))
    pts = case.atoms if case.atoms is not None else vertices(
        s.wmin, s.wmax, lambda w: [x.range_at(w) for x in cons])
    return R.PolicyData(s.w, _unit(s), c, G, np.array([x.target for x in cons]),
                        np.asarray(pts, dtype=float), tuple(x.name for x in cons))


# ---------------------------------------------------------------------------------------------
# Pieces of a case
# ---------------------------------------------------------------------------------------------
def _n(rng):
    p = rng.random()
    if p < 0.08:
        return int(rng.integers(1, 4))
    return int(np.exp(rng.uniform(np.log(4), np.log(300))))


def _rewards(rng, n):
    rmin, rmax = RANGES[rng.integers(len(RANGES))]
    kind = rng.choice(["binary", "continuous", "levels", "constant"], p=[0.3, 0.45, 0.15, 0.1])
    u = unit_rewards(rng, kind, n)
    return np.clip(rmin + (rmax - rmin) * u, rmin, rmax), rmin, rmax, str(kind)


def _weights(rng, n, wmin, wmax):
    top = min(wmax, 20.0)
    kind = int(rng.integers(0, 4))
    if kind == 0:
        w = rng.uniform(wmin, top, n)
    elif kind == 1:
        w = wmin + rng.exponential(rng.uniform(0.3, 3.0), n)
    elif kind == 2:  # epsilon-greedy logging, deterministic target: three weights
        eps = float(rng.choice([0.05, 0.1, 0.3]))
        K = int(rng.integers(2, 6))
        greedy = rng.random(n) < 1 - eps + eps / K
        hit = rng.random(n) < 0.5
        w = np.where(hit, np.where(greedy, 1 / (1 - eps + eps / K), K / eps), 0.0)
    else:  # at the bounds, some interior
        w = np.where(rng.random(n) < 0.5, wmin, top)
        w = np.where(rng.random(n) < 0.3, rng.uniform(wmin, top, n), w)
    return np.clip(w, wmin, wmax), f"w kind {kind}"


def _base(rng, n=None, wmax=None, wmin=None, counts=None):
    """``(Sample, note)`` with random rewards, weights, bounds and counts."""
    n = _n(rng) if n is None else n
    r, rmin, rmax, rkind = _rewards(rng, n)
    if wmin is None:
        wmin = 0.0 if rng.random() < 0.75 else float(rng.choice([0.1, 0.5]))
    if wmax is None:
        wmax = float(rng.choice([2.0, 5.0, 10.0, 50.0])) if rng.random() < 0.85 else math.inf
    w, wkind = _weights(rng, n, wmin, wmax)
    if counts is None and rng.random() < 0.2:
        counts = (rng.integers(1, 6, n).astype(float) if rng.random() < 0.7
                  else 10.0 ** rng.uniform(-1, 1, n))
    s = Sample(w, r, counts=counts, wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
    return s, f"{wkind}, rewards {rkind} on [{rmin:g}, {rmax:g}]"


def _column(rng, s, j, kind=None):
    """A random constraint column with a range that covers it: ``(Constraint, kind)``."""
    kind = kind or str(rng.choice(["normal", "w_f", "uniform", "w_indicator"]))
    n = s.n_rows
    name = f"g{j}"
    if kind == "normal":
        scale = 10.0 ** rng.uniform(-1, 1)
        x = rng.normal(rng.normal(0, 1) * scale, scale, n)
        lo, hi = float(x.min()), float(x.max())
        pad = float(rng.choice([0.0, 0.5, 2.0])) * (hi - lo + scale)
        return Constraint(x, 0.0, (lo - pad, hi + pad), name), kind
    if kind == "uniform":
        x = rng.uniform(-1, 1, n)
        return Constraint(x, 0.0, (-1.0, 1.0), name), kind
    f = rng.random(n)
    if kind == "w_indicator":
        f = (f < 0.5).astype(float)
    x = s.w * f
    if math.isinf(s.wmax) or rng.random() < 0.4:  # tied to the weight: (0, w), g / w in [0, 1]
        return Constraint(x, 0.0, TIED_TO_W, name), kind
    return Constraint(x, 0.0, (0.0, s.wmax), name), kind


def _interior(rng, s, pts):
    """A distribution that keeps every row: the unconstrained maximum on the atoms' weights,
    each weight's atom mass spread over its atoms at random. ``(q, masses)`` (weighted masses
    at ``w = inf``)."""
    c = np.ones(s.n_rows) if s.counts is None else s.counts
    ws = np.unique(pts[:, 0])
    data = R.PolicyData(s.w, _unit(s), c, np.zeros((s.n_rows, 0)), np.zeros(0), ws[:, None])
    sol = R.mle(data.likelihood())
    by_w = sol.masses
    masses = np.zeros(len(pts))
    for wk, mk in zip(ws, by_w):
        idx = np.flatnonzero(pts[:, 0] == wk)
        masses[idx] = mk * rng.dirichlet(np.ones(idx.size))
    return sol.q, masses


def set_targets(rng, s, cons, pts, theta, free=None):
    """Targets for ``cons[free]`` (default all): the interior distribution's moments moved
    ``theta`` of the way to the edge along a random direction; ``(theta_used, note)``."""
    free = list(range(len(cons))) if free is None else list(free)
    if not free:
        return theta, "targets fixed"
    c = np.ones(s.n_rows) if s.counts is None else s.counts
    q, masses = _interior(rng, s, pts)
    G = np.column_stack([cons[j].values for j in free])
    g_atoms = pts[:, 1:][:, free]
    b0 = (c * q) @ G + masses @ g_atoms
    data = R.PolicyData(s.w, _unit(s), c, G, b0, pts[:, [0] + [1 + j for j in free]])
    m = data.likelihood()
    d = rng.normal(size=len(free))
    t = R.direction_limit(m, 2, d)
    if math.isinf(t) or t <= 1e-9 * max(1.0, np.abs(b0).max()):
        d = -d
        t2 = R.direction_limit(m, 2, d)
        if math.isfinite(t2) and t2 > 1e-9 * max(1.0, np.abs(b0).max()):
            t = t2
        elif theta > 1 and math.isfinite(t) and t > 0:
            d = -d
        elif theta > 1:
            return None, "no edge along the direction"
        else:
            t = 1.0 if math.isinf(t) else t
    b = b0 + theta * t * d
    for j, bj in zip(free, b):
        cons[j].target = float(bj)
    return theta, f"theta {theta:.6g}"


def _theta(rng, intent):
    if intent == "inside":
        return 0.0 if rng.random() < 0.15 else float(rng.uniform(0.0, 0.95))
    if intent == "edge":
        return 1.0 - 10.0 ** -rng.uniform(1.0, 5.0)
    return 1.0 + float(rng.choice([0.02, 0.2, 1.0]))


def _policy_case(seed, regime, rng, s, cons, note, atoms=None, intent="inside", free=None):
    """A policy's case with targets set for ``intent`` (None when the direction has no edge)."""
    pts = atoms if atoms is not None else vertices(s.wmin, s.wmax,
                                                   lambda w: [x.range_at(w) for x in cons])
    theta, tnote = set_targets(rng, s, cons, np.asarray(pts, dtype=float), _theta(rng, intent), free)
    if theta is None:
        intent = "inside"
        set_targets(rng, s, cons, np.asarray(pts, dtype=float), 0.5, free)
    rho = [None, "midpoint", float(s.rmin + (s.rmax - s.rmin) * rng.random())][rng.integers(3)]
    level = float(rng.choice([0.95, 0.95, 0.9, 0.99]))
    return Case(seed, regime, f"{note}; {tnote}", s, cons, atoms, rho, level, intent)


# ---------------------------------------------------------------------------------------------
# The regimes
# ---------------------------------------------------------------------------------------------
def _random(seed, rng, intent="inside", regime="random"):
    s, note = _base(rng)
    k = int(rng.integers(1, 4))
    cons, kinds = zip(*[_column(rng, s, j) for j in range(k)])
    return _policy_case(seed, regime, rng, s, list(cons), f"{note}; columns {list(kinds)}",
                        intent=intent)


def _constant(seed, rng):
    s, note = _base(rng)
    kappa = float(rng.normal(0, 2))
    lo, hi = (kappa - 1.0, kappa + 1.0) if rng.random() < 0.6 else (
        kappa - float(rng.uniform(0, 2)), kappa + float(rng.uniform(0.01, 2)))
    cons = [Constraint(np.full(s.n_rows, kappa), kappa, (lo, hi), "constant")]
    cons += [_column(rng, s, j)[0] for j in range(1, int(rng.integers(1, 3)))]
    if rng.random() < 0.6:  # the target is the constant itself
        case = _policy_case(seed, "constant", rng, s, cons, note, free=range(1, len(cons)))
        if len(cons) == 1:
            case.note = f"{note}; target = the constant"
        return case
    return _policy_case(seed, "constant", rng, s, cons, note)


def _duplicate(seed, rng):
    s, note = _base(rng)
    g, kind = _column(rng, s, 0, str(rng.choice(["normal", "w_f", "uniform"])))
    extra = [_column(rng, s, 2)[0]] if rng.random() < 0.3 else []
    dup = Constraint(g.values.copy(), 0.0, g.atom_range, "copy")
    cons = [g, dup] + extra
    tied = rng.random() < 0.5
    atoms = None
    if tied:  # the atoms know the two columns are one: g1 = g2 at every atom
        pts = vertices(s.wmin, s.wmax, lambda w: [x.range_at(w) for x in [g] + extra])
        atoms = np.column_stack([pts[:, :2], pts[:, 1], pts[:, 2:]])
    case = _policy_case(seed, "duplicate", rng, s, cons, f"{note}; {kind} twice, tied atoms {tied}",
                        atoms=atoms, free=[0] + ([2] if extra else []))
    dup.target = g.target
    return case


def _dependent(seed, rng):
    sub = int(rng.integers(0, 3))
    if sub == 2:  # all K per-action indicators w 1[a = k], marginals as floats summing to ~1
        s, note = _base(rng)
        K = int(rng.integers(2, 5))
        a = rng.integers(0, K, s.n_rows)
        rng_k = (0.0, s.wmax) if math.isfinite(s.wmax) else TIED_TO_W
        cons = [Constraint(s.w * (a == k), 0.0, rng_k, f"action {k}") for k in range(K)]
        rows = [np.r_[w, ((1.0 if math.isinf(w) else w) * np.eye(K)[k])]
                for w in (s.wmin, s.wmax) for k in range(K)]
        atoms = np.unique(np.array(rows), axis=0)
        case = _policy_case(seed, "dependent", rng, s, cons, f"{note}; all {K} indicators",
                            atoms=atoms, free=range(K - 1))
        p = np.array([x.target for x in cons[:K - 1]])
        cons[K - 1].target = float(1.0 - p.sum())  # (the user's float: the sum is 1 to rounding)
        return case
    # g2 = 2 g1 - w + 1, on a dyadic grid (exact in floating point)
    n = _n(rng)
    wmax = float(rng.choice([2.0, 4.0, 16.0])) if rng.random() < 0.8 else math.inf
    top = 8.0 if math.isinf(wmax) else wmax
    w = rng.integers(0, int(64 * top) + 1, n) / 64.0
    r, rmin, rmax, rkind = _rewards(rng, n)
    s = Sample(w, r, wmax=wmax, rmin=rmin, rmax=rmax)
    g1 = rng.integers(-128, 129, n) / 64.0
    g2 = 2 * g1 - w + 1
    if sub == 0:  # tied atoms: the relation holds at every atom
        c1 = Constraint(g1, 0.0, (-2.0, 2.0), "g1")
        c2 = Constraint(g2, 0.0, "lambda w: (2 * -2.0 - 1, 2 * 2.0 - 1) if math.isinf(w) else "
                        "(-4.0 - w + 1, 4.0 - w + 1)", "2 g1 - w + 1")
        rows = []
        for wk in (s.wmin, s.wmax):
            for x in (-2.0, 2.0):
                rows.append([wk, 0.0 if math.isinf(wk) else x,
                             -1.0 if math.isinf(wk) else 2 * x - wk + 1])
        atoms = np.array(rows)
        case = _policy_case(seed, "dependent", rng, s, [c1, c2], f"rewards {rkind}; 2 g1 - w + 1, "
                            "tied atoms", atoms=atoms, free=[0])
        c2.target = 2 * c1.target
        return case
    c1 = Constraint(g1, 0.0, (-2.0, 2.0), "g1")
    lo, hi = float(g2.min()) - 1.0, float(g2.max()) + 1.0
    c2 = Constraint(g2, 0.0, (lo, hi), "2 g1 - w + 1")
    return _policy_case(seed, "dependent", rng, s, [c1, c2], f"rewards {rkind}; 2 g1 - w + 1, "
                        "vertex atoms")


def _w_minus_1(seed, rng):
    s, note = _base(rng)
    g = Constraint(s.w - 1.0, 0.0, None, "w - 1")
    sub = int(rng.integers(0, 3))
    atoms = None
    if sub == 0:  # the explicit atoms [[wmin, wmin - 1], [wmax, wmax - 1]]
        g.atom_range = (s.wmin - 1.0, (s.wmax if math.isfinite(s.wmax) else 50.0) - 1.0)
        atoms = np.array([[s.wmin, s.wmin - 1.0],
                          [s.wmax, s.wmax - 1.0 if math.isfinite(s.wmax) else 1.0]])
    elif sub == 1:  # tied through a callable range
        g.atom_range = "lambda w: (1.0, 1.0) if math.isinf(w) else (w - 1.0, w - 1.0)"
    else:  # the box: not tied
        g.atom_range = (s.wmin - 1.0, (s.wmax if math.isfinite(s.wmax) else 50.0) - 1.0)
    cons = [g] + ([_column(rng, s, 1)[0]] if rng.random() < 0.4 else [])
    if len(cons) > 1 and atoms is not None:
        pts = vertices(s.wmin, s.wmax, lambda w: [cons[1].range_at(w)])
        atoms = np.array([[p[0], p[0] - 1.0 if math.isfinite(p[0]) else 1.0, p[1]] for p in pts])
    if len(cons) > 1:
        return _policy_case(seed, "w_minus_1", rng, s, cons, f"{note}; atoms {sub}", atoms=atoms,
                            free=[1])
    rho = [None, "midpoint"][rng.integers(2)]
    return Case(seed, "w_minus_1", f"{note}; atoms {sub}", s, cons, atoms, rho)


def _w_f_huge(seed, rng):
    n = int(rng.integers(2, 60))
    wmax = float(10.0 ** rng.uniform(6.5, 7.2))
    w = rng.uniform(0, 3, n)
    big = rng.choice(n, max(1, n // 8), replace=False)
    w[big] = 10.0 ** rng.uniform(3, np.log10(wmax), big.size)
    r, rmin, rmax, rkind = _rewards(rng, n)
    counts = rng.integers(1, 6, n).astype(float) if rng.random() < 0.5 else None
    s = Sample(w, r, counts=counts, wmax=wmax, rmin=rmin, rmax=rmax)
    f = rng.random(n)
    rule = TIED_TO_W if rng.random() < 0.5 else (0.0, wmax)
    cons = [Constraint(w * f, 0.0, rule, "w f")]
    if rng.random() < 0.3:
        cons.append(_column(rng, s, 1, "uniform")[0])
    return _policy_case(seed, "w_f_huge", rng, s, cons, f"rewards {rkind}; max w {w.max():.3g}")


def _outside(seed, rng):
    if rng.random() < 0.2:  # tied duplicate columns whose targets disagree
        case = _duplicate(seed, rng)
        case.constraints[1].target = case.constraints[0].target + float(rng.choice([1e-3, 0.1, 1.0]))
        if case.atoms is None:  # (vertex atoms absorb the disagreement: tie them)
            s = case.sample
            g = case.constraints[0]
            extra = case.constraints[2:]
            pts = vertices(s.wmin, s.wmax, lambda w: [x.range_at(w) for x in [g] + extra])
            case.atoms = np.column_stack([pts[:, :2], pts[:, 1], pts[:, 2:]])
        case.regime, case.intent, case.note = "outside", "outside", case.note + "; targets differ"
        return case
    return _random(seed, rng, "outside", "outside")


def _atoms(seed, rng):
    s, note = _base(rng, wmax=float(rng.choice([2.0, 5.0, 10.0])))
    k = int(rng.integers(1, 3))
    cons = [_column(rng, s, j, str(rng.choice(["normal", "uniform"])))[0] for j in range(k)]
    pts = vertices(s.wmin, s.wmax, lambda w: [x.range_at(w) for x in cons])
    keep = rng.random(len(pts)) < 0.6
    for w in (s.wmin, s.wmax):  # an atom at each end of the weights
        at = np.flatnonzero(pts[:, 0] == w)
        keep[rng.choice(at)] = True
    pts = pts[keep]
    inner = int(rng.integers(0, 3))
    if inner:
        wi = rng.uniform(s.wmin, s.wmax, inner)
        gi = np.column_stack([rng.uniform(*x.range_at(1.0), inner) for x in cons])
        pts = np.vstack([pts, np.column_stack([wi, gi])])
    if rng.random() < 0.5:
        pts = np.vstack([pts, pts[rng.integers(len(pts))]])  # an atom listed twice
    return _policy_case(seed, "atoms", rng, s, cons, f"{note}; {len(pts)} atoms", atoms=pts)


def _wmax_inf(seed, rng):
    s, note = _base(rng, wmax=math.inf)
    k = int(rng.integers(1, 4))
    cons = [_column(rng, s, j)[0] for j in range(k)]
    atoms = None
    if rng.random() < 0.3:  # explicit atoms, those at infinity by their limits g / w
        atoms = vertices(s.wmin, s.wmax, lambda w: [x.range_at(w) for x in cons])
        atoms = np.vstack([atoms, np.r_[math.inf, rng.uniform(0, 1, k)]])
    return _policy_case(seed, "wmax_inf", rng, s, cons, note, atoms=atoms)


def _few_rows(seed, rng):
    n = int(rng.integers(1, 4))
    counts = (rng.integers(1, 21, n).astype(float) if rng.random() < 0.7 else 10.0 ** rng.uniform(-1, 1, n))
    s, note = _base(rng, n=n, counts=counts)
    k = int(rng.integers(1, 3))
    cons = [_column(rng, s, j)[0] for j in range(k)]
    return _policy_case(seed, "few_rows", rng, s, cons, note)


def _bandit(rng, n, K, wmax_inf):
    """A K-armed log: epsilon-greedy logging, a deterministic or softmax target."""
    eps = float(rng.choice([0.1, 0.3, 0.5]))
    greedy = rng.integers(0, K, n)
    logging = np.full((n, K), eps / K)
    logging[np.arange(n), greedy] += 1 - eps
    a = np.array([rng.choice(K, p=p) for p in logging])
    deterministic = rng.random() < 0.5
    if deterministic:
        target = np.eye(K)[rng.integers(0, K, n)]
    else:
        z = np.exp(rng.normal(0, 1.5, (n, K)))
        target = z / z.sum(axis=1, keepdims=True)
    mu = logging[np.arange(n), a]
    pi = target[np.arange(n), a]
    pmin = eps / K
    r, rmin, rmax, rkind = _rewards(rng, n)
    s = Sample(pi / mu, r, wmax=math.inf if wmax_inf else 1.0 / pmin, rmin=rmin, rmax=rmax)
    return s, a, target, deterministic, f"K={K} eps={eps} deterministic {deterministic}, rewards {rkind}"


def _helpers(seed, rng):
    n = _n(rng)
    K = int(rng.integers(2, 5))
    wmax_inf = rng.random() < 0.3
    s, a, target, deterministic, note = _bandit(rng, n, K, wmax_inf)
    sub = str(rng.choice(["reward_model", "action_control_variates", "action_marginals", "invalid"],
                         p=[0.35, 0.3, 0.25, 0.1]))
    note = f"{sub}: {note}, wmax {s.wmax:g}"
    rho = [None, "midpoint"][rng.integers(2)]
    if sub == "reward_model":
        rhat = s.rmin + (s.rmax - s.rmin) * rng.random((n, K))
        helper = dict(name=sub, predicted=rhat[np.arange(n), a], expected=(target * rhat).sum(axis=1),
                      deterministic=deterministic)
    elif sub == "action_control_variates":
        helper = dict(name=sub, actions=a, target_probs=target)
    elif sub == "action_marginals":
        p = target.mean(axis=0)
        helper = dict(name=sub, actions=a, marginals=p / p.sum())
    else:  # input a helper must refuse, naming it
        bad = int(rng.integers(0, 3))
        if bad == 0:  # negative probabilities
            probs = target.copy()
            probs[rng.integers(n), 0] = -0.25
            helper = dict(name="action_control_variates", actions=a, target_probs=probs)
        elif bad == 1:  # rows that do not sum to 1
            helper = dict(name="action_control_variates", actions=a, target_probs=target * 0.5)
        else:
            helper = dict(name="bad_range", atom_range=(0.0, 1.0, 2.0))
        return Case(seed, "helpers", f"invalid {bad}: {note}", s, helper=helper, intent="invalid")
    return Case(seed, "helpers", note, s, rho=rho, helper=helper)


def _difference(seed, rng):
    n = _n(rng)
    K = int(rng.integers(2, 5))
    eps = float(rng.choice([0.1, 0.3]))
    greedy = rng.integers(0, K, n)
    logging = np.full((n, K), eps / K)
    logging[np.arange(n), greedy] += 1 - eps
    a = np.array([rng.choice(K, p=p) for p in logging])
    mu = logging[np.arange(n), a]
    sub = str(rng.choice(["random", "near", "identical", "disjoint", "inf_a", "inf_b"]))
    pol_a = rng.integers(0, K, n)
    if sub == "disjoint":
        pol_b = (pol_a + rng.integers(1, K, n)) % K
    else:
        pol_b = np.where(rng.random(n) < 0.7, pol_a, rng.integers(0, K, n))
    wa = (a == pol_a) / mu
    wb = (a == pol_b) / mu
    if sub == "identical":
        wb = wa.copy()
    elif sub == "near":
        wb = wa.copy()
        i = rng.integers(n)
        wb[i] = wa[i] * (1 + float(rng.choice([1e-12, 1e-9, 1e-6]))) if wa[i] > 0 else 1e-12
    r, rmin, rmax, rkind = _rewards(rng, n)
    counts = rng.integers(1, 4, n).astype(float) if rng.random() < 0.2 else None
    wmax = K / eps
    wmax_a = math.inf if sub == "inf_a" else wmax
    wmax_b = math.inf if sub == "inf_b" else wmax
    wa, wb = np.minimum(wa, wmax), np.minimum(wb, wmax)
    sa = Sample(wa, r, counts=counts, wmax=wmax_a, rmin=rmin, rmax=rmax)
    sb = Sample(wb, r, counts=counts, wmax=wmax_b, rmin=rmin, rmax=rmax)
    diff_atoms = None
    if sub == "disjoint" and rng.random() < 0.5:
        # two deterministic policies: an unlogged example's weights are never both positive
        diff_atoms = np.array([[0.0, 0.0], [wmax, 0.0], [0.0, wmax]])
    rho = None if rng.random() < 0.6 else float(rmin + (rmax - rmin) * rng.random())
    level = float(rng.choice([0.95, 0.9, 0.99]))
    note = f"{sub}: K={K} eps={eps}, rewards {rkind}" + (", atoms=" if diff_atoms is not None else "")
    return Case(seed, "difference", note, sa, rho=rho, level=level, sample_b=sb, diff_atoms=diff_atoms)


_DRAW = {
    "random": _random, "constant": _constant, "duplicate": _duplicate, "dependent": _dependent,
    "w_minus_1": _w_minus_1, "w_f_huge": _w_f_huge,
    "edge": lambda seed, rng: _random(seed, rng, "edge", "edge"),
    "outside": _outside, "atoms": _atoms, "wmax_inf": _wmax_inf, "few_rows": _few_rows,
    "helpers": _helpers, "difference": _difference,
}


def draw(seed: int) -> Case:
    """The case of ``seed``: regime ``REGIMES[seed % len(REGIMES)]``, everything else drawn from
    ``np.random.default_rng(seed)``."""
    regime = REGIMES[seed % len(REGIMES)]
    return _DRAW[regime](seed, np.random.default_rng(seed))
