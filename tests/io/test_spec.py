"""elcvx.io.LogSpec: the columns and bounds of a log, one object for every reader.

The keywords and the spec read the same Sample, to the bit, on every format and reader; each
check of the spec names its field and value; a keyword that the spec also sets is an error; and
no function below the public readers declares the options again (an AST check over elcvx/io,
shown able to fail).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import pathlib

import numpy as np
import pytest

import elcvx
from elcvx import Sample
from elcvx import io as eio
from elcvx.cli import build_parser
from elcvx.errors import InvalidInputError
from elcvx.io import LogSpec
from log_files import PMIN, make_frame, write, write_dsjson, dsjson_events

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

#: LogSpec's fields: the 13 options every reader took one by one before there was a spec.
OPTIONS = tuple(f.name for f in dataclasses.fields(LogSpec))
IO_FOLDER = pathlib.Path(eio.__file__).parent

# The option sets read below, and each one's Sample built from the frame's own columns (by the
# definitions: w = p_target / p_log or the column w, reward = -loss, counts = n).
CASES = {
    "probabilities, pmin": dict(target_prob="p_target", logging_prob="p_log", reward="click",
                                pmin=PMIN),
    "weights, costs, counts": dict(weight="w", cost="loss", count="n", cmin=-1, cmax=0.5,
                                   wmax=10),
    "default columns, reward range": dict(reward="click", pmin=PMIN, rmin=-1, rmax=2),
}


def _reference(df, case):
    if case == "probabilities, pmin":
        return Sample.from_probs(df["p_target"].to_numpy(), df["p_log"].to_numpy(),
                                 df["click"].to_numpy(), pmin=PMIN)
    if case == "weights, costs, counts":
        return Sample(df["w"].to_numpy(), 0.0 - df["loss"].to_numpy(), counts=df["n"].to_numpy(),
                      wmax=10, rmin=-0.5, rmax=1.0)
    # No weight or probability column named: the column "w" is found by its default name.
    return Sample(df["w"].to_numpy(), df["click"].to_numpy(), wmax=1 / PMIN, rmin=-1, rmax=2)


def _bits(sample):
    """Everything a Sample holds, as bytes and floats: equal only if equal to the bit."""
    counts = None if sample.counts is None else sample.counts.tobytes()
    return (sample.w.tobytes(), sample.r.tobytes(), counts, sample.wmin, sample.wmax,
            sample.rmin, sample.rmax, float(sample.n))


def _sums(cols):
    return (cols.w.size, float(cols.w.sum()), float(cols.u.sum()),
            None if cols.c is None else float(cols.c.sum()))


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], None if a[3] is None else a[3] + b[3])


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """The frame, and the same rows as CSV, Parquet, JSON lines and a folder of three files."""
    df = make_frame(n=90, seed=3)
    root = tmp_path_factory.mktemp("logs")
    paths = {name: str(write(df, root / f"log.{name}")) for name in ("csv", "parquet", "jsonl")}
    folder = root / "folder"
    folder.mkdir()
    for i, name in enumerate(("part-0.parquet", "part-1.csv", "part-2.parquet")):
        write(df.iloc[30 * i:30 * (i + 1)], folder / name)
    paths["folder"] = str(folder)
    return df, paths


def _scan_facts(scan):
    """What a scan holds: its counts and bounds, how the columns were read, the chunks' sums
    (one pass of its engine) and its rows in file order."""
    return (scan.n_rows, scan.n, scan.wmin, scan.wmax, scan.rmin, scan.rmax, scan.w_observed,
            scan.columns, scan.compressed, scan.engine.map_reduce(_sums, _add),
            [_bits(s) for s in scan.rows_in_order()])


READERS = {
    "read_log csv": lambda df, p, **o: eio.read_log(p["csv"], **o),
    "read_log parquet": lambda df, p, **o: eio.read_log(p["parquet"], **o),
    "read_log jsonl": lambda df, p, **o: eio.read_log(p["jsonl"], **o),
    "sample_from_dataframe": lambda df, p, **o: eio.sample_from_dataframe(df, **o),
    "read_log_compressed folder": lambda df, p, **o: eio.read_log_compressed(
        p["folder"], chunk_size=16, **o),
    "scan_log folder, compressed in memory": lambda df, p, **o: eio.scan_log(
        p["folder"], chunk_size=16, **o),
    "scan_log folder, chunks in memory": lambda df, p, **o: eio.scan_log(
        p["folder"], chunk_size=16, max_pairs=1, cache="memory", **o),
    "scan_log csv, chunks read again": lambda df, p, **o: eio.scan_log(
        p["csv"], chunk_size=16, max_pairs=1, cache="none", **o),
}


def _facts(result):
    if isinstance(result, Sample):
        return _bits(result)
    if isinstance(result, eio.LogScan):
        return _scan_facts(result)
    return _bits(result.sample), result.columns, result.n_rows, result.notes


@pytest.mark.filterwarnings("ignore::elcvx.errors.WeightWarning")
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("reader", READERS)
def test_keywords_and_spec_read_the_same_sample(logs, reader, case):
    df, paths = logs
    read = READERS[reader]
    by_keywords = read(df, paths, **CASES[case])
    by_spec = read(df, paths, spec=LogSpec(**CASES[case]))
    assert _facts(by_spec) == _facts(by_keywords)
    # Both are the sample of the definitions (compressed, where the reader compresses).
    ref = _reference(df, case)
    sample = by_spec if isinstance(by_spec, Sample) else by_spec.sample
    if sample is not None:
        assert _bits(sample) == _bits(ref.compress() if "compress" in reader else ref)
    else:  # kept in chunks: the rows in file order are the frame's
        rows = list(by_spec.rows_in_order())
        assert np.concatenate([s.w for s in rows]).tobytes() == ref.w.tobytes()
        assert np.concatenate([s.r for s in rows]).tobytes() == ref.r.tobytes()


def test_the_cli_reads_one_spec_of_its_flags():
    from elcvx.cli import _log_spec

    args = build_parser().parse_args(["evaluate", "log.csv", "--cost-col", "loss", "--count-col",
                                      "n", "--cmin", "0", "--cmax", "1", "--pmin", "0.1"])
    assert _log_spec(args) == LogSpec(cost="loss", count="n", cmin=0, cmax=1, pmin=0.1)
    # A dsjson log's columns are fixed: its spec holds the bounds only.
    assert _log_spec(args, columns=False) == LogSpec(cmin=0, cmax=1, pmin=0.1)


def test_dsjson_bounds_by_keywords_and_spec(tmp_path):
    path = write_dsjson(tmp_path / "log.dsjson", dsjson_events())
    target = np.full(len(dsjson_events()), 0.5)
    kw = eio.read_dsjson(path, target_prob=target, pmin=0.05, cmin=-1, cmax=0)
    sp = eio.read_dsjson(path, target_prob=target, spec=LogSpec(pmin=0.05, cmin=-1, cmax=0))
    assert _facts(sp) == _facts(kw)
    with pytest.raises(InvalidInputError, match="reward='r' does not apply to a dsjson log") as e:
        eio.read_dsjson(path, target_prob=target, spec=LogSpec(reward="r"))
    assert (e.value.field, e.value.value) == ("reward", "r")


def test_scan_engine_takes_the_bounds_of_a_spec():
    rows = eio.columns_of(Sample([0.5, 2.0], [0.0, 1.0], wmax=4))

    class Engine:
        def map_reduce(self, fn, merge):
            return fn(rows)

    kw = eio.scan_engine(Engine(), wmax=4, rmin=0, rmax=1)
    sp = eio.scan_engine(Engine(), spec=LogSpec(wmax=4))
    facts = [(s.wmin, s.wmax, s.rmin, s.rmax, s.n_rows, s.w_observed) for s in (kw, sp)]
    assert facts[0] == facts[1] == (0.0, 4.0, 0.0, 1.0, 2, (0.5, 2.0))  # the rows' own
    with pytest.raises(InvalidInputError, match="weight='w' does not apply to scan_engine"):
        eio.scan_engine(Engine(), spec=LogSpec(weight="w"))


# -- the checks of a spec, each naming its field and value -------------------------------------

BAD = [  # (fields, the message, the error's field and value); messages written from the rules
    (dict(weight=["w"]), r"^weight=\['w'\] must be a column name$", "weight", ["w"]),
    (dict(reward=True), r"^reward=True must be a column name$", "reward", True),
    (dict(weight="w", target_prob="p", logging_prob="h"),
     r"^give the weight column or the target and logging probability columns, not both "
     r"\(weight='w', target_prob='p'\)$", "weight", "w"),
    (dict(target_prob="p"), r"^target_prob='p' is given without logging_prob: the weight is "
     r"target_prob / logging_prob, so both columns are needed$", "target_prob", "p"),
    (dict(logging_prob="h"), r"^logging_prob='h' is given without target_prob", "logging_prob",
     "h"),
    (dict(reward="r", cost="c"), r"^give the reward column or the cost column, not both "
     r"\(reward='r', cost='c'\)$", "cost", "c"),
    (dict(weight="x", reward="x"), r"^weight='x' and reward='x' name the same column", "reward",
     "x"),
    (dict(target_prob="p", logging_prob="p"), r"^target_prob='p' and logging_prob='p' name the "
     r"same column", "logging_prob", "p"),
    (dict(reward="r", count="r"), r"^reward='r' and count='r' name the same column", "count",
     "r"),
    (dict(wmin="low"), r"^wmin='low' is not a number$", "wmin", "low"),
    (dict(wmin=-0.5), r"^wmin=-0\.5 must be >= 0", "wmin", -0.5),
    (dict(wmin=1), r"^wmin=1\.0 must be < 1, else E\[w\] = 1 is impossible$", "wmin", 1.0),
    (dict(wmin=0.5, wmax=0.4), r"^wmax=0\.4 must be > 1, else E\[w\] = 1 is impossible$", "wmax",
     0.4),
    (dict(wmax=float("nan")), r"^wmax=nan must be finite$", "wmax", None),
    (dict(pmin=1.5), r"^pmin=1\.5 must lie strictly between 0 and 1$", "pmin", 1.5),
    (dict(wmax=10, pmin=0.1), r"^give wmax or pmin, not both \(wmax=10\.0, pmin=0\.1\): "
     r"wmax = 1/pmin$", "pmin", 0.1),
    (dict(rmin=1, rmax=1), r"^rmin=1\.0 must be < rmax=1\.0$", "rmin", 1.0),
    (dict(rmin=2), r"^rmin=2\.0 must be < rmax=1\.0$", "rmin", 2.0),
    (dict(rmax=float("inf")), r"^rmax=inf must be finite$", "rmax", float("inf")),
    (dict(rmin=0, cmin=0, cmax=1), r"^give the reward range \(rmin, rmax\) or the cost range "
     r"\(cmin, cmax\), not both \(rmin=0\.0 with the cost range\)$", "rmin", 0.0),
    (dict(cmax=1), r"^give both ends of the cost range: cmin and cmax \(cmax=1\.0 is given "
     r"alone\)$", "cmax", 1.0),
    (dict(cmin=1, cmax=0), r"^cmin=1\.0 must be < cmax=0\.0$", "cmin", 1.0),
]


@pytest.mark.parametrize("fields, message, field, value", BAD,
                         ids=[" ".join(f"{k}={v!r}" for k, v in b[0].items()) for b in BAD])
def test_each_check_names_its_field_and_value(fields, message, field, value):
    with pytest.raises(InvalidInputError, match=message) as exc:
        LogSpec(**fields)
    assert exc.value.field == field
    if value is not None:  # (NaN is not equal to itself)
        assert exc.value.value == value
    # A reader's keywords are checked by the same spec, with the same message.
    with pytest.raises(InvalidInputError, match=message):
        eio.sample_from_dataframe(make_frame(n=3), **fields)


def test_a_spec_is_frozen_and_takes_keywords_only():
    spec = LogSpec(weight="w", wmax=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.wmax = 20
    with pytest.raises(TypeError):
        LogSpec("w")  # noqa: the fields are options, keyword-only
    assert spec.wmax == 10.0 and spec.weight_range == (0.0, 10.0)
    assert LogSpec(pmin=0.125).weight_range == (0.0, 8.0)  # 1/pmin
    assert LogSpec().weight_range == (0.0, np.inf) and LogSpec().reward_range == (0.0, 1.0)


# -- a keyword and a spec together --------------------------------------------------------------

def test_a_keyword_the_spec_also_sets_is_an_error(logs):
    df, paths = logs
    spec = LogSpec(weight="w", reward="click", wmax=10)
    for read in (lambda **o: eio.read_log(paths["csv"], **o),
                 lambda **o: eio.read_log_compressed(paths["folder"], **o),
                 lambda **o: eio.scan_log(paths["folder"], **o),
                 lambda **o: eio.sample_from_dataframe(df, **o)):
        with pytest.raises(InvalidInputError, match=r"^wmax is given twice: wmax=10 as a keyword "
                           r"and wmax=10\.0 in spec; give it once$") as exc:
            read(spec=spec, wmax=10)
        assert (exc.value.field, exc.value.value) == ("wmax", 10)
        with pytest.raises(InvalidInputError, match="reward is given twice: reward='r'"):
            read(spec=spec, reward="r")


def test_a_keyword_sets_a_field_the_spec_leaves_unset(logs):
    df, paths = logs
    both = eio.read_log(paths["csv"], spec=LogSpec(weight="w", reward="click"), wmax=10)
    keywords = eio.read_log(paths["csv"], weight="w", reward="click", wmax=10)
    assert _facts(both) == _facts(keywords)


def test_from_keywords_takes_a_spec_or_none():
    assert LogSpec.from_keywords(None, weight="w", wmax=None) == LogSpec(weight="w")
    with pytest.raises(InvalidInputError, match="spec must be an elcvx.io.LogSpec or None, got "
                       "dict") as exc:
        LogSpec.from_keywords({"weight": "w"})
    assert exc.value.field == "spec"
    with pytest.raises(TypeError, match="'weights' is not a field of LogSpec"):
        LogSpec.from_keywords(None, weights="w")


# -- no function below the readers declares the options again ----------------------------------

#: The public readers, which keep the options as keywords (users' code passes them), and the
#: ones each takes: every column and bound, or the bounds only where the columns are fixed.
READER_OPTIONS = {
    "read_log": OPTIONS, "read_log_compressed": OPTIONS, "scan_log": OPTIONS,
    "sample_from_dataframe": tuple(o for o in OPTIONS if o != "sep"),  # (a frame has no sep)
    "read_dsjson": ("wmin", "wmax", "pmin", "rmin", "rmax", "cmin", "cmax"),
    "scan_engine": ("wmin", "wmax", "rmin", "rmax"),
    "read_table": ("sep", "decimal"),  # a table's CSV dialect only
}


#: Functions that take some of the fields' names for another reason: the bounds a scan has read
#: (resolved, as a Sample's own; not options).
NOT_OPTIONS = {("logscan.py", "__init__")}


def redeclared(source: str, filename: str) -> list[str]:
    """The functions (methods and nested ones too) in ``source`` that declare two or more of
    LogSpec's fields as parameters, other than the public readers (and :data:`NOT_OPTIONS`)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
            name = getattr(node, "name", "<lambda>")
            if (len(names & set(OPTIONS)) >= 2 and name not in READER_OPTIONS
                    and (filename, name) not in NOT_OPTIONS):
                found.append(f"{filename}:{node.lineno} {name}")
    return found


def test_no_function_below_the_readers_declares_the_options():
    found = [hit for path in sorted(IO_FOLDER.glob("*.py"))
             for hit in redeclared(path.read_text(), path.name)]
    assert found == []


def test_the_check_finds_a_helper_that_declares_the_options():
    # The helper the readers had before LogSpec: it would be found, and so would one nested.
    source = ("def _resolve(path, format, weight, target_prob, logging_prob, reward, cost):\n"
              "    pass\n"
              "def read_log(path, *, weight=None, wmax=None):\n"
              "    def inner(rmin, rmax):\n"
              "        pass\n")
    assert redeclared(source, "x.py") == ["x.py:1 _resolve", "x.py:4 inner"]


def test_every_public_reader_takes_a_spec_and_its_keywords():
    for name, options in READER_OPTIONS.items():
        params = inspect.signature(getattr(eio, name)).parameters
        assert params["spec"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert params["spec"].default is None, name
        taken = [p for p in params if p in OPTIONS]
        if name == "read_dsjson":  # (its target_prob is the target's probabilities, not a column)
            taken.remove("target_prob")
        assert sorted(taken) == sorted(options), name
        # Every keyword defaults to None: a keyword given is told from one left out.
        assert all(params[p].default is None for p in options), name
    assert elcvx.Sample.from_dataframe is eio.sample_from_dataframe
