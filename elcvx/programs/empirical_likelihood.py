r"""The empirical-likelihood programs of the paper, as disciplined convex cvxpy programs.

Six builders, a primal and a dual for each of the three computations:

==================  =================================  ====================================
computation         primal                             dual
==================  =================================  ====================================
estimate (MLE)      :func:`mle_primal`                 :func:`mle_dual`
profile likelihood  :func:`profile_primal` (``v``)     :func:`profile_dual` (``v``)
interval bound      :func:`lower_bound_primal` (phi)   :func:`lower_bound_dual` (``phi``)
==================  =================================  ====================================

Notation (all programs work on rewards rescaled to ``[0, 1]``, called ``u``)
------------------------------------------------------------------------------
``w_n``, ``u_n``, ``c_n``: the weight, unit reward and count of row ``n`` (``c = 1`` without
counts), ``N = sum_n c_n``. ``q_n`` is the probability of *each* of the ``c_n`` examples of row
``n``, so the row carries mass ``c_n q_n``; the likelihood is ``sum_n c_n log q_n``.

Scaling (why the programs do not look exactly like the paper's)
---------------------------------------------------------------
Written literally, these exponential-cone programs have variables of size ``1/N`` next to
constraint coefficients of size ``wmax`` (up to ``1e6``, or infinite), and objectives of size
``N log N``. On 100 random samples (N = 10 ... 1e4, weights up to 1e6) a single Clarabel solve
of the literal MLE primal failed or was wrong by more than 1e-6 on 29% of them and the profile
primal on 33% (9% returned "optimal" with a wrong value); with the scaling below, 2% and 8%,
and no wrong "optimal". The lower-bound programs fail about a third of single solves either way
(:mod:`elcvx._cvx` has the fallbacks). Every builder uses the same change of variables, which
changes no optimum and is undone in the ``variables`` handles:

* per-example masses ``y_n = N q_n`` (so ``y_n = 1`` at the empirical distribution);
* the log-likelihood is averaged: ``(1/N) sum c log y = (1/N) sum c log q + log N``, so objective
  values are ``O(1)`` (``-l/N`` for the likelihood programs);
* an extra atom at ``wmax`` enters through its *importance-weighted* mass ``z = wmax m``, whose
  coefficient is ``1`` in ``E_Q[w] = 1`` and ``1/wmax`` in ``E_Q[1] = 1``; this is also exactly how
  ``wmax = inf`` is handled (coefficient ``0``: an atom at infinity with vanishing probability
  but finite weighted mass);
* a dual constraint at the corner ``w = wmax`` is divided by ``wmax`` (its limit when
  ``wmax = inf``);
* in the lower-bound dual, ``K = N kappa``.

The row ``E_Q[w] = 1`` needs no further division by a weight scale: every term ``c_n q_n w_n``
of it is at most 1 at any feasible point, and the atom at ``wmax`` enters it with coefficient 1.

Data vectors enter as constants (vectorised expressions such as ``c @ cp.log(y)``); the scalars
that change between solves (``v`` and ``phi``) are :class:`cvxpy.Parameter` s, and every program
is DPP, so re-solving with a new value reuses the compiled problem.

Constraint duals (``constraint.dual_value``, checked in ``tests/test_programs.py``)
---------------------------------------------------------------------------------
With the scaling above, cvxpy's multipliers are the paper's dual variables with the paper's
signs (each builder's docstring says which is which), and the multipliers of a dual program's
constraints are the primal's extra-atom masses. They are accurate to about ``1e-6`` relative
(an interior-point solver meets its tolerances on the objective and the residuals, not on each
variable); :mod:`elcvx._cvx` refines and certifies them.

Feasibility
-----------
The MLE and the lower bound are always feasible for ``quantile > 0``. The profile likelihood is
infeasible for ``v`` outside ``[0, 1]`` and possibly at its ends; see :func:`profile_dual` for why
the dual program cannot be trusted to say so.
"""

from __future__ import annotations

import math

import cvxpy as cp

from .base import Program, inv_wmax, sample_data







# ------------------------------------------------------------------------------------------------
# Maximum likelihood (the estimate)
# ------------------------------------------------------------------------------------------------
def mle_primal(sample) -> Program:
    r"""The nonparametric maximum-likelihood program of the estimate (paper section 3.2, app. B).

    .. math::

        \max_{q \ge 0,\, m_{lo} \ge 0,\, m_{hi} \ge 0}\; \sum_n c_n \log q_n
        \quad\text{s.t.}\quad
        \sum_n c_n q_n + m_{lo} + m_{hi} = 1, \qquad
        \sum_n c_n q_n w_n + m_{lo} w_{\min} + m_{hi} w_{\max} = 1,

    with two extra atoms at ``wmin`` and ``wmax`` (reward free). The optimum is
    ``sum c log q = -N log N - l*_mle``, and ``q_n = 1/(N (1 + beta* (w_n - 1)))``.

    Scaled form (see the module docstring): variables ``y = N q``, ``m_lo`` and
    ``z_hi = wmax m_hi``; objective ``(1/N) sum c log y``, so ``problem.value = -l*_mle/N``;
    constraints ``mass``: ``(1/N) c.y + m_lo + z_hi/wmax == 1`` and
    ``weight``: ``(1/N) (c w).y + wmin m_lo + z_hi == 1``. For ``wmax = inf``, ``z_hi`` is the
    weighted mass of an atom at infinity.

    Duals: ``beta* = constraints["weight"].dual_value`` and
    ``1 - beta* = constraints["mass"].dual_value`` (the multipliers of the scaled program are the
    paper's ``beta`` after its change of variables ``beta <- N beta``).

    Handles: ``variables`` ``q`` (an expression, ``y/N``), ``y``, ``m_lo``, ``m_hi`` (an
    expression, ``z_hi/wmax``), ``z_hi``; no parameters.
    """
    w, _, c, N, wmin, wmax = sample_data(sample)
    y = cp.Variable(w.size, name="y", nonneg=True)
    m_lo = cp.Variable(name="m_lo", nonneg=True)
    z_hi = cp.Variable(name="z_hi", nonneg=True)
    mass = (c / N) @ y + m_lo + inv_wmax(wmax) * z_hi == 1
    weight = (c * w / N) @ y + wmin * m_lo + z_hi == 1
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(y)), [mass, weight])
    return Program(
        "mle_primal", problem, parameters={},
        variables=dict(q=y / N, y=y, m_lo=m_lo, m_hi=inv_wmax(wmax) * z_hi, z_hi=z_hi),
        constraints=dict(mass=mass, weight=weight),
        info=dict(N=N, objective="-l*_mle / N"),
    )


def mle_dual(sample) -> Program:
    r"""The dual of the MLE: ``beta*`` of the paper's eq. (betastar).

    .. math::

        l^*_{mle} = \max_\beta \sum_n c_n \log(1 + \beta (w_n - 1))
        \quad\text{s.t.}\quad 1 + \beta (w_{\min} - 1) \ge 0,\; 1 + \beta (w_{\max} - 1) \ge 0,

    i.e. ``beta in [-1/(wmax - 1), 1/(1 - wmin)]``; for ``wmax = inf`` the second constraint is
    ``beta >= 0`` (its limit after division by ``wmax``).

    Scaled form: objective ``(1/N) sum c log(1 + beta (w - 1))``, so
    ``problem.value = l*_mle / N``; constraint ``wmax`` is divided by ``wmax``:
    ``1/wmax + beta (1 - 1/wmax) >= 0``. The dual values of ``wmin`` and ``wmax`` are the
    primal's extra-atom masses ``m_lo`` and ``z_hi = wmax m_hi`` (nonnegative).

    Handles: ``variables`` ``beta``; ``constraints`` ``wmin``, ``wmax``.

    Examples
    --------
    Three zero weights, ``wmax = 5``: ``3 log(1 - beta)`` is largest at ``beta = -1/4``.

    >>> from elcvx import Sample
    >>> from elcvx.programs import mle_dual
    >>> s = Sample([0.0, 0.0, 0.0], [1.0, 0.0, 0.5], wmax=5)
    >>> p = mle_dual(s)
    >>> round(p.solve() * s.n, 6)  # l*_mle = 3 log(5/4)
    0.669431
    >>> round(float(p.variables["beta"].value), 4)
    -0.25
    """
    w, _, c, N, wmin, wmax = sample_data(sample)
    beta = cp.Variable(name="beta")
    ilo = 1.0 / wmax if math.isfinite(wmax) else 0.0
    cons = dict(
        wmin=1 + beta * (wmin - 1) >= 0,
        wmax=ilo + beta * (1 - ilo) >= 0,
    )
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(1 + beta * (w - 1))), list(cons.values()))
    return Program("mle_dual", problem, parameters={}, variables=dict(beta=beta), constraints=cons,
                   info=dict(N=N, objective="l*_mle / N"))


# ------------------------------------------------------------------------------------------------
# Profile likelihood
# ------------------------------------------------------------------------------------------------
def profile_primal(sample) -> Program:
    r"""The profile likelihood ``L(v)`` (paper eq. (primalprof), with counts and corner atoms).

    .. math::

        L(v) = \max_{q \ge 0,\, m \ge 0} \sum_n c_n \log q_n \quad\text{s.t.}\quad
        E_Q[1] = 1,\; E_Q[w] = 1,\; E_Q[w u] = v,

    where ``Q`` puts ``q_n`` on each example and masses ``m`` on the four corner atoms
    ``(w, u) in {wmin, wmax} x {0, 1}`` (the paper states the program over the simplex; the corner
    atoms are where its dual's four constraints come from: docs/primal-dual.md, section 2).
    ``L(v) = -N log N - l_v`` with ``l_v`` the dual likelihood of :func:`profile_dual`; it is
    infeasible for ``v`` outside ``[0, 1]`` and, unless all ``w u`` (resp. ``w (1 - u)``) are
    zero, at ``v = 0`` (``v = 1``).

    Scaled form: ``y = N q``; atoms ``m_l0, m_l1`` at ``(wmin, 0), (wmin, 1)`` and weighted
    masses ``z_h0, z_h1`` of the atoms at ``(wmax, 0), (wmax, 1)``; objective
    ``(1/N) sum c log y`` (``problem.value = -l_v/N``); constraints
    ``mass``: ``(1/N) c.y + m_l0 + m_l1 + (z_h0 + z_h1)/wmax == 1``,
    ``weight``: ``(1/N) (c w).y + wmin (m_l0 + m_l1) + z_h0 + z_h1 == 1``,
    ``value``: ``(1/N) (c w u).y + wmin m_l1 + z_h1 == v``.

    Duals: ``beta = constraints["weight"].dual_value``, ``tau = constraints["value"].dual_value``
    and ``constraints["mass"].dual_value = 1 - beta - tau v``, so that
    ``q_n = 1/(N (1 + beta (w_n - 1) + tau (w_n u_n - v)))``.

    Handles: ``parameters`` ``v``; ``variables`` ``q``, ``y``, ``m_l0``, ``m_l1``, ``z_h0``,
    ``z_h1``; ``constraints`` ``mass``, ``weight``, ``value``.
    """
    w, u, c, N, wmin, wmax = sample_data(sample)
    v = cp.Parameter(name="v", value=0.5)
    y = cp.Variable(w.size, name="y", nonneg=True)
    m_l0 = cp.Variable(name="m_l0", nonneg=True)
    m_l1 = cp.Variable(name="m_l1", nonneg=True)
    z_h0 = cp.Variable(name="z_h0", nonneg=True)
    z_h1 = cp.Variable(name="z_h1", nonneg=True)
    ihi = inv_wmax(wmax)
    cons = dict(
        mass=(c / N) @ y + m_l0 + m_l1 + ihi * (z_h0 + z_h1) == 1,
        weight=(c * w / N) @ y + wmin * (m_l0 + m_l1) + z_h0 + z_h1 == 1,
        value=(c * w * u / N) @ y + wmin * m_l1 + z_h1 == v,
    )
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(y)), list(cons.values()))
    return Program(
        "profile_primal", problem, parameters=dict(v=v),
        variables=dict(q=y / N, y=y, m_l0=m_l0, m_l1=m_l1, z_h0=z_h0, z_h1=z_h1),
        constraints=cons, info=dict(N=N, objective="-l_v / N"),
    )


def profile_dual(sample) -> Program:
    r"""The dual likelihood ``l_v`` of the profile (paper eqs. (lrdual) and (constraints)).

    .. math::

        l_v = \max_{\beta, \tau} \sum_n c_n \log(1 + \beta (w_n - 1) + \tau (w_n u_n - v))
        \quad\text{s.t.}\quad 1 + \beta (w - 1) + \tau (w r - v) \ge 0
        \;\; \forall (w, r) \in \{w_{\min}, w_{\max}\} \times \{0, 1\}.

    ``L(v) = -N log N - l_v`` and the likelihood-ratio statistic is ``2 (l_v - l*_mle)``.

    Scaled form: objective ``(1/N) sum c log(...)`` (``problem.value = l_v / N``); the two
    corners at ``wmax`` are divided by ``wmax``, which for ``wmax = inf`` leaves ``beta >= 0`` and
    ``beta + tau >= 0``. The dual values of the corner constraints ``wmin,0``, ``wmin,1``,
    ``wmax,0``, ``wmax,1`` are the primal's atom masses ``m_l0, m_l1, z_h0, z_h1``.

    **Check ``v`` first.** An infeasible primal (``v`` outside ``[0, 1]``, or an end of it that
    the data exclude) makes this program unbounded, but only logarithmically: there is no
    improving ray, hence no certificate of unboundedness, and Clarabel was measured reporting
    ``optimal`` with ``|beta|, |tau| ~ 1e13`` and a finite, meaningless value (about 30).
    :func:`elcvx._cvx.profile` decides feasibility exactly before solving, and its certificate
    rejects such a point.

    Handles: ``parameters`` ``v``; ``variables`` ``beta``, ``tau``; ``constraints`` the corners.
    """
    w, u, c, N, wmin, wmax = sample_data(sample)
    v = cp.Parameter(name="v", value=0.5)
    beta = cp.Variable(name="beta")
    tau = cp.Variable(name="tau")
    ihi = inv_wmax(wmax)
    arg = 1 + beta * (w - 1) + tau * (w * u) - tau * v
    cons = {
        "wmin,0": 1 + beta * (wmin - 1) - tau * v >= 0,
        "wmin,1": 1 + beta * (wmin - 1) + tau * wmin - tau * v >= 0,
        "wmax,0": ihi + beta * (1 - ihi) - ihi * (tau * v) >= 0,
        "wmax,1": ihi + beta * (1 - ihi) + tau - ihi * (tau * v) >= 0,
    }
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(arg)), list(cons.values()))
    return Program("profile_dual", problem, parameters=dict(v=v),
                   variables=dict(beta=beta, tau=tau), constraints=cons,
                   info=dict(N=N, objective="l_v / N"))


# ------------------------------------------------------------------------------------------------
# Lower bound of the interval
# ------------------------------------------------------------------------------------------------
def lower_bound_primal(sample, *, side="lower") -> Program:
    r"""The lower end of the confidence interval (paper appendix C, corrected: docs/primal-dual.md).

    .. math::

        v_{lb} = \min_{q \ge 0,\, m \ge 0} \sum_n c_n q_n w_n u_n \quad\text{s.t.}\quad
        \sum_n c_n q_n + m_{lo} + m_{hi} = 1,\;
        \sum_n c_n q_n w_n + m_{lo} w_{\min} + m_{hi} w_{\max} = 1,\;
        \sum_n c_n \log q_n \ge \phi,

    with ``phi = -N log N - l*_mle - quantile/2`` and extra atoms at ``(wmin, 0)`` and
    ``(wmax, 0)`` (zero reward: nothing in the objective). The paper's appendix states it over
    the simplex without the atoms and with counts implicit; its ``phi`` carries the right sign
    (the main text flips the sign of ``l*_mle``). ``side="upper"`` builds the same program on
    ``1 - u``: the upper end of the interval is ``1 -`` its optimum.

    Scaled form: ``y = N q``, ``z_hi = wmax m_hi``; objective ``(1/N) (c w u).y`` (unchanged:
    ``problem.value = v_lb``); constraints
    ``mass``: ``(1/N) c.y + m_lo + z_hi/wmax == 1``,
    ``weight``: ``(1/N) (c w).y + wmin m_lo + z_hi == 1``,
    ``loglik``: ``(1/N) c.log(y) >= phi/N + log N``.

    Duals, in the Lagrangian ``sum c q w u + gamma (E_Q[1] - 1) + beta (E_Q[w] - 1)
    - kappa (sum c log q - phi)``: ``gamma = constraints["mass"].dual_value``,
    ``beta = constraints["weight"].dual_value``, ``kappa = constraints["loglik"].dual_value / N``;
    then ``q_n = kappa / (gamma + beta w_n + w_n u_n)``.

    Handles: ``parameters`` ``phi``; ``variables`` ``q``, ``y``, ``m_lo``, ``m_hi``, ``z_hi``;
    ``constraints`` ``mass``, ``weight``, ``loglik``.

    Examples
    --------
    One example ``(w, u) = (2, 1)`` with ``wmax = 4``: ``l*_mle = log 2``, and the bound is
    ``exp(-quantile/2)`` (derived by hand in ``tests/test_programs.py``). A second solve with
    another ``phi`` reuses the compiled program.

    >>> import math
    >>> from elcvx import Sample
    >>> from elcvx.programs import lower_bound_primal
    >>> p = lower_bound_primal(Sample([2.0], [1.0], wmax=4))
    >>> round(p.solve(phi=-math.log(2) - 3.841458820694124 / 2), 6)
    0.1465
    >>> round(p.solve(phi=-math.log(2) - 1.0 / 2), 6)  # quantile 1: exp(-1/2)
    0.606531
    """
    w, u, c, N, wmin, wmax = sample_data(sample, side)
    phi = cp.Parameter(name="phi", value=-N * math.log(N) - 1.0)
    problem, variables, cons = lower_bound_problem(w, u, c, N, wmin, wmax, phi, form="primal")
    return Program(
        f"lower_bound_primal[{side}]", problem, parameters=dict(phi=phi), variables=variables,
        constraints=cons, info=dict(N=N, side=side, objective="v_lb"),
    )


def lower_bound_dual(sample, *, side="lower") -> Program:
    r"""The dual of :func:`lower_bound_primal` (docs/primal-dual.md; the paper's main text is wrong).

    .. math::

        v_{lb} = \sup_{\kappa \ge 0,\, \beta,\, \gamma}\; -\beta - \gamma + \kappa (\phi + N)
        + \sum_n c_n \kappa \log\frac{\gamma + \beta w_n + w_n u_n}{\kappa}
        \quad\text{s.t.}\quad \gamma + \beta w_{\min} \ge 0,\; \gamma + \beta w_{\max} \ge 0,

    with ``kappa log(a/kappa) = -rel_entr(kappa, a)`` (exponential cone) and, at the optimum,
    ``q_n = kappa / (gamma + beta w_n + w_n u_n)`` and
    ``v_lb = kappa sum c w u / (gamma + beta w + w u)``. Corrections to the paper: the main
    text drops ``-beta - gamma`` (unbounded as printed) and flips the sign of ``l*_mle`` in
    ``phi``; appendix C's change of variables ``phi <- (phi - 1)/N`` should be ``phi/N`` and its
    ``v_lb`` has a stray ``1/N``.

    Scaled form: ``K = N kappa``, so (with ``psi = phi/N + log N``) the objective is
    ``-beta - gamma + K (psi + 1) - (1/N) sum c rel_entr(K, gamma + beta w + w u)``,
    and the ``wmax`` constraint is divided by ``wmax`` (``gamma/wmax + beta >= 0``; for
    ``wmax = inf``, ``beta >= 0``). ``problem.value = v_lb``. The dual values of ``wmin`` and
    ``wmax`` are the primal's atom masses ``m_lo`` and ``z_hi = wmax m_hi``.

    Handles: ``parameters`` ``phi``; ``variables`` ``beta``, ``gamma``, ``kappa`` (an
    expression, ``K/N``), ``K``; ``constraints`` ``wmin``, ``wmax``.
    """
    w, u, c, N, wmin, wmax = sample_data(sample, side)
    phi = cp.Parameter(name="phi", value=-N * math.log(N) - 1.0)
    problem, variables, cons = lower_bound_problem(w, u, c, N, wmin, wmax, phi, form="dual")
    return Program(
        f"lower_bound_dual[{side}]", problem, parameters=dict(phi=phi), variables=variables,
        constraints=cons, info=dict(N=N, side=side, objective="v_lb"),
    )


def lower_bound_problem(w, u, c, N, wmin, wmax, phi, *, form):
    """``(problem, variables, constraints)`` of :func:`lower_bound_primal` (``form="primal"``)
    or :func:`lower_bound_dual` (``"dual"``), in their scaled forms, on rewards ``u`` and counts
    ``c`` (``N = sum c``). The weights ``w`` and the radius ``phi`` are constants or
    :class:`cvxpy.Parameter` objects: the same builder serves the interval's programs (``phi`` a
    parameter) and the learning game's DPP programs (``w`` a parameter too;
    :mod:`elcvx.programs.learning`). A parameter ``w`` enters through ``cp.multiply``, which
    keeps the problem DPP; a constant ``w`` is multiplied out, so the program prints as numbers."""
    param = isinstance(w, cp.Expression)
    cw = cp.multiply(c / N, w) if param else c * w / N  # c_n w_n / N
    cwu = cp.multiply(c * u / N, w) if param else c * w * u / N  # c_n w_n u_n / N
    wu = cp.multiply(u, w) if param else w * u
    if form == "primal":
        y = cp.Variable(u.size, name="y", nonneg=True)
        m_lo = cp.Variable(name="m_lo", nonneg=True)
        z_hi = cp.Variable(name="z_hi", nonneg=True)
        cons = dict(
            mass=(c / N) @ y + m_lo + inv_wmax(wmax) * z_hi == 1,
            weight=cw @ y + wmin * m_lo + z_hi == 1,
            loglik=(c / N) @ cp.log(y) >= phi / N + math.log(N),
        )
        problem = cp.Problem(cp.Minimize(cwu @ y), list(cons.values()))
        return problem, dict(q=y / N, y=y, m_lo=m_lo, m_hi=inv_wmax(wmax) * z_hi, z_hi=z_hi), cons
    beta = cp.Variable(name="beta")
    gamma = cp.Variable(name="gamma")
    K = cp.Variable(name="K", nonneg=True)
    a = gamma + beta * w + wu
    cons = dict(wmin=gamma + beta * wmin >= 0, wmax=inv_wmax(wmax) * gamma + beta >= 0)
    objective = -beta - gamma + K * (phi / N + (math.log(N) + 1)) - (c / N) @ cp.rel_entr(K, a)
    problem = cp.Problem(cp.Maximize(objective), list(cons.values()))
    return problem, dict(beta=beta, gamma=gamma, kappa=K / N, K=K), cons
