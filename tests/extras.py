"""The optional stacks the tests need, and how a test says it is skipped without one.

``make test`` installs the ``test`` extra only (what the default tests need); each heavier stack
is an extra of its own with its own command (``make test-spark``, ...). A test that needs one
calls :func:`need`, which skips it with a reason naming the extra and the command, instead of
pytest's bare "could not import".
"""

from __future__ import annotations

import pytest

#: The top-level module of each optional stack -> (its extra, the command that tests it).
EXTRAS = {
    "pyspark": ("spark", "make test-spark"),
    "distributed": ("dask", "make test-dask"),
    "dask": ("dask", "make test-dask"),
    "vowpalwabbit": ("vw", "make test-vw"),
    "mkdocs": ("docs", "make test-docs"),
    "material": ("docs", "make test-docs"),
    "mkdocstrings_handlers": ("docs", "make test-docs"),
    "sklearn": ("data", "make test-all"),
    "mypy": ("typing", "make test-types"),
    "nbclient": ("notebook", "make test-notebook"),
    "nbformat": ("notebook", "make test-notebook"),
    "ipykernel": ("notebook", "make test-notebook"),
}


def skip_reason(module: str) -> str:
    """Why a test that needs ``module`` is skipped: which extra installs it, which command
    runs the test with it."""
    extra, command = EXTRAS[module.split(".")[0]]
    return (f"{module.split('.')[0]} is not installed: the '{extra}' extra (pip install -e "
            f"'.[{extra}]'), tested by `{command}`")


def need(module: str):
    """Import ``module`` of an optional stack, or skip the test with :func:`skip_reason`."""
    return pytest.importorskip(module, reason=skip_reason(module))
