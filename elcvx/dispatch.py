"""Choosing a solver path: ``method="fast" | "cvxpy" | "auto"``.

``"auto"`` takes the fast path and, should it not reach an optimal status, the cvxpy path.
``"fast"`` raises :class:`SolverError` instead of falling back. The cvxpy path (and cvxpy
itself) is imported only when used; it is handed the fast path's polish
(:mod:`elcvx.fast.polish`), its one fallback that uses the fast method, which it may not import
itself.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from . import fast
from .cache import PerSample
from .model import Moments
from . import _validation as iv
from .errors import InvalidInputError, SolverError
from .status import Status

if TYPE_CHECKING:  # (annotations only)
    from .solutions import MLESolution

#: The paper's MLE of each sample (or scanned log): a dict ``method -> (solution, path)``
#: (:func:`mle`). Key: the sample object; lifetime: the sample's (a sample is immutable).
_MLE_CACHE = PerSample("the paper's MLE per method (elcvx.dispatch.mle)")


def _ok(status) -> bool:
    """Whether a solution's status (a :class:`~elcvx.status.Status`) is optimal."""
    return Status.of(status).optimal


def solve(method, fast_call, cvx_call, what, in_memory=True, feasible=None):
    """``(solution, path)``; ``method`` as the public functions have validated it. The cvxpy
    path needs the rows in memory (``in_memory``): a scanned log has the fast path only.
    ``feasible()``, where a solver fails, raises the error that says the model cannot hold
    (:func:`elcvx.feasibility.check`: where a Farkas vector proves it), before the solver's
    own; on every method alike, so that ``fast``, ``auto`` and ``cvxpy`` give one verdict."""
    if not in_memory and method == "cvxpy":
        raise InvalidInputError("method='cvxpy' needs the log's rows in memory (read_log); a "
                                "scanned log is evaluated by the fast path: method='fast'",
                                field="method", value=method)
    if method in ("auto", "fast"):
        sol = fast_call()
        if _ok(sol.status):
            return sol, "fast"
        if feasible is not None:
            feasible()
        if method == "fast" or not in_memory:
            raise SolverError(f"the fast path did not solve {what} (status: {sol.status})",
                              solver="elcvx fast path", status=sol.status)
    try:
        sol = cvx_call()
    except SolverError:
        if feasible is not None and method == "cvxpy":
            feasible()
        raise
    return sol, "cvxpy"


def feasibility(sample, constraints, atoms, data=None):
    """The check :func:`solve` makes for a model in memory (None for a scanned log)."""
    if not _in_memory(sample):
        return None

    def check():
        from . import feasibility as _feasibility

        model = Moments(sample, constraints, atoms) if data is None else data
        _feasibility.check(model, [c.name for c in constraints])

    return check


def mle(sample: Any, method: str, model: tuple[Any, Any] | None = None) -> tuple[MLESolution, str]:
    """The MLE, computed once per sample and path (a Sample is immutable, so the cache is safe).

    ``model``: ``(constraints, atoms)`` of :mod:`elcvx.constraints`, or None for the paper's
    programs (only those are cached: constraints are data the sample does not hold).

    The cached ``q`` is made read-only (no copy): results hand out read-only views of it, so
    nothing a caller does to a result can change a later answer.
    """
    constraints, atoms = model if model is not None else ((), None)
    run = lambda: solve(method, lambda: fast.mle(sample, constraints, atoms),  # noqa: E731
                        lambda: cvx_module().mle(sample, constraints, atoms, polish=fast.polish),
                        "the MLE" + ("" if model is None else " with constraints"),
                        _in_memory(sample),
                        None if model is None else feasibility(sample, constraints, atoms))
    if model is not None:
        return run()
    cache: dict[str, tuple[MLESolution, str]] = _MLE_CACHE.get(sample, dict)
    if method not in cache and method in ("auto", "fast"):
        # "auto" tries the fast path first: where that solved it, the two answers are one.
        other = cache.get("fast" if method == "auto" else "auto")
        if other is not None and other[1] == "fast":
            cache[method] = other
    if method not in cache:
        sol, path = run()
        # (A q computed on its first read, elcvx.solutions.OnRead, is made read-only then.)
        q = sol.q_field
        cache[method] = (sol._replace(q=iv.frozen(q)) if isinstance(q, np.ndarray) else sol, path)
    return cache[method]


def lower_bound(sample, mle_sol, quantile, side, method, model=None):
    """The lower bound of ``u`` (``side="lower"``) or of ``1 - u``."""
    constraints, atoms = model if model is not None else ((), None)
    return solve(method,
                 lambda: fast.lower_bound(sample, constraints, mle_sol.loglik, quantile, side,
                                             atoms, mle_sol),
                 lambda: cvx_module().lower_bound(sample, loglik=mle_sol.loglik, quantile=quantile,
                                                   side=side, constraints=constraints, atoms=atoms,
                                                   mle_sol=mle_sol, polish=fast.polish),
                 f"the {side} bound" + ("" if model is None else " with constraints"),
                 _in_memory(sample))


def profile(sample, v_unit, mle_sol, method, model=None):
    """The profile likelihood at each ``v_unit`` (the unit reward scale)."""
    constraints, atoms = model if model is not None else ((), None)
    return solve(method, lambda: fast.profile(sample, constraints, v_unit, atoms, mle_sol),
                 lambda: cvx_module().profile(sample, v_unit, constraints, atoms,
                                             polish=fast.polish),
                 "the profile likelihood" + ("" if model is None else " with constraints"),
                 _in_memory(sample))


def _in_memory(sample) -> bool:
    """Whether the sample's rows are in memory (a :class:`~elcvx.io.LogScan`'s are not)."""
    return sample.in_memory


def cvx_module() -> ModuleType:
    # Imported lazily: cvxpy is slow to import and the fast path never needs it.
    from . import cvx

    return cvx
