"""elcvx.io: every format reads to the same Sample; errors name the line; dsjson; the obp adapter."""

import gzip
import io as stdio
import json
import shutil
import sys

import numpy as np
import pytest

import elcvx
from elcvx import Sample
from elcvx import io as eio
from elcvx.adapters import EmpiricalLikelihood
from elcvx.errors import InvalidInputError
from elcvx.testing import assert_agree
from log_files import PMIN, TARGET, dsjson_events, expected, make_frame, write, write_dsjson

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")




@pytest.fixture(scope="module")
def frame():
    return make_frame()


FILES = ["log.csv", "log.csv.gz", "log.tsv", "log.parquet", "log.parquet.gz", "log.jsonl",
         "log.jsonl.gz", "log.json"]


@pytest.mark.parametrize("name", FILES)
def test_every_format_reads_the_same_sample(tmp_path, frame, name):
    path = write(frame, tmp_path / name)
    log = eio.read_log(path, target_prob="p_target", logging_prob="p_log", reward="click",
                       pmin=PMIN)
    ref = expected(frame)
    assert log.format == name.split(".")[1].replace("json", "jsonl").replace("jsonll", "jsonl")
    assert log.n_rows == len(frame) and log.skipped == 0
    np.testing.assert_array_equal(log.sample.w, ref.w)
    np.testing.assert_array_equal(log.sample.r, ref.r)
    assert log.sample.wmax == 1 / PMIN and log.sample.counts is None
    assert log.columns == {"w": "p_target / p_log", "r": "click"}


def test_weight_cost_and_count_columns(tmp_path, frame):
    path = write(frame, tmp_path / "log.csv")
    by_probs = eio.read_log(path, target_prob="p_target", logging_prob="p_log", reward="click",
                            count="n", wmax=10)
    by_weight = eio.read_log(path, weight="w", cost="loss", cmin=-1, cmax=0, count="n", wmax=10)
    for s in (by_probs.sample, by_weight.sample):
        assert_agree(s.w, frame["w"], what="w")
        np.testing.assert_array_equal(s.r, frame["click"])
        np.testing.assert_array_equal(s.counts, frame["n"])
        assert (s.rmin, s.rmax, s.wmax) == (0.0, 1.0, 10.0)
    assert by_weight.columns == {"w": "w", "r": "-loss", "counts": "n"}
    # A cost range [cmin, cmax] is the reward range [-cmax, -cmin].
    s = eio.read_log(path, weight="w", cost="loss", cmin=-3, cmax=2, wmax=10).sample
    assert (s.rmin, s.rmax) == (-2.0, 3.0)
    # Same answers as the API on the same numbers.
    assert elcvx.estimate(by_probs.sample).value == elcvx.estimate(by_weight.sample).value


def test_default_columns_and_from_dataframe(frame):
    df = frame.rename(columns={"p_target": "target_prob", "p_log": "logging_prob", "click": "reward"})
    s = Sample.from_dataframe(df, pmin=PMIN)
    ref = expected(frame)
    np.testing.assert_array_equal(s.w, ref.w)
    np.testing.assert_array_equal(s.r, ref.r)
    s2 = Sample.from_dataframe(frame[["w", "loss"]].rename(columns={"loss": "cost"}),
                               cmin=-1, cmax=0, wmax=10)
    np.testing.assert_array_equal(s2.r, frame["click"])
    with pytest.raises(InvalidInputError, match="no importance weights"):
        Sample.from_dataframe(frame[["click"]])
    with pytest.raises(InvalidInputError, match="no rewards"):
        Sample.from_dataframe(frame[["w"]], wmax=10)


def test_dataframe_errors_name_the_row(frame):
    df = frame.copy()
    df.index = [f"r{i}" for i in range(len(df))]
    first = int(np.flatnonzero(frame["w"] > 5)[0])
    with pytest.raises(InvalidInputError, match=rf"row 'r{first}': weight \(column 'w'\) = 10\.0 is outside"):
        Sample.from_dataframe(df, weight="w", reward="click", wmax=5)
    df["click"] = df["click"].astype(object)
    df.loc["r3", "click"] = "yes"
    with pytest.raises(InvalidInputError, match="row 'r3': column 'click' is 'yes', not a number"):
        Sample.from_dataframe(df, weight="w", reward="click", wmax=10)
    with pytest.raises(InvalidInputError, match="has no column 'clicks'.*'click'"):
        Sample.from_dataframe(df, weight="w", reward="clicks", wmax=10)
    with pytest.raises(InvalidInputError, match="not both"):
        Sample.from_dataframe(df, weight="w", target_prob="p_target", logging_prob="p_log")
    with pytest.raises(InvalidInputError, match="without logging_prob"):
        Sample.from_dataframe(df, target_prob="p_target", reward="click")
    with pytest.raises(InvalidInputError, match="reward range .* or the cost range"):
        Sample.from_dataframe(frame, weight="w", cost="loss", rmin=0, cmin=0, cmax=1, wmax=10)


def lines_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_errors_name_the_line(tmp_path):
    good = "w,reward\n1,0\n2,1\n"
    cases = [
        ("extra.csv", good + "0.5,1,3\n", "line 4 is malformed: 3 fields where the header has 2"),
        ("short.csv", good + "0.5\n", "line 4 is malformed: 1 field where the header has 2"),
        ("text.csv", good + "0.5,maybe\n", "line 4: column 'reward' is 'maybe', not a number"),
        ("empty_field.csv", good + "0.5,\n2,1\n", "line 4: column 'reward' has no value"),
        ("blank_mid.csv", "w,reward\n1,0\n\n2,1\n", "line 3: column 'w' has no value"),
        ("range.csv", good + "7,1\n", r"line 4: weight \(column 'w'\) = 7\.0 is outside \[0\.0, 5\.0\]"),
        ("reward.csv", good + "1,2\n", r"line 4: reward \(column 'reward'\) = 2\.0 is outside"),
        ("header_only.csv", "w,reward\n", "has no data rows"),
        ("nothing.csv", "", "is empty"),
    ]
    for name, text, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            eio.read_log(lines_file(tmp_path, name, text), wmax=5)
    # Trailing blank lines are not rows; gzip is detected from the bytes, not the name.
    s = eio.read_log(lines_file(tmp_path, "trailing.csv", good + "\n\n"), wmax=5).sample
    assert s.w.tolist() == [1.0, 2.0]
    (tmp_path / "zipped.csv").write_bytes(gzip.compress(good.encode()))
    assert eio.read_log(tmp_path / "zipped.csv", wmax=5).sample.r.tolist() == [0.0, 1.0]
    with pytest.raises(InvalidInputError, match="cannot read .*missing.csv: no such file"):
        eio.read_log(tmp_path / "missing.csv")


def test_jsonl_errors_name_the_line(tmp_path):
    cases = [
        ("bad.jsonl", '{"w": 1, "reward": 0}\n\n{"w": 2, "reward": 1\n', "line 3 is not valid JSON"),
        ("list.jsonl", '{"w": 1, "reward": 0}\n[1, 2]\n', "line 2 is not a JSON object"),
        ("key.jsonl", '{"w": 1, "reward": 0}\n{"w": 2}\n', "line 2 has no key 'reward'"),
        ("null.jsonl", '{"w": 1, "reward": 0}\n{"w": 2, "reward": null}\n', "line 2: column 'reward' has no value"),
        ("text.jsonl", '{"w": 1, "reward": "x"}\n', "line 1: column 'reward' is 'x', not a number"),
    ]
    for name, text, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            eio.read_log(lines_file(tmp_path, name, text), weight="w", reward="reward", wmax=5)


def test_detect_format(tmp_path, frame):
    write(frame, tmp_path / "a.parquet")
    shutil.copy(tmp_path / "a.parquet", tmp_path / "noext")
    assert eio.detect_format(tmp_path / "noext") == "parquet"
    ds = lines_file(tmp_path, "log.json", json.dumps({"_label_cost": 0, "_label_probability": 0.5}) + "\n")
    assert eio.detect_format(ds) == "dsjson"
    assert eio.detect_format(lines_file(tmp_path, "t.txt", "w,reward\n1,1\n")) == "csv"
    with pytest.raises(InvalidInputError, match="dsjson"):
        eio.read_log(ds)
    with pytest.raises(InvalidInputError, match="cannot read .*x.parquet as Parquet"):
        eio.read_log(lines_file(tmp_path, "x.parquet", "garbage"), wmax=5)


def test_missing_pandas_names_the_extra(tmp_path, monkeypatch):
    path = lines_file(tmp_path, "a.csv", "w,reward\n1,1\n")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(eio.MissingDependencyError, match=r"pip install 'elcvx\[io\]'"):
        eio.read_log(path, wmax=5)


def test_progress_bar(tmp_path, capsys, frame):
    path = write(frame, tmp_path / "log.csv.gz")
    eio.read_log(path, weight="w", reward="click", wmax=10, progress=True)
    err = capsys.readouterr().err
    assert "elcvx: reading log.csv.gz [" in err and "%" in err and err.endswith("\r\x1b[K")
    eio.read_log(path, weight="w", reward="click", wmax=10)  # not a terminal: no bar
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------------------------------------
# dsjson
# ------------------------------------------------------------------------------------------------


def test_dsjson_mapping_and_target_sources(tmp_path):
    path = write_dsjson(tmp_path / "log.dsjson", dsjson_events())
    kept = [0, 1, 3, 4, 5, 6]
    logging = np.array([0.8, 0.8, 0.8, 0.1, 0.8, 0.8])  # ev4: p[a.index(1)] with a = [1, 2, 3]
    cost = np.array([-1.0, 0.0, -0.5, 0.0, -1.0, -1.0])
    target = np.array(TARGET)[kept]
    log = eio.read_dsjson(path, target_prob=TARGET, pdrop="ignore", pmin=PMIN)
    assert (log.format, log.n_rows, log.skipped) == ("dsjson", 7, 1)
    assert any("skipped 1 of 7 events" in n for n in log.notes)
    assert_agree(log.sample.w, target / logging, what="w")
    np.testing.assert_array_equal(log.sample.r, -cost)
    assert (log.sample.rmin, log.sample.rmax, log.sample.wmax) == (0.0, 1.0, 10.0)
    # The same target probabilities: per kept event, from a callable, from files.
    per_kept = eio.read_dsjson(path, target_prob=target, pdrop="ignore", pmin=PMIN)
    called = eio.read_dsjson(path, target_prob=lambda rec: TARGET[int(rec["EventId"][2:])],
                             pdrop="ignore", pmin=PMIN)
    pd.DataFrame({"pi": TARGET}).to_csv(tmp_path / "by_line.csv", index=False)
    by_line = eio.read_dsjson(path, target_prob=tmp_path / "by_line.csv", target_prob_column="pi",
                              pdrop="ignore", pmin=PMIN)
    ids = pd.DataFrame({"EventId": [f"ev{i}" for i in range(7)], "target_prob": TARGET})
    write(ids.iloc[::-1], tmp_path / "by_id.jsonl")  # reversed: only the EventId join is right
    by_id = eio.read_dsjson(path, target_prob=str(tmp_path / "by_id.jsonl"), pdrop="ignore", pmin=PMIN)
    for other in (per_kept, called, by_line, by_id):
        np.testing.assert_array_equal(other.sample.w, log.sample.w)


def test_dsjson_pdrop_counts(tmp_path):
    path = write_dsjson(tmp_path / "log.dsjson", dsjson_events())
    v = np.array([1.0, 1.0, 2.0, 1.0, 1.0, 1.0])  # 1/(1 - pdrop) for the kept events
    inverse = eio.read_dsjson(path, target_prob=TARGET, pdrop="inverse", pmin=PMIN).sample
    np.testing.assert_array_equal(inverse.counts, v)
    ess = eio.read_dsjson(path, target_prob=TARGET, pmin=PMIN).sample  # the default
    assert_agree(ess.counts, v * v.sum() / (v @ v), what="ess counts")
    assert_agree(ess.n, v.sum() ** 2 / (v @ v), what="Kish's effective sample size")
    assert ess.n < ess.n_rows  # never more examples than events kept
    # Same point estimate (counts proportional); the ess interval is the wider.
    assert_agree(elcvx.estimate(ess).value, elcvx.estimate(inverse).value, what="estimate")
    lo_e, hi_e = elcvx.interval(ess)
    lo_i, hi_i = elcvx.interval(inverse)
    assert lo_e <= lo_i + 1e-9 and hi_e >= hi_i - 1e-9
    # A constant pdrop thins uniformly: counts of 1.
    events = [dict(e, pdrop=0.3) for e in dsjson_events()]
    constant = eio.read_dsjson(write_dsjson(tmp_path / "c.dsjson", events), target_prob=TARGET, pmin=PMIN)
    assert constant.sample.counts is None and constant.sample.n == 6


def test_dsjson_errors(tmp_path):
    events = dsjson_events()

    def fails(evs, message, target=TARGET, **kw):
        path = write_dsjson(tmp_path / "e.dsjson", evs, blank_after=None)
        with pytest.raises(InvalidInputError, match=message):
            eio.read_dsjson(path, target_prob=target, **kw)

    no_cost = [dict(e) for e in events]
    del no_cost[3]["_label_cost"]
    fails(no_cost, "line 4 has no '_label_cost'")
    fails([dict(e, pdrop=1.0) if i == 5 else e for i, e in enumerate(events)], r"line 6: pdrop=1\.0 must lie in \[0, 1\)")
    fails([dict(e, _label_cost="high") if i == 1 else e for i, e in enumerate(events)], "line 2: _label_cost is 'high', not a number")
    fails([dict(e, _outcomes=[]) if i == 0 else e for i, e in enumerate(events)], "line 1 is a conditional-bandit")
    fails(events, "target_prob has 5 values but the log has 7 events .6 after skipping", target=TARGET[:5])
    fails([dict(e, _label_cost=-2.0) if i == 5 else e for i, e in enumerate(events)],
          r"line 6: _label_cost = -2\.0 is outside the cost range \[-1\.0, 0\.0\]", pmin=PMIN)
    fails(events, r"line 1: weight \(target_prob / _label_probability\) = 1\.25 is outside \[0\.0, 1\.2\]", wmax=1.2)
    path = tmp_path / "broken.dsjson"
    path.write_text(json.dumps(events[0]) + "\n" + json.dumps(events[1])[:-5] + "\n")
    with pytest.raises(InvalidInputError, match="line 2 is not valid JSON"):
        eio.read_dsjson(path, target_prob=TARGET)
    ids = pd.DataFrame({"EventId": [f"ev{i}" for i in range(6)], "target_prob": TARGET[:6]})
    ids.to_csv(tmp_path / "ids.csv", index=False)
    fails(events, "line 7: EventId 'ev6' is not in", target=str(tmp_path / "ids.csv"))
    fails(events, "target_prob.record. raised KeyError", target=lambda rec: rec["nope"])


# ------------------------------------------------------------------------------------------------
# The Open Bandit Pipeline adapter
# ------------------------------------------------------------------------------------------------
def obp_inputs(frame, len_list=1):
    n = len(frame)
    target_action = np.where(frame["p_target"] == 1, frame["action"], (frame["action"] + 1) % 3)
    dist = np.zeros((n, 3, len_list))
    dist[np.arange(n), target_action, 0] = 1.0
    if len_list > 1:
        dist[:, :, 1] = 1 / 3
    return dict(reward=frame["click"].to_numpy(), action=frame["action"].to_numpy(),
                action_dist=dist, pscore=frame["p_log"].to_numpy())


def test_obp_adapter_matches_the_api(frame):
    inputs = obp_inputs(frame)
    ref = expected(frame)
    el = EmpiricalLikelihood(pmin=PMIN, calibration="f")
    assert el.estimator_name == "el"
    assert el.estimate_policy_value(**inputs) == elcvx.estimate(ref).value
    ci = el.estimate_interval(**inputs, alpha=0.05, n_bootstrap_samples=10, random_state=0)
    low, high = elcvx.interval(ref, confidence_level=0.95, calibration="f")
    assert ci == {"mean": elcvx.estimate(ref).value, "95.0% CI (lower)": low, "95.0% CI (upper)": high}
    assert list(el.estimate_interval(**inputs, alpha=0.1)) == ["mean", "90.0% CI (lower)", "90.0% CI (upper)"]
    # obp's position argument and estimated pscore.
    two = obp_inputs(frame, len_list=2)
    assert el.estimate_policy_value(**two, position=np.zeros(len(frame), dtype=int)) == \
        elcvx.estimate(ref).value
    est = EmpiricalLikelihood(pmin=PMIN, use_estimated_pscore=True)
    moved = dict(inputs, estimated_pscore=inputs.pop("pscore"))
    assert est.estimate_policy_value(**moved) == elcvx.estimate(ref).value
    with pytest.raises(InvalidInputError, match="position is needed"):
        el.estimate_policy_value(**two)
    with pytest.raises(InvalidInputError, match="pscore is needed"):
        el.estimate_policy_value(**dict(inputs, pscore=None))
    with pytest.raises(InvalidInputError, match="calibration"):
        EmpiricalLikelihood(calibration="z")


# ------------------------------------------------------------------------------------------------
# Duplicated column names
# ------------------------------------------------------------------------------------------------
def test_duplicated_columns_are_an_error_naming_them(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    csv = lines_file(tmp_path, "d.csv", "w,r,w\n1,0.5,2\n2,0.1,3\n")
    lines_file(tmp_path, "d.tsv", "w\tr\tw\n1\t0.5\t2\n2\t0.1\t3\n")
    (tmp_path / "d.csv.gz").write_bytes(gzip.compress(csv.read_bytes()))
    lines_file(tmp_path, "d.jsonl", '{"w": 1, "r": 0.5}\n{"w": 1, "r": 0.5, "w": 2}\n')
    pq.write_table(pa.table([[1.0, 2.0], [0.5, 0.1], [2.0, 3.0]], names=["w", "r", "w"]),
                   tmp_path / "d.parquet")
    for name, where in [("d.csv", ""), ("d.tsv", ""), ("d.csv.gz", ""), ("d.parquet", ""),
                        ("d.jsonl", ": line 2")]:
        path = tmp_path / name
        what = "keys" if name.endswith("jsonl") else "columns"
        message = f"{path}{where} has two {what} named 'w' ({what} 1 and 3)"
        for read in (lambda: eio.read_log(path, wmax=5), lambda: eio.read_table(path)):
            with pytest.raises(InvalidInputError) as exc:
                read()
            assert str(exc.value).startswith(message), (name, str(exc.value))
    # A DataFrame (pandas would have renamed a CSV's second 'w' to 'w.1'; a frame can hold both).
    df = pd.DataFrame([[1.0, 0.5, 2.0]], columns=["w", "r", "w"])
    with pytest.raises(InvalidInputError, match=r"the DataFrame has two columns named 'w' \(columns 1 and 3\)"):
        Sample.from_dataframe(df, wmax=5)
    # A key spelt with an escape is the same key.
    escaped = lines_file(tmp_path, "e.jsonl", '{"w": 1, "r": 0.5, "\\u0077": 2}\n')
    with pytest.raises(InvalidInputError, match=r"e.jsonl: line 1 has two keys named 'w' \(keys 1 and 3\)"):
        eio.read_log(escaped, wmax=5)


def test_names_that_only_look_duplicated_are_read(tmp_path):
    # 'w.1' is a name of its own (detected from the header, not guessed from names); a duplicate
    # that is not read (here 'x') is not ambiguous; a key repeated inside a nested object, or
    # quoted as a value, is not the record's key twice.
    csv = lines_file(tmp_path, "ok.csv", "w,w.1,r,x,x\n1,5,0.5,a,b\n2,6,0.1,c,d\n")
    assert eio.read_log(csv, wmax=5).sample.w.tolist() == [1.0, 2.0]
    assert eio.read_log(csv, weight="w.1", reward="r", wmax=6).sample.w.tolist() == [5.0, 6.0]
    jsonl = lines_file(tmp_path, "ok.jsonl", '{"w": 1, "r": 0.5, "c": {"w": 3, "w": 4}, "s": "w"}\n')
    assert eio.read_log(jsonl, wmax=5).sample.w.tolist() == [1.0]


def test_the_line_of_a_bad_value_comes_from_the_errors_index(tmp_path, monkeypatch):
    # Row k of the data (0-based) is line k + 2 of a CSV file: the reader names it from
    # InvalidInputError.index and keeps the field, index and value Sample's check set.
    rows = "".join(f"{w},1\n" for w in (1, 2, 1, 9, 1, 8))
    path = lines_file(tmp_path, "bad.csv", "w,reward\n" + rows)
    with pytest.raises(InvalidInputError) as info:
        eio.read_log(path, wmax=5)
    err = info.value
    assert (err.field, err.index, err.value) == ("w", 3, 9.0)
    assert str(err) == (f"{path}: line 5: weight (column 'w') = 9.0 is outside [0.0, 5.0] "
                        "(2 such values) (the weights must lie in [wmin, wmax])")
    # The words of Sample's message are not read: another wording reaches the reader unchanged.
    from elcvx import _validation

    original = _validation.entry_error
    monkeypatch.setattr(_validation, "entry_error",
                        lambda name, i, value, reason: original(name, i, value, "REWORDED"))
    with pytest.raises(InvalidInputError, match=r"line 5: weight \(column 'w'\) = 9\.0 REWORDED$"):
        eio.read_log(path, wmax=5)


def semicolon_csv(frame, path, cols=("p_target", "p_log", "click")):
    """``frame``'s columns written by hand in a spreadsheet's dialect for decimal commas: fields
    separated by ';', each number's decimal point written ',' (0,8 for 0.8)."""
    lines = [";".join(cols)] + [";".join(repr(float(v)).replace(".", ",") for v in row)
                                for row in frame[list(cols)].itertuples(index=False)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_semicolon_decimal_comma_csv_reads_as_the_plain_one(tmp_path, frame):
    semi = semicolon_csv(frame, tmp_path / "semi.csv")
    plain = write(frame, tmp_path / "plain.csv")
    assert "0,8;" in semi.read_text()
    spec = eio.LogSpec(target_prob="p_target", logging_prob="p_log", reward="click", pmin=PMIN)
    ref = expected(frame)  # the sample of the frame's own numbers
    for read in (lambda p, **kw: eio.read_log(p, spec=spec, **kw).sample,
                 lambda p, **kw: eio.read_log_compressed(p, spec=spec, chunk_size=7, **kw).sample,
                 lambda p, **kw: eio.scan_log(p, spec=spec, chunk_size=7, max_pairs=1, **kw)):
        got, base = read(semi, sep=";", decimal=","), read(plain)
        assert got.n == base.n == len(frame)
        if isinstance(got, Sample) and got.n_rows == len(frame):
            np.testing.assert_array_equal(got.w, ref.w)
            np.testing.assert_array_equal(got.r, ref.r)
        assert elcvx.estimate(got).value == elcvx.estimate(base).value
        assert tuple(elcvx.interval(got)) == tuple(elcvx.interval(base))
    # The dialect in a spec, and read_table's keywords.
    dialect = eio.LogSpec(sep=";", decimal=",")
    df = eio.read_table(semi, spec=dialect)
    np.testing.assert_array_equal(df["p_log"].to_numpy(), frame["p_log"].to_numpy())
    assert df.index[0] == 2  # lines, as for any CSV


def test_a_semicolon_csv_error_names_sep_and_decimal(tmp_path, frame):
    semi = semicolon_csv(frame, tmp_path / "semi.csv")
    with pytest.raises(InvalidInputError) as exc:
        eio.read_log(semi, pmin=PMIN, reward="click")
    assert "separated by semicolons" in str(exc.value)
    assert "give sep=';'" in str(exc.value) and "decimal=','" in str(exc.value)
    with pytest.raises(InvalidInputError, match=r"line 2: column 'p_target' is '\d,\d', not a "
                       r"number; its numbers are written with a decimal comma: give "
                       "decimal=','") as exc:
        eio.read_log(semi, target_prob="p_target", logging_prob="p_log", reward="click",
                     pmin=PMIN, sep=";")
    assert exc.value.field == "p_target"


def test_decimal_comma_text_values_are_located(tmp_path):
    # A value that is not a number sends the read to text: the numbers before it still read
    # with their decimal comma, and the error names the line of the bad one. A '.' is not the
    # decimal mark here.
    path = tmp_path / "log.csv"
    for bad, shown in (("abc", "'abc'"), ("0.5", "'0.5'")):
        path.write_text(f"w;r\n0,5;1\n2;0,25\n1,5;{bad}\n")
        with pytest.raises(InvalidInputError, match=f"line 4: column 'r' is {shown}, not a number"):
            eio.read_log(path, wmax=4, sep=";", decimal=",")
        for chunked in (eio.read_log_compressed, eio.scan_log):
            with pytest.raises(InvalidInputError, match=f"line 4: column 'r' is {shown}"):
                chunked(path, wmax=4, sep=";", decimal=",", chunk_size=1)
    path.write_text("w;r\n0,5;1\n2;0,25\n1,5;0\n")
    s = eio.read_log(path, wmax=4, sep=";", decimal=",").sample
    assert s.w.tolist() == [0.5, 2.0, 1.5] and s.r.tolist() == [1.0, 0.25, 0.0]
    # Text columns of a DataFrame take decimal= too; sep does not apply to a frame.
    df = pd.DataFrame({"w": ["0,5", "2"], "r": ["1", "0,25"]})
    s = eio.sample_from_dataframe(df, wmax=4, decimal=",")
    assert s.w.tolist() == [0.5, 2.0] and s.r.tolist() == [1.0, 0.25]
    with pytest.raises(InvalidInputError, match="sep=';' does not apply to a DataFrame"):
        eio.sample_from_dataframe(df, spec=eio.LogSpec(sep=";"), wmax=4)


@pytest.mark.parametrize("bad, message", [
    (dict(sep=";;"), "sep=';;' must be one character"),
    (dict(decimal="1"), "decimal='1' must be one character, not a digit"),
    (dict(sep='"'), "must be one character, not a digit, a quote or a line break"),
    (dict(sep=";", decimal=";"), "sep=';' and decimal=';' are the same character"),
])
def test_the_dialect_is_checked(bad, message):
    with pytest.raises(InvalidInputError, match=message) as exc:
        eio.LogSpec(**bad)
    assert exc.value.field == list(bad)[-1] or exc.value.field in bad


def test_the_dialect_is_refused_where_no_csv_is_read(tmp_path, frame):
    parquet = write(frame, tmp_path / "log.parquet")
    with pytest.raises(InvalidInputError, match=r"sep=';' applies to CSV/TSV files, and .* is "
                       r"parquet: leave out sep \(--sep on the command line\)"):
        eio.read_log(parquet, sep=";", pmin=PMIN, reward="click")
    with pytest.raises(InvalidInputError, match="applies to CSV/TSV files"):
        eio.scan_log(parquet, decimal=",", pmin=PMIN, reward="click")
    with pytest.raises(InvalidInputError, match="decimal=',' does not apply to scan_engine"):
        eio.scan_engine(object(), spec=eio.LogSpec(decimal=","))
    # A TSV takes decimal commas without a separator: its fields are tabs.
    tsv = tmp_path / "log.tsv"
    tsv.write_text("w\tr\n0,5\t1\n2\t0,25\n")
    assert eio.read_log(tsv, wmax=4, decimal=",").sample.w.tolist() == [0.5, 2.0]


def test_every_reader_keeps_the_logging_probabilities(tmp_path, frame):
    # A Sample keeps only w = target / logging; the Log keeps the logging probabilities (IX's
    # logging_probs=), one per row of the sample, wherever the log holds them.
    names = dict(target_prob="p_target", logging_prob="p_log", reward="click", pmin=PMIN)
    for name in ("log.csv", "log.parquet", "log.jsonl"):
        log = eio.read_log(write(frame, tmp_path / name), **names)
        np.testing.assert_array_equal(log.logging_probs, frame["p_log"].to_numpy())
    from elcvx.io.stream import read_log_rows

    folder = tmp_path / "parts"
    folder.mkdir()
    write(frame.iloc[:25], folder / "a.csv")
    write(frame.iloc[25:], folder / "b.parquet")
    rows = read_log_rows(folder, spec=eio.LogSpec(**names), chunk_size=10)
    np.testing.assert_array_equal(rows.logging_probs, frame["p_log"].to_numpy())
    scan = eio.scan_log(folder, **names, chunk_size=10, max_pairs=1)
    assert scan.has_logging_probs
    got = list(scan.rows_with_logging_probs())
    np.testing.assert_array_equal(np.concatenate([p for _, p in got]), frame["p_log"].to_numpy())
    np.testing.assert_array_equal(np.concatenate([s.w for s, _ in got]), expected(frame).w)
    # Weights only: none.
    assert eio.read_log(write(frame, tmp_path / "w.csv"), weight="w", reward="click",
                        wmax=10).logging_probs is None
    assert not eio.scan_log(tmp_path / "w.csv", weight="w", reward="click", wmax=10).has_logging_probs
    # dsjson: _label_probability (or the entry of p), one per kept event.
    path = write_dsjson(tmp_path / "events.dsjson", dsjson_events())
    log = eio.read_dsjson(path, target_prob=lambda rec: 0.5, pdrop="ignore")
    kept = [e for e in dsjson_events() if not e.get("_skipLearn")]
    np.testing.assert_array_equal(log.logging_probs, [e.get("_label_probability", e["p"][0])
                                                      for e in kept])


def test_constraint_columns_read_with_the_decimal_comma(tmp_path):
    # A constraint column of a semicolon/decimal-comma file is read as the other columns are.
    path = tmp_path / "log.csv"
    path.write_text("w;r;g\n0,5;1;0,25\n2;0,25;-0,5\n1,5;0;1,0\n")
    scan = eio.scan_log(path, wmax=4, sep=";", decimal=",", constraint_columns=["g"])
    g = scan.engine.map_reduce(lambda cols: cols.G[0].tolist(), lambda a, b: a + b)
    assert g == [0.25, -0.5, 1.0]
    # Read as text (a value that is not a number sends the file there): the decimal commas
    # before it still read, and the error names the bad value's line.
    path.write_text("w;r;g\n0,5;1;0,25\n2;0,25;-0,5\n1,5;0;abc\n")
    with pytest.raises(InvalidInputError, match="line 4: column 'g' is 'abc', not a number"):
        eio.scan_log(path, wmax=4, sep=";", decimal=",", constraint_columns=["g"])
