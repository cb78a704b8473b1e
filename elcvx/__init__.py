"""elcvx: empirical likelihood for contextual bandits.

Off-policy estimates, confidence intervals and lower-bound policy learning after
Karampatziakis, Langford and Mineiro, "Empirical Likelihood for Contextual Bandits"
(NeurIPS 2020). Every program is a disciplined convex cvxpy program (``elcvx.programs``) and
also has a fast numpy path; ``method=`` chooses.
"""

import typing as _typing

from .difference import difference
from .evaluation import evaluate
from .errors import ElcvxError, InvalidInputError, SolverError
from .estimate import estimate
from .interval import interval, profile
from .results import (
    BoundResult,
    ConfidenceInterval,
    DifferenceResult,
    EstimateResult,
    EvaluationResult,
    IntervalResult,
    MethodResult,
    ProfileResult,
)
from .sample import Sample
from .selection import SelectionResult, select

__version__ = "0.1.0"

# Submodules reachable as attributes (``elcvx.io.read_log``), imported on first use (PEP 562) so
# that ``import elcvx`` stays light: cvxpy, pandas and the learning code load only when needed.
_SUBMODULES = (
    "adapters",
    "baselines",
    "cli",
    "constraints",
    "cressie_read",
    "datasets",
    "errors",
    "io",
    "learning",
    "programs",
    "results",
    "sample",
    "sequences",
    "testing",
)
# Names exported from a submodule, imported on first use like the submodules.
_LAZY = {"MomentConstraint": "constraints"}


def __getattr__(name: str) -> _typing.Any:  # (a submodule or a lazy name: any type)
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")  # also binds it on the package
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES) | set(_LAZY))

__all__ = [
    "Sample",
    "MomentConstraint",
    "estimate",
    "interval",
    "profile",
    "difference",
    "evaluate",
    "select",
    "SelectionResult",
    "ConfidenceInterval",
    "EstimateResult",
    "IntervalResult",
    "BoundResult",
    "ProfileResult",
    "DifferenceResult",
    "EvaluationResult",
    "MethodResult",
    "ElcvxError",
    "InvalidInputError",
    "SolverError",
]
