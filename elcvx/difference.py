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

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dispatch, fast
from .calibration import quantiles
from .model import Moments
from . import _validation as iv
from .constraints import MomentConstraint
from .errors import InvalidInputError
from .results import ConfidenceInterval, DifferenceResult
from .sample import check_sample
from .status import OPTIMAL, Status

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike

    from .io import Log
    from .sample import Sample


def _check_pair(a: Any, b: Any) -> tuple[Sample, Sample]:
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
            "where both weights are infinite has no defined share of each)", field="wmax")
    return a, b


def _atoms(a: Sample, b: Sample, atoms: Any) -> np.ndarray:
    """The extra atoms as rows ``(w_a, w_b)``: the vertices of ``[wmin_a, wmax_a] x [wmin_b,
    wmax_b]`` by default (at ``w_a = inf``, ``w_b`` is per unit of ``w_a``: 0), or the user's,
    checked against both weights' ranges."""
    if atoms is None:
        table = np.array([(wa, wb if math.isfinite(wa) else 0.0)
                          for wa in (a.wmin, a.wmax) for wb in (b.wmin, b.wmax)])
        return np.unique(table, axis=0)
    try:
        table = np.array(atoms, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError("atoms must be an array of rows (w_a, w_b)", field="atoms") from None
    table = table.reshape(1, -1) if table.ndim == 1 else table
    if table.ndim != 2 or table.shape[1] != 2 or not len(table):
        raise InvalidInputError(f"atoms must have one row (w_a, w_b) per atom; got shape "
                                f"{np.shape(atoms)}", field="atoms")
    for i, (wa, wb) in enumerate(table):
        if not (a.wmin <= wa <= a.wmax):
            raise InvalidInputError(f"atoms[{i}] has w_a={float(wa)!r} outside [wmin, wmax] of sample_a "
                                    f"= [{a.wmin}, {a.wmax}]", field="atoms", index=i, value=wa)
        if not (b.wmin <= wb <= b.wmax) or math.isinf(wb):
            raise InvalidInputError(f"atoms[{i}] has w_b={float(wb)!r} outside [wmin, wmax] of sample_b "
                                    f"= [{b.wmin}, {b.wmax}] (and finite)", field="atoms",
                                    index=i, value=wb)
    return np.unique(table, axis=0)


def _model(a: Sample, b: Sample, atoms: Any = None) -> tuple[list[MomentConstraint], np.ndarray,
                                                           tuple[np.ndarray, ...]]:
    """``(constraints, atoms, value)`` of ``V(a) - V(b)`` on sample ``a``'s rows, ``g = w_b``.

    Atoms ``(w_a, w_b)`` (:func:`_atoms`); ``h = (w_a - w_b) u`` with ``[h_lo, h_hi]`` the ends
    of ``(w_a - w_b) [0, 1]`` (per unit of ``w_a`` at ``w_a = inf``, where ``w_b / w_a -> 0``).
    """
    atoms = _atoms(a, b, atoms)
    wa, wb = atoms[:, 0], atoms[:, 1]
    spread = np.where(np.isfinite(wa), np.where(np.isfinite(wa), wa, 0.0) - wb, 1.0)
    constraint = MomentConstraint(b.w, 1.0, atom_range=(b.wmin, float(wb.max())), name="w_b")
    value = ((a.w - b.w) * a.u, np.minimum(spread, 0.0), np.maximum(spread, 0.0))
    return [constraint], atoms, value


def difference(sample_a: Sample | Log, sample_b: Sample | Log, *, confidence_level: float = 0.95,
               calibration: str = "chi2", rho: float | str | None = None,
               atoms: ArrayLike | None = None, method: str = "auto",
               alternative: str = "two-sided") -> DifferenceResult:
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
    atoms : array_like, optional
        The extra atoms as rows ``(w_a, w_b)``: the two policies' weights at an example that was
        not logged. Default: the four vertices of ``[wmin_a, wmax_a] x [wmin_b, wmax_b]``,
        which allow an unlogged example where one policy's weight is largest and the other's
        least. A user who knows more says so here, and the interval narrows to what that
        knowledge allows. Two deterministic policies, for instance, put weight ``1/h`` on the
        action they choose and 0 elsewhere: at an unlogged example both weights are 0, or one
        is, or both are equal (both choose it), so ``atoms=[(0, 0), (wmax_a, 0), (0, wmax_b),
        (m, m)]`` with ``m = min(wmax_a, wmax_b)``. Equal logged weights do not make two
        policies equal where nothing was logged: with the default atoms, a policy against a
        copy of itself has the estimate 0 but an interval of the model's width.
    method : {"auto", "fast", "cvxpy"}
        ``"fast"``: numpy (:mod:`elcvx.fast`); ``"cvxpy"``: Clarabel's own solution of
        :func:`~elcvx.programs.mle_primal` and :func:`~elcvx.programs.lower_bound_primal`
        (with ``value=``), certified; ``"auto"``: the fast path, and cvxpy where it fails.
    alternative : {"two-sided", "greater", "less"}
        As in :func:`elcvx.interval`: ``"greater"`` bounds the difference from below only
        (``high`` is ``rmax - rmin``), ``"less"`` from above (``low`` is ``rmin - rmax``), each
        at the threshold of level ``2 confidence_level - 1``.

    Returns
    -------
    DifferenceResult
        ``.estimate``, ``.low``, ``.high`` on the user's reward scale (``(rmax - rmin)`` times
        the difference on the unit scale); unpacks as ``(low, high)``.

    Examples
    --------
    A policy against itself: the estimate is 0; the interval is what the default atoms allow
    (an unlogged example could still have one weight at wmax and the other at 0), and 0 when
    the atoms say the two policies agree there too.

    >>> import elcvx
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> d = elcvx.difference(s, s)
    >>> d.estimate, d.low < 0 < d.high
    (0.0, True)
    >>> same = elcvx.difference(s, s, atoms=[(0, 0), (10, 10)])
    >>> abs(same.estimate), abs(same.low), abs(same.high)
    (0.0, 0.0, 0.0)
    """
    a, b = _check_pair(sample_a, sample_b)
    if math.isinf(b.wmax):
        # The model is symmetric: V(a) - V(b) = -(V(b) - V(a)), and an atom at infinity is the
        # first policy's (its weight the model's w).
        swapped = None if atoms is None else np.asarray(atoms, dtype=float).reshape(-1, 2)[:, ::-1]
        flipped = {"greater": "less", "less": "greater"}.get(alternative, alternative)
        d = difference(b, a, confidence_level=confidence_level, calibration=calibration, rho=rho,
                       atoms=swapped, method=method, alternative=flipped)
        return dataclasses.replace(d, estimate=-d.estimate,
                                   estimate_range=ConfidenceInterval(-d.estimate_range.high,
                                                                     -d.estimate_range.low),
                                   low=-d.high, high=-d.low, alternative=alternative)
    level = iv.confidence_level(confidence_level)
    calibration = iv.option("calibration", calibration, iv.CALIBRATIONS)
    method = iv.option("method", method, iv.METHODS)
    span = a.rmax - a.rmin
    rho = 0.5 * (a.rmin + a.rmax) if rho is None else iv.finite_scalar("rho", rho)
    if not a.rmin <= rho <= a.rmax:
        raise InvalidInputError(f"rho={rho!r} is outside [rmin, rmax] = [{a.rmin}, {a.rmax}]")
    rho_u = a.to_unit(rho)
    quantile = quantiles.quantile(calibration,
                                     quantiles.two_sided_level(level, alternative), a.n)
    constraints, atoms, value = _model(a, b, atoms)
    # |(w_a - w_b)(u - rho)| <= w_a + w_b = 2 + d_a + d_b: the certificate's coefficients.
    data = Moments(a, constraints, atoms, value=value, estimate_coef=(2.0, 1.0, 1.0))
    negated = (-value[0], -value[2], -value[1])
    cvx = dispatch.cvx_module  # imports cvxpy only when the cvxpy path runs
    mle, path = dispatch.solve(method, lambda: fast.mle_of(data),
                               lambda: cvx().mle_of(data, a, constraints, atoms, polish=fast.polish),
                               "the MLE of the difference",
                               feasible=dispatch.feasibility(a, constraints, atoms, data))
    c = 1.0 if a.counts is None else a.counts
    cq = c * mle.q
    base = float(cq @ data.h)
    atoms_share = float(cq @ b.w - cq @ a.w)  # (1 - E_rows[w_a]) - (1 - E_rows[w_b])
    # On the unit scale a difference lies in [-1, 1]; rounding may step past it by an ulp.
    ends = sorted(min(max(t, -1.0), 1.0) for t in (base, base + atoms_share))
    estimate = span * min(max(base + rho_u * atoms_share, -1.0), 1.0)
    if not math.isfinite(quantile):
        return DifferenceResult(estimate, ConfidenceInterval(span * ends[0], span * ends[1]),
                                -span, span, level, calibration, quantile, a.n, path,
                                Status(f"whole range: no {calibration} quantile at N={a.n:g}"),
                                alternative)
    bounds, paths = [-1.0, -1.0], {path}  # (lower end, -upper end); an end not solved: the range's
    for model, val, end in ((data, value, "lower"), (data.negated(), negated, "upper")):
        if end not in quantiles.solved_sides(alternative):
            continue
        sol, used = dispatch.solve(
            method, lambda: fast.lower_bound_of(model, mle.loglik, quantile, mle),
            lambda: cvx().lower_bound(a, loglik=mle.loglik, quantile=quantile,
                                      constraints=constraints, atoms=atoms, value=val,
                                      mle_sol=mle, polish=fast.polish),
            f"the {end} bound of the difference")
        bounds[end == "upper"] = sol.value
        paths.add(used)
    low, high = max(-1.0, bounds[0]), min(1.0, -bounds[1])
    return DifferenceResult(estimate, ConfidenceInterval(span * ends[0], span * ends[1]),
                            span * low, span * high, level, calibration, quantile, a.n,
                            "+".join(sorted(paths)), OPTIMAL, alternative)
