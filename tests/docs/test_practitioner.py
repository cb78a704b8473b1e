"""A practitioner's first hour: what a user of the package from Python meets.

* ``elcvx.sequences`` lists what it offers, not what it imports (item 9);
* the benchmarks write their data to a cache folder, not to a fixed absolute path (item 9);
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


# ------------------------------------------------------------------------------------------------
# 7. A reward model's control variate for a stochastic target, from the (N, K) matrices
# ------------------------------------------------------------------------------------------------
def stochastic_log(n, seed):
    """3 actions, epsilon-greedy logging, a softmax target policy; the true mean reward
    ``mu(x, k)`` is a perfect reward model. Returns the sample, actions, logging probabilities,
    target probabilities and ``mu`` at every action."""
    import numpy as np

    from elcvx import Sample

    rng = np.random.default_rng(seed)
    x = rng.random(n)
    h = np.full((n, 3), 0.1)
    h[np.arange(n), (3 * x).astype(int)] += 0.7
    a = (rng.random(n)[:, None] > np.cumsum(h, axis=1)).sum(axis=1)
    mu = np.stack([0.2 + 0.6 * x, 0.5 + 0 * x, 0.8 - 0.6 * x], axis=1)
    logits = 3.0 * np.stack([x, 0.5 + 0 * x, 1 - x], axis=1)
    pi = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    r = (rng.random(n) < mu[np.arange(n), a]).astype(float)
    rows = np.arange(n)
    return Sample(pi[rows, a] / h[rows, a], r, wmax=10.0), a, h, pi, mu


def test_reward_model_takes_the_matrices_of_a_stochastic_target():
    import numpy as np

    import elcvx
    from elcvx import constraints

    s, a, _, pi, mu = stochastic_log(400, 0)
    c = constraints.reward_model(s, mu, actions=a, target_probs=pi)
    # g_n = w_n mu(x_n, a_n) - sum_k pi(k|x_n) mu(x_n, k), by a loop over the rows
    by_hand = [s.w[n] * mu[n, a[n]] - sum(pi[n, k] * mu[n, k] for k in range(3))
               for n in range(s.n_rows)]
    assert np.allclose(c.values, by_hand, rtol=0, atol=1e-15) and c.target == 0.0
    # the same constraint as the vector form given those two vectors
    rows = np.arange(s.n_rows)
    vec = constraints.reward_model(s, mu[rows, a], (pi * mu).sum(axis=1))
    assert np.array_equal(vec.values, c.values)
    assert [vec.range_at(w) for w in (0.0, 3.0, 10.0)] == [c.range_at(w) for w in (0.0, 3.0, 10.0)]
    # E[g] = 0 under the logging policy whatever r_hat is (here a wrong one): the known moment
    # the constraint states. Over 20,000 rows, the mean of g is within 4 standard errors of 0;
    # with the target's probabilities of the wrong actions (a misuse) it is not.
    big, a, _, pi, mu = stochastic_log(20_000, 1)
    wrong_model = 1.0 - mu
    g = constraints.reward_model(big, wrong_model, actions=a, target_probs=pi).values
    assert abs(g.mean()) < 4 * g.std() / np.sqrt(g.size)
    shifted = np.roll(pi, 1, axis=1)  # pi(k+1|x) read as pi(k|x)
    bad = big.w * wrong_model[np.arange(big.n_rows), a] - (shifted * wrong_model).sum(axis=1)
    assert abs(bad.mean()) > 4 * bad.std() / np.sqrt(bad.size)
    est = elcvx.estimate(s, constraints=[c])
    assert est.status.startswith("optimal")


def test_reward_model_matrices_of_a_deterministic_target_give_the_old_constraint():
    import numpy as np

    from elcvx import Sample, constraints

    rng = np.random.default_rng(4)
    n, k = 200, 3
    a = rng.integers(0, k, n)
    target = rng.integers(0, k, n)
    s = Sample((a == target) * 3.0, rng.random(n), wmax=3.0)  # uniform logging, h = 1/3
    r_hat = rng.random((n, k))
    new = constraints.reward_model(s, r_hat, actions=a, target_probs=np.eye(k)[target],
                                   deterministic=True)
    old = constraints.reward_model(s, r_hat[np.arange(n), a], r_hat[np.arange(n), target],
                                   deterministic=True)
    assert np.array_equal(new.values, old.values)
    assert new.range_at(0.0) == old.range_at(0.0) == (-1.0, 0.0)


def test_reward_model_matrix_errors():
    import numpy as np
    import pytest

    from elcvx import InvalidInputError, constraints

    s, a, _, pi, mu = stochastic_log(50, 1)
    cases = [
        (dict(actions=a), "needs actions .* and target_probs"),
        (dict(actions=a, target_probs=pi[:, :2]), r"target_probs has shape \(50, 2\)"),
        (dict(actions=a, target_probs=pi * 0.9), r"target_probs\[0\] sums to 0\.9, not 1"),
        (dict(actions=(a + 1) % 3, target_probs=np.eye(3)[a]), "row 0: target_probs gives the "
         "logged action"),
        (dict(actions=a, target_probs=pi, expected=mu[:, 0]), "with an \\(N, K\\) matrix"),
    ]
    for kwargs, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            constraints.reward_model(s, mu, **kwargs)
    with pytest.raises(InvalidInputError, match="go with an"):
        constraints.reward_model(s, mu[:, 0], mu[:, 0], actions=a)
    with pytest.raises(InvalidInputError, match="expected is missing"):
        constraints.reward_model(s, mu[:, 0])


# ------------------------------------------------------------------------------------------------
# 5. Results for notebooks: conversions, scipy's confidence_interval, typing, logs as input
# ------------------------------------------------------------------------------------------------
def _sample():
    from elcvx.datasets import example_log

    return example_log()


def test_results_to_dict_are_plain_data():
    import json

    import numpy as np

    import elcvx

    s = _sample()
    est, ci = elcvx.estimate(s), elcvx.interval(s)
    prof = elcvx.profile(s, [0.3, 0.5, 0.7])
    for result in (est, ci, prof, elcvx.evaluate(s), elcvx.difference(s, s)):
        d = result.to_dict()
        assert json.loads(json.dumps(d)) == d  # plain data: it goes to JSON and back unchanged
    d = est.to_dict()
    assert d["value"] == est.value and d["n"] == 300 and d["rho_rule"] == est.rho_rule
    assert d["value_range"] == {"low": est.value_range.low, "high": est.value_range.high}
    assert "q" not in d and "_inputs" not in d  # per-row arrays and private inputs are not reported
    d = ci.to_dict()
    assert (d["low"], d["high"]) == (ci.low, ci.high) and d["lower"]["value"] == ci.low
    assert prof.to_dict()["statistic"] == prof.statistic.tolist()
    assert np.isfinite(prof.statistic).all()


def test_results_to_frame():
    import numpy as np
    import pytest

    import elcvx

    pytest.importorskip("pandas")
    s = _sample()
    v = np.linspace(0.3, 0.8, 6)
    prof = elcvx.profile(s, v)
    frame = prof.to_frame()  # the profile as columns, one row per value
    assert list(frame.columns) == ["v", "statistic", "pvalue", "beta", "tau"] and len(frame) == 6
    for c in frame.columns:
        assert np.array_equal(frame[c].to_numpy(), getattr(prof, c), equal_nan=True)
    assert frame.attrs == {"calibration": "chi2", "n": 300, "method": prof.method}
    ev = elcvx.evaluate(s)
    frame = ev.to_frame()  # one row per method, as `elcvx evaluate` prints them
    assert frame["method"].tolist() == ["el", "ips", "snips", "cr", "gaussian", "binomial"]
    el = frame.set_index("method").loc["el"]
    low, high = elcvx.interval(s)
    assert (el["estimate"], el["low"], el["high"]) == (elcvx.estimate(s).value, low, high)
    assert np.isnan(frame.set_index("method").loc["ips", "low"])  # IPS has no interval
    one = elcvx.estimate(s).to_frame()
    assert len(one) == 1 and one.loc[0, "value"] == elcvx.estimate(s).value
    assert {"value_range_low", "value_range_high", "rho", "beta"} <= set(one.columns)


def test_html_and_a_clear_error_without_pandas(tmp_path):
    import subprocess

    # In a fresh interpreter where pandas cannot be imported: the HTML a notebook shows needs
    # no pandas, and to_frame() says which extra to install.
    code = """
import sys
sys.modules["pandas"] = None
import elcvx
from elcvx.datasets import example_log
from elcvx.errors import MissingDependencyError
ev = elcvx.evaluate(example_log())
html = ev._repr_html_()
assert "<table>" in html and "0.629737" in html and "binomial" in html, html
assert "0.629737" in elcvx.estimate(example_log())._repr_html_()
try:
    ev.to_frame()
except MissingDependencyError as exc:
    print(exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("to_frame() needs pandas, which is not installed: "
                                  "pip install 'elcvx[io]'")


def test_html_shows_the_notes_and_escapes():
    import elcvx

    s = elcvx.Sample([0.0, 4.0, 0.0, 0.5], [0.0, 1.0, 0.5, 1.0])  # wmax = inf: notes
    html = elcvx.evaluate(s)._repr_html_()
    assert "<li>wmax = inf (give --wmax or --pmin for tighter intervals)</li>" in html or \
        "with wmax = inf" in html
    assert "<li>" in html and "<script" not in html
    from elcvx._convert import html_table

    assert "&lt;b&gt;" in html_table("t", {"x": "<b>"})


def test_estimate_confidence_interval_is_the_interval():
    import numpy as np

    import elcvx
    from elcvx import constraints

    s = _sample()
    for level in (0.9, 0.95, 0.99):
        got = elcvx.estimate(s).confidence_interval(level)
        want = elcvx.interval(s, confidence_level=level)
        assert (got.low, got.high, got.confidence_level) == (want.low, want.high, level)
    # with the estimate's constraints and method
    c = constraints.MomentConstraint(s.w * 0.5 - 0.5, 0.0, atom_range=(-0.5, 7.5))
    got = elcvx.estimate(s, constraints=[c], method="fast").confidence_interval(0.9)
    want = elcvx.interval(s, constraints=[c], method="fast", confidence_level=0.9)
    assert (got.low, got.high) == (want.low, want.high)
    f = elcvx.estimate(s).confidence_interval(calibration="f")
    assert f.calibration == "f" and np.isclose(f.quantile, elcvx.interval(s, calibration="f").quantile)


def test_sample_n_is_an_int_without_counts():
    from elcvx import Sample

    s = Sample([0.0, 2.0, 2.0], [1.0, 0.0, 0.5], wmax=4)
    assert type(s.n) is int and s.n == 3
    c = s.compress()
    assert type(c.n) is float and c.n == 3.0
    assert type(Sample([1.0, 1.0], [0.0, 1.0], counts=[0.5, 2.0], wmax=4).n) is float
    import elcvx

    assert type(elcvx.estimate(s).n) is int  # and the results report it as it is


def test_every_function_takes_a_log_from_read_log():
    import pytest

    pytest.importorskip("pandas")
    import elcvx
    from elcvx import io
    from elcvx.datasets import EXAMPLE_PMIN, example_log_path

    log = io.read_log(example_log_path(), pmin=EXAMPLE_PMIN)
    s = log.sample
    assert elcvx.estimate(log).value == elcvx.estimate(s).value
    assert tuple(elcvx.interval(log)) == tuple(elcvx.interval(s))
    assert elcvx.profile(log, [0.5]).statistic.tolist() == elcvx.profile(s, [0.5]).statistic.tolist()
    assert elcvx.difference(log, log).estimate == 0.0
    assert elcvx.evaluate(log).results == elcvx.evaluate(s).results
    with pytest.raises(elcvx.InvalidInputError, match="or a log read by elcvx.io, got str"):
        elcvx.estimate("log.csv")


def test_from_dataframe_names_its_keywords():
    import inspect

    import pytest

    from elcvx import Sample, io

    # Sample's method is the reader's function, with the same keywords.
    params = inspect.signature(Sample.from_dataframe).parameters
    assert list(params) == list(inspect.signature(io.sample_from_dataframe).parameters) == ["df", "spec", "weight", "target_prob", "logging_prob", "reward",
                            "cost", "count", "wmin", "wmax", "pmin", "rmin", "rmax", "cmin",
                            "cmax", "decimal"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(params.values())[1:])
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"p_target": [1.0, 0.0], "p_log": [0.5, 0.25], "click": [1, 0]})
    s = Sample.from_dataframe(df, target_prob="p_target", logging_prob="p_log", reward="click",
                              pmin=0.25)
    assert s.w.tolist() == [2.0, 0.0] and s.wmax == 4.0 and s.r.tolist() == [1.0, 0.0]


# The public API whose every parameter and return value is annotated (py.typed promises it).
TYPED = {
    "elcvx": ["estimate", "interval", "profile", "difference", "evaluate"],
    "elcvx.io": ["read_log", "read_dsjson", "read_table", "sample_from_dataframe", "detect_format"],
    "elcvx.constraints": ["reward_model"],
}
TYPED_METHODS = ["Sample.__init__", "Sample.from_probs", "Sample.from_dataframe",  # (io's)
                 "Sample.with_rewards", "Sample.compress", "Sample.weight_check",
                 "EstimateResult.confidence_interval", "EstimateResult.to_dict",
                 "EstimateResult.to_frame"]


def _annotation_namespace(module):
    """The module's names plus those its ``if TYPE_CHECKING:`` block imports."""
    import collections.abc
    import os

    import numpy.typing

    import elcvx
    from elcvx.constraints import MomentConstraint
    from elcvx.io import Log, LogScan

    return {**vars(module), "ArrayLike": numpy.typing.ArrayLike, "Sequence": collections.abc.Sequence,
            "Callable": collections.abc.Callable, "os": os, "Log": Log, "LogScan": LogScan,
            "MomentConstraint": MomentConstraint, "Sample": elcvx.Sample,
            "IntervalResult": elcvx.IntervalResult,
            "pandas": __import__("pandas") if importlib.util.find_spec("pandas") else None}


def test_public_api_is_annotated():
    import importlib
    import inspect
    import typing

    import elcvx

    targets = [(getattr(importlib.import_module(m), n), m) for m, names in TYPED.items()
               for n in names]
    for qual in TYPED_METHODS:
        cls, attr = qual.split(".")
        targets.append((getattr(getattr(elcvx, cls), attr), "elcvx"))
    assert (ROOT / "elcvx" / "py.typed").exists()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for fn, _ in targets:
        fn = getattr(fn, "__func__", fn)
        sig = inspect.signature(fn)
        missing = [p for p in sig.parameters if p not in ("self", "cls")
                   and sig.parameters[p].annotation is inspect.Parameter.empty]
        assert not missing, f"{fn.__qualname__}: {missing} not annotated"
        assert sig.return_annotation is not inspect.Signature.empty or fn.__name__ == "__init__", \
            fn.__qualname__
        # and every annotation names something that exists
        typing.get_type_hints(fn, globalns=_annotation_namespace(sys.modules[fn.__module__]))


def test_a_users_script_type_checks(tmp_path):
    # mypy (the `typing` extra: `make test-types`) reads elcvx's hints because of py.typed, and
    # catches a wrong argument type in a user's script. It runs as a user would: from a folder
    # outside the clone, with no PYTHONPATH, against elcvx as installed (`pip install -e .` writes a
    # plain path entry, pyproject's package-dir, which type checkers follow; an import hook they
    # cannot).
    import os
    import subprocess

    import pytest

    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[typing]'; "
                        "make test-types)")
    script = tmp_path / "user.py"
    script.write_text("import elcvx\n"
                      "s = elcvx.Sample([0.0, 2.0], [1.0, 0.0], wmax=4)\n"
                      "low, high = elcvx.estimate(s).confidence_interval(0.9)\n"
                      "x: float = elcvx.interval(s).low\n"
                      "elcvx.estimate(s, method=3)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    out = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
                          str(script)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    lines = [ln for ln in out.stdout.splitlines() if ": error:" in ln]
    hint = ("\nelcvx is not installed, or installed through an import hook: `make test-types`"
            if 'module named "elcvx"' in out.stdout else "")
    assert len(lines) == 1 and 'Argument "method" to "estimate"' in lines[0], out.stdout + hint


# ------------------------------------------------------------------------------------------------
# 8. Long work shows progress on a terminal: the bootstrap's resamples, the cvxpy path's solves
# ------------------------------------------------------------------------------------------------
def test_bootstrap_draws_its_progress(capsys, monkeypatch):
    import numpy as np

    from elcvx.calibration import bootstrap
    from elcvx.engines import progress

    s = _sample()
    monkeypatch.setattr(progress, "SLOW_SECONDS", 0.0)  # as if the resamples took long
    t, _, _ = bootstrap.statistics(s, 999, np.random.default_rng(0), progress=True)
    err = capsys.readouterr().err
    assert "\rbootstrap calibration [" in err and "100% 999/999 resamples" in err
    assert err.endswith("\r\033[K")  # the bar is erased: the terminal is left as it was
    # Not on a terminal (here stderr is captured), nothing; and the statistics are the same.
    t2, _, _ = bootstrap.statistics(s, 999, np.random.default_rng(0))
    assert capsys.readouterr().err == "" and np.array_equal(t, t2)


def test_bootstrap_is_silent_while_short(capsys):
    import numpy as np


    # progress=True, but the 999 resamples of 300 rows end long before SLOW_SECONDS (3 s).
    from elcvx.calibration import bootstrap

    bootstrap.statistics(_sample(), 999, np.random.default_rng(0), progress=True)
    assert capsys.readouterr().err == ""


class _Terminal:
    """A stream that says it is a terminal and signals its first write."""

    def __init__(self):
        import threading

        self.text, self.written = "", threading.Event()

    def isatty(self):
        return True

    def write(self, text):
        self.text += text
        self.written.set()

    def flush(self):
        pass


def test_stage_draws_while_the_work_runs_and_erases_itself():
    from elcvx.engines.progress import stage

    term = _Terminal()
    with stage("elcvx: cvxpy path: the MLE", stream=term, delay=0.0):
        assert term.written.wait(timeout=60)  # the line appears while the block runs
        with stage("inner", stream=term, delay=0.0):  # a stage inside another draws nothing
            pass
    assert term.text.startswith("\relcvx: cvxpy path: the MLE ... ") and "inner" not in term.text
    assert term.text.endswith("\r\033[K")
    quiet = _Terminal()
    with stage("short", stream=quiet):  # ends before SLOW_SECONDS: nothing drawn
        pass
    assert quiet.text == ""
    off = _Terminal()
    with stage("not a terminal", stream=off, enabled=False, delay=0.0):
        pass
    assert off.text == ""


def test_cvxpy_path_solves_are_staged(monkeypatch):
    import contextlib

    import elcvx
    from elcvx.engines import progress

    labels = []

    @contextlib.contextmanager
    def record(label, **kwargs):
        labels.append(label)
        yield

    monkeypatch.setattr(progress, "stage", record)
    s = elcvx.Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    elcvx.interval(s, method="cvxpy")
    elcvx.profile(s, [0.3, 0.5], method="cvxpy")
    assert labels == ["elcvx: cvxpy path: the MLE", "elcvx: cvxpy path: the lower bound",
                      "elcvx: cvxpy path: the upper bound",
                      "elcvx: cvxpy path: the profile at 2 values"]
