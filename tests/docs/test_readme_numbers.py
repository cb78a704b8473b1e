"""The numbers of the README's study summaries, recomputed from the committed tables they come from.

The README's "Reproduce ..." sections sum up the committed runs (`make reproduce-synthetic`,
`make reproduce-calibration`, `make reproduce-realistic`, `elcvx reproduce rho`) in prose. Each
number here is computed from the CSV the run wrote and looked for, as the README prints it, in
the README: a rerun that changes a table fails here until the prose follows.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from elcvx.experiments.realistic import AUTHORS_EL_CV, PAPER_LEARNING

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _rows(path: str) -> list:
    with open(DOCS / path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def readme() -> str:
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def _section(readme: str, title: str) -> str:
    start = readme.index(f"## {title}")
    return readme[start:readme.index(" ## ", start)]


def test_synthetic_summary(readme):
    text = _section(readme, "Reproduce the paper's synthetic experiments")
    mse = {(int(r["n"]), r["estimator"]): float(r["mse"]) for r in _rows("synthetic/mse.csv")}
    sizes = sorted({n for n, _ in mse})
    figure_1 = ("constant", "clipped-dr", "snips", "ips", "emp")
    # "EL has the lowest MSE at every N (tied with EMP from N = 10⁵)"
    assert all(mse[n, "el"] <= min(mse[n, e] for e in figure_1) * (1 + 1e-9) for n in sizes)
    assert [n for n in sizes if mse[n, "el"] == mse[n, "emp"]] == [n for n in sizes if n >= 10**5]
    assert "lowest MSE at every N (tied with EMP from N = 10⁵)" in text
    # "CR(−2) ... lowest at every N: EL's MSE is at most 1.2% above CR(−2)'s up to N = 5,000,
    # and 1.22, 1.47 and 1.37 times it at N = 10⁴, 2·10⁴ and 5·10⁴"
    ratio = {n: mse[n, "el"] / mse[n, "cr"] for n in sizes}
    assert all(mse[n, "cr"] <= min(mse[n, e] for e in figure_1 + ("el",)) for n in sizes)
    small = max(r for n, r in ratio.items() if n <= 5000)
    assert f"at most {100 * (small - 1):.1f}% above CR(−2)'s up to N = 5,000" in text
    assert (f"{ratio[10**4]:.2f}, {ratio[2 * 10**4]:.2f} and {ratio[5 * 10**4]:.2f} times it at "
            "N = 10⁴, 2·10⁴ and 5·10⁴") in text
    # "covers at least 95% up to N = 5·10⁴ — but at N ≥ 10⁵ it covers 94.4–94.8%"
    iv = {(int(r["n"]), r["method"]): r for r in _rows("synthetic/intervals.csv")}
    cov = {n: float(iv[n, "el-chi2"]["coverage"]) for n in sizes}
    assert min(c for n, c in cov.items() if n <= 5 * 10**4) >= 0.95
    large = [c for n, c in cov.items() if n >= 10**5]
    assert f"at N ≥ 10⁵ it covers {100 * min(large):.1f}–{100 * max(large):.1f}%" in text
    # "the F calibration only widens the interval at N ≤ 50, where chi2 already covers 99%"
    wider = [n for n in sizes if float(iv[n, "el-f"]["mean_width"]) > 1.01 * float(iv[n, "el-chi2"]["mean_width"])]
    assert wider == [10, 20, 50] and min(cov[n] for n in wider) >= 0.99
    assert "only widens the interval at N ≤ 50, where chi2 already covers 99%" in text
    # "bootstrap (within 2 SE of 95% at every N, 0.9492 and 0.9493 at N = 10⁵ and 5·10⁵, for
    # 2–3% more width"
    boot = {int(r["n"]): r for r in _rows("synthetic/calibration.csv") if r["method"] == "el-bootstrap"}
    assert all(float(r["coverage"]) + 2 * float(r["coverage_se"]) >= 0.95 for r in boot.values())
    assert (f"{float(boot[10**5]['coverage']):.4f} and {float(boot[5 * 10**5]['coverage']):.4f} "
            "at N = 10⁵ and 5·10⁵") in text
    extra = [100 * (float(boot[n]["width_vs_chi2"]) - 1) for n in (10**5, 5 * 10**5)]
    assert f"for {min(extra):.0f}–{max(extra):.0f}% more width" in text


def test_realistic_summary(readme):
    text = _section(readme, "Reproduce the paper's realistic-data experiments")
    t1 = _rows("realistic/table1_ope.csv")
    t2 = _rows("realistic/learning/table2_learning.csv")
    assert {r["datasets"] for r in t1} == {"26"} and {r["datasets"] for r in t2} == {"23"}
    assert "Tables 1 and 3 on 26 of the paper's 40 datasets and Table 2 on 23 of them" in text
    # "60 evaluations and 60 learning runs per dataset and strategy; Table 2 took 59 min on 2
    # CPUs": the summaries' set-up lines, and the wall times of the merged runs
    ope_md = (DOCS / "realistic" / "summary.md").read_text(encoding="utf-8")
    learning_md = (DOCS / "realistic" / "learning" / "summary.md").read_text(encoding="utf-8")
    evaluations = re.search(r"evaluations per \(dataset, strategy\): (\d+)", ope_md)[1]
    runs = re.search(r"learning runs per \(dataset, strategy\): (\d+)", learning_md)[1]
    walls = re.findall(r"wall time (\d+)m(\d+)s with (\d+) job", learning_md)
    minutes = sum(int(m) + int(s) / 60 for m, s, _ in walls)
    assert {jobs for _, _, jobs in walls} == {"2"}
    assert (f"{evaluations} evaluations and {runs} learning runs per dataset and strategy; Table 2 "
            f"took {minutes:.0f} min on 2 CPUs") in text
    # "EL against SNIPS goes from 19/118/45 ... over the 182 (dataset, strategy) pairs to 34/140/8"
    rho = _rows("rho/table1_rho.csv")

    def against_snips(estimator):
        rows = [r for r in rho if r["estimator"] == estimator and r["versus"] == "snips"]
        return ("/".join(str(sum(int(r[k]) for r in rows)) for k in ("wins", "ties", "losses")),
                sum(int(r["datasets"]) for r in rows))

    (midpoint, pairs), (own, _) = against_snips("el"), against_snips("el-self")
    assert f"from {midpoint} wins/ties/losses over the {pairs} (dataset, strategy) pairs to {own}" in text
    # "the EL interval covers 99.1% where the Gaussian one covers 88.6% ... the Binomial one is
    # about 4× wider"
    t3 = {r["method"]: r for r in _rows("realistic/table3_intervals.csv")}
    assert (f"the EL interval covers {100 * float(t3['el-chi2']['coverage']):.1f}% where the Gaussian "
            f"one covers {100 * float(t3['gaussian']['coverage']):.1f}%") in text
    assert f"the Binomial one is about {float(t3['binomial']['median_width_ratio']):.0f}× wider" in text
    # "el-cv beats IPS on 19 of 26 datasets at ε = 0.05 (the authors' code: 25 of 40)"
    (cv,) = [r for r in t1 if (r["estimator"], r["versus"], r["strategy"]) == ("el-cv", "ips", "epsilon=0.05")]
    assert (f"beats IPS on {cv['wins']} of {cv['datasets']} datasets at ε = 0.05 (the authors' code: "
            f"{AUTHORS_EL_CV['epsilon=0.05', 'ips'][0]} of 40)") in text
    # "learning with the lower bound beats IPS on 29% of the (dataset, strategy) pairs and loses
    # on 10% (the paper: 35% and 10%)"
    lb = [r for r in t2 if r["objective"] == "lower_bound"]
    ours = [sum(int(r[k]) for r in lb) / sum(int(r["datasets"]) for r in lb) for k in ("wins", "losses")]
    paper = [sum(v[0][i] for v in PAPER_LEARNING.values()) / (40 * len(PAPER_LEARNING)) for i in (0, 2)]
    assert (f"beats IPS on {100 * ours[0]:.0f}% of the (dataset, strategy) pairs and loses on "
            f"{100 * ours[1]:.0f}% (the paper: {100 * paper[0]:.0f}% and {100 * paper[1]:.0f}%)") in text
