"""Issue 27, a practitioner's first hour: what a user of the package from Python meets.

* ``elcvx.sequences`` lists what it offers, not what it imports (item 9);
* the benchmarks write their data to a cache folder, not to a fixed absolute path (item 9);
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------------
# 9. Smaller things
# ------------------------------------------------------------------------------------------------
def test_sequences_lists_its_exports_only():
    import elcvx.sequences as seq

    assert set(dir(seq)) == set(seq.__all__)
    assert not {"np", "math", "iv"} & set(dir(seq))
    for name in seq.__all__:
        assert getattr(seq, name) is not None


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def test_scale_benchmark_writes_to_the_users_cache(monkeypatch, tmp_path):
    bench = _load(ROOT / "benchmarks" / "bench_scale.py")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bench.default_data_dir() == str(tmp_path / "elcvx" / "scale-data")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert bench.default_data_dir() == str(tmp_path / "home" / ".cache" / "elcvx" / "scale-data")


def test_no_benchmark_defaults_to_a_fixed_absolute_path():
    # Every string default of an argparse option in benchmarks/: none is an absolute path (a
    # machine of the project's is not the user's). Read from the source, without running it.
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                for kw in node.keywords:
                    if kw.arg == "default" and isinstance(kw.value, ast.Constant):
                        value = kw.value.value
                        assert not (isinstance(value, str) and value.startswith("/")), \
                            f"{path.name}: default {value!r}"
