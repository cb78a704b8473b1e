"""The :class:`Program` container and the solve-with-fallback policy shared by every program."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import math

import cvxpy as cp
import numpy as np

from ..errors import InvalidInputError, SolverError

# Clarabel's defaults reach about 1e-5 relative on these programs; the tests compare the cvxpy
# path with the fast path to 1e-6, so the tolerances are tightened. Every key that any attempt
# below changes is set here too: cvxpy keeps Clarabel's solver object between solves of a
# problem and updates only the settings it is given, so a setting left out would silently keep
# the value of the previous attempt.
CLARABEL_SETTINGS = dict(
    tol_gap_abs=1e-10,
    tol_gap_rel=1e-10,
    tol_feas=1e-10,
    tol_ktratio=1e-8,
    max_iter=200,
    max_step_fraction=0.99,
    iterative_refinement_enable=True,
)

# Tried in order after the first attempt fails (an exception, a status other than "optimal", or
# a failed ``check``): shorter interior-point steps, which measured on random EL samples rescue
# most exponential-cone failures (Clarabel's step length collapses mid-way); then shorter steps
# still with tolerances of 1e-8, for problems whose last iterations lose accuracy before they
# reach 1e-10. A reduced-accuracy status ("optimal_inaccurate") is a failure unless a ``check``
# given to :meth:`Program.solve` certifies the solution independently.
FALLBACK_SETTINGS = (
    dict(CLARABEL_SETTINGS, max_step_fraction=0.7),
    dict(CLARABEL_SETTINGS, max_step_fraction=0.5, tol_gap_abs=1e-8, tol_gap_rel=1e-8,
         tol_feas=1e-8, tol_ktratio=1e-6, max_iter=300),
)
ATTEMPTS = (CLARABEL_SETTINGS, *FALLBACK_SETTINGS)

# The lower bound's programs start with the shorter steps and without iterative refinement: more
# of them are solved at once that way than at the tight settings, and each iteration costs less
# (benchmarks/bench_formulations.py measures it). The order after that is :data:`ATTEMPTS`'.
BOUND_ATTEMPTS = (dict(FALLBACK_SETTINGS[0], iterative_refinement_enable=False), *ATTEMPTS)


# The cvxpy path certifies the estimate and the likelihoods from Clarabel's dual point
# (elcvx.certify), which needs the point to about 1e-10: the estimate's error bound is about
# sqrt(N gap). So its likelihood programs start at tolerances of 1e-13 (measured on random
# samples: 1e-10 certifies a third of the MLEs, 1e-13 four in five, the rest stopping short with
# "insufficient progress", which the check may still certify); :data:`ATTEMPTS` follow. The
# bound's certificate is of first order in the point's error, but what its solution gives
# besides the bound (q, kappa: the learners' gradients) is as accurate as the point: its first
# attempt is tight too.
TIGHT_SETTINGS = dict(CLARABEL_SETTINGS, tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13,
                      tol_ktratio=1e-11)
CERTIFIED_ATTEMPTS = (TIGHT_SETTINGS, *ATTEMPTS)
CERTIFIED_BOUND_ATTEMPTS = (dict(BOUND_ATTEMPTS[0], tol_gap_abs=1e-13, tol_gap_rel=1e-13,
                                 tol_feas=1e-13, tol_ktratio=1e-11), *BOUND_ATTEMPTS)


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
    log : list of (int, str)
        The attempts of the last :meth:`solve`: index into its settings, and status.
    """

    name: str
    problem: cp.Problem
    parameters: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    log: list = field(default_factory=list, repr=False)
    #: (constraints, atoms) -> Program
    rebuild: Callable[..., Program] | None = field(default=None, repr=False)

    def __post_init__(self):
        # Checked at build, where the offending term is named, not at the first solve.
        if not self.problem.is_dcp():
            raise InvalidInputError(f"{self.name} is not a disciplined convex program (DCP): "
                                    f"{_first_offender(self.problem)}")
        if not self.problem.is_dcp(dpp=True):
            raise InvalidInputError(
                f"{self.name} is convex but not DPP, so it would be compiled again at every "
                f"solve: a parameter enters non-affinely ({_first_offender(self.problem, dpp=True)})")

    # -- the paper's units -------------------------------------------------------------------
    def log_likelihood(self) -> float:
        """``sum_n c_n log Q_n`` at the last solution: the paper's log-likelihood of the
        examples (the program's own objective is scaled; see its docstring).

        Only for programs with per-example masses ``q`` (the primal programs).
        """
        q = self._value("q")
        c = self.info.get("counts")
        c = np.ones_like(q) if c is None else c
        return float(np.sum(c * np.log(q)))

    def atom_masses(self) -> dict:
        """The probability mass of each extra atom at the last solution, by name (``m_...``;
        an atom at ``w = inf`` has none: its weighted mass is the ``z_...`` variable)."""
        return {name: float(np.asarray(self._value(name)).reshape(-1)[0])
                for name in self.variables if name.startswith("m_")}

    def _value(self, name):
        if name not in self.variables:
            raise KeyError(f"{self.name} has no variable {name!r} (it has {sorted(self.variables)})")
        value = self.variables[name].value
        if value is None:
            raise ValueError(f"{self.name} has not been solved: call solve() first")
        return np.asarray(value, dtype=float)

    def with_constraints(self, constraints, atoms=None) -> "Program":
        """The same program built again with moment constraints (and atoms): see
        :mod:`elcvx.constraints`. The result is a new program, compiled on its first solve."""
        if self.rebuild is None:
            raise TypeError(f"{self.name} cannot be rebuilt with constraints")
        return self.rebuild(constraints, atoms)

    def solve(self, *, check=None, attempts=None, **parameter_values) -> float:
        """Set parameters by name, solve with Clarabel (with fallbacks) and return the optimum.

        The settings in ``attempts`` (default :data:`ATTEMPTS`: :data:`CLARABEL_SETTINGS`, then
        each of :data:`FALLBACK_SETTINGS`) are tried in order until one succeeds:

        * without ``check``, an attempt succeeds when Clarabel reports ``optimal``; anything
          else (an error, ``optimal_inaccurate``, a limit) moves on to the next settings;
        * with ``check`` (a callable taking this program and returning ``True`` when its
          solution is certified, e.g. by a duality-gap certificate computed independently of the
          solver, else ``False`` or the reason as a string, which the status then quotes),
          an attempt succeeds when the check passes on a solution that Clarabel reported
          ``optimal`` or ``optimal_inaccurate`` (including "insufficient progress", whose last
          iterate cvxpy then returns). A solution that fails the check never counts, whatever
          its status: Clarabel has been seen to report ``optimal`` with errors near 1e-3.

        Each attempt's ``(settings index, status)`` is recorded in ``self.log`` (the status
        carries ``" (certified)"`` when a reduced-accuracy solution passed the check).

        Raises
        ------
        SolverError
            When no attempt succeeds; names the solver and the last status.
        """
        for key, value in parameter_values.items():
            self.parameters[key].value = value
        attempts = ATTEMPTS if attempts is None else attempts
        extra = {} if check is None else {"accept_unknown": True}
        self.log = []
        status = "not solved"
        for index, settings in enumerate(attempts):
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    # cvxpy evaluates log(0) at a point on the cone's edge; the certificate, not
                    # a warning, judges the point.
                    warnings.filterwarnings("ignore", category=RuntimeWarning, module="cvxpy")
                    self.problem.solve(solver=cp.CLARABEL, **settings, **extra)
                status = self.problem.status
            except cp.error.SolverError as exc:
                status = f"solver error: {exc}"
                self.log.append((index, "solver_error"))
                continue
            if check is not None and status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                verdict = check(self)
                if verdict is True:
                    if status != cp.OPTIMAL:
                        status = f"{status} (certified)"
                    self.log.append((index, status))
                    return float(self.problem.value)
                why = f": {verdict}" if isinstance(verdict, str) else ""
                status = f"{status}, but the solution failed its check{why}"
            elif check is None and status == cp.OPTIMAL:
                self.log.append((index, status))
                return float(self.problem.value)
            self.log.append((index, status))
        raise SolverError(
            f"Clarabel did not solve {self.name} (last status: {status}) after "
            f"{len(attempts)} attempts",
            solver="CLARABEL",
            status=str(status),
        )


SIDES = ("lower", "upper")


def sample_data(sample, side="lower"):
    """``(w, u, c, N, wmin, wmax)`` of a sample on the unit reward scale (``1 - u`` for "upper")."""
    if side not in SIDES:
        raise InvalidInputError(f"side={side!r} is not valid; choose one of 'lower', 'upper'")
    w = np.asarray(sample.w, dtype=float)
    u = np.asarray(sample.u, dtype=float)
    if side == "upper":
        u = 1.0 - u
    c = np.asarray(sample.c, dtype=float)
    return w, u, c, float(sample.n), float(sample.wmin), float(sample.wmax)


def inv_wmax(wmax):
    """``1/wmax``, and 0 for ``wmax = inf`` (the coefficient of an atom at infinity's mass)."""
    return 0.0 if math.isinf(wmax) else 1.0 / wmax


def _first_offender(problem, dpp=False) -> str:
    """The objective or the first constraint that breaks the DCP (or DPP) rules, as cvxpy prints
    it."""
    if not problem.objective.is_dcp(dpp=dpp):
        return f"the objective {problem.objective}"
    for con in problem.constraints:
        if not con.is_dcp(dpp=dpp):
            return f"the constraint {con}"
    return "no single term (the combination)"
