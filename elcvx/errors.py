"""Exceptions raised by elcvx, and the import of optional dependencies that names their extra.

Every error the package raises on purpose is an :class:`ElcvxError`. Bad input is an
:class:`InvalidInputError`, which is also a :class:`ValueError`, so ``except ValueError`` keeps
working in code written against numpy and scipy.
"""

import importlib
from types import ModuleType
from typing import Any


class ElcvxError(Exception):
    """Base class of every error raised by elcvx."""


class InvalidInputError(ElcvxError, ValueError):
    """Input that cannot describe a valid problem; the message names the field and value.

    The same facts are attributes, for code that reports them in its own terms (the log readers
    of :mod:`elcvx.io` turn an entry of ``w`` into a line of the file). Each is ``None`` when the
    error does not concern one.

    Attributes
    ----------
    field : str or None
        The offending argument, e.g. ``"w"``, ``"counts"``, ``"wmax"``.
    index : int or None
        The position of the first offending entry of an array argument.
    value : object or None
        The offending value (that entry, for an array).
    reason : str or None
        What is wrong with that entry: the message's text after ``field[index]=value``, e.g.
        ``"is not finite (1 such value)"``.
    """

    def __init__(self, message: str, *, field: str | None = None,
                 index: int | tuple[int, ...] | None = None,
                 value: Any = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.index = index
        self.value = value
        self.reason = reason


class InfeasibleConstraintsError(InvalidInputError):
    """Moment constraints that no distribution keeping every logged row can meet: the targets
    contradict the log (or each other). ``field`` is ``"constraints"``; ``index`` the constraint
    at fault where one alone is (its target outside the range the others and the rows leave),
    ``value`` that target, ``reason`` the range."""


class SolverError(ElcvxError, RuntimeError):
    """A solver did not reach an optimal solution, even after the documented fallbacks.

    Attributes
    ----------
    solver : str
        The solver (or fallback chain) that failed.
    status : str
        The last status it reported.
    """

    def __init__(self, message: str, *, solver: str = "", status: str = "") -> None:
        super().__init__(message)
        self.solver = solver
        self.status = status


class WeightWarning(UserWarning):
    """A log's importance weights need a look before its estimates are trusted.

    Issued once, when a log (a file or a DataFrame) is read into a :class:`~elcvx.Sample` by
    :mod:`elcvx.io`, in two cases, both described by :meth:`~elcvx.Sample.weight_check`:

    * the weights' mean is implausibly far from 1 (``E[w] = 1`` holds for every correct log):
      usually a wrong probability column, which gives confident wrong answers;
    * ``wmax`` is infinite and the EL estimate depends on the reward of an unobserved, unbounded
      weight by more than 1e-3 of the reward range (give ``wmax`` or ``pmin``).

    The command line prints the same text as a ``note:`` line instead.
    """


class MissingDependencyError(ElcvxError, ImportError):
    """An optional dependency (an extra of elcvx) is not installed; the message names the extra."""


def _require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module``, which ``what`` needs, or raise :class:`MissingDependencyError` naming the
    extra of elcvx that installs it (``pip install 'elcvx[extra]'``)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(
            f"{what} needs {module.split('.')[0]}, which is not installed: pip install 'elcvx[{extra}]'"
        ) from None
