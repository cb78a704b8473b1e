"""Checks of contextual-bandit data: contexts, actions, logging probabilities, sizes.

Used by the policies, :func:`~elcvx.learning.fit` and the synthetic bandit of
:mod:`elcvx.learning`; the scalars and vectors go through :mod:`elcvx._validation`, so the
messages are the package's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _validation as iv
from ..errors import InvalidInputError

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike


def matrix(name: str, X: ArrayLike, n_rows: int | None = None,
           n_cols: int | None = None) -> np.ndarray:
    """``X`` as a finite 2-d float array with ``n_rows`` rows and ``n_cols`` columns (if given)."""
    try:
        M = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a 2-d array of numbers, got {type(X).__name__}") from None
    if M.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-dimensional (n_examples, n_features), got shape {M.shape}")
    if n_cols is not None and M.shape[1] != n_cols:
        raise InvalidInputError(f"{name} has {M.shape[1]} columns but the policy has n_features={n_cols}")
    if n_rows is not None and M.shape[0] != n_rows:
        raise InvalidInputError(f"{name} has {M.shape[0]} rows but actions has length {n_rows}")
    bad = ~np.isfinite(M)
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        raise InvalidInputError(f"{name}[{i}, {j}]={float(M[i, j])!r} is not finite ({int(bad.sum())} such values)")
    return M


def actions(values: ArrayLike, n_actions: int | None = None) -> np.ndarray:
    """Action indices ``0 .. n_actions - 1`` as an integer array."""
    a = iv.vector("actions", values)
    frac = a != np.round(a)
    if frac.any():
        i = int(np.flatnonzero(frac)[0])
        raise InvalidInputError(f"actions[{i}]={float(a[i])!r} is not an integer action index")
    if n_actions is not None:
        iv.within("actions", a, 0, n_actions - 1, hint=f" (actions are indices 0..{n_actions - 1})")
    else:
        iv.within("actions", a, 0, np.inf, hint=" (actions are indices 0, 1, ...)")
    return a.astype(np.intp)


def examples(X: ArrayLike, actions_: ArrayLike, *, n_actions: int | None = None,
             n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Contexts and logged actions, checked against each other and a policy's sizes: ``(X, a)``."""
    a = actions(actions_, n_actions)
    return matrix("X", X, n_rows=a.size, n_cols=n_features), a


def weighted_examples(X: ArrayLike, actions_: ArrayLike, logging_prob_: ArrayLike,
                      rewards: ArrayLike, sample_weight: ArrayLike, *,
                      n_actions: int | None = None,
                      n_features: int | None = None) -> tuple[np.ndarray, ...]:
    """What a learner's ``refit`` takes, checked: ``(X, a, p, u, s)``."""
    M, a = examples(X, actions_, n_actions=n_actions, n_features=n_features)
    n = a.size
    p = logging_prob(logging_prob_, n)
    u = iv.vector("rewards", rewards, n=n, length_of="actions")
    s = iv.vector("sample_weight", sample_weight, n=n, length_of="actions")
    iv.within("sample_weight", s, 0.0, np.inf)
    return M, a, p, u, s


def positive_int(name: str, value: object) -> int:
    x = iv.finite_scalar(name, value)
    if x != int(x) or x < 1:
        raise InvalidInputError(f"{name}={value!r} must be a positive integer")
    return int(x)


def n_actions(value: object) -> int:
    """A number of actions: an integer of at least 2."""
    k = positive_int("n_actions", value)
    if k < 2:
        raise InvalidInputError(f"n_actions={value!r} must be at least 2")
    return k


def logging_prob(p: ArrayLike, n: int) -> np.ndarray:
    """The logging policy's probabilities of the ``n`` logged actions, each in ``(0, 1]``."""
    probs = iv.vector("logging_prob", p, n=n, length_of="actions")
    bad = ~((probs > 0) & (probs <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"logging_prob[{i}]={float(probs[i])!r} must lie in (0, 1]")
    return probs
