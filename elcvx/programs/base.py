"""The :class:`Program` container and the solve-with-fallback policy shared by every program."""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp

from ..errors import SolverError

# Clarabel's defaults reach about 1e-5 relative on these programs; the tests compare the cvxpy
# path with the fast path to 1e-6, so the tolerances are tightened.
CLARABEL_SETTINGS = dict(
    tol_gap_abs=1e-10,
    tol_gap_rel=1e-10,
    tol_feas=1e-10,
    tol_ktratio=1e-8,
    max_iter=500,
)

# Tried in order after the first attempt fails: shorter interior-point steps, then Clarabel's
# default tolerances (a reduced-accuracy status is still a failure).
FALLBACK_SETTINGS = (
    dict(CLARABEL_SETTINGS, max_step_fraction=0.9),
    dict(CLARABEL_SETTINGS, max_step_fraction=0.5, static_regularization_constant=1e-7),
)


@dataclass
class Program:
    """A compiled-once cvxpy program and its handles.

    Attributes
    ----------
    name : str
        Which program this is (e.g. ``"lower_bound_primal"``).
    problem : cvxpy.Problem
        The disciplined convex program (DPP: its scalar data are ``parameters``).
    parameters : dict of str to cvxpy.Parameter
        Values that change between solves; set ``.value`` then call :meth:`solve`.
    variables : dict of str to cvxpy.Variable
        The primal (or dual) variables, by the paper's names.
    constraints : dict of str to cvxpy.Constraint
        Named constraints, whose ``dual_value`` gives the other side's variables.
    info : dict
        What the builder wants a caller to know, e.g. ``N`` and what ``problem.value`` means
        (the programs are scaled, see :mod:`elcvx.programs.empirical_likelihood`).
    """

    name: str
    problem: cp.Problem
    parameters: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def solve(self, **parameter_values) -> float:
        """Set parameters by name, solve with Clarabel (with fallbacks) and return the optimum.

        Raises
        ------
        SolverError
            When no attempt reaches ``optimal``; names the solver and the last status.
        """
        for key, value in parameter_values.items():
            self.parameters[key].value = value
        status = "not solved"
        for settings in (CLARABEL_SETTINGS, *FALLBACK_SETTINGS):
            try:
                self.problem.solve(solver=cp.CLARABEL, **settings)
                status = self.problem.status
            except cp.error.SolverError as exc:
                status = f"solver error: {exc}"
                continue
            if status == cp.OPTIMAL:
                return float(self.problem.value)
        raise SolverError(
            f"Clarabel did not solve {self.name} (last status: {status}) after "
            f"{1 + len(FALLBACK_SETTINGS)} attempts",
            solver="CLARABEL",
            status=str(status),
        )
