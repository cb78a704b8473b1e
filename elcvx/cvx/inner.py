"""The learning game's inner program (:mod:`elcvx.programs.learning`), solved: Clarabel's answer
certified (:func:`solve_certified`, by :mod:`elcvx.verdict`) as every cvxpy answer of the package
is, or read as Clarabel left it (:func:`read_solution`). Its likelihood radius ``phi`` at the
policy's weights is :func:`elcvx.learning.objective.dro_phi`'s (from the fast path's MLE, which
this package does not import).
"""

from __future__ import annotations

import math

import numpy as np

from .. import verdict
from ..model import Moments
from ..programs.base import CERTIFIED_ATTEMPTS, Program
from ..programs.learning import dual_point
from ..sample import Sample
from ..solutions import BoundSolution
from ..status import Status
from .solve import Rejected, _scalar, _status


def solve_certified(program: Program, *, w, mle, quantile) -> BoundSolution:
    """Solve the inner program at ``w`` (``phi`` from the MLE ``mle`` of ``w`` and the
    calibration ``quantile``) and return its certified solution.

    As for every cvxpy answer of the package (:mod:`elcvx.cvx`), Clarabel's answer is not taken
    on trust: its dual point ``(gamma, beta)`` is certified by :mod:`elcvx.certify` (the error
    of the bound it gives, from an exactly feasible primal point); a point that fails is a
    failed attempt of :meth:`Program.solve`, which then tries its fallback settings. The value,
    ``kappa`` and ``q`` are the closed forms at Clarabel's point.

    Raises
    ------
    SolverError
        When no attempt is certified.

    Examples
    --------
    >>> import elcvx
    >>> from elcvx import fast
    >>> from elcvx.programs import dro_inner_dual
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> prog, w = dro_inner_dual(s), [0.5, 1.5, 2.0, 0.5]
    >>> mle = fast.mle(elcvx.Sample(w, s.u, wmax=10), ())  # l*_mle(w) and its certified gap
    >>> sol = solve_certified(prog, w=w, mle=mle, quantile=3.841459)  # Clarabel's, certified
    >>> round(sol.value, 4), sol.status, sol.error < 1e-6
    (0.2529, 'optimal', True)
    """

    info = program.info
    sample = Sample(w, info["u"], counts=info["counts"], wmin=info["wmin"], wmax=info["wmax"])
    data = Moments(sample, ())
    phi = -data.n * math.log(data.n) - mle.loglik - 0.5 * float(quantile)
    found = {}

    def check(p):
        gamma, beta = (_scalar(x) for x in reversed(dual_point(p)))
        if gamma is None or beta is None:
            return Rejected("no dual point")
        sol = verdict.bound_at(data, mle.loglik, quantile, np.array([gamma, beta]), mle.gap)
        found["sol"] = sol
        return True if sol.status.optimal else Rejected(sol.status)

    # (Tight settings first: the learner's gradient reads q, which the certificate of the value
    # does not bound; at 1e-13 Clarabel's q is accurate to about 1e-10.)
    program.solve(check=check, w=sample.w, phi=phi, attempts=CERTIFIED_ATTEMPTS)
    form = info["form"]
    return found["sol"]._replace(status=_status(form, (form,), program.log[-1][0],
                                                     program.log[-1][1]))


def read_solution(program: Program) -> BoundSolution:
    """The value, duals ``(beta, gamma, kappa)`` and per-example ``q`` of a solved inner program,
    as Clarabel left them (:func:`solve_certified` certifies them), so its status is ``"not
    certified"`` with Clarabel's own in the detail (``"not certified (Clarabel: optimal)"``).

    ``q_n = kappa / (gamma + beta w_n + w_n u_n)`` at the parameter value ``w`` last solved for,
    the same :class:`~elcvx.solutions.BoundSolution` that the fast path returns.
    """
    info = program.info
    N, u = info["N"], info["u"]
    w = np.asarray(program.parameters["w"].value, dtype=float)
    beta, gamma = (float(x) for x in dual_point(program))
    if info["form"] == "dual":
        kappa = float(program.variables["K"].value) / N
        a = gamma + beta * w + w * u
        q = kappa / np.where(a > 0, a, np.inf)
    else:
        kappa = float(program.constraints["loglik"].dual_value) / N
        q = np.asarray(program.variables["q"].value, dtype=float)
    return BoundSolution(value=float(program.problem.value), beta=beta, gamma=gamma,
                         kappa=kappa, q=q,
                         status=Status("not certified", f"Clarabel: {program.problem.status}"))
