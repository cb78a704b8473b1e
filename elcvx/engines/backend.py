"""Which implementation computes a pass's block kernels: numpy, or their fused numba twins.

The kernels of :mod:`elcvx.passes.kernels` are numpy functions of a block (some 40 numpy calls
each, holding the GIL between them, and reading each row several times). Each has a twin in
:mod:`elcvx.passes.kernels_numba` (the optional ``numba`` extra: ``pip install 'elcvx[numba]'``):
one compiled call per block that reads each row once, computes the same partial sums to
rounding, and releases the GIL for the whole block, so the threads of
:mod:`elcvx.engines.threads` run blocks at once. Everything above the kernels (the folds, the
merges, the certificates) sees the same sums either way.

``ELCVX_KERNELS`` chooses: ``auto`` (the default) takes the twins when numba is importable,
``numpy`` the numpy kernels, ``numba`` the twins (an error saying how to install numba when it
is not). This module alone reads it.

A numba that is installed but fails to import with an error other than ``ImportError`` (a
broken llvmlite, a numpy it does not support: ``AttributeError``, ``SystemError``, ...) is
treated as absent by ``auto``, with one :class:`RuntimeWarning` naming the error: the numpy
kernels compute every number, where the twins' import would otherwise fail every pass.
``numba`` then raises :class:`~elcvx.errors.MissingDependencyError` naming the error.
"""

from __future__ import annotations

import importlib
import os
import warnings

from ..errors import InvalidInputError, MissingDependencyError, _require

#: The environment variable that chooses the kernels.
ENV = "ELCVX_KERNELS"
#: Its valid values.
CHOICES = ("auto", "numpy", "numba")

class KernelChoice:
    """What each value of ``ELCVX_KERNELS`` resolves to, and the one warning of a numba that
    fails to import.

    Key: the variable's value as read (``None`` when unset); lifetime: the process, as whether
    numba imports does not change within one (the variable is read at every pass, so a value
    set later takes effect; each value's choice is resolved once, as it may import numba).
    The warning is issued once a process: :attr:`warned` holds the error it named.
    """

    def __init__(self) -> None:
        self._by_value: dict = {}
        self.warned: BaseException | None = None

    def kernels(self, value) -> str:
        """The kernels ``value`` (of ``ELCVX_KERNELS``) chooses (:func:`kernels`)."""
        chosen = self._by_value.get(value)
        if chosen is None:
            chosen = self._by_value[value] = _choose(value, self)
        return chosen


#: The process's :class:`KernelChoice` (:func:`kernels` reads it).
CHOICE = KernelChoice()


def kernels() -> str:
    """``"numba"`` or ``"numpy"``: the kernels ``ELCVX_KERNELS`` chooses (unset or empty:
    ``auto``). A value not in :data:`CHOICES` raises :class:`~elcvx.InvalidInputError` naming
    the variable and the value; ``numba`` without numba installed raises
    :class:`~elcvx.MissingDependencyError` saying how to install it."""
    return CHOICE.kernels(os.environ.get(ENV))


def _choose(value, record: KernelChoice) -> str:
    """What ``value`` chooses; a broken numba under ``auto`` warns once per ``record``."""
    choice = (value or "").strip().lower() or "auto"
    if choice not in CHOICES:
        raise InvalidInputError(f"{ENV}={value!r} is not valid; give one of "
                                f"{', '.join(CHOICES)} (the kernels a pass runs)",
                                field=ENV, value=value)
    if choice == "numba":
        try:
            _require("numba", "numba", f"{ENV}=numba")
        except MissingDependencyError:
            raise
        except Exception as exc:
            raise MissingDependencyError(
                f"{ENV}=numba needs numba, which is installed but fails to import "
                f"({_named(exc)}); reinstall numba (pip install 'elcvx[numba]') or set "
                f"{ENV}=numpy") from exc
        return "numba"
    if choice == "auto":
        try:
            importlib.import_module("numba")  # (the twins import it in any case)
            return "numba"
        except ImportError:
            pass
        except Exception as exc:
            if record.warned is None:
                record.warned = exc
                warnings.warn(f"elcvx: numba is installed but fails to import ({_named(exc)}): "
                              f"the numpy kernels are used instead (reinstall numba, or set "
                              f"{ENV}=numpy to choose them)", RuntimeWarning, stacklevel=2)
    return "numpy"


def _named(exc: BaseException) -> str:
    text = str(exc)
    return type(exc).__name__ + (f": {text[:200]}" if text else "")
