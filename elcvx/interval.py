"""The EL confidence interval and the profile likelihood it is the level set of."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import dispatch
from .calibration import bootstrap, quantiles, signed
from . import _validation as iv
from . import constraints as mc
from . import thin
from .extra_atom import extra_atom
from .errors import InvalidInputError
from .results import BoundResult, IntervalResult, ProfileResult
from .sample import check_sample, notes_of
from .status import Status

if TYPE_CHECKING:  # (annotations only)
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from .constraints import MomentConstraint
    from .io import Log, LogScan
    from .sample import Sample


def interval(sample: Sample | Log | LogScan, *, confidence_level: float = 0.95,
             calibration: str | None = None,
             constraints: MomentConstraint | Sequence[MomentConstraint] | None = None,
             atoms: ArrayLike | None = None, method: str = "auto",
             resamples: int | None = None,
             random_state: int | np.random.Generator | None = 0,
             alternative: str = "two-sided") -> IntervalResult:
    r"""The EL confidence interval ``{v : 2 (L_mle - L(v)) <= q}`` (the paper's eq. (lrtest)).

    Each bound is one convex program, not a bisection on ``v`` (appendix C, corrected in
    docs/primal-dual.md, section 3). The lower bound is

    .. math:: \min_Q \sum_n c_n Q_n w_n u_n \quad\text{s.t.}\quad E_Q[1] = 1,\ E_Q[w] = 1,\
              \sum_n c_n \log Q_n \ge \phi = -N\log N - l^*_{\rm mle} - q/2,

    with ``Q`` on the sample and the zero-reward atoms ``(wmin, 0)``, ``(wmax, 0)``; the fast
    path solves its dual with ``kappa`` eliminated,
    :math:`\max_{\gamma,\beta} e^{-(l^*_{\rm mle} + q/2)/N}\,\mathrm{geomean}_c(\gamma + \beta w
    + w u) - \gamma - \beta` s.t. :math:`\gamma + \beta w \ge 0` at ``wmin`` and ``wmax``.
    The upper bound is ``1 -`` the lower bound of ``1 - u``. Rewards ``u`` are the sample's
    rewards rescaled to ``[0, 1]``; the bounds are reported on ``[rmin, rmax]``.

    Parameters
    ----------
    sample : Sample
    confidence_level : float
        In (0, 1).
    calibration : {None, "chi2", "f", "bootstrap", "signed-bootstrap"}
        The threshold ``q``. None (default): ``"signed-bootstrap"`` for a one-sided bound
        (``alternative`` not ``"two-sided"``) on rows in memory without ``constraints`` or
        ``atoms``, because chi2's one-sided bound misses more often than its level says where
        few rows carry the estimate (docs/intervals.md, "One-sided bounds", with its cost in
        time); ``"chi2"`` otherwise (a two-sided interval, a scanned log, a model). The result's
        ``calibration`` is the name used. ``"chi2"``: the chi-square(1) quantile of the paper's
        text, the asymptotic law of the likelihood-ratio statistic (Wilks; Mykland's dual
        likelihood for martingale data). ``"f"``: the F(1, N-1) quantile of the authors'
        replication code, a small-sample correction that is larger at small N and equal in
        the limit; with N < 2 it has no quantile and the interval is ``[rmin, rmax]``.
        ``"bootstrap"``: the larger of the chi-square quantile and the bootstrap critical value
        of the statistic, from ``resamples`` resamples of the fitted EL distribution
        (:mod:`elcvx.calibration.bootstrap`; i.i.d. rows only, and without ``constraints``). For when a
        rare, large weight makes the statistic heavier-tailed than chi-square(1) at large N;
        the statistics are computed by the fast path's solvers whatever ``method`` is, and
        ``method`` solves the endpoints. ``"signed-bootstrap"``: made for one-sided bounds; each
        end has its own threshold, the larger of the normal quantile's square and the bootstrap
        critical value of the signed root ``sign(v_hat - v) sqrt(2 (L_mle - L(v)))`` on that
        end's tail, from ``resamples`` resamples of the distribution at the chi-square bound
        (:mod:`elcvx.calibration.signed`; i.i.d. rows, no ``constraints``; two-sided, each end
        at ``alpha / 2``). The choice between them: docs/intervals.md, "Calibration" and
        "One-sided bounds".
    resamples : int, optional
        Bootstrap resamples (the bootstrap calibrations only), at least 19; by default 999 for
        ``"bootstrap"`` and 199 for ``"signed-bootstrap"`` (the one-sided default, whose
        coverage the validity suite measured at 199: docs/validity.md).
    random_state : None, int or numpy.random.Generator
        The bootstrap's random stream (the bootstrap calibrations only). The interval is a
        deterministic function of the sample and an integer ``random_state`` (default 0); None
        draws fresh entropy.
    constraints, atoms : optional
        Known moments and the extra atoms (as in :func:`elcvx.estimate`): the likelihood ball
        is then around the constrained maximum, and every distribution in it meets the
        constraints.
    method : {"auto", "fast", "cvxpy"}
    alternative : {"two-sided", "greater", "less"}
        scipy's convention. ``"greater"``: a one-sided lower bound, ``(low, rmax)``; ``"less"``:
        an upper bound, ``(rmin, high)``. The bound is the end of the two-sided interval at
        level ``2 confidence_level - 1`` (the threshold ``q`` is the calibration's quantile at
        ``1 - 2 alpha``: :func:`elcvx.quantiles.two_sided_level`), and only that end is
        solved. Needs ``confidence_level > 0.5``. That threshold assumes the signed root is
        symmetric, which it is not where few rows carry the estimate: ``"signed-bootstrap"``
        (the default for a one-sided bound where it applies) calibrates the end on its own tail.

    Returns
    -------
    IntervalResult
        Unpacks as ``(low, high)``. Its ``notes`` say when few rows carry the estimate's
        variance (:mod:`elcvx.thin`), and name the finite-sample bounds to use then.

    Examples
    --------
    >>> import elcvx
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> low, high = elcvx.interval(s)
    >>> round(low, 4), round(high, 4)
    (0.29, 0.9838)
    """
    notes, sample = notes_of(sample), check_sample(sample, scans=True)
    level = iv.confidence_level(confidence_level)
    threshold_level = quantiles.two_sided_level(level, alternative)
    model = mc.model(sample, constraints, atoms)
    if calibration is None:
        calibration = _default_calibration(sample, alternative, model)
    calibration = iv.option("calibration", calibration, iv.EL_CALIBRATIONS)
    notes += thin.notes(sample)  # when few rows carry the estimate: elcvx.thin
    method = iv.option("method", method, iv.METHODS)
    quantile, sided, mle, path = _threshold(sample, calibration, threshold_level, method, model,
                                            resamples, random_state, alternative)
    if not np.isfinite(quantile):
        return IntervalResult(sample.rmin, sample.rmax, level, calibration, quantile, None, None,
                              sample.n, method,
                              Status(f"whole range: no {calibration} quantile at N={sample.n:g}"),
                              alternative=alternative, notes=notes)
    # An end not solved is the reward range's.
    sides: dict[str, BoundResult | None] = {"lower": None, "upper": None}
    statuses = []
    work = mle.work
    for side in quantiles.solved_sides(alternative):
        # The upper bound is 1 - the lower bound of 1 - u.
        side_q = sided[side] if calibration == "signed-bootstrap" else quantile
        sol, side_path = dispatch.lower_bound(sample, mle, side_q, side, method, model=model)
        path = path if side_path == path else "mixed"
        statuses.append(sol.status)
        work = (work[0] + sol.work[0], work[1] + sol.work[1])
        value_u = min(max(float(sol.value), 0.0), 1.0)  # (np.clip's answer, NaN kept, at less cost)
        value_u = value_u if side == "lower" else 1.0 - value_u
        mass, wmass, w_ex = extra_atom(sample, sol)
        w_ex = w_ex if model is None else None  # with constraints, several atoms may carry it
        sides[side] = BoundResult(value=sample.to_user(value_u), beta=sol.beta, gamma=sol.gamma,
                                  kappa=sol.kappa, q=sol.q_field, w_ex=w_ex, mass_ex=mass,
                                  wmass_ex=wmass, error=(sample.rmax - sample.rmin) * sol.error)
    status = _interval_status(*statuses) if len(statuses) == 2 else statuses[0]
    low = sample.rmin if sides["lower"] is None else sides["lower"].value
    high = sample.rmax if sides["upper"] is None else sides["upper"].value
    return IntervalResult(low, high, level, calibration, quantile, sides["lower"], sides["upper"],
                          sample.n, path, status, work, alternative=alternative, notes=notes)


def _default_calibration(sample: Sample | LogScan, alternative: str, model: Any = None) -> str:
    """:func:`interval`'s calibration when none is given: ``"signed-bootstrap"`` for a one-sided
    bound where it applies (rows in memory, no constraints or atoms: ``model`` None), else
    ``"chi2"``."""
    one_sided = alternative != "two-sided"
    return "signed-bootstrap" if one_sided and sample.in_memory and model is None else "chi2"


def _threshold(sample: Sample, calibration: str, level: float, method: str, model: Any,
               resamples: Any, random_state: Any,
               alternative: str = "two-sided") -> tuple[float, Any, Any, str]:
    """``(quantile, sorted bootstrap statistics or each side's threshold or None, mle, path)``:
    the calibration's threshold, after the MLE (which the bootstrap resamples from); with
    ``"signed-bootstrap"``, ``quantile`` is the largest of the sides' thresholds."""
    if calibration not in ("bootstrap", "signed-bootstrap"):
        quantile = quantiles.quantile(calibration, level, sample.n)
        mle, path = dispatch.mle(sample, method, model) if np.isfinite(quantile) else (None, method)
        return quantile, None, mle, path
    if model is not None:
        raise InvalidInputError(f"calibration={calibration!r} is not available with constraints or "
                                "atoms; use 'chi2' or 'f'", field="calibration", value=calibration)
    if not sample.in_memory:
        raise InvalidInputError(f"calibration={calibration!r} needs the log's rows in memory "
                                "(read_log); for a scanned log use 'chi2' or 'f'",
                                field="calibration", value=calibration)
    resamples = bootstrap.resamples(resamples, calibration)
    generator = bootstrap.rng(random_state)
    mle, path = dispatch.mle(sample, method, model)
    if calibration == "signed-bootstrap":
        sided = {side: signed.side_threshold(sample, side, level, resamples, generator)
                 for side in quantiles.solved_sides(alternative)}
        return max(sided.values()), sided, mle, path
    quantile, t = bootstrap.calibrate(sample, level, resamples, generator)
    return quantile, t, mle, path


def _interval_status(lower: Status, upper: Status) -> Status:
    """The two sides' statuses as one (:class:`~elcvx.status.Status`): ``"optimal"`` when both
    are, and a side's qualification (a fallback, a certified inaccurate solve) only where the
    sides differ, named by side: ``"optimal (upper bound: certified, Clarabel:
    optimal_inaccurate)"``."""
    lower, upper = Status.of(lower), Status.of(upper)
    if lower == upper:
        return lower
    if lower.outcome != upper.outcome:
        return Status(f"lower bound: {lower}; upper bound: {upper}", parts=(lower, upper))
    notes = [f"{side} bound: {s.detail.replace('; ', ', ')}"
             for side, s in (("lower", lower), ("upper", upper)) if s.detail]
    return Status(lower.outcome, "; ".join(notes),
                  fallbacks=tuple(dict.fromkeys(lower.fallbacks + upper.fallbacks)))


def profile(sample: Sample | Log | LogScan, v: ArrayLike, *, calibration: str = "chi2",
            constraints: MomentConstraint | Sequence[MomentConstraint] | None = None,
            atoms: ArrayLike | None = None, method: str = "auto",
            confidence_level: float = 0.95, resamples: int | None = None,
            random_state: int | np.random.Generator | None = 0) -> ProfileResult:
    r"""The profile likelihood-ratio statistic ``2 (L_mle - L(v))`` at each candidate ``v``.

    ``L(v)`` is the paper's eq. (primalprof) (``Q`` on the sample plus the four corner atoms);
    its dual is eq. (lrdual),

    .. math:: l_v = \sup_{\beta,\tau} \sum_n c_n \log(1 + \beta (w_n - 1) + \tau (w_n u_n - v))

    over ``1 + beta (w - 1) + tau (w r - v) >= 0`` at the corners, so the statistic is
    ``2 (l_v - l*_mle)``. ``v`` lies in :func:`interval` at a confidence level exactly when
    ``statistic <= quantile``, i.e. ``pvalue >= 1 - confidence_level``.

    Parameters
    ----------
    sample : Sample
    v : float or array_like
        Candidate values on the user's reward scale.
    calibration : {"chi2", "f", "bootstrap"}
        The law of the p-value (see :func:`interval`). ``"bootstrap"``: the larger of the
        chi-square(1) p-value and the bootstrap p-value ``(1 + #{T_b >= t}) / (B + 1)``, so that
        ``pvalue >= 1 - confidence_level`` exactly on :func:`interval`'s bootstrap interval
        (given the same ``confidence_level``, ``resamples`` and ``random_state``).
    confidence_level, resamples, random_state
        Used by ``calibration="bootstrap"`` only (``confidence_level`` sets the chi-square floor's
        level, as in :func:`interval`).
    constraints, atoms : optional
        Known moments and the extra atoms (as in :func:`elcvx.estimate`); the statistic is
        then relative to the constrained maximum.
    method : {"auto", "fast", "cvxpy"}
        The cvxpy path compiles one program and re-solves it for each ``v``.

    Returns
    -------
    ProfileResult

    Examples
    --------
    >>> import elcvx
    >>> s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    >>> res = elcvx.profile(s, [0.5, 2.0])  # 2.0 is outside the reward range
    >>> res.statistic.round(4).tolist()
    [1.3241, inf]
    """
    sample = check_sample(sample, scans=True)
    calibration = iv.option("calibration", calibration, iv.EL_CALIBRATIONS)
    method = iv.option("method", method, iv.METHODS)
    level = iv.confidence_level(confidence_level)
    v_user = iv.points("v", v)
    model = mc.model(sample, constraints, atoms)
    if calibration == "signed-bootstrap":
        raise InvalidInputError("calibration='signed-bootstrap' calibrates the bounds of "
                                "interval() side by side; profile's p-value is the two-sided "
                                "statistic's: use 'chi2', 'f' or 'bootstrap'", field="calibration",
                                value=calibration)
    if calibration == "bootstrap":
        _, t, mle, _ = _threshold(sample, calibration, level, method, model, resamples, random_state)
    else:
        mle, _ = dispatch.mle(sample, method, model)
    sol, path = dispatch.profile(sample, sample.to_unit(v_user), mle, method, model)
    statistic = np.maximum(2.0 * (sol.loglik - mle.loglik), 0.0)
    if calibration == "bootstrap":
        pvalue = np.maximum(quantiles.pvalue("chi2", statistic, sample.n),
                            bootstrap.pvalue(t, statistic))
    else:
        pvalue = quantiles.pvalue(calibration, statistic, sample.n)
    gaps = np.full(statistic.shape, np.nan) if sol.gap is None else np.asarray(sol.gap)
    error = np.where(np.isfinite(statistic), 2.0 * (gaps + mle.gap), 0.0)
    return ProfileResult(v=v_user, statistic=statistic, pvalue=pvalue,
                         beta=sol.beta, tau=sol.tau, calibration=calibration, n=sample.n,
                         method=path, work=(mle.work[0] + sol.work[0], mle.work[1] + sol.work[1]),
                         error=error)
