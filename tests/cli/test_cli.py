"""The ``elcvx`` command: run on small logs in each format, its JSON checked against the Python
API; every user error is one line on stderr with exit status 2. The console script itself runs as
a subprocess (the demo, user errors, the imports of a fresh interpreter); the rest calls
``elcvx.__main__.main`` in this process, which is what the script runs."""

import contextlib
import gc
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import elcvx
from elcvx import baselines, cressie_read
from elcvx.__main__ import main
from elcvx.cli import METHODS
from elcvx.datasets import EXAMPLE_PMIN, example_log, example_log_path
from elcvx.testing import assert_agree

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from log_files import PMIN, TARGET, dsjson_events, expected, make_frame, write, write_dsjson  # noqa: E402

_SCRIPT = Path(sys.executable).with_name("elcvx")
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "elcvx"]


def run_script(*args, cwd=None):
    """The installed console script, as a user runs it (a subprocess: kept for the tests of the
    script itself, as its start costs about a second and a half)."""
    env = dict(os.environ, COLUMNS="100")
    return subprocess.run(COMMAND + [str(a) for a in args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def run(*args):
    """``elcvx.cli.main`` in this process, reported as a subprocess would be (returncode, stdout,
    stderr): what the script prints is what main prints. Warnings are shown on stderr under
    Python's default filters, as in a fresh interpreter, and so is an exception raised where
    nothing can catch it (a destructor's: "Exception ignored in ..."), so ``stderr == ""``
    still means neither."""
    out, err = io.StringIO(), io.StringIO()

    def unraisable(u):
        err.write(f"Exception ignored in: {u.object!r}\n{u.exc_type.__name__}: {u.exc_value}\n")

    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as caught:
        mp.setenv("COLUMNS", "100")
        mp.setattr(sys, "unraisablehook", unraisable)
        warnings.resetwarnings()  # a fresh interpreter's filters (not pytest's)
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=category)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(a) for a in args])
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            gc.collect()  # what a subprocess's exit would finalize
    for w in caught:
        err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line))
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


def api(sample, level=0.95, calibration="chi2"):
    """What ``elcvx evaluate`` must report, from the Python API."""
    est = elcvx.estimate(sample)
    low, high = elcvx.interval(sample, confidence_level=level, calibration=calibration)
    cr_low, cr_high = cressie_read.interval(sample, confidence_level=level, calibration=calibration)
    g = baselines.gaussian_interval(sample, confidence_level=level)
    b = baselines.clopper_pearson_interval(sample, confidence_level=level)
    return {
        "el": (est.value, low, high),
        "ips": (baselines.ips(sample).value, None, None),
        "snips": (baselines.snips(sample).value, None, None),
        "cr": (cressie_read.estimate(sample).value, cr_low, cr_high),
        "gaussian": (None, g.low, g.high),
        "binomial": (None, b.low, b.high),
    }


def check_report(rep, sample, level=0.95, calibration="chi2"):
    assert {"n", "wmin", "wmax", "confidence_level", "results"} <= set(rep)
    assert rep["n"] == sample.n and rep["wmin"] == sample.wmin
    assert rep["wmax"] == (None if np.isinf(sample.wmax) else sample.wmax)
    assert rep["confidence_level"] == level
    assert [r["method"] for r in rep["results"]] == list(METHODS)
    ref = api(sample, level, calibration)
    for r in rep["results"]:
        assert set(r) == {"method", "estimate", "low", "high"}
        for got, want in zip((r["estimate"], r["low"], r["high"]), ref[r["method"]]):
            if want is None:
                assert got is None, r
            else:
                assert_agree(got, want, tol=1e-12, what=r["method"])


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    frame = make_frame(n=80, seed=1)
    paths = {name: write(frame, d / name) for name in
             ("log.csv", "log.csv.gz", "log.parquet", "log.jsonl", "log.jsonl.gz")}
    paths["dsjson"] = write_dsjson(d / "log.dsjson", dsjson_events())
    pd.DataFrame({"target_prob": TARGET}).to_csv(d / "target.csv", index=False)
    paths["target"] = d / "target.csv"
    return frame, paths


# ------------------------------------------------------------------------------------------------
# The command in a subprocess, in each format
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["log.csv", "log.parquet", "log.jsonl.gz"])
def test_evaluate_json_matches_the_api(logs, name):
    frame, paths = logs
    out = run("evaluate", paths[name], "--target-prob-col", "p_target", "--logging-prob-col",
              "p_log", "--reward-col", "click", "--pmin", PMIN, "--format", "json")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    check_report(json.loads(out.stdout), expected(frame))


def test_evaluate_csv_output_costs_counts_and_options(logs):
    frame, paths = logs
    out = run("evaluate", paths["log.csv.gz"], "--weight-col", "w", "--cost-col", "loss",
              "--cmin", "-1", "--cmax", "0", "--count-col", "n", "--wmax", "12",
              "--confidence-level", "0.9", "--calibration", "f", "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = pd.read_csv(__import__("io").StringIO(out.stdout))
    assert list(rows.columns) == ["method", "estimate", "low", "high", "n", "wmin", "wmax",
                                  "confidence_level", "estimate_low", "estimate_high",
                                  "weights_plausible", "notes"]
    sample = elcvx.Sample(frame["w"], frame["click"], counts=frame["n"], wmax=12)
    ref = api(sample, 0.9, "f")
    assert rows["method"].tolist() == list(METHODS)
    for _, r in rows.iterrows():
        for got, want in zip((r["estimate"], r["low"], r["high"]), ref[r["method"]]):
            assert np.isnan(got) if want is None else abs(got - want) <= 1e-12
    assert (rows["n"] == frame["n"].sum()).all() and (rows["wmax"] == 12).all()


def test_evaluate_dsjson(logs):
    _, paths = logs
    out = run("evaluate", paths["dsjson"], "--target-prob-file", paths["target"], "--pmin", PMIN,
              "--format", "json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    from elcvx import io as eio
    log = eio.read_dsjson(paths["dsjson"], target_prob=TARGET, pmin=PMIN)
    check_report(rep, log.sample)
    assert rep["skipped"] == 1 and rep["rows"] == 7 and rep["input_format"] == "dsjson"
    assert any('skipped 1 of 7 events with "_skipLearn": true' in n for n in rep["notes"])
    assert any("Kish's effective sample size" in n for n in rep["notes"])


def test_evaluate_table(logs):
    frame, paths = logs
    out = run("evaluate", paths["log.jsonl"], "--weight-col", "w", "--reward-col", "click",
              "--wmax", "10")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    sample = elcvx.Sample(frame["w"], frame["click"], wmax=10)
    ref = api(sample)
    assert lines[0] == f"elcvx {elcvx.__version__}: log.jsonl (jsonl, 80 rows)"
    assert lines[1] == "w = w, r = click"
    assert lines[2].startswith("N = 80, weights in [0, 10] (observed 0 to 10)")
    assert lines[3].split() == ["method", "estimate", "95%", "interval"]
    el = lines[4].split()
    assert el[0] == "EL" and float(el[1]) == round(ref["el"][0], 4)
    assert lines[4].endswith(f"[{ref['el'][1]:.4f}, {ref['el'][2]:.4f}]")
    assert [ln.split()[0] for ln in lines[4:10]] == ["EL", "IPS", "SNIPS", "CR(-2)", "Gaussian",
                                                     "Binomial"]
    assert lines[8].split()[1] == "-"  # Gaussian has no estimate of its own


def test_demo_is_evaluate_on_the_bundled_log(capsys):
    # (Its speed is not asserted: tests never depend on wall-clock time.)
    out = run_script("demo")
    assert out.returncode == 0 and out.stderr == ""
    assert main(["evaluate", str(example_log_path()), "--pmin", str(EXAMPLE_PMIN)]) == 0
    assert capsys.readouterr().out == out.stdout
    assert main(["demo", "--format", "json"]) == 0
    check_report(json.loads(capsys.readouterr().out), example_log())


def test_cli_imports_neither_pandas_nor_cvxpy_unless_needed():
    code = ("import sys, io, contextlib\n"
            "import elcvx\n"
            "assert 'pandas' not in sys.modules and 'cvxpy' not in sys.modules\n"
            "from elcvx.__main__ import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['demo']) == 0\n"
            "bad = [m for m in ('pandas', 'pyarrow', 'cvxpy', 'matplotlib') if m in sys.modules]\n"
            "assert not bad, bad\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_profile_plot(logs, tmp_path):
    frame, paths = logs
    target = tmp_path / "profile.png"
    out = run("profile", paths["log.csv"], "--weight-col", "w", "--reward-col", "click",
              "--wmax", "10", "--plot", target, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 10_000
    assert os.listdir(tmp_path) == ["profile.png"]  # no temporary file left behind
    rep = json.loads(out.stdout)
    sample = elcvx.Sample(frame["w"], frame["click"], wmax=10)
    low, high = elcvx.interval(sample)
    assert_agree([rep["low"], rep["high"], rep["estimate"]], [low, high, elcvx.estimate(sample).value],
                 tol=1e-12, what="profile summary")
    prof = elcvx.profile(sample, [p["v"] for p in rep["profile"]])
    got = np.array([np.inf if p["statistic"] is None else p["statistic"] for p in rep["profile"]])
    finite = np.isfinite(prof.statistic)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    assert_agree(got[finite], prof.statistic[finite], tol=1e-12, what="statistic")
    # The interval is the level set: statistic <= quantile exactly inside [low, high].
    for p, s in zip(rep["profile"], got):
        assert (s <= rep["quantile"] + 1e-6) == (low - 1e-9 <= p["v"] <= high + 1e-9)


# ------------------------------------------------------------------------------------------------
# User errors: one line, exit status 2, nothing on stdout
# ------------------------------------------------------------------------------------------------
def assert_user_error(out, *fragments, status=2):
    assert out.returncode == status, (out.returncode, out.stdout, out.stderr)
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("elcvx: error: "), out.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def test_user_errors_in_a_subprocess(logs, tmp_path):
    frame, paths = logs
    bad = tmp_path / "bad.csv"
    bad.write_text("w,reward\n1,0\n2,1\n0.5,1,7\n")
    assert_user_error(run_script("evaluate", bad, "--wmax", "4", "--format", "json"),
                      "line 4 is malformed: 3 fields where the header has 2")
    assert_user_error(run("evaluate", paths["log.csv"], "--weight-col", "w", "--reward-col", "clicks"),
                      "has no column 'clicks'", "'click'")
    first = int(np.flatnonzero(frame["w"] > 4)[0]) + 2  # header is line 1
    assert_user_error(run("evaluate", paths["log.csv"], "--weight-col", "w", "--reward-col", "click",
                          "--wmax", "4", "--format", "json"),
                      f"line {first}: weight (column 'w') = 10.0 is outside [0.0, 4.0]")
    assert_user_error(run_script("evaluate", paths["log.csv"], "--frobnicate"),
                      "unrecognized arguments: --frobnicate")
    target = tmp_path / "nowhere" / "p.png"
    assert_user_error(run("profile", paths["log.csv"], "--weight-col", "w", "--reward-col", "click",
                          "--plot", target), "does not exist")
    assert not target.parent.exists()


@pytest.mark.parametrize("argv, fragments", [
    (["evaluate", "{csv}", "--wmax", "3", "--pmin", "0.2"], ["--pmin: not allowed with argument --wmax"]),
    (["evaluate", "{csv}", "--confidence-level", "1.5"], ["--confidence-level: 1.5 must lie strictly between 0 and 1"]),
    (["evaluate", "{csv}", "--method", "magic"], ["argument --method: invalid choice: 'magic'"]),
    (["evaluate", "{csv}", "--weight-col", "w", "--target-prob-col", "p_target"], ["not both"]),
    (["evaluate", "{csv}", "--weight-col", "w", "--reward-col", "click", "--rmin", "0", "--cmin", "0",
      "--cmax", "1"], ["not both"]),
    (["evaluate", "{csv}", "--weight-col", "w", "--cost-col", "loss", "--cmin", "0", "--cmax", "1"],
     ["cost (column 'loss') = -1.0 is outside the cost range [0.0, 1.0]"]),
    (["evaluate", "{csv}", "--target-prob-file", "{target}"], ["--target-prob-file is for dsjson logs"]),
    (["evaluate", "{csv}", "--pdrop", "inverse"], ["--pdrop applies to dsjson logs only"]),
    (["evaluate", "{dsjson}"], ["--target-prob-file FILE"]),
    (["evaluate", "{dsjson}", "--target-prob-file", "{target}", "--reward-col", "r"],
     ["--reward-col does not apply to a dsjson log"]),
    (["evaluate", "{csv}.missing"], ["cannot read", "no such file"]),
    (["profile", "{csv}", "--plot", "out.jpg"], ["must end in .png, .pdf, .svg"]),
    (["evaluate"], ["the following arguments are required: LOG"]),
])
def test_user_errors(logs, capsys, argv, fragments):
    _, paths = logs
    subs = {"csv": str(paths["log.csv"]), "dsjson": str(paths["dsjson"]), "target": str(paths["target"])}
    status = main([a.format(**subs) for a in argv])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("elcvx: error: ")
    for f in fragments:
        assert f in err, (f, err)


def test_help_and_version(capsys):
    assert main(["evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    for option in ("--weight-col", "--target-prob-col", "--logging-prob-col", "--reward-col",
                   "--cost-col", "--count-col", "--wmin", "--wmax", "--pmin", "--rmin", "--rmax",
                   "--confidence-level", "--calibration", "--method", "--format"):
        assert option in text
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"elcvx {elcvx.__version__}"


def test_missing_extras_name_them(logs, capsys, monkeypatch):
    _, paths = logs
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["profile", str(paths["log.csv"]), "--plot", "p.png"]) == 2
    assert "pip install 'elcvx[plot]'" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "pandas", None)
    assert main(["evaluate", str(paths["log.csv"]), "--weight-col", "w", "--reward-col", "click"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("elcvx: error: ") and "pip install 'elcvx[io]'" in err


def test_plot_write_failure_leaves_nothing(logs, tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    _, paths = logs

    def half_then_fail(self, f, **kw):
        f.write(b"\x89PNG half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half_then_fail)
    status = main(["profile", str(paths["log.csv"]), "--weight-col", "w", "--reward-col", "click",
                   "--plot", str(tmp_path / "p.png")])
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert err.strip().endswith("p.png: No space left on device") and len(err.splitlines()) == 1
    assert os.listdir(tmp_path) == []


def test_profile_table_and_csv(logs, capsys):
    _, paths = logs
    args = ["profile", str(paths["log.parquet"]), "--weight-col", "w", "--reward-col", "click",
            "--wmax", "10", "--points", "5"]
    assert main(args) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].startswith("EL estimate ") and table[-1] == "* inside the interval"
    assert main(args + ["--format", "csv"]) == 0
    rows = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert list(rows.columns) == ["v", "statistic", "pvalue", "in_interval"]
    assert len(rows) == len(table) - 4 and rows["in_interval"].any()


def test_reproduce_synthetic_is_wired_into_the_command(tmp_path):
    # `elcvx reproduce synthetic` (elcvx.experiments.cli) through the main command: exit 0 and
    # the tidy table with the columns; a bad option is one line and exit status 2.
    out = tmp_path / "syn"
    res = run("reproduce", "synthetic", "--replicates", 20, "--sizes", 10, "--no-plots",
              "--quiet", "--out", out)
    assert res.returncode == 0, res.stderr
    header = (out / "mse.csv").read_text().splitlines()[0]
    assert header == "n,estimator,mse,se"
    bad = run("reproduce", "synthetic", "--replicates", 0, "--out", out)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--replicates" in bad.stderr


# ------------------------------------------------------------------------------------------------
# Bad input that is not a log at all, extreme weights: still one line, or a note, never a warning
# ------------------------------------------------------------------------------------------------
GARBAGE = np.random.default_rng(12).bytes(4096)  # starts with neither gzip's nor Parquet's magic


@pytest.mark.parametrize("name, data, fragments", [
    ("g.csv", GARBAGE, ["as CSV: it is not UTF-8 text (line 1 has the byte 0x"]),
    ("g.tsv", GARBAGE, ["as TSV: it is not UTF-8 text (line 1 has the byte 0x"]),
    ("g.jsonl", GARBAGE, ["as JSON lines: it is not UTF-8 text (line 1 has the byte 0x"]),
    ("g.bin", GARBAGE, ["not a recognised log format (not Parquet, and not UTF-8 text: line 1 has "
                        "the byte 0x"]),
    ("g.csv.gz", __import__("gzip").compress(GARBAGE),
     ["as CSV: it is not UTF-8 text (line 1 has the byte 0x", "of the decompressed data"]),
    # A readable header, then a malformed row that is not UTF-8 (pyarrow's own traceback case).
    ("late.csv", b"w,r\n1,0\n2,\xff\x1b[31m,7\n", ["line 3 has the byte 0xff, at byte offset 10"]),
])
def test_binary_input_is_one_clean_line(tmp_path, name, data, fragments):
    path = tmp_path / name
    path.write_bytes(data)
    out = run("evaluate", path, "--wmax", "4")
    assert_user_error(out, f"cannot read {path}", *fragments)
    assert "Exception ignored" not in out.stderr
    assert out.stderr.isascii() and out.stderr.rstrip("\n").isprintable(), repr(out.stderr)


def test_error_messages_escape_control_characters(tmp_path, capsys):
    # A message can quote what the user gave (a file name, a column): never raw control bytes.
    assert main(["evaluate", str(tmp_path / "a\x1b[31mb.csv")]) == 2
    err = capsys.readouterr().err
    assert "a\\x1b[31mb.csv: no such file" in err and "\x1b" not in err


def huge_log(tmp_path, w):
    """Seven rows, one weight near the float limit; every weight positive, so EL's MLE is at
    its edge (no Newton step on the squares of the weights)."""
    path = tmp_path / "huge.csv"
    path.write_text(f"w,r\n{w!r},0.5\n2,0.2\n3,0.3\n4,0.5\n0.5,0.6\n1.5,0.8\n2.5,1\n")
    return path, elcvx.Sample([w, 2, 3, 4, 0.5, 1.5, 2.5], [0.5, 0.2, 0.3, 0.5, 0.6, 0.8, 1],
                              wmax=np.inf)


@pytest.mark.parametrize("w", [1e155, 1e300])
def test_huge_weights_every_method_reported_without_warnings(tmp_path, w):
    path, sample = huge_log(tmp_path, w)
    for wmax in ("inf", "1e300"):
        out = run("evaluate", path, "--wmax", wmax, "--format", "json")
        assert out.returncode == 0 and out.stderr == "", out.stderr
        rep = json.loads(out.stdout)
        check_report(rep, elcvx.Sample(sample.w, sample.r, wmax=float(wmax)))  # same as the API
        byname = {r["method"]: r for r in rep["results"]}
        assert None not in (byname["el"]["estimate"], byname["cr"]["low"], byname["gaussian"]["high"])
        assert not any("cannot be computed" in n for n in rep["notes"])
    table = run("evaluate", path, "--wmax", "inf")
    assert table.returncode == 0 and table.stderr == ""
    rows = {ln.split()[0]: ln for ln in table.stdout.splitlines()[4:10]}
    assert list(rows) == ["EL", "IPS", "SNIPS", "CR(-2)", "Gaussian", "Binomial"]
    assert max(map(len, rows.values())) < 60  # IPS ~ w/7 is shown as 1.429e+299, not 300 digits


def test_a_baseline_that_cannot_be_computed_is_one_note(tmp_path, capsys, monkeypatch):
    path, _ = huge_log(tmp_path, 1e300)

    def overflow(*args, **kwargs):
        raise OverflowError("integer division result too large for a float")

    monkeypatch.setattr(cressie_read, "interval", overflow)
    assert main(["evaluate", str(path), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    cr = [r for r in rep["results"] if r["method"] == "cr"][0]
    assert cr == {"method": "cr", "estimate": None, "low": None, "high": None}
    el = rep["results"][0]
    assert el["method"] == "el" and None not in (el["estimate"], el["low"], el["high"])
    notes = [n for n in rep["notes"] if n.startswith("CR(-2)")]
    assert notes == ["CR(-2): cannot be computed with weights up to 1e+300 (OverflowError: "
                     "integer division result too large for a float)"]
    assert main(["evaluate", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln for ln in lines if ln.startswith("CR(-2)")][0].split() == ["CR(-2)", "-"]
    assert sum(ln.startswith("note: CR(-2): cannot be computed") for ln in lines) == 1


# ------------------------------------------------------------------------------------------------
# Issue 27: CSV keeps the notes; JSON and CSV write numbers alike; --points K prints K rows; the
# messages of a reward scale and a delimiter say what to give
# ------------------------------------------------------------------------------------------------
def swapped_log(tmp_path):
    """An epsilon-greedy log written with its two probability columns swapped: the weights
    h/pi average far from 1 (about 0.66), and every estimate from them is wrong."""
    frame = make_frame(n=400, seed=3)
    path = tmp_path / "swapped.csv"
    frame.rename(columns={"p_target": "p_log", "p_log": "p_target"}).assign(
        p_log=lambda f: f["p_log"].clip(lower=PMIN)).to_csv(path, index=False)
    return path


def test_csv_keeps_the_weight_warning(tmp_path):
    path = swapped_log(tmp_path)
    args = ["evaluate", path, "--target-prob-col", "p_target", "--logging-prob-col", "p_log",
            "--reward-col", "click", "--pmin", PMIN]
    rep = json.loads(run(*args, "--format", "json").stdout)
    assert rep["weight_check"]["plausible"] is False
    (warning,) = [n for n in rep["notes"] if "the probability columns are probably wrong" in n]
    out = run(*args, "--format", "csv")
    assert out.returncode == 0
    # On stderr, each note as one line, exactly those of the JSON form ...
    assert out.stderr.splitlines() == [f"elcvx: note: {n}" for n in rep["notes"]]
    # ... and in the CSV itself: the verdict and the warning on every row.
    rows = pd.read_csv(__import__("io").StringIO(out.stdout))
    assert (rows["weights_plausible"] == False).all()  # noqa: E712  (a column of booleans)
    assert all(warning in text.split(" | ") for text in rows["notes"])


def test_csv_notes_of_a_method_are_on_its_row(logs):
    _, paths = logs
    out = run("evaluate", paths["log.csv"], "--weight-col", "w", "--reward-col", "click",
              "--format", "csv")  # wmax = inf: a note for the whole log and one for Binomial
    rows = pd.read_csv(__import__("io").StringIO(out.stdout)).set_index("method")["notes"]
    notes = [line.removeprefix("elcvx: note: ") for line in out.stderr.splitlines()]
    (binomial,) = [n for n in notes if n.startswith("Binomial: ")]
    (el,) = [n for n in notes if n.startswith("EL: ")]
    (general,) = [n for n in notes if n.startswith("the importance weights")]
    assert rows["binomial"].split(" | ") == [general, binomial]
    assert rows["el"].split(" | ") == [general, el] and rows["ips"].split(" | ") == [general]


def test_a_correct_log_has_no_notes_in_csv(logs):
    frame, paths = logs
    out = run("evaluate", paths["log.csv"], "--target-prob-col", "p_target", "--logging-prob-col",
              "p_log", "--reward-col", "click", "--pmin", PMIN, "--format", "csv")
    assert out.returncode == 0 and out.stderr == ""
    rows = pd.read_csv(__import__("io").StringIO(out.stdout))
    assert (rows["weights_plausible"] == True).all() and rows["notes"].isna().all()  # noqa: E712


@pytest.mark.parametrize("wmax, expected_wmax", [("inf", None), ("10", 10.0)])
def test_json_and_csv_write_wmax_alike(logs, capsys, wmax, expected_wmax):
    _, paths = logs
    args = ["evaluate", str(paths["log.csv"]), "--weight-col", "w", "--reward-col", "click",
            "--wmax", wmax]
    assert main(args + ["--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert main(args + ["--format", "csv"]) == 0
    cells = {line.split(",")[6] for line in capsys.readouterr().out.splitlines()[1:]}
    # null in JSON, an empty cell in CSV: the same "no number" (pandas reads both as missing)
    assert rep["wmax"] == expected_wmax
    assert cells == {"" if expected_wmax is None else repr(expected_wmax)}


def test_json_names_the_input_format(logs, capsys):
    _, paths = logs
    for command in ("evaluate", "profile"):
        assert main([command, str(paths["log.parquet"]), "--weight-col", "w", "--reward-col",
                     "click", "--wmax", "10", "--format", "json"]) == 0
        rep = json.loads(capsys.readouterr().out)
        assert rep["input_format"] == "parquet" and "format" not in rep


@pytest.mark.parametrize("points", [3, 5, 21])
def test_points_k_prints_k_rows_with_the_estimate_and_the_ends(logs, capsys, points):
    _, paths = logs
    args = ["profile", str(paths["log.csv"]), "--weight-col", "w", "--reward-col", "click",
            "--wmax", "10", "--points", str(points)]
    assert main(args + ["--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    v = [p["v"] for p in rep["profile"]]
    assert len(v) == points and v == sorted(v)
    assert {rep["estimate"], rep["low"], rep["high"]} <= set(v)
    assert main(args) == 0
    table = capsys.readouterr().out.splitlines()
    assert len(table) == 3 + points + 1  # header lines, the rows, "* inside the interval"
    assert main(["profile", str(paths["log.csv"]), "--weight-col", "w", "--reward-col", "click",
                 "--points", "2"]) == 2
    assert "at least 3 points" in capsys.readouterr().err


def test_reward_outside_the_range_names_the_options(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    path.write_text("w,r\n1,5\n2,3\n0.5,1\n")
    assert main(["evaluate", str(path), "--wmax", "4"]) == 2
    err = capsys.readouterr().err
    assert "line 2: reward (column 'r') = 5.0 is outside [0.0, 1.0]" in err
    assert "--rmin R --rmax R" in err
    assert main(["evaluate", str(path), "--wmax", "4", "--rmin", "1", "--rmax", "5"]) == 0


@pytest.mark.parametrize("sep, fragment", [
    (";", "separated by semicolons (';')"),
    ("|", "separated by pipes ('|')"),
    ("\t", "separated by tabs"),
])
def test_another_delimiter_is_named(tmp_path, capsys, sep, fragment):
    path = tmp_path / "log.csv"
    path.write_text(sep.join(["w", "r"]) + "\n" + sep.join(["1", "0.5"]) + "\n")
    assert main(["evaluate", str(path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.splitlines()) == 1
    if sep != "\t":  # the flags the error names read it
        assert f"--sep '{sep}'" in err and "--decimal ','" in err
        assert main(["evaluate", str(path), "--wmax", "2", "--sep", sep]) == 0
    else:
        assert "--input-format tsv" in err
        assert main(["evaluate", str(path), "--input-format", "tsv", "--wmax", "2"]) == 0
    capsys.readouterr()


def decimal_comma_csv(frame, path):
    """``frame``'s log written by hand as a spreadsheet set to decimal commas writes it: fields
    separated by ';', every number with ',' for its decimal point (0,8 for 0.8)."""
    cols = ["p_target", "p_log", "click"]
    lines = [";".join(cols)] + [";".join(repr(float(v)).replace(".", ",") for v in row)
                                for row in frame[cols].itertuples(index=False)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_semicolon_decimal_comma_csv_reads_with_sep_and_decimal(tmp_path, capsys, engine):
    frame = make_frame()
    plain = write(frame, tmp_path / "plain.csv")
    semi = decimal_comma_csv(frame, tmp_path / "semi.csv")
    assert "0,8;" in semi.read_text()  # (the file is the dialect under test)
    flags = ["--target-prob-col", "p_target", "--logging-prob-col", "p_log", "--reward-col",
             "click", "--pmin", str(PMIN), "--format", "json", "--engine", engine]
    assert main(["evaluate", str(plain), *flags]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert main(["evaluate", str(semi), *flags, "--sep", ";", "--decimal", ","]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["results"] == ref["results"] and got["n"] == ref["n"] == len(frame)
    check_report(got, expected(frame))  # the numbers of the sample written in the frame
    # Without the flags: one line naming both; with --sep alone: the decimal comma named.
    assert main(["evaluate", str(semi), *flags]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--sep ';'" in err and "--decimal ','" in err
    assert main(["evaluate", str(semi), *flags, "--sep", ";"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "line 2: column 'p_target' is '0,0', not a number" in err and "--decimal ','" in err
    if engine == "memory":  # profile reads the log with the same flags
        pflags = [f for f in flags if f not in ("--engine", "memory")]
        assert main(["profile", str(plain), *pflags]) == 0
        ref = json.loads(capsys.readouterr().out)
        assert main(["profile", str(semi), *pflags, "--sep", ";", "--decimal", ","]) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["profile"] == ref["profile"] and got["estimate"] == ref["estimate"]


def test_csv_dialect_flags_are_checked(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("w,r\n1,0.5\n")
    for flags, message in [
        (["--decimal", ","], "decimal=',' is also the field separator of a CSV file: give the "
                             "separator too, e.g. sep=';' (on the command line, --sep ';')"),
        (["--sep", ";;"], "sep=';;' must be one character"),
        (["--sep", ";", "--decimal", ";"], "sep=';' and decimal=';' are the same character"),
    ]:
        assert main(["evaluate", str(path), *flags]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and message in err, (flags, err)
    parquet = write(make_frame(), tmp_path / "log.parquet")
    assert main(["evaluate", str(parquet), "--sep", ";"]) == 2
    assert "sep=';' applies to CSV/TSV files" in capsys.readouterr().err
