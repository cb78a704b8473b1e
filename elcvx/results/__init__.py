"""Result types shared by the fast path and the cvxpy path.

Every result converts: ``to_dict()`` (plain Python data), ``to_frame()`` (a pandas DataFrame:
one row, or one row per entry of a table such as a profile's values) and the HTML a notebook
shows (:mod:`elcvx._convert`). Each is importable from here (``elcvx.results.EstimateResult``);
the modules hold one kind each:

* :mod:`~elcvx.results.base`: what they share (the conversions, ``ConfidenceInterval``);
* :mod:`~elcvx.results.estimate`: the EL estimate and the profile likelihood;
* :mod:`~elcvx.results.interval`: the EL interval and each of its sides, and the interval of a
  difference of two policies;
* :mod:`~elcvx.results.closed_form`: the baselines' and the Cressie-Read (lambda = -2) results;
* :mod:`~elcvx.results.sequence`: a confidence sequence's bounds;
* :mod:`~elcvx.results.evaluation`: EL beside the baselines on one log.
"""

# (The mixins too: the other result types of the package, in elcvx.selection,
# elcvx.estimators and elcvx.sequences, are built on them.)
from .base import ConfidenceInterval, _Converts as _Converts, _Pair as _Pair  # noqa: F401
from .base import _ReadOnlyArrays as _ReadOnlyArrays  # noqa: F401
from .closed_form import (BaselineEstimate, BaselineInterval, CressieReadBound,
                          CressieReadEstimate, CressieReadInterval)
from .estimate import EstimateResult, ProfileResult
from .evaluation import EvaluationResult, MethodResult
from .interval import BoundResult, DifferenceResult, IntervalResult
from .sequence import SequenceResult

__all__ = [
    "ConfidenceInterval",
    "EstimateResult",
    "BoundResult",
    "IntervalResult",
    "ProfileResult",
    "DifferenceResult",
    "BaselineEstimate",
    "BaselineInterval",
    "CressieReadEstimate",
    "CressieReadBound",
    "CressieReadInterval",
    "SequenceResult",
    "MethodResult",
    "EvaluationResult",
]
