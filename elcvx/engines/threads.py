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

_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


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
    pool = _pool(threads - 1)
    futures = [pool.submit(task) for task in tasks[1:]]
    first = tasks[0]()
    return [first] + [f.result() for f in futures]


def _forget_pool() -> None:
    """In a child process made by ``fork``: the parent's pool's threads are not there (a task
    given to it would wait for ever); the child makes its own."""
    global _POOL, _POOL_SIZE, _POOL_LOCK
    _POOL, _POOL_SIZE, _POOL_LOCK = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _pool(size: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < size:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL = ThreadPoolExecutor(max_workers=size, thread_name_prefix="elcvx-pass")
            _POOL_SIZE = size
        return _POOL
