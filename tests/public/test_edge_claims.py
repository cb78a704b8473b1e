"""The last wrong claims and crashes the fuzzing found (issue 36, item 4), each against a reference
written here from the definitions, never against the package's own solvers.

* a broken numba (installed, but its import raises something other than ``ImportError``) made
  every estimate fail: the numpy kernels are used instead, with one warning.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------------
# A numba whose import raises
# ------------------------------------------------------------------------------------------------
_BROKEN_NUMBA = """
import os, warnings
os.environ.pop("ELCVX_KERNELS", None)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")  # (every warning issued, not one a place)
    import elcvx
    from elcvx.engines import backend

    def numbers():
        s = elcvx.Sample([0.5, 2.0, 1.0, 0.0, 3.0, 1.5], [1.0, 0.0, 0.5, 1.0, 0.25, 0.75], wmax=4.0,
                         counts=[1, 2, 1, 3, 1, 1])
        g = elcvx.MomentConstraint([0.4, 1.0, 0.2, 0.0, 2.5, 0.3], 0.6, atom_range=(0.0, 4.0))
        e, i = elcvx.estimate(s, method="fast"), elcvx.interval(s, method="fast")
        c = elcvx.interval(s, constraints=[g], method="fast")
        assert e.status == i.status == c.status == "optimal", (e.status, i.status, c.status)
        return [e.value, i.low, i.high, c.low, c.high]

    got = [numbers(), numbers()]
    assert backend.kernels() == "numpy", backend.kernels()
told = [str(w.message) for w in caught if "numba" in str(w.message)]
assert len(told) == 1, told
assert told[0].startswith("elcvx: numba is installed but fails to import (%(error)s: "), told
assert "the numpy kernels are used instead" in told[0], told
os.environ["ELCVX_KERNELS"] = "numpy"
assert got == [numbers(), numbers()], got  # the numpy kernels' numbers, to the last bit
os.environ["ELCVX_KERNELS"] = "numba"
try:
    backend.kernels()
except elcvx.errors.MissingDependencyError as exc:
    assert "ELCVX_KERNELS=numba needs numba, which is installed but fails to import " \\
        "(%(error)s: " in str(exc), str(exc)
else:
    raise AssertionError("ELCVX_KERNELS=numba took a numba that does not import")
print("ok")
"""


@pytest.mark.parametrize("error", ["AttributeError", "SystemError", "OSError"])
def test_a_numba_that_fails_to_import_falls_back_to_numpy(tmp_path, error):
    """A ``numba`` package whose import raises ``error`` (as a broken llvmlite or an unsupported
    numpy does) first on the path of a fresh interpreter: estimates and intervals (with a moment
    constraint too) are those of ``ELCVX_KERNELS=numpy`` to the last bit, one warning names the
    error, and ``ELCVX_KERNELS=numba`` raises ``MissingDependencyError`` naming it. (Before the
    fix, the first estimate raised the import's ``error``.)"""
    fake = tmp_path / "numba"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        f"raise {error}('injected by the test: numba cannot be imported here')\n")
    out = subprocess.run([sys.executable, "-c", _BROKEN_NUMBA % {"error": error}], cwd=ROOT,
                         env={"PYTHONPATH": str(tmp_path), "ELCVX_NUM_THREADS": "1",
                              "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
