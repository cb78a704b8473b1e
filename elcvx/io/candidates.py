"""Reading the columns a policy selection needs: each candidate's probability of the logged
action, the logging probability and the reward, from a file, a folder of files or a glob.

Only those columns are read, each file once for all the candidates (:func:`read_candidates`);
the ``N x (K + 2)`` numbers are then held in memory, as :func:`elcvx.select` takes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidInputError
from .columns import numbers
from .sources import _log_files
from .spec import LogSpec
from .tables import read_table

__all__ = ["CandidateLog", "read_candidates"]


@dataclass(frozen=True)
class CandidateLog:
    """The columns of a selection, as arrays (:func:`read_candidates`)."""

    target_probs: np.ndarray  # (N, K)
    names: tuple
    logging_probs: np.ndarray
    rewards: np.ndarray
    baseline: np.ndarray | None  # a baseline column that is not a candidate
    path: str
    n_files: int


def read_candidates(path, candidates, *, logging_column: str = "logging_prob",
                    reward_column: str = "reward", spec: LogSpec | None = None,
                    baseline: str | None = None, format: str | None = None,
                    progress: bool | None = None, engine: str = "memory",
                    client=None) -> CandidateLog:
    """Read the candidates' columns, the logging probability and the reward of a log.

    Parameters
    ----------
    path : str
        A CSV/TSV, Parquet or JSON-lines file, or a folder or glob of Parquet/CSV files (read in
        sorted order).
    candidates : sequence of str
        The columns holding each candidate's probability of the logged action.
    logging_column, reward_column : str
        The columns of the logging probability and of the reward.
    spec : LogSpec, optional
        Its ``sep`` and ``decimal``: a CSV's dialect (its other fields are not used: the bounds
        are :func:`elcvx.select`'s).
    baseline : str, optional
        A further column to read: the probabilities of a baseline that is not a candidate.
    format, progress
        As for :func:`elcvx.io.read_table`.
    engine : {"memory", "dask"}
        ``"dask"``: the files are read on a Dask cluster's workers (``client``: a
        ``distributed.Client``, a scheduler's address, or the current client), one partition
        per file, and the columns gathered here.

    Returns
    -------
    CandidateLog
    """
    names = [str(c) for c in candidates]
    if not names:
        raise InvalidInputError("candidates: name at least one column", field="candidates")
    if len(set(names)) != len(names):
        raise InvalidInputError(f"candidates name a column twice: {names}", field="candidates")
    spec = LogSpec.from_keywords(spec)
    logging_prob, reward = logging_column, reward_column
    extra = [] if baseline is None or baseline in names else [baseline]
    wanted = list(dict.fromkeys(names + [logging_prob, reward] + extra))
    if engine == "dask":
        from ._dask import dask_columns

        parts = dask_columns(path, wanted, spec, client=client, format=format)
        files = _log_files(path, format)[0]
    else:
        files, _ = _log_files(path, format) if _several(path) else ([(str(path), format)], None)
        parts = [numbers(read_table(f, columns=wanted, format=fmt, spec=spec,
                                    progress=progress), wanted, f) for f, fmt in files]
    cols = {c: np.concatenate([p[c] for p in parts]) for c in wanted}
    return CandidateLog(np.column_stack([cols[c] for c in names]), tuple(names),
                        cols[logging_prob], cols[reward], cols[extra[0]] if extra else None,
                        str(path), len(files))


def _several(path) -> bool:
    import os

    return not os.path.isfile(path)
