"""Choosing a solver path: ``method="fast" | "cvxpy" | "auto"``.

``"auto"`` takes the fast path and, should it not reach an optimal status, the cvxpy path.
``"fast"`` raises :class:`SolverError` instead of falling back. The cvxpy path (and cvxpy
itself) is imported only when used.
"""

from __future__ import annotations

import numpy as np

from . import _fast, _moment
from . import _validation as iv
from .errors import SolverError


def _ok(status: str) -> bool:
    return status.startswith("optimal")


def _run(method, fast_call, cvx_call, what, fallback=None):
    """``fallback``: a second numpy solver, tried when ``fast_call`` fails (part of the fast path)."""
    method = iv.option("method", method, iv.METHODS)
    if method in ("auto", "fast"):
        sol = fast_call()
        if _ok(sol.status):
            return sol, "fast"
        if fallback is not None:
            second = fallback()
            if _ok(second.status):
                return second, "fast"
        if method == "fast":
            raise SolverError(f"the fast path did not solve {what} (status: {sol.status})",
                              solver="elcvx fast path", status=sol.status)
    sol = cvx_call()
    return sol, "cvxpy"


def mle(sample, method, model=None):
    """The MLE, computed once per sample and path (a Sample is immutable, so the cache is safe).

    ``model``: ``(constraints, atoms)`` of :mod:`elcvx.constraints`, or None for the paper's
    programs (only those are cached: constraints are data the sample does not hold).

    The cached ``q`` is made read-only (no copy): results hand out read-only views of it, so
    nothing a caller does to a result can change a later answer.
    """
    if model is not None:
        return _run(method, lambda: _moment.mle(sample, *model),
                    lambda: _cvx_model_module().model_mle(sample, *model),
                    "the MLE with constraints")
    cache = sample.__dict__.setdefault("_mle_cache", {})
    key = iv.option("method", method, iv.METHODS)
    if key not in cache:
        sol, path = _mle(sample, key)
        cache[key] = (sol._replace(q=iv.frozen(sol.q)), path)
    return cache[key]


def _mle(sample, method):
    return _run(
        method,
        lambda: _fast.mle(sample.w, sample.u, sample.counts, sample.wmin, sample.wmax),
        lambda: _cvx_module().mle(sample),
        "the MLE",
    )


def lower_bound(sample, mle_sol, quantile, side, method, wu=None, model=None):
    """The lower bound of ``u`` (``side="lower"``) or of ``1 - u``; ``wu``: ``w`` times that."""
    if model is not None:
        constraints, atoms = model
        return _run(
            method,
            lambda: _moment.lower_bound(sample, constraints, mle_sol.loglik, quantile, side,
                                        atoms, mle_sol),
            lambda: _cvx_model_module().model_lower_bound(sample, constraints, atoms,
                                                          mle_sol.loglik, quantile, side),
            f"the {side} bound with constraints",
        )
    u = None if wu is not None else sample.u if side == "lower" else 1.0 - sample.u
    return _run(
        method,
        lambda: _fast.lower_bound(sample.w, u, sample.counts, sample.wmin, sample.wmax,
                                  mle_sol.loglik, quantile, q_mle=mle_sol.q,
                                  beta_mle=mle_sol.beta, wu=wu),
        lambda: _cvx_module().lower_bound(sample, loglik=mle_sol.loglik, quantile=quantile,
                                          side=side),
        f"the {side} bound",
        # The general solver (elcvx._moment), where the 2-d method of elcvx._fast fails
        # (weights within 1e-8 of 1, values an ulp from the range's end).
        fallback=lambda: _moment.lower_bound(sample, (), mle_sol.loglik, quantile, side),
    )


def profile(sample, v_unit, mle_sol, method, model=None):
    if model is not None:
        return _run(method, lambda: _moment.profile(sample, model[0], v_unit, model[1], mle_sol),
                    lambda: _cvx_model_module().model_profile(sample, *model, v_unit),
                    "the profile likelihood with constraints")
    return _run(
        method,
        lambda: _fast.profile(sample.w, sample.u, sample.counts, sample.wmin, sample.wmax,
                              v_unit, beta_mle=mle_sol.beta),
        lambda: _cvx_module().profile(sample, v_unit),
        "the profile likelihood",
        fallback=lambda: _profile_fallback(sample, v_unit, mle_sol),
    )


def _profile_fallback(sample, v_unit, mle_sol):
    """The general solver (:mod:`elcvx._moment`) for the profile, at the ``v`` strictly inside
    ``(0, 1)``; the ends keep :mod:`elcvx._fast`'s exact rule (its solution there)."""
    inner = (v_unit > 0.0) & (v_unit < 1.0)
    sol = _moment.profile(sample, (), v_unit[inner])
    ends = _fast.profile(sample.w, sample.u, sample.counts, sample.wmin, sample.wmax,
                         v_unit[~inner], beta_mle=mle_sol.beta)
    out = [np.empty(v_unit.shape) for _ in range(3)]
    for arr, a, b in zip(out, (sol.loglik, sol.beta, sol.tau), (ends.loglik, ends.beta, ends.tau)):
        arr[inner], arr[~inner] = a, b
    status = sol.status if ends.status == "optimal" else f"{sol.status}; {ends.status}"
    return sol._replace(loglik=out[0], beta=out[1], tau=out[2], status=status,
                        work=(sol.work[0] + ends.work[0], sol.work[1] + ends.work[1]))


def _cvx_model_module():
    from . import _cvx_model

    return _cvx_model


def _cvx_module():
    # Imported lazily: cvxpy is slow to import and the fast path never needs it.
    from . import _cvx

    return _cvx
