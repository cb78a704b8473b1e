"""The duals' oracles: ``x -> (f, g, H, size)`` of the likelihood's dual (the MLE's and the
profile's) and of the bound's, each evaluation one pass over the rows (a fold of a block kernel
of :mod:`elcvx.fast.kernels`, wherever the rows are: :meth:`elcvx.model.Moments.reduce`), for the
active-set method of :mod:`elcvx.fast.active_set`. Each keeps, for the program that called it, what
its last pass found at the solution (``q``, the certificate's sums), so that no pass is made
again.

:class:`Work` counts the passes.
"""

from __future__ import annotations

import math

import numpy as np

from .kernels import add, bound_block, loglik_block, merge_moments


class Work:
    """Counts passes over the data (one per evaluation of an objective and its derivatives) and
    the rows they read (a pass over a subsample reads fewer); one per computation, reported in
    its solution."""

    def __init__(self):
        self.passes = 0
        self.rows = 0

    def count(self, rows: int) -> None:
        self.passes += 1
        self.rows += int(rows)

    def counts(self) -> tuple[int, int]:
        return self.passes, self.rows


def _quietly(evaluate):
    """``evaluate`` on a float array with numpy's warnings off: the oracles catch overflow and
    0/0 themselves (returning ``-inf``)."""

    def oracle(x, **options):
        with np.errstate(all="ignore"):
            return evaluate(np.asarray(x, dtype=float), **options)

    return oracle


def loglik_oracle(data, work, value=None, state=None, q=None):
    """``x -> (f, g, H, size)`` of ``(1/N) sum c log(1 + d x)`` over the rows ``d`` of the
    model's ``D``, with a last feature ``h - value`` when ``value`` is given (the profile's,
    built block by block rather than copied); ``f = -inf`` outside its domain; ``size = (sum c
    |log(1 + d x)| + 1) / N``, the terms that cancel in ``f`` (plus one).

    With ``state`` (a dict), the solution's sums are read from the last evaluation: ``state``
    keeps its point (``x``) and :func:`elcvx.fast.kernels.loglik_block`'s sums (``part``), ``q =
    1 / (N (1 + d x))`` goes to ``q`` (an array of one entry per row, or None), and for the MLE
    (``value`` None) an evaluation at the origin keeps the rows' :class:`Stats` sums
    (``origin``, a policy's value) and one near the optimum (where the last Newton decrement
    was small) the bound's start sums (``extra`` 2). Such an oracle takes ``full=True`` to
    evaluate the origin as any other point (its ``q`` and sums)."""
    n = data.n
    mle = state is not None and value is None

    @_quietly
    def oracle(x, full=False):
        work.count(data.rows)
        origin = not full and not np.any(x)
        extra = 0
        if mle:
            extra = (data.policy + 2 * (len(x) == 1)) if origin else 1 + bool(state.get("near"))
        if state is not None:
            state.pop("x", None)  # q is about to change
        part = data.reduce(loglik_block, add, x, value, origin, 1.0 / n, extra,
                           None if origin or value is not None else _likelihood_span(data, x),
                           out=None if origin else q)
        m = len(x)
        if part is None or not np.all(np.isfinite(part[2:3 + m + m * m])):
            return -math.inf, None, None, math.inf
        f, g, H = part[0] / n, part[3:3 + m], -part[3 + m:3 + m + m * m].reshape(m, m)
        size = (part[1] + 1.0) / n
        if state is not None:
            if origin and extra:
                state["origin"] = part[3 + m + m * m:]  # (powers,) stats
                state["origin_g_H"] = part[3:3 + m + m * m]
            if not origin:
                state.update(x=np.array(x, dtype=float), part=part, extra=extra)
        if mle:  # the unconstrained Newton decrement: small, the next point is about the last
            with np.errstate(all="ignore"):
                step = np.linalg.lstsq(-H, g, rcond=None)[0]
            state["near"] = bool(float(g @ step) <= 1e-6 * size)
        return f, g, H, size

    return oracle


def bound_oracle(data, K, lin, work, floor=0.0):
    """``y -> (f, g, H, size)`` of ``K geomean_c(F y + h) - lin . y`` with ``F = (1, w, g)``;
    ``-inf`` outside its domain; ``size = K geomean + |lin . y| + floor``, the terms that cancel
    in ``f`` and an absolute floor (:func:`lower_bound_of`).

    Also records in ``state`` the last point's ``kg = K geomean``, its sums (for the
    certificate) and, for a model in memory, ``1/a`` (``inv``: ``q`` is proportional to it).
    The Hessian is ``kg`` times minus the covariance of ``F / a`` under the weights ``c / N``.
    """
    n = data.n
    state = {}
    inv = np.empty(data.rows) if data.in_memory else None  # (one array: page faults per pass cost)

    @_quietly
    def oracle(y):
        work.count(data.rows)
        state.clear()  # inv is about to change
        part = data.reduce(bound_block, merge_moments, y, _bound_span(data, y), out=inv)
        if part is None:
            return -math.inf, None, None, math.inf
        kg = K * math.exp(part.log_sum / n)
        if not (math.isfinite(kg) and np.all(np.isfinite(part.scatter))):
            return -math.inf, None, None, math.inf
        state.update(y=y, kg=kg, inv=inv, sums=part)
        return (kg - lin @ y, kg * part.mean - lin, -kg * part.scatter / n,
                kg + abs(float(lin @ y)) + floor)

    return oracle, state


def _likelihood_span(data, x):
    """The least and largest ``d x`` over the rows, exactly, for one feature ``d = w - 1`` in
    memory (the same roundings, at the least and largest ``w``); else None."""
    if len(x) != 1 or not data.in_memory:
        return None
    ends = (np.array(data.w_span) - 1.0) * x[0]
    return float(ends.min()), float(ends.max())


def _bound_span(data, y):
    """Bounds ``(lo, hi)`` on every row's ``a = gamma + beta w + h`` with ``lo > 0``, for a
    policy's value in memory without constraints (``0 <= h <= w``, each ``w`` in its span,
    with a margin for ``a``'s roundings); else None (each block finds its own)."""
    if len(y) != 2 or not (data.in_memory and data.policy):
        return None
    ends = np.outer(y[1] + np.array([0.0, 1.0]), data.w_span).ravel()
    margin = 4e-16 * (abs(y[0]) + (abs(y[1]) + 1.0) * max(map(abs, data.w_span)))
    lo, hi = y[0] + float(ends.min()) - margin, y[0] + float(ends.max()) + margin
    return (lo, hi) if lo > 0 and math.isfinite(hi) else None
