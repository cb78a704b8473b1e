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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _validation as iv
from .errors import InvalidInputError

if TYPE_CHECKING:  # (annotations of reward_model only)
    from numpy.typing import ArrayLike

    from .sample import Sample


@dataclass(frozen=True, eq=False, init=False)
class MomentConstraint:
    """``E_Q[values] = target``: one known moment of the distribution behind the log.

    Parameters
    ----------
    values : array_like or str
        The column ``g``, one value per row of the sample it is used with; or, for a log
        scanned in chunks (:func:`elcvx.io.scan_log`), the name of one of its
        ``constraint_columns``.
    target : float
        Its known expectation ``b``.
    atom_range : (float, float) or callable
        The range of ``g`` at the unobserved extra atoms (finite): where ``g`` could lie for an
        example that was not logged. Too narrow a range makes the interval too narrow. A
        callable ``w -> (lo, hi)`` gives the range at an atom of weight ``w`` (``wmin`` or
        ``wmax``; at ``w = inf``, the range of ``g / w``), for values tied to the weight.
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
    atom_range: tuple[float, float] | Callable[[float], tuple[float, float]]
    name: str

    def __init__(self, values: ArrayLike | str, target: float = 0.0,
                 atom_range: tuple[float, float] | Callable[[float], Any] | None = None, *,
                 name: str = "g") -> None:
        if isinstance(values, str):  # (a column's name: read from a scanned log)
            name = values if name == "g" else name
        else:
            values = iv.vector(f"{name} (constraint values)", values)
        target = iv.finite_scalar(f"{name} target", target)
        if atom_range is None:
            raise InvalidInputError(
                f"{name}: atom_range=(lo, hi) is required: the range of the constraint's values "
                "at examples that were not logged (e.g. the column's possible range)")
        if not callable(atom_range):
            atom_range = _range(f"{name} atom_range", atom_range)
        for field, value in (("values", values), ("target", target), ("atom_range", atom_range),
                             ("name", str(name))):
            object.__setattr__(self, field, value)


    def range_at(self, w: float) -> tuple[float, float]:
        """``(lo, hi)``: the range of ``g`` at an atom of weight ``w`` (of ``g / w`` at inf)."""
        if callable(self.atom_range):
            return _range(f"{self.name} atom_range({w!r})", self.atom_range(w))
        return (0.0, 0.0) if math.isinf(w) else self.atom_range


def _range(name: str, pair: Any) -> tuple[float, float]:
    try:
        ends = list(pair)
    except TypeError:
        ends = None
    if ends is None or len(ends) != 2:
        raise InvalidInputError(f"{name}={pair!r} must be a pair (lo, hi)", field="atom_range",
                                value=pair)
    lo, hi = (iv.finite_scalar(name, x) for x in ends)
    if not lo <= hi:
        raise InvalidInputError(f"{name}=({lo!r}, {hi!r}) must have lo <= hi")
    return lo, hi


def check(sample: Any, constraints: Any) -> tuple[MomentConstraint, ...]:
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
        columns = getattr(sample, "constraint_columns", ())
        if isinstance(c.values, str) and c.values not in columns:
            raise InvalidInputError(
                f"constraints[{j}] ({c.name}) names the column {c.values!r}, which the sample does "
                "not hold: give its values, or read it with elcvx.io.scan_log(..., "
                f"constraint_columns=[{c.values!r}])" + (f" (read: {list(columns)})" if columns else ""),
                field="constraints", value=c.values)
        if isinstance(c.values, str):
            continue
        if columns:
            raise InvalidInputError(
                f"constraints[{j}] ({c.name}): a scanned log's constraints name its columns "
                f"({list(columns)}), not values", field="constraints", value=j)
        if c.values.size != sample.n_rows:
            raise InvalidInputError(
                f"constraints[{j}] ({c.name}) has {c.values.size} values but the sample has "
                f"{sample.n_rows} rows")
    return out


def extra_atoms(sample: Any, constraints: Any = (), atoms: Any = None) -> np.ndarray:
    """The extra atoms, as rows ``(w, g_1, ..., g_k)``.

    Default: at each ``w`` in ``{wmin, wmax}``, every vertex of ``range_1(w) x ... x
    range_k(w)`` (:meth:`MomentConstraint.range_at`; duplicates removed). At ``w = inf`` the
    ``g`` entries are limits of ``g / w`` (0 for a fixed, finite range). ``atoms``, if given,
    replaces the default: an array of such rows, with weights in ``[wmin, wmax]``.
    """
    constraints = check(sample, constraints)
    k = len(constraints)
    if atoms is None:
        rows: list[tuple[float, ...]] = []
        for wk in (sample.wmin, sample.wmax):
            rows.extend((wk,) + corner for corner in
                        itertools.product(*(c.range_at(wk) for c in constraints)))
        table = np.array(rows, dtype=float).reshape(-1, 1 + k)
        if k == 0 and table[0, 0] < table[1, 0]:
            return table  # (np.unique's answer: wmin < wmax, sorted and distinct)
        return np.unique(table, axis=0)
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


def dual_rows(atoms: np.ndarray, targets: Any,
              value: Any = None) -> tuple[np.ndarray, np.ndarray]:
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


def model(sample: Sample, constraints: Any = None, atoms: Any = None) -> tuple[Any, Any] | None:
    """``None`` for the paper's programs (no constraint, default atoms), else the checked
    ``(constraints, atoms)`` that the solvers take."""
    constraints = check(sample, constraints)
    if not constraints and atoms is None:
        return None
    return constraints, extra_atoms(sample, constraints, atoms)


# ---------------------------------------------------------------------------------------------
# Constraints a user would expect, each with its atoms
# ---------------------------------------------------------------------------------------------
def reward_model(sample: Sample, predicted: ArrayLike, expected: ArrayLike | None = None, *,
                 actions: ArrayLike | None = None, target_probs: ArrayLike | None = None,
                 deterministic: bool = False, name: str = "reward model") -> MomentConstraint:
    r"""The doubly robust control variate of a reward model ``r_hat`` (EL with a reward predictor).

    ``g_n = w_n r_hat(x_n, a_n) - sum_a pi(a|x_n) r_hat(x_n, a)`` has expectation 0 under the
    logging policy, whatever ``r_hat`` is, so ``E_Q[g] = 0`` is known; the better ``r_hat``
    predicts the reward, the more the constraint narrows the interval (as a control variate
    does). On the unit reward scale, at an atom of weight ``w`` the unknown ``r_hat`` and its
    target expectation lie in ``[0, 1]``, so ``g`` lies in ``[-1, w]``; with a deterministic
    target policy a weight ``w > 0`` means the logged action is the target's, so ``g = (w - 1)
    r_hat`` and at ``w = 0`` ``g`` lies in ``[-1, 0]``.

    Two ways to give ``r_hat``:

    * the matrices, for any target policy, stochastic or not: ``predicted`` the ``(N, K)``
      predictions ``r_hat(x_n, k)`` for every action, ``target_probs`` the ``(N, K)``
      probabilities ``pi(k|x_n)``, ``actions`` the logged actions; ``r_hat`` at the logged
      action and its expectation ``sum_k pi(k|x_n) r_hat(x_n, k)`` are taken from them;
    * the two vectors: ``predicted`` = ``r_hat(x_n, a_n)`` and ``expected`` = ``sum_a pi(a|x_n)
      r_hat(x_n, a)``, computed by the caller.

    **Fit ``r_hat`` on other data, or cross-fit it.** ``E[g] = 0`` holds for an ``r_hat`` that
    does not depend on the row's own reward. One fitted on the same log has learned each row's
    reward, so ``w_n r_hat(x_n, a_n)`` leans towards ``w_n r_n`` and the constraint pulls the
    estimate towards the model's own fit. Fit it on an earlier log, or cross-fit: split the rows
    into ``k`` folds (e.g. 5), fit ``r_hat`` on ``k - 1`` of them and predict on the last, in
    turn, so that every row's prediction comes from a model that never saw it (the
    documentation's "Moment constraints" page shows it with a least-squares fit).

    Parameters
    ----------
    sample : Sample
    predicted : array_like
        ``(N, K)``: ``r_hat(x_n, k)`` for every action (with ``actions`` and ``target_probs``);
        or ``(N,)``: ``r_hat(x_n, a_n)``, the prediction for the logged action (with
        ``expected``). On the reward scale ``[rmin, rmax]``.
    expected : array_like, optional
        ``(N,)``: ``sum_a pi(a|x_n) r_hat(x_n, a)``, the prediction's expectation under the target
        policy (with a vector ``predicted`` only).
    actions : array_like of int, optional
        ``(N,)``: the logged actions, ``0 .. K-1`` (with a matrix ``predicted``).
    target_probs : array_like, optional
        ``(N, K)``: ``pi(k|x_n)``, each row summing to 1 (with a matrix ``predicted``). A row's
        probability of its logged action is 0 exactly where its weight is 0, as ``w = pi / h``
        says; a row where not (actions or columns out of order) is an error.
    deterministic : bool
        Whether the target policy is deterministic (tighter atoms).

    Returns
    -------
    MomentConstraint

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx import Sample, constraints
    >>> pi = np.array([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]])   # a stochastic target policy
    >>> a = np.array([0, 1, 1])                               # the logged actions
    >>> h = np.array([0.5, 0.5, 0.5])                         # their logging probabilities
    >>> s = Sample(pi[np.arange(3), a] / h, [1.0, 0.0, 1.0], wmax=10)
    >>> r_hat = np.array([[0.7, 0.3], [0.6, 0.2], [0.5, 0.5]])   # r_hat(x_n, k)
    >>> c = constraints.reward_model(s, r_hat, actions=a, target_probs=pi)
    >>> c.values.round(3).tolist()   # w r_hat(x, a) - sum_k pi(k|x) r_hat(x, k)
    [0.2, 0.04, -0.4]
    """
    if np.ndim(predicted) == 2:
        if expected is not None:
            raise InvalidInputError("give expected with a vector of predictions for the logged "
                                    "actions; with an (N, K) matrix of predictions it is "
                                    "sum_k target_probs[:, k] predicted[:, k], computed here")
        predicted, expected = _at_logged_action(sample, predicted, actions, target_probs)
    elif actions is not None or target_probs is not None:
        raise InvalidInputError(f"actions and target_probs go with an (N, K) matrix of "
                                f"predictions; predicted has shape {np.shape(predicted)}")
    elif expected is None:
        raise InvalidInputError("expected is missing: give sum_a pi(a|x_n) r_hat(x_n, a) per row, "
                                "or the (N, K) matrices predicted and target_probs with actions")
    unit = []
    for field, values in (("predicted", predicted), ("expected", expected)):
        x = iv.vector(field, values, n=sample.n_rows)
        iv.within(field, x, sample.rmin, sample.rmax, hint=" (reward model predictions lie in "
                  "the reward range)")
        unit.append(np.clip((x - sample.rmin) / (sample.rmax - sample.rmin), 0.0, 1.0))
    p, m = unit

    def at(w: float) -> tuple[float, float]:
        if math.isinf(w):
            return (0.0, 1.0)  # g / w -> r_hat
        if deterministic:
            return (-1.0, 0.0) if w == 0 else (min(0.0, w - 1.0), max(0.0, w - 1.0))
        return (-1.0, w)

    return MomentConstraint(sample.w * p - m, 0.0, atom_range=at, name=name)


def _at_logged_action(sample: Sample, predicted: ArrayLike, actions: ArrayLike | None,
                      target_probs: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    """``(r_hat(x_n, a_n), sum_k pi(k|x_n) r_hat(x_n, k))`` from the ``(N, K)`` matrices."""
    predicted = iv.vector("predicted", np.ravel(predicted)).reshape(np.shape(predicted))
    n, k = sample.n_rows, np.shape(predicted)[1]
    if actions is None or target_probs is None:
        raise InvalidInputError("an (N, K) matrix of predictions needs actions (the logged "
                                "actions) and target_probs (the (N, K) matrix of pi(k|x_n))")
    if np.shape(predicted)[0] != n or k < 2:
        raise InvalidInputError(f"predicted must be an (N, K) array with N = {n} rows and K >= 2 "
                                f"actions; got shape {predicted.shape}", field="predicted")
    if np.shape(target_probs) != predicted.shape:
        raise InvalidInputError(f"target_probs has shape {np.shape(target_probs)}; it must have "
                                f"predicted's {predicted.shape}", field="target_probs")
    pi = iv.vector("target_probs", np.ravel(target_probs)).reshape(predicted.shape)
    iv.within("target_probs", pi.ravel(), 0.0, 1.0)
    total = pi.sum(axis=1)
    bad = np.abs(total - 1.0) > 1e-6
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"target_probs[{i}] sums to {float(total[i]):.6g}, not 1 (a row is the "
                                "target policy's distribution over the K actions)",
                                field="target_probs", index=i, value=float(total[i]))
    onehot = _one_hot(sample, actions, k)
    logged = (pi * onehot).sum(axis=1)
    mismatch = (logged > 0) != (sample.w > 0)
    if mismatch.any():
        i = int(np.flatnonzero(mismatch)[0])
        raise InvalidInputError(
            f"row {i}: target_probs gives the logged action {int(np.asarray(actions)[i])} "
            f"probability {float(logged[i]):.6g} but its weight is {float(sample.w[i])!r}; w = pi(a|x) / "
            "h(a|x) is 0 exactly where pi(a|x) is: are the actions or the columns in the same "
            "order as the sample's rows?", field="target_probs", index=i)
    return (predicted * onehot).sum(axis=1), (pi * predicted).sum(axis=1)


def _one_hot(sample: Sample, actions: ArrayLike | None, n_actions: int) -> np.ndarray:
    a = np.asarray(actions)
    if a.shape != (sample.n_rows,) or not np.issubdtype(a.dtype, np.integer):
        raise InvalidInputError(f"actions must be {sample.n_rows} integers, one per row")
    bad = (a < 0) | (a >= n_actions)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"actions[{i}]={int(a[i])} is outside 0..{n_actions - 1}")
    onehot: np.ndarray = np.eye(n_actions)[a]
    return onehot


def _probabilities(sample: Sample, target_probs: ArrayLike | None) -> np.ndarray:
    """``target_probs`` checked: an ``(N, K)`` array of probabilities, each row summing to 1."""
    pi = np.asarray(target_probs, dtype=float)
    if pi.ndim != 2 or pi.shape[0] != sample.n_rows or pi.shape[1] < 2:
        raise InvalidInputError(
            f"target_probs must be an (N, K) array with N = {sample.n_rows} rows and K >= 2 "
            f"actions; got shape {pi.shape}", field="target_probs")
    bad = ~np.isfinite(pi) | (pi < 0) | (pi > 1)
    if bad.any():
        i, k = map(int, np.argwhere(bad)[0])
        raise InvalidInputError(f"target_probs[{i}, {k}]={float(pi[i, k])!r} is not a probability in "
                                "[0, 1]", field="target_probs", index=i, value=float(pi[i, k]))
    sums = pi.sum(axis=1)
    off = np.abs(sums - 1.0) > 1e-9 * pi.shape[1]
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise InvalidInputError(f"target_probs[{i}] sums to {float(sums[i])!r}, not 1: each row is the "
                                "target policy's distribution over the K actions",
                                field="target_probs", index=i, value=float(sums[i]))
    return pi


def action_control_variates(sample: Sample, actions: ArrayLike,
                            target_probs: ArrayLike) -> tuple[list[MomentConstraint], np.ndarray]:
    r"""Per-action control variates: ``g_k = w 1[a = k] - pi(k|x)``, ``E_Q[g_k] = 0``.

    ``target_probs``: an ``(N, K)`` array of ``pi(k|x_n)``. One constraint per action but the
    last (the ``K`` of them sum to ``w - 1``, which ``E_Q[w] = 1`` already fixes). The atoms
    are tied: an unlogged example has one action ``k`` and a target distribution in the
    simplex, so its ``g`` is ``w e_k - e_j`` at the simplex's vertices ``e_j`` (``e_k`` per unit
    weight at ``w = inf``).

    Returns
    -------
    (list of MomentConstraint, atoms)
        Pass both: ``elcvx.interval(sample, constraints=cs, atoms=atoms)``.
    """
    pi = _probabilities(sample, target_probs)
    K = pi.shape[1]
    onehot = _one_hot(sample, actions, K)
    # (At w = inf, g / w -> 1[a = k], in [0, 1].)
    at = lambda w: (0.0, 1.0) if math.isinf(w) else (-1.0, w)  # noqa: E731
    cs = [MomentConstraint(sample.w * onehot[:, k] - pi[:, k], 0.0, atom_range=at,
                           name=f"action {k}") for k in range(K - 1)]
    rows = []
    for w in (sample.wmin, sample.wmax):
        for k in range(K):
            if math.isinf(w):
                rows.append(np.r_[w, np.eye(K)[k, :K - 1]])
                continue
            for j in range(K):
                rows.append(np.r_[w, (w * np.eye(K)[k] - np.eye(K)[j])[:K - 1]])
    return cs, np.unique(np.array(rows), axis=0)


def action_marginals(sample: Sample, actions: ArrayLike,
                     marginals: ArrayLike) -> tuple[list[MomentConstraint], np.ndarray]:
    r"""Known action marginals of the target policy: ``E_Q[w 1[a = k]] = E_x pi(k|x)``.

    ``marginals``: the target policy's probability of each action, averaged over contexts
    (``K`` numbers summing to 1). One constraint per action but the last (they sum to
    ``E_Q[w] = 1``). An unlogged example has one action ``k``, so its ``g`` is ``w e_k``.

    Returns
    -------
    (list of MomentConstraint, atoms)
    """
    p = iv.vector("marginals", marginals)
    K = p.size
    if K < 2 or not abs(p.sum() - 1.0) <= 1e-9 or np.any(p < 0):
        raise InvalidInputError(f"marginals={p.tolist()!r} must be K >= 2 probabilities summing to 1")
    onehot = _one_hot(sample, actions, K)
    at = lambda w: (0.0, 1.0) if math.isinf(w) else (0.0, w)  # noqa: E731  (g / w at w = inf)
    cs = [MomentConstraint(sample.w * onehot[:, k], float(p[k]), atom_range=at,
                           name=f"action {k}") for k in range(K - 1)]
    rows = [np.r_[w, ((1.0 if math.isinf(w) else w) * np.eye(K)[k])[:K - 1]]
            for w in (sample.wmin, sample.wmax) for k in range(K)]
    return cs, np.unique(np.array(rows), axis=0)
