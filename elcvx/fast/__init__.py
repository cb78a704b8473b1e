"""The fast path: numpy (numba's kernels where installed). Every EL program solved on its low-dimensional dual by an
active-set Newton method, each evaluation one pass over the rows, and certified.

* :mod:`~elcvx.fast.solve` -- the likelihood programs (the MLE, the profile) and
  :mod:`~elcvx.fast.bound` -- the bound: the entry points below;
* :mod:`~elcvx.fast.active_set` -- the active-set Newton method (:mod:`~elcvx.fast.cone`: its
  cone fit);
  :mod:`~elcvx.fast.barrier` -- its fallback; :mod:`~elcvx.fast.starts` -- the starts;
* :mod:`~elcvx.fast.polish` -- Clarabel's point polished by the method (the cvxpy path's one
  fallback that uses it, handed to it by :mod:`elcvx.dispatch`).

The model they take is :class:`elcvx.model.Moments`; each evaluation is one pass of
:mod:`elcvx.passes` (the duals' oracles, :mod:`~elcvx.passes.objectives`); the verdict on each
point, its status and certified errors, is :mod:`elcvx.verdict`'s (by :mod:`elcvx.certify`).
"""

from . import polish
from .bound import lower_bound, lower_bound_of
from .solve import mle, mle_of, profile, profile_of

__all__ = ["lower_bound", "lower_bound_of", "mle", "mle_of", "polish", "profile", "profile_of"]
