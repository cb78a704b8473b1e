"""The fast path's fallback: a log-barrier path-following method for ``max f(x)`` subject to ``A x
+ h >= 0``, for the models where the active-set method of :mod:`elcvx.fast.active_set` stops short.

The active-set method lands on the faces of the optimum exactly and takes a handful of passes;
it can stall where the dual is degenerate in ways its working set does not see (a constraint
nearly redundant with another, several atoms and features nearly dependent at weights of
``1e6``). The barrier method takes more passes (tens) but no combinatorial decision: Newton steps
on ``f + mu sum log(A x + h)``, with ``mu`` falling by ten from ``1e-2`` to ``1e-15``, each step
one pass, the Hessian inverted on its range (a direction in which ``f`` is flat and no atom
bounds it is left alone). Its last point approaches the optimum's faces without landing on
them; the certificate's candidates (:func:`elcvx.verdict.given_starts`) move it onto them.
An objective that grows without bound along the path says the dual is unbounded: no
distribution with every row kept meets the moment constraints.
"""

from __future__ import annotations

import math

import numpy as np

from ..status import OPTIMAL, Status

_MU_START, _MU_STOP, _MU_FACTOR = 1e-2, 1e-15, 10.0
_NEWTON_STEPS = 50  # per value of mu, at most
_UNBOUNDED = 1e12  # |x| past this, or f past this times its start, is a dual without a maximum


def maximize(oracle, x0, A, h):
    """``(x, f, status)`` from a strictly feasible ``x0`` in the oracle's domain: ``"optimal"``
    (the path's end, to be certified), ``"unbounded"`` or why it stopped."""
    x = np.array(x0, dtype=float)
    f, g, H, _ = oracle(x)
    if not (math.isfinite(f) and np.all(A @ x + h > 0)):
        return x, f, Status("start outside the domain")
    ceiling = _UNBOUNDED * max(1.0, abs(f))
    mu = _MU_START
    while mu >= _MU_STOP:
        for _ in range(_NEWTON_STEPS):
            s = A @ x + h
            gp = g + A.T @ (mu / s)
            Hp = H - (A.T * (mu / s ** 2)) @ A
            scale = np.sqrt(np.maximum(-np.diag(Hp), 1e-300))
            d = np.linalg.lstsq(-Hp / np.outer(scale, scale), gp / scale, rcond=1e-13)[0] / scale
            decrement = float(gp @ d)
            if not decrement > 1e-15 * (1.0 + abs(f)):
                break
            rate = A @ d
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = np.where(rate < 0, -s / rate, np.inf)
            alpha = min(1.0, 0.99 * float(ratios.min(initial=np.inf)))
            phi = f + mu * float(np.log(s).sum())
            for _ls in range(60):
                trial = x + alpha * d
                st = A @ trial + h
                if np.all(st > 0):
                    ft, gt, Ht, _ = oracle(trial)
                    if math.isfinite(ft) and ft + mu * float(np.log(st).sum()) >= \
                            phi + 1e-4 * alpha * decrement:
                        break
                alpha *= 0.5
            else:
                break  # no gain this close to the path: on to a smaller mu
            x, f, g, H = trial, ft, gt, Ht
            if f > ceiling or float(np.abs(x).max()) > _UNBOUNDED:
                return x, f, Status("unbounded")
        mu /= _MU_FACTOR
    return x, f, OPTIMAL
