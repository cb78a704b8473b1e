"""The threads a pass runs its blocks on.

A pass over rows in memory is a fold of a block kernel (:mod:`elcvx.engines.blocks`): numpy
releases the GIL inside each of its array operations, so the blocks can be computed on several
threads at once. Each thread takes a contiguous run of blocks; the blocks' partial sums are then
merged on the calling thread in the blocks' order, whatever the number of threads, so the
answers are the same to the last bit on one thread or many.

The number of threads is ``ELCVX_NUM_THREADS`` (a positive integer; default: every core this
process may run on), or the ``threads`` keyword of the functions that take one.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from ..errors import InvalidInputError

#: The environment variable that sets the threads of a pass.
ENV = "ELCVX_NUM_THREADS"


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # (not on every platform)
        return max(1, os.cpu_count() or 1)


def num_threads(threads: int | None = None) -> int:
    """The threads of a pass: ``threads`` if given, else ``ELCVX_NUM_THREADS``, else
    :func:`cores`. A value that is not a positive integer raises
    :class:`~elcvx.InvalidInputError` naming where it came from."""
    field, value = ("threads", threads) if threads is not None else (ENV, os.environ.get(ENV))
    if value is None or (field == ENV and not str(value).strip()):
        return cores()
    try:
        count = int(value)
        valid = count >= 1 and (field == ENV or count == value)
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise InvalidInputError(f"{field}={value!r} is not valid; give a positive integer (the "
                                "threads a pass over the rows runs on)", field=field, value=value)
    return count


def run(tasks, threads: int) -> list:
    """The results of ``tasks`` (functions of no argument), in their order: the first on the
    calling thread, the others on a pool of ``threads - 1`` threads (made once, grown when
    more are asked for)."""
    if threads <= 1 or len(tasks) <= 1:
        return [task() for task in tasks]
    pool = POOL.get(threads - 1)
    futures = [pool.submit(task) for task in tasks[1:]]
    first = tasks[0]()
    return [first] + [f.result() for f in futures]


class PassPool:
    """The threads the passes share (beside the calling thread).

    Made by the first pass that runs on more than one thread, and grown (a new pool, the old
    one shut down) when a pass asks for more; lifetime: the process. A child process made by
    ``fork`` starts with none (:meth:`forget`): the parent's threads are not there, and a task
    given to them would wait for ever.
    """

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Drop the pool (in a forked child: its threads are the parent's)."""
        self._pool: ThreadPoolExecutor | None = None
        self._size = 0
        self._lock = threading.Lock()

    def get(self, size: int) -> ThreadPoolExecutor:
        """A pool of at least ``size`` threads."""
        with self._lock:
            if self._pool is None or self._size < size:
                if self._pool is not None:
                    self._pool.shutdown(wait=False)
                self._pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="elcvx-pass")
                self._size = size
            return self._pool


#: The process's :class:`PassPool` (:func:`run` takes its threads).
POOL = PassPool()
if hasattr(os, "register_at_fork"):  # (not on Windows, which has no fork)
    os.register_at_fork(after_in_child=POOL.forget)
