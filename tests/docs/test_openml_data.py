"""The OpenML data on a fresh machine (``elcvx datasets
fetch``), the check of ``E[w] = 1`` that catches a wrong log, result objects that read well in a
notebook, and JSON logs that are one document rather than one record per line.

Only the network is mocked: ``fetch_openml``'s ``urlopen`` is served by :class:`FakeOpenML`, an
in-memory OpenML with the same JSON API and ARFF files; scikit-learn parses them as it would
the real ones.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io as _stdio  # noqa: I001 - the standard library's, not elcvx.io
import json
import urllib.error
import warnings
from pathlib import Path

import numpy as np
import pytest

import elcvx
from elcvx import Sample, datasets, io
from elcvx.cli import main
from elcvx.errors import WeightWarning
from elcvx.experiments import realistic as R
from elcvx.interval import _interval_status

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "openml"
needs_shared = pytest.mark.skipif(
    not (SHARED / "MANIFEST.csv").is_file(),
    reason=f"the shipped OpenML files are not in {SHARED} (CI has them); these tests rebuild "
           "one from its raw form and check the package manifest against the shipped one")


def _sklearn():
    try:
        import sklearn.datasets._openml as openml_module
    except ImportError:
        pytest.skip("scikit-learn (the 'data' extra: pip install 'elcvx[data]') is not installed; "
                    "`elcvx datasets fetch` downloads through its fetch_openml")
    return openml_module


# ------------------------------------------------------------------------------------------------
# A fake openml.org: the JSON API and ARFF files that fetch_openml reads
# ------------------------------------------------------------------------------------------------
class _Response(_stdio.BytesIO):
    """An HTTP response as urlopen returns it, gzip-encoded as openml.org sends it."""

    def __init__(self, body: bytes):
        super().__init__(gzip.compress(body))

    def info(self):
        return {"Content-Encoding": "gzip"}


class FakeOpenML:
    API = "https://www.openml.org/api/v1/json/data"

    def __init__(self):
        self.routes = {}
        self.calls = []

    def add(self, data_id, name, attributes, rows, target):
        """A dataset: ``attributes`` as ``(name, "numeric" | [nominal values])``, ``rows`` as
        lists of ARFF tokens."""
        lines = [f"@relation '{name}'", ""]
        for a, t in attributes:
            lines.append(f"@attribute {a} " + ("{" + ",".join(t) + "}" if isinstance(t, list) else t))
        lines += ["", "@data"] + [",".join(map(str, r)) for r in rows]
        arff = ("\n".join(lines) + "\n").encode()
        file_id = 900000 + data_id
        url = f"https://www.openml.org/data/v1/download/{file_id}/{name}.arff"
        self.routes[f"{self.API}/{data_id}"] = {"data_set_description": {
            "id": str(data_id), "name": name, "version": "1", "format": "ARFF",
            "file_id": str(file_id), "url": url, "default_target_attribute": target,
            "status": "active", "md5_checksum": hashlib.md5(arff).hexdigest(),
            "description": "a test dataset"}}
        features = []
        for i, (a, t) in enumerate(attributes):
            f = {"index": str(i), "name": a, "data_type": "nominal" if isinstance(t, list) else "numeric",
                 "is_target": "true" if a == target else "false", "is_ignore": "false",
                 "is_row_identifier": "false", "number_of_missing_values": "0"}
            if isinstance(t, list):
                f["nominal_value"] = t
            features.append(f)
        self.routes[f"{self.API}/features/{data_id}"] = {"data_features": {"feature": features}}
        self.routes[f"{self.API}/qualities/{data_id}"] = {"data_qualities": {"quality": [
            {"name": "NumberOfInstances", "value": f"{len(rows)}.0"}]}}
        self.routes[url] = arff

    def urlopen(self, request, *args, **kwargs):
        url = getattr(request, "full_url", request)
        self.calls.append(url)
        if url not in self.routes:
            raise urllib.error.HTTPError(url, 412, "Precondition Failed", {}, None)
        body = self.routes[url]
        return _Response(body if isinstance(body, bytes) else json.dumps(body).encode())


@pytest.fixture
def openml(monkeypatch):
    fake = FakeOpenML()
    monkeypatch.setattr(_sklearn(), "urlopen", fake.urlopen)
    return fake


def _tiny_rows():
    # x1 integral, x2 not, colour nominal declared (red, green, blue), class declared (b, a)
    colours = ["red", "green", "blue"]
    return [[i, i / 4, colours[i % 3], "ab"[i % 2]] for i in range(12)]


TINY_ATTRS = [("x1", "numeric"), ("x2", "numeric"), ("colour", ["red", "green", "blue"]),
              ("class", ["b", "a"])]


# ------------------------------------------------------------------------------------------------
# Item 3: the conversion, the manifest, `elcvx datasets fetch`, and where the study finds its data
# ------------------------------------------------------------------------------------------------
def test_conversion_of_a_built_table(tmp_path):
    df = pd.DataFrame({
        "count": [3.0, 1.0, 4.0, 1.0, 5.0, np.nan],
        "ratio": [0.5, 1.25, 2.0, 0.125, 3.0, 1.0],
        "size": pd.Categorical(["big", "small", "big", "mid", "small", "big"],
                               categories=["small", "mid", "big"]),  # declared, not sorted
        "shape": ["square", "circle", "circle", "square", "oval", "oval"],  # text: sorted codes
        "y": ["yes", "no", "maybe", "yes", "no", "yes"],
    })
    table, dropped = datasets.convert_openml(df, "y", seed=7)
    assert dropped == 1  # the row with a missing count
    assert table.columns.tolist() == ["count", "ratio", "cat__size", "cat__shape", "label"]
    assert table["count"].dtype == np.int64 and table["ratio"].dtype == np.float64
    assert table["cat__size"].tolist() == [2, 0, 2, 1, 0]
    assert table["cat__shape"].tolist() == [2, 0, 0, 2, 1]  # circle, oval, square
    assert table["label"].tolist() == [2, 1, 0, 2, 1]  # maybe, no, yes
    text = gzip.decompress(datasets.table_bytes(table)).decode()
    assert text.splitlines()[:2] == ["count,ratio,cat__size,cat__shape,label", "3,0.5,2,2,2"]
    # the bytes depend on the table only: fixed gzip header (mtime 0, no name, OS 255)
    assert datasets.table_bytes(table)[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    # the study's reader takes it
    with pytest.raises(R.DatasetError, match="5 rows; at least 10"):  # the study's reader checks it
        R.load_dataset(_write(tmp_path / "5_t.csv.gz", text))


def _write(path, text):
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_conversion_caps_rows_with_the_id_as_seed():
    n = 30
    df = pd.DataFrame({"x": np.arange(n, dtype=float), "y": np.arange(n) % 3})
    table, _ = datasets.convert_openml(df, "y", seed=1481, max_rows=10)
    keep = np.sort(np.random.default_rng(1481).choice(n, 10, replace=False))
    assert table["x"].tolist() == keep.tolist()  # a random subset, in the file's order
    assert table["label"].tolist() == (keep % 3).tolist()


def test_package_manifest_lists_every_shipped_file():
    man = datasets.openml_manifest()
    assert set(man) <= set(datasets.PAPER_IDS) and len(man) >= 23
    assert all(len(e["sha256"]) == len(e["csv_sha256"]) == 64 for e in man.values())


@needs_shared
def test_package_manifest_agrees_with_the_shipped_one():
    man = datasets.openml_manifest()
    with open(SHARED / "MANIFEST.csv", newline="") as f:
        shipped = {int(r["openml_id"]): r for r in csv.DictReader(f)}
    assert set(shipped) == set(man)
    for i, r in shipped.items():
        assert (man[i]["name"], man[i]["sha256"], man[i]["rows"]) == (r["name"], r["sha256"], int(r["rows"]))
        data = (SHARED / f"{i}_{r['name']}.csv.gz").read_bytes()
        assert hashlib.sha256(gzip.decompress(data)).hexdigest() == man[i]["csv_sha256"]


@needs_shared
def test_fetch_rebuilds_a_shipped_file_from_its_raw_form(openml, tmp_path, capsys):
    """acute-inflammations (1455) as OpenML serves it: its ARFF, rebuilt from the shipped file
    (numeric V1, nominal V2..V6 and Class declared {no,yes}). Downloaded through scikit-learn
    and converted, it must reproduce the shipped file byte for byte."""
    shipped = SHARED / "1455_acute-inflammations.csv.gz"
    table = pd.read_csv(shipped, dtype=str)
    noyes = ["no", "yes"]
    attrs = [("V1", "numeric")] + [(f"V{k}", noyes) for k in range(2, 7)] + [("Class", noyes)]
    rows = [[r["V1"]] + [noyes[int(r[f"cat__V{k}"])] for k in range(2, 7)] + [noyes[int(r["label"])]]
            for _, r in table.iterrows()]
    openml.add(1455, "acute-inflammations", attrs, rows, "Class")
    assert main(["datasets", "fetch", "--ids", "1455", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1455_acute-inflammations.csv.gz: downloaded: 120 rows, 6 features, 2 classes; verified" in out
    written = (tmp_path / "1455_acute-inflammations.csv.gz").read_bytes()
    sha = datasets.openml_manifest()[1455]["sha256"]
    assert hashlib.sha256(written).hexdigest() == sha == hashlib.sha256(shipped.read_bytes()).hexdigest()
    # a second run checks the file and downloads nothing
    calls = len(openml.calls)
    assert main(["datasets", "fetch", "--ids", "1455", "--dir", str(tmp_path)]) == 0
    assert "present, verified" in capsys.readouterr().out and len(openml.calls) == calls


def test_fetch_a_dataset_outside_the_manifest(openml, tmp_path, capsys):
    openml.add(9001, "tiny set", TINY_ATTRS, _tiny_rows(), "class")
    assert main(["datasets", "fetch", "--ids", "9001", "--dir", str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    assert "not in the manifest, not checked" in out and "1 unchecked of 1 dataset" in out
    path = tmp_path / "new" / "9001_tiny-set.csv.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    assert lines[0] == "x1,x2,cat__colour,label"
    assert lines[1:4] == ["0,0.0,0,1", "1,0.25,1,0", "2,0.5,2,1"]  # class declared {b, a}
    ds = R.load_dataset(path)
    assert ds.n == 12 and ds.n_classes == 2


def test_fetch_reports_a_download_that_differs_from_the_manifest(openml, tmp_path, capsys):
    # OpenML serving something else under a manifest id: kept with a message, or refused (--strict)
    openml.add(1473, "fertility", TINY_ATTRS, _tiny_rows(), "class")
    assert main(["datasets", "fetch", "--ids", "1473", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "differs from the manifest (OpenML's data for this id changed" in out
    assert (tmp_path / "1473_fertility.csv.gz").exists()
    assert main(["datasets", "fetch", "--ids", "1473", "--dir", str(tmp_path / "s"), "--strict"]) == 1
    assert "not kept (--strict)" in capsys.readouterr().out
    assert not (tmp_path / "s" / "1473_fertility.csv.gz").exists()


def test_fetch_without_network_is_one_line_and_stops(monkeypatch, tmp_path, capsys):
    calls = []

    def down(request, *args, **kwargs):
        calls.append(request)
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(_sklearn(), "urlopen", down)
    monkeypatch.setattr("time.sleep", lambda s: None)  # scikit-learn's delay between retries
    assert main(["datasets", "fetch", "--dir", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("elcvx: error: openml.org cannot be reached")
    assert "Traceback" not in err and "Retrying" not in err
    assert out.count("\n") == 1  # the first dataset's line; the others are not tried
    first = min(datasets.openml_manifest())
    assert calls and all(c.full_url.endswith(f"/data/{first}") for c in calls)


@needs_shared
def test_fetch_verifies_an_offline_copy_without_the_network(monkeypatch, tmp_path, capsys):
    def no_network(*args, **kwargs):
        raise AssertionError("no download expected")

    monkeypatch.setattr(_sklearn(), "urlopen", no_network)
    for name in ("1413_MyIris.csv.gz", "1473_fertility.csv.gz"):
        (tmp_path / name).write_bytes((SHARED / name).read_bytes())
    assert main(["datasets", "fetch", "--ids", "1413,1473", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith("2 verified of 2 datasets\n")
    # a copy that was changed is reported, not silently used
    text = gzip.decompress((tmp_path / "1473_fertility.csv.gz").read_bytes()).decode()
    (tmp_path / "1473_fertility.csv.gz").write_bytes(gzip.compress(text.replace("0.69", "0.7", 1).encode()))
    assert main(["datasets", "fetch", "--ids", "1413,1473", "--dir", str(tmp_path)]) == 0
    assert "1473_fertility.csv.gz: present, differs from the manifest's copy" in capsys.readouterr().out


def test_fetch_needs_the_data_extra(monkeypatch, tmp_path, capsys):
    import builtins

    real_import = builtins.__import__

    def no_sklearn(name, *args, **kwargs):
        if name.startswith("sklearn"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sklearn)
    assert main(["datasets", "fetch", "--ids", "9001", "--dir", str(tmp_path)]) == 2
    assert "pip install 'elcvx[data]'" in capsys.readouterr().err


def test_missing_data_says_how_to_get_it(tmp_path):
    reason = R.missing_data_reason(tmp_path)
    assert "elcvx datasets fetch" in reason and "\n" not in reason
    assert R.find_data_dir(tmp_path) is None
    (tmp_path / "data" / "openml").mkdir(parents=True)
    _write(tmp_path / "data" / "openml" / "9_t.csv.gz", "x,label\n" + "".join(f"{i},{i % 2}\n" for i in range(12)))
    assert R.find_data_dir(tmp_path) == tmp_path / "data" / "openml"
    with pytest.raises(R.DatasetError, match="elcvx datasets fetch"):
        R.load_folder(tmp_path / "nowhere")


def test_make_reproduce_realistic_fetches_or_verifies_first():
    text = (ROOT / "Makefile").read_text()
    recipe = text.split("\nreproduce-realistic:", 1)[1].split("\n\n", 1)[0]
    fetch, run = [line.strip() for line in recipe.splitlines()[1:3]]
    assert "elcvx datasets fetch --set openml --dir $(DATA_DIR)" in fetch
    assert "reproduce realistic --data-dir $(DATA_DIR)" in run
    assert "../shared/data/openml" in text.split("DATA_DIR ?=", 1)[1].splitlines()[0]


# ------------------------------------------------------------------------------------------------
# Item 4: E[w] = 1 is testable
# ------------------------------------------------------------------------------------------------
def wrong_column_log(n=20_000, seed=3):
    """The 2M-row report, scaled down: two actions logged uniformly (h = 0.5), a deterministic
    target, but the 'logging_prob' column holds another model's probability (0.5 / 1.486), so the
    weights average 1.486 instead of 1."""
    rng = np.random.default_rng(seed)
    action = rng.integers(0, 2, n)
    target_action = np.where(rng.permutation(n) % 2 == 0, action, 1 - action)  # agree on half
    reward = (rng.random(n) < np.where(action == 1, 0.8, 0.45)).astype(float)
    return pd.DataFrame({"target_prob": (action == target_action).astype(float),
                         "logging_prob": np.full(n, 0.5 / 1.486), "reward": reward})


def test_weight_check_flags_the_wrong_column():
    df = wrong_column_log()
    with pytest.warns(WeightWarning, match=r"average 1\.486 \(standard error 0\.011") as caught:
        s = Sample.from_dataframe(df, pmin=0.25)
    assert len(caught) == 1 and caught[0].filename == __file__  # the user's line
    chk = s.weight_check()
    assert not chk.plausible and not chk and chk.n == 20_000 and chk.n_rows == 20_000
    assert abs(chk.mean - 1.486) < 4 * chk.se
    assert chk.se == pytest.approx(np.std(s.w, ddof=1) / np.sqrt(s.n), rel=1e-12)
    assert chk.statistic > 100 and chk.pvalue < 1e-20


def test_weight_check_passes_correct_logs():
    # the bundled example log, and a small log whose rare large weight was not drawn
    for s in (datasets.example_log(), Sample(np.tile([0.0, 0.5, 0.9, 0.2], 50), np.tile([1.0, 0.0], 100), wmax=80)):
        chk = s.weight_check()
        assert chk.plausible and chk and chk.message == ""
    # a correct epsilon-greedy log, large: the statistic stays small
    rng = np.random.default_rng(0)
    n, k, eps = 50_000, 4, 0.2
    greedy, target = rng.integers(0, k, n), rng.integers(0, k, n)
    explore = rng.random(n) < eps
    action = np.where(explore, rng.integers(0, k, n), greedy)
    h = np.where(action == greedy, 1 - eps + eps / k, eps / k)
    s = Sample.from_probs((action == target).astype(float), h, rng.random(n) < 0.5, pmin=eps / k)
    chk = s.weight_check()
    assert chk.plausible and abs(chk.mean - 1) < 4 * chk.se


def test_read_log_warns_once_and_notes_it(tmp_path):
    path = tmp_path / "log.csv"
    wrong_column_log().to_csv(path, index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = io.read_log(path, pmin=0.25)
    weight = [w for w in caught if issubclass(w.category, WeightWarning)]
    assert len(weight) == 1 and weight[0].filename == __file__
    assert str(weight[0].message).startswith("the importance weights (target_prob / logging_prob) average 1.48")
    assert log.notes == (str(weight[0].message),)


def test_cli_notes_the_wrong_column(tmp_path, capsys):
    path = tmp_path / "log.csv"
    wrong_column_log().to_csv(path, index=False)
    assert main(["evaluate", str(path), "--pmin", "0.25"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # a note, not also a Python warning
    note = [line for line in out.splitlines() if "E[w] = 1" in line]
    assert len(note) == 1 and note[0].startswith("note: the importance weights (target_prob / logging_prob) average 1.48")
    assert main(["evaluate", str(path), "--pmin", "0.25", "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    chk = rep["weight_check"]
    assert chk["plausible"] is False and abs(chk["mean"] - 1.486) < 0.04 and 0 < chk["se"] < 0.02
    assert sum("E[w] = 1" in n for n in rep["notes"]) == 1


def test_the_docs_show_the_check_as_the_command_prints_it(tmp_path, capsys):
    text = (ROOT / "docs" / "cli.md").read_text()
    block = text.split("<!-- weight-check-example -->\n```text\n", 1)[1].split("```", 1)[0]
    wrong_column_log().to_csv(tmp_path / "wrong.csv", index=False)
    assert main(["evaluate", str(tmp_path / "wrong.csv"), "--pmin", "0.25"]) == 0
    assert capsys.readouterr().out == block


def test_unbounded_weights_and_the_unobserved_atom(tmp_path, capsys):
    # weights averaging 0.6 with wmax = inf: the estimate depends on an unobserved weight's reward
    w = np.tile([0.0, 0.5, 1.3], 100)
    df = pd.DataFrame({"w": w, "r": np.tile([1.0, 0.0, 1.0], 100)})
    with pytest.warns(WeightWarning, match="with wmax = inf: the EL estimate depends on the unknown reward"):
        s = Sample.from_dataframe(df)
    chk = s.weight_check()
    assert chk.plausible and chk.depends_on_unobserved and not chk
    est = elcvx.estimate(s)
    assert chk.unobserved_wmass == pytest.approx(est.value_range.high - est.value_range.low, rel=1e-9)
    path = tmp_path / "log.csv"
    df.to_csv(path, index=False)
    assert main(["evaluate", str(path), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["weight_check"]["depends_on_unobserved"] is True
    assert rep["el_value_range"] == pytest.approx(list(est.value_range))
    assert sum("unobserved, unbounded weight" in n for n in rep["notes"]) == 1
    assert not any(n.startswith("wmax = inf (give") for n in rep["notes"])  # said once
    # a bound removes the dependence on an unbounded weight
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeightWarning)
        bounded = Sample.from_dataframe(df, wmax=20)
    assert not bounded.weight_check().depends_on_unobserved
    assert main(["evaluate", str(path), "--wmax", "20", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["weight_check"]["depends_on_unobserved"] is False


# ------------------------------------------------------------------------------------------------
# Item 6: results in a notebook
# ------------------------------------------------------------------------------------------------
def test_sample_and_log_show_a_summary(tmp_path):
    rng = np.random.default_rng(1)
    s = Sample(rng.choice([0.0, 1.0, 2.0], 5000), rng.integers(0, 2, 5000).astype(float), wmax=16)
    text = repr(s)
    assert str(s) == text and len(text) < 200 and "\n" not in text
    mean, se = s.w.mean(), s.w.std(ddof=1) / np.sqrt(s.n)
    assert text == (f"Sample(N=5000, rows=5000, w: 0 to 2, mean {mean:.4g} ± {se:.2g} (se), "
                    "bounds [0, 16]; r: 0 to 1, bounds [0, 1])")
    assert repr(s.compress()).startswith("Sample(N=5000, rows=6, ")
    path = tmp_path / "log.csv"
    pd.DataFrame({"w": s.w, "r": s.r}).to_csv(path, index=False)
    log = io.read_log(path, wmax=16)
    assert len(repr(log)) < 400 and text in repr(log)


def test_sample_defaults_to_an_unbounded_weight():
    s = Sample([0.5, 2.0], [0.0, 1.0])
    assert s.wmax == np.inf
    assert s.wmax == Sample.from_probs([0.5, 1.0], [1.0, 0.5], [0.0, 1.0]).wmax
    assert "wmax`` defaults to ``np.inf``" in Sample.__doc__


def test_float_of_an_estimate():
    s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    res = elcvx.estimate(s)
    assert float(res) == res.value
    from elcvx import baselines, cressie_read

    assert float(baselines.ips(s)) == baselines.ips(s).value
    assert float(cressie_read.estimate(s)) == cressie_read.estimate(s).value


def test_interval_status_is_one_readable_string():
    assert _interval_status("optimal", "optimal") == "optimal"
    assert (_interval_status("optimal", "optimal (certified; Clarabel: optimal_inaccurate)")
            == "optimal (upper bound: certified, Clarabel: optimal_inaccurate)")
    assert (_interval_status("optimal (dual formulation)", "optimal (settings #1)")
            == "optimal (lower bound: dual formulation; upper bound: settings #1)")
    s = Sample([0.0, 2.0, 2.0, 0.5], [0.0, 1.0, 0.5, 1.0], wmax=10)
    for method in ("fast", "cvxpy"):
        status = elcvx.interval(s, method=method).status
        assert status.startswith("optimal") and "; optimal" not in status


# ------------------------------------------------------------------------------------------------
# Item 7: JSON logs that are one document
# ------------------------------------------------------------------------------------------------
def _frame():
    rng = np.random.default_rng(5)
    return pd.DataFrame({"target_prob": rng.choice([0.0, 1.0], 40), "logging_prob": rng.choice([0.25, 0.75], 40),
                         "reward": rng.integers(0, 2, 40)})


@pytest.mark.parametrize("orient", ["records", "columns", "index", "split", "table"])
def test_json_documents_read_as_json_lines(tmp_path, orient):
    df = _frame()
    lines, doc = tmp_path / "lines.jsonl", tmp_path / f"{orient}.json"
    df.to_json(lines, orient="records", lines=True)
    doc.write_text(df.to_json(orient=orient))
    ref = io.read_log(lines, pmin=0.25).sample
    got = io.read_log(doc, pmin=0.25)
    np.testing.assert_array_equal(got.sample.w, ref.w)
    np.testing.assert_array_equal(got.sample.r, ref.r)
    assert got.n_rows == 40
    table = io.read_table(doc, columns=["reward"])
    assert table["reward"].tolist() == df["reward"].tolist()


def test_json_documents_on_the_command_line(tmp_path, capsys):
    df = _frame()
    outs = []
    for name, text in (("a.jsonl", df.to_json(orient="records", lines=True)),
                       ("b.json", df.to_json(orient="records")), ("c.json", df.to_json()),
                       ("d.json", json.dumps(json.loads(df.to_json(orient="records")), indent=2))):
        (tmp_path / name).write_text(text)
        assert main(["evaluate", str(tmp_path / name), "--pmin", "0.25", "--format", "json"]) == 0
        rep = json.loads(capsys.readouterr().out)
        outs.append(rep["results"])
    assert all(o == outs[0] for o in outs[1:])


@pytest.mark.parametrize("text, fragment", [
    (lambda df: df.to_json(orient="values"), "item 1 of the JSON array is an array"),
    (lambda df: json.dumps({"w": [1.0, 2.0], "r": [0.0]}), "differ in length"),
    (lambda df: json.dumps({"w": {"0": 1.0}, "r": [0.0]}), "mixes arrays and objects"),
    (lambda df: json.dumps([1, 2, 3]), "is a int, not an object"),
    (lambda df: "[" + df.to_json(orient="records")[1:-1], "is not valid JSON"),
])
def test_json_that_is_not_a_table_is_one_short_line(tmp_path, capsys, text, fragment):
    path = tmp_path / "log.json"
    path.write_text(text(pd.concat([_frame()] * 50)))
    assert main(["evaluate", str(path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1 and len(err) < 400


def test_a_json_value_that_is_not_a_number_is_not_dumped(tmp_path, capsys):
    df = _frame()
    records = json.loads(df.to_json(orient="records"))
    records[3]["reward"] = {"nested": list(range(5000))}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(records))
    assert main(["evaluate", str(path), "--pmin", "0.25"]) == 2
    err = capsys.readouterr().err
    assert "record 4: column 'reward' is {'nested'" in err and len(err) < 300
