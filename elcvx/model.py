"""The one model every solver takes: a log's rows, the extra atoms, the moment constraints and
the value functional, on the unit reward scale.

:class:`Moments` holds a sample's rows (or, :class:`elcvx.chunked.ChunkedMoments`, a log's
chunks: :func:`model_of` picks), the atoms (:func:`elcvx.constraints.extra_atoms`) and the
value ``h`` whose expectation is bounded (a policy's ``w u``, or a difference's). Both solver
paths read it: the fast path (:mod:`elcvx.fast`) folds its kernels over its rows
(:meth:`Moments.reduce`), the cvxpy path (:mod:`elcvx.cvx`) certifies Clarabel's points on it;
the atoms' rows in the duals (:meth:`Moments.atom_rows`, :func:`bound_rows`) are the same for
both. :class:`Stats` are the sums besides the programs' passes.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import copy
import functools

from . import constraints as mc
from .cache import PerSample

from .engines.blocks import fold_blocks, model_block, scratch_rows, thread_scratch, wsum
from .engines.threads import num_threads


class Moments:
    """A sample's rows and extra atoms in the form the solvers use (unit reward scale).

    ``w``, ``c`` (None for no counts), ``n`` (``sum c``), ``G`` (rows by constraints), ``b``
    (targets), ``atoms`` (rows ``(w, g_1, ..., g_k)``, see
    :func:`elcvx.constraints.extra_atoms`) and the value functional: ``h`` per row and its
    range ``[h_lo, h_hi]`` at each atom (per unit weight at ``w = inf``). By default the policy's
    value, ``h = w u`` (``w (1 - u)`` for ``side="upper"``), which is ``w r`` with ``r`` in
    ``[0, 1]`` at an atom; ``value=(h, h_lo, h_hi)`` gives another (a difference of policies).

    The passes build the features ``D`` (rows ``w - 1, g - b``) and a policy's ``h`` block by
    block (:func:`elcvx.engines.blocks.model_block`): a model holds no array of its own per row
    (``D``, ``h`` are made on request, for the other paths). They run on ``threads`` threads
    (default ``ELCVX_NUM_THREADS``, else every core: :mod:`elcvx.engines.threads`), with the
    same answers on any number.
    """

    #: h is a policy's value (``w u``, or ``w (1 - u)`` on the upper side): ``h >= 0`` and
    #: ``w - h >= 0`` on every row, the MLE's sums serve both sides' bounds (:class:`elcvx.verdict.AtTheMLE`).
    policy = True

    def __init__(self, sample, constraints, atoms=None, side="lower", value=None, *,
                 threads=None, estimate_coef=None):
        constraints = mc.check(sample, constraints)
        if estimate_coef is not None:  # (another value's bound on its functionals: a difference's)
            self.estimate_coef = tuple(estimate_coef)
        # (Resolved once per model, ELCVX_NUM_THREADS read here: a pass does not read it again.)
        self.threads = num_threads(threads)
        self.w = sample.w
        self.c = sample.counts
        self.n = float(sample.n)
        self.k = len(constraints)
        # The paper's programs (no constraint, the default atoms, a policy's value): their atoms,
        # atom rows and (empty) constraints' arrays are the same for the MLE and both bounds,
        # made once per sample.
        self._paper = _paper_arrays(sample) if not (constraints or atoms is not None
                                                    or value is not None) else None
        # Columns stored transposed (one contiguous row per feature): a pass reads each once.
        self.Gt, self.b = self._paper_array("constraints", lambda: (
            np.array([c.values for c in constraints], dtype=float).reshape(self.k, self.w.size),
            np.array([c.target for c in constraints], dtype=float)))
        self.Ft = self.w[None, :] if self.k == 0 else np.vstack([self.w, self.Gt])
        self.atoms = (mc.extra_atoms(sample, constraints, atoms) if self._paper is None
                      else self._paper_array("atoms", lambda: mc.extra_atoms(sample)))
        # The range of E_Q[h]: [0, 1] for a policy's value, within [-1, 1] for any other here.
        self.value_range = (0.0, 1.0) if value is None else (-1.0, 1.0)
        self.side = side
        if value is None:
            wa = self.atoms[:, 0]
            self._u, self._h = sample.u, None
            self.h_lo, self.h_hi = self._paper_array("value_range", lambda: (
                np.zeros(len(wa)), np.where(np.isfinite(wa), wa, 1.0)))
            self.nonnegative = True  # w u and w (1 - u) are
        else:
            self._h, self.h_lo, self.h_hi = (np.asarray(t, dtype=float) for t in value)
            self.policy = False
            self.nonnegative = not np.any(self._h < 0)
        self.rows = self.w.size
        self._stats = None
        self._w_span = getattr(sample, "_w_span", None)

    #: The rows are held here, so the solutions' ``q`` (one mass per row) can be.
    in_memory = True
    #: A log's engine (:class:`elcvx.engines.rows.ChunkedMoments` only, where in_memory is False).
    engine: Any
    #: The sample's cache of the paper's programs' arrays (:func:`_paper_arrays`), or None.
    _paper = None
    _c_min = None
    #: ``coef`` with ``|a_n| <= (1, d_n) . coef`` for the estimate's functionals ``a_n = w_n (u_n
    #: - rho)``, ``rho`` in ``[0, 1]`` (``|a_n| <= w_n = 1 + d_n0``): the certificate's ``S``;
    #: the keyword ``estimate_coef`` gives another value's (a difference's).
    estimate_coef = (1.0, 1.0)

    @property
    def h(self):
        """The value functional on each row (built on request for a policy's value)."""
        if self._h is None:
            h = np.multiply(self.w, self._u)
            self._h = np.subtract(self.w, h, out=h) if self.side == "upper" else h
        return self._h

    @property
    def Dt(self):
        """``D`` transposed: rows ``w - 1`` and ``g - b`` (built on request)."""
        return np.vstack([self.w - 1.0, self.Gt - self.b[:, None]])

    def reduce(self, kernel, merge, *params, out=None):
        """One pass: ``kernel``'s partial sums over the rows' blocks (:mod:`elcvx.passes.kernels`),
        merged in the blocks' order on any number of threads; None outside the objective's
        domain. ``out``: one entry per row for the kernel to fill (``q``), or None."""
        reads_D = getattr(kernel, "reads_D", True)
        block_at = self._block_at.get(reads_D) if self._block_at is not None else None
        if block_at is None:
            # (Made once per model and kind of kernel: its arguments are the model's arrays,
            # fixed once it is built; a model's copy, :meth:`negated`, makes its own.)
            policy = self._u if self.policy else None
            block_at = functools.partial(model_block, self.w, self.Ft, self.Gt, self.b, self.c,
                                         self._h if policy is None else None, policy,
                                         self.side == "upper", reads_D)
            if self._block_at is None:
                self._block_at = {}
            self._block_at[reads_D] = block_at
        return fold_blocks(kernel, merge, self.rows, block_at, params, self._scratch_of,
                           self.threads, out)

    #: :meth:`reduce`'s block makers, by whether the kernel reads ``D`` (None: none made yet).
    _block_at = None

    def _scratch_of(self, _):
        """The calling thread's scratch rows: ``(the kernels', the features')``
        (:func:`elcvx.engines.blocks.thread_scratch`, kept from one pass to the next)."""
        rows = scratch_rows(1 + self.k)
        sc = thread_scratch(rows + 2 + self.k, self.rows)
        return sc[:rows], sc[rows:]

    @property
    def w_span(self):
        """The least and largest weight (from the sample's validation, or one pass, kept)."""
        if self._w_span is None:
            self._w_span = float(self.w.min()), float(self.w.max())
        return self._w_span

    def stats(self):
        """:class:`Stats` of the rows (one pass, kept; or from the MLE's, :class:`AtTheMLE`)."""
        if self._stats is None:
            sums, h_min = self.reduce(stats_block, merge_stats)
            self._stats = Stats(sums[1:-3], *sums[-3:], min(0.0, h_min))
        return self._stats

    @property
    def c_min(self) -> float:
        """The least count (1 without counts; kept): the certificates' bound on a row's share."""
        if self._c_min is None:
            if self.in_memory:
                self._c_min = 1.0 if self.c is None else float(self.c.min())
            else:
                self._c_min = float(self.engine.map_reduce(_least_count, min))
        return self._c_min

    def negated(self):
        """The same model with the value functional ``-h`` (its lower bound is minus the upper)."""
        h = self.h
        return self._variant(_h=-h, h_lo=-self.h_hi, h_hi=-self.h_lo, policy=False,
                             nonnegative=not np.any(h > 0))

    def mixed(self, T):
        """The same model with the moment constraints' columns mixed by the unit upper triangular
        ``T`` over the features ``F = (w - 1, g - b)``: ``g'_j - b_j = sum_i T_ij F_i``, on the
        rows and the atoms (at ``w = inf`` per unit weight: ``F = (1, g)``). Each constraint
        gains multiples of those before it (``E_Q[w - 1] = 0`` among them), so the same
        distributions meet them, to the rounding of the mixed columns; the likelihood's dual
        point ``x'`` here is ``T x'`` in the original. Rows in memory only."""
        T = np.asarray(T, dtype=float)
        mix = T[:, 1:].T
        Gt = mix @ np.vstack([self.w - 1.0, self.Gt - self.b[:, None]]) + self.b[:, None]
        wa, ga = self.atoms[:, 0], self.atoms[:, 1:]
        finite = np.isfinite(wa)
        Fa = np.column_stack([np.where(finite, wa - 1.0, 1.0),
                              np.where(finite[:, None], ga - self.b, ga)])
        atoms = np.column_stack([wa, Fa @ mix.T + np.where(finite[:, None], self.b, 0.0)])
        return self._variant(Gt=Gt, Ft=np.vstack([self.w, Gt]), atoms=atoms)

    def _variant(self, **changes):
        """A copy of this model (rows in memory) with the attributes ``changes``; what was kept
        from its arrays (its stats, the paper's cached arrays, the block makers) is not carried
        over, as the new arrays differ."""
        out = copy.copy(self)
        for name, value in {"_stats": None, "_paper": None, "_block_at": None, **changes}.items():
            setattr(out, name, value)
        return out

    @property
    def G(self):
        """The constraints' values, rows by constraints (a view)."""
        return self.Gt.T

    def features(self, value=None):
        """``D`` with rows ``(w - 1, g - b[, h - v])``: the likelihood is ``sum c log(1 + D x)``."""
        if value is None:
            return self.Dt.T
        return np.vstack([self.Dt, self.h - value]).T

    def atom_rows(self, value=None):
        """``(A, h)``: the atoms' dual constraints ``A x + h >= 0`` for ``x = (beta, lambda[,
        tau])``; with a value ``v``, each atom twice, at the ends of its value range."""
        if value is None:
            return self._paper_array("atom_rows", lambda: mc.dual_rows(self.atoms, self.b))
        atoms = np.vstack([self.atoms, self.atoms])
        return mc.dual_rows(atoms, self.b, value=(np.r_[self.h_lo, self.h_hi], value))

    def bound_rows(self, centred=False):
        """``(B, floor)``: the bound's atom constraints ``B y + floor >= 0`` on ``y = (gamma,
        beta, lambda)`` (:func:`bound_rows` of the atoms at their least value ``h_lo``;
        ``centred``: in the coordinates of :func:`elcvx.passes.kernels.centred_bound_block`)."""
        if centred:
            return bound_rows(self.atoms, self.h_lo, self.b)
        return self._paper_array("bound_rows", lambda: bound_rows(self.atoms, self.h_lo))

    def _paper_array(self, name, make):
        """``make()``, kept in the sample's cache of the paper's programs (read-only) where this
        model is one of them (a policy's value on either side: ``h_lo = 0`` at every atom),
        else made afresh."""
        if self._paper is None:
            return make()
        if name not in self._paper:
            made = make()
            for a in made if isinstance(made, tuple) else (made,):
                a.flags.writeable = False
            self._paper[name] = made
        return self._paper[name]


class Stats(NamedTuple):
    """Sums over a model's rows besides the programs' passes: ``sum c F`` (each row of ``F``),
    ``sum c h``, ``sum c |h|``, ``sum c (w - h)`` and ``h_floor = min(0, min h)`` (0 for a
    policy's value)."""

    sum_F: np.ndarray
    sum_h: float
    sum_abs_h: float
    sum_w_minus_h: float
    h_floor: float

    def other_side(self):
        """The stats of the other side's ``h' = w - h`` (a policy's value: ``h, w - h >= 0``)."""
        return Stats(self.sum_F, self.sum_w_minus_h, self.sum_w_minus_h, self.sum_h, 0.0)


def origin_stats(blk, tmp, nonnegative=False):
    """``[sum c h, sum c |h|, sum c (w - h)]`` over a block (with ``sum c F``, the sums of
    :class:`Stats`); ``nonnegative``: ``h >= 0`` is known."""
    cb, h = blk.c, blk.h
    hs = wsum(cb, h)
    return [hs, hs if nonnegative else wsum(cb, np.abs(h, out=tmp)),
            wsum(cb, np.subtract(blk.Ft[0], h, out=tmp))]


def stats_block(blk, sc):
    """``([sum c, sum c F (each row), sum c h, sum c |h|, sum c (w - h)], min h)`` over a
    block: the sums the programs need besides their passes."""
    cb = blk.c
    h = blk.h
    return (np.array([blk.h.size if cb is None else float(cb.sum())]
                     + [wsum(cb, f) for f in blk.Ft] + origin_stats(blk, sc[0])), float(h.min()))


def merge_stats(p, q):
    return p[0] + q[0], min(p[1], q[1])


def _least_count(cols) -> float:
    """A chunk's least count (:class:`elcvx.engines.rows.Columns`; 1 without counts)."""
    return 1.0 if cols.c is None else float(cols.c.min())


def at_the_edge(data, v):
    """Whether ``v`` is an end of a policy's value range that ``Q`` can reach: ``v = 0`` when
    every row's ``w u`` is 0, ``v = 1`` when every row's ``w u`` is ``w`` (the atoms take the
    same reward); then the profile likelihood at ``v`` is the MLE's."""
    if data.value_range != (0.0, 1.0):
        return False
    # (h and w - h are nonnegative on every row for a policy's value: a sum of 0 is all 0.)
    stats = data.stats()
    return (v == 0.0 and stats.sum_abs_h == 0.0) or (v == 1.0 and stats.sum_w_minus_h == 0.0)


#: The paper's programs' arrays of each sample (a dict: atoms, atom rows, ... by name, each
#: read-only; :meth:`Moments._paper_array`): the estimate and both bounds read the same ones.
#: Key: the sample object; lifetime: the sample's.
_PAPER_ARRAYS = PerSample("the paper's programs' arrays (elcvx.model.Moments)")


def _paper_arrays(sample) -> dict:
    """The sample's dict of the paper's programs' arrays (:data:`_PAPER_ARRAYS`)."""
    return _PAPER_ARRAYS.get(sample, dict)


def model_of(sample, constraints, atoms=None, side="lower", *, threads=None):
    """The solvers' model of a sample's rows: a :class:`Moments` in memory (its passes on
    ``threads`` threads), or the model a log scanned chunk by chunk gives
    (:meth:`elcvx.io.LogScan.moments`)."""
    if not sample.in_memory:
        return sample.moments(constraints, atoms, side)
    return Moments(sample, constraints, atoms, side=side, threads=threads)


def bound_rows(atoms, h_lo, b=None):
    """``(B, floor)``: the bound's atom constraints ``B y + floor >= 0`` on ``y = (gamma, beta,
    lambda)``: an atom at ``(w, g)`` with value ``h_lo`` gives ``gamma + beta w + lambda . g +
    h_lo >= 0``, divided by ``max(1, w)``; at ``w = inf``, ``beta + lambda . gbar + h_lo >= 0``
    (per unit weight). The columns of ``B`` are each atom's contributions to ``E_Q[1]``,
    ``E_Q[w]`` and ``E_Q[g]`` per unit of its (scaled) mass. With the targets ``b``, the same
    in centred coordinates (``w - 1`` and ``g - b`` for ``w`` and ``g``: the likelihood's atom
    rows, :func:`elcvx.constraints.dual_rows`, with the constant first)."""
    w, g = atoms[:, 0], atoms[:, 1:]
    finite = np.isfinite(w)
    wf = np.where(finite, w, 1.0)
    scale = np.where(finite, 1.0 / np.maximum(1.0, wf), 1.0)
    floor = np.asarray(h_lo, dtype=float) * scale
    if b is not None:
        A, h = mc.dual_rows(atoms, b)
        return np.column_stack([h, A]), floor
    B = np.column_stack([np.where(finite, scale, 0.0), np.where(finite, wf * scale, 1.0),
                         np.where(finite[:, None], g * scale[:, None], g)])
    return B, floor
