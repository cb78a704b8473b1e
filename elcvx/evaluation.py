"""Every estimator and interval of the package on one sample, by name.

``elcvx evaluate`` and :func:`elcvx.evaluate` (:func:`evaluate`) and the studies of
:mod:`elcvx.experiments` compute the same numbers on each sample: EL beside the paper's
baselines and Cressie-Read. :func:`evaluate_all` computes them in one place, each by the
function that defines it (:mod:`elcvx.baselines`, :mod:`elcvx.cressie_read`,
:func:`elcvx.estimate`, :func:`elcvx.interval`), and records which solver path answered each EL
computation, so that a study can count the samples the fast path did not solve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import baselines, cressie_read
from . import _validation as iv
from .errors import InvalidInputError
from .results import EvaluationResult, MethodResult
from .status import Status

if TYPE_CHECKING:  # (annotations only)
    from .io import Log, LogScan
    from .sample import Sample

__all__ = ["ESTIMATES", "INTERVALS", "METHODS", "Evaluation", "evaluate", "evaluate_all"]

#: The point estimates by name. ``constant``: the reward midpoint (the paper's Constant);
#: ``cr``: Cressie-Read lambda = -2 with its extra atom's reward at the midpoint.
ESTIMATES = ("el", "ips", "snips", "emp", "cr", "clipped-dr", "constant")
#: The intervals by name: EL and CR(-2) under a calibration, Clopper-Pearson, Gaussian.
INTERVALS = ("el-chi2", "el-f", "el-bootstrap", "el-signed-bootstrap", "cr-chi2", "cr-f", "binomial", "gaussian")


@dataclass(frozen=True, eq=False)
class Evaluation:
    """What :func:`evaluate_all` computed.

    Attributes
    ----------
    estimates : dict
        ``name -> value`` for each estimate asked for and computed.
    intervals : dict
        ``name -> (low, high)`` for each interval asked for and computed.
    results : dict
        ``name -> result object`` (:class:`~elcvx.EstimateResult`,
        :class:`~elcvx.IntervalResult`, a baseline's or Cressie-Read's result; for
        ``constant``, the float).
    notes : dict
        ``name -> note`` where a result carries one: a baseline's degenerate case (SNIPS when
        every weight is 0), or a Cressie-Read interval's status other than ``"optimal"``.
    paths : dict
        ``name -> solver path`` of each EL computation: ``"fast"``, ``"cvxpy"`` or ``"mixed"``
        (an interval whose MLE and bounds took different paths).
    errors : dict
        ``name -> "ExceptionType: message"`` of each computation that raised one of ``catch``
        (it is then in neither ``estimates`` nor ``intervals``).
    """

    estimates: dict[str, float] = field(default_factory=dict)
    intervals: dict[str, Any] = field(default_factory=dict)  # (ConfidenceInterval)
    results: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def fell_back(self) -> tuple[str, ...]:
        """The EL computations that the cvxpy path answered (all of them with ``method="cvxpy"``;
        with ``"auto"``, those the fast path did not solve)."""
        return tuple(name for name, path in self.paths.items() if path in ("cvxpy", "mixed"))


def evaluate_all(sample: Sample, estimates: Sequence[str] = ESTIMATES,
                 intervals: Sequence[str] = INTERVALS, *, confidence_level: float = 0.95,
                 rho: float | str | None = "midpoint", method: str = "auto",
                 constraints: Any = None, atoms: Any = None, resamples: int | None = None,
                 random_state: Any = 0,
                 catch: type[BaseException] | tuple[type[BaseException], ...] = ()) -> Evaluation:
    """The named estimates and intervals of one sample.

    Parameters
    ----------
    sample : Sample
    estimates, intervals : sequence of str
        Names among :data:`ESTIMATES` and :data:`INTERVALS`.
    confidence_level : float
    rho
        EL's extra atom's reward (:func:`elcvx.estimate`); CR(-2) and ClippedDR take the midpoint.
    method : {"auto", "fast", "cvxpy"}
        EL's solver path; with ``"auto"`` the fast path runs once and cvxpy answers only where
        it fails (``paths`` says which answered).
    constraints, atoms : optional
        Moment constraints for EL's computations (:func:`elcvx.estimate`).
    resamples, random_state
        The bootstrap's, for ``el-bootstrap`` (:func:`elcvx.interval`).
    catch : tuple of exception types
        Raised by a computation, these are recorded in ``errors`` (the others still computed);
        any other exception propagates.

    Returns
    -------
    Evaluation
    """
    from .estimate import estimate
    from .interval import interval

    bad = [n for n in estimates if n not in ESTIMATES] + [n for n in intervals if n not in INTERVALS]
    if bad:
        raise InvalidInputError(f"{bad[0]!r} is not one of {', '.join(ESTIMATES + INTERVALS)}")
    level = iv.confidence_level(confidence_level)
    model = dict(method=method, constraints=constraints, atoms=atoms)
    def el_interval(calibration: str) -> Any:
        extra = (dict(resamples=resamples, random_state=random_state)
                 if calibration in ("bootstrap", "signed-bootstrap") else {})
        return interval(sample, confidence_level=level, calibration=calibration, **model, **extra)

    compute: dict[str, Callable[[], Any]] = {
        "el": lambda: estimate(sample, rho=rho, **model),
        "ips": lambda: baselines.ips(sample),
        "snips": lambda: baselines.snips(sample),
        "emp": lambda: baselines.emp(sample),
        "cr": lambda: cressie_read.estimate(sample),
        "clipped-dr": lambda: baselines.clipped_dr(sample),
        "constant": lambda: 0.5 * (sample.rmin + sample.rmax),
        "el-chi2": lambda: el_interval("chi2"),
        "el-f": lambda: el_interval("f"),
        "el-bootstrap": lambda: el_interval("bootstrap"),
        "el-signed-bootstrap": lambda: el_interval("signed-bootstrap"),
        "cr-chi2": lambda: cressie_read.interval(sample, confidence_level=level, calibration="chi2"),
        "cr-f": lambda: cressie_read.interval(sample, confidence_level=level, calibration="f"),
        "binomial": lambda: baselines.clopper_pearson_interval(sample, confidence_level=level),
        "gaussian": lambda: baselines.gaussian_interval(sample, confidence_level=level),
    }
    out = Evaluation()
    for name in (*estimates, *intervals):
        try:
            res = compute[name]()
        except catch as exc:
            out.errors[name] = f"{type(exc).__name__}: {exc}"
            continue
        out.results[name] = res
        if name in ESTIMATES:
            out.estimates[name] = float(res) if name == "constant" else res.value
        else:
            out.intervals[name] = (res.low, res.high)
        if name.startswith("el"):
            out.paths[name] = res.method
        note = getattr(res, "note", "")
        if name.startswith("cr-") and not Status.of(res.status).optimal:
            note = res.status
        if note:
            out.notes[name] = note
    return out


# ------------------------------------------------------------------------------------------------
# EL beside the baselines, as `elcvx evaluate` reports them
# ------------------------------------------------------------------------------------------------
#: The methods of :func:`evaluate`, in the order they are reported.
METHODS = ("el", "ips", "snips", "cr", "gaussian", "binomial")
#: How the notes name them.
LABELS = {"el": "EL", "ips": "IPS", "snips": "SNIPS", "cr": "CR(-2)", "gaussian": "Gaussian",
          "binomial": "Binomial"}
# Each baseline's row: (the evaluate_all estimate, the interval), given the EL calibration.
_BASELINE_ROWS = {"ips": ("ips", None), "snips": ("snips", None), "cr": ("cr", "cr-{cal}"),
                  "gaussian": (None, "gaussian"), "binomial": (None, "binomial")}


def cr_calibration(calibration: str) -> str:
    """CR(-2)'s calibration: its closed form has no bootstrap, so chi2 stands in for it."""
    return calibration if calibration in iv.CALIBRATIONS else "chi2"


def _number(x: float | None) -> float | None:
    """A reported number: a float, or None for none (NaN, an infinity)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def evaluate(data: Sample | Log | LogScan, *, confidence_level: float = 0.95,
             calibration: str = "chi2", method: str = "auto",
             rho: float | str | None = None) -> EvaluationResult:
    """EL's estimate and interval beside IPS, SNIPS, CR(-2), Gaussian and Binomial: what
    ``elcvx evaluate`` prints, for a log or a sample in Python.

    Solves the one question a practitioner asks of a log, "what is the target policy worth, and
    how sure is that", with every estimator of the paper side by side and the notes that say
    when a number should not be trusted (a failed :meth:`~elcvx.Sample.weight_check`, an
    estimate that depends on an unobserved weight's reward, a baseline that cannot be computed).

    Parameters
    ----------
    data : Sample, elcvx.io.Log or elcvx.io.LogScan
        A sample, or a log read by :mod:`elcvx.io` (its notes are kept), in memory or scanned in
        chunks (every method's sums merge across chunks).
    confidence_level : float
    calibration : {"chi2", "f", "bootstrap", "signed-bootstrap"}
        EL's (see :func:`elcvx.interval`); CR(-2) takes chi2 where EL takes a bootstrap.
    method : {"auto", "fast", "cvxpy"}
        EL's solver path.
    rho
        The extra atom's reward in EL's estimate (see :func:`elcvx.estimate`).

    Returns
    -------
    EvaluationResult
        ``to_frame()`` has one row per method; ``result["el"]`` is EL's row.

    Examples
    --------
    >>> import elcvx
    >>> from elcvx.datasets import example_log
    >>> ev = elcvx.evaluate(example_log())
    >>> el = ev["el"]
    >>> round(el.estimate, 4), round(el.low, 4), round(el.high, 4)
    (0.6297, 0.4317, 0.7909)
    >>> [r.method for r in ev.results]
    ['el', 'ips', 'snips', 'cr', 'gaussian', 'binomial']
    """
    from .checks import weight_check as weight_check_of, weights_note
    from .sample import Sample, check_sample, notes_of

    log_notes = notes_of(data)
    source = getattr(data, "columns", {}).get("w", "w")
    sample = check_sample(data, scans=True)
    exact = getattr(sample, "sample", None)
    if exact is not None:  # a scan that compressed: its exact sample
        sample = exact
    level = iv.confidence_level(confidence_level)
    calibration = iv.option("calibration", calibration, iv.EL_CALIBRATIONS)
    method = iv.option("method", method, iv.METHODS)
    el = evaluate_all(sample, ("el",), (f"el-{calibration}",), confidence_level=level, rho=rho,
                      method=method)
    est, ci = el.results["el"], el.results[f"el-{calibration}"]
    rows = [MethodResult("el", _number(est.value), _number(ci.low), _number(ci.high))]
    notes = []
    if est.depends_on_rho:
        lo, hi = est.value_range
        notes.append(f"EL: the estimate depends on the reward rho of an unobserved extreme weight: "
                     f"{lo:.4g} to {hi:.4g} over rho in [{sample.rmin:g}, {sample.rmax:g}]; shown at "
                     f"{rho_text(est)}")
    # (On a log kept in chunks too: the baselines are mergeable sums, elcvx.baselines.log_sums.)
    rows_, notes_ = _baselines(sample, level, calibration)
    rows, notes = rows + rows_, notes + notes_
    chk = weight_check_of(sample, method)  # the MLE is cached: no new solve
    weight_note = weights_note(chk, source)
    # (A sample checked where it was built carries its note already, naming its columns.)
    checked = sample.notes if isinstance(sample, Sample) else ()
    first = [weight_note] if weight_note and weight_note not in log_notes and not checked else []
    if math.isinf(sample.wmax) and not chk.depends_on_unobserved:
        notes.append("wmax = inf (give --wmax or --pmin for tighter intervals)")
    return EvaluationResult(
        results=tuple(rows), notes=log_notes + tuple(first + notes), n=sample.n,
        wmin=sample.wmin, wmax=sample.wmax, rmin=sample.rmin, rmax=sample.rmax,
        confidence_level=level, calibration=calibration, quantile=ci.quantile, weight_check=chk,
        estimate=est, interval=ci)


def _w_largest(sample: Any) -> float:
    """The largest weight of a sample or a scanned log (which keeps its span)."""
    return float(sample.w_observed[1])


def _baselines(sample: Any, level: float,
               calibration: str) -> tuple[list[MethodResult], list[str]]:
    """The baselines' rows and notes; a baseline's failure must not hide EL's answer: its row
    is empty and a note says why."""
    rows = {m: (e, i and i.format(cal=cr_calibration(calibration)))
            for m, (e, i) in _BASELINE_ROWS.items()}
    base = evaluate_all(sample, [e for e, _ in rows.values() if e], [i for _, i in rows.values() if i],
                        confidence_level=level, catch=(ArithmeticError, InvalidInputError))
    out, notes = [], []
    for name, (e_or_none, i_or_none) in rows.items():
        e, i = e_or_none or "", i_or_none or ""  # ("": none of that kind, in no dict below)
        numbers = [base.estimates.get(e), *base.intervals.get(i, (None, None))]
        error = base.errors.get(e) or base.errors.get(i)
        if error is None and not all(x is None or math.isfinite(x) for x in numbers):
            error = "ArithmeticError: a result is not a finite number"
        note = base.notes.get(e) or base.notes.get(i, "")
        if error is not None:
            numbers = [None] * 3
            note = f"cannot be computed with weights up to {_w_largest(sample):.4g} ({error})"
        out.append(MethodResult(name, *map(_number, numbers)))
        if note:
            notes.append(f"{LABELS[name]}: {note}")
    return out, notes


def rho_text(est: Any) -> str:
    """``rho = 0.5 (midpoint)``: the extra atom's reward and the rule that chose it."""
    return f"rho = {est.rho:.4g}" + ("" if est.rho_rule == "number" else f" ({est.rho_rule})")

