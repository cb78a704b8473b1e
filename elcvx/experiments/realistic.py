r"""The paper's realistic-data experiments (its Tables 1, 2 and 3) on classification datasets.

Protocol (appendices "Off-Policy Evaluation, Realistic Data" and "Learning from Logged Bandit
Feedback"; details and conventions in ``docs/realistic.md``)
--------------------------------------------------------------------------------------------
* **Data.** Every ``*.csv.gz`` of a folder (file name ``<openml id>_<name>.csv.gz``; numeric
  columns, the last one ``label`` in ``0..K-1``) is read (:func:`load_dataset`), shuffled once
  with ``SeedSequence(seed, spawn_key=(id,))`` and cut to at most 10,000 rows. The files are in
  ``../shared/data/openml`` (an offline copy) or downloaded and converted by ``elcvx datasets
  fetch`` (:func:`elcvx.datasets.fetch_datasets`); :func:`find_data_dir` looks in both.
* **Supervised-to-bandit.** Actions are the classes; the reward of action ``a`` on row ``i`` is
  ``1[a == y_i]`` (:func:`bandit_rewards`).
* **Splits** (sequential, by row, after the shuffle; :func:`split_sizes`): 20/60/20
  Initialize/Learn/Evaluate for off-policy evaluation and intervals, 20/20/60 for learning.
* **Logging policy h.** Vowpal Wabbit ``--cb_explore K`` with one exploration strategy
  (:data:`STRATEGIES`: ``--epsilon e``, ``--bag n``, ``--cover n``; otherwise VW's defaults),
  learned on-policy on the Initialize split: for each row, predict the PMF, draw ``a`` from it,
  learn ``a:cost:p`` with cost ``1 - reward``. Then frozen: its PMF on the other splits is what
  :func:`pmf` returns.
* **Reward predictor r_hat (Tables 1, 3; el-cv and dr).** One VW squared-loss regression per
  action (:func:`train_reward_predictor`, VW's defaults, 4 passes in row order), learned from the
  bandit feedback ``(x, a, 1[a == y])`` that ``h``'s on-policy loop logged on the Initialize
  split (the logging split); predictions clipped to ``[0, 1]``. ``el-cv`` is
  :func:`elcvx.estimate` / :func:`elcvx.interval` with :func:`elcvx.constraints.reward_model`
  (``predicted = r_hat(x_n, a_n)``, ``expected = sum_a pi(a|x_n) r_hat(x_n, a)`` over the actions
  ``h`` can log, ``deterministic=True`` for the greedy targets); ``dr`` the doubly robust estimate
  ``mean(expected + w (r - predicted))``. An ``el-cv`` solve that fails on the fast path and with
  ``method="auto"`` gives ``nan``, counted per (dataset, strategy) in ``policies.csv``.
* **Target policy pi (Tables 1, 3).** A :class:`~elcvx.learning.VowpalWabbitPolicy` (VW IPS,
  default settings, greedy, so ``pi(a|x)`` is known: 0 or 1) learned off-policy in one pass over
  the Learn split with actions drawn once from ``h``. Its true value is its accuracy on the
  Evaluate split. Each replicate redraws ``a ~ h(.|x)`` on the Evaluate split.
* **Weight bound** (:func:`weight_bound`). By construction where known: ``K/epsilon`` for
  epsilon-greedy, ``n`` for ``n`` bags (a positive probability is a vote share, at least
  ``1/n``); for cover ``1/min p`` over every positive entry of ``h``'s PMF on the rows at hand
  (all actions, not only the logged ones); never below the observed ``1/min p`` (VW's float32
  PMF can be a hair below ``epsilon/K``). Bagging gives actions no bag votes for probability 0; a target action of
  probability 0 is a support deficiency, counted in ``policies.csv`` (``support_deficit``).
* **Learning (Table 2).** Per replicate, actions are drawn from ``h`` on the Learn split and a
  fresh ``VowpalWabbitPolicy`` is fit with :func:`elcvx.learning.fit` (``solver="alternating"``,
  4 passes, ``method="fast"``) for the objectives ``lower_bound``, ``estimate`` and ``ips``;
  the extra row ``lower_bound-direct`` fits a :class:`~elcvx.learning.LinearSoftmaxPolicy`
  (standardised features) with ``solver="direct"``. The true value is the policy's expected
  accuracy on the Evaluate split.
* **Paired tests.** ``scipy.stats.ttest_rel`` at 95% per dataset: of EL's squared errors
  against each other estimator's, and of ``el-cv``'s against IPS, SNIPS, EL and DR (Table 1), of each objective's true values against IPS's
  (Table 2). ``p < 0.05`` and the better mean is a win; a ``nan`` statistic (identical
  columns) is a tie.

Random streams: ``SeedSequence(seed, spawn_key=(id, strategy index, part, replicate))``; the
results depend neither on ``jobs`` nor on which other datasets or strategies are run.
"""

from __future__ import annotations

import csv
import gzip
import math
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InvalidInputError, SolverError

__all__ = [
    "STRATEGIES", "ESTIMATORS", "PAPER_ESTIMATORS", "CV_VERSUS", "INTERVAL_METHODS", "OBJECTIVES",
    "TABLES", "DEFAULT_SEED", "MAX_ROWS", "DatasetError", "Dataset", "DATA_DIRS", "find_data_dir", "missing_data_reason",
    "load_dataset", "load_folder", "bandit_rewards",
    "split_sizes", "strategy_args", "train_logging_policy", "train_reward_predictor",
    "predict_rewards", "pmf", "weight_bound", "true_value",
    "paired_outcome", "run_study", "merge_runs", "RealisticStudy",
]

STRATEGIES = ("epsilon=0.05", "epsilon=0.1", "epsilon=0.25", "bag=10", "bag=32", "cover=10", "cover=32")
#: The paper's estimators (Table 1 compares ``el`` with the others), then the two that use the
#: reward predictor: ``el-cv`` (EL with its doubly robust control variate) and ``dr`` (doubly
#: robust, ``mean(sum_a pi r_hat + w (r - r_hat(x, a)))``).
ESTIMATORS = ("el", "ips", "snips", "emp", "cr-2", "el-cv", "dr")
PAPER_ESTIMATORS = ESTIMATORS[:5]
#: ``el-cv`` is compared with these (section "EL with a reward predictor" of the summary).
CV_VERSUS = ("ips", "snips", "el", "dr")
INTERVAL_METHODS = ("el-chi2", "el-f", "cr-2-chi2", "cr-2-f", "binomial", "gaussian", "el-cv-chi2",
                    "el-bootstrap")
#: Passes of the per-action reward regressions over the logging split (the authors' default).
REWARD_PASSES = 4
OBJECTIVES = ("lower_bound", "estimate", "ips", "lower_bound-direct")
TABLES = ("ope", "ci", "learning")
DEFAULT_SEED = 20200
DEFAULT_REPLICATES = 60
MAX_ROWS = 10_000
LEVEL = 0.95

# The paper's numbers (Tables 1, 2 and 3), for the summary.
PAPER_OPE = {  # (strategy, versus) -> (wins, ties, losses) of EL; 40 datasets
    ("epsilon=0.05", "ips"): (26, 11, 3), ("bag=10", "ips"): (13, 19, 8), ("cover=10", "ips"): (16, 16, 9),
    ("epsilon=0.05", "snips"): (5, 34, 1), ("bag=10", "snips"): (7, 30, 3), ("cover=10", "snips"): (7, 33, 0),
    ("epsilon=0.05", "emp"): (24, 13, 3), ("bag=10", "emp"): (8, 26, 6), ("cover=10", "emp"): (8, 23, 9),
}
PAPER_LEARNING = {  # strategy -> ((CI LB w, t, l), (EL w, t, l)) against IPS; 40 datasets
    "epsilon=0.05": ((16, 18, 6), (11, 26, 3)), "epsilon=0.1": ((16, 19, 5), (13, 24, 3)),
    "epsilon=0.25": ((15, 22, 3), (3, 34, 3)), "bag=10": ((21, 18, 1), (11, 28, 1)),
    "bag=32": ((4, 26, 10), (7, 31, 2)), "cover=10": ((18, 21, 1), (6, 30, 4)),
    "cover=32": ((9, 29, 2), (6, 34, 0)),
}
PAPER_CI = {"el-chi2": (0.975, None), "binomial": (0.996, 2.89), "gaussian": (0.912, 0.99)}
# The authors' EL with a reward-predictor control variate ("mledr") against IPS and SNIPS, on the
# paper's 40 datasets: their code's README (github.com/pmineiro/elfcb, shootout/README.md,
# "Reward predictor control variate"); not in the paper. (strategy, versus) -> (wins, ties, losses).
AUTHORS_EL_CV = {
    ("epsilon=0.05", "ips"): (25, 12, 3), ("epsilon=0.05", "snips"): (11, 29, 0),
    ("epsilon=0.1", "ips"): (25, 12, 3), ("epsilon=0.1", "snips"): (10, 30, 0),
    ("epsilon=0.25", "ips"): (28, 9, 3), ("epsilon=0.25", "snips"): (11, 29, 0),
    ("bag=10", "ips"): (10, 21, 9), ("bag=10", "snips"): (6, 32, 2),
    ("bag=32", "ips"): (18, 15, 7), ("bag=32", "snips"): (7, 31, 2),
    ("cover=10", "ips"): (15, 14, 11), ("cover=10", "snips"): (8, 32, 0),
    ("cover=32", "ips"): (11, 13, 16), ("cover=32", "snips"): (5, 29, 6),
}
# The same README's plain EL ("mle", "make estimationshootout"), the baseline of the numbers above
# (against SNIPS it differs from the paper's Table 1, PAPER_OPE).
AUTHORS_EL = {
    ("epsilon=0.05", "ips"): (26, 11, 3), ("epsilon=0.05", "snips"): (10, 29, 1),
    ("epsilon=0.1", "ips"): (24, 13, 3), ("epsilon=0.1", "snips"): (5, 35, 0),
    ("epsilon=0.25", "ips"): (27, 10, 3), ("epsilon=0.25", "snips"): (2, 38, 0),
    ("bag=10", "ips"): (11, 20, 9), ("bag=10", "snips"): (5, 33, 2),
    ("bag=32", "ips"): (18, 15, 7), ("bag=32", "snips"): (5, 33, 2),
    ("cover=10", "ips"): (14, 15, 11), ("cover=10", "snips"): (8, 32, 0),
    ("cover=32", "ips"): (11, 13, 16), ("cover=32", "snips"): (4, 29, 7),
}

# The raw per-replicate tables: file -> (RealisticStudy attribute, columns); the first four columns
# identify a row (the fourth names the estimator, interval method or objective).
RAW_TABLES = {
    "ope.csv": ("ope", ("dataset", "strategy", "replicate", "estimator", "estimate", "truth")),
    "intervals.csv": ("intervals", ("dataset", "strategy", "replicate", "method", "low", "high", "truth")),
    "learning.csv": ("learning", ("dataset", "strategy", "replicate", "objective", "true_value")),
}


class DatasetError(InvalidInputError):
    """A data folder that is missing or a dataset file that is malformed."""


#: Where ``make reproduce-realistic`` and the tests look for the datasets, relative to the
#: project root: the shared offline copy first, then the folder ``elcvx datasets fetch`` writes.
DATA_DIRS = ("../shared/data/openml", "data/openml")
#: How to get the datasets, in one line.
FETCH_HINT = ("get them with `elcvx datasets fetch --dir data/openml` (needs the 'data' extra, "
              "pip install 'elcvx[data]', and access to openml.org)")


def find_data_dir(root=".") -> Path | None:
    """The first of :data:`DATA_DIRS` (relative to ``root``) that holds ``*.csv.gz`` files, or None."""
    for d in DATA_DIRS:
        path = Path(root) / d
        if path.is_dir() and any(path.glob("*.csv.gz")):
            return path
    return None


def missing_data_reason(root=".") -> str:
    """Why the datasets are not found, and how to get them (one line, e.g. a test's skip reason)."""
    where = " or ".join(str(Path(root) / d) for d in DATA_DIRS)
    return f"the realistic study's OpenML datasets are not in {where}: {FETCH_HINT}"


# ------------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------
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


def load_dataset(path, *, seed: int = DEFAULT_SEED, max_rows: int = MAX_ROWS) -> Dataset:
    """Read one ``<id>_<name>.csv.gz``, check it, shuffle it once and keep ``max_rows`` rows.

    Raises
    ------
    DatasetError
        Naming the file and the problem: unreadable, not gzip, no ``label`` last column,
        non-numeric or missing values, labels not ``0..K-1`` integers, fewer than 2 classes,
        fewer than 10 rows.
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
    if not np.isfinite(X).all():
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise DatasetError(f"{path}: feature {feats.columns[j]!r} at row {i} is {X[i, j]!r} (missing or infinite)")
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
    order = dataset_rng(seed, did).permutation(y.size)[:max_rows]
    return Dataset(did, name, np.ascontiguousarray(X[order]), y[order], k, str(path))


def load_folder(data_dir, *, datasets=None, seed: int = DEFAULT_SEED, max_rows: int = MAX_ROWS) -> list:
    """Every ``*.csv.gz`` of ``data_dir`` (or only the OpenML ids in ``datasets``), by id."""
    d = Path(data_dir)
    if not d.is_dir():
        raise DatasetError(f"data folder {str(d)!r} does not exist (or is not a folder); expected "
                           f"'<openml id>_<name>.csv.gz' files: {FETCH_HINT}")
    files = {}
    for p in sorted(d.glob("*.csv.gz")):
        m = _NAME.match(p.name)
        if not m:
            raise DatasetError(f"{p}: file name must be '<openml id>_<name>.csv.gz'")
        files[int(m.group(1))] = p
    if not files:
        raise DatasetError(f"data folder {str(d)!r} has no '*.csv.gz' file: {FETCH_HINT}")
    if datasets is not None:
        wanted = [int(i) for i in datasets]
        missing = [i for i in wanted if i not in files]
        if missing:
            raise DatasetError(f"datasets {missing!r} not in {str(d)!r} (it has {sorted(files)!r})")
        files = {i: files[i] for i in wanted}
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


# ------------------------------------------------------------------------------------------------
# Vowpal Wabbit policies
# ------------------------------------------------------------------------------------------------
def strategy_args(strategy: str) -> str:
    """VW arguments of a strategy name: ``epsilon=0.05`` -> ``--epsilon 0.05``, ``bag=10`` -> ``--bag 10``."""
    m = re.fullmatch(r"(epsilon|bag|cover)=([0-9.]+)", str(strategy))
    if not m:
        raise InvalidInputError(f"strategy={strategy!r} is not one of 'epsilon=E', 'bag=N', 'cover=N' "
                                f"(the paper's: {', '.join(STRATEGIES)})")
    kind, val = m.groups()
    if kind == "epsilon":
        e = float(val)
        if not 0 < e <= 1:
            raise InvalidInputError(f"strategy={strategy!r}: epsilon must lie in (0, 1]")
        return f"--epsilon {e:g}"
    if not val.isdigit() or int(val) < 1:
        raise InvalidInputError(f"strategy={strategy!r}: {kind} needs a positive integer")
    return f"--{kind} {int(val)}"


def _features(X) -> list:
    return ["| " + " ".join(f"f{j}:{v:.10g}" for j, v in enumerate(x) if v != 0.0) for x in X]


def pmf(workspace, feats, n_actions) -> np.ndarray:
    """``h(.|x)`` for every row (VW's float32 PMF, clipped at 0 and renormalised)."""
    P = np.array([workspace.predict(f) for f in feats], dtype=float).reshape(len(feats), n_actions)
    P = np.clip(P, 0.0, None)
    return P / P.sum(axis=1, keepdims=True)


def train_logging_policy(X, y, n_actions, strategy, rng, *, log=None):
    """Learn ``h`` on-policy: predict, draw, learn ``a:(1-r):p`` row by row. Returns the Workspace.

    ``log``: a list that receives the logged action of every row, in order (the logging split's
    bandit feedback, from which :func:`train_reward_predictor` learns); ``h`` is the same with
    or without it.
    """
    from ..errors import _require

    vw = _require("vowpalwabbit", "vw", "the realistic experiments")
    ws = vw.Workspace(f"--cb_explore {n_actions} {strategy_args(strategy)} --quiet --random_seed 0")
    feats = _features(X)
    u = rng.random(len(feats))
    for f, label, ui in zip(feats, y, u):
        p = np.clip(np.asarray(ws.predict(f), dtype=float), 0, None)
        p /= p.sum()
        a = min(int(np.searchsorted(np.cumsum(p), ui * p.sum(), side="right")), n_actions - 1)
        ws.learn(f"{a + 1}:{1.0 - float(a == label):g}:{p[a]:.10g} {f}")
        if log is not None:
            log.append(a)
    return ws


def train_reward_predictor(X, actions, rewards, n_actions, *, passes: int = REWARD_PASSES) -> list:
    """``r_hat(x, a)``: one Vowpal Wabbit squared-loss regression per action (VW's defaults),
    fitted on the rows where that action was logged, ``passes`` passes in row order.

    Learned from the logging split's bandit feedback ``(x, a, r)`` only (the rewards of the
    other actions are not used), as the authors' cost predictors are. Deterministic: VW's
    linear regression has no randomness, and the rows come in a fixed order. An action never
    logged predicts 0. Returns the ``n_actions`` Workspaces (:func:`predict_rewards`; ``finish``
    each when done).
    """
    from ..errors import _require

    vw = _require("vowpalwabbit", "vw", "the realistic experiments")
    feats = _features(X)
    models = [vw.Workspace("--quiet --random_seed 0") for _ in range(n_actions)]
    for _ in range(int(passes)):
        for f, a, r in zip(feats, actions, rewards):
            models[int(a)].learn(f"{float(r):g} {f}")
    return models


def predict_rewards(models, X) -> np.ndarray:
    """``r_hat(x, a)`` for every row and action, clipped to the reward range ``[0, 1]``."""
    feats = _features(X)
    R = np.array([[m.predict(f) for m in models] for f in feats], dtype=float).reshape(len(feats), len(models))
    return np.clip(R, 0.0, 1.0)


def draw_actions(P, rng) -> np.ndarray:
    """One action per row from the rows of ``P``."""
    c = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0])[:, None] * c[:, -1:]
    return np.minimum((u >= c).sum(axis=1), P.shape[1] - 1)


def weight_bound(strategy: str, P, n_actions) -> float:
    """``wmax``, by construction where known, never below the observed ``1/min p``.

    * ``epsilon=e``: every action has probability at least ``e/K``, so ``K/e``.
    * ``bag=n``: VW's bagging PMF counts the bags' votes, so a positive probability is at least
      ``1/n``: ``n`` (an action no bag votes for has probability 0 and never has a weight).
    * ``cover=n``: no simple bound by construction; ``1/min p`` over the positive entries of the
      PMF on the rows at hand (every action of every row, not only the logged ones).
    """
    positive = P[P > 0]
    observed = 1.0 / float(positive.min()) if positive.size else 1.0
    kind, val = str(strategy).split("=")
    if kind == "epsilon":
        return max(n_actions / float(val), observed)
    if kind == "bag":
        return max(float(val), observed)
    return max(observed, 1.0 + 1e-9)


def true_value(pi_probs, y) -> float:
    """The value of a policy with PMF ``pi_probs`` (rows) on labelled rows: mean ``pi(y_i|x_i)``."""
    P = np.asarray(pi_probs, dtype=float)
    y = np.asarray(y)
    return float(np.mean(P[np.arange(y.size), y]))


# ------------------------------------------------------------------------------------------------
# One OPE task: a (dataset, strategy) pair and its replicates
# ------------------------------------------------------------------------------------------------
def _evaluate(sample, predicted=None, expected=None, deterministic=False):
    """The estimates and intervals of one evaluation, and its solver counts.

    ``predicted``, ``expected``: the reward predictor's ``r_hat(x_n, a_n)`` and ``sum_a pi(a|x_n)
    r_hat(x_n, a)`` per row, for ``el-cv`` and ``dr`` (both ``nan`` without them). EL computations
    go through the fast path and, if it raises :class:`SolverError`, ``method="auto"`` (counted
    as ``el_fallbacks`` / ``elcv_fallbacks``). An ``el-cv`` computation that fails both ways is
    ``nan``, counted as ``elcv_failures`` with its message in ``errors``; the paper's EL is not
    expected to fail and raises. Returns ``(estimates, intervals, counts, errors)``.
    """
    import elcvx
    from elcvx import baselines, constraints, cressie_read

    counts = {"el_fallbacks": 0, "elcv_fallbacks": 0, "elcv_failures": 0}
    errors = []

    def el(fn, **kw):
        try:
            return fn(sample, method="fast", **kw)
        except SolverError:
            counts["el_fallbacks"] += 1
            return fn(sample, method="auto", **kw)

    def el_cv(fn, **kw):
        try:
            return fn(sample, method="fast", constraints=[cv], **kw)
        except SolverError:
            counts["elcv_fallbacks"] += 1
        try:
            return fn(sample, method="auto", constraints=[cv], **kw)
        except Exception as exc:  # noqa: BLE001 - counted and reported, never a silent drop
            counts["elcv_failures"] += 1
            errors.append(f"{fn.__name__}: {type(exc).__name__}: {exc}")
            return None

    snips = baselines.snips(sample).value if float(np.dot(sample.c, sample.w)) > 0 else 0.5
    est = {
        "el": el(elcvx.estimate, rho="midpoint").value,  # the paper's rho = 1/2 (docs/rho.md)
        "ips": baselines.ips(sample).value,
        "snips": snips,
        "emp": baselines.emp(sample).value,
        "cr-2": cressie_read.estimate(sample).value,
        "el-cv": math.nan,
        "dr": math.nan,
    }
    ivs = {
        "el-chi2": el(elcvx.interval, confidence_level=LEVEL, calibration="chi2"),
        "el-f": el(elcvx.interval, confidence_level=LEVEL, calibration="f"),
        "el-bootstrap": el(elcvx.interval, confidence_level=LEVEL, calibration="bootstrap"),
        "cr-2-chi2": cressie_read.interval(sample, confidence_level=LEVEL, calibration="chi2"),
        "cr-2-f": cressie_read.interval(sample, confidence_level=LEVEL, calibration="f"),
        "binomial": baselines.clopper_pearson_interval(sample, confidence_level=LEVEL),
        "gaussian": baselines.gaussian_interval(sample, confidence_level=LEVEL),
        "el-cv-chi2": (math.nan, math.nan),
    }
    if predicted is not None:
        predicted, expected = np.asarray(predicted, dtype=float), np.asarray(expected, dtype=float)
        cv = constraints.reward_model(sample, predicted, expected, deterministic=deterministic)
        res = el_cv(elcvx.estimate, rho="midpoint")
        est["el-cv"] = math.nan if res is None else res.value
        res = el_cv(elcvx.interval, confidence_level=LEVEL, calibration="chi2")
        ivs["el-cv-chi2"] = (math.nan, math.nan) if res is None else res
        est["dr"] = float(np.mean(expected + sample.w * (sample.r - predicted)))
    return est, {k: (float(v[0]), float(v[1])) for k, v in ivs.items()}, counts, errors


def _target_policy(ds, sl_learn, P_learn, rng):
    from ..learning import VowpalWabbitPolicy

    a = draw_actions(P_learn, rng)
    y = ds.y[sl_learn]
    pi = VowpalWabbitPolicy(ds.n_classes)
    pi.refit(ds.X[sl_learn], a, P_learn[np.arange(a.size), a], bandit_rewards(y, a), np.ones(a.size))
    return pi


@dataclass(frozen=True, eq=False)
class OpeSetup:
    """What the evaluations of one (dataset, strategy) share (:func:`ope_setup`).

    ``P_eval`` (``h(a|x)``), ``PI`` (``pi(a|x)``) and ``R_hat`` (``r_hat(x, a)``, in [0, 1]) on
    the Evaluate rows, ``y`` their labels, ``truth`` the target's value, ``wmax`` the weight
    bound, ``deterministic`` whether ``PI`` is 0/1, ``logged_init`` the actions logged on the
    Initialize split (what ``h`` and ``r_hat`` learned from).
    """

    dataset: Dataset
    strategy_index: int
    strategy: str
    seed: int
    P_eval: np.ndarray
    PI: np.ndarray
    R_hat: np.ndarray
    y: np.ndarray
    truth: float
    wmax: float
    deterministic: bool
    logged_init: np.ndarray
    n_init: int
    n_learn: int

    @property
    def expected(self) -> np.ndarray:
        """``sum_a pi(a|x) r_hat(x, a)`` per Evaluate row, over the actions ``h`` can log.

        ``E_h[w r_hat(x, a)] = sum_{a: h(a|x) > 0} pi(a|x) r_hat(x, a)``: where the target picks
        an action of logging probability 0 (bagging's support deficit, ``policies.csv``) the
        control variate has mean 0 only without that action. Elsewhere this is the plain
        ``sum_a pi(a|x) r_hat(x, a)``.
        """
        return np.sum(self.PI * self.R_hat * (self.P_eval > 0), axis=1)

    def evaluation(self, replicate: int):
        """``(sample, actions, predicted, expected)`` of one evaluation (its own random stream)."""
        import elcvx

        rng = dataset_rng(self.seed, self.dataset.id, self.strategy_index, 2, replicate)
        a = draw_actions(self.P_eval, rng)
        idx = np.arange(a.size)
        sample = elcvx.Sample.from_probs(self.PI[idx, a], self.P_eval[idx, a],
                                         bandit_rewards(self.y, a), wmax=self.wmax)
        return sample, a, self.R_hat[idx, a], self.expected


def ope_setup(ds, si, strategy, seed) -> OpeSetup:
    """Train ``h`` (and record its log), the reward predictor and ``pi`` for one (dataset, strategy)."""
    init, learn, ev = _splits(ds, "ope")
    K = ds.n_classes
    logged = []
    h = train_logging_policy(ds.X[init], ds.y[init], K, strategy, dataset_rng(seed, ds.id, si, 0), log=logged)
    P_learn = pmf(h, _features(ds.X[learn]), K)
    P_eval = pmf(h, _features(ds.X[ev]), K)
    h.finish()
    logged = np.asarray(logged, dtype=np.intp)
    models = train_reward_predictor(ds.X[init], logged, bandit_rewards(ds.y[init], logged), K)
    R_hat = predict_rewards(models, ds.X[ev])
    for m in models:
        m.finish()
    pi = _target_policy(ds, learn, P_learn, dataset_rng(seed, ds.id, si, 1))
    PI = pi.probs(ds.X[ev])
    pi.close()
    y = ds.y[ev]
    return OpeSetup(ds, si, strategy, int(seed), P_eval, PI, R_hat, y, true_value(PI, y),
                    weight_bound(strategy, P_eval, K), bool(np.all((PI == 0) | (PI == 1))), logged,
                    init.stop, learn.stop - learn.start)


def _run_ope(task):
    """Tables 1 and 3 for one (dataset, strategy): train h, r_hat and pi, then the replicates."""
    ds, si, strategy, seed, replicates, need_ci = task
    t0 = time.process_time()
    st = ope_setup(ds, si, strategy, seed)
    y, K, P_eval, PI = st.y, ds.n_classes, st.P_eval, st.PI
    truth = st.truth
    greedy = PI.argmax(axis=1)
    deficit = float(np.mean(P_eval[np.arange(y.size), greedy] == 0))
    # The reward predictor's quality on the Evaluate rows (full information: every action's
    # reward is known there): its squared error on the target's actions, and the direct
    # method's value mean(sum_a pi r_hat) against the truth.
    R_true = (np.arange(K)[None, :] == y[:, None]).astype(float)
    info = dict(dataset=ds.id, name=ds.name, strategy=strategy, table="ope", n_init=st.n_init,
                n_learn=st.n_learn, n_eval=y.size, n_actions=K, wmax=st.wmax,
                truth=truth, logging_value=true_value(P_eval, y), support_deficit=deficit,
                rhat_mse=float(np.mean(np.sum(PI * (st.R_hat - R_true) ** 2, axis=1))),
                dm_value=float(np.mean(st.expected)), deterministic_target=int(st.deterministic))
    ope, ints = [], []
    counts = {"el_fallbacks": 0, "elcv_fallbacks": 0, "elcv_failures": 0}
    failed, first_error = [], ""
    for rep in range(replicates):
        sample, _, predicted, expected = st.evaluation(rep)
        est, ivs, c, errors = _evaluate(sample, predicted, expected, st.deterministic)
        for k in counts:
            counts[k] += c[k]
        if errors:
            failed.append(rep)
            first_error = first_error or errors[0]
        for k in ESTIMATORS:
            ope.append(dict(dataset=ds.id, strategy=strategy, replicate=rep, estimator=k,
                            estimate=float(est[k]), truth=truth))
        if need_ci:
            for k in INTERVAL_METHODS:
                ints.append(dict(dataset=ds.id, strategy=strategy, replicate=rep, method=k,
                                 low=ivs[k][0], high=ivs[k][1], truth=truth))
    info.update(counts)
    info["elcv_failed_replicates"] = " ".join(map(str, failed))
    info["elcv_error"] = first_error
    return "ope", ds.id, strategy, ope, ints, info, time.process_time() - t0


# ------------------------------------------------------------------------------------------------
# One learning task: a (dataset, strategy) pair and a range of replicates
# ------------------------------------------------------------------------------------------------
def _run_learning(task):
    from ..learning import LinearSoftmaxPolicy, VowpalWabbitPolicy, fit

    ds, si, strategy, seed, start, stop, objectives = task
    t0 = time.process_time()
    init, learn, ev = _splits(ds, "learning")
    K = ds.n_classes
    h = train_logging_policy(ds.X[init], ds.y[init], K, strategy, dataset_rng(seed, ds.id, si, 0))
    P_learn = pmf(h, _features(ds.X[learn]), K)
    info = None
    if start == 0:
        P_eval = pmf(h, _features(ds.X[ev]), K)
        info = dict(dataset=ds.id, name=ds.name, strategy=strategy, table="learning", n_init=init.stop,
                    n_learn=learn.stop - learn.start, n_eval=ev.stop - ev.start, n_actions=K,
                    logging_value=true_value(P_eval, ds.y[ev]))
    h.finish()
    wmax = weight_bound(strategy, P_learn, K)
    Xl, yl, Xe, ye = ds.X[learn], ds.y[learn], ds.X[ev], ds.y[ev]
    mu, sd = ds.X[init].mean(axis=0), ds.X[init].std(axis=0)
    sd[sd == 0] = 1.0
    rows = []
    fallbacks = 0
    for rep in range(start, stop):
        a = draw_actions(P_learn, dataset_rng(seed, ds.id, si, 3, rep))
        p = P_learn[np.arange(a.size), a]
        r = bandit_rewards(yl, a)
        for obj in objectives:
            for method in ("fast", "auto"):  # the fast path first; its documented fallback if it fails
                try:
                    if obj.endswith("-direct"):
                        pol = LinearSoftmaxPolicy(Xl.shape[1], K)
                        fit(pol, (Xl - mu) / sd, a, p, r, objective=obj[:-len("-direct")],
                            solver="direct", wmax=wmax, method=method, max_iter=100)
                        value = true_value(pol.probs((Xe - mu) / sd), ye)
                    else:
                        pol = VowpalWabbitPolicy(K)
                        try:
                            fit(pol, Xl, a, p, r, objective=obj, solver="alternating", passes=4,
                                wmax=wmax, method=method)
                            value = true_value(pol.probs(Xe), ye)
                        finally:
                            pol.close()
                    break
                except SolverError:
                    fallbacks += 1
                    value = math.nan
            rows.append(dict(dataset=ds.id, strategy=strategy, replicate=rep, objective=obj,
                             true_value=value))
    if info is None:
        info = dict(dataset=ds.id, strategy=strategy, table="learning-chunk")
    info["wmax"] = wmax
    info["fit_fallbacks"] = fallbacks
    return "learning", ds.id, strategy, rows, info, stop - start, time.process_time() - t0


# ------------------------------------------------------------------------------------------------
# Summaries
# ------------------------------------------------------------------------------------------------
def paired_outcome(a, b, *, higher_is_better: bool, level: float = LEVEL) -> str:
    """``"win"``, ``"tie"`` or ``"loss"`` of ``a`` against ``b``: paired t-test (``ttest_rel``)."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)  # a failed fit (nan) drops its pair
    a, b = a[keep], b[keep]
    d = a - b
    if d.size < 2 or np.all(d == d[0]):
        if d.size and d[0] != 0 and np.all(d == d[0]):  # constant non-zero difference: certain
            better = d[0] > 0 if higher_is_better else d[0] < 0
            return "win" if better else "loss"
        return "tie"
    import warnings

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nearly identical columns: p is nan or ~1
        res = stats.ttest_rel(a, b)
    if not np.isfinite(res.pvalue) or res.pvalue >= 1 - level:
        return "tie"
    better = d.mean() > 0 if higher_is_better else d.mean() < 0
    return "win" if better else "loss"


def _wtl(outcomes) -> tuple:
    return tuple(sum(o == k for o in outcomes) for k in ("win", "tie", "loss"))


@dataclass
class RealisticStudy:
    """Raw rows of the three tables plus the per-(dataset, strategy) policy facts."""

    datasets: list
    strategies: tuple
    tables: tuple
    replicates: int
    learning_replicates: int
    seed: int | None  # None: merged runs that did not record it
    ope: list = field(default_factory=list)
    intervals: list = field(default_factory=list)
    learning: list = field(default_factory=list)
    policies: list = field(default_factory=list)
    wall_time: float = 0.0
    cpu_time: float = 0.0
    fit_fallbacks: int = 0
    jobs: int = 1
    parts: list = field(default_factory=list)  # merged runs: (folder, command, set-up line)

    # Table 1
    def ope_table(self) -> list:
        """Paired wins/ties/losses (squared error, per dataset) of ``el`` against the paper's other
        estimators and of ``el-cv`` against :data:`CV_VERSUS`, per strategy.

        ``failed``: evaluations where either estimate is ``nan`` (an ``el-cv`` solve that failed
        both ways), left out of that comparison's test and MSEs and counted here.
        """
        import pandas as pd

        if not self.ope:
            return []
        df = pd.DataFrame(self.ope)
        df["se"] = (df["estimate"] - df["truth"]) ** 2
        have = set(df.estimator)
        pairs = [("el", o) for o in PAPER_ESTIMATORS[1:]] + [("el-cv", o) for o in CV_VERSUS]
        out = []
        for strategy in self.strategies:
            for est, other in pairs:
                if est not in have or other not in have:  # e.g. merged runs made before el-cv
                    continue
                sub = df[(df.strategy == strategy) & df.estimator.isin((est, other))]
                if sub.empty:
                    continue
                w = sub.pivot(index=["dataset", "replicate"], columns="estimator", values="se")
                ok = np.isfinite(w[est]) & np.isfinite(w[other])
                outs = [paired_outcome(g[est], g[other], higher_is_better=False)
                        for _, g in w[ok].groupby(level="dataset")]
                wins, ties, losses = _wtl(outs)
                out.append(dict(estimator=est, versus=other, strategy=strategy, wins=wins, ties=ties,
                                losses=losses, datasets=len(outs),
                                mse_estimator=float(w.loc[ok, est].mean()),
                                mse_versus=float(w.loc[ok, other].mean()), failed=int((~ok).sum())))
        return out

    # Table 3
    def ci_table(self, by_strategy: bool = False) -> list:
        """Coverage and width of each interval method (per strategy with ``by_strategy``).

        Widths are compared with EL's (chi-square) on the same evaluation. ``failed``: intervals
        that are ``nan`` (an ``el-cv`` solve that failed both ways), left out of ``n``.
        """
        import pandas as pd

        if not self.intervals:
            return []
        df = pd.DataFrame(self.intervals)
        df["covered"] = (df["low"] <= df["truth"] + 1e-12) & (df["truth"] <= df["high"] + 1e-12)
        df["width"] = df["high"] - df["low"]
        ref = df[df.method == "el-chi2"].set_index(["dataset", "strategy", "replicate"])["width"]
        out = []
        groups = [(s, df[df.strategy == s]) for s in self.strategies] if by_strategy else [(None, df)]
        for strategy, part in groups:
            for m in INTERVAL_METHODS:
                sub = part[part.method == m].set_index(["dataset", "strategy", "replicate"])
                if sub.empty:
                    continue
                solved = np.isfinite(sub["low"].to_numpy()) & np.isfinite(sub["high"].to_numpy())
                sub = sub[solved]
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = (sub["width"] / ref.reindex(sub.index)).to_numpy()
                ratio = ratio[np.isfinite(ratio)]
                cov = sub["covered"].to_numpy()
                row = dict(method=m, coverage=float(cov.mean()) if cov.size else math.nan, n=int(cov.size),
                           coverage_se=float(np.sqrt(cov.mean() * (1 - cov.mean()) / cov.size)) if cov.size else math.nan,
                           median_width_ratio=float(np.median(ratio)) if ratio.size else math.nan,
                           mean_width=float(sub["width"].mean()) if cov.size else math.nan,
                           failed=int((~solved).sum()))
                out.append(row if strategy is None else dict(strategy=strategy, **row))
        return out

    # Table 2
    def learning_table(self) -> list:
        import pandas as pd

        if not self.learning:
            return []
        df = pd.DataFrame(self.learning)
        objs = [o for o in OBJECTIVES if o != "ips" and o in set(df.objective)]
        out = []
        for strategy in self.strategies:
            sub = df[df.strategy == strategy]
            if sub.empty:
                continue
            for obj in objs:
                outs = []
                for _, g in sub.groupby("dataset"):
                    w = g.pivot(index="replicate", columns="objective", values="true_value")
                    outs.append(paired_outcome(w[obj], w["ips"], higher_is_better=True))
                wins, ties, losses = _wtl(outs)
                mean = sub.groupby("objective")["true_value"].mean()
                out.append(dict(objective=obj, strategy=strategy, wins=wins, ties=ties, losses=losses,
                                datasets=len(outs), mean_value=float(mean[obj]),
                                mean_value_ips=float(mean["ips"])))
        return out

    def sort(self) -> None:
        """Order the rows by dataset, strategy, replicate, then estimator / method / objective."""
        order = {d: i for i, d in enumerate(self.datasets)}
        skey = {s: i for i, s in enumerate(self.strategies)}
        for attr, names, col in (("ope", ESTIMATORS, "estimator"), ("intervals", INTERVAL_METHODS, "method"),
                                 ("learning", OBJECTIVES, "objective")):
            getattr(self, attr).sort(key=lambda r: (order[r["dataset"]], skey[r["strategy"]], r["replicate"],
                                                    names.index(r[col])))
        self.policies.sort(key=lambda r: (r["table"], order[r["dataset"]], skey[r["strategy"]]))

    def write(self, out, *, command: str | None = None) -> list:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, (attr, cols) in RAW_TABLES.items():
            if getattr(self, attr):
                paths.append(_write_csv(out / name, cols, getattr(self, attr)))
        if self.policies:
            cols = list(dict.fromkeys(k for row in self.policies for k in row))
            paths.append(_write_csv(out / "policies.csv", cols, self.policies))
        for name, rows in (("table1_ope.csv", self.ope_table()), ("table3_intervals.csv", self.ci_table()),
                           ("table2_learning.csv", self.learning_table())):
            if rows:
                paths.append(_write_csv(out / name, list(rows[0]), rows))
        p = out / "summary.md"
        p.write_text(self.summary_markdown(command=command), encoding="utf-8")
        paths.append(p)
        return paths

    def summary_markdown(self, *, command: str | None = None) -> str:
        return _summary(self, command)


def _write_csv(path: Path, columns, rows) -> Path:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.10g}" if isinstance(v, float) else v) for k, v in row.items()})
    return path


def _fmt_s(s: float) -> str:
    if s < 60:
        return f"{s:.0f}s"
    m, s = divmod(int(round(s)), 60)
    return f"{m}m{s:02d}s" if m < 60 else f"{m // 60}h{m % 60:02d}m"


def _summary(st: RealisticStudy, command) -> str:
    ids = ", ".join(str(d) for d in st.datasets)
    L = ["# Realistic-data experiments (the paper's Tables 1-3)", "",
         "Generated by `elcvx.experiments.realistic`; do not edit by hand.", ""]
    if command:
        L += [f"Command: `{command}`", ""]
    L += [f"* Datasets ({len(st.datasets)}): {ids}",
          f"* Strategies: {', '.join(st.strategies)}",
          f"* Tables: {', '.join(st.tables)}"
          + (f"; OPE/CI evaluations per (dataset, strategy): {st.replicates}"
             if {"ope", "ci"} & set(st.tables) else "")
          + (f"; learning runs per (dataset, strategy): {st.learning_replicates}"
             if "learning" in st.tables else ""),
          (f"* Seed {st.seed}; wall time {_fmt_s(st.wall_time)} with {st.jobs} job(s) "
           f"(CPU time of the tasks {_fmt_s(st.cpu_time)}); paired t-tests (`scipy.stats.ttest_rel`) at 95%."
           if not st.parts else
           f"* Merged from {len(st.parts)} runs (seed {st.seed if st.seed is not None else 'not recorded'}); "
           "paired t-tests (`scipy.stats.ttest_rel`) at 95%. The runs:")]
    for folder, cmd, setup in st.parts:
        L.append(f"  * `{folder}`: " + (f"`{cmd}`" if cmd else "(no summary.md)") + (f"; {setup}" if setup else ""))
    L += [""]
    t1 = st.ope_table()
    if t1:
        L += ["## Table 1: off-policy evaluation, EL against each estimator (squared error)", "",
              "Wins/ties/losses of EL over datasets (a win: EL's mean squared error significantly "
              "lower). Paper: 40 datasets; ours: the datasets above.", "",
              "| EL vs. | exploration | wins | ties | losses | paper (of 40) | MSE EL | MSE other |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
        for row in sorted((r for r in t1 if r["estimator"] == "el"),
                          key=lambda r: (ESTIMATORS.index(r["versus"]), st.strategies.index(r["strategy"]))):
            paper = PAPER_OPE.get((row["strategy"], row["versus"]))
            L.append(f"| {row['versus']} | {row['strategy']} | {row['wins']} | {row['ties']} | {row['losses']} | "
                     f"{'/'.join(map(str, paper)) if paper else '—'} | {row['mse_estimator']:.3g} | "
                     f"{row['mse_versus']:.3g} |")
        L.append("")
    t3 = st.ci_table()
    if t3:
        L += ["## Table 3: 95% intervals, all datasets and evaluations", "",
              "Coverage: fraction of intervals holding the true value; width ratio: median over "
              "evaluations of width / EL (chi-square) width. `el-cv-chi2`: EL with the reward "
              "predictor's control variate (see the next section); failed: intervals not "
              "computed (left out of n).", "",
              "| method | coverage | ± s.e. | median width ratio | mean width | paper coverage | paper ratio | n | failed |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for row in t3:
            pc, pr = PAPER_CI.get(row["method"], (None, None))
            L.append(f"| {row['method']} | {row['coverage']:.3f} | {row['coverage_se']:.3f} | "
                     f"{row['median_width_ratio']:.3g} | {row['mean_width']:.3g} | {pc if pc else '—'} | "
                     f"{pr if pr else ('n/a' if pc else '—')} | {row['n']} | {row['failed']} |")
        L.append("")
    L += _summary_el_cv(st, t1 or [])
    t2 = st.learning_table()
    if t2:
        L += ["## Table 2: learning, each objective against the IPS baseline (true value)", "",
              "Wins/ties/losses over datasets (a win: the objective's mean true value significantly "
              "higher than IPS's). Paper: 'CI LB' = lower_bound, 'EL' = estimate, 40 datasets.", "",
              "| objective | exploration | wins | ties | losses | paper (of 40) | mean value | IPS mean value |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
        for row in t2:
            pp = PAPER_LEARNING.get(row["strategy"])
            paper = None
            if pp and row["objective"] == "lower_bound":
                paper = pp[0]
            elif pp and row["objective"] == "estimate":
                paper = pp[1]
            L.append(f"| {row['objective']} | {row['strategy']} | {row['wins']} | {row['ties']} | {row['losses']} | "
                     f"{'/'.join(map(str, paper)) if paper else '—'} | {row['mean_value']:.4f} | "
                     f"{row['mean_value_ips']:.4f} |")
        L.append("")
    if st.policies:
        ope = [p for p in st.policies if p.get("table") == "ope"]
        if ope:
            deficit = sum(p["support_deficit"] > 0 for p in ope)
            fb = sum(p.get("el_fallbacks", 0) for p in ope)
            L += ["## Notes", "",
                  f"* (dataset, strategy) pairs whose target picks an action of logging probability 0 "
                  f"on some evaluation rows: {deficit} of {len(ope)} (see `policies.csv`, "
                  "`support_deficit`; IPS-type estimators cannot see that part of the value).",
                  f"* EL computations the fast path did not solve (re-solved with `method=\"auto\"`): {fb}."]
            if any("elcv_failures" in p for p in ope):
                cfb = sum(p.get("elcv_fallbacks", 0) for p in ope)
                cfail = sum(p.get("elcv_failures", 0) for p in ope)
                L.append(f"* EL with the reward predictor (el-cv; an estimate and an interval per "
                         f"evaluation): computations the fast path did not solve (re-solved with "
                         f"`method=\"auto\"`): {cfb}; failed both ways (`nan` rows, counted above): {cfail}.")
            L.append("")
    if st.learning:
        nan = sum(1 for r in st.learning if not np.isfinite(r["true_value"]))
        L += [f"* Learning fits whose fast path failed (refit with `method=\"auto\"`): "
              f"{st.fit_fallbacks}; fits that failed both ways (true_value nan, dropped from the "
              f"tests): {nan}.", ""]
    return "\n".join(L)


def _summary_el_cv(st: RealisticStudy, t1) -> list:
    """The summary's section on EL with the reward predictor's control variate (el-cv)."""
    import pandas as pd

    rows = [r for r in t1 if r["estimator"] == "el-cv"]
    if not rows:
        return []
    L = ["## EL with a reward predictor (el-cv)", "",
         "`el-cv`: the EL estimate with the doubly robust control variate of a reward predictor, "
         "`E_Q[w r_hat(x, a) - sum_a pi(a|x) r_hat(x, a)] = 0` (`elcvx.constraints.reward_model`, "
         "deterministic target); `r_hat`: one VW regression per action, learned from the "
         "logging split's bandit feedback (the Initialize split, as `h` is). `dr`: the doubly "
         "robust estimate with the same `r_hat`. Wins/ties/losses of el-cv over datasets, by the "
         "paired test of Table 1. Authors: their code's README (github.com/pmineiro/elfcb, "
         "`shootout/README.md`, EL with a reward-predictor control variate), on the paper's 40 "
         "datasets; ours on the datasets above. Beside them, plain EL against the same estimator: "
         "ours (Table 1, the same evaluations) and the authors' (the same README). failed: "
         "evaluations without an el-cv estimate (left out of the test and the MSEs).", "",
         "| el-cv vs. | exploration | wins | ties | losses | our EL | authors' el-cv (of 40) | "
         "authors' EL (of 40) | MSE el-cv | MSE other | failed |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ours_el = {(r["strategy"], r["versus"]): r for r in t1 if r["estimator"] == "el"}

    def wtl(t):
        return "/".join(map(str, t)) if t else "—"

    for row in sorted(rows, key=lambda r: (CV_VERSUS.index(r["versus"]), st.strategies.index(r["strategy"]))):
        key = (row["strategy"], row["versus"])
        el = ours_el.get(key)
        L.append(f"| {row['versus']} | {row['strategy']} | {row['wins']} | {row['ties']} | {row['losses']} | "
                 f"{wtl(el and (el['wins'], el['ties'], el['losses']))} | {wtl(AUTHORS_EL_CV.get(key))} | "
                 f"{wtl(AUTHORS_EL.get(key))} | {row['mse_estimator']:.3g} | {row['mse_versus']:.3g} | "
                 f"{row['failed']} |")
    L.append("")
    est = pd.DataFrame([r for r in st.ope if r["estimator"] in ("el", "el-cv")])
    if not est.empty:
        w = est.pivot(index=["strategy", "dataset", "replicate"], columns="estimator", values="estimate")
        same = ((w["el-cv"] - w["el"]).abs() <= 1e-6)[np.isfinite(w["el-cv"])]
        by = same.groupby(level="strategy").mean()
        L += [f"el-cv equals EL (to 1e-6) in {same.mean():.0%} of the {same.size} evaluations with an "
              f"el-cv estimate ({by.min():.0%} to {by.max():.0%} by exploration strategy): there "
              "the control variate does not change the estimate.", ""]
    by = [r for r in st.ci_table(by_strategy=True) if r["method"] in ("el-chi2", "el-cv-chi2")]
    if by:
        get = {(r["strategy"], r["method"]): r for r in by}
        iv = pd.DataFrame([r for r in st.intervals if r["method"] in ("el-chi2", "el-cv-chi2")])
        iv["width"] = iv["high"] - iv["low"]
        wd = iv.pivot(index=["strategy", "dataset", "replicate"], columns="method", values="width")
        wd = wd[np.isfinite(wd["el-cv-chi2"])]
        diff = wd["el-cv-chi2"] - wd["el-chi2"]
        narrower = (diff < -1e-9).groupby(level="strategy").mean()
        wider = (diff > 1e-9).groupby(level="strategy").mean()
        L += ["Intervals (95%, chi-square), EL and el-cv on the same evaluations; width ratio: "
              "median over evaluations of el-cv's width / EL's; narrower, wider: share of the "
              "evaluations where el-cv's interval is narrower or wider than EL's (by more than 1e-9).", "",
              "| exploration | coverage EL | coverage el-cv | mean width EL | mean width el-cv | "
              "median width ratio | narrower | wider | n | failed |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for s in st.strategies:
            e, c = get.get((s, "el-chi2")), get.get((s, "el-cv-chi2"))
            if e and c:
                L.append(f"| {s} | {e['coverage']:.3f} | {c['coverage']:.3f} | {e['mean_width']:.3g} | "
                         f"{c['mean_width']:.3g} | {c['median_width_ratio']:.3g} | {narrower.get(s, math.nan):.0%} | "
                         f"{wider.get(s, math.nan):.0%} | {c['n']} | {c['failed']} |")
        L.append("")
    ope = [p for p in st.policies if p.get("table") == "ope" and "elcv_failures" in p]
    fit = [p for p in ope if "rhat_mse" in p]
    if fit:
        mse = np.array([p["rhat_mse"] for p in fit], dtype=float)
        const = np.array([p["truth"] * (1 - p["truth"]) for p in fit], dtype=float)
        L += ["The reward predictor on the Evaluate rows (`policies.csv`: `rhat_mse`, its squared "
              "error on the target's actions, every action's reward being known there): median "
              f"{np.median(mse):.3g} over the {len(fit)} (dataset, strategy) pairs (quartiles "
              f"{np.quantile(mse, 0.25):.3g}, {np.quantile(mse, 0.75):.3g}); the best constant "
              f"predictor (the target's value) would have median {np.median(const):.3g}; `r_hat` "
              f"beats it on {int(np.sum(mse < const))} of the {len(fit)} pairs.", ""]
    if ope:
        bad = [p for p in ope if p.get("elcv_failures", 0) or p.get("elcv_fallbacks", 0)]
        L.append(f"Constrained solves per (dataset, strategy): {len(bad)} of {len(ope)} pairs had a "
                 "fast-path failure (re-solved with `method=\"auto\"`) or a failure both ways"
                 + (":" if bad else "."))
        if bad:
            L += ["", "| dataset | exploration | fast-path failures | failed both ways | failed evaluations | first error |",
                  "|---:|---|---:|---:|---|---|"]
            for p in bad:
                L.append(f"| {p['dataset']} | {p['strategy']} | {p.get('elcv_fallbacks', 0)} | "
                         f"{p.get('elcv_failures', 0)} | {p.get('elcv_failed_replicates', '') or '—'} | "
                         f"{str(p.get('elcv_error', '') or '—').replace('|', '/')[:200]} |")
        L.append("")
    return L


# ------------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------------
def run_study(data_dir, *, tables=TABLES, replicates: int = DEFAULT_REPLICATES,
              learning_replicates: int | None = None, strategies=STRATEGIES, datasets=None,
              seed: int = DEFAULT_SEED, jobs: int = 2, objectives=OBJECTIVES,
              max_rows: int = MAX_ROWS, progress: bool = True, stream=None) -> RealisticStudy:
    """Run the chosen tables on every dataset of ``data_dir`` under every strategy.

    ``replicates`` is the number of OPE evaluations per (dataset, strategy);
    ``learning_replicates`` (default: ``replicates``) the number of learning runs.
    """
    tables = tuple(tables)
    bad = [t for t in tables if t not in TABLES]
    if bad or not tables:
        raise InvalidInputError(f"tables={tables!r}: choose among {', '.join(TABLES)}")
    strategies = tuple(strategies)
    for s in strategies:
        strategy_args(s)
    for o in objectives:
        if o not in OBJECTIVES:
            raise InvalidInputError(f"objective {o!r}: choose among {', '.join(OBJECTIVES)}")
    if "learning" in tables and "ips" not in objectives:
        raise InvalidInputError("objectives must include 'ips', the learning table's baseline")
    if int(replicates) < 2:
        raise InvalidInputError(f"replicates={replicates!r} must be >= 2 (paired tests)")
    lreps = int(replicates if learning_replicates is None else learning_replicates)
    if lreps < 2:
        raise InvalidInputError(f"learning_replicates={learning_replicates!r} must be >= 2")
    data = load_folder(data_dir, datasets=datasets, seed=seed, max_rows=max_rows)
    st = RealisticStudy(datasets=[d.id for d in data], strategies=strategies, tables=tables,
                        replicates=int(replicates), learning_replicates=lreps, seed=int(seed), jobs=int(jobs))
    tasks = []
    sidx = {s: STRATEGIES.index(s) if s in STRATEGIES else 100 + i for i, s in enumerate(strategies)}
    if "ope" in tables or "ci" in tables:
        for d in data:
            for s in strategies:
                tasks.append((_run_ope, (d, sidx[s], s, seed, int(replicates), "ci" in tables)))
    if "learning" in tables:
        chunk = 5
        for d in data:
            for s in strategies:
                for a in range(0, lreps, chunk):
                    tasks.append((_run_learning, (d, sidx[s], s, seed, a, min(a + chunk, lreps), tuple(objectives))))
    total = len(tasks)
    stream = stream or sys.stderr
    t0 = time.perf_counter()
    done = [0]
    keep_ope = "ope" in tables
    learning_fallbacks = {}  # (dataset, strategy) -> refits over all its chunks

    def collect(res):
        if res[0] == "ope":
            _, did, s, ope, ints, info, secs = res
            if keep_ope:
                st.ope.extend(ope)
            st.intervals.extend(ints)
            st.policies.append(info)
        else:
            _, did, s, rows, info, m, secs = res
            st.learning.extend(rows)
            if info.get("table") == "learning":
                st.policies.append(info)
            learning_fallbacks[did, s] = learning_fallbacks.get((did, s), 0) + info["fit_fallbacks"]
        st.cpu_time += secs
        done[0] += 1
        if progress:
            el = time.perf_counter() - t0
            eta = el / done[0] * (total - done[0])
            print(f"[realistic] {res[0]:<8s} dataset {did:<5d} {s:<13s} | task {done[0]}/{total} | "
                  f"elapsed {_fmt_s(el)}, ETA {_fmt_s(eta)}", file=stream, flush=True)

    if jobs == 1:
        for fn, t in tasks:
            collect(fn(t))
    else:
        with ProcessPoolExecutor(max_workers=int(jobs)) as pool:
            futs = [pool.submit(fn, t) for fn, t in tasks]
            for f in as_completed(futs):
                collect(f.result())
    for p in st.policies:
        if p["table"] == "learning":
            p["fit_fallbacks"] = learning_fallbacks[p["dataset"], p["strategy"]]
    st.fit_fallbacks = sum(learning_fallbacks.values())
    st.sort()
    st.wall_time = time.perf_counter() - t0
    return st


def _read_raw(path: Path, columns) -> list:
    """The rows of one raw table written by :meth:`RealisticStudy.write` (plain or gzip)."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if tuple(reader.fieldnames or ()) != tuple(columns):
                raise DatasetError(f"{path}: columns {reader.fieldnames} are not {', '.join(columns)}")
            rows = []
            for line, row in enumerate(reader, start=2):
                try:
                    rows.append({c: (row[c] if c in ("strategy", columns[3])
                                     else int(row[c]) if c in ("dataset", "replicate") else float(row[c]))
                                 for c in columns})
                except (TypeError, ValueError):
                    raise DatasetError(f"{path}, line {line}: malformed row {row}") from None
    except (OSError, EOFError, gzip.BadGzipFile, csv.Error) as exc:
        raise DatasetError(f"{path}: cannot be read ({exc})") from None
    return rows


def _policy_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


_REFITS = re.compile(r"^\* Learning fits whose fast path failed \(refit with `method=\"auto\"`\): (\d+);")


def _run_provenance(folder: Path) -> tuple:
    """(command, set-up line, learning refits or None) from the summary.md a run wrote.

    The refit total is read from the summary because ``policies.csv`` counted only the first
    chunk of runs of each (dataset, strategy) before commit 26a43be.
    """
    path = folder / "summary.md"
    command = setup = ""
    refits = None
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("Command: `") and line.endswith("`"):
                command = line[len("Command: `"):-1]
            elif line.startswith("* Seed ") or line.startswith("* Merged from "):
                setup = line[2:].split("; paired t-tests")[0]
            elif _REFITS.match(line):
                refits = int(_REFITS.match(line).group(1))
    return command, setup, refits


def merge_runs(folders) -> RealisticStudy:
    """Combine the raw tables of earlier runs into one study, as if it had been run at once.

    A paper-size run can be split by ``--strategies`` or ``--datasets`` over sessions or
    machines: every (dataset, strategy, replicate) has its own random stream, so the parts'
    rows are exactly the rows of a single run with the same seed. Each folder is the ``--out``
    of a run (raw tables plain or gzip-compressed). A row present in two parts must be equal in
    both; every (dataset, strategy) of a table must have the same replicates ``0..R-1``; the
    parts' seeds (read from their ``summary.md``) must agree. Raises :class:`DatasetError`
    naming the file and row otherwise.
    """
    folders = list(dict.fromkeys(Path(f) for f in folders))  # a folder named twice is one run
    if not folders:
        raise InvalidInputError("merge: no run folders given")
    tables = {attr: {} for attr, _ in RAW_TABLES.values()}
    policies, parts, seeds = {}, [], set()
    refits = 0
    for folder in folders:
        if not folder.is_dir():
            raise DatasetError(f"{folder}: run folder does not exist")
        found = False
        for name, (attr, cols) in RAW_TABLES.items():
            path = next((p for p in (folder / name, folder / (name + ".gz")) if p.is_file()), None)
            if path is None:
                continue
            found = True
            for row in _read_raw(path, cols):
                key = tuple(row[c] for c in cols[:4])
                old = tables[attr].setdefault(key, row)
                same = all(old[c] == row[c] or (math.isnan(old[c]) and math.isnan(row[c])) for c in cols[4:])
                if not same:
                    raise DatasetError(f"{path}: the row {dict(zip(cols[:4], key))} differs from the "
                                       "same row of an earlier folder (different seeds or code?)")
        if not found:
            raise DatasetError(f"{folder}: no {', '.join(RAW_TABLES)} (plain or .gz) to merge")
        pol = folder / "policies.csv"
        part_policies = []
        if pol.is_file():
            with open(pol, newline="", encoding="utf-8") as fh:
                part_policies = [{k: _policy_value(v) for k, v in row.items() if v != ""}
                                 for row in csv.DictReader(fh)]
        for row in part_policies:
            policies.setdefault((row["table"], row["dataset"], row["strategy"]), row)
        command, setup, part_refits = _run_provenance(folder)
        if part_refits is None:
            part_refits = sum(p.get("fit_fallbacks", 0) for p in part_policies if p["table"] == "learning")
        refits += part_refits
        seed = re.search(r"--seed (\d+)", command)
        if seed:
            seeds.add(int(seed.group(1)))
        parts.append((str(folder), command, setup))
    if len(seeds) > 1:
        raise DatasetError(f"merge: the runs used different seeds {sorted(seeds)}")
    counts = {}
    for name, (attr, cols) in RAW_TABLES.items():
        groups = {}
        for d, s, rep, _ in tables[attr]:
            groups.setdefault((d, s), set()).add(rep)
        shapes = {}
        for (d, s), reps in groups.items():
            if reps != set(range(len(reps))):
                raise DatasetError(f"{name}: dataset {d}, {s} has replicates {sorted(reps)}, not 0..R-1")
            shapes.setdefault(len(reps), (d, s))
        if len(shapes) > 1:
            (r1, g1), (r2, g2) = list(shapes.items())[:2]
            raise DatasetError(f"{name}: dataset {g1[0]}, {g1[1]} has {r1} replicates but dataset "
                               f"{g2[0]}, {g2[1]} has {r2}; merge runs made with the same replicate counts")
        counts[attr] = next(iter(shapes), 0)
    rows = {attr: list(t.values()) for attr, t in tables.items()}
    every = [r for t in rows.values() for r in t]
    known = {s: i for i, s in enumerate(STRATEGIES)}
    strategies = sorted({r["strategy"] for r in every}, key=lambda s: (known.get(s, len(known)), s))
    st = RealisticStudy(datasets=sorted({r["dataset"] for r in every}), strategies=tuple(strategies),
                        tables=tuple(t for t, a in zip(TABLES, ("ope", "intervals", "learning")) if rows[a]),
                        replicates=counts["ope"] or counts["intervals"],
                        learning_replicates=counts["learning"], seed=seeds.pop() if seeds else None,
                        ope=rows["ope"], intervals=rows["intervals"], learning=rows["learning"],
                        policies=list(policies.values()), parts=parts)
    st.fit_fallbacks = refits
    st.sort()
    return st
