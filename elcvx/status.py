"""A solve's status as a value: what happened (``outcome``), the qualification or the reason in
parentheses (``detail``), the fallbacks taken on the way (``fallbacks``); printed as its text.

Code tests the fields (``status.optimal``, ``status.outcome``), never the text's prefix. A
:class:`Status` is a :class:`str` whose value is that text, exactly as the package printed
statuses before they were values (``"optimal"``, ``"optimal (dual formulation, settings
#1)"``, ``"not certified (the log-likelihood's gap is 3e-08)"``): so it compares equal to the
text, and prints, formats, pickles and goes into CSV and JSON as the text does.

Examples
--------
>>> from elcvx.status import OPTIMAL, Status
>>> s = Status("optimal", "dual formulation, settings #1", fallbacks=("dual formulation",
...                                                                   "settings #1"))
>>> s, s.optimal, s.outcome, s == "optimal (dual formulation, settings #1)"
('optimal (dual formulation, settings #1)', True, 'optimal', True)
>>> Status.of("not certified (the estimate's error bound is 2e-06)").optimal
False
>>> Status.merged([OPTIMAL, Status("optimal", "dual formulation")])
'optimal, optimal (dual formulation)'
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["OPTIMAL", "Status"]


class Status(str):
    """A status: ``outcome`` (``"optimal"``, ``"not certified"``, ``"infeasible"``, ``"no
    feasible start"``, ...), ``detail`` (the text in parentheses: a qualification of an optimal
    answer, or why there is none; ``""`` for none), ``fallbacks`` (those a certified answer
    needed, e.g. ``("dual formulation",)``), and, for the statuses of several solves in one
    (:meth:`merged`), ``parts``. Its value as a string is ``outcome`` followed by `` (detail)``.
    Immutable, as a string is."""

    outcome: str
    detail: str
    fallbacks: tuple[str, ...]
    parts: tuple[Status, ...]

    def __new__(cls, outcome: str, detail: str = "", *, fallbacks: Iterable[str] = (),
                parts: Iterable[Status] = ()) -> Status:
        self = super().__new__(cls, f"{outcome} ({detail})" if detail else outcome)
        # (Written into the instance's dict: __setattr__ refuses every change.)
        self.__dict__.update(outcome=str(outcome), detail=str(detail),
                             fallbacks=tuple(fallbacks), parts=tuple(parts))
        return self

    def __setattr__(self, name, value):
        raise AttributeError(f"a Status is immutable: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"a Status is immutable: cannot delete {name!r}")

    @property
    def optimal(self) -> bool:
        """Whether the answer is certified: the outcome is ``"optimal"`` (whatever its
        qualification); for a merged status, every part's is."""
        if self.parts:
            return all(p.optimal for p in self.parts)
        return self.outcome == "optimal"

    @classmethod
    def of(cls, status) -> Status:
        """``status`` itself if it is a :class:`Status`; else the value of a status's text:
        ``outcome`` before its first `` (``, ``detail`` inside the parentheses that close it."""
        if isinstance(status, Status):
            return status
        text = str(status)
        outcome = text.split(" (", 1)[0]
        if outcome == text or not text.endswith(")"):
            return cls(text)
        return cls(outcome, text[len(outcome) + 2:-1])

    @classmethod
    def merged(cls, statuses: Iterable) -> Status:
        """The status of several solves (a profile's values): :data:`OPTIMAL` where each is
        plainly optimal, else their distinct texts in order, joined by ``", "`` (optimal
        where every part is)."""
        parts = sorted({cls.of(s) for s in statuses}, key=str)
        if all(p == OPTIMAL for p in parts):
            return OPTIMAL
        if len(parts) == 1:
            return parts[0]
        return cls(", ".join(parts), parts=parts)


#: The status of a certified answer that needed no fallback.
OPTIMAL = Status("optimal")
