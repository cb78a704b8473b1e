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
