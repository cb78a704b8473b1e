"""Data bundled with elcvx, and the studies' OpenML datasets (:func:`fetch_datasets`).

``elcvx datasets fetch`` gets every dataset a study or a test reads, one set at a time
(:data:`DATASET_SETS`): ``--set openml``, the realistic study's (docs/realistic.md), and ``--set
pessimism``, the pessimism and selection studies' (docs/pessimism.md, docs/selection.md), each
checked against its manifest bundled here. Downloading needs the ``data`` extra (``pip install
'elcvx[data]'``: scikit-learn) and access to openml.org; checking files already there needs
neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .errors import InvalidInputError, MissingDependencyError
from .sample import Sample

#: Smallest action probability of the example log's epsilon-greedy logging policy (0.25 / 4).
EXAMPLE_PMIN = 1 / 16


def example_log_path():
    """Path of the bundled example log (CSV: x1, x2, x3, action, logging_prob, target_prob, reward)."""
    return resources.files("elcvx") / "data" / "example_log.csv"


def example_log() -> Sample:
    """The bundled example log as a :class:`Sample` (300 rows, ``wmax = 16``).

    Written by ``examples/make_example_log.py``: 4 actions, epsilon-greedy logging with
    epsilon = 0.25, a deterministic target policy, binary rewards.

    Examples
    --------
    >>> from elcvx.datasets import example_log
    >>> s = example_log()
    >>> s.n_rows, s.wmax
    (300, 16.0)
    """
    with resources.as_file(example_log_path()) as path:
        data = np.genfromtxt(path, delimiter=",", names=True)
    return Sample.from_probs(data["target_prob"], data["logging_prob"], data["reward"],
                             pmin=EXAMPLE_PMIN)


# ------------------------------------------------------------------------------------------------
# The paper's OpenML datasets (the realistic study, docs/realistic.md)
# ------------------------------------------------------------------------------------------------
#: The 40 OpenML ids of the paper's realistic experiments (its appendix "Off-Policy Evaluation,
#: Realistic Data").
PAPER_IDS = (1216, 1217, 1218, 1233, 1235, 1236, 1237, 1238, 1241, 1242, 1412, 1413, 1441, 1442,
             1443, 1444, 1449, 1451, 1453, 1454, 1455, 1457, 1459, 1460, 1464, 1467, 1470, 1471,
             1472, 1473, 1475, 1481, 1482, 1483, 1486, 1487, 1488, 1489, 1496, 1498)
#: Rows kept per dataset, as in the paper ("up to the first 10,000 examples").
MAX_ROWS = 10_000
#: Prefix of a nominal feature's column (its integer codes).
NOMINAL_PREFIX = "cat__"


@dataclass(frozen=True)
class DatasetSet:
    """A set of dataset files that studies and tests read, and how :func:`fetch_datasets` gets it.

    Attributes
    ----------
    name : str
        ``--set NAME`` of ``elcvx datasets fetch``.
    manifest : str
        The bundled manifest, a file of ``elcvx/data/`` (its columns: :func:`openml_manifest`).
    directory : str
        The folder the command writes to by default, relative to the project root.
    shared : str
        Where the development machines keep an offline copy (``../shared/data/...``): the make
        targets and the tests use it when it is there, else :attr:`directory`.
    readers : str
        The studies (and their tests) that read the set.
    max_rows : int or None
        The row cap of the conversion (:func:`convert_openml`); None keeps every row.
    label_order : str
        How a nominal target becomes ``0..K-1`` (:func:`convert_openml`'s ``label_order``).
    """

    name: str
    manifest: str
    directory: str
    shared: str
    readers: str
    max_rows: int | None
    label_order: str


#: The sets ``elcvx datasets fetch --set`` knows, by name: every dataset a study or test reads.
DATASET_SETS = {
    "openml": DatasetSet("openml", "openml_manifest.csv", "data/openml", "../shared/data/openml",
                         "the realistic study (elcvx reproduce realistic, rho)", 10_000, "declared"),
    # The LS paper's five UCI datasets, from CSV copies whose labels rank the class names
    # (the manifest's source); every row of kropt is kept.
    "pessimism": DatasetSet("pessimism", "pessimism_manifest.csv", "data/pessimism",
                            "../shared/data/pessimism",
                            "the pessimism and selection studies (elcvx reproduce pessimism, "
                            "selection) and docs/learn-then-certify.md", None, "sorted"),
}


def dataset_set(name: str) -> DatasetSet:
    """The :class:`DatasetSet` called ``name`` (an error naming the sets there are)."""
    if name not in DATASET_SETS:
        raise InvalidInputError(f"dataset set {name!r} is not one of {', '.join(DATASET_SETS)}",
                                field="set", value=name)
    return DATASET_SETS[name]


def fetch_command(name: str = "openml", directory: str | Path | None = None) -> str:
    """The command that gets set ``name`` into ``directory`` (default: the set's own folder),
    as the error messages, skip reasons and make targets say it."""
    where = dataset_set(name).directory if directory is None else str(directory)
    return f"elcvx datasets fetch --set {name} --dir {where}"


def fetch_hint(name: str = "openml", directory: str | Path | None = None) -> str:
    """How to get set ``name``, in one line: :func:`fetch_command` and what it needs."""
    return (f"get them with `{fetch_command(name, directory)}` (checks files already there "
            "against the manifest; downloads the others, which needs the 'data' extra, pip "
            "install 'elcvx[data]', and access to openml.org)")


def find_set_dir(name: str, root=".") -> Path | None:
    """Where set ``name`` is, relative to ``root`` (the project): the offline copy
    (:attr:`DatasetSet.shared`) when it holds ``*.csv.gz`` files, else the fetched folder
    (:attr:`DatasetSet.directory`) when it does, else None."""
    ds = dataset_set(name)
    for d in (ds.shared, ds.directory):
        path = Path(root) / d
        if path.is_dir() and any(path.glob("*.csv.gz")):
            return path
    return None


def missing_set_reason(name: str, root=".") -> str:
    """Why set ``name`` is not found and the command that gets it (one line: a skip reason)."""
    ds = dataset_set(name)
    return (f"{ds.readers} need the '{name}' datasets, which are not in "
            f"{Path(root) / ds.shared} or {Path(root) / ds.directory}: {fetch_hint(name)}")


def manifest(name: str = "openml") -> dict:
    """The manifest of set ``name``'s dataset files, by OpenML id (``elcvx/data/<its manifest>``).

    Each entry: ``name``, ``rows``, ``features``, ``classes``, ``sha256`` (of the
    ``<id>_<name>.csv.gz`` file), ``csv_sha256`` (of its decompressed text, which is what
    :func:`fetch_datasets` checks: it does not depend on the zlib build), ``openml_copy``
    (True when that file is the conversion of OpenML's own ARFF for the id, so a download
    should reproduce it; False when it came from another source, e.g. a regenerated stream)
    and ``source``.
    """
    import csv

    path_in_package = resources.files("elcvx") / "data" / dataset_set(name).manifest
    with resources.as_file(path_in_package) as path:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    return {int(r["openml_id"]): {**r, "rows": int(r["rows"]), "features": int(r["features"]),
                                  "classes": int(r["classes"]),
                                  "openml_copy": r["openml_copy"] == "1"} for r in rows}


def openml_manifest() -> dict:
    """:func:`manifest` of the realistic study's set (``elcvx/data/openml_manifest.csv``)."""
    return manifest("openml")


def convert_openml(frame, target: str, *, seed: int, max_rows: int | None = MAX_ROWS,
                   label_order: str = "declared"):
    """Turn a classification table into the study's format (the conversion of the shipped files).

    * Rows with a missing value are dropped.
    * Numeric features are kept (written as integers when every value is one); nominal features
      (pandas ``category`` columns, codes in the order of their categories, which for an
      OpenML ARFF is the declared order; text columns are nominal with sorted categories)
      become their integer codes, in a column named ``cat__<name>``.
    * The target becomes the last column, ``label``: a nominal target's codes (declared order;
      with ``label_order="sorted"``, the rank of its class name among the sorted names present,
      as the pessimism set's CSV copies have it), else the rank of its value among the sorted
      distinct values, so ``0..K-1``.
    * More than ``max_rows`` rows: ``max_rows`` of them drawn without replacement with
      ``numpy.random.default_rng(seed)`` (the study uses the OpenML id), kept in their order;
      ``max_rows=None`` keeps every row.

    This reproduces the shipped files byte for byte from the ARFF they came from (checked on the
    16 whose source is OpenML's ARFF, and on kr-vs-k for the cap and the label order).

    Parameters
    ----------
    frame : pandas.DataFrame
        Features and the target.
    target : str
        The target's column.
    seed : int
    max_rows : int or None
    label_order : {"declared", "sorted"}

    Returns
    -------
    table : pandas.DataFrame
        The converted table (write it with :func:`table_bytes`).
    dropped : int
        Rows dropped for a missing value.

    Examples
    --------
    >>> import pandas as pd
    >>> from elcvx.datasets import convert_openml
    >>> df = pd.DataFrame({"size": [1.5, 2.0, 3.0], "color": pd.Categorical(
    ...     ["red", "blue", "red"], categories=["red", "blue"]), "y": ["no", "yes", "no"]})
    >>> table, dropped = convert_openml(df, "y", seed=1)
    >>> table.columns.tolist(), table["cat__color"].tolist(), table["label"].tolist()
    (['size', 'cat__color', 'label'], [0, 1, 0], [0, 1, 0])
    >>> df["y"] = pd.Categorical(["no", "yes", "no"], categories=["yes", "no"])
    >>> [convert_openml(df, "y", seed=1, label_order=o)[0]["label"].tolist()
    ...  for o in ("declared", "sorted")]
    [[1, 0, 1], [0, 1, 0]]
    """
    if label_order not in ("declared", "sorted"):
        raise InvalidInputError(f"label_order={label_order!r} is not 'declared' or 'sorted'",
                                field="label_order", value=label_order)
    from .io.columns import _pandas

    pd = _pandas()
    if target not in frame.columns:
        raise InvalidInputError(f"the table has no target column {target!r}")
    keep = frame.notna().all(axis=1).to_numpy()
    dropped = int((~keep).sum())
    frame = frame.loc[keep]
    out = {}
    for name in [c for c in frame.columns if c != target] + [target]:
        col = frame[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            values, nominal = col.cat.codes.to_numpy(dtype=np.int64), True
        elif pd.api.types.is_bool_dtype(col.dtype):
            values, nominal = col.to_numpy(dtype=np.int64), False
        elif pd.api.types.is_numeric_dtype(col.dtype):
            values, nominal = col.to_numpy(dtype=float), False
            if name != target and np.all(values == np.round(values)) and np.all(np.abs(values) < 2**53):
                values = values.astype(np.int64)
        elif pd.api.types.is_object_dtype(col.dtype) or pd.api.types.is_string_dtype(col.dtype):
            text = col.astype(str)
            values = pd.Categorical(text, categories=sorted(set(text))).codes.astype(np.int64)
            nominal = True
        else:
            raise InvalidInputError(f"column {name!r} has type {col.dtype}: neither numeric nor nominal")
        if name == target:
            if nominal and label_order == "sorted":
                names = np.asarray(col.astype(str), dtype=str)
                values = np.unique(names, return_inverse=True)[1].astype(np.int64)
            elif not nominal:
                values = np.unique(values, return_inverse=True)[1].astype(np.int64)
            out["label"] = values
        else:
            out[f"{NOMINAL_PREFIX}{name}" if nominal else str(name)] = values
    table = pd.DataFrame(out)
    if max_rows is not None and len(table) > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(len(table), max_rows, replace=False))
        table = table.iloc[rows]
    return table.reset_index(drop=True), dropped


def table_bytes(table) -> bytes:
    """A converted table as the shipped ``.csv.gz`` bytes: CSV without index, ``\\n`` line ends,
    gzip level 9 with a fixed header (no name, mtime 0, OS unknown) so the bytes depend only on
    the table."""
    import zlib

    text = table.to_csv(index=False, lineterminator="\n").encode("utf-8")
    body = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflated = body.compress(text) + body.flush()
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = (zlib.crc32(text) & 0xFFFFFFFF).to_bytes(4, "little") + (len(text) & 0xFFFFFFFF).to_bytes(4, "little")
    return header + deflated + trailer


def _sklearn_fetch():
    try:
        from sklearn.datasets import fetch_openml as fetch
    except ImportError:
        raise MissingDependencyError("downloading the OpenML datasets needs scikit-learn, which is "
                                     "not installed: pip install 'elcvx[data]'") from None
    return fetch


def download_openml(data_id: int):
    """Download one OpenML dataset (scikit-learn's ``fetch_openml``, the ARFF with its declared
    nominal values) as ``(frame, target, name)``: nominal columns are pandas categoricals in
    the declared order, the others float. Needs the ``data`` extra and access to openml.org."""
    import pandas as pd

    import warnings

    fetch = _sklearn_fetch()
    with warnings.catch_warnings():
        # scikit-learn warns before each retry; a failure is reported once, by the caller.
        warnings.filterwarnings("ignore", message="A network error occurred", category=UserWarning)
        warnings.filterwarnings("ignore", message="Downloaded file could have been corrupted")
        bunch = fetch(data_id=int(data_id), as_frame=False, parser="liac-arff", target_column=None,
                      cache=False, n_retries=2, delay=1.0)
    data = bunch.data
    if hasattr(data, "toarray"):  # sparse ARFF
        data = data.toarray()
    data = np.asarray(data, dtype=float)
    categories = bunch.categories or {}
    columns = {}
    for j, name in enumerate(bunch.feature_names):
        x = data[:, j]
        if name in categories:
            codes = np.where(np.isnan(x), -1, x).astype(np.int64)
            columns[name] = pd.Categorical.from_codes(codes, categories=list(categories[name]))
        else:
            columns[name] = x
    frame = pd.DataFrame(columns)
    details = bunch.details or {}
    target = str(details.get("default_target_attribute") or "").split(",")[0]
    if target not in frame.columns:
        target = frame.columns[-1]
    return frame, target, str(details.get("name") or data_id)


def _file_name(data_id: int, name: str) -> str:
    import re

    return f"{int(data_id)}_{re.sub(r'[^A-Za-z0-9._-]+', '-', name).strip('-') or data_id}.csv.gz"


def _csv_sha256(data: bytes) -> str:
    import gzip
    import hashlib

    return hashlib.sha256(gzip.decompress(data)).hexdigest()


@dataclass(frozen=True)
class FetchResult:
    """What :func:`fetch_datasets` did with one dataset.

    ``status``: ``"verified"`` (its content matches the manifest), ``"differs"`` (it does
    not), ``"unchecked"`` (the id is not in the manifest) or ``"failed"`` (``message`` says
    why); ``downloaded``: False for a file that was already there.
    """

    id: int
    path: str
    status: str
    downloaded: bool
    message: str


def fetch_datasets(ids=None, directory=None, *, force=False, strict=False, report=None,
                   set_name="openml"):
    """Download a set's OpenML datasets into ``directory`` as ``<id>_<name>.csv.gz``.

    Each is converted by :func:`convert_openml` (seed: its id; the set's row cap and label
    order) and its decompressed content is checked against the set's :func:`manifest`'s
    ``csv_sha256``. A file already in ``directory``
    is checked, not downloaded again (unless ``force``): a complete offline copy is verified
    without the network. A download whose content differs from the manifest is kept, with a
    message saying the study's numbers on it will differ (the shipped copies of some ids came
    from other sources, see the manifest's ``source``), unless ``strict``, which discards it.

    Parameters
    ----------
    ids : iterable of int, optional
        OpenML ids; default every id of the manifest (:data:`PAPER_IDS` for all 40 of the paper).
    directory : str or PathLike, optional
        Created if missing; default the set's folder (``data/openml``, ``data/pessimism``).
    force : bool
        Download even when a file is present.
    strict : bool
        Treat a content that differs from the manifest as a failure.
    report : callable, optional
        Called with each :class:`FetchResult` as it is done (the command line prints them).
    set_name : str
        The :class:`DatasetSet` (:data:`DATASET_SETS`; the command's ``--set``): ``"openml"``
        or ``"pessimism"``.

    Returns
    -------
    list of FetchResult
    """
    which = dataset_set(set_name)
    entries = manifest(set_name)
    ids = sorted(entries) if ids is None else [int(i) for i in dict.fromkeys(ids)]
    folder = Path(which.directory if directory is None else directory)
    results = []
    for data_id in ids:
        entry = entries.get(data_id)
        existing = sorted(folder.glob(f"{data_id}_*.csv.gz")) if folder.is_dir() else []
        if existing and not force:
            res = _check_file(data_id, existing[0], entry)
        else:
            res = _fetch_one(data_id, folder, entry, strict, which)
        results.append(res)
        if report is not None:
            report(res)
        if res.status == "failed" and res.message.startswith("cannot reach"):
            break  # the network is down: say it once, not for every dataset
    return results


def _check_file(data_id, path, entry):
    data = path.read_bytes()
    try:
        digest = _csv_sha256(data)
    except (OSError, EOFError) as exc:
        return FetchResult(data_id, str(path), "failed", False, f"present but not gzip ({exc}); "
                           "delete it or use --force")
    if entry is None:
        return FetchResult(data_id, str(path), "unchecked", False, "present; not in the manifest")
    if digest == entry["csv_sha256"]:
        return FetchResult(data_id, str(path), "verified", False, "present, verified")
    return FetchResult(data_id, str(path), "differs", False,
                       f"present, differs from the manifest's copy ({entry['source']}); "
                       "--force downloads it again")


def _fetch_one(data_id, folder, entry, strict, which):
    import os
    import tempfile
    import urllib.error

    name = entry["name"] if entry is not None else None
    try:
        frame, target, openml_name = download_openml(data_id)
    except urllib.error.HTTPError as exc:
        return FetchResult(data_id, "", "failed", False, f"openml.org answered {exc.code} ({exc.reason})")
    except OSError as exc:  # URLError, a timeout, a refused connection
        reason = getattr(exc, "reason", exc)
        return FetchResult(data_id, "", "failed", False, f"cannot reach openml.org ({reason})")
    except ImportError:  # the data extra is missing: not this dataset's failure
        raise
    except Exception as exc:  # noqa: BLE001 - no such id (OpenMLError), a bad checksum, bad ARFF
        text = " ".join(str(exc).split())
        return FetchResult(data_id, "", "failed", False,
                           f"cannot be read from openml.org ({type(exc).__name__}"
                           f"{': ' + text[:200] if text else ''})")
    table, dropped = convert_openml(frame, target, seed=data_id, max_rows=which.max_rows,
                                    label_order=which.label_order)
    data = table_bytes(table)
    path = folder / _file_name(data_id, name or openml_name)
    k = int(table["label"].max()) + 1
    what = (f"{len(table)} rows, {table.shape[1] - 1} features, {k} classes"
            + (f", {dropped} rows with missing values dropped" if dropped else ""))
    if entry is None:
        status, message = "unchecked", f"downloaded: {what}; not in the manifest, not checked"
    elif _csv_sha256(data) == entry["csv_sha256"]:
        status, message = "verified", f"downloaded: {what}; verified"
    else:
        status = "differs"
        why = ("OpenML's data for this id changed since the manifest, or the download is corrupt"
               if entry["openml_copy"] else f"the study's copy came from elsewhere: {entry['source']}")
        message = (f"downloaded: {what}; differs from the manifest ({why}): the study's numbers on "
                   f"it will differ from the committed ones ({which.readers})")
        if strict:
            return FetchResult(data_id, str(path), "failed", True, message + "; not kept (--strict)")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return FetchResult(data_id, str(path), status, True, message)
