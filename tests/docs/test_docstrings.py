"""Every ``Examples`` section of a public docstring runs, and its shown output is checked."""

import doctest
import importlib
import pkgutil

import pytest

import elcvx

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(elcvx.__path__, "elcvx.")
    if not m.name.rsplit(".", 1)[-1].startswith("_")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
