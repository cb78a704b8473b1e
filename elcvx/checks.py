"""The weight check: is ``E[w] = 1`` plausible on this log?

A correct log has importance weights of mean 1; swapped or mislabelled probability columns
rarely do. :func:`weight_check` tests it with EL's own statistic (the MLE's likelihood ratio at
``beta = 0``), which is why it lives above the solvers (:mod:`elcvx.dispatch`) and not in
:mod:`elcvx.sample`: the package attaches it to :class:`~elcvx.Sample` and to scanned logs as
their ``weight_check`` method.
"""

from __future__ import annotations

import numpy as np

from . import _validation as iv
from . import dispatch
from .calibration import quantiles
from .sample import (UNOBSERVED_TOL, WEIGHT_CHECK_TOL, WEIGHT_CHECK_Z, Sample, WeightCheck)


def weight_check(sample, method="auto") -> WeightCheck:
    """Check ``E[w] = 1`` on a sample or a log scanned in chunks: the weights' mean with its
    standard error, and whether it is plausible (see :class:`~elcvx.sample.WeightCheck` for the
    rule and why); ``sample.weight_check(method=...)`` is this function.

    Uses the EL MLE (cached per sample, so a later :func:`elcvx.estimate` costs nothing more).
    The readers of :mod:`elcvx.io` call it on every log they read, issue its message as a
    :class:`~elcvx.errors.WeightWarning` and add it to the log's notes.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx import Sample
    >>> w = np.tile([0.0, 2.972], 5000)  # a wrong probability column: weights average 1.486
    >>> chk = Sample(w, np.tile([0.0, 1.0], 5000), wmax=10).weight_check()
    >>> round(chk.mean, 3), round(chk.se, 4), chk.plausible
    (1.486, 0.0149, False)
    """
    method = iv.option("method", method, iv.METHODS)
    mean, se = sample._weight_moments()
    mle, _ = dispatch.mle(sample, method)
    statistic = max(2.0 * float(mle.loglik), 0.0)
    pvalue = float(quantiles.pvalue("chi2", statistic, sample.n))
    if mle.q is None:  # a scanned log: the sum from the fast path's last pass
        wmass = max(1.0 - mle.sums[1], 0.0)
    else:
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


def _method(self, *, method: str = "auto") -> WeightCheck:
    return weight_check(self, method)


_method.__doc__ = weight_check.__doc__
_method.__name__ = _method.__qualname__ = "weight_check"
Sample.weight_check = _method
