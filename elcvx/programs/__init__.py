"""The cvxpy programs of elcvx: every estimate and bound, declared as a disciplined convex program.

Each builder takes a :class:`~elcvx.Sample` and returns a :class:`Program` (the ``cp.Problem``,
its parameters, variables and named constraints), compiled once and re-solved as its scalar
parameters change. The exponential cone enters through cvxpy's ``log``, ``rel_entr`` and
``entr`` atoms; Clarabel solves them.

The six empirical-likelihood builders also take known moments ``E_Q[g] = b`` as
``constraints=`` (:class:`~elcvx.constraints.MomentConstraint` s) and the extra atoms as
``atoms=`` (:mod:`elcvx.programs.empirical_likelihood` lists the handles they add).
"""

from .base import CLARABEL_SETTINGS, Program
from .empirical_likelihood import (
    lower_bound_dual,
    lower_bound_primal,
    mle_dual,
    mle_primal,
    profile_dual,
    profile_primal,
)
from .cr_primal import cr_estimate_primal, cr_lower_bound_primal

# The inner problem of lower-bound policy learning (elcvx.learning), a DPP program in w(pi).
from .learning import DPP_MAX_ROWS, dro_inner, dro_inner_dual, dro_inner_primal

__all__ = [
    "Program",
    "CLARABEL_SETTINGS",
    "mle_primal",
    "mle_dual",
    "profile_primal",
    "profile_dual",
    "lower_bound_primal",
    "lower_bound_dual",
    "cr_estimate_primal",
    "cr_lower_bound_primal",
    "dro_inner",
    "dro_inner_primal",
    "dro_inner_dual",
    "DPP_MAX_ROWS",
]
