"""The weight check: is ``E[w] = 1`` plausible on this log?

A correct log has importance weights of mean 1; swapped or mislabelled probability columns
rarely do. :func:`weight_check` tests it with EL's own statistic (the MLE's likelihood ratio at
``beta = 0``), which is why it lives above the solvers (:mod:`elcvx.dispatch`) and not in
:mod:`elcvx.sample`: :meth:`Sample.weight_check <elcvx.Sample.weight_check>` and a scanned
log's ``weight_check`` call it.
"""

from __future__ import annotations

import math
import os
import sys
import types
import warnings

import numpy as np

from . import _validation as iv
from . import dispatch
from .calibration import quantiles
from .errors import ElcvxError, WeightWarning
from .sample import UNOBSERVED_TOL, WEIGHT_CHECK_TOL, WEIGHT_CHECK_Z, WeightCheck

# The package's folder: a warning points at the first frame outside it (the user's line).
_ELCVX = os.path.dirname(os.path.abspath(__file__)) + os.sep
# How far inside a threshold of the rule the one-pass screen's mean must be (relative): the
# screen's sum and weight_check's scaled one round differently, by about 1e-16.
_SCREEN_MARGIN = 1e-9


def weight_check(sample, method="auto") -> WeightCheck:
    """Check ``E[w] = 1`` on a sample or a log scanned in chunks: the weights' mean with its
    standard error, and whether it is plausible (see :class:`~elcvx.sample.WeightCheck` for the
    rule and why); ``sample.weight_check(method=...)`` is this function.

    Uses the EL MLE (cached per sample, so a later :func:`elcvx.estimate` costs nothing more).
    The readers of :mod:`elcvx.io` call it on every log they read, issue its message as a
    :class:`~elcvx.errors.WeightWarning` and add it to the log's notes.

    (:meth:`Sample.weight_check <elcvx.Sample.weight_check>` shows it on a log whose weights
    average 1.486.)
    """
    method = iv.option("method", method, iv.METHODS)
    mean, se = sample._weight_moments()
    mle, _ = dispatch.mle(sample, method)
    statistic = max(2.0 * float(mle.loglik), 0.0)
    pvalue = float(quantiles.pvalue("chi2", statistic, sample.n))
    if len(mle.sums) >= 2:  # the fast path's last pass (a scanned log's too): q is not read
        wmass = max(1.0 - mle.sums[1], 0.0)
    else:
        assert mle.q is not None  # (read when the sums are not there: the cvxpy path's MLE)
        with np.errstate(over="ignore", invalid="ignore"):
            cq = mle.q if sample.counts is None else sample.counts * mle.q
            wmass = max(1.0 - float(np.dot(cq, sample.w)), 0.0)
    plausible = not (statistic > WEIGHT_CHECK_Z ** 2 and abs(mean - 1.0) > WEIGHT_CHECK_TOL)
    unobserved = bool(np.isinf(sample.wmax) and wmass > UNOBSERVED_TOL)
    n = f"{sample.n:.0f}" if float(sample.n).is_integer() and sample.n < 1e16 else f"{sample.n:.6g}"
    said = f"the importance weights average {mean:.4g} (standard error {se:.2g}, N = {n})"
    messages = []
    if not plausible:
        messages.append(
            f"{said}, but E[w] = 1 in a correct log (EL's test: statistic {statistic:.4g}, "
            f"p = {pvalue:.2g}): the probability columns are probably wrong, and so is "
            "every estimate from them")
    if unobserved:
        messages.append(
            f"{said if plausible else 'and'} with wmax = inf: the EL estimate depends on "
            f"the unknown reward of an unobserved, unbounded weight, over {100 * wmass:.3g}% "
            "of the reward range (its value_range); give wmax or pmin (--wmax, --pmin)")
    return WeightCheck(mean=mean, se=se, n=sample.n, n_rows=sample.n_rows, statistic=statistic,
                       pvalue=pvalue, plausible=plausible, unobserved_wmass=wmass,
                       depends_on_unobserved=unobserved, message="; ".join(messages))


def weights_note(check, weights: str) -> str:
    """``check.message`` naming where the weights came from (``weights``: a column, or
    ``"target / logging"``); ``""`` when there is nothing to say."""
    source = weights if "/" in weights else f"column {weights!r}"
    return check.message.replace("the importance weights", f"the importance weights ({source})", 1)


def plainly_fine(sample) -> bool:
    """Whether one pass over the weights (their mean) shows that :func:`weight_check` would have
    nothing to say, without the MLE it solves; ``False`` means "run it", not "it fails".

    From the rule (:class:`~elcvx.sample.WeightCheck`): a mean within ``WEIGHT_CHECK_TOL`` of 1
    is plausible whatever the statistic. With ``wmax = inf`` the MLE's dual ``beta`` is ``>= 0``
    (the atom at infinity) and the log-likelihood's slope at 0 is ``N (mean - 1)``: a mean
    ``<= 1`` gives ``beta* = 0``, ``q = 1/N`` and an unobserved weighted mass of exactly
    ``1 - mean``; a mean above 1 gives ``beta* > 0``, no mass at infinity, and the only other
    atom, at ``wmin``, carries weighted mass ``wmin`` times its mass: none when ``wmin = 0``.
    Each threshold is kept by a relative margin of 1e-9 (the two ways of summing round
    differently); a mean that overflows is left to the check.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(sample.w.sum() if sample.counts is None else np.dot(sample.counts, sample.w))
    mean = total / sample.n
    if not (math.isfinite(mean) and abs(mean - 1.0) <= WEIGHT_CHECK_TOL * (1 - _SCREEN_MARGIN)):
        return False
    if math.isinf(sample.wmax):
        if mean <= 1.0:
            return 1.0 - mean <= UNOBSERVED_TOL * (1 - _SCREEN_MARGIN)
        return sample.wmin == 0.0
    return True


def check_weights(sample, weights: str) -> tuple:
    """The check made where a log becomes a sample (:meth:`Sample.from_probs
    <elcvx.Sample.from_probs>`, :meth:`Sample.from_dataframe <elcvx.Sample.from_dataframe>`
    and every reader of :mod:`elcvx.io`, which know where the weights came from: ``weights``,
    a column or ``"target / logging"``): its note, ``()`` when there is none.

    A note is issued once, as a :class:`~elcvx.errors.WeightWarning` pointing at the caller's
    line, and recorded in ``sample.notes`` (the results computed from the sample carry it).
    A sample :func:`plainly_fine` costs one pass; any other runs :func:`weight_check`, whose
    MLE (method ``"auto"``, the estimators' default) is cached per sample for the estimate
    that follows. An MLE that fails says nothing here: the estimate will say so.
    """
    if plainly_fine(sample):
        return ()
    try:
        check = weight_check(sample)
    except ElcvxError:
        return ()
    note = weights_note(check, weights)
    if not note:
        return ()
    frame: types.FrameType | None
    frame, level = sys._getframe(0), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_ELCVX):
        frame, level = frame.f_back, level + 1
    warnings.warn(note, WeightWarning, stacklevel=level)
    sample._record_notes((note,))
    return (note,)

