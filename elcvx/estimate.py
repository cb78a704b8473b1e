"""The EL point estimate (the paper's eq. (vhatmle))."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from . import baselines, dispatch
from . import _validation as iv
from . import constraints as mc
from .extra_atom import choose_rho, extra_atom
from .interval import interval
from .results import ConfidenceInterval, EstimateResult
from .sample import Sample, check_sample, notes_of

if TYPE_CHECKING:  # (annotations only)
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from .constraints import MomentConstraint
    from .io import Log, LogScan


def estimate(sample: Sample | Log | LogScan, *, rho: float | str | None = None,
             constraints: MomentConstraint | Sequence[MomentConstraint] | None = None,
             atoms: ArrayLike | None = None, method: str = "auto") -> EstimateResult:
    r"""The EL point estimate of the target policy's value.

    Solves the paper's eq. (betastar),

    .. math:: \beta^* = \arg\max_\beta \sum_n c_n \log(1 + \beta (w_n - 1))
              \quad\text{s.t.}\quad 1 + \beta (w - 1) \ge 0 \ \text{at}\ w \in \{w_{\min}, w_{\max}\},

    whose primal is the maximum-likelihood ``Q`` with ``E_Q[w] = 1`` (appendix B), and returns
    eq. (vhatmle), :math:`\hat V(\rho) = \rho + \frac1N \sum_n c_n w_n (r_n - \rho)/(1 + \beta^*
    (w_n - 1))`. Where the maximum puts mass on an extra atom ``(w_ex, rho)`` the estimate
    depends on the atom's unknown reward ``rho``; ``value_range`` gives its range over
    ``rho`` in ``[rmin, rmax]``.

    Parameters
    ----------
    sample : Sample
        Or a log read by :mod:`elcvx.io` (its sample), or a log scanned in chunks.
    rho : float or {"midpoint", "snips", "self-consistent"}, optional
        The extra atoms' reward, one for every atom (docs/rho.md derives each rule). A number in
        ``[rmin, rmax]`` (user scale), or a rule: ``"midpoint"``, ``(rmin + rmax)/2``, the
        paper's text; ``"snips"``, the SNIPS estimate ``sum c w r / sum c w``, the authors'
        replication code for the realistic data; ``"self-consistent"``, the fixed point of
        ``V(rho) = rho``, ``rho = sum c q w r / sum c q w`` (EL's own self-normalised mean of the
        rows). Where no row has weight (every ``w = 0``) the last two are the midpoint.
        Default: ``"self-consistent"``. On the realistic-data Table 1 (26 datasets, 7 strategies,
        60 evaluations) the data-driven rules turn EL against SNIPS from 20/104/58
        wins/ties/losses (midpoint) to 39/108/35 and beat the midpoint 48/116/18 head to head;
        on real logs with rare rewards the midpoint gives the unseen weight a reward nothing
        supports. The midpoint is better only in the paper's synthetic environment, whose unseen
        reward is by construction unrelated to the seen ones. Of the two data-driven rules
        (equal there to the count), the self-consistent one uses only EL's own distribution
        (the constrained one with ``constraints=``) and equals ``"snips"`` when ``beta* = 0``.
    constraints : MomentConstraint or list of them, optional
        Known moments ``E_Q[g_j] = b_j`` (:mod:`elcvx.constraints`): the maximum is then over
        ``beta`` and one ``lambda_j`` per constraint, ``log(1 + beta (w_n - 1) + sum_j
        lambda_j (g_nj - b_j))``, with a constraint per extra atom.
    atoms : array_like, optional
        The extra atoms as rows ``(w, g_1, ..., g_k)`` (default: every vertex of ``{wmin, wmax}``
        times the constraints' ``atom_range``; see :func:`elcvx.constraints.extra_atoms`).
    method : {"auto", "fast", "cvxpy"}
        ``"fast"``: safeguarded Newton on the 1-d dual; ``"cvxpy"``: the dual program of
        :func:`elcvx.programs.mle_dual` (primal as fallback) solved by Clarabel; ``"auto"``: fast,
        falling back to cvxpy.

    Returns
    -------
    EstimateResult

    Examples
    --------
    >>> import elcvx
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> res = elcvx.estimate(s)
    >>> round(res.value, 6), round(res.beta, 6)
    (0.783911, 0.15693)
    >>> res.value_range.low == res.value_range.high  # wmin's and wmax's constraints are slack
    True
    """
    data, sample = sample, check_sample(sample, scans=True)
    method = iv.option("method", method, iv.METHODS)
    choose_rho(sample, rho, 0.0, 0.0)  # a bad rho fails before the solve
    model = mc.model(sample, constraints, atoms)
    sol, path = dispatch.mle(sample, method, model)
    mass, wmass, w_ex, base = extra_atom(sample, sol, with_value=True)
    if model is not None:
        w_ex = None  # several atoms may share the mass
    rho_u, rho_user, rule = choose_rho(sample, rho, base, wmass, snips=baselines.snips)
    error = sol.error  # (of base + wmass rho for any fixed rho, unit scale)
    if rule == "self-consistent":
        # rho = base / (1 - wmass): a ratio of two sums each known to `error`.
        on_rows = 1.0 - wmass
        error = (error * (1.0 + rho_u) / (on_rows - error) if on_rows > error
                 else (1.0 if error == error else error))
    return EstimateResult(
        value=sample.to_user(base + wmass * rho_u),
        value_range=ConfidenceInterval(sample.to_user(base), sample.to_user(base + wmass)),
        rho=rho_user,
        rho_rule=rule,
        reward_range=(sample.rmin, sample.rmax),
        beta=sol.beta,
        loglik=sol.loglik,
        q=sol.q_field,  # (computed on its first read)
        w_ex=w_ex,
        mass_ex=mass,
        wmass_ex=wmass,
        n=sample.n,
        method=path,
        status=sol.status,
        work=sol.work,
        lambdas=sol.lambdas,
        error=(sample.rmax - sample.rmin) * min(error, 1.0) if error == error else error,
        notes=notes_of(data),
        _interval=functools.partial(interval, data, constraints=constraints, atoms=atoms,
                                    method=method),  # for EstimateResult.confidence_interval
    )
