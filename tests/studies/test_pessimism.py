"""The pessimism study (elcvx reproduce pessimism): the protocol's closed forms against the
authors' definitions written out here, a smoke run of the command, and the committed numbers
that the docs and the README quote."""

from __future__ import annotations

import csv
import gzip
import math
from pathlib import Path

import numpy as np
import pytest

from elcvx import Sample
from elcvx.baselines import lower_bound
from elcvx.datasets import find_set_dir, missing_set_reason
from elcvx.experiments.pessimism import protocol
from elcvx.experiments.pessimism.study import radius
from elcvx.testing import assert_agree

ROOT = Path(__file__).resolve().parents[2]
# ../shared/data/pessimism, else data/pessimism (elcvx datasets fetch --set pessimism)
DATA = find_set_dir("pessimism", ROOT)
COMMITTED = ROOT / "docs" / "pessimism"


def authors_probs(y, k, tau, faulty):
    """The authors' SoftmaxDataPolicy.get_probs: a softmax of the one-hot (altered) label."""
    alt = np.array([(v + 1) % k if v in faulty else v for v in y])
    onehot = (np.arange(k)[None, :] == alt[:, None]).astype(float)
    e = np.exp(onehot / tau)
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("cfg", [protocol.Config(0.0, 0.1, 0.3), protocol.Config(0.2, 0.5, 0.2)])
def test_value_and_weight_range_are_the_authors(cfg):
    k = 5
    y = np.arange(k)
    pi = authors_probs(y, k, cfg.tau, ())
    h = authors_probs(y, k, cfg.tau0, (0, 1))
    # The authors' get_true_value: sum_a pi(a|x) E[r | x, a], E[r] = 1 - eta on y, eta elsewhere.
    reward = np.where(np.arange(k)[None, :] == y[:, None], 1 - cfg.eta, cfg.eta)
    values = (pi * reward).sum(axis=1)
    assert_agree(values, protocol.true_value(cfg, k), tol=1e-14)
    # E_h[w r | x] is V for every label (the log is unbiased), and the ratios pi/h span the range.
    assert_agree((h * (pi / h) * reward).sum(axis=1), values, tol=1e-14)
    wmin, wmax = protocol.weight_range(cfg, k)
    assert_agree([wmin, wmax], [(pi / h).min(), (pi / h).max()], tol=1e-14)


def test_hand_computed_value():
    # K = 4, tau = 0.5, eta = 0.1: p = e^2 / (e^2 + 3) = 0.7112345, V = 0.1 + 0.8 p = 0.6689876.
    p = math.exp(2) / (math.exp(2) + 3)
    assert_agree(protocol.true_value(protocol.Config(0.1, 0.5, 0.3), 4), 0.1 + 0.8 * p, tol=1e-15)
    assert abs(0.1 + 0.8 * p - 0.6689876) < 1e-7
    assert radius(0.8, 0.6) == pytest.approx(0.25) and radius(0.8, 0.9) == 0.0


def test_rows_logged_are_scikit_learns():
    sklearn = pytest.importorskip("sklearn.model_selection")
    for n in (846, 1484, 5473, 5620, 28056, 101):
        rows = np.arange(n)
        kept, _ = sklearn.train_test_split(rows, train_size=0.01 + 0.98, random_state=0)
        _, logged = sklearn.train_test_split(kept, train_size=0.01 / (0.01 + 0.98), random_state=0)
        assert protocol.n_log(n) == logged.size


@pytest.mark.parametrize("label", [0, 2])  # a label whose logging peak is shifted, and one not
def test_logs_have_the_logging_policy_and_the_value(label):
    # 50,000 rows of one label, K = 4: the logging peak's frequency is the authors' h(peak),
    # mean(w) is 1 and mean(w r) is V, each within 4 standard errors.
    k, cfg = 4, protocol.Config(0.1, 0.2, 0.25)
    labels = np.full(51_000, label)
    log = protocol.draw_log(labels, k, cfg, np.random.default_rng(label))
    assert log.w.size == protocol.n_log(labels.size)
    h = authors_probs(np.array([label]), k, cfg.tau0, (0, 1))[0]
    pi = authors_probs(np.array([label]), k, cfg.tau, ())[0]
    peak = log.p == h.max()
    for stat, target in ((peak.astype(float), h.max()), (log.w, 1.0), (log.w * log.r, log.value)):
        assert abs(stat.mean() - target) < 4 * stat.std() / math.sqrt(stat.size)
    # Every logging probability is one of h's, every weight one of the ratios pi / h.
    assert set(np.unique(log.p)) <= set(h)
    assert np.all(np.isclose(log.w[:, None], (pi[:, None] / h[None, :]).ravel()).any(axis=1))
    assert log.wmin <= log.w.min() and log.w.max() <= log.wmax


@pytest.mark.skipif(DATA is None, reason=missing_set_reason("pessimism", ROOT))
def test_the_command_on_one_configuration(tmp_path, capsys):
    from elcvx.__main__ import main  # (the whole command: reproduce is the studies')
    from elcvx.experiments.pessimism import DEFAULT_SEED, METHODS
    from elcvx.experiments.realistic.data import dataset_rng, load_folder

    argv = ["reproduce", "pessimism", "--data-dir", str(DATA), "--datasets", "54", "--noises", "0",
            "--targets", "0.5", "--logging", "0.3", "--seeds", "2", "--jobs", "1",
            "--out", str(tmp_path), "--no-plots"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "pessimism study: 1 datasets x 1 configurations x 2 logs" in out.out
    assert "[pessimism] vehicle eta=0 tau=0.5 tau0=0.3" in out.err  # progress
    with gzip.open(tmp_path / "bounds.csv.gz", "rt") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * len(METHODS)
    assert all(0.0 <= float(r["radius"]) <= 1.0 for r in rows)
    # The LS row of replicate 1 is LS on the log that replicate's stream draws (configuration 12
    # of the grid: eta = 0, tau = 0.5, tau0 = 0.3).
    (vehicle,) = load_folder(DATA, datasets=[54], max_rows=10**9)
    index = protocol.configs().index(protocol.Config(0.0, 0.5, 0.3))
    log = protocol.draw_log(vehicle.y, vehicle.n_classes, protocol.Config(0.0, 0.5, 0.3),
                            dataset_rng(DEFAULT_SEED, 54, index, 1))
    ls = lower_bound(Sample(log.w, log.r, wmin=log.wmin, wmax=log.wmax), method="ls")
    row = next(r for r in rows if r["method"] == "ls" and r["replicate"] == "1")
    assert_agree(float(row["lower_bound"]), ls.low, tol=1e-9)
    assert_agree(float(row["value"]), log.value, tol=1e-9)
    summary = (tmp_path / "summary.md").read_text()
    assert "1 of the 45 configurations only: not comparable" in summary
    assert main(argv[:-4] + ["--methods", "ls,nope"]) == 2


def _committed(name):
    with open(COMMITTED / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.skipif(not (COMMITTED / "summary.csv").exists(), reason="no committed run")
def test_the_quoted_numbers_are_the_committed_run():
    overall = {r["method"]: r for r in _committed("summary.csv") if r["dataset"] == "all"}
    page = " ".join((ROOT / "docs" / "pessimism.md").read_text(encoding="utf-8").split())
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for method in ("el-betting", "ls", "el", "el-signed-bootstrap"):
        mean = f"{float(overall[method]['mean_radius']):.3f}"
        rate = f"{100 * float(overall[method]['violation_rate']):.1f}%"
        assert f"{method} {mean} ({rate})" in page, (method, mean, rate)
    change = float(overall["el-betting"]["mean_radius"]) / float(overall["ls"]["mean_radius"]) - 1
    assert f"{change:+.0%}" in readme and f"{change:+.0%}" in page
    # Our LS reproduces the published LS mean radius within 0.04 on each dataset.
    gaps = [abs(float(r["difference"])) for r in _committed("published.csv") if r["method"] == "ls"]
    assert len(gaps) == 6 and max(gaps) <= 0.04
    assert f"{max(gaps):.3f}" in page
