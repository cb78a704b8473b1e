"""elcvx's own code passes mypy with the project's configuration (pyproject's [tool.mypy]: plain
mypy on every module, the flags of `mypy --strict` on the modules a user's script calls), run from
a folder outside the clone so that nothing but the configuration decides (`make test-types`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_elcvx_type_checks(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[typing]'; "
                        "make test-types)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / "cache"), str(ROOT / "elcvx")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    # (Notes, such as mypy's that an untyped function's annotated locals are not checked, pass.)
    last = out.stdout.strip().splitlines()[-1]
    assert out.returncode == 0 and last.startswith("Success: no issues found"), out.stdout


def test_the_strict_modules_are_checked_strictly(tmp_path):
    # The strict section is in force: an unannotated function in a module it names is an error.
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[typing]'; "
                        "make test-types)")
    pkg = tmp_path / "elcvx" / "estimators"
    pkg.mkdir(parents=True)
    (tmp_path / "elcvx" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "untyped.py").write_text("def f(x):\n    return x\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / "cache"), "-p", "elcvx.estimators.untyped"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert "Function is missing a type annotation  [no-untyped-def]" in out.stdout, out.stdout
