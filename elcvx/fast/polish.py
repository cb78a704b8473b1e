"""Clarabel's point polished by the fast method: the cvxpy path's one fallback that uses the fast
path, where none of Clarabel's answers is certified (:mod:`elcvx.cvx.solve`, step 3).

Its last dual point is refined by at most :data:`ITERATIONS` iterations of the active-set
method (:mod:`elcvx.fast.active_set`; two or three Newton steps reach rounding from there) and
certified. The cvxpy path does not import this module (it may not import :mod:`elcvx.fast`):
:mod:`elcvx.dispatch` hands it in as the ``polish=`` of :func:`elcvx.cvx.mle`,
:func:`~elcvx.cvx.profile` and :func:`~elcvx.cvx.lower_bound`, and the status then says so.
"""

from __future__ import annotations

from ..solutions import BoundSolution, MLESolution, ProfileSolution
from .bound import lower_bound_of
from .solve import mle_of, profile_of

#: The active-set method's iterations from Clarabel's point at most.
ITERATIONS = 8


def mle(data, x) -> MLESolution:
    """The MLE of the model ``data`` refined from the dual point ``x = (beta, lambda)``."""
    return mle_of(data, start=x, max_iter=ITERATIONS)


def profile(data, v, x) -> ProfileSolution:
    """The profile likelihood at ``v`` refined from the dual point ``x = (beta, lambda, tau)``."""
    return profile_of(data, [v], starts=[x], max_iter=ITERATIONS)


def bound(data, loglik, quantile, y, mle_gap) -> BoundSolution:
    """The bound refined from the dual point ``y = (gamma, beta, lambda)``, for the MLE
    ``loglik`` with certified gap ``mle_gap``."""
    return lower_bound_of(data, loglik, quantile, start=y, max_iter=ITERATIONS, mle_gap=mle_gap)
