"""The moment-constraints study (elcvx.experiments.constraints_study, `elcvx reproduce constraints`)."""

import csv
import gzip
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest

from elcvx.experiments import cli
from elcvx.experiments import constraints_study as cs
from elcvx.experiments.synthetic import replicate_rng

SIZES, REPLICATES, SEED = (100, 300), 5, 7


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("constraints")
    args = ["reproduce", "constraints", "--replicates", str(REPLICATES), "--seed", str(SEED),
            "--sizes", *map(str, SIZES), "--jobs", "1", "--quiet", "--out", str(out)]
    assert cli.main(args) == 0
    return out


def test_the_study_writes_its_files(run):
    for name in ("summary.csv", "replicates.csv.gz", "constraints.png", "summary.md"):
        assert (run / name).stat().st_size > 0, name
    text = (run / "summary.md").read_text(encoding="utf-8")
    assert "elcvx reproduce constraints --replicates 5 --seed 7" in text
    assert "![constraints.png](constraints.png)" in text
    assert "None: every method returned an interval on every log." in text


def test_every_method_has_its_rows_and_no_failure(run):
    with open(run / "summary.csv", newline="", encoding="utf-8") as fh:
        summary = list(csv.DictReader(fh))
    assert sorted((int(r["n"]), r["method"]) for r in summary) == sorted(
        (n, m) for n in SIZES for m in cs.METHODS)
    assert all(int(r["runs"]) == REPLICATES and int(r["failures"]) == 0 for r in summary)
    assert all(0.0 <= float(r["coverage"]) <= 1.0 and float(r["mean_width"]) > 0 for r in summary)
    with gzip.open(run / "replicates.csv.gz", "rt", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(SIZES) * REPLICATES * len(cs.METHODS)
    for m in cs.METHODS:
        mine = [r for r in rows if r["method"] == m]
        assert len(mine) == len(SIZES) * REPLICATES
        assert all(r["error"] == "" and r["covered"] in ("0", "1") for r in mine)
        assert all(float(r["low"]) <= float(r["high"]) for r in mine)


def test_a_row_is_its_replicate_alone(run):
    # Replicate 3 at N = 300, evaluated on its own stream, gives the study's numbers.
    est, low, high, errors = cs.evaluate(cs.draw_log(300, replicate_rng(SEED, 300, 3)))
    assert errors == {}
    with gzip.open(run / "replicates.csv.gz", "rt", encoding="utf-8") as fh:
        rows = {r["method"]: r for r in csv.DictReader(fh) if r["n"] == "300" and r["replicate"] == "3"}
    for j, m in enumerate(cs.METHODS):
        assert [float(rows[m][k]) for k in ("estimate", "low", "high")] == pytest.approx(
            [est[j], low[j], high[j]], rel=1e-7)


def _integral(coefficients, lo, hi):
    """Exact integral of sum_k c_k x^k over [lo, hi]."""
    return sum(c * (hi ** (k + 1) - lo ** (k + 1)) / (k + 1) for k, c in enumerate(coefficients))


def test_the_true_values_are_exact():
    # mu(x, .) = (0.9 - 0.8x, 0.2 + 0.6x, 0.1 + 0.8x^2) as polynomial coefficients, in fractions.
    mu = [(F(9, 10), F(-8, 10)), (F(2, 10), F(6, 10)), (F(1, 10), F(0), F(8, 10))]

    def mixed(probs):  # sum_a p_a mu_a as one polynomial
        out = [F(0)] * 3
        for p, coeffs in zip(probs, mu):
            for k, c in enumerate(coeffs):
                out[k] += p * c
        return out

    a, b, c = F(4, 10), F(6, 10), F(7, 10)
    va = _integral(mu[0], 0, a) + _integral(mu[1], a, c) + _integral(mu[2], c, 1)
    q = F(1, 4)
    vb = _integral(mixed((2 * q, q, q)), 0, b) + _integral(mixed((q, q, 2 * q)), b, 1)
    assert cs.true_values() == pytest.approx((float(va), float(vb)), abs=1e-14)


def test_the_simulation_has_those_values():
    # The logs themselves: IPS over 400,000 rows is within 4 standard errors of each true value.
    log = cs.draw_log(400_000, np.random.default_rng(0))
    rows = np.arange(log.actions.size)
    for policy, truth in zip((cs.policy_a, cs.policy_b), cs.true_values()):
        wr = policy(log.contexts)[rows, log.actions] / log.propensities * log.rewards
        assert abs(wr.mean() - truth) < 4 * wr.std() / np.sqrt(wr.size)
    assert log.rewards.min() >= 0 and log.rewards.max() <= 1
    assert np.allclose(cs.logging_policy(log.contexts).sum(axis=1), 1.0)
    w = cs.policy_a(log.contexts)[rows, log.actions] / log.propensities
    assert w.max() <= cs.WMAX and w.max() == pytest.approx(cs.WMAX)


def test_the_docs_page_shows_the_committed_summary():
    # docs/constraints-study.md carries the committed run's table and checks, unedited.
    docs = Path(__file__).resolve().parents[2] / "docs"
    summary = (docs / "constraints" / "summary.md").read_text(encoding="utf-8")
    page = (docs / "constraints-study.md").read_text(encoding="utf-8")
    shown = page.split("<!-- generated from constraints/summary.md: begin -->", 1)[1].split(
        "<!-- generated from constraints/summary.md: end -->", 1)[0]
    written = summary.split("## Results\n", 1)[1].split("## Failures", 1)[0]
    assert shown.strip() == written.strip().replace("## Checks", "### Checks")
