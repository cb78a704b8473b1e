"""docs/learn-then-certify.md on ../shared/data/pessimism: its blocks run and print what the
page shows, the learning never sees the rows that certify, and the certificate's two promises
hold against the true values (computed in the page from the labels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")

from elcvx.datasets import fetch_command  # noqa: E402
from test_docs import _run_python, parse  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "learn-then-certify.md"
DATA = ROOT / ".." / "shared" / "data" / "pessimism" / "30_page-blocks.csv.gz"


@pytest.fixture(scope="module")
def page():
    if not DATA.is_file():
        # (the page reads that path: the command fetches the set there)
        pytest.skip(f"needs {DATA.name} in ../shared/data/pessimism (the selection study's "
                    f"datasets): {fetch_command('pessimism', '../shared/data/pessimism')}")
    import os

    namespace = {"__name__": "__docs__"}
    cwd = os.getcwd()
    os.chdir(ROOT)  # the page reads the data relative to the repository root
    try:
        for block in (b for b in parse(PAGE) if b.lang == "python"):
            _run_python(block, namespace)
    finally:
        os.chdir(cwd)
    return namespace


def test_the_page_runs_and_the_halves_are_disjoint(page):
    learn, certify = page["learn"], page["certify"]
    assert not set(learn) & set(certify) and len(learn) + len(certify) == page["n"]


def test_the_chosen_candidates_promises_hold(page):
    res, v_chosen, v_logging = page["res"], page["v_chosen"], page["v_logging"]
    assert res.chosen is not None and res.beats_baseline
    assert res.low[res.chosen] <= v_chosen
    assert res.gain[res.chosen] <= v_chosen - v_logging
    # and every candidate's, which the page does not print
    for c, low, gain in zip(page["candidates"], res.low, res.gain):
        v = page["true_value"](c.probs(page["X"][page["certify"]]), page["certify"])
        assert low <= v and gain <= v - v_logging
