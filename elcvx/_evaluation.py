"""Every estimator and interval of the package on one sample, by name.

``elcvx evaluate`` (:func:`elcvx.cli.evaluate_sample`) and the studies of
:mod:`elcvx.experiments` compute the same numbers on each sample: EL beside the paper's
baselines and Cressie-Read. :func:`evaluate_all` computes them in one place, each by the
function that defines it (:mod:`elcvx.baselines`, :mod:`elcvx.cressie_read`,
:func:`elcvx.estimate`, :func:`elcvx.interval`), and records which solver path answered each EL
computation, so that a study can count the samples the fast path did not solve.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _bootstrap, baselines, cressie_read
from . import _validation as iv
from .errors import InvalidInputError

__all__ = ["ESTIMATES", "INTERVALS", "Evaluation", "evaluate_all"]

#: The point estimates by name. ``constant``: the reward midpoint (the paper's Constant);
#: ``cr``: Cressie-Read lambda = -2 with its extra atom's reward at the midpoint.
ESTIMATES = ("el", "ips", "snips", "emp", "cr", "clipped-dr", "constant")
#: The intervals by name: EL and CR(-2) under a calibration, Clopper-Pearson, Gaussian.
INTERVALS = ("el-chi2", "el-f", "el-bootstrap", "cr-chi2", "cr-f", "binomial", "gaussian")


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

    estimates: dict = field(default_factory=dict)
    intervals: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    paths: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)

    @property
    def fell_back(self) -> tuple:
        """The EL computations that the cvxpy path answered (all of them with ``method="cvxpy"``;
        with ``"auto"``, those the fast path did not solve)."""
        return tuple(name for name, path in self.paths.items() if path in ("cvxpy", "mixed"))


def evaluate_all(sample, estimates=ESTIMATES, intervals=INTERVALS, *,
                 confidence_level: float = 0.95, rho="midpoint", method: str = "auto",
                 constraints=None, atoms=None, resamples: int = _bootstrap.DEFAULT_RESAMPLES,
                 random_state=0, catch=()) -> Evaluation:
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
    def el_interval(calibration):
        extra = dict(resamples=resamples, random_state=random_state) if calibration == "bootstrap" else {}
        return interval(sample, confidence_level=level, calibration=calibration, **model, **extra)

    compute = {
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
        if name.startswith("cr-") and res.status != "optimal":
            note = res.status
        if note:
            out.notes[name] = note
    return out
