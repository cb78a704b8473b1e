"""The package's layers, as its imports (docs/architecture.md): the contracts of pyproject.toml
(``[tool.importlinter]``: one "layers" contract, each module importing only from the layers
below its own, and "forbidden" ones that say more; imports inside functions counted) and no
import circle anywhere in the package."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import grimp
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]


def test_the_layer_contracts_hold(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename="pyproject.toml", no_cache=True, no_logo=True) == 0


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    return out


#: The imports a class makes inside its own methods, at call time, of a layer above it (a
#: Sample's weight check needs the EL MLE, from_dataframe the readers), named in pyproject's
#: contracts too: they make no circle when the package is imported. Any other import does.
DEFERRED = {("elcvx.sample", "elcvx.checks"), ("elcvx.sample", "elcvx.io.frames")}


def _graph():
    graph = grimp.build_graph("elcvx")
    for importer, imported in DEFERRED:
        graph.remove_import(importer=importer, imported=imported)
    return graph


def _imports(node, package):
    """The modules the import statements directly in ``node``'s body (not in a function) name."""
    out = set()
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.ImportFrom):
            base = package.rsplit(".", stmt.level - 1)[0] if stmt.level else ""
            out.add(".".join(p for p in (base, stmt.module) if p))
        elif isinstance(stmt, ast.Import):
            out.update(a.name for a in stmt.names)
    return out


def test_the_deferred_imports_are_made_inside_functions_only():
    for importer, imported in DEFERRED:
        path = ROOT / (importer.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        inside = set().union(*(_imports(f, "elcvx") for f in functions))
        top = set().union(*(_imports(n, "elcvx") for n in tree.body
                            if not isinstance(n, (ast.FunctionDef, ast.ClassDef))))
        in_class = set().union(*(_imports(n, "elcvx") for c in tree.body if isinstance(c, ast.ClassDef)
                                 for n in c.body if not isinstance(n, ast.FunctionDef)))
        assert imported in inside and imported not in top | in_class, (importer, imported)


def test_no_import_circle():
    assert _circles(_graph()) == []


def test_the_circle_check_can_fail():
    # Two modules importing each other are found (an inside-a-function import counts).
    graph = _graph()
    graph.add_import(importer="elcvx.sample", imported="elcvx.io.frames", line_number=1,
                     line_contents="from .io.frames import sample_from_dataframe")
    assert any({"elcvx.sample", "elcvx.io.frames"} <= set(c) for c in _circles(graph))


def test_a_broken_contract_is_reported(tmp_path, monkeypatch):
    # The checker can fail: a contract the package breaks (the fast path reads the model).
    (tmp_path / "contracts.toml").write_text("""
[tool.importlinter]
root_package = "elcvx"

[[tool.importlinter.contracts]]
name = "broken on purpose"
type = "forbidden"
source_modules = ["elcvx.fast"]
forbidden_modules = ["elcvx.model"]
""")
    monkeypatch.syspath_prepend(str(ROOT))
    assert lint_imports(config_filename=str(tmp_path / "contracts.toml"), no_cache=True,
                        no_logo=True) != 0


# Upward imports the package once made (issue 37), each appended to a copy of the package.
UPWARD = {
    "the engines read the model": ("engines/rows.py", "from ..model import Moments\n"),
    "the library's command imports its studies": ("cli/args.py", "from .. import experiments\n"),
}


def _lint_copy(tmp_path, edit=None):
    """import-linter's exit status on a copy of the package (``edit``: a line appended to one of
    its files), with this repository's contracts; in a fresh interpreter, whose ``elcvx`` is the
    copy."""
    shutil.copytree(ROOT / "elcvx", tmp_path / "elcvx",
                    ignore=shutil.ignore_patterns("__pycache__", "*.csv"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if edit is not None:
        path, line = edit
        with open(tmp_path / "elcvx" / path, "a") as f:
            f.write(line)
    code = ("import sys\nfrom importlinter.cli import lint_imports\n"
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    return run.returncode, run.stdout


def test_the_copy_keeps_the_layers(tmp_path):
    code, out = _lint_copy(tmp_path)
    assert code == 0, out
    assert "The layers: each imports only from the layers below it KEPT" in out


@pytest.mark.parametrize("what", sorted(UPWARD))
def test_an_upward_import_breaks_the_layers(tmp_path, what):
    path, _ = UPWARD[what]
    code, out = _lint_copy(tmp_path, UPWARD[what])
    assert code != 0
    assert "The layers: each imports only from the layers below it BROKEN" in out
    importer = "elcvx." + path[:-3].replace("/", ".")
    assert importer in out  # the report names the module at fault


def test_the_diagram_is_the_contract():
    # docs/architecture.md draws the layers contract of pyproject.toml: its diagram's layers
    # (separated by arrows; a layer's lines start in the first column, a note after "──" or on
    # an indented line) are the contract's, in its order.
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10 (import-linter's own dependency)
        import tomli as tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = page[page.index("```text") + len("```text"):]
    block = block[:block.index("```")]
    drawn = [" ".join(line.split("──")[0].strip() for line in layer.strip("\n").splitlines()
                      if line and not line[0].isspace()).strip()
             for layer in block.split("▼")]
    assert drawn == [" ".join(layer.split()) for layer in contract["layers"]]
