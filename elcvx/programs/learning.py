r"""The inner problem of lower-bound policy learning, compiled once and re-solved as ``pi`` changes.

The paper's game (its section "Offline Contextual Bandit Learning"; docs/learning.md) is

.. math:: \max_\pi \min_{Q \in \mathcal Q(\pi)} \sum_n c_n Q_n w_n(\pi) u_n,

and its inner problem is the lower-bound program of the interval with the policy's importance
weights ``w(pi)`` as data. Everything else in that program is fixed by the log: the rewards
``u``, the counts ``c``, ``wmin`` and ``wmax``. So the builders here declare ``w`` as a vector
:class:`cvxpy.Parameter`, and with it the one scalar that also moves with ``pi``: the likelihood
radius ``phi = -N log N - l*_mle(w) - quantile/2`` (:func:`dro_phi`), which depends on ``w``
through the maximum-likelihood fit. Both programs are DPP, so after the first solve cvxpy
substitutes new parameter values into the cached canonical form instead of compiling again.

Two forms of the same program (their optimal values agree with each other and with the fast
path, ``tests/test_learning.py``):

* :func:`dro_inner_primal` -- the inner ``min`` over ``Q`` itself, where a researcher appends a
  constraint on ``Q``; the duals are read off its constraints.
* :func:`dro_inner_dual` -- its three-variable dual, used by :mod:`elcvx.learning` (measured
  below to solve faster and, with Clarabel, more reliably at the first attempt).

When the compiled program pays (measured; rerun with ``python examples/learn_policy.py
--timings``)
------------------------------------------------------------------------------------------
A vector parameter makes cvxpy's compilation grow much faster than the data (about as ``N^2``
here): the parametrised canonical form records how each coefficient depends on each parameter
entry. Measured with :func:`compile_times` on the 2-core machine where this was written (cvxpy
1.9, Clarabel 0.11, dual form; single runs, expect +-50% between runs):

=====  ===========  ==============  ============  =========  =========  ==============
N      DPP compile  re-substitute   const build   Clarabel   fast path  pays after
=====  ===========  ==============  ============  =========  =========  ==============
100    0.016 s      0.0009 s        0.010 s       0.007 s    0.6 ms     1.6 solves
1000   0.075 s      0.0009 s        0.011 s       0.046 s    0.5 ms     7.4 solves
10000  5.3 s        0.0016 s        0.027 s       0.72 s     0.8 ms     205 solves
=====  ===========  ==============  ============  =========  =========  ==============

("const build": building and compiling the same program with ``w`` as constants, which is the
alternative to re-substituting; "pays after" = ``compile / (const build - re-substitute)``;
more sizes in ``docs/learning.md``.) The compiled program pays when a fit makes more inner
solves than that: the alternating method makes ``passes + 1 = 5``, which crosses between
``N = 300`` and ``N = 1000``; the direct solver makes about 30, which crosses near
``N = 3000``. :data:`DPP_MAX_ROWS` ``= 1000`` is the alternating method's crossover, rounded up,
used for both; above it :mod:`elcvx.learning` takes the duals from the fast path, which agrees
with Clarabel to ``1e-6`` and is 10 to 1000 times faster than one Clarabel solve at every size
measured. The cvxpy path is there for programs that the fast path cannot solve, e.g. with a
constraint appended to :func:`dro_inner_primal`.
"""

from __future__ import annotations

import math
import time

import cvxpy as cp
import numpy as np

from .. import _moment
from ..sample import Sample
from .._solutions import BoundSolution
from ..errors import InvalidInputError
from .base import Program
from .empirical_likelihood import lower_bound_problem

#: Largest number of rows for which :mod:`elcvx.learning` compiles the DPP program
#: (``method="cvxpy"``); above it the fast path's duals are used (see the module docstring).
DPP_MAX_ROWS = 1000

FORMS = ("primal", "dual")




def _fixed_data(sample):
    u = np.asarray(sample.u, dtype=float)
    c = np.asarray(sample.c, dtype=float)
    return u, c, float(sample.n), float(sample.wmin), float(sample.wmax)


def dro_phi(w, *, counts=None, wmin=0.0, wmax, quantile) -> float:
    r"""The likelihood radius of the inner problem at weights ``w``: ``-N log N - l*_mle(w) - q/2``.

    ``l*_mle(w) = max_beta sum_n c_n log(1 + beta (w_n - 1))`` over ``beta`` in
    ``[-1/(wmax - 1), 1/(1 - wmin)]`` (the paper's eq. (betastar), solved by the fast path's
    Newton iteration). This is the ``phi`` parameter of :func:`dro_inner_primal` and
    :func:`dro_inner_dual`; it changes with ``pi`` together with ``w``.

    Parameters
    ----------
    w : array_like
        Importance weights ``w_n(pi)`` in ``[wmin, wmax]``.
    counts : array_like, optional
        Row multiplicities (ones when omitted).
    wmin, wmax : float
        The weight bounds of the program.
    quantile : float
        The calibration quantile ``q`` of the interval (e.g. ``chi2(1).ppf(0.95)``).

    Examples
    --------
    >>> from elcvx.programs.learning import dro_phi
    >>> round(dro_phi([0.5, 1.5], wmax=10.0, quantile=3.84), 4)  # -2 log 2 - 0 - 1.92
    -3.3063
    """
    w = np.asarray(w, dtype=float)
    c = None if counts is None else np.asarray(counts, dtype=float)
    n = float(w.size) if c is None else float(c.sum())
    mle = _moment.mle(Sample(w, np.zeros_like(w), counts=c, wmin=float(wmin), wmax=float(wmax)), ())
    return -n * math.log(n) - mle.loglik - 0.5 * float(quantile)


def dro_inner_primal(sample) -> Program:
    r"""The inner problem of the lower-bound game as a DPP program in ``w``: the ``min`` over ``Q``.

    .. math::

        v_{lb}(w) = \min_{q \ge 0,\, m \ge 0} \sum_n c_n q_n w_n u_n \quad\text{s.t.}\quad
        \sum_n c_n q_n + m_{lo} + m_{hi} = 1,\;
        \sum_n c_n q_n w_n + m_{lo} w_{\min} + m_{hi} w_{\max} = 1,\;
        \sum_n c_n \log q_n \ge \phi(w),

    the program of :func:`elcvx.programs.lower_bound_primal` (appendix C, corrected in
    docs/primal-dual.md) with the weights a :class:`cvxpy.Parameter` ``w`` and ``phi`` a scalar
    parameter (set it with :func:`dro_phi`). The sample supplies the fixed data: rewards ``u``
    (unit scale), counts, ``wmin``, ``wmax``; its weights are only the parameter's initial value.

    Scaled form (as in :mod:`elcvx.programs.empirical_likelihood`): ``y = N q``,
    ``z_hi = wmax m_hi``; objective ``(1/N) (c u w).y`` (``problem.value = v_lb``); constraints
    ``mass``: ``(1/N) c.y + m_lo + z_hi/wmax == 1``,
    ``weight``: ``(1/N) (c w).y + wmin m_lo + z_hi == 1``,
    ``loglik``: ``(1/N) c.log(y) >= phi/N + log N``.
    Duals: ``gamma = constraints["mass"].dual_value``,
    ``beta = constraints["weight"].dual_value``, ``kappa = constraints["loglik"].dual_value / N``
    (:func:`read_solution` does this).

    Returns
    -------
    Program
        ``parameters``: ``w`` (vector, nonneg), ``phi``; ``variables``: ``q``, ``y``, ``m_lo``,
        ``z_hi``; ``constraints``: ``mass``, ``weight``, ``loglik``.

    Examples
    --------
    >>> import elcvx
    >>> from elcvx.programs.learning import dro_inner_primal, dro_phi
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> prog = dro_inner_primal(s)
    >>> w = [0.0, 2.0, 2.0, 0.5]
    >>> round(prog.solve(w=w, phi=dro_phi(w, wmax=10.0, quantile=3.841459)), 4)  # = interval(s).low
    0.29
    >>> w = [0.5, 1.5, 2.0, 0.5]  # another policy: new values, same compiled program
    >>> round(prog.solve(w=w, phi=dro_phi(w, wmax=10.0, quantile=3.841459)), 4)
    0.2529
    """
    return _inner_program(sample, "primal")


def dro_inner_dual(sample) -> Program:
    r"""The inner problem of the lower-bound game as a DPP program in ``w``: its dual.

    .. math::

        v_{lb}(w) = \sup_{\kappa \ge 0,\, \beta,\, \gamma}\; -\beta - \gamma + \kappa (\phi(w) + N)
        + \sum_n c_n \kappa \log\frac{\gamma + \beta w_n + w_n u_n}{\kappa}
        \quad\text{s.t.}\quad \gamma + \beta w_{\min} \ge 0,\; \gamma + \beta w_{\max} \ge 0,

    the program of :func:`elcvx.programs.lower_bound_dual` with ``w`` and ``phi`` parameters
    (``beta w_n`` is a variable times a parameter, which DPP allows). At the optimum
    ``q_n = kappa / (gamma + beta w_n + w_n u_n)`` is the minimising ``Q`` of the inner problem.

    Scaled form: ``K = N kappa``; objective ``-beta - gamma + K (phi/N + log N + 1) - (1/N) sum_n
    c_n rel_entr(K, gamma + beta w_n + w_n u_n)``; constraints ``wmin``: ``gamma + beta wmin >=
    0`` and ``wmax``: ``gamma/wmax + beta >= 0`` (``beta >= 0`` when ``wmax = inf``).
    ``problem.value = v_lb``.

    Returns
    -------
    Program
        ``parameters``: ``w`` (vector, nonneg), ``phi``; ``variables``: ``beta``, ``gamma``,
        ``K``; ``constraints``: ``wmin``, ``wmax``.

    Examples
    --------
    >>> import elcvx
    >>> from elcvx.programs.learning import dro_inner_dual, dro_phi, read_solution
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> prog = dro_inner_dual(s)
    >>> w = [0.5, 1.5, 2.0, 0.5]
    >>> round(prog.solve(w=w, phi=dro_phi(w, wmax=10.0, quantile=3.841459)), 4)  # = interval.low
    0.2529
    >>> sol = read_solution(prog)
    >>> round(float(sol.q.sum()), 4)  # Q on the sample; the rest sits on the atom (wmax, 0)
    0.9674
    """
    return _inner_program(sample, "dual")


def _inner_program(sample, form) -> Program:
    u, c, N, wmin, wmax = _fixed_data(sample)
    w = cp.Parameter(u.size, name="w", nonneg=True, value=np.asarray(sample.w, dtype=float))
    phi = cp.Parameter(name="phi", value=-N * math.log(N) - 1.0)
    problem, variables, cons = lower_bound_problem(w, u, c, N, wmin, wmax, phi, form=form)
    return Program(
        f"dro_inner_{form}", problem, parameters=dict(w=w, phi=phi), variables=variables,
        constraints=cons, info=dict(N=N, form=form, objective="v_lb", u=u, c=c),
    )


def dro_inner(sample, *, form="dual") -> Program:
    """:func:`dro_inner_dual` (``form="dual"``, the default) or :func:`dro_inner_primal`."""
    if form not in FORMS:
        raise InvalidInputError(f"form={form!r} is not valid; choose one of 'primal', 'dual'")
    return dro_inner_dual(sample) if form == "dual" else dro_inner_primal(sample)


def read_solution(program: Program) -> BoundSolution:
    """The value, duals ``(beta, gamma, kappa)`` and per-example ``q`` of a solved inner program.

    ``q_n = kappa / (gamma + beta w_n + w_n u_n)`` at the parameter value ``w`` last solved for,
    the same :class:`~elcvx._solutions.BoundSolution` that the fast path returns.
    """
    info = program.info
    N, u = info["N"], info["u"]
    w = np.asarray(program.parameters["w"].value, dtype=float)
    if info["form"] == "dual":
        beta = float(program.variables["beta"].value)
        gamma = float(program.variables["gamma"].value)
        kappa = float(program.variables["K"].value) / N
    else:
        cons = program.constraints
        gamma = float(cons["mass"].dual_value)
        beta = float(cons["weight"].dual_value)
        kappa = float(cons["loglik"].dual_value) / N
    if info["form"] == "primal":
        q = np.asarray(program.variables["q"].value, dtype=float)
    else:
        a = gamma + beta * w + w * u
        q = kappa / np.where(a > 0, a, np.inf)
    return BoundSolution(value=float(program.problem.value), beta=beta, gamma=gamma,
                         kappa=kappa, q=q, status=str(program.problem.status))


def compiled_parameter_program(program: Program):
    """cvxpy's cached parametrised canonical form (None before the first solve).

    The object stays the same across solves exactly when no recompilation happened, which is
    what ``tests/test_learning.py`` checks.
    """
    return program.problem._cache.param_prog


def compile_times(sizes=(100, 1000, 10000), *, form="dual", seed=0, repeats=3):
    """Measure what compiling the DPP program costs against the alternatives, per size ``N``.

    For each ``N``: a synthetic log (weights ``U(0,1)/U(0.1,0.9)``, rewards ``U(0, 1)``,
    ``wmax = 20``) and, in seconds, ``dpp_compile`` (the first ``get_problem_data`` of the
    parametrised program), ``dpp_substitute`` (a later one, new ``w``: the cached path),
    ``const_build`` (building and compiling the same program with ``w`` as constants),
    ``solve`` (one Clarabel solve, median of ``repeats``) and ``fast`` (the fast path's MLE and
    bound together, median). ``pays_after`` is the number of inner solves after which the
    compiled program is cheaper than rebuilding, ``dpp_compile / (const_build -
    dpp_substitute)``.

    Returns
    -------
    list of dict
        One row per size.
    """
    from ..sample import Sample

    rows = []
    for n in sizes:
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.1, 0.9, n)
        w0 = rng.uniform(0.0, 1.0, n) / p
        u = rng.uniform(0.0, 1.0, n)
        sample = Sample(w0, u, wmax=20.0)
        phi = dro_phi(w0, wmax=20.0, quantile=3.841459)
        prog = dro_inner(sample, form=form)
        prog.parameters["phi"].value = phi
        t0 = time.perf_counter()
        prog.problem.get_problem_data(cp.CLARABEL)
        compile_ = time.perf_counter() - t0
        subs, builds, solves, fasts = [], [], [], []
        for k in range(repeats):
            wk = w0 * (1.0 - 0.01 * (k + 1))
            prog.parameters["w"].value = wk
            prog.parameters["phi"].value = dro_phi(wk, wmax=20.0, quantile=3.841459)
            t0 = time.perf_counter()
            prog.problem.get_problem_data(cp.CLARABEL)
            subs.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            const = _constant_program(sample, wk, prog.parameters["phi"].value, form)
            const.get_problem_data(cp.CLARABEL)
            builds.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            prog.solve()
            solves.append(time.perf_counter() - t0 - subs[-1])
            t0 = time.perf_counter()
            one = Sample(wk, u, wmin=0.0, wmax=20.0)
            mle = _moment.mle(one, ())
            _moment.lower_bound(one, (), mle.loglik, 3.841459, mle_sol=mle)
            fasts.append(time.perf_counter() - t0)
        sub, build = float(np.median(subs)), float(np.median(builds))
        rows.append(dict(N=n, form=form, dpp_compile=compile_, dpp_substitute=sub,
                         const_build=build, solve=float(np.median(solves)),
                         fast=float(np.median(fasts)),
                         pays_after=compile_ / (build - sub) if build > sub else math.inf))
    return rows


def _constant_program(sample, w, phi, form):
    """The same inner program with ``w`` and ``phi`` as constants (for :func:`compile_times`)."""
    u, c, N, wmin, wmax = _fixed_data(sample)
    return lower_bound_problem(np.asarray(w, dtype=float), u, c, N, wmin, wmax, float(phi), form=form)[0]
