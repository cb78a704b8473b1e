"""The bounds of an anytime-valid confidence sequence after each example
(:mod:`elcvx.sequences`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import ConfidenceInterval, _ReadOnlyArrays


@dataclass(frozen=True, eq=False)
class SequenceResult(_ReadOnlyArrays):
    """The bounds of a confidence sequence after each example (:mod:`elcvx.sequences`).

    With probability at least ``confidence_level``, ``low[i] <= V(pi) <= high[i]`` for every
    ``i`` at once, however long the log grows and whenever one looks.

    Attributes
    ----------
    t : ndarray of int
        The number of examples seen at each row (1-based; a chunk's rows continue the log).
    low, high : ndarray
        The bounds after each example, on the user's reward scale (read-only).
    confidence_level : float
    method : str
        ``"betting"`` or ``"ddrm"``.
    intersect : bool
        Whether the bounds are the running intersection of the sequence's sets (the running
        maximum of ``low`` and minimum of ``high``; as valid, never wider).
    rmin, rmax : float
        The reward range the bounds were computed on.
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ("t", "low", "high")

    t: np.ndarray
    low: np.ndarray
    high: np.ndarray
    confidence_level: float
    method: str
    intersect: bool
    rmin: float
    rmax: float

    @property
    def interval(self) -> ConfidenceInterval:
        """The bounds after the last example: ``(low[-1], high[-1])``."""
        if not self.t.size:
            return ConfidenceInterval(self.rmin, self.rmax)
        return ConfidenceInterval(float(self.low[-1]), float(self.high[-1]))

    def __len__(self) -> int:
        return int(self.t.size)
