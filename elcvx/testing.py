"""Test helpers: the one place where agreement tolerances live, and the optimality check of a
solved cvxpy program.

``AGREEMENT`` is the agreement the package promises between its two solver paths (fast numpy
and cvxpy/Clarabel) and between a dual and its primal, relative to the natural scale of the
quantity (the reward range for values, the magnitude for log-likelihoods). :func:`check_kkt`
verifies a program a researcher built (a new constraint appended to one of
:mod:`elcvx.programs`) from its own expressions and multipliers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

AGREEMENT = 1e-6


def assert_agree(actual, desired, *, scale=1.0, tol=AGREEMENT, what=""):
    """Assert ``|actual - desired| <= tol * max(scale, |desired|)`` elementwise.

    Infinite values must match exactly (same sign); NaN never agrees.
    """
    a = np.asarray(actual, dtype=float)
    d = np.asarray(desired, dtype=float)
    if np.isnan(a).any() or np.isnan(d).any():
        raise AssertionError(f"{what}: NaN in actual={a!r} or desired={d!r}")
    inf = np.isinf(a) | np.isinf(d)
    if inf.any() and not np.array_equal(np.broadcast_to(a, inf.shape)[inf], np.broadcast_to(d, inf.shape)[inf]):
        raise AssertionError(f"{what}: infinite values differ: actual={a!r}, desired={d!r}")
    fin = ~inf
    a, d = np.broadcast_arrays(a, d)
    bound = tol * np.maximum(scale, np.abs(d))
    err = np.zeros(a.shape)
    err[fin] = np.abs(a[fin] - d[fin])
    bad = err > bound
    if np.any(bad):
        raise AssertionError(
            f"{what}: max error {np.max(err[bad]):.3g} exceeds tol {tol:g} x scale "
            f"(actual={a!r}, desired={d!r})"
        )


@dataclass(frozen=True)
class KKTReport:
    """The largest residual of each of a solved program's optimality conditions (the checks of
    cvxpy's own solver tests): ``primal`` (constraint violation), ``dual`` (an inequality's
    multiplier below 0), ``complementarity`` (multiplier times slack) and ``stationarity`` (the
    Lagrangian's gradient in each variable, a nonnegative variable's only where it is not at
    0, and there only its wrong sign). Each is scaled by the size of the terms it sums."""

    primal: float
    dual: float
    complementarity: float
    stationarity: float

    def worst(self) -> float:
        return max(self.primal, self.dual, self.complementarity, self.stationarity)


def check_kkt(program, *, tol: float = 1e-5) -> KKTReport:
    """Check that a solved cvxpy program (an :class:`elcvx.programs.Program`, or a
    ``cvxpy.Problem``) meets the KKT conditions at the solution cvxpy holds, to ``tol``, from
    the problem's own expressions and multipliers: no solver path of elcvx is involved, so a
    researcher who writes a new constraint can verify the program they built.

    With the problem written as ``min f(x)`` s.t. ``g_i(x) <= 0`` (multipliers ``lambda_i >=
    0``) and ``h_j(x) = 0`` (``nu_j``): primal feasibility ``g <= 0``, ``h = 0``; dual
    feasibility ``lambda >= 0``; complementarity ``lambda_i g_i = 0``; stationarity ``grad f +
    sum lambda_i grad g_i + sum nu_j grad h_j = 0`` in every variable (for a variable declared
    ``nonneg`` the gradient may be positive where the variable is 0). A ``maximize`` problem is
    read as ``min -f``. Raises AssertionError naming the condition that fails. The default
    ``tol`` allows for Clarabel's multipliers, accurate to about ``1e-6`` of their size at its
    default tolerances (its objective and residuals are more accurate than its duals).

    Examples
    --------
    >>> import elcvx
    >>> from elcvx.programs import mle_primal
    >>> from elcvx.testing import check_kkt
    >>> p = mle_primal(elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10))
    >>> _ = p.solve()
    >>> check_kkt(p).worst() < 1e-5
    True
    """
    import cvxpy as cp

    problem = getattr(program, "problem", program)
    sign = 1.0 if isinstance(problem.objective, cp.Minimize) else -1.0
    f = sign * problem.objective.expr
    lagrangian_grads = {var: jac[:, 0] for var, jac in _gradient(f).items()}
    primal = dual = comp = 0.0
    for con in problem.constraints:
        if con.dual_value is None:
            raise AssertionError(f"constraint {con} has no multiplier: solve the program first")
        expr = con.expr  # cvxpy: `a <= b` as a - b <= 0, `a == b` as a - b == 0
        value = np.asarray(expr.value, dtype=float)
        lam = np.asarray(con.dual_value, dtype=float)
        size = 1.0 + float(np.abs(value).max(initial=0.0))
        if isinstance(con, (cp.constraints.Inequality, cp.constraints.NonPos)):
            primal = max(primal, float(np.maximum(value, 0.0).max(initial=0.0)) / size)
            dual = max(dual, float(np.maximum(-lam, 0.0).max(initial=0.0)))
            comp = max(comp, float(np.abs(lam * value).max(initial=0.0)) / size)
        elif isinstance(con, (cp.constraints.Equality, cp.constraints.Zero)):
            primal = max(primal, float(np.abs(value).max(initial=0.0)) / size)
        else:
            raise AssertionError(f"check_kkt handles (in)equalities, not {type(con).__name__}")
        for var, jac in _gradient(expr).items():
            contribution = np.asarray(jac @ lam.reshape(-1)).reshape(-1)
            lagrangian_grads[var] = lagrangian_grads.get(var, 0.0) + contribution
    stationary = 0.0
    for var, grad in lagrangian_grads.items():
        grad = np.asarray(grad, dtype=float).reshape(-1)
        if var.attributes.get("nonneg"):
            x = np.asarray(var.value, dtype=float).reshape(-1)
            at_zero = np.abs(x) <= tol * (1.0 + np.abs(x).max(initial=0.0))
            grad = np.where(at_zero, np.minimum(grad, 0.0), grad)  # (a positive one is a bound's)
        scale = 1.0 + float(np.abs(_gradient(f).get(var, np.zeros((1, 1)))).max(initial=0.0))
        stationary = max(stationary, float(np.abs(grad).max(initial=0.0)) / scale)
    report = KKTReport(primal, dual, comp, stationary)
    failed = [name for name in ("primal", "dual", "complementarity", "stationarity")
              if not getattr(report, name) <= tol]
    if failed:
        raise AssertionError(f"KKT conditions not met to {tol:g}: {', '.join(failed)} ({report})")
    return report


def _gradient(expr) -> dict:
    """``{variable: d expr / d variable}`` as dense 2-d arrays (rows: the variable's entries,
    columns: the expression's), at the variables' values, by central differences (one-sided
    where a step leaves the expression's domain); a constant has none.

    Not cvxpy's ``expr.grad``: in cvxpy 1.9 an elementwise atom with a scalar argument
    broadcast against a vector (``rel_entr(K, a)``, as in the learning program's dual) returns
    the derivative of the first entry only (``Elementwise.elemwise_grad_to_diag`` builds a
    ``1 x n`` diagonal)."""
    out = {}
    base = _flat_value(expr)
    for var in expr.variables():
        x0 = np.array(var.value, dtype=float)
        flat = x0.reshape(-1, order="F")
        jac = np.empty((flat.size, base.size))
        try:
            for i in range(flat.size):
                h = 1e-6 * (1.0 + abs(flat[i]))
                jac[i] = _difference(expr, var, x0, i, h, base)
        finally:
            var.value = x0
        out[var] = jac
    return out


def _flat_value(expr) -> np.ndarray:
    return np.asarray(expr.value, dtype=float).reshape(-1, order="F")


def _difference(expr, var, x0, i, h, base) -> np.ndarray:
    """The derivative of ``expr`` in entry ``i`` (Fortran order, cvxpy's) of ``var``."""
    values = {}
    for step in (h, -h):
        x = x0.copy().reshape(-1, order="F")
        x[i] += step
        try:
            var.value = x.reshape(x0.shape, order="F") if x0.shape else x[0]
        except ValueError:  # the step leaves the variable's declared domain (nonneg)
            continue
        v = _flat_value(expr)
        if np.all(np.isfinite(v)):
            values[step] = v
    if len(values) == 2:
        return (values[h] - values[-h]) / (2 * h)
    if values:
        (step, v), = values.items()
        return (v - base) / step
    raise AssertionError(f"{expr} is not finite on either side of the solution in {var}")
