"""Data bundled with elcvx."""

from __future__ import annotations

from importlib import resources

import numpy as np

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
