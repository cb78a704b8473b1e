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

_CHOSEN: dict = {}  # (the environment's value -> the kernels it gives; read at every pass)
_WARNED: list = []  # (the broken import's warning, once a process)


def kernels() -> str:
    """``"numba"`` or ``"numpy"``: the kernels ``ELCVX_KERNELS`` chooses (unset or empty:
    ``auto``). A value not in :data:`CHOICES` raises :class:`~elcvx.InvalidInputError` naming
    the variable and the value; ``numba`` without numba installed raises
    :class:`~elcvx.MissingDependencyError` saying how to install it."""
    value = os.environ.get(ENV)
    chosen = _CHOSEN.get(value)
    if chosen is None:
        chosen = _CHOSEN[value] = _choose(value)
    return chosen


def _choose(value) -> str:
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
            if not _WARNED:
                _WARNED.append(exc)
                warnings.warn(f"elcvx: numba is installed but fails to import ({_named(exc)}): "
                              f"the numpy kernels are used instead (reinstall numba, or set "
                              f"{ENV}=numpy to choose them)", RuntimeWarning, stacklevel=2)
    return "numpy"


def _named(exc: BaseException) -> str:
    text = str(exc)
    return type(exc).__name__ + (f": {text[:200]}" if text else "")
