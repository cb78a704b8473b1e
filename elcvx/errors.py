"""Exceptions raised by elcvx.

Every error the package raises on purpose is an :class:`ElcvxError`. Bad input is an
:class:`InvalidInputError`, which is also a :class:`ValueError`, so ``except ValueError`` keeps
working in code written against numpy and scipy.
"""


class ElcvxError(Exception):
    """Base class of every error raised by elcvx."""


class InvalidInputError(ElcvxError, ValueError):
    """Input that cannot describe a valid problem; the message names the field and value."""


class SolverError(ElcvxError, RuntimeError):
    """A solver did not reach an optimal solution, even after the documented fallbacks.

    Attributes
    ----------
    solver : str
        The solver (or fallback chain) that failed.
    status : str
        The last status it reported.
    """

    def __init__(self, message, *, solver="", status=""):
        super().__init__(message)
        self.solver = solver
        self.status = status
