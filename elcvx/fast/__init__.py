"""The fast path: numpy (numba's kernels where installed). Every EL program solved on its low-dimensional dual by an
active-set Newton method, each evaluation one pass over the rows, and certified.

* :mod:`~elcvx.fast.solve` -- the likelihood programs (the MLE, the profile) and
  :mod:`~elcvx.fast.bound` -- the bound: the entry points below; :mod:`~elcvx.passes.frames` --
  the coordinates a bound is solved in;
* :mod:`~elcvx.passes.objectives` -- the duals' oracles (value, gradient, Hessian in one pass);
* :mod:`~elcvx.passes.kernels` -- the passes' block kernels and merges (a pass is a map-reduce),
  and :mod:`~elcvx.passes.kernels_numba` their fused twins;
* :mod:`~elcvx.fast.active_set` -- the active-set Newton method (:mod:`~elcvx.fast.cone`: its
  cone fit);
  :mod:`~elcvx.fast.barrier` -- its fallback; :mod:`~elcvx.fast.starts` -- the starts.

The model they take is :class:`elcvx.model.Moments`; the certificate is :mod:`elcvx.certify`.
"""

from .bound import lower_bound, lower_bound_of
from .solve import mle, mle_of, profile, profile_of

__all__ = ["lower_bound", "lower_bound_of", "mle", "mle_of", "profile", "profile_of"]
