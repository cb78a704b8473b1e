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
``N log N``: Clarabel fails on them, or returns "optimal" with a wrong value, far more often
than on the scaled programs below (the documentation's performance page measures how often a
single solve of each scaled program fails; the lower-bound programs remain the hardest, and
:mod:`elcvx.cvx` has the fallbacks). Every builder uses the same change of variables, which
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

Constraint duals (``constraint.dual_value``, checked in ``tests/cvx/test_programs.py``)
---------------------------------------------------------------------------------
With the scaling above, cvxpy's multipliers are the paper's dual variables with the paper's
signs (each builder's docstring says which is which), and the multipliers of a dual program's
constraints are the primal's extra-atom masses. They are accurate to about ``1e-6`` relative
(an interior-point solver meets its tolerances on the objective and the residuals, not on each
variable); :mod:`elcvx.cvx` certifies them.

Moment constraints (``constraints=``, ``atoms=``)
------------------------------------------------
Every builder takes ``constraints``, :class:`~elcvx.constraints.MomentConstraint` s
``E_Q[g_j] = b_j`` (``j = 0 .. k-1``), and ``atoms``, the extra atoms as rows
``(w, g_0, ..., g_{k-1})`` (default :func:`~elcvx.constraints.extra_atoms`: every vertex of
``{wmin, wmax} x`` the constraints' ranges). With neither, the program is the paper's, with the
handles above. With either (docs/moment-constraints.md derives the duals):

* the primal has one more equality per constraint, ``g{j}``:
  ``(1/N) (c g_j).y + (the atoms' terms) == b_j``, whose ``dual_value`` is ``lambda_j`` (the
  sign conventions are each builder's);
* atom ``i``, row ``i`` of ``info["atoms"]`` (in the profile, once for each reward
  ``r in {0, 1}``: labels ``atom{i},{r}``), is a primal variable ``m_atom{i}``, its mass, when
  ``w_i <= 1``, and ``z_atom{i} = w_i m_i``, its weighted mass, when ``w_i > 1``, with
  coefficients ``1/w_i`` in ``mass``, ``1`` in ``weight``, ``g_i/w_i`` in ``g{j}`` (at ``w = inf``:
  ``0``, ``1`` and the row's entries, limits of ``g/w``) and ``r`` in ``value``;
* the dual has a vector variable ``lambda`` (``k`` entries) and one inequality ``atom{i}`` per
  atom (divided by ``w_i`` when ``w_i > 1``), whose ``dual_value`` is that atom's (weighted)
  mass in the primal.

Feasibility
-----------
The MLE and the lower bound are always feasible for ``quantile > 0``. The profile likelihood is
infeasible for ``v`` outside ``[0, 1]`` and possibly at its ends; see :func:`profile_dual` for why
the dual program cannot be trusted to say so.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

from ..errors import InvalidInputError
from ._atoms import Atoms
from .base import Program, sample_data


# ------------------------------------------------------------------------------------------------
# Maximum likelihood (the estimate)
# ------------------------------------------------------------------------------------------------
def _rebuildable(builder):
    """Give the builder's programs :meth:`Program.with_constraints` and the sample's counts
    (for :meth:`Program.log_likelihood`)."""
    import functools

    @functools.wraps(builder)
    def build(sample, **options):
        program = builder(sample, **options)
        program.info.setdefault("counts", sample.counts)
        program.rebuild = lambda constraints, atoms: build(
            sample, **{**options, "constraints": constraints, "atoms": atoms})
        return program

    return build


@_rebuildable
def mle_primal(sample, *, constraints=(), atoms=None) -> Program:
    r"""The nonparametric maximum-likelihood program of the estimate (paper section 3.2, app. B).
    The fast path solves its dual: :func:`elcvx.fast.mle_of`.

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

    **With moment constraints** (``constraints``, ``atoms``; module docstring): the same
    maximum over ``q`` and a mass ``m_i >= 0`` at each atom ``(w_i, g_i)``, subject to
    ``E_Q[1] = 1``, ``E_Q[w] = 1`` and ``E_Q[g_j] = sum_n c_n q_n g_nj + sum_i m_i g_ij = b_j``
    (constraints ``mass``, ``weight``, ``g0 .. g{k-1}``; variables ``m_atom{i}``, or
    ``z_atom{i}`` and the expression ``m_atom{i}``). Duals:
    ``lambda_j = constraints["g{j}"].dual_value``, ``beta* = constraints["weight"].dual_value``,
    ``constraints["mass"].dual_value = 1 - beta* - lambda.b``, and
    ``q_n = 1/(N (1 + beta* (w_n - 1) + lambda.(g_n - b)))``.
    """
    w, _, c, N, *_ = sample_data(sample)
    at = Atoms.of(sample, constraints, atoms)
    y = cp.Variable(w.size, name="y", nonneg=True)
    variables = dict(q=y / N, y=y, **at.variables())
    cons = at.moment_rows(y, c, N, c * w / N)
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(y)), list(cons.values()))
    return Program("mle_primal", problem, parameters={}, variables=variables, constraints=cons,
                   info=dict(N=N, objective="-l*_mle / N", **at.info))


@_rebuildable
def mle_dual(sample, *, constraints=(), atoms=None) -> Program:
    r"""The dual of the MLE: ``beta*`` of the paper's eq. (betastar). The fast path solves this
    program: :func:`elcvx.fast.mle_of`.

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

    **With moment constraints** (module docstring):

    .. math::

        l^* = \max_{\beta, \lambda} \sum_n c_n \log\big(1 + \beta (w_n - 1)
        + \lambda \cdot (g_n - b)\big) \quad\text{s.t.}\quad
        1 + \beta (w_i - 1) + \lambda \cdot (g_i - b) \ge 0 \text{ at each atom } (w_i, g_i)

    (divided by ``w_i`` when ``w_i > 1``; at ``w = inf``: ``beta + lambda.g_i >= 0``).
    Handles: ``variables`` ``beta``, ``lambda`` (``k`` entries); ``constraints`` ``atom{i}``,
    whose dual values are the primal's ``m_atom{i}`` or ``z_atom{i}``.

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
    w, _, c, N, *_ = sample_data(sample)
    at = Atoms.of(sample, constraints, atoms)
    beta = cp.Variable(name="beta")
    lam, handles = at.dual_variable()
    cons = at.likelihood_rows(beta, lam)
    arg = at.plus(1 + beta * (w - 1), lam, centred=True)
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(arg)), list(cons.values()))
    return Program("mle_dual", problem, parameters={}, variables=dict(beta=beta, **handles),
                   constraints=cons, info=dict(N=N, objective="l*_mle / N", **at.info))


# ------------------------------------------------------------------------------------------------
# Profile likelihood
# ------------------------------------------------------------------------------------------------
@_rebuildable
def profile_primal(sample, *, constraints=(), atoms=None) -> Program:
    r"""The profile likelihood ``L(v)`` (paper eq. (primalprof), with counts and corner atoms).
    The fast path solves its dual: :func:`elcvx.fast.profile_of`.

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

    **With moment constraints** (module docstring): ``E_Q[g_j] = b_j`` join as ``g0 ..
    g{k-1}``; each atom ``(w_i, g_i)`` is two atoms, of rewards ``r = 0, 1``, with variables
    ``m_atom{i},{r}`` (or ``z_atom{i},{r}``; coefficient ``w_i r``, or ``r``, in ``value``).
    Duals: ``lambda_j = constraints["g{j}"].dual_value``, ``constraints["mass"].dual_value =
    1 - beta - lambda.b - tau v``, ``q_n = 1/(N (1 + beta (w_n - 1) + lambda.(g_n - b)
    + tau (w_n u_n - v)))``.
    """
    w, u, c, N, *_ = sample_data(sample)
    at = Atoms.of(sample, constraints, atoms, rewards=(0, 1))
    v = cp.Parameter(name="v", value=0.5)
    y = cp.Variable(w.size, name="y", nonneg=True)
    variables = dict(q=y / N, y=y, **at.variables(masses=False))
    cons = at.moment_rows(y, c, N, c * w / N)
    cons["value"] = (c * w * u / N) @ y + at.row(at.r * at.wcoef, keep=at.r == 1) == v
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(y)), list(cons.values()))
    return Program("profile_primal", problem, parameters=dict(v=v), variables=variables,
                   constraints=cons, info=dict(N=N, objective="-l_v / N", **at.info))


@_rebuildable
def profile_dual(sample, *, constraints=(), atoms=None) -> Program:
    r"""The dual likelihood ``l_v`` of the profile (paper eqs. (lrdual) and (constraints)). The
    fast path solves this program: :func:`elcvx.fast.profile_of`.

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
    :func:`elcvx.cvx.profile` decides feasibility exactly before solving, and its certificate
    rejects such a point.

    Handles: ``parameters`` ``v``; ``variables`` ``beta``, ``tau``; ``constraints`` the corners.

    **With moment constraints** (module docstring): ``l_v = max sum c log(1 + beta (w_n - 1)
    + lambda.(g_n - b) + tau (w_n u_n - v))`` subject to the same expression ``>= 0`` at each
    atom ``(w_i, g_i)`` with ``w_n u_n`` replaced by ``w_i r`` for ``r = 0, 1`` (divided by
    ``w_i`` when ``w_i > 1``; at ``w = inf``: ``beta + lambda.g_i + tau r >= 0``). Handles:
    ``variables`` ``beta``, ``tau``, ``lambda``; ``constraints`` ``atom{i},{r}``, whose dual
    values are the primal's ``m_atom{i},{r}`` or ``z_atom{i},{r}``.
    """
    w, u, c, N, *_ = sample_data(sample)
    at = Atoms.of(sample, constraints, atoms, rewards=(0, 1))
    v = cp.Parameter(name="v", value=0.5)
    beta = cp.Variable(name="beta")
    tau = cp.Variable(name="tau")
    lam, handles = at.dual_variable()
    arg = at.plus(1 + beta * (w - 1) + tau * (w * u) - tau * v, lam, centred=True)
    cons = at.likelihood_rows(beta, lam, tau, v)
    problem = cp.Problem(cp.Maximize((c / N) @ cp.log(arg)), list(cons.values()))
    return Program("profile_dual", problem, parameters=dict(v=v),
                   variables=dict(beta=beta, tau=tau, **handles), constraints=cons,
                   info=dict(N=N, objective="l_v / N", **at.info))


# ------------------------------------------------------------------------------------------------
# Lower bound of the interval
# ------------------------------------------------------------------------------------------------
@_rebuildable
def lower_bound_primal(sample, *, side="lower", constraints=(), atoms=None,
                       value=None) -> Program:
    r"""The lower end of the confidence interval (paper appendix C, corrected: docs/primal-dual.md).
    The fast path solves its dual: :func:`elcvx.fast.lower_bound_of`.

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

    **With moment constraints** (module docstring): ``E_Q[g_j] = b_j`` join as ``g0 ..
    g{k-1}``, ``phi`` is computed from the *constrained* MLE's ``l*``, and the atoms
    ``(w_i, g_i)`` have reward 0 (variables ``m_atom{i}``, or ``z_atom{i}`` and the expression
    ``m_atom{i}``). The Lagrangian gains ``+ sum_j lambda_j (E_Q[g_j] - b_j)``, with
    ``lambda_j = constraints["g{j}"].dual_value``, and
    ``q_n = kappa / (gamma + beta w_n + lambda.g_n + w_n u_n)``.

    **Another value functional** (``value=(h, h_lo)``): the program bounds ``E_Q[h]`` instead
    of ``E_Q[w u]``: ``h`` per row replaces ``w_n u_n`` and atom ``i`` adds ``h_lo[i]`` per
    unit of its mass to the objective (per unit of weighted mass at ``w = inf``), its least
    value there (``side`` is then not used). The difference of two policies is ``h = (w_a -
    w_b) u`` with the constraint ``E_Q[w_b] = 1`` (:func:`elcvx.difference`); the dual's rows
    become ``gamma + beta w + lambda.g + h`` and each atom's constraint gains ``+ h_lo[i]``.

    Examples
    --------
    One example ``(w, u) = (2, 1)`` with ``wmax = 4``: ``l*_mle = log 2``, and the bound is
    ``exp(-quantile/2)`` (derived by hand in ``tests/cvx/test_programs.py``). A second solve with
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
    return _lower_bound(sample, side, constraints, atoms, "primal", value)


@_rebuildable
def lower_bound_dual(sample, *, side="lower", constraints=(), atoms=None,
                       value=None) -> Program:
    r"""The dual of :func:`lower_bound_primal` (docs/primal-dual.md; the paper's main text is wrong).
    The fast path solves this program, with ``kappa`` eliminated:
    :func:`elcvx.fast.lower_bound_of`.

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

    **With moment constraints** (module docstring): with ``a_n = gamma + beta w_n +
    lambda.g_n + w_n u_n``, the objective gains ``- lambda.b`` and each atom ``(w_i, g_i)``
    asks ``gamma + beta w_i + lambda.g_i >= 0`` (divided by ``w_i`` when ``w_i > 1``; at
    ``w = inf``: ``beta + lambda.g_i >= 0``); with ``kappa`` eliminated, ``v_lb = max
    K geomean_c(a) - gamma - beta - lambda.b``, ``K = exp(phi/N + log N)``. Handles:
    ``variables`` ``lambda`` too; ``constraints`` ``atom{i}``, whose dual values are the
    primal's ``m_atom{i}`` or ``z_atom{i}``.
    """
    return _lower_bound(sample, side, constraints, atoms, "dual", value)


def _lower_bound(sample, side, constraints, atoms, form, value=None) -> Program:
    w, u, c, N, wmin, wmax = sample_data(sample, side)
    at = Atoms.of(sample, constraints, atoms)
    if value is not None:
        value = _value_functional(value, w.size, len(at.w))
    phi = cp.Parameter(name="phi", value=-N * math.log(N) - 1.0)
    problem, variables, cons = lower_bound_problem(w, u, c, N, wmin, wmax, phi, form=form,
                                                   atoms=at, value=value)
    return Program(
        f"lower_bound_{form}[{side}]", problem, parameters=dict(phi=phi), variables=variables,
        constraints=cons, info=dict(N=N, side=side, objective="v_lb", **at.info),
    )


def _value_functional(value, rows, atoms):
    """``(h, h_lo)`` as float arrays of ``rows`` and ``atoms`` entries, or a clear error."""
    try:
        h, h_lo = (np.asarray(t, dtype=float) for t in value)
    except (TypeError, ValueError):
        raise InvalidInputError("value must be a pair (h, h_lo) of float arrays") from None
    if h.shape != (rows,) or h_lo.shape != (atoms,):
        raise InvalidInputError(f"value=(h, h_lo) must have {rows} and {atoms} entries (the rows "
                                f"and the extra atoms); got shapes {h.shape} and {h_lo.shape}")
    if not (np.all(np.isfinite(h)) and np.all(np.isfinite(h_lo))):
        raise InvalidInputError("value=(h, h_lo) must be finite")
    return h, h_lo


def lower_bound_problem(w, u, c, N, wmin, wmax, phi, *, form, atoms=None, value=None):
    """``(problem, variables, constraints)`` of :func:`lower_bound_primal` (``form="primal"``)
    or :func:`lower_bound_dual` (``"dual"``), in their scaled forms, on rewards ``u`` and counts
    ``c`` (``N = sum c``). The weights ``w`` and the radius ``phi`` are constants or
    :class:`cvxpy.Parameter` objects: the same builder serves the interval's programs (``phi`` a
    parameter) and the learning game's DPP programs (``w`` a parameter too;
    :mod:`elcvx.programs.learning`). A parameter ``w`` enters through ``cp.multiply``, which
    keeps the problem DPP; a constant ``w`` is multiplied out, so the program prints as numbers.
    ``atoms``: an ``Atoms`` (moment constraints and their atoms); default the paper's.
    ``value``: ``(h, h_lo)`` to bound ``E_Q[h]`` instead of ``E_Q[w u]`` (constant ``w``)."""
    if atoms is None:
        atoms = Atoms(np.zeros((u.size, 0)), np.zeros(0), np.array([[wmin], [wmax]]), legacy=True)
    param = isinstance(w, cp.Expression)
    cw = cp.multiply(c / N, w) if param else c * w / N  # c_n w_n / N
    cwu = cp.multiply(c * u / N, w) if param else c * w * u / N  # c_n w_n u_n / N
    wu = cp.multiply(u, w) if param else w * u
    floor = None
    if value is not None:
        wu, floor = value
        cwu = c * wu / N
    if form == "primal":
        y = cp.Variable(u.size, name="y", nonneg=True)
        variables = dict(q=y / N, y=y, **atoms.variables())
        cons = atoms.moment_rows(y, c, N, cw)
        cons["loglik"] = (c / N) @ cp.log(y) >= phi / N + math.log(N)
        objective = cwu @ y
        if floor is not None and np.any(floor != 0):
            objective = objective + atoms.row(floor * atoms.per_unit)
        problem = cp.Problem(cp.Minimize(objective), list(cons.values()))
        return problem, variables, cons
    beta = cp.Variable(name="beta")
    gamma = cp.Variable(name="gamma")
    K = cp.Variable(name="K", nonneg=True)
    lam, handles = atoms.dual_variable()
    a = atoms.plus(gamma + beta * w + wu, lam, centred=False)
    cons = atoms.bound_rows(gamma, beta, lam, floor)
    linear = -beta - gamma if lam is None else -beta - gamma - atoms.b @ lam
    objective = linear + K * (phi / N + (math.log(N) + 1)) - (c / N) @ cp.rel_entr(K, a)
    problem = cp.Problem(cp.Maximize(objective), list(cons.values()))
    return problem, dict(beta=beta, gamma=gamma, kappa=K / N, K=K, **handles), cons
