"""Every script of examples/ runs (as a reader runs it: a subprocess from the repository root),
with small arguments where it takes any, and prints what the README shows of it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*argv, timeout=120) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, *map(str, argv)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv} exited with {done.returncode}:\n{done.stderr}"
    return done.stdout


def test_every_example_is_run_here():
    assert {p.name for p in (ROOT / "examples").glob("*.py")} == {
        "compare_estimators.py", "make_example_log.py", "learn_policy.py"}


def test_compare_estimators_prints_the_readme_table():
    # The README's table under "Baselines and Cressie-Read" is this script's output, pasted:
    # every row must be what it prints now.
    out = _run("examples/compare_estimators.py")
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert rows[0] == "| method | estimate | 95% interval | width |" and len(rows) == 10
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert out.splitlines()[0] in readme  # "Example log: N = 300, wmax = 16; 95% intervals"
    assert "\n".join(rows) in readme


def test_make_example_log_rewrites_the_bundled_log(tmp_path):
    out = _run("examples/make_example_log.py", tmp_path / "log.csv")
    assert out.startswith(f"wrote {tmp_path / 'log.csv'}: 300 rows, pmin = 0.0625")
    bundled = ROOT / "elcvx" / "data" / "example_log.csv"
    assert (tmp_path / "log.csv").read_bytes() == bundled.read_bytes()


def test_learn_policy_runs_small():
    # A small run (N = 200, one pass, no Vowpal Wabbit: a few seconds); the README's table is
    # the default run, checked by tests/test_learn_example.py.
    out = _run("examples/learn_policy.py", "--n", "200", "--passes", "1", "--no-vw")
    # 0.6555: the logging policy's value in the default environment (seed 0), as the README shows
    assert "true value of the logging policy: 0.6555" in out
    rows = re.findall(r"^(alternating|direct)\s+softmax\s+(lower_bound|estimate|ips)\s", out, re.M)
    assert len(rows) == 6
