"""``elcvx reproduce rho``: the two studies' samples, EL under each rule for the extra atom."""

from pathlib import Path

import numpy as np
import pytest

from extras import need

import elcvx
from elcvx.experiments import realistic as R
from elcvx.experiments import rho_study as RS
from elcvx.experiments import synthetic as S
from elcvx.experiments.cli import main as reproduce_main
from elcvx.experiments.realistic.tasks import _run_ope
from elcvx.experiments.synthetic.methods import _EST
from elcvx.experiments.synthetic.study import _run_chunk

ROOT = Path(__file__).resolve().parents[2]
DATA = R.find_data_dir(ROOT)
needs_data = pytest.mark.skipif(DATA is None, reason=R.missing_data_reason(ROOT))


def test_synthetic_columns_are_the_synthetic_study_s_numbers():
    # The same random streams: the midpoint column is the synthetic study's EL, the SNIPS and
    # CR(-2) columns its SNIPS and CR(-2) (S._run_chunk, the study's own code).
    for n in (10, 1000):
        _, _, truth, est, wmass, fallbacks, _ = RS._synthetic_chunk((S.DEFAULT_SEED, n, 0, 6))
        _, _, truth_s, est_s, *_ = _run_chunk((S.DEFAULT_SEED, n, 0, 6, 0.95))
        np.testing.assert_array_equal(truth, truth_s)
        for col, ref in (("el", "el"), ("snips", "snips"), ("cr-2", "cr")):
            np.testing.assert_array_equal(est[:, RS.SYN_COLUMNS.index(col)], est_s[:, _EST.index(ref)])
        # Where the atom has no mass, every rule gives the same number.
        still = wmass <= 1e-9
        for col in ("el-snips", "el-self"):
            np.testing.assert_allclose(est[still, RS.SYN_COLUMNS.index(col)], est[still, 0], atol=1e-12)
        assert fallbacks == 0


def test_self_consistent_column_is_a_fixed_point():
    _, _, _, est, wmass, _, _ = RS._synthetic_chunk((S.DEFAULT_SEED, 50, 0, 8))
    rng = S.replicate_rng(S.DEFAULT_SEED, 50, 0)
    sample = S.draw_environment(rng).sample(50, rng)
    v = est[0, RS.SYN_COLUMNS.index("el-self")]
    assert elcvx.estimate(sample, rho=v).value == pytest.approx(v, abs=1e-12)  # V(v) = v


def _run(se_el, se_snips_rule, se_others):
    """A hand-made realistic run: squared errors given per (dataset, replicate); truth 0."""
    rows = []
    for d, (a, b, c) in enumerate(zip(se_el, se_snips_rule, se_others)):
        for rep in range(len(a)):
            vals = {"el": a[rep], "el-snips": b[rep], "el-self": b[rep], "ips": c[rep],
                    "snips": c[rep], "emp": c[rep]}
            rows += [dict(dataset=d, strategy="epsilon=0.05", replicate=rep, estimator=k,
                          estimate=float(np.sqrt(v)), truth=0.0) for k, v in vals.items()]
    return dict(rows=rows, atoms={(0, "epsilon=0.05"): 3, (1, "epsilon=0.05"): 1},
                strategies=("epsilon=0.05",))


def test_realistic_table_counts_by_hand():
    # Dataset 0: EL (rho = 1/2) has a constant larger squared error than the others (a certain
    # loss), the SNIPS rule a constant smaller one (a certain win); dataset 1: all equal (ties).
    run = _run(se_el=[[0.5, 0.6, 0.7], [0.1, 0.2, 0.3]],
               se_snips_rule=[[0.1, 0.2, 0.3], [0.1, 0.2, 0.3]],
               se_others=[[0.3, 0.4, 0.5], [0.1, 0.2, 0.3]])
    table = {(r["estimator"], r["versus"]): r for r in RS.realistic_table(run)}
    assert (table["el", "snips"]["wins"], table["el", "snips"]["ties"], table["el", "snips"]["losses"]) == (0, 1, 1)
    assert (table["el-snips", "ips"]["wins"], table["el-snips", "ips"]["ties"]) == (1, 1)
    assert (table["el-self", "el"]["wins"], table["el-self", "el"]["losses"]) == (1, 0)
    assert ("el", "el") not in table
    assert table["el", "ips"]["atom_share"] == pytest.approx(4 / 6)  # 3 + 1 of 6 evaluations
    assert table["el", "ips"]["mse_estimator"] == pytest.approx(np.mean([0.5, 0.6, 0.7, 0.1, 0.2, 0.3]))


@needs_data
def test_realistic_el_column_is_table_1_s():
    need("vowpalwabbit")
    ds = R.load_folder(DATA, datasets=[1473])[0]
    si = R.STRATEGIES.index("epsilon=0.05")
    _, _, _, ope, _, _, _ = _run_ope((ds, si, "epsilon=0.05", R.DEFAULT_SEED, 4, False))
    _, _, rows, atoms, fallbacks, _ = RS._realistic_pair((ds, si, "epsilon=0.05", R.DEFAULT_SEED, 4))
    for key in ("el", "ips", "snips", "emp"):
        assert [r["estimate"] for r in rows if r["estimator"] == key] == \
            [r["estimate"] for r in ope if r["estimator"] == key]
    assert 0 <= atoms <= 4 and fallbacks == 0


def test_cli_writes_the_synthetic_tables(tmp_path, capsys):
    out = tmp_path / "rho"
    assert reproduce_main(["reproduce", "rho", "--studies", "synthetic", "--synthetic-replicates", "4",
                           "--sizes", "10", "20", "--jobs", "1", "--quiet", "--out", str(out)]) == 0
    text = (out / "summary.md").read_text()
    assert "Command: `elcvx reproduce rho --studies synthetic --synthetic-replicates 4 --sizes 10 20" in text
    lines = (out / "synthetic_mse.csv").read_text().splitlines()
    assert lines[0] == "n,estimator,mse,se,atom_share" and len(lines) == 1 + 2 * len(RS.SYN_COLUMNS)
    assert reproduce_main(["reproduce", "rho", "--studies", "realistic", "--out", str(out)]) == 2
    assert "--data-dir is needed" in capsys.readouterr().err


def _csv(path):
    import csv
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_committed_tables_share_the_studies_samples():
    # docs/rho was run on the studies' own streams: its rho = 1/2 columns are the committed
    # synthetic MSEs and Table 1's estimates, digit for digit as written.
    docs = ROOT / "docs"
    syn = {(r["n"], r["estimator"]): r for r in _csv(docs / "synthetic" / "mse.csv")}
    for r in _csv(docs / "rho" / "synthetic_mse.csv"):
        ref = syn[r["n"], {"cr-2": "cr"}.get(r["estimator"], r["estimator"])] \
            if r["estimator"] in ("el", "snips", "cr-2") else None
        if ref is not None:
            assert (r["mse"], r["se"]) == (ref["mse"], ref["se"]), r
    ope = {(r["dataset"], r["strategy"], r["replicate"], r["estimator"]): r["estimate"]
           for r in _csv(docs / "realistic" / "ope.csv.gz")}
    rows = _csv(docs / "rho" / "ope_rho.csv.gz")
    assert len(rows) == 26 * 7 * 60 * len(RS.OPE_COLUMNS)
    same = [r for r in rows if r["estimator"] in ("el", "ips", "snips", "emp")]
    assert all(ope[r["dataset"], r["strategy"], r["replicate"], r["estimator"]] == r["estimate"] for r in same)
