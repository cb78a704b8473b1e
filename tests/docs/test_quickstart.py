"""A new user's first hour (the quickstart): what a fresh user copies and reads must work as shown.

* README blocks run as copied, on their own, from any directory (item 1; the docs convention
  itself is tested in tests/docs/test_docs.py);
* ``import elcvx`` gives every submodule as an attribute, lazily (item 2);
* no reference to a design file that is not in the repository (item 5);
* a cost log in [0, 1] read with the default range is told how to say so; counts in messages
  agree with their nouns (item 8);
* the set-up, the evaluate_sample and obp notes say what is true (item 11).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from elcvx import InvalidInputError, Sample
from elcvx._validation import plural

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SUBMODULES = ("io", "baselines", "cressie_read", "learning", "adapters", "programs", "datasets",
              "constraints")


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


# ------------------------------------------------------------------------------------------------
# 1. README blocks run as a reader copies them
# ------------------------------------------------------------------------------------------------
def _readme_python_blocks():
    text = README.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, re.M | re.S)


# The README's other blocks in one fresh interpreter, each in a namespace of its own (a name a
# block takes from another, or from a hidden comment, is still a NameError): one interpreter's
# start instead of one a block.
_EACH_ALONE = """
import contextlib, io, json, sys, traceback
results = []
for block in json.load(sys.stdin):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block, "<README block>", "exec"), {"__name__": "__main__"})
        results.append(None)
    except BaseException:
        results.append(traceback.format_exc())
print(json.dumps(results))
"""


def test_readme_use_block_runs_when_copied(tmp_path):
    # The "Use" block took its data from a hidden HTML comment: copied, it raised NameError. Each
    # README block is run alone, outside the repository: the "Use" block in a fresh interpreter
    # of its own, the others each in a fresh namespace of one fresh interpreter.
    blocks = _readme_python_blocks()
    use = [b for b in blocks if "elcvx.Sample.from_probs" in b]
    assert len(use) == 1
    out = _python(use[0], tmp_path)
    assert out.returncode == 0, f"README block fails when copied:\n{use[0]}\n{out.stderr[-2000:]}"
    assert "EL estimate 0.6297, 95% interval [0.4317, 0.7909]" in out.stdout
    others = [b for b in blocks if b is not use[0]]
    run = subprocess.run([sys.executable, "-c", _EACH_ALONE], input=json.dumps(others), cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    for block, error in zip(others, json.loads(run.stdout.splitlines()[-1]), strict=True):
        assert error is None, f"README block fails when copied:\n{block}\n{error[-2000:]}"


# ------------------------------------------------------------------------------------------------
# 2. Submodules are attributes of the package, imported on first use
# ------------------------------------------------------------------------------------------------
def test_import_elcvx_does_not_import_cvxpy(tmp_path):
    out = _python("import elcvx, sys; assert 'cvxpy' not in sys.modules, 'cvxpy imported'",
                  tmp_path)
    assert out.returncode == 0, out.stderr


def test_submodules_are_attributes(tmp_path):
    # In a fresh interpreter (here every submodule is already imported by other tests).
    code = f"""
import sys
import elcvx
for name in {SUBMODULES!r}:
    module = getattr(elcvx, name)
    assert module is sys.modules["elcvx." + name], name
    assert name in dir(elcvx), name
assert callable(elcvx.io.read_log) and callable(elcvx.adapters.EmpiricalLikelihood)
assert elcvx.MomentConstraint is elcvx.constraints.MomentConstraint
try:
    elcvx.no_such_module
except AttributeError as exc:
    assert "no_such_module" in str(exc)
else:
    raise AssertionError("no AttributeError")
"""
    out = _python(code, tmp_path)
    assert out.returncode == 0, out.stderr


def test_submodule_attribute_imports_only_that_module(tmp_path):
    # elcvx.io is pandas-free until a table is read, and needs no cvxpy.
    out = _python("import elcvx, sys; elcvx.io; elcvx.datasets; elcvx.baselines; "
                  "assert 'cvxpy' not in sys.modules", tmp_path)
    assert out.returncode == 0, out.stderr


def test_moment_constraint_is_exported():
    import elcvx

    assert "MomentConstraint" in elcvx.__all__
    assert "MomentConstraint" in dir(elcvx)
    from elcvx import MomentConstraint
    from elcvx.constraints import MomentConstraint as original

    assert MomentConstraint is original


# ------------------------------------------------------------------------------------------------
# 5. No reference to a design file that is not in the repository
# ------------------------------------------------------------------------------------------------
def test_no_reference_to_a_missing_design_file():
    missing = "DESIGN" + ".md"  # spelled in two parts so that this file does not match itself
    assert not (ROOT / missing).exists()
    files = [README, *(p for d in ("elcvx", "docs", "tests", "examples", "benchmarks")
                       for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".md"))]
    cited = [str(p.relative_to(ROOT)) for p in files if missing in p.read_text(encoding="utf-8")]
    assert cited == []


# ------------------------------------------------------------------------------------------------
# 8. A cost log in [0, 1]; counts and their nouns
# ------------------------------------------------------------------------------------------------
def test_plural():
    assert plural(1, "row") == "1 row"
    assert plural(0, "row") == "0 rows"
    assert plural(2, "such value") == "2 such values"


@pytest.mark.parametrize("bad, message", [
    (1, r"\(1 such value\)"),
    (2, r"\(2 such values\)"),
])
def test_validation_counts_agree(bad, message):
    w = np.ones(4)
    w[:bad] = np.inf
    with pytest.raises(InvalidInputError, match=r"is not finite " + message + "$"):
        Sample(w, [0.5] * 4, wmax=np.inf)
    r = np.full(4, 0.5)
    r[:bad] = 2.0
    with pytest.raises(InvalidInputError, match=r"is outside \[0\.0, 1\.0\] " + message):
        Sample(np.ones(4), r, wmax=2)


def _log(tmp_path, text, name="log.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_cost_log_in_unit_interval_suggests_the_cost_range(tmp_path):
    pytest.importorskip("pandas")
    from elcvx import io

    path = _log(tmp_path, "w,cost\n1,0.5\n2,0\n0.5,1\n")
    with pytest.raises(InvalidInputError) as info:
        io.read_log(path)
    message = str(info.value)
    assert "line 2: cost (column 'cost') = 0.5 is outside the cost range [-1.0, 0.0]" in message
    assert "(2 such values)" in message and "cmin=0, cmax=1" in message
    assert "--cmin 0 --cmax 1" in message
    assert io.read_log(path, cmin=0, cmax=1).sample.n == 3  # and the suggestion works

    # Costs of both signs: the range is not [0, 1]; no suggestion, and one value is "1 such value".
    path = _log(tmp_path, "w,cost\n1,-0.5\n2,0\n0.5,1\n")
    with pytest.raises(InvalidInputError, match=r"\(1 such value\) \(reward = -cost\)$"):
        io.read_log(path)


def test_cli_cost_log_suggests_the_options(tmp_path, capsys):
    pytest.importorskip("pandas")
    from elcvx.cli import main

    path = _log(tmp_path, "w,cost\n1,0.5\n2,0\n0.5,1\n")
    assert main(["evaluate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("elcvx: error: ") and "--cmin 0 --cmax 1" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["evaluate", str(path), "--cmin", "0", "--cmax", "1"]) == 0


def test_cli_counts_one_row(tmp_path, capsys):
    pytest.importorskip("pandas")
    from elcvx.cli import main

    path = _log(tmp_path, "w,r\n1,0.5\n")
    assert main(["evaluate", str(path), "--wmax", "2"]) == 0
    assert "(csv, 1 row)" in capsys.readouterr().out


def test_io_counts_one_missing_row(tmp_path):
    pytest.importorskip("pandas")
    from elcvx import io

    path = _log(tmp_path, "w,r\n1,0.5\n1,\n")
    with pytest.raises(InvalidInputError, match=r"has no value \(1 such row\)$"):
        io.read_log(path)


def test_dsjson_counts_one_event(tmp_path):
    from elcvx import io

    path = _log(tmp_path, '{"_label_cost": -1, "_label_probability": 0.5, "_label_Action": 1}\n',
                "events.dsjson")
    with pytest.raises(InvalidInputError, match=r"target_prob has 2 values but the log has 1 event:"):
        io.read_dsjson(path, target_prob=[0.5, 0.5])


# ------------------------------------------------------------------------------------------------
# 11. What the README and the docs say
# ------------------------------------------------------------------------------------------------
def test_readme_names_what_make_installs():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    installed = re.search(r"pip install --quiet -e '(\.\[\w+\])'", makefile).group(1)
    readme = README.read_text(encoding="utf-8")
    assert f"pip install -e '{installed}'" in readme
    assert "test extras" not in readme


def test_readme_warns_about_a_clone_named_elcvx():
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "a clone named `elcvx` is imported instead of the package" in readme


def test_evaluate_sample_returns_what_the_docs_say():
    from elcvx.cli import evaluate_sample
    from elcvx.datasets import example_log

    cli_md = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "results, notes, ci = evaluate_sample(" in cli_md
    assert "`results` list of `elcvx evaluate`" not in cli_md  # the old, wrong sentence
    results, notes, ci = evaluate_sample(example_log())
    assert [r["method"] for r in results][0] == "el" and isinstance(notes, list)
    assert ci.low == results[0]["low"]


def test_obp_torch_note_where_the_adapter_is_documented():
    import elcvx.adapters

    cli_md = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = cli_md.split("## Open Bandit Pipeline", 1)[1]
    assert "PyTorch" in section and "several GB" in section
    assert "PyTorch" in elcvx.adapters.__doc__


def test_readme_setup_states_size_and_time_and_the_extras_commands():
    # Issue 27, item 4: the first section says what `make test` installs, how big and how long
    # (measured on a fresh clone), and each heavy extra's own test command exists in the Makefile.
    readme = README.read_text(encoding="utf-8")
    setup = " ".join(readme[readme.index("## Set-up"):readme.index("## Use")].split())
    assert re.search(r"`make test` took \d+ min \d+ s in all, \d+ s to build the [\d,]+ MB `\.venv`",
                     setup), setup[:600]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    commands = re.findall(r"`make (test-[a-z]+)`", setup)
    assert {"test-spark", "test-dask", "test-vw", "test-docs", "test-all"} <= set(commands)
    for target in commands:
        assert re.search(rf"^{target}:", makefile, re.M), target
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    test_extra = re.search(r"^test = \[(.*)\]", pyproject, re.M).group(1)
    assert "pyspark" not in test_extra and "dask" not in test_extra and "mkdocs" not in test_extra
