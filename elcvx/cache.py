"""Values computed once per sample: :class:`PerSample`, the one kind of cache elcvx keeps.

A :class:`~elcvx.Sample` and a scanned log (:class:`~elcvx.io.LogScan`) are immutable, so what is
computed from one alone (its MLE, the baselines' sums, the paper's atoms) can be kept and read
again. Each such cache is a module-level :class:`PerSample` of the module that computes the
value, named there; none is written into the sample, so nothing of it is pickled, copied or
compared with the sample.
"""

from __future__ import annotations

import threading
import weakref
from typing import Callable, TypeVar

T = TypeVar("T")


class PerSample:
    """A cache of one value per sample (or scanned log).

    Key: the sample object itself, by identity (a sample is immutable, so its values are too;
    two equal samples built apart are two keys). Lifetime: the sample's. The key is held
    weakly, so the cache never keeps a sample alive and its entry goes when the sample does.
    A pickled or copied sample starts with no entry: the values are computed again from the
    rows, which are what is pickled.

    Parameters
    ----------
    what : str
        What the cache holds (its repr, for a reader).
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._values: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()  # (a pass's threads may ask at once: one value is kept)

    def get(self, sample, make: Callable[[], T]) -> T:
        """The value kept for ``sample``, else ``make()``, kept. ``make`` runs outside the lock
        (it may be a solve); where two threads make it at once, the first kept is the one both
        return."""
        try:
            return self._values[sample]
        except KeyError:
            pass
        value = make()
        with self._lock:
            return self._values.setdefault(sample, value)

    def __getitem__(self, sample):
        """The value kept for ``sample`` (:class:`KeyError` when there is none)."""
        return self._values[sample]

    def __contains__(self, sample) -> bool:
        return sample in self._values

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"PerSample({self.what!r}, {len(self)} samples)"
