"""The Dask engine (elcvx.io._dask.DaskRows) on a real LocalCluster of two worker processes: its
passes give the sums numpy gives on the same rows, and a bad value is named by file and row."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import replace

import numpy as np
import pytest

import elcvx
from elcvx import Sample
from elcvx import io as eio
from elcvx.cli import main
from elcvx.errors import InvalidInputError
from elcvx.testing import assert_agree

from extras import need  # noqa: E402

distributed = need("distributed")
dask = need("dask")
dd = need("dask.dataframe")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from elcvx.io import _dask  # noqa: E402  (needs the skips above)
from elcvx.io._dask import DaskRows  # noqa: E402
from chunk_sums import (OPTIONS, add, chan, frame, moments, numpy_moments, numpy_sums,  # noqa: E402
                        sums)
from test_scan import _assert_same_numbers as same_numbers  # noqa: E402
from test_scan import _log as scan_frame  # noqa: E402  (continuous weights, ties in rewards)

SPEC = eio.LogSpec(**OPTIONS)  # the columns and bounds of chunk_sums' logs

REL = 1e-12  # the sums differ from numpy's only by the order of additions
TOL = 1e-10  # the issue's: the engines agree to 1e-10 on the same data
SCAN_WMAX = 25.0  # test_scan's logs' weights are at most this


@pytest.fixture(scope="module")
def client():
    # Starting two worker processes takes ~5 s of wall time (measured on a loaded 2-core
    # machine): once for the module.
    started = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    # Not the default client: the test of a missing client needs there to be none.
    c = distributed.Client(cluster, set_as_default=False)
    print(f"LocalCluster started in {time.perf_counter() - started:.1f} s")
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """A log of three Parquet files (the second in row groups of 16), and its rows concatenated."""
    folder = tmp_path_factory.mktemp("log")
    parts = [frame(40, 1), frame(100, 2), frame(25, 3)]
    for i, df in enumerate(parts):
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False),
                       folder / f"part-{i}.parquet", row_group_size=16)
    return str(folder), pd.concat(parts, ignore_index=True)


def _close(actual, desired):
    np.testing.assert_allclose(actual, desired, rtol=REL, atol=0)


# -- tests --------------------------------------------------------------------------------------

def test_sums_over_files_equal_numpy(client, log):
    path, whole = log
    with DaskRows(path, SPEC, client) as rows:
        assert (rows.n_rows, rows.n_chunks) == (165, 3)
        _close(rows.map_reduce(sums, add), numpy_sums(whole))


def test_keywords_and_spec_read_the_same_scan(client, log):
    # scan_log(engine="dask") given the options as keywords or as one LogSpec: the same log, to
    # the bit row by row (the passes' partial sums merge in the cluster's order: to REL).
    path, whole = log
    scans = [eio.scan_log(path, engine="dask", client=client, **how)
             for how in (OPTIONS, {"spec": SPEC})]
    try:
        facts = [(s.n_rows, s.n, s.wmin, s.wmax, s.rmin, s.rmax, s.w_observed, s.columns)
                 for s in scans]
        assert facts[0] == facts[1]
        rows = [[(c.w.tobytes(), c.r.tobytes(), c.counts.tobytes()) for c in s.rows_in_order()]
                for s in scans]
        assert rows[0] == rows[1]
        for s in scans:
            _close(s.engine.map_reduce(sums, add), numpy_sums(whole))
    finally:
        for s in scans:
            s.engine.close()


def test_chan_mean_and_variance_equal_numpy(client, log):
    path, whole = log
    with DaskRows(path, SPEC, client) as rows:
        n, m, m2 = rows.map_reduce(moments, chan)
    want = numpy_moments(whole)
    assert n == want[0]  # a count of rows: exact
    np.testing.assert_allclose([m, m2 / n], want[1:], rtol=REL, atol=0)


def test_row_groups_cut_a_file_into_partitions(client, log, monkeypatch):
    # Partitions are planned on the client: 40 rows a partition cuts the 2nd file (row groups
    # of 16) into groups of 3, 3 and 1 row groups; rows are then numbered across them.
    path, whole = log
    monkeypatch.setattr(_dask, "PARTITION_ROWS", 40)
    with DaskRows(path, SPEC, client) as rows:
        assert rows.n_chunks == 5
        _close(rows.map_reduce(sums, add), numpy_sums(whole))


def test_bad_value_names_file_and_row(client, tmp_path):
    parts = [frame(30, 4), frame(30, 5)]
    parts[1].loc[17, "w"] = -0.5  # row 18 of the second file (Parquet rows count from 1)
    for i, df in enumerate(parts):
        df.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    second = str(tmp_path / "part-1.parquet")
    with pytest.raises(InvalidInputError) as info:
        DaskRows(str(tmp_path / "*.parquet"), SPEC, client)
    message = str(info.value)
    assert message.startswith(f"{second}: row 18: weight (column 'w') = -0.5"), message


def test_csv_text_value_names_the_line(client, tmp_path):
    df = frame(20, 6).astype(object)
    df.loc[4, "r"] = "oops"  # line 6: the header is line 1
    df.to_csv(tmp_path / "log.csv", index=False)
    with pytest.raises(InvalidInputError,
                       match=r"log\.csv: line 6: column 'r' is 'oops', not a number"):
        DaskRows(str(tmp_path / "log.csv"), SPEC, client)


def test_dask_dataframe_source(client, log):
    _, whole = log
    frame = dd.from_pandas(whole, npartitions=4)
    with DaskRows(frame, SPEC, client) as rows:
        assert (rows.n_rows, rows.n_chunks) == (165, 4)
        _close(rows.map_reduce(sums, add), numpy_sums(whole))


def test_empty_partitions_are_dropped(client, log):
    _, whole = log
    frame = dd.from_pandas(whole, npartitions=4)
    kept = whole[whole.index < 50]  # the first two partitions' rows (of 42 or 41 rows each)
    with DaskRows(frame[frame.index.to_series() < 50], SPEC, client) as rows:
        assert (rows.n_rows, rows.n_chunks) == (50, 2)
        _close(rows.map_reduce(sums, add), numpy_sums(kept))


def test_dask_dataframe_bad_value_names_partition(client, log):
    _, whole = log
    bad = whole.copy()
    bad.loc[130, "n"] = 0.0
    frame = dd.from_pandas(bad, npartitions=4)
    with pytest.raises(InvalidInputError, match=r"partition \d of the Dask DataFrame: row 130: "
                                                r"count \(column 'n'\) = 0.0 must be > 0"):
        DaskRows(frame, SPEC, client)


def test_scheduler_address(client, log):
    path, whole = log
    rows = DaskRows(path, SPEC, client.scheduler.address)
    try:
        _close(rows.map_reduce(sums, add), numpy_sums(whole))
    finally:
        rows.close()
    assert rows._client.status == "closed"  # the engine's own client
    assert client.status == "running"


def test_missing_client_is_a_clear_error(log):
    with pytest.raises(InvalidInputError, match="pass client=.*--scheduler"):
        DaskRows(log[0], SPEC, None)


def test_missing_column(client, log):
    with pytest.raises(InvalidInputError, match="'cnt'"):
        DaskRows(log[0], replace(SPEC, count="cnt"), client)


def test_close_releases_the_partitions(client, log):
    rows = DaskRows(log[0], SPEC, client)
    keys = {f.key for f in rows._parts}
    rows.close()
    deadline = time.monotonic() + 10
    while keys & set(client.who_has()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not keys & set(client.who_has())


def test_summary_of_the_rows(client, log):
    path, whole = log
    with DaskRows(path, replace(SPEC, wmax=None, pmin=0.125), client) as rows:
        assert rows.n == whole["n"].sum()  # integers: exact in any order
        assert rows.w_observed == (whole["w"].min(), whole["w"].max())
        assert (rows.wmin, rows.wmax, rows.rmin, rows.rmax) == (0.0, 8.0, -1.0, 3.0)
        assert rows.columns == {"w": "w", "r": "r", "counts": "n"}


def _none_in_the_third_file(cols):
    # A partial of None (a point outside an objective's domain) in one chunk only (25 rows).
    return None if cols.w.size == 25 else cols.w.size


def test_a_partial_of_none_ends_in_none(client, log):
    with DaskRows(log[0], SPEC, client) as rows:
        assert rows.map_reduce(_none_in_the_third_file, add) is None


# -- estimate, interval and profile through scan_log(engine="dask") ---------------------------

@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    """Three Parquet files of a log with counts ``c`` and a control-variate column ``g``; and the
    same rows as a Sample in memory, with the constraint on them."""
    folder = tmp_path_factory.mktemp("scan")
    parts = []
    for seed in (21, 22, 23):
        df = scan_frame(1200, seed, counts=True)
        df["g"] = df["w"] * np.random.default_rng(seed).random(len(df))
        parts.append(df)
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False),
                       folder / f"part-{seed}.parquet", row_group_size=500)
    whole = pd.concat(parts, ignore_index=True)
    rows = Sample(whole["w"], whole["r"], counts=whole["c"], wmax=SCAN_WMAX)
    on_rows = elcvx.MomentConstraint(whole["g"], 0.45, atom_range=(0.0, SCAN_WMAX), name="g")
    return str(folder), rows, on_rows


def test_scan_equals_the_rows_in_memory(client, scanned):
    folder, rows, _ = scanned
    scan = eio.scan_log(folder, wmax=SCAN_WMAX, count="c", engine="dask", client=client)
    assert (scan.n_rows, scan.n, scan.compressed) == (rows.n_rows, rows.n, None)
    assert scan.w_observed == (rows.w.min(), rows.w.max())
    assert "kept as 3 partitions on the Dask cluster" in scan.notes[0]
    same_numbers(scan, rows)  # estimate, interval and profile to 1e-10, as for the stream engine


def test_scan_of_a_dask_dataframe(client, scanned):
    folder, rows, _ = scanned
    frame = dd.read_parquet(folder)
    scan = eio.scan_log(frame, wmax=SCAN_WMAX, count="c", engine="dask", client=client)
    assert (scan.path, scan.format, scan.n_rows) == ("the Dask DataFrame", "dask", rows.n_rows)
    assert scan.notes[0].startswith("read from a Dask DataFrame (3,600 rows), kept as ")
    same_numbers(scan, rows)


def test_scan_with_a_moment_constraint(client, scanned):
    folder, rows, on_rows = scanned
    scan = eio.scan_log(folder, wmax=SCAN_WMAX, count="c", constraint_columns=["g"],
                        engine="dask", client=client)
    by_name = elcvx.MomentConstraint("g", 0.45, atom_range=(0.0, SCAN_WMAX))
    checks = [(elcvx.estimate, (), ("value", "loglik", "lambdas")),
              (elcvx.interval, (), ("low", "high")),
              (elcvx.profile, ([0.2, 0.25],), ("statistic",))]
    for run, args, fields in checks:
        want = run(rows, *args, constraints=on_rows)
        got = run(scan, *args, constraints=by_name)
        for f in fields:
            assert_agree(getattr(got, f), getattr(want, f), tol=TOL, what=f"{run.__name__}: {f}")
    moved = elcvx.estimate(scan, constraints=by_name).value - elcvx.estimate(rows).value
    assert abs(moved) > 1e-3  # the constraint moves the estimate (by 2.6e-3): it was applied


def test_scan_cross_check_can_fail(client, scanned, tmp_path):
    # One reward in the third file moved by 0.1 moves the estimate by more than the tolerance:
    # the comparisons above are not vacuous.
    folder, rows, _ = scanned
    df = pq.read_table(os.path.join(folder, "part-23.parquet")).to_pandas()
    df.loc[7, "r"] = 0.9 if df.loc[7, "r"] < 0.5 else 0.1
    for name in ("part-21.parquet", "part-22.parquet"):
        pq.write_table(pq.read_table(os.path.join(folder, name)), tmp_path / name)
    df.to_parquet(tmp_path / "part-23.parquet", index=False)
    scan = eio.scan_log(str(tmp_path), wmax=SCAN_WMAX, count="c", engine="dask", client=client)
    assert abs(elcvx.estimate(scan).value - elcvx.estimate(rows).value) > 1e3 * TOL


# -- the command line ---------------------------------------------------------------------------

def _json(capsys, argv):
    assert main(argv + ["--format", "json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _assert_same_json(got, want, where="report"):
    """Equal, numbers to TOL relative (their last digits depend on the order of the sums)."""
    if isinstance(want, dict):
        assert got.keys() == want.keys(), where
        for k in want:
            _assert_same_json(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want)):
            _assert_same_json(a, b, f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(got, bool):
        assert_agree(got, want, tol=TOL, what=where)
    else:
        assert got == want, where


@pytest.fixture(scope="module")
def one_file(scanned):
    folder, _, _ = scanned
    return os.path.join(folder, "part-22.parquet")


def test_cli_dask_equals_memory(client, one_file, capsys):
    argv = ["evaluate", one_file, "--wmax", "25", "--count-col", "c"]
    want = _json(capsys, argv + ["--engine", "memory"])
    got = _json(capsys, argv + ["--engine", "dask", "--scheduler", client.scheduler.address])
    # Every method: EL and the baselines, whose sums are merged on the workers.
    assert [r["method"] for r in got["results"]] == ["el", "ips", "snips", "cr", "gaussian",
                                                     "binomial"]
    assert re.fullmatch(r"read in chunks from 1 file \(1,200 rows\), kept as 1 partition on the "
                        r"Dask cluster at tcp://\S+", got["notes"][0])
    assert want["notes"] == [] and len(got["notes"]) == 1
    for report in (got, want):
        del report["notes"]
    _assert_same_json(got, want)


def test_cli_every_method_on_a_folder(client, tmp_path, capsys):
    # A folder of Parquet on the Dask engine: every method, --sequence too (its rows read again
    # from the files, in file order), equal to the same rows as one file read whole
    # (tests/io/test_stream.py does the same with the memory and stream engines).
    from test_stream import _assert_same_results

    parts = [scan_frame(300, seed) for seed in (41, 42, 43)]
    os.makedirs(tmp_path / "logs")
    for i, df in enumerate(parts):
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False),
                       tmp_path / "logs" / f"part-{i}.parquet", row_group_size=64)
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.Table.from_pandas(pd.concat(parts, ignore_index=True), preserve_index=False),
                   whole)
    argv = ["--wmax", "25", "--sequence"]
    want = _json(capsys, ["evaluate", str(whole)] + argv)
    got = _json(capsys, ["evaluate", str(tmp_path / "logs"), "--engine", "dask", "--scheduler",
                         client.scheduler.address] + argv)
    assert len(want["results"]) == 8 and want["results"][3]["low"] is not None
    _assert_same_results(got, want)
    assert got["results"][-2:] == want["results"][-2:]  # the sequences: the same rows in order


def test_cli_dask_starts_and_closes_its_own_cluster(one_file, capsys):
    argv = ["evaluate", one_file, "--wmax", "25", "--count-col", "c"]
    got, want = _json(capsys, argv + ["--engine", "dask"]), _json(capsys, argv)
    _assert_same_json(got["results"][0], want["results"][0])
    address = re.search(r"at (tcp://\S+)", got["notes"][0]).group(1)
    with pytest.raises(OSError):  # the run's cluster is gone
        distributed.Client(address, timeout="2s")


def test_cli_scheduler_needs_the_dask_engine(one_file, capsys):
    assert main(["evaluate", one_file, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler applies to --engine dask only" in capsys.readouterr().err


def test_cli_unreachable_scheduler(one_file, capsys):
    argv = ["evaluate", one_file, "--wmax", "25", "--engine", "dask", "--scheduler",
            "tcp://127.0.0.1:1"]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main(argv) == 2
    assert "cannot connect to the Dask scheduler at 'tcp://127.0.0.1:1'" in capsys.readouterr().err


def test_progress_of_the_read_and_the_passes(client, log, capsys):
    with DaskRows(log[0], SPEC, client, progress=True) as rows:
        assert "elcvx: reading on the cluster" in capsys.readouterr().err
        rows.map_reduce(sums, add)
        rows.map_reduce(sums, add)
        assert rows.passes == 2
        assert "elcvx: pass 2 on the cluster" in capsys.readouterr().err


def test_select_on_the_dask_engine_gives_the_memory_engines_numbers(tmp_path, capsys):
    """`elcvx select --engine dask` reads a folder of Parquet files on the workers: the same
    JSON as `--engine stream`."""
    rng = np.random.default_rng(4)
    n = 900
    a = rng.integers(0, 2, n)
    df = pd.DataFrame({"logging_prob": 0.5,
                       "reward": (rng.random(n) < np.where(a == 1, 0.7, 0.4)).astype(float),
                       "good": np.where(a == 1, 0.8, 0.2), "bad": np.where(a == 1, 0.3, 0.7)})
    (tmp_path / "parts").mkdir()
    for i, part in enumerate((df.iloc[:300], df.iloc[300:])):
        part.to_parquet(tmp_path / "parts" / f"{i}.parquet")
    outs = []
    for engine in ("stream", "dask"):
        assert main(["select", str(tmp_path / "parts"), "--candidates", "good,bad", "--baseline",
                     "logging", "--pmin", "0.5", "--engine", engine, "--format", "json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] and outs[1]["chosen"] == "good" and outs[1]["files"] == 2
