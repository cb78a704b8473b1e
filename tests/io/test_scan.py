"""Logs evaluated chunk by chunk (elcvx.io.scan_log): estimate, interval, profile and the weight
check on a scan equal those on the same rows in memory, whichever cache holds the chunks and
wherever the chunks' boundaries fall; and what a scan refuses, it says."""

from __future__ import annotations

import os

import numpy as np
import pytest

import elcvx
from elcvx import Sample
from elcvx import io as eio
from elcvx.chunked import ChunkedMoments
from elcvx.engines.rows import InMemoryChunks, columns_of
from elcvx.errors import InvalidInputError, SolverError
from elcvx.testing import assert_agree

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

WMAX = 25.0
TOL = 1e-10  # the issue's: the engines agree to 1e-10 on the same data


def _log(n, seed, counts=False):
    """Continuous weights in [0, WMAX] (they do not compress), rewards in [0, 1] with ties."""
    rng = np.random.default_rng(seed)
    w = np.minimum(rng.exponential(1.0, n) * rng.choice([0.4, 1.9], n), WMAX)
    r = np.round(rng.random(n) * (rng.random(n) < 0.5), 1)
    df = pd.DataFrame({"w": w, "r": r})
    if counts:
        df["c"] = rng.integers(1, 4, n).astype(float)
    return df


def _write(folder, parts):
    os.makedirs(folder, exist_ok=True)
    for i, df in enumerate(parts):
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False),
                       os.path.join(folder, f"part-{i}.parquet"), row_group_size=500)


def _rows(parts, counts=False):
    whole = pd.concat(parts, ignore_index=True)
    return Sample(whole["w"], whole["r"], counts=whole["c"] if counts else None, wmax=WMAX)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scan") / "logs"
    parts = [_log(1700, 1), _log(900, 2), _log(1400, 3)]
    _write(folder, parts)
    return folder, _rows(parts)


def _assert_same_numbers(scan, rows, values=(0.15, 0.2, 0.3), *, on_scan=(), on_rows=()):
    """Estimate, both ends of the interval and the profile of ``scan`` equal those of the same
    rows in memory to TOL; ``on_scan``/``on_rows``: the same moment constraints, naming the
    scan's columns / holding the rows' values."""
    want = elcvx.estimate(rows, constraints=on_rows)
    got = elcvx.estimate(scan, constraints=on_scan)
    assert_agree([got.value, got.loglik, got.beta, *got.lambdas],
                 [want.value, want.loglik, want.beta, *want.lambdas], tol=TOL, what="estimate")
    assert got.q is None and got.work[0] == want.work[0]
    want = elcvx.interval(rows, constraints=on_rows)
    got = elcvx.interval(scan, constraints=on_scan)
    assert_agree([got.low, got.high], [want.low, want.high], tol=TOL, what="interval")
    assert got.status == want.status == "optimal"
    want = elcvx.profile(rows, values, constraints=on_rows)
    got = elcvx.profile(scan, values, constraints=on_scan)
    assert_agree(got.statistic, want.statistic, tol=TOL, what="profile")


@pytest.mark.parametrize("cache", ["memory", "disk", "none"])
@pytest.mark.parametrize("chunk_size", [333, 1 << 18])
def test_scan_equals_the_rows_in_memory(logs, cache, chunk_size):
    folder, rows = logs
    scan = eio.scan_log(folder, wmax=WMAX, chunk_size=chunk_size, cache=cache, max_pairs=10)
    assert scan.compressed is None and scan.n_rows == rows.n_rows == 4000
    assert scan.w_observed == (float(rows.w.min()), float(rows.w.max()))
    _assert_same_numbers(scan, rows)


def test_the_cross_check_can_fail(logs, tmp_path):
    # The comparison above is not vacuous: one row's reward changed by 0.1 moves every number
    # by more than the tolerance.
    folder, rows = logs
    r = rows.r.copy()
    r[1234] = 0.1 if r[1234] != 0.1 else 0.2
    with pytest.raises(AssertionError):
        _assert_same_numbers(eio.scan_log(folder, wmax=WMAX, max_pairs=10), rows.with_rewards(r))


def test_auto_cache_spills_to_disk_past_its_size(logs):
    folder, rows = logs
    scan = eio.scan_log(folder, wmax=WMAX, chunk_size=500, max_pairs=10, cache_bytes=20_000)
    assert "(disk)" in scan.notes[0]
    _assert_same_numbers(scan, rows)


def test_counts_and_a_reward_range(tmp_path):
    parts = [_log(800, 4, counts=True), _log(700, 5, counts=True)]
    whole = pd.concat(parts, ignore_index=True)
    rows = Sample(whole["w"], 3 * whole["r"] - 1, counts=whole["c"], wmax=WMAX, rmin=-1, rmax=2)
    for df in parts:  # rewards on [-1, 2] in the files too
        df["r"] = 3 * df["r"] - 1
    _write(tmp_path / "logs", parts)
    scan = eio.scan_log(tmp_path / "logs", wmax=WMAX, count="c", rmin=-1, rmax=2, max_pairs=10,
                        cache="disk", chunk_size=256)
    assert scan.n == rows.n
    _assert_same_numbers(scan, rows, values=(0.0, 0.5))


def test_a_log_that_compresses_is_held_compressed(tmp_path):
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"w": rng.choice([0.0, 1.0 / 0.9, 10.0], 3000, p=[0.5, 0.45, 0.05]),
                       "r": (rng.random(3000) < 0.3).astype(float)})
    _write(tmp_path / "logs", [df.iloc[:1000], df.iloc[1000:]])
    scan = eio.scan_log(tmp_path / "logs", wmax=10.0, chunk_size=128)
    assert scan.compressed == 6 and "compressed exactly to 6 distinct (w, r) rows" in scan.notes[0]
    _assert_same_numbers(scan, Sample(df["w"], df["r"], wmax=10.0))


def test_rho_rules_upper_side_and_weight_check(logs):
    folder, rows = logs
    scan = eio.scan_log(folder, wmax=np.inf, max_pairs=10)
    rows = Sample(rows.w, rows.r)  # wmax = inf: an extra atom carries mass
    for rho in ("snips", "self-consistent", "midpoint", 0.3):
        got, want = elcvx.estimate(scan, rho=rho), elcvx.estimate(rows, rho=rho)
        assert_agree([got.value, got.mass_ex, got.wmass_ex], [want.value, want.mass_ex, want.wmass_ex], tol=TOL)
    got, want = scan.weight_check(), rows.weight_check()
    assert_agree([got.mean, got.se, got.statistic, got.unobserved_wmass],
                 [want.mean, want.se, want.statistic, want.unobserved_wmass], tol=TOL)
    assert got.message == want.message


def test_chunked_model_on_its_own(logs):
    # The engine interface itself: chunks of any size, in any grouping, give the same passes.
    _, rows = logs
    cols = columns_of(rows)
    cut = [0, 1, 17, 2500, 4000]
    chunks = [type(cols)(cols.w[a:b], cols.u[a:b], None, cols.G[:, a:b]) for a, b in zip(cut, cut[1:])]

    class Scan:
        engine, n, n_rows, wmin, wmax = InMemoryChunks(chunks), rows.n, rows.n_rows, rows.wmin, rows.wmax

    from elcvx import fast
    from elcvx import model

    got = fast.mle_of(ChunkedMoments(Scan()))
    want = fast.mle_of(model.Moments(rows, ()))
    assert_agree([got.beta, got.loglik], [want.beta, want.loglik], tol=TOL)
    assert got.q is None and np.allclose(got.sums[:2], [want.q.sum(), want.q @ rows.w], rtol=TOL, atol=0)


def test_what_a_scan_refuses(logs, tmp_path):
    folder, _ = logs
    scan = eio.scan_log(folder, wmax=WMAX, max_pairs=10)
    with pytest.raises(InvalidInputError, match="method='cvxpy' needs the log's rows in memory"):
        elcvx.estimate(scan, method="cvxpy")
    with pytest.raises(InvalidInputError, match="calibration='bootstrap' needs the log's rows"):
        elcvx.interval(scan, calibration="bootstrap")
    with pytest.raises(InvalidInputError, match="cache='ram' must be one of"):
        eio.scan_log(folder, wmax=WMAX, cache="ram")
    with pytest.raises(InvalidInputError, match="sample must be an elcvx.Sample or a log read by elcvx.io, got str"):
        elcvx.baselines.ips("a log")


def test_bad_value_names_file_and_row(tmp_path):
    parts = [_log(300, 8), _log(300, 9)]
    parts[1].loc[41, "w"] = -2.0
    _write(tmp_path / "logs", parts)
    with pytest.raises(InvalidInputError, match=r"part-1\.parquet: row 42: weight \(column 'w'\) = -2\.0 is outside"):
        eio.scan_log(tmp_path / "logs", wmax=WMAX, chunk_size=64, max_pairs=10)


def test_moment_constraints_from_columns(tmp_path):
    # A control variate E_Q[w f] = E_pi[f] read from a column of the log, against the same
    # constraint given as values on the rows in memory.
    parts = []
    for seed in (11, 12):
        df = _log(1500, seed)
        df["g"] = df["w"] * np.random.default_rng(seed).random(len(df))
        parts.append(df)
    _write(tmp_path / "logs", parts)
    whole = pd.concat(parts, ignore_index=True)
    rows = Sample(whole["w"], whole["r"], wmax=WMAX)
    scan = eio.scan_log(tmp_path / "logs", wmax=WMAX, constraint_columns=["g"], chunk_size=700)
    assert scan.compressed is None and scan.constraint_columns == ("g",)
    on_rows = elcvx.MomentConstraint(whole["g"], 0.5, atom_range=(0.0, WMAX), name="g")
    by_name = elcvx.MomentConstraint("g", 0.5, atom_range=(0.0, WMAX))
    want, got = elcvx.estimate(rows, constraints=on_rows), elcvx.estimate(scan, constraints=by_name)
    assert_agree([got.value, got.loglik, *got.lambdas], [want.value, want.loglik, *want.lambdas], tol=TOL)
    assert abs(got.value - elcvx.estimate(scan).value) > 1e-4  # the constraint moves the estimate
    want = elcvx.interval(rows, constraints=on_rows)
    got = elcvx.interval(scan, constraints=by_name)
    assert_agree([got.low, got.high], [want.low, want.high], tol=TOL)
    v = [0.2, 0.25]
    assert_agree(elcvx.profile(scan, v, constraints=by_name).statistic,
                 elcvx.profile(rows, v, constraints=on_rows).statistic, tol=TOL)
    with pytest.raises(InvalidInputError, match="names the column 'h', which the sample does not hold"):
        elcvx.estimate(scan, constraints=elcvx.MomentConstraint("h", 0.5, atom_range=(0, 1)))
    with pytest.raises(InvalidInputError, match="names the column 'g', which the sample does not hold"):
        elcvx.estimate(rows, constraints=by_name)
    with pytest.raises(InvalidInputError, match="a scanned log's constraints name its columns"):
        elcvx.estimate(scan, constraints=on_rows)


def test_a_constraint_column_must_be_finite(tmp_path):
    df = _log(200, 13)
    df["g"] = 1.0
    df.loc[57, "g"] = np.inf
    _write(tmp_path / "logs", [df])
    with pytest.raises(InvalidInputError, match=r"part-0\.parquet: row 58: column 'g' is inf, not a finite number"):
        eio.scan_log(tmp_path / "logs", wmax=WMAX, constraint_columns="g")


@pytest.mark.parametrize("cache", ["memory", "disk", "none"])
def test_progress_of_the_passes(logs, capsys, cache):
    folder, _ = logs
    scan = eio.scan_log(folder, wmax=WMAX, max_pairs=10, cache=cache, chunk_size=1000, progress=True)
    capsys.readouterr()
    passes = elcvx.estimate(scan).work[0]
    err = capsys.readouterr().err
    assert f"elcvx: pass {passes} [" in err and "/4000 rows" in err  # (redrawn 10 times a second)
    quiet = eio.scan_log(folder, wmax=WMAX, max_pairs=10, cache=cache, progress=False)
    capsys.readouterr()
    elcvx.estimate(quiet)
    assert capsys.readouterr().err == ""


def test_your_own_engine(logs):
    # scan_engine: any object with map_reduce over Columns (here chunks in a list, cut unevenly).
    _, rows = logs
    cols = eio.columns_of(rows)
    cut = [0, 5, 1999, 4000]
    engine = InMemoryChunks([eio.Columns(cols.w[a:b], cols.u[a:b], None, cols.G[:, a:b])
                             for a, b in zip(cut, cut[1:])])
    scan = eio.scan_engine(engine, wmax=WMAX, name="three chunks")
    assert (scan.n_rows, scan.n, scan.w_observed) == (4000, 4000.0, (float(rows.w.min()), float(rows.w.max())))
    _assert_same_numbers(scan, rows)
    with pytest.raises(InvalidInputError, match=r"three chunks: weights from 0\.0.* outside \[wmin, wmax\] = \[0\.0, 2\.0\]"):
        eio.scan_engine(engine, wmax=2.0, name="three chunks")
    with pytest.raises(InvalidInputError, match="rmin=1.0 must be < rmax=1.0"):
        eio.scan_engine(engine, rmin=1.0, rmax=1.0)


def test_when_a_log_is_held_compressed(tmp_path, monkeypatch):
    # Decided on the first min(2 max_pairs, 262144) rows: compressed at least two to one, or kept in chunks;
    # a log whose pairs grow only later is read again, in chunks. Each gives the rows' numbers.
    from elcvx.io import stream

    monkeypatch.setattr(stream, "_MERGE_ROWS", 50)  # (merge, and so see the pairs, every 50 rows)
    rng = np.random.default_rng(9)
    few = pd.DataFrame({"w": rng.choice([0.5, 2.0], 600), "r": rng.choice([0.0, 1.0], 600)})
    late = pd.concat([few, _log(600, 10)], ignore_index=True)  # continuous weights after 600 rows
    cases = {"few": (few, 4), "continuous": (_log(600, 11), None), "late": (late, None)}
    for name, (df, pairs) in cases.items():
        _write(tmp_path / name, [df.iloc[:300], df.iloc[300:]])
        scan = eio.scan_log(tmp_path / name, wmax=WMAX, max_pairs=100, chunk_size=100)
        assert scan.compressed == pairs, name
        assert scan.n_rows == len(df)
        _assert_same_numbers(scan, Sample(df["w"], df["r"], wmax=WMAX), values=(0.3,))


# -- every cache holds the constraints' columns; a log that stops compressing is kept whole -----

def _with_columns(df, seed):
    """``df`` with two constraint columns: a control variate ``w f`` (f in [0, 1]) and a
    per-action indicator ``w 1[a = 1]`` (a drawn at random), both in [0, WMAX]."""
    rng = np.random.default_rng(seed)
    out = df.copy()
    out["g0"] = df["w"] * rng.random(len(df))
    out["g1"] = df["w"] * (rng.random(len(df)) < 0.4)
    return out


# Targets off the columns' means (0.564 and 0.410 on these rows: the constraints move the
# estimate by 2.2e-3 and 3.2e-3), with their atoms' ranges.
_TARGETS = {"g0": (0.45, (0.0, WMAX)), "g1": (0.42, (0.0, WMAX))}


def _constraints(k, whole):
    """The first ``k`` constraints, naming the scan's columns and holding the rows' values."""
    names = list(_TARGETS)[:k]
    on_scan = [elcvx.MomentConstraint(n, _TARGETS[n][0], atom_range=_TARGETS[n][1]) for n in names]
    on_rows = [elcvx.MomentConstraint(whole[n].to_numpy(), _TARGETS[n][0],
                                      atom_range=_TARGETS[n][1], name=n) for n in names]
    return names, on_scan, on_rows


@pytest.fixture(scope="module")
def constrained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("constrained") / "logs"
    parts = [_with_columns(_log(1100, 31), 31), _with_columns(_log(900, 32), 32)]
    _write(folder, parts)
    return folder, pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("cache", ["memory", "disk", "none", "auto"])
def test_constraint_columns_in_every_cache(constrained, cache, k):
    # The spill file held w, u and the counts only: with cache="disk" (and "auto" past
    # cache_bytes, here 20 kB) every estimate on a constrained scan raised IndexError.
    folder, whole = constrained
    names, on_scan, on_rows = _constraints(k, whole)
    scan = eio.scan_log(folder, wmax=WMAX, constraint_columns=names, cache=cache, chunk_size=333,
                        cache_bytes=20_000)
    assert scan.compressed is None and scan.constraint_columns == tuple(names)
    if cache in ("disk", "auto"):
        assert "(disk)" in scan.notes[0]
    rows = Sample(whole["w"], whole["r"], wmax=WMAX)
    _assert_same_numbers(scan, rows, (0.2, 0.3), on_scan=on_scan, on_rows=on_rows)
    moved = elcvx.estimate(scan, constraints=on_scan).value - elcvx.estimate(rows).value
    assert abs(moved) > 2e-3  # the constraints were applied


def test_constraint_cross_check_can_fail(constrained):
    # One row's constraint value changed by 1 (in memory only) moves the numbers past TOL.
    folder, whole = constrained
    names, on_scan, on_rows = _constraints(2, whole)
    scan = eio.scan_log(folder, wmax=WMAX, constraint_columns=names, cache="disk", chunk_size=333)
    g = whole["g1"].to_numpy().copy()
    g[1500] += 1.0
    on_rows[1] = elcvx.MomentConstraint(g, _TARGETS["g1"][0], atom_range=_TARGETS["g1"][1])
    with pytest.raises(AssertionError):
        _assert_same_numbers(scan, Sample(whole["w"], whole["r"], wmax=WMAX), (0.2,),
                             on_scan=on_scan, on_rows=on_rows)


def _compresses_then_overflows():
    """600 rows of 4 distinct (w, r), then 600 of continuous weights."""
    rng = np.random.default_rng(9)
    few = pd.DataFrame({"w": rng.choice([0.5, 2.0], 600), "r": rng.choice([0.0, 1.0], 600)})
    return pd.concat([few, _log(600, 10)], ignore_index=True)


@pytest.mark.parametrize("cache", ["memory", "disk", "none", "auto"])
def test_a_log_that_overflows_max_pairs_late(tmp_path, cache):
    # The first 200 rows (min(2 max_pairs, 262144)) compress 50 to 1, so the scan lets its chunks
    # go; the pairs are merged again only at the end (past 1,048,576 rows, or the last chunk),
    # where they exceed max_pairs. The scan held 0 chunks: the estimate failed with "no feasible
    # start" (cache="disk": AttributeError). Now it reads the log again, in chunks.
    df = _compresses_then_overflows()
    _write(tmp_path / "logs", [df.iloc[:700], df.iloc[700:]])
    scan = eio.scan_log(tmp_path / "logs", wmax=WMAX, max_pairs=100, chunk_size=100, cache=cache,
                        cache_bytes=10_000)
    assert scan.compressed is None and scan.n_rows == 1200
    assert ("(12 chunks)" if cache == "none" else "kept as 12 chunks") in scan.notes[0]
    _assert_same_numbers(scan, Sample(df["w"], df["r"], wmax=WMAX), values=(0.3,))


def test_zero_weights_with_real_counts(tmp_path):
    # Every weight 0: the rows carry no weight, every rho is a fixed point of the self-consistent
    # rule and the midpoint is taken. With these 42 real counts the rows' weighted mass rounded
    # to 1 - 1.1e-16, and rho = 0 / 1.1e-16 = 0: the rows gave 0 where their compression (and so
    # a scan that compresses them) gave the midpoint. (Found by the scan fuzz, seed 108.)
    rng = np.random.default_rng(0)
    n = int(rng.integers(2, 50))
    c = np.round(rng.uniform(0.25, 3, n), 3)
    df = pd.DataFrame({"w": np.zeros(n), "r": np.zeros(n), "c": c})
    _write(tmp_path / "logs", [df])
    rows = Sample(df["w"], df["r"], counts=df["c"])
    scan = eio.scan_log(tmp_path / "logs", count="c", wmax=np.inf, chunk_size=5)
    for log in (rows, rows.compress(), scan):
        est = elcvx.estimate(log)
        assert abs(est.value - 0.5) < 1e-12 and est.rho_rule == "self-consistent"
        assert_agree(est.value_range, (0.0, 1.0), tol=1e-12)


@pytest.mark.parametrize("cache", ["memory", "disk", "none"])
def test_baselines_on_a_scan(logs, tmp_path, cache):
    # IPS, SNIPS, ClippedDR, EMP, Gaussian, Binomial and CR(-2) are sums over the rows: on a scan
    # each chunk's sums are merged, and every number equals the one on the rows in memory.
    from elcvx import baselines, cressie_read

    folder, rows = logs
    scan = eio.scan_log(folder, wmax=WMAX, chunk_size=333, cache=cache, max_pairs=10)
    for fn, fields in ((baselines.ips, ("value",)), (baselines.snips, ("value",)),
                       (baselines.clipped_dr, ("value",)), (baselines.emp, ("value",)),
                       (baselines.gaussian_interval, ("low", "high")),
                       (baselines.clopper_pearson_interval, ("low", "high")),
                       (cressie_read.estimate, ("value", "beta", "gamma")),
                       (cressie_read.interval, ("low", "high"))):
        got, want = fn(scan), fn(rows)
        assert_agree([getattr(got, f) for f in fields], [getattr(want, f) for f in fields],
                     tol=TOL, what=fn.__name__)
    # CR(-2)'s statistics are exact rationals: merged chunks give them to the last bit.
    got, want = (cressie_read.CressieReadStats.from_sample(x) for x in (scan, rows))
    assert [got.n, got.sum_w, got.sum_w2, got.sum_wu, got.sum_w2u, got.sum_w2u2] == [
        want.n, want.sum_w, want.sum_w2, want.sum_wu, want.sum_w2u, want.sum_w2u2]
    assert tuple(cressie_read.interval(scan)) == tuple(cressie_read.interval(rows))
    # Against the definitions, on the unit scale (rewards here are on [0, 1]): IPS = mean(w r).
    assert_agree(baselines.ips(scan).value, float(np.mean(rows.w * rows.r)), tol=1e-12)
    assert_agree(baselines.snips(scan).value, float(rows.w @ rows.r / rows.w.sum()), tol=1e-12)
