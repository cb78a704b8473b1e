"""Raw solutions exchanged between the solver paths and the public functions.

Both paths (:mod:`elcvx.fast` and :mod:`elcvx.cvx`) work on rewards rescaled to ``[0, 1]`` (called
``u``) and return these tuples; the public functions turn them into result objects on the user's
scale. ``c`` are the row counts (ones when the sample has none) and ``N = sum(c)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class MLESolution(NamedTuple):
    """``beta*`` maximises ``sum c log(1 + beta (w - 1))`` over ``[-1/(wmax-1), 1/(1-wmin)]``."""

    beta: float
    loglik: float  # l*_mle, the maximum (>= 0)
    q: np.ndarray  # per-example primal mass 1 / (N (1 + beta* (w - 1)))
    status: str
    work: tuple[int, int] = (0, 0)  # the fast path's passes over the data and rows they read
    lambdas: tuple = ()  # the moment constraints' multipliers (elcvx.constraints)
    sums: tuple = ()  # the fast path's (sum c q, sum c q w, sum c q w u): for rows not in memory
    at_atom: bool = False  # an extra atom carries mass: beta* is on an atom's constraint
    gap: float = math.nan  # certified: the true l*_mle lies in [loglik, loglik + gap]
    error: float = math.nan  # certified: the bound on the estimate's error (unit scale, any rho)


class BoundSolution(NamedTuple):
    """The lower-bound program on rewards ``u``: min E_Q[w u] over the likelihood ball."""

    value: float  # v_lb on the unit scale
    beta: float
    gamma: float
    kappa: float
    q: np.ndarray  # per-example primal mass kappa / (gamma + beta w + w u)
    status: str
    work: tuple[int, int] = (0, 0)
    lambdas: tuple = ()
    sums: tuple = ()  # the fast path's (sum c q, sum c q w): for rows not in memory
    error: float = math.nan  # certified: the bound on |value - the true bound| (unit scale)


class ProfileSolution(NamedTuple):
    """``l_v = sup sum c log(1 + beta (w - 1) + tau (w u - v))`` over the 4 corner constraints."""

    loglik: np.ndarray  # l_v for each v (inf where v is impossible)
    beta: np.ndarray
    tau: np.ndarray
    status: str
    work: tuple[int, int] = (0, 0)
    gap: np.ndarray | None = None  # certified: each true l_v lies in [loglik, loglik + gap]
