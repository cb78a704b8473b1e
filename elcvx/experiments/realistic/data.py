"""The realistic study's data: classification datasets, read, checked, shuffled and split."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import datasets as _sets
from ...errors import InvalidInputError

__all__ = ["DEFAULT_SEED", "MAX_ROWS", "DatasetError", "Dataset", "DATA_DIRS", "find_data_dir",
           "missing_data_reason", "dataset_rng", "read_dataset", "load_dataset", "dataset_files",
           "load_folder", "bandit_rewards",
           "split_sizes"]

DEFAULT_SEED = 20200
MAX_ROWS = 10_000


class DatasetError(InvalidInputError):
    """A data folder that is missing or a dataset file that is malformed."""


#: Where ``make reproduce-realistic`` and the tests look for the datasets, relative to the
#: project root: the shared offline copy first, then the folder ``elcvx datasets fetch`` writes.
DATA_DIRS = (_sets.DATASET_SETS["openml"].shared, _sets.DATASET_SETS["openml"].directory)
#: How to get the datasets, in one line.
FETCH_HINT = _sets.fetch_hint("openml")


def find_data_dir(root=".") -> Path | None:
    """The first of :data:`DATA_DIRS` (relative to ``root``) that holds ``*.csv.gz`` files, or None
    (:func:`elcvx.datasets.find_set_dir` of the ``openml`` set)."""
    return _sets.find_set_dir("openml", root)


def missing_data_reason(root=".") -> str:
    """Why the datasets are not found, and how to get them (one line, e.g. a test's skip reason)."""
    return _sets.missing_set_reason("openml", root)


@dataclass(frozen=True, eq=False)
class Dataset:
    """A shuffled, truncated classification dataset: ``X`` (float), ``y`` in ``0..K-1``."""

    id: int
    name: str
    X: np.ndarray
    y: np.ndarray
    n_classes: int
    path: str = ""

    @property
    def n(self) -> int:
        return int(self.y.size)


_NAME = re.compile(r"^(\d+)_?(.*?)\.csv\.gz$")


def dataset_rng(seed: int, dataset_id: int, *key) -> np.random.Generator:
    """``SeedSequence(seed, spawn_key=(dataset_id, *key))``."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(dataset_id),) + tuple(int(k) for k in key)))


def read_dataset(path, *, allow_missing: bool = False) -> Dataset:
    """Read one ``<id>_<name>.csv.gz`` and check it, rows in the file's order (not shuffled).

    ``allow_missing``: keep missing feature values as ``nan`` (a study that imputes them) rather
    than refuse the file.

    Raises
    ------
    DatasetError
        Naming the file and the problem: unreadable, not gzip, no ``label`` last column,
        non-numeric or (unless ``allow_missing``) missing values, labels not ``0..K-1`` integers,
        fewer than 2 classes, fewer than 10 rows.
    """
    import pandas as pd

    path = Path(path)
    m = _NAME.match(path.name)
    if not m:
        raise DatasetError(f"{path}: file name must be '<openml id>_<name>.csv.gz'")
    did, name = int(m.group(1)), m.group(2) or m.group(1)
    try:
        df = pd.read_csv(path, compression="gzip")
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DatasetError(f"{path}: cannot be read as a gzip CSV ({type(exc).__name__}: {exc})") from None
    if df.shape[1] < 2 or df.columns[-1] != "label":
        raise DatasetError(f"{path}: the last column must be 'label' (found {list(df.columns[-1:])!r}) "
                           "after at least one feature column")
    if len(df) < 10:
        raise DatasetError(f"{path}: {len(df)} rows; at least 10 are needed for the splits")
    feats = df.iloc[:, :-1]
    bad = [c for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    if bad:
        raise DatasetError(f"{path}: feature column {bad[0]!r} is not numeric")
    X = feats.to_numpy(dtype=float)
    bad = np.isinf(X) if allow_missing else ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        what = "infinite" if allow_missing else "missing or infinite"
        raise DatasetError(f"{path}: feature {feats.columns[j]!r} at row {i} is {X[i, j]!r} ({what})")
    lab = df["label"]
    if not pd.api.types.is_numeric_dtype(lab) or lab.isna().any():
        raise DatasetError(f"{path}: 'label' must be integers 0..K-1 without missing values")
    y = lab.to_numpy(dtype=float)
    if not (np.all(y == np.round(y)) and y.min() >= 0):
        raise DatasetError(f"{path}: 'label' must be integers 0..K-1 (found {y[(y != np.round(y)) | (y < 0)][0]!r})")
    y = y.astype(np.intp)
    k = int(y.max()) + 1
    if k < 2:
        raise DatasetError(f"{path}: 'label' has a single class; at least 2 are needed")
    return Dataset(did, name, np.ascontiguousarray(X), y, k, str(path))


def load_dataset(path, *, seed: int = DEFAULT_SEED, max_rows: int = MAX_ROWS) -> Dataset:
    """:func:`read_dataset` (no missing values), shuffled once and cut to ``max_rows`` rows."""
    ds = read_dataset(path)
    order = dataset_rng(seed, ds.id).permutation(ds.n)[:max_rows]
    return Dataset(ds.id, ds.name, np.ascontiguousarray(ds.X[order]), ds.y[order], ds.n_classes,
                   ds.path)


def dataset_files(data_dir, datasets=None, *, set_name: str = "openml") -> dict:
    """``OpenML id -> path`` of every ``*.csv.gz`` of ``data_dir``, in id order, or of the
    ``datasets`` given (OpenML ids, or the names after the id in the file names), in their order.

    ``set_name``: the :data:`elcvx.datasets.DATASET_SETS` entry the folder should hold, whose
    fetch command (into ``data_dir``) a missing or empty folder's error names.

    Raises
    ------
    DatasetError
        The folder is missing or empty, a file name is not ``<openml id>_<name>.csv.gz``, or a
        dataset asked for is not there (naming what the folder has).
    """
    d = Path(data_dir)
    hint = _sets.fetch_hint(set_name, d)
    if not d.is_dir():
        raise DatasetError(f"data folder {str(d)!r} does not exist (or is not a folder); expected "
                           f"'<openml id>_<name>.csv.gz' files: {hint}")
    files, names = {}, {}
    for p in sorted(d.glob("*.csv.gz")):
        m = _NAME.match(p.name)
        if not m:
            raise DatasetError(f"{p}: file name must be '<openml id>_<name>.csv.gz'")
        files[int(m.group(1))] = p
        names[m.group(2) or m.group(1)] = int(m.group(1))
    if not files:
        raise DatasetError(f"data folder {str(d)!r} has no '*.csv.gz' file: {hint}")
    if datasets is None:
        return dict(sorted(files.items()))
    wanted = [int(i) if str(i).isdigit() else names.get(str(i), str(i)) for i in datasets]
    missing = [i for i in wanted if i not in files]
    if missing:
        raise DatasetError(f"datasets {missing!r} not in {str(d)!r} (it has "
                           f"{', '.join(f'{i} ({files[i].name})' for i in sorted(files))})")
    return {i: files[i] for i in wanted if isinstance(i, int)}  # (all are: none is missing)


def load_folder(data_dir, *, datasets=None, seed: int = DEFAULT_SEED, max_rows: int = MAX_ROWS,
                set_name: str = "openml") -> list:
    """Every ``*.csv.gz`` of ``data_dir`` (or only the OpenML ids in ``datasets``), by id
    (``set_name``: as :func:`dataset_files`)."""
    files = dataset_files(data_dir, datasets, set_name=set_name)
    return [load_dataset(files[i], seed=seed, max_rows=max_rows) for i in sorted(files)]


def bandit_rewards(y, actions) -> np.ndarray:
    """The supervised-to-bandit reward: ``1.0`` where the action is the true label, else ``0.0``."""
    return (np.asarray(actions) == np.asarray(y)).astype(float)


def split_sizes(n: int, table: str) -> tuple:
    """Sizes of the sequential Initialize/Learn/Evaluate splits: 20/60/20, or 20/20/60 for learning."""
    fr = (0.2, 0.2) if table == "learning" else (0.2, 0.6)
    a = int(round(fr[0] * n))
    b = int(round(fr[1] * n))
    return a, b, n - a - b


def _splits(ds: Dataset, table: str):
    a, b, _ = split_sizes(ds.n, table)
    return slice(0, a), slice(a, a + b), slice(a + b, ds.n)

