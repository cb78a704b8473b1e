"""elcvx: empirical likelihood for contextual bandits.

Off-policy estimates, confidence intervals and lower-bound policy learning after
Karampatziakis, Langford and Mineiro, "Empirical Likelihood for Contextual Bandits"
(NeurIPS 2020). Every program is a disciplined convex cvxpy program (``elcvx.programs``) and
also has a fast numpy path; ``method=`` chooses.
"""

from .errors import ElcvxError, InvalidInputError, SolverError
from .estimate import estimate
from .interval import interval, profile
from .results import (
    BoundResult,
    ConfidenceInterval,
    EstimateResult,
    IntervalResult,
    ProfileResult,
)
from .sample import Sample

__version__ = "0.1.0"

__all__ = [
    "Sample",
    "estimate",
    "interval",
    "profile",
    "ConfidenceInterval",
    "EstimateResult",
    "IntervalResult",
    "BoundResult",
    "ProfileResult",
    "ElcvxError",
    "InvalidInputError",
    "SolverError",
]
