r"""Moment constraints: known expectations that every distribution EL considers must meet.

The EL programs put probability ``Q`` on the logged rows and on a few *extra atoms*, points
that were not observed. Besides ``E_Q[1] = 1`` and ``E_Q[w] = 1`` (the importance weight's known
mean), a :class:`MomentConstraint` adds one more known moment,

.. math:: E_Q[g] = b ,

for a column ``g`` with one value per row: a control variate (a reward model's prediction
under the target policy, ``g = w \hat r(x, a) - \sum_a \pi(a|x) \hat r(x, a)`` with ``b = 0``), a
known action marginal, the other policy's weight in a difference of two policies. With ``k``
constraints, the dual variables are ``beta`` and ``lambda_1 .. lambda_k``, and the estimate's
dual is

.. math:: l^* = \max_{\beta, \lambda} \sum_n c_n \log\big(1 + \beta (w_n - 1)
          + \textstyle\sum_j \lambda_j (g_{nj} - b_j)\big)

subject to one linear constraint per extra atom (see :func:`extra_atoms`). The paper's
programs are the case ``k = 0``.

**The extra atoms.** An atom's weight lies in ``{wmin, wmax}`` and its value of each ``g_j`` is
unknown within ``atom_range``; by default there is an atom at every vertex of ``{wmin, wmax} x
range_1 x ... x range_k``. Unobserved values are often tied together (a control variate can only
be large where the weight is), and then listing the atoms (``atoms=``) gives a tighter model.
An atom at ``w = inf`` (``wmax = inf``) has no probability but a finite weighted mass; its ``g``
entries are then limits of ``g / w`` (0 for a bounded ``g``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from . import _validation as iv
from .errors import InvalidInputError


@dataclass(frozen=True, eq=False, init=False)
class MomentConstraint:
    """``E_Q[values] = target``: one known moment of the distribution behind the log.

    Parameters
    ----------
    values : array_like
        The column ``g``, one value per row of the sample it is used with.
    target : float
        Its known expectation ``b``.
    atom_range : (float, float)
        The range of ``g`` at the unobserved extra atoms (finite): where ``g`` could lie for an
        example that was not logged. Too narrow a range makes the interval too narrow.
    name : str
        A label for messages and results.

    Examples
    --------
    A known expectation of a reward model's prediction ``f`` under the target policy,
    ``E_pi[f] = 0.61``, is ``E_Q[w f] = 0.61`` with ``w f`` in ``[0, wmax]`` at the atoms:

    >>> import elcvx
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> f = [0.2, 0.7, 0.4, 0.9]
    >>> c = elcvx.MomentConstraint(s.w * f, target=0.61, atom_range=(0.0, 10.0))
    >>> c.values.tolist(), c.target
    ([0.0, 1.4, 0.8, 0.45], 0.61)
    """

    values: np.ndarray
    target: float
    atom_range: tuple
    name: str

    def __init__(self, values, target=0.0, atom_range=None, *, name="g"):
        values = iv.vector(f"{name} (constraint values)", values)
        target = iv.finite_scalar(f"{name} target", target)
        if atom_range is None:
            raise InvalidInputError(
                f"{name}: atom_range=(lo, hi) is required: the range of the constraint's values "
                "at examples that were not logged (e.g. the column's possible range)")
        try:
            lo, hi = (iv.finite_scalar(f"{name} atom_range", x) for x in atom_range)
        except TypeError:
            raise InvalidInputError(f"{name}: atom_range={atom_range!r} must be a pair (lo, hi)") from None
        if not lo <= hi:
            raise InvalidInputError(f"{name}: atom_range=({lo!r}, {hi!r}) must have lo <= hi")
        for field, value in (("values", values), ("target", target), ("atom_range", (lo, hi)),
                             ("name", str(name))):
            object.__setattr__(self, field, value)


def check(sample, constraints):
    """The constraints as a tuple, each checked against ``sample`` (one value per row)."""
    if constraints is None:
        return ()
    if isinstance(constraints, MomentConstraint):
        constraints = [constraints]
    out = tuple(constraints)
    for j, c in enumerate(out):
        if not isinstance(c, MomentConstraint):
            raise InvalidInputError(
                f"constraints[{j}] must be an elcvx.MomentConstraint, got {type(c).__name__}")
        if c.values.size != sample.n_rows:
            raise InvalidInputError(
                f"constraints[{j}] ({c.name}) has {c.values.size} values but the sample has "
                f"{sample.n_rows} rows")
    return out


def extra_atoms(sample, constraints=(), atoms=None) -> np.ndarray:
    """The extra atoms, as rows ``(w, g_1, ..., g_k)``.

    Default: every vertex of ``{wmin, wmax} x range_1 x ... x range_k`` (duplicates removed,
    e.g. when ``wmin = wmax``'s ranges coincide). At ``w = inf`` the ``g`` entries are limits of
    ``g / w``, which are 0 for the ranges of :class:`MomentConstraint` (finite). ``atoms``, if
    given, replaces the default: an array of such rows, with weights in ``[wmin, wmax]``.
    """
    constraints = check(sample, constraints)
    k = len(constraints)
    if atoms is None:
        rows = []
        for wk in (sample.wmin, sample.wmax):
            if math.isinf(wk):
                rows.append((wk,) + (0.0,) * k)
            else:
                rows.extend((wk,) + corner for corner in
                            itertools.product(*(c.atom_range for c in constraints)))
        return np.unique(np.array(rows, dtype=float).reshape(-1, 1 + k), axis=0)
    try:
        table = np.array(atoms, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"atoms must be an array of rows (w, g_1, ..., g_{k})") from None
    table = table.reshape(1, -1) if table.ndim == 1 else table
    if table.ndim != 2 or table.shape[1] != 1 + k or table.shape[0] == 0:
        raise InvalidInputError(
            f"atoms must have one row (w, g_1, ..., g_k) per atom, i.e. {1 + k} columns for "
            f"{k} constraints; got shape {np.shape(atoms)}")
    for i, row in enumerate(table):
        w = row[0]
        if not (sample.wmin <= w <= sample.wmax) or np.isnan(w):
            raise InvalidInputError(
                f"atoms[{i}] has w={w!r} outside [wmin, wmax] = [{sample.wmin}, {sample.wmax}]")
        if not np.all(np.isfinite(row[1:])):
            raise InvalidInputError(f"atoms[{i}]={row.tolist()!r} has a value that is not finite")
    return table


def dual_rows(atoms, targets, value=None):
    """``(A, h)``: the extra atoms' constraints ``A x + h >= 0`` on the dual point
    ``x = (beta, lambda_1, ..., lambda_k[, tau])`` of the likelihood ``sum c log(1 + x . d_n)``.

    An atom at ``(w, g)`` contributes ``1 + beta (w - 1) + lambda . (g - b) >= 0``, divided by
    ``max(1, w)`` (so that rows stay of size one for large ``w``; at ``w = inf`` the limit
    ``beta + lambda . g >= 0``, with ``g`` the limits of ``g/w``). ``value`` (optional): a pair
    ``(h, v)`` adding ``tau (h - v)`` for the value functional ``h`` at each atom (an array, one
    per atom; per unit weight at ``w = inf``) and the candidate ``v``.
    """
    atoms = np.asarray(atoms, dtype=float)
    targets = np.asarray(targets, dtype=float)
    w, g = atoms[:, 0], atoms[:, 1:]
    finite = np.isfinite(w)
    scale = np.where(finite, 1.0 / np.maximum(1.0, np.where(finite, w, 1.0)), 1.0)
    # Finite: (w - 1, g - b) / s and 1 / s; infinite: (1, g) and 0.
    wcol = np.where(finite, (np.where(finite, w, 0.0) - 1.0) * scale, 1.0)
    gcols = np.where(finite[:, None], (g - targets) * scale[:, None], g)
    A = np.column_stack([wcol, gcols])
    h = np.where(finite, scale, 0.0)
    if value is not None:
        hv, v = value
        hv = np.asarray(hv, dtype=float)
        tcol = np.where(finite, (hv - v) * scale, hv)
        A = np.column_stack([A, tcol])
    return A, h


def model(sample, constraints=None, atoms=None):
    """``None`` for the paper's programs (no constraint, default atoms), else the checked
    ``(constraints, atoms)`` that the solvers take."""
    constraints = check(sample, constraints)
    if not constraints and atoms is None:
        return None
    return constraints, extra_atoms(sample, constraints, atoms)
