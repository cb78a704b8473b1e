"""``elcvx select``: its numbers are ``elcvx.select``'s on the same columns, in every format and
from a file, a folder of Parquet files and a semicolon CSV; its mistakes are one line, exit 2."""

import json

import numpy as np
import pytest

import elcvx
from elcvx.cli import main

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

NAMES = ["same", "good", "bad", "mild"]


@pytest.fixture(scope="module")
def frame():
    """Two actions logged uniformly; each candidate's probability of action 1 in its name's
    order: 0.5 (the logging policy), 0.9, 0.1, 0.6; rewards Bernoulli(0.8) and (0.3)."""
    rng = np.random.default_rng(0)
    n = 1200
    a = rng.integers(0, 2, n)
    df = pd.DataFrame({"logging_prob": 0.5,
                       "reward": (rng.random(n) < np.where(a == 1, 0.8, 0.3)).astype(float)})
    for name, p1 in zip(NAMES, (0.5, 0.9, 0.1, 0.6)):
        df[name] = np.where(a == 1, p1, 1 - p1)
    return df


def expected(df, **kwargs):
    return elcvx.select(df[NAMES].to_numpy(), df["logging_prob"].to_numpy(),
                        df["reward"].to_numpy(), names=NAMES, pmin=0.5, **kwargs)


def run_json(capsys, *args):
    assert main([str(a) for a in args] + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def check(rep, res):
    assert [c["name"] for c in rep["candidates"]] == NAMES
    assert [c["low"] for c in rep["candidates"]] == res.low.tolist()
    assert [c["estimate"] for c in rep["candidates"]] == res.estimate.tolist()
    gains = [c["gain"] for c in rep["candidates"]]
    assert gains == [None if np.isnan(g) else g for g in res.gain.tolist()]
    assert rep["chosen"] == res.chosen_name and rep["guarantee"] == res.guarantee
    assert rep["statements"] == res.statements


def test_a_file_a_folder_and_a_semicolon_csv_give_selects_numbers(frame, tmp_path, capsys):
    res = expected(frame, baseline="logging")
    assert res.chosen_name == "good"
    frame.to_csv(tmp_path / "log.csv", index=False)
    flags = ["--candidates", ",".join(NAMES), "--baseline", "logging", "--pmin", "0.5"]
    check(run_json(capsys, "select", tmp_path / "log.csv", *flags), res)
    (tmp_path / "parts").mkdir()
    frame.iloc[:500].to_parquet(tmp_path / "parts" / "a.parquet")
    frame.iloc[500:].to_parquet(tmp_path / "parts" / "b.parquet")
    rep = run_json(capsys, "select", tmp_path / "parts", *flags)
    check(rep, res)
    assert rep["files"] == 2
    frame.to_csv(tmp_path / "semi.csv", index=False, sep=";", decimal=",")
    check(run_json(capsys, "select", tmp_path / "semi.csv", *flags, "--sep", ";",
                   "--decimal", ","), res)


def test_the_table_marks_the_chosen_row_and_says_the_guarantee(frame, tmp_path, capsys):
    frame.to_csv(tmp_path / "log.csv", index=False)
    assert main(["select", str(tmp_path / "log.csv"), "--candidates", "good,bad,same",
                 "--baseline", "same", "--pmin", "0.5", "--method", "ls"]) == 0
    out = capsys.readouterr().out.splitlines()
    res = elcvx.select(frame[["good", "bad", "same"]].to_numpy(), frame["logging_prob"],
                       frame["reward"], names=["good", "bad", "same"], pmin=0.5, baseline="same",
                       method="ls")
    chosen = [line for line in out if line.endswith("<- chosen")]
    assert len(chosen) == 1 and chosen[0].split()[0] == res.chosen_name
    assert out[-1] == res.guarantee


def test_a_baseline_column_that_is_not_a_candidate(frame, tmp_path, capsys):
    frame.to_csv(tmp_path / "log.csv", index=False)
    rep = run_json(capsys, "select", tmp_path / "log.csv", "--candidates", "good,bad,mild",
                   "--baseline", "same", "--pmin", "0.5")
    res = elcvx.select(frame[["good", "bad", "mild"]].to_numpy(), frame["logging_prob"],
                       frame["reward"], names=["good", "bad", "mild"], pmin=0.5,
                       baseline=frame["same"].to_numpy())
    assert rep["baseline"] == "same" and "'same'" in rep["guarantee"]
    assert [c["gain"] for c in rep["candidates"]] == res.gain.tolist()


def test_csv_has_one_row_per_candidate(frame, tmp_path, capsys):
    frame.to_csv(tmp_path / "log.csv", index=False)
    assert main(["select", str(tmp_path / "log.csv"), "--candidates", ",".join(NAMES),
                 "--pmin", "0.5", "--format", "csv"]) == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    res = expected(frame)
    assert list(out["name"]) == NAMES and out["low"].tolist() == res.low.tolist()
    assert out["chosen"].tolist() == res.is_chosen.tolist() and set(out["rule"]) == {"bound"}


@pytest.mark.parametrize("flags, words", [
    (["--candidates", "good,nope"], "no column 'nope'"),
    (["--candidates", "good", "--baseline", "nope"], "no column 'nope'"),
    (["--candidates", "good", "--method", "ips"], "invalid choice: 'ips'"),
    (["--candidates", "good", "--rule", "gain"], "rule='gain' compares the candidates"),
    (["--candidates", "good", "--rule", "best"], "invalid choice: 'best'"),
    (["--candidates", "good", "--pmin", "0.9"], "below pmin=0.9"),
    (["--candidates", " , "], "--candidates: name at least one column"),
])
def test_mistakes_are_one_line_and_exit_2(frame, tmp_path, capsys, flags, words):
    frame.to_csv(tmp_path / "log.csv", index=False)
    assert main(["select", str(tmp_path / "log.csv"), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("elcvx: error:") and words in err[0]
