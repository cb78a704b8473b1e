"""The barrier method that solved the moment-constrained programs before the active-set method
(elcvx.fast.solve at commit c9d7437), kept as a reference for tests and benchmarks only.

Newton's method on ``f(x) + mu sum_k log(A_k x + h_k)`` for ``mu`` falling by 10 from ``1e-2``
to ``1e-15``; each step one pass over the rows. It shares the oracles and the data layout
(:class:`elcvx.model.Moments`) with the active-set method, not its iteration, start or
stopping rules. ``mle``, ``lower_bound`` and ``profile`` return ``(value, x, passes)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from elcvx import model
from elcvx.passes import objectives
from elcvx.passes.objectives import Work

FEAS_TOL = 1e-8  # (the certificate's tolerance when this method was the package's)

_MU_START, _MU_STOP, _MU_FACTOR = 1e-2, 1e-15, 10.0
_NEWTON_STEPS = 60


def _three(oracle):
    """The old oracle interface, ``x -> (f, g, H)``."""
    return lambda x: oracle(x)[:3]


def _interior_direction(A, h):
    m = A.shape[1]
    res = linprog(np.r_[np.zeros(m), -1.0], A_ub=np.column_stack([-A, np.ones(len(A))]), b_ub=h,
                  bounds=[(-1.0, 1.0)] * m + [(None, 1.0)], method="highs")
    return res.x[:m] if res.status == 0 and res.x[m] > 0 else None


def _start(A, h, x0, oracle):
    s = A @ x0 + h
    if np.all(s > 0) and math.isfinite(oracle(x0)[0]):
        return x0
    d = _interior_direction(A, h)
    if d is None:
        return None
    t = 1.0
    for _ in range(200):
        x = x0 + t * d
        if np.all(A @ x + h > 0) and math.isfinite(oracle(x)[0]):
            return x
        t *= 0.5
    return None


def maximize(oracle, x, A, h):
    """``(x, f, status)``: the barrier method from a strictly feasible ``x``."""
    f, g, H = oracle(x)
    if not math.isfinite(f):
        return x, f, "start outside the domain"
    mu = _MU_START
    while True:
        last_dec = math.inf
        final = mu <= _MU_STOP
        best = None
        for _ in range(_NEWTON_STEPS):
            s = A @ x + h
            gp = g + A.T @ (mu / s)
            size = float(np.abs(gp).max())
            if final and (best is None or size < best[0]):
                best = (size, x, f, g)
            tight = mu <= 1e-8
            if tight and size <= 1e-4 * FEAS_TOL:
                break
            Hp = H - (A.T * (mu / s ** 2)) @ A
            d = np.linalg.lstsq(-Hp, gp, rcond=1e-14)[0]
            dec = float(gp @ d)
            if not dec > (1e-30 if tight else 1e-14) * (1.0 + abs(f)):
                break
            if dec > 0.25 * last_dec and dec <= 1e-10 * (1.0 + abs(f)):
                break
            last_dec = dec
            rate = A @ d
            with np.errstate(divide="ignore"):
                ratios = np.where(rate < 0, -s / rate, np.inf)
            alpha = min(1.0, 0.99 * float(ratios.min(initial=np.inf)))
            phi = f + mu * float(np.log(s).sum())
            for _ls in range(60):
                trial = x + alpha * d
                ft, gt, Ht = oracle(trial)
                st = A @ trial + h
                if math.isfinite(ft) and np.all(st > 0):
                    if ft + mu * float(np.log(st).sum()) >= phi + 1e-4 * alpha * dec:
                        break
                    if dec <= 1e-10 * (1.0 + abs(f)) and \
                            float(np.abs(gt + A.T @ (mu / st)).max()) < 0.5 * size:
                        break
                alpha *= 0.5
            else:
                if dec <= 1e-10 * (1.0 + abs(f)):
                    break
                return x, f, "line search failed"
            x, f, g, H = trial, ft, gt, Ht
        else:
            if not final:
                return x, f, "max_iter"
        if final:
            _, x, f, g = best
            return x, f, "optimal"
        mu /= _MU_FACTOR


def mle(data):
    """``(l*, x, passes)`` of a :class:`~elcvx.model.Moments` model."""
    work = Work()
    oracle = _three(objectives.LikelihoodOracle(data, work))
    A, h = data.atom_rows()
    x, f, status = maximize(oracle, _start(A, h, np.zeros(A.shape[1]), oracle), A, h)
    assert status == "optimal", status
    return f * data.n, x, work.passes


def profile(data, v, x_mle):
    """``(l_v, x, passes)`` at one ``v``, from the MLE's point ``x_mle``."""
    work = Work()
    A, h = data.atom_rows(value=v)
    oracle = _three(objectives.LikelihoodOracle(data, work, v))
    x, f, status = maximize(oracle, _start(A, h, np.r_[x_mle, 0.0], oracle), A, h)
    assert status == "optimal", status
    return f * data.n, x, work.passes


def lower_bound(data, loglik, quantile, x_mle):
    """``(v_lb, y, passes)``, from the MLE's point ``x_mle = (beta, lambda)``."""
    work = Work()
    K = math.exp(-(loglik + 0.5 * quantile) / data.n)
    lin = np.r_[1.0, 1.0, data.b]
    oracle = _three(objectives.BoundOracle(data, K, lin, work))
    B, floor = model.bound_rows(data.atoms, data.h_lo)
    y0 = np.r_[1.0 - x_mle[0] - x_mle[1:] @ data.b, x_mle]
    y, f, status = maximize(oracle, _start(B, floor, y0, oracle), B, floor)
    assert status == "optimal", status
    return f, y, work.passes
