"""Every study's data from a fresh clone (issue 38, item 3): ``elcvx datasets fetch --set
pessimism`` gets the pessimism and selection studies' datasets as ``--set openml`` gets the
realistic study's, checked against a manifest bundled with the package; every make target and
missing-data error names the command.

There is no network here: the download itself (``download_openml``) is replaced by a function
that serves a table rebuilt from the offline copy in ``../shared/data/pessimism``; what is
tested is the rest — the check of files already there, the conversion as the set says, the
messages.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import shutil
import subprocess
import urllib.error
from pathlib import Path

import pytest

from elcvx import datasets
from elcvx.__main__ import main  # (the whole command: reproduce is the studies')
from elcvx.datasets import fetch_command, find_set_dir, missing_set_reason
from elcvx.experiments.realistic.data import DatasetError, dataset_files

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "pessimism"
needs_shared = pytest.mark.skipif(
    not (SHARED / "MANIFEST.csv").is_file(),
    reason=f"the offline copy is not in {SHARED}: these tests check the bundled manifest against "
           f"it and serve downloads from it ({fetch_command('pessimism', SHARED)} gets it)")


def no_download(data_id):
    raise AssertionError(f"id {data_id}: a file already there must not be downloaded")


@needs_shared
def test_the_bundled_manifest_is_the_shared_one():
    bundled = datasets.manifest("pessimism")
    with open(SHARED / "MANIFEST.csv", newline="", encoding="utf-8") as f:
        shared = list(csv.DictReader(f))
    assert sorted(bundled) == sorted(int(r["openml_id"]) for r in shared) == [28, 30, 54, 181, 184]
    for row in shared:
        entry = bundled[int(row["openml_id"])]
        assert {k: str(entry[k]) for k in row if k != "openml_id"} == {k: v for k, v in row.items() if k != "openml_id"}
        (path,) = SHARED.glob(f"{row['openml_id']}_*.csv.gz")
        raw = path.read_bytes()
        assert hashlib.sha256(raw).hexdigest() == row["sha256"]  # the shared manifest's own check
        assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == entry["csv_sha256"]
        assert entry["openml_copy"] is False  # CSV copies, not OpenML's ARFF (the source says so)


@needs_shared
def test_a_copy_is_verified_offline(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(datasets, "download_openml", no_download)
    folder = tmp_path / "pessimism"
    shutil.copytree(SHARED, folder, ignore=shutil.ignore_patterns("MANIFEST.csv"))
    assert main(["datasets", "fetch", "--set", "pessimism", "--dir", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines[:-1]) == sorted(f"{p.name}: present, verified" for p in SHARED.glob("*.csv.gz"))
    assert lines[-1] == f"{folder}: 5 verified of 5 datasets"
    # one row changed: that file differs from the manifest, and says so
    vehicle = folder / "54_vehicle.csv.gz"
    text = gzip.decompress(vehicle.read_bytes()).decode().splitlines()
    text[1] = text[1].replace(",", ",1", 1)
    vehicle.write_bytes(gzip.compress(("\n".join(text) + "\n").encode()))
    assert main(["datasets", "fetch", "--set", "pessimism", "--dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "54_vehicle.csv.gz: present, differs from the manifest's copy (github datasets/openml-datasets" in out
    assert out.splitlines()[-1] == f"{folder}: 4 verified, 1 differs of 5 datasets"


def test_an_absent_folder_without_the_network(tmp_path, capsys, monkeypatch):
    def offline(data_id):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(datasets, "download_openml", offline)
    folder = tmp_path / "data" / "pessimism"
    assert main(["datasets", "fetch", "--set", "pessimism", "--dir", str(folder)]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["28: cannot reach openml.org (no route to host)"]  # said once
    assert err == (f"elcvx: error: openml.org cannot be reached: run this where it can, or copy the "
                   f"<id>_<name>.csv.gz files (e.g. ../shared/data/pessimism) into {folder} and run "
                   "it again to check them\n")
    assert not folder.exists()


def kropt_as_openml_serves_it():
    """The shared kropt file as a download would give it: nominal features as categoricals
    (codes = the file's), the target a categorical whose names rank, sorted, as the file's labels
    (declared in the reverse order, so that only the sorted ranking reproduces them)."""
    table = pd.read_csv(SHARED / "184_kropt.csv.gz")
    frame = {}
    for name in table.columns[:-1]:
        if name.startswith("cat__"):
            codes = table[name].to_numpy()
            frame[name[5:]] = pd.Categorical.from_codes(codes, categories=[f"v{i}" for i in range(codes.max() + 1)])
        else:
            frame[name] = table[name].to_numpy(dtype=float)
    labels = table["label"].to_numpy()
    names = [f"k{i:02d}" for i in range(labels.max() + 1)]
    frame["game"] = pd.Categorical([names[i] for i in labels], categories=names[::-1])
    return pd.DataFrame(frame), "game", "kropt"


@needs_shared
def test_a_download_is_converted_as_the_set_says(tmp_path, capsys, monkeypatch):
    # kropt: 28,056 rows (the openml set would keep 10,000) and nominal features and target
    monkeypatch.setattr(datasets, "download_openml", lambda data_id: kropt_as_openml_serves_it())
    folder = tmp_path / "fetched"
    assert main(["datasets", "fetch", "--set", "pessimism", "--ids", "184", "--dir", str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "184_kropt.csv.gz: downloaded: 28056 rows, 6 features, 18 classes; verified"
    assert (folder / "184_kropt.csv.gz").read_bytes() == (SHARED / "184_kropt.csv.gz").read_bytes()


def test_the_missing_data_error_names_the_fetch_command(tmp_path, capsys):
    nowhere = tmp_path / "data" / "pessimism"
    command = f"`elcvx datasets fetch --set pessimism --dir {nowhere}`"
    with pytest.raises(DatasetError) as err:
        dataset_files(nowhere, set_name="pessimism")
    assert command in str(err.value) and "does not exist" in str(err.value)
    nowhere.mkdir(parents=True)
    with pytest.raises(DatasetError, match="has no '\\*.csv.gz' file") as err:
        dataset_files(nowhere, set_name="pessimism")
    assert command in str(err.value)
    for study in ("pessimism", "selection"):
        assert main(["reproduce", study, "--data-dir", str(nowhere), "--out", str(tmp_path / "out")]) == 2
        out, err = capsys.readouterr()
        assert len(err.splitlines()) == 1 and command in err
    # the skip reason of the tests that read the set, from a clone without either folder
    reason = missing_set_reason("pessimism", tmp_path)
    assert "`elcvx datasets fetch --set pessimism --dir data/pessimism`" in reason and "\n" not in reason
    assert find_set_dir("pessimism", tmp_path) is None


def make_n(clone, target):
    return subprocess.run(["make", "-n", target], cwd=clone, capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_targets_fetch_first_and_pick_the_fetched_folder(tmp_path):
    clone = tmp_path / "clone"  # a fresh clone: no ../shared beside it
    clone.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, clone / name)
    for target, study in (("reproduce-pessimism", "pessimism"), ("reproduce-selection", "selection")):
        lines = make_n(clone, target).splitlines()
        fetch = lines.index(".venv/bin/python -m elcvx datasets fetch --set pessimism --dir data/pessimism")
        assert lines[fetch + 1].startswith(f".venv/bin/python -m elcvx reproduce {study} --data-dir data/pessimism ")
        assert any("pip install --quiet -e '.[test,data]'" in line for line in lines)  # to download
    lines = make_n(clone, "reproduce-realistic").splitlines()
    fetch = lines.index(".venv/bin/python -m elcvx datasets fetch --set openml --dir data/openml")
    assert lines[fetch + 1].startswith(".venv/bin/python -m elcvx reproduce realistic --data-dir data/openml ")
    # with the offline copy beside the clone, it is checked and used, and nothing more installed
    (tmp_path / "shared" / "data" / "pessimism").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "pessimism" / "54_vehicle.csv.gz").write_bytes(b"")
    lines = make_n(clone, "reproduce-pessimism").splitlines()
    assert ".venv/bin/python -m elcvx datasets fetch --set pessimism --dir ../shared/data/pessimism" in lines
    assert any(line.startswith(".venv/bin/python -m elcvx reproduce pessimism --data-dir ../shared/data/pessimism ")
               for line in lines)
    assert not any("[test,data]" in line for line in lines)


def test_every_dataset_a_study_reads_has_a_set():
    # the folders the studies' tests and make targets read are exactly the sets' offline copies
    makefile = (ROOT / "Makefile").read_text()
    for ds in datasets.DATASET_SETS.values():
        assert ds.shared in makefile and f"--set {ds.name} --dir" in makefile
        assert (ROOT / "elcvx" / "data" / ds.manifest).is_file()
        assert len(datasets.manifest(ds.name)) > 0
