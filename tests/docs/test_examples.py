"""Every script of examples/ runs (as a reader runs it: a subprocess from the repository root),
with small arguments where it takes any, and prints what the README shows of it; the notebook
runs and prints what it shows."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv, timeout=120) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, *map(str, argv)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv} exited with {done.returncode}:\n{done.stderr}"
    return done.stdout


def test_every_example_is_run_here():
    assert {p.name for p in (ROOT / "examples").glob("*.py")} == {
        "compare_estimators.py", "make_example_log.py", "learn_policy.py", "make_shop_log.py",
        "make_candidates_log.py"}
    assert {p.name for p in (ROOT / "examples").glob("*.ipynb")} == {"evaluate_a_log.ipynb"}


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


def test_make_candidates_log_rewrites_the_bundled_log(tmp_path):
    out = _run("examples/make_candidates_log.py", tmp_path / "log.csv")
    assert out.startswith(f"wrote {tmp_path / 'log.csv'}: 2000 rows, pmin = 0.0625")
    bundled = ROOT / "elcvx" / "data" / "example_candidates.csv"
    assert (tmp_path / "log.csv").read_bytes() == bundled.read_bytes()


def test_learn_policy_runs_small():
    # A small run (N = 200, one pass, no Vowpal Wabbit: a few seconds); the README's table is
    # the default run, checked by tests/public/test_learn_example.py.
    out = _run("examples/learn_policy.py", "--n", "200", "--passes", "1", "--no-vw")
    # 0.6555: the logging policy's value in the default environment (seed 0), as the README shows
    assert "true value of the logging policy: 0.6555" in out
    rows = re.findall(r"^(alternating|direct)\s+softmax\s+(lower_bound|estimate|ips)\s", out, re.M)
    assert len(rows) == 6
    # The Vowpal Wabbit rows left out are named, with why.
    assert ("left out: 3 rows of the full table, which need the 'vw' extra (vowpalwabbit, left "
            "out on request: --no-vw):") in out
    for objective in ("lower_bound", "estimate", "ips"):
        assert re.search(rf"^  alternating\s+vw\s+{objective}$", out, re.M)


def test_learn_policy_names_the_rows_an_absent_extra_leaves_out():
    # Without vowpalwabbit, the three rows of the README's table that need it are named with
    # the extra and the command that installs it (with it, nothing is left out).
    import importlib.util

    out = _run("examples/learn_policy.py", "--n", "200", "--passes", "1")
    if importlib.util.find_spec("vowpalwabbit") is not None:
        assert "left out" not in out
        return
    assert ("left out: 3 rows of the full table, which need the 'vw' extra (vowpalwabbit, not "
            "installed: pip install 'elcvx[vw]'):") in out
    named = re.findall(r"^  (alternating)\s+(vw)\s+(lower_bound|estimate|ips)$", out, re.M)
    assert [o for _, _, o in named] == ["lower_bound", "estimate", "ips"]
    assert not re.search(r"^alternating\s+vw\s", out, re.M)  # (not in the table itself)


def test_make_shop_log_rewrites_the_notebooks_log(tmp_path):
    out = _run("examples/make_shop_log.py", tmp_path / "shop.csv")
    assert out == f"wrote {tmp_path / 'shop.csv'}: 4000 rows\n"
    assert (tmp_path / "shop.csv").read_bytes() == (EXAMPLES / "data" / "shop_log.csv").read_bytes()


# ------------------------------------------------------------------------------------------------
# The notebook: its code cells run, top to bottom, and print what the saved notebook shows
# ------------------------------------------------------------------------------------------------
EXAMPLES = ROOT / "examples"
NOTEBOOK = EXAMPLES / "evaluate_a_log.ipynb"


def _cells():
    import json

    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def _shown_stdout(cell) -> str:
    return "".join(_text(o["text"]) for o in cell["outputs"]
                   if o["output_type"] == "stream" and o["name"] == "stdout")


def _mismatch(where, want, got):
    """None if ``got`` prints what the notebook shows (``want``, up to whitespace), else what
    differs."""
    import doctest

    if doctest.OutputChecker().check_output(want, got, doctest.NORMALIZE_WHITESPACE):
        return None
    return f"{where}: prints\n{got}\nbut the notebook shows\n{want}"


def test_a_cell_printing_another_number_is_a_mismatch():
    # The comparison the two notebook runs below make: whitespace is free, a digit is not.
    assert _mismatch("cell", "EL  0.6297\n", "EL    0.6297 \n") is None
    assert _mismatch("cell", "EL  0.6297\n", "EL  0.6298\n") is not None


def test_the_saved_notebook_was_run_top_to_bottom():
    cells = _cells()
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))
    assert not any(o["output_type"] == "error" for c in cells for o in c["outputs"])
    images = [o for c in cells for o in c["outputs"] if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the profile and the confidence sequence


def test_notebook_runs_and_prints_what_it_shows(monkeypatch):
    # Each code cell runs in one namespace, from examples/ (a notebook's folder is its working
    # directory and on its path), with matplotlib drawing off screen; what a cell prints must be
    # what the saved notebook shows under it. No Jupyter needed: `make test-notebook` runs it
    # through a real kernel too. About 3 s.
    import ast
    import contextlib
    import io

    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    monkeypatch.chdir(EXAMPLES)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    namespace = {"__name__": "__main__"}
    mismatches, printed = [], 0
    for i, cell in enumerate(_cells(), 1):
        source = _text(cell["source"])
        tree = ast.parse(source)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings_off():
            exec(compile(tree, f"{NOTEBOOK.name} cell {i}", "exec"), namespace)
        printed += bool(out.getvalue())
        mismatches.append(_mismatch(f"{NOTEBOOK.name}, code cell {i}", _shown_stdout(cell),
                                    out.getvalue()))
    plt.close("all")
    assert printed > 0 and not any(mismatches), "\n\n".join(filter(None, mismatches))


@contextlib.contextmanager
def warnings_off():
    """plt.show() on the Agg backend warns that it cannot show: in a notebook it shows."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*")
        yield


def test_notebook_runs_in_a_jupyter_kernel(tmp_path):
    # The notebook through nbclient and a real IPython kernel (`make test-notebook`), as a
    # reader runs it: every cell without error, and the printed output as saved.
    from extras import need

    nbformat, nbclient = need("nbformat"), need("nbclient")
    need("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + env_path  # (the kernel's elcvx: this one)
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    finally:
        os.environ["PYTHONPATH"] = env_path
    ran = [c for c in nb.cells if c.cell_type == "code"]
    assert len(ran) == len(_cells())
    assert not any(o.output_type == "error" for c in ran for o in c.outputs)
    mismatches = [_mismatch(f"{NOTEBOOK.name}, code cell {i} (kernel)", _shown_stdout(saved),
                            _shown_stdout(cell))
                  for i, (cell, saved) in enumerate(zip(ran, _cells()), 1)]
    assert not any(mismatches), "\n\n".join(filter(None, mismatches))
