r"""The Cressie-Read (lambda = -2) programs of the paper's last appendix, corrected, in cvxpy (the
primal programs: named apart from :mod:`elcvx.cressie_read`, their closed forms).

Two builders, whose closed-form solutions :mod:`elcvx.cressie_read` computes from sufficient
statistics (the tests hold the two against each other):

* :func:`cr_estimate_primal`: ``min D(Q)`` s.t. ``E_Q[1] = E_Q[w] = 1`` (the estimate);
* :func:`cr_lower_bound_primal`: ``min E_Q[w u]`` s.t. ``E_Q[1] = E_Q[w] = 1``,
  ``D(Q) <= phi`` (one side of the interval, for one extra atom).

Notation and conventions (rewards on the unit scale ``u``; ``c`` the counts, ``N = sum c``)
------------------------------------------------------------------------------------------
``Q`` lives on the sample plus **one** extra atom at weight ``w_ex`` (``M = N + 1`` atoms, the
extra one with count 1); ``q_n`` is the mass of *each* of the ``c_n`` examples of row ``n``.
The divergence is measured from the augmented empirical distribution (``1/M`` per atom),

.. math:: D(Q) = \sum_j c_j \big((M Q_j)^2 - 1\big),

the paper's ``CR(-2)`` (its factor ``2/(lambda (lambda + 1))`` is 1) with ``N + 1`` atoms, as
the appendix's ``(N + 1)`` denominators and the authors' replication code have it. ``Q`` is
**signed**: the closed forms (and the appendix's) drop ``Q >= 0``, as Owen's Euclidean
likelihood does; with it the answer would depend on each row, not on sufficient statistics.
The appendix prints both programs as ``sup`` with ``D >= phi``; the correct ones are below.

Scaling: the variables are ``y = M q`` (``y = 1`` at the augmented empirical distribution) and
the extra atom's ``y_ex = M Q_ex``; when ``w_ex > 1`` the variable is its importance-weighted
form ``z_ex = w_ex y_ex`` (coefficient ``1/w_ex`` in the mass constraint, ``1/w_ex^2`` in the
divergence), which keeps the data ``O(1)`` for large ``wmax`` and is also how ``wmax = inf``
enters (coefficients 0: an atom at infinity with no probability and finite weighted mass, the
limit of the closed forms). Vector data are constants; the scalars that change between solves
(``rho`` of the estimate, ``phi`` of the bound) are :class:`cvxpy.Parameter` s (DPP).
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

from .base import Program, sample_data
from ..errors import InvalidInputError





def _default_w_ex(sample) -> float:
    """The estimate's extra atom: ``wmin`` if ``mean(w) >= 1``, else ``wmax`` (the appendix)."""
    return float(sample.wmin) if float(np.dot(sample.c, sample.w)) >= sample.n else float(sample.wmax)


def _check_w_ex(sample, w_ex) -> float:
    w_ex = float(w_ex)
    if w_ex not in (float(sample.wmin), float(sample.wmax)):
        raise InvalidInputError(
            f"w_ex={w_ex!r} must be wmin={sample.wmin!r} or wmax={sample.wmax!r}")
    return w_ex


def _extra_atom(w_ex):
    """``(variable, mass, weighted mass, squared scaled mass)`` of the extra atom (scaled by M)."""
    if w_ex <= 1.0:
        y_ex = cp.Variable(name="y_ex")
        return y_ex, y_ex, w_ex * y_ex, cp.square(y_ex)
    z_ex = cp.Variable(name="z_ex")
    inv = 0.0 if math.isinf(w_ex) else 1.0 / w_ex
    # square(inv z), not inv^2 square(z): measured to solve reliably with Clarabel at wmax = 1e4.
    return z_ex, inv * z_ex, z_ex, cp.square(inv * z_ex)


def cr_estimate_primal(sample, *, w_ex=None) -> Program:
    r"""The Cressie-Read (lambda = -2) estimate: the minimum-divergence ``Q`` with ``E_Q[w] = 1``.

    .. math::

        \min_{Q}\; D(Q) = \sum_j c_j \big((M Q_j)^2 - 1\big)
        \quad\text{s.t.}\quad \sum_j c_j Q_j = 1,\qquad \sum_j c_j Q_j w_j = 1,

    over signed ``Q`` on the sample plus the extra atom ``(w_ex, rho)``, ``M = N + 1``; the
    estimate is ``V = sum_n c_n q_n w_n u_n + Q_ex w_ex rho``. (The appendix prints ``sup``; it is
    an infimum: ``D`` is unbounded above.) Closed form: ``Q_j = (gamma* + beta* (w_j - 1)) / M``.

    Scaled form: variables ``y = M q`` and ``y_ex = M Q_ex`` (or ``z_ex = w_ex y_ex`` when
    ``w_ex > 1``); objective ``c.y^2 + y_ex^2 - M`` (``problem.value = D_mle``); constraints
    ``mass``: ``(c.y + y_ex)/M == 1``, ``weight``: ``((c w).y + w_ex y_ex)/M == 1``.

    Parameters
    ----------
    sample : Sample
    w_ex : float, optional
        ``wmin`` or ``wmax``; default the appendix's rule, ``wmin`` if ``mean(w) >= 1`` else
        ``wmax``.

    Returns
    -------
    Program
        ``parameters``: ``rho`` (the extra atom's reward, unit scale; default 0.5).
        ``variables``: ``q`` (per-example mass, an expression), ``y``, ``q_ex`` and
        ``wq_ex`` (the extra atom's mass and weighted mass, expressions), ``value`` (the
        estimate on the unit scale, an expression in ``rho``).
        ``constraints``: ``mass``, ``weight``.
    """
    w, u, c, N = sample_data(sample)[:4]
    w_ex = _default_w_ex(sample) if w_ex is None else _check_w_ex(sample, w_ex)
    M = N + 1.0
    y = cp.Variable(w.size, name="y")
    var_ex, y_ex, wy_ex, sq_ex = _extra_atom(w_ex)
    mass = (c @ y + y_ex) / M == 1
    weight = ((c * w) @ y + wy_ex) / M == 1
    divergence = c @ cp.square(y) + sq_ex - M
    problem = cp.Problem(cp.Minimize(divergence), [mass, weight])
    rho = cp.Parameter(name="rho", value=0.5)
    value = ((c * w * u) @ y + wy_ex * rho) / M
    return Program(
        "cr_estimate_primal", problem, parameters=dict(rho=rho),
        variables=dict(q=y / M, y=y, q_ex=y_ex / M, wq_ex=wy_ex / M, extra=var_ex, value=value,
                       divergence=divergence),
        constraints=dict(mass=mass, weight=weight),
    )


def cr_lower_bound_primal(sample, *, w_ex, side="lower") -> Program:
    r"""One candidate of the Cressie-Read lower bound: extra atom ``(w_ex, 0)``.

    .. math::

        \min_{Q}\; \sum_n c_n q_n w_n u_n
        \quad\text{s.t.}\quad \sum_j c_j Q_j = 1,\quad \sum_j c_j Q_j w_j = 1,\quad
        D(Q) = \sum_j c_j \big((M Q_j)^2 - 1\big) \le \phi,

    over signed ``Q`` on the sample plus ``(w_ex, 0)``. The interval's lower bound is the smaller
    of the two candidates ``w_ex = wmin`` and ``w_ex = wmax`` at ``phi = D_mle + q`` (``D_mle``
    the optimum of :func:`cr_estimate_primal`, ``q`` the calibration quantile); the upper bound
    is ``1 -`` this program on ``1 - u`` (``side="upper"``). (The appendix prints the divergence
    constraint as ``>= phi`` with ``phi = chi2/2 - D_mle``: the set must be a ball around the
    minimiser, ``D <= D_mle + q``, and without the 1/2, since ``CR(-2)`` is already on the scale
    of ``-2 log`` likelihood ratio.) A candidate whose support has no ``Q`` with ``D <= phi`` is
    infeasible (``Program.solve`` raises :class:`~elcvx.SolverError`).

    Scaled form: variables as in :func:`cr_estimate_primal`; objective ``(c w g).y / M`` with
    ``g = u`` (lower) or ``1 - u`` (upper), so ``problem.value`` is the bound on the unit scale
    of that side; constraints ``mass``, ``weight``, ``divergence``:
    ``c.y^2 + y_ex^2 - M <= phi``.

    Returns
    -------
    Program
        ``parameters``: ``phi``. ``variables``: ``q``, ``y``, ``q_ex``, ``wq_ex``.
        ``constraints``: ``mass``, ``weight``, ``divergence``.
    """
    w, g, c, N = sample_data(sample, side)[:4]
    w_ex = _check_w_ex(sample, w_ex)
    M = N + 1.0
    y = cp.Variable(w.size, name="y")
    var_ex, y_ex, wy_ex, sq_ex = _extra_atom(w_ex)
    phi = cp.Parameter(name="phi", value=0.0)
    mass = (c @ y + y_ex) / M == 1
    weight = ((c * w) @ y + wy_ex) / M == 1
    divergence = c @ cp.square(y) + sq_ex - M <= phi
    problem = cp.Problem(cp.Minimize((c * w * g) @ y / M), [mass, weight, divergence])
    return Program(
        f"cr_lower_bound_primal({side}, w_ex={w_ex:g})", problem, parameters=dict(phi=phi),
        variables=dict(q=y / M, y=y, q_ex=y_ex / M, wq_ex=wy_ex / M, extra=var_ex),
        constraints=dict(mass=mass, weight=weight, divergence=divergence),
    )
