"""README's "Learn a policy" section and examples/learn_policy.py: honest bounds, same numbers.

A policy fitted to maximise its lower bound on a log has no valid bound on that log (the README
once printed a "lower bound" of 0.904 for a policy worth 0.803). Both the README snippet and the
example print the in-sample bound labelled as such next to the bound on a held-out log from the
same environment; the held-out one must be below the true value (it is a 95% bound; for the
seeds shown it is), and the README must show what the example prints.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Learn a policy (lower-bound learning)"
ROW = re.compile(r"^(alternating|direct)\s+(\w+)\s+(lower_bound|estimate|ips)\s+"
                 r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+[\d.]+\s*$", re.M)


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:end if end >= 0 else None]


def _text_blocks(section: str) -> list[str]:
    return re.findall(r"^```text\n(.*?)^```", section, re.S | re.M)


def _snippet_output() -> dict:
    out = _text_blocks(_section())[0]  # the output of the section's Python block
    m = re.search(r"lower bound on the fitting log \(in-sample\): ([\d.]+) \(uniform\) -> ([\d.]+)\n"
                  r"lower bound on a held-out log:\s+([\d.]+)\n"
                  r"true value: logging ([\d.]+), learned ([\d.]+)", out)
    assert m, f"the README snippet's output is not in the expected form:\n{out}"
    keys = ("uniform", "in_sample", "held_out", "logging", "learned")
    return dict(zip(keys, m.groups()))


def test_readme_snippet_labels_the_in_sample_bound_and_shows_a_held_out_bound():
    shown = _snippet_output()
    # The held-out bound is a valid 95% lower bound: below the learned policy's true value.
    assert float(shown["held_out"]) <= float(shown["learned"])
    # The in-sample one is optimistic here; the text says so next to it.
    assert float(shown["in_sample"]) > float(shown["learned"])
    prose = _section().split("```", 4)[4]  # the text after the snippet and its output
    assert "fitted on" in prose and "held-out" in prose


def _example():
    spec = importlib.util.spec_from_file_location("learn_policy",
                                                  ROOT / "examples" / "learn_policy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(text: str) -> dict:
    """``(solver, learner, objective) -> (true, on log, held out, steps)`` as printed."""
    return {m.group(1, 2, 3): m.group(4, 5, 6, 7) for m in ROW.finditer(text)}


def test_example_row_of_the_snippet_matches_the_readme():
    # The README snippet is the example's row "direct softmax lower_bound" of its default run:
    # computed here by the example's own functions (same environment, log and held-out log).
    from elcvx.learning import LinearSoftmaxPolicy

    example = _example()
    args = example.parse_args([])
    bandit, log, held_out = example.environment(args, 0)
    policy = LinearSoftmaxPolicy(args.features, args.actions)
    true, on_log, _, _, bound = example.learn(args, bandit, log, held_out, policy, "direct",
                                              "lower_bound")
    shown = _snippet_output()
    assert (f"{true:.4f}", f"{on_log:.4f}", f"{bound:.4f}", f"{bandit.logging_value:.4f}") == (
        shown["learned"], shown["in_sample"], shown["held_out"], shown["logging"])
    assert bound <= true  # the held-out bound is below the true value
    # and the README's copy of the example's table has the same row
    assert _rows(_text_blocks(_section())[1])["direct", "softmax", "lower_bound"][:3] == (
        shown["learned"], shown["in_sample"], shown["held_out"])


@pytest.mark.slow
def test_readme_table_is_what_the_example_prints():
    # The default run, with Vowpal Wabbit when installed as for the README's table (~10 s).
    import contextlib
    import io

    have_vw = importlib.util.find_spec("vowpalwabbit") is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _example().main([] if have_vw else ["--no-vw"])
    printed = out.getvalue()
    rows = _rows(printed)
    assert len(rows) >= 6
    assert all(float(held_out) <= float(true) for true, _, held_out, _ in rows.values())
    table = _text_blocks(_section())[1]
    readme_rows = _rows(table)
    for key, values in rows.items():  # every column but the times
        assert readme_rows.get(key) == values, f"README row {key} differs from the example's"
    assert printed.splitlines()[1] in table  # the logging policy's true value
    if set(readme_rows) == set(rows):  # the same learners (VW installed)
        summary = printed[printed.index("'objective on log'"):].strip()
        assert " ".join(summary.split()) in " ".join(table.split())
