r"""The difference of two policies' values, estimated and bounded on one log.

Both policies are evaluated on the same logged examples: row ``n`` has the two importance
weights ``w_a``, ``w_b`` and one reward ``r``. The EL model puts ``Q`` on the rows and on extra
atoms at the vertices of ``[wmin_a, wmax_a] x [wmin_b, wmax_b]``, with both weights' means known,

.. math:: E_Q[1] = 1,\qquad E_Q[w_a] = 1,\qquad E_Q[w_b] = 1,

and the value functional ``h = (w_a - w_b) r``, whose expectation is ``V(pi_a) - V(pi_b)``. It
is the moment-constrained model of :mod:`elcvx.constraints` with ``g = w_b`` (target 1) and
this ``h``; at an atom the reward is unknown in ``[rmin, rmax]``, so ``h`` ranges over
``(w_a - w_b) [0, 1]`` on the unit reward scale. Estimating the difference in one model, rather
than subtracting two intervals, uses the correlation of the two estimates: the interval is
much narrower when the policies agree on most examples.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from . import _calibration, _dispatch, _moment
from . import _validation as iv
from .constraints import MomentConstraint
from .errors import InvalidInputError
from .results import ConfidenceInterval, DifferenceResult
from .sample import check_sample

if TYPE_CHECKING:  # (annotations only)
    from .io import Log
    from .sample import Sample


def _check_pair(a, b):
    a, b = check_sample(a), check_sample(b)
    if a.n_rows != b.n_rows:
        raise InvalidInputError(
            f"sample_a has {a.n_rows} rows but sample_b has {b.n_rows}: both must be the same log")
    if not np.array_equal(a.r, b.r) or (a.rmin, a.rmax) != (b.rmin, b.rmax):
        raise InvalidInputError(
            "sample_a and sample_b must share their rewards and reward range (one log, two "
            "policies' weights); build both from the same reward column")
    same_counts = (a.counts is None and b.counts is None) or (
        a.counts is not None and b.counts is not None and np.array_equal(a.counts, b.counts))
    if not same_counts:
        raise InvalidInputError("sample_a and sample_b must have the same counts")
    if math.isinf(a.wmax) and math.isinf(b.wmax):
        raise InvalidInputError(
            "difference needs a finite wmax for at least one of the two samples (an atom "
            "where both weights are infinite has no defined share of each)")
    return a, b


def _model(a, b):
    """``(constraints, atoms, value)`` of ``V(a) - V(b)`` on sample ``a``'s rows, ``g = w_b``.

    Atoms ``(w_a, w_b)`` at the vertices; ``h = (w_a - w_b) u`` with ``[h_lo, h_hi]`` the ends of
    ``(w_a - w_b) [0, 1]`` (per unit of ``w_a`` at ``w_a = inf``, where ``w_b / w_a -> 0``).
    """
    atoms = np.array([(wa, wb if math.isfinite(wa) else 0.0)
                      for wa in (a.wmin, a.wmax) for wb in (b.wmin, b.wmax)])
    atoms = np.unique(atoms, axis=0)
    wa, wb = atoms[:, 0], atoms[:, 1]
    spread = np.where(np.isfinite(wa), np.where(np.isfinite(wa), wa, 0.0) - wb, 1.0)
    constraint = MomentConstraint(b.w, 1.0, atom_range=(b.wmin, b.wmax), name="w_b")
    value = ((a.w - b.w) * a.u, np.minimum(spread, 0.0), np.maximum(spread, 0.0))
    return [constraint], atoms, value


def difference(sample_a: Sample | Log, sample_b: Sample | Log, *, confidence_level: float = 0.95,
               calibration: str = "chi2", rho: float | str | None = None,
               method: str = "auto") -> DifferenceResult:
    r"""The EL estimate and confidence interval of ``V(pi_a) - V(pi_b)`` from one log.

    ``sample_a`` and ``sample_b`` hold the two policies' importance weights on the same rows,
    with the same rewards and counts. The estimate maximises the likelihood under
    ``E_Q[w_a] = E_Q[w_b] = 1``,

    .. math:: l^* = \max_{\beta, \lambda} \sum_n c_n \log(1 + \beta (w_{a,n} - 1)
              + \lambda (w_{b,n} - 1)),

    with one constraint per atom ``(w_a, w_b)`` at the vertices of the two weight ranges; the
    interval is ``{v : 2 (L_mle - L(v)) <= q}`` for the value functional ``h = (w_a - w_b) r``,
    each end one program (the lower end ``min E_Q[h]`` over the likelihood ball, the upper
    ``-min E_Q[-h]``). Where the maximum leaves weighted mass on the atoms, their unknown
    reward ``rho`` (one for every atom; default the reward midpoint) enters the estimate
    through ``rho (E_Q[w_b] - E_Q[w_a])`` on the atoms, and ``estimate_range`` is its range.

    Parameters
    ----------
    sample_a, sample_b : Sample
        The same log under the two policies (rewards, reward range and counts must agree).
    confidence_level : float
    calibration : {"chi2", "f"}
    rho : float, optional
        The atoms' reward (user scale); default the reward midpoint.
    method : {"auto", "fast", "cvxpy"}
        ``"fast"``: numpy (:mod:`elcvx._moment`); ``"cvxpy"``: Clarabel's own solution of
        :func:`~elcvx.programs.mle_primal` and :func:`~elcvx.programs.lower_bound_primal`
        (with ``value=``), certified; ``"auto"``: the fast path, and cvxpy where it fails.

    Returns
    -------
    DifferenceResult
        ``.estimate``, ``.low``, ``.high`` on the user's reward scale (``(rmax - rmin)`` times
        the difference on the unit scale); unpacks as ``(low, high)``.

    Examples
    --------
    A policy against itself: the difference is exactly 0, with an interval of width 0.

    >>> import elcvx
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> d = elcvx.difference(s, s)
    >>> d.estimate, d.low, d.high
    (0.0, 0.0, 0.0)
    """
    a, b = _check_pair(sample_a, sample_b)
    level = iv.confidence_level(confidence_level)
    calibration = iv.option("calibration", calibration, iv.CALIBRATIONS)
    method = iv.option("method", method, iv.METHODS)
    span = a.rmax - a.rmin
    rho = 0.5 * (a.rmin + a.rmax) if rho is None else iv.finite_scalar("rho", rho)
    if not a.rmin <= rho <= a.rmax:
        raise InvalidInputError(f"rho={rho!r} is outside [rmin, rmax] = [{a.rmin}, {a.rmax}]")
    rho_u = a.to_unit(rho)
    quantile = _calibration.quantile(calibration, level, a.n)
    if np.array_equal(a.w, b.w) and (a.wmin, a.wmax) == (b.wmin, b.wmax):
        # The same policy: h = 0 on every row and atom, so every Q gives exactly 0.
        return DifferenceResult(0.0, ConfidenceInterval(0.0, 0.0), 0.0, 0.0, level, calibration,
                                quantile, a.n, "closed form", "optimal (the same policy)")
    constraints, atoms, value = _model(a, b)
    data = _moment.Moments(a, constraints, atoms, value=value)
    negated = (-value[0], -value[2], -value[1])
    cvx = _dispatch._cvx_model_module  # imports cvxpy only when the cvxpy path runs
    mle, path = _dispatch._run(method, lambda: _moment.mle_of(data),
                               lambda: cvx().model_mle(a, constraints, atoms),
                               "the MLE of the difference")
    c = 1.0 if a.counts is None else a.counts
    cq = c * mle.q
    base = float(cq @ data.h)
    atoms_share = float(cq @ b.w - cq @ a.w)  # (1 - E_rows[w_a]) - (1 - E_rows[w_b])
    ends = sorted((base, base + atoms_share))
    estimate = span * (base + rho_u * atoms_share)
    if not math.isfinite(quantile):
        return DifferenceResult(estimate, ConfidenceInterval(span * ends[0], span * ends[1]),
                                -span, span, level, calibration, quantile, a.n, path,
                                f"whole range: no {calibration} quantile at N={a.n:g}")
    bounds, paths = [], {path}
    for model, val, end in ((data, value, "lower"), (data.negated(), negated, "upper")):
        sol, used = _dispatch._run(
            method, lambda: _moment.lower_bound_of(model, mle.loglik, quantile, mle),
            lambda: cvx().model_lower_bound(a, constraints, atoms, mle.loglik, quantile,
                                            value=val),
            f"the {end} bound of the difference")
        bounds.append(sol.value)
        paths.add(used)
    low, high = max(-1.0, bounds[0]), min(1.0, -bounds[1])
    return DifferenceResult(estimate, ConfidenceInterval(span * ends[0], span * ends[1]),
                            span * low, span * high, level, calibration, quantile, a.n,
                            "+".join(sorted(paths)), "optimal")
