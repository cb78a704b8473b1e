"""Logs read chunk by chunk into their exact compression (elcvx.io.read_log_compressed) and the
command line's ``--engine stream``: the same sample, numbers and messages as reading in memory."""

from __future__ import annotations

import json
import re
import os

import numpy as np
import pytest

import elcvx
from elcvx import Sample
from elcvx import io as eio
from elcvx.cli import main
from elcvx.errors import InvalidInputError
from elcvx.testing import assert_agree

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

WMAX = 30.0  # epsilon = 0.1, 3 actions: weights 0, 1/0.9333 and 3/0.1


def _log(n, seed, *, sort=False):
    """An epsilon-greedy-like log: 3 weights, binary rewards (columns w, r)."""
    rng = np.random.default_rng(seed)
    w = rng.choice([0.0, 1 / (1 - 0.2 / 3), 30.0], size=n, p=[0.6, 0.37, 0.03])
    r = (rng.random(n) < 0.4).astype(float)
    df = pd.DataFrame({"w": w, "r": r})
    # Sorted rows come in runs of equal (w, r), which chunk boundaries then cut.
    return df.sort_values(["w", "r"], ignore_index=True) if sort else df


def _write(folder, parts, fmt="parquet"):
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i, df in enumerate(parts):
        path = os.path.join(folder, f"part-{i}.{fmt}")
        if fmt == "parquet":
            pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=16)
        else:
            df.to_csv(path, index=False)
        paths.append(path)
    return paths


@pytest.fixture
def parts():
    return [_log(37, 1), _log(50, 2, sort=True), _log(23, 3)]


def _in_memory(parts):
    whole = pd.concat(parts, ignore_index=True)
    return Sample(whole["w"], whole["r"], wmax=WMAX)


def _assert_same(a, b):
    for name in ("w", "r", "counts"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (a.wmin, a.wmax, a.rmin, a.rmax, a.n) == (b.wmin, b.wmax, b.rmin, b.rmax, b.n)


@pytest.mark.parametrize("chunk_size", [1, 3, 16, 1 << 18])
def test_compression_is_exact_at_every_chunk_size(tmp_path, parts, chunk_size):
    _write(tmp_path / "logs", parts)
    log = eio.read_log_compressed(tmp_path / "logs", wmax=WMAX, chunk_size=chunk_size)
    _assert_same(log.sample, _in_memory(parts).compress())
    assert log.n_rows == 110 and log.format == "parquet"
    assert log.columns == {"w": "w", "r": "r"}
    assert "read in chunks from 3 files (110 rows), compressed exactly to" in log.notes[0]


def test_merges_across_many_chunks_are_exact(tmp_path, monkeypatch):
    # Merging every few chunks (not only at the end) must give the same counts.
    from elcvx.io import stream

    parts = [_log(400, 4, sort=True), _log(300, 5)]
    _write(tmp_path / "logs", parts)
    monkeypatch.setattr(stream, "_MERGE_ROWS", 4)
    log = eio.read_log_compressed(tmp_path / "logs", wmax=WMAX, chunk_size=5)
    _assert_same(log.sample, _in_memory(parts).compress())


def test_estimate_and_interval_equal_in_memory(tmp_path, parts):
    _write(tmp_path / "logs", parts)
    streamed = eio.read_log_compressed(tmp_path / "logs", wmax=WMAX, chunk_size=7).sample
    rows = _in_memory(parts)
    for s in (rows, rows.compress()):
        assert_agree(elcvx.estimate(streamed).value, elcvx.estimate(s).value, tol=1e-12)
        got, want = elcvx.interval(streamed), elcvx.interval(s)
        assert_agree([got.low, got.high], [want.low, want.high], tol=1e-12)


def test_bad_value_names_file_and_row(tmp_path, parts):
    parts[2].loc[6, "w"] = -1.0  # the third file's row 7 (rows are numbered from 1)
    paths = _write(tmp_path / "logs", parts)
    with pytest.raises(InvalidInputError) as streamed:
        eio.read_log_compressed(tmp_path / "logs", wmax=WMAX, chunk_size=3)
    with pytest.raises(InvalidInputError) as whole:
        eio.read_log(paths[2], wmax=WMAX)
    assert str(streamed.value).startswith(f"{paths[2]}: row 7: weight (column 'w') = -1.0 is outside")
    assert str(streamed.value) == str(whole.value)


def test_csv_folder_lines_and_trailing_blank_lines(tmp_path, parts):
    paths = _write(tmp_path / "logs", parts, fmt="csv")
    with open(paths[0], "a") as f:
        f.write("\n\n")  # blank lines at the end are dropped, as read_log drops them
    log = eio.read_log_compressed(tmp_path / "logs", wmax=WMAX, chunk_size=4)
    _assert_same(log.sample, _in_memory(parts).compress())
    # A value that is not a number, after chunks already read as numbers: named by its line.
    df = parts[1].astype({"r": object})
    df.loc[30, "r"] = "oops"
    df.to_csv(paths[1], index=False)
    with pytest.raises(InvalidInputError, match=r"part-1\.csv: line 32: column 'r' is 'oops', not a number"):
        eio.read_log_compressed(tmp_path / "logs", wmax=WMAX, chunk_size=4)


def test_mixed_folder_and_globs(tmp_path, parts):
    folder = tmp_path / "logs"
    _write(folder, parts[:2])
    os.makedirs(folder / "more")
    parts[2].to_csv(folder / "more" / "last.csv", index=False)
    (folder / "_SUCCESS").write_text("")  # a writer's marker, not data
    want = _in_memory(parts).compress()
    log = eio.read_log_compressed(folder, wmax=WMAX)
    _assert_same(log.sample, want)
    assert log.format == "csv+parquet"  # files in sorted order: more/last.csv first
    _assert_same(eio.read_log_compressed(str(folder / "*.parquet"), wmax=WMAX).sample,
                 _in_memory(parts[:2]).compress())
    _assert_same(eio.read_log_compressed(str(folder / "**" / "*.*"), wmax=WMAX).sample, want)
    with pytest.raises(InvalidInputError, match="no such file, and no file matches it as a glob"):
        eio.read_log_compressed(str(folder / "*.pq"), wmax=WMAX)
    (folder / "x.jsonl").write_text('{"w": 1, "r": 0}\n')
    with pytest.raises(InvalidInputError, match=r"x\.jsonl is jsonl: logs read in chunks are Parquet"):
        eio.read_log_compressed(folder, wmax=WMAX)


def test_parquet_dataset_partition_columns(tmp_path, parts):
    whole = pd.concat(parts, ignore_index=True)
    whole["c"] = np.arange(len(whole)) % 3 + 1  # a count, read from the partition folders
    pq.write_to_dataset(pa.Table.from_pandas(whole, preserve_index=False), tmp_path / "ds",
                        partition_cols=["c"])
    log = eio.read_log_compressed(tmp_path / "ds", count="c", wmax=WMAX, chunk_size=10)
    _assert_same(log.sample, Sample(whole["w"], whole["r"], counts=whole["c"], wmax=WMAX).compress())
    assert log.columns["counts"] == "c"


def test_too_many_pairs_is_a_clear_error(tmp_path):
    rng = np.random.default_rng(6)
    _write(tmp_path / "logs", [pd.DataFrame({"w": rng.uniform(0, 2, 50), "r": rng.random(50)})])
    with pytest.raises(InvalidInputError, match=r"more than 20 distinct \(w, r\) pairs in its "
                       r"first 50 rows.*continuous weights.*without compressing it: elcvx.io.scan_log") as exc:
        eio.read_log_compressed(tmp_path / "logs", max_pairs=20, chunk_size=8)
    assert exc.value.field == "max_pairs"
    with pytest.raises(InvalidInputError, match="chunk_size=0 must be a positive integer"):
        eio.read_log_compressed(tmp_path / "logs", chunk_size=0)


def _json(capsys, argv):
    assert main(argv + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_folder_end_to_end(tmp_path, parts, capsys):
    _write(tmp_path / "logs", parts)
    whole = tmp_path / "whole.csv"
    pd.concat(parts).to_csv(whole, index=False)
    got = _json(capsys, ["evaluate", str(tmp_path / "logs"), "--wmax", "30"])
    want = _json(capsys, ["evaluate", str(whole), "--wmax", "30"])
    for a, b in zip(got["results"], want["results"]):
        assert a["method"] == b["method"]
        assert_agree([a[k] for k in ("estimate", "low", "high") if a[k] is not None],
                     [b[k] for k in ("estimate", "low", "high") if b[k] is not None], tol=1e-12)
    assert got["n"] == want["n"] == got["rows"] == 110
    assert any("read in chunks from 3 files" in n for n in got["notes"])
    assert not any("read in chunks" in n for n in want["notes"])  # one file: in memory
    glob = _json(capsys, ["evaluate", str(tmp_path / "logs" / "*.parquet"), "--wmax", "30"])
    assert glob["results"] == got["results"]
    one = _json(capsys, ["evaluate", str(whole), "--wmax", "30", "--engine", "stream"])
    assert any("read in chunks from 1 file" in n for n in one["notes"])
    # More pairs than --max-pairs: kept in chunks, every method's numbers the same.
    chunks = _json(capsys, ["evaluate", str(tmp_path / "logs"), "--wmax", "30", "--max-pairs", "2"])
    _assert_same_results(chunks, got)
    assert any(re.search(r"kept as \d+ chunks \(memory\)", n) for n in chunks["notes"])


def _assert_same_results(got, want, tol=1e-10):
    """Every method's row of two evaluate reports: the same methods, numbers to ``tol``."""
    assert [r["method"] for r in got["results"]] == [r["method"] for r in want["results"]]
    for a, b in zip(got["results"], want["results"]):
        for k in ("estimate", "low", "high"):
            assert (a[k] is None) == (b[k] is None), (a, b)
            if b[k] is not None:
                assert_agree(a[k], b[k], tol=tol, what=f"{a['method']} {k}")


def test_every_method_on_every_engine(tmp_path, capsys):
    # A folder of Parquet, evaluated with every method (EL, IPS, SNIPS, CR(-2), Gaussian,
    # Binomial, and --sequence's two sequences) by --engine memory (every row, in file order),
    # stream (compressed, and kept in chunks) equals the same rows as one file read whole.
    # (Before, a folder left the baselines and the sequences empty, and --engine memory refused
    # it.) tests/io/test_dask.py does the same with --engine dask.
    rng = np.random.default_rng(4)
    parts = [_log(60, 11), _log(45, 12, sort=True), _log(80, 13)]
    for df in parts:  # a few continuous weights: more pairs than --max-pairs 20, not than 1e6
        df.loc[df.index[::7], "w"] = rng.uniform(0.0, WMAX, len(df.index[::7]))
    _write(tmp_path / "logs", parts)
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.Table.from_pandas(pd.concat(parts, ignore_index=True),
                                        preserve_index=False), whole)
    argv = ["--wmax", "30", "--sequence"]
    want = _json(capsys, ["evaluate", str(whole)] + argv)
    assert [r["method"] for r in want["results"]] == [
        "el", "ips", "snips", "cr", "gaussian", "binomial", "betting-cs", "ddrm-cs"]
    assert all(r["low"] is not None for r in want["results"] if r["method"] not in ("ips", "snips"))
    folder = str(tmp_path / "logs")
    for engine in (["--engine", "memory"], ["--engine", "stream"],
                   ["--engine", "stream", "--max-pairs", "20"]):
        got = _json(capsys, ["evaluate", folder] + engine + argv)
        _assert_same_results(got, want)
        # The sequences read the rows in file order: the very same bounds.
        assert got["results"][-2:] == want["results"][-2:], engine
    kinds = [_json(capsys, ["evaluate", folder, "--engine", "stream", "--max-pairs", m] + argv)["notes"][0]
             for m in ("20", "1000")]
    assert "kept as" in kinds[0] and "compressed exactly" in kinds[1]
    memory = _json(capsys, ["evaluate", str(tmp_path / "logs" / "*.parquet"), "--engine",
                            "memory"] + argv)
    _assert_same_results(memory, want)
    assert "every row in memory, in file order" in memory["notes"][0]
    # Against the definitions: IPS = mean(w r), SNIPS = sum w r / sum w on these rows.
    rows = pd.concat(parts, ignore_index=True)
    ips, snips = memory["results"][1]["estimate"], memory["results"][2]["estimate"]
    assert_agree([ips, snips], [np.mean(rows.w * rows.r), (rows.w @ rows.r) / rows.w.sum()],
                 tol=1e-12)
    # profile --sequence plots EL at looks over t: the rows in memory.
    assert main(["profile", folder, "--wmax", "30", "--plot", str(tmp_path / "p.png"),
                 "--sequence"]) == 2
    assert "--engine memory (it reads a folder or glob too)" in capsys.readouterr().err


def test_benchmark_runs(capsys):
    # benchmarks/bench_stream.py, at a size that takes a second: it must keep running.
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_stream.py"
    spec = importlib.util.spec_from_file_location("bench_stream", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.main(["--n", "2e4", "--files", "2"])
    out = capsys.readouterr().out
    assert "compressed to 6 distinct (w, r) rows, N = 20000" in out
    assert "| read + check + compress (`read_log_compressed`) |" in out


def test_each_file_is_checked_as_read_log_checks_it(tmp_path, parts):
    paths = _write(tmp_path / "logs", parts)
    pq.write_table(pa.table({"x": [1.0], "r": [0.0]}), paths[1])  # no column w
    with pytest.raises(InvalidInputError, match=r"part-1\.parquet has no column 'w' \(its columns: 'x', 'r'\)"):
        eio.read_log_compressed(tmp_path / "logs", wmax=WMAX)
    pq.write_table(pa.table({"w": ["1", "oops"], "r": [0.0, 1.0]}), paths[1])  # text, not numbers
    with pytest.raises(InvalidInputError) as streamed:
        eio.read_log_compressed(tmp_path / "logs", wmax=WMAX)
    with pytest.raises(InvalidInputError) as whole:
        eio.read_log(paths[1], wmax=WMAX)
    assert str(streamed.value) == str(whole.value) == f"{paths[1]}: row 2: column 'w' is 'oops', not a number"
