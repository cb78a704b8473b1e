"""Progress on stderr for long work: the bar drawn while a large log is read, the bootstrap's
resamples and the cvxpy path's solves (:func:`stage`), on a terminal only."""

from __future__ import annotations

import contextlib
import sys
import threading
import time


#: A progress bar is drawn on stderr for files larger than this (when stderr is a terminal).
PROGRESS_BYTES = 50 * 2**20
#: Computations (the bootstrap, the cvxpy path) show progress once they have run this long:
#: work that ends sooner draws nothing.
SLOW_SECONDS = 3.0


def on_terminal(stream=None) -> bool:
    """Whether ``stream`` (default stderr) is a terminal, where progress is drawn."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second; with ``delay``,
    nothing is drawn before ``delay`` seconds have passed (short work stays silent)."""

    def __init__(self, label: str, total: int, enabled: bool, stream=None, unit: str = "MB",
                 delay: float = 0.0):
        self.label = label
        self.unit = unit
        self.total = max(int(total), 1)
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self._last = 0.0
        self._shown = False
        self._start = time.monotonic()
        self.delay = delay

    def update(self, done: int, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._start < self.delay:
            return
        if not force and now - self._last < 0.1:
            return
        self._last = now
        frac = min(max(done / self.total, 0.0), 1.0)
        width = 30
        bar = "#" * int(frac * width)
        scale = 2**20 if self.unit == "MB" else 1
        self.stream.write(f"\r{self.label} [{bar:<{width}}] {100 * frac:3.0f}% "
                          f"{done / scale:.0f}/{self.total / scale:.0f} {self.unit}")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False


def progress_enabled(progress, size: int) -> bool:
    if progress is None:
        return on_terminal() and size > PROGRESS_BYTES
    return bool(progress)


_active: list[str] = []  # the stage being drawn, if any


@contextlib.contextmanager
def stage(label: str, *, enabled: bool | None = None, stream=None, delay: float | None = None):
    """While the block runs: after ``delay`` seconds (default :data:`SLOW_SECONDS`), the line
    ``label ... 12 s`` on stderr, redrawn each second by a thread and erased at the end. For one
    long call (a cvxpy solve) that has no steps to count. ``enabled`` None: on a terminal."""
    stream = sys.stderr if stream is None else stream
    if not (on_terminal(stream) if enabled is None else enabled) or _active:
        yield  # (a stage inside another, e.g. the MLE a bound needs, draws on the outer's line)
        return
    delay = SLOW_SECONDS if delay is None else delay
    done = threading.Event()
    start = time.monotonic()
    shown = []

    def draw():
        wait = delay
        while not done.wait(wait):
            stream.write(f"\r{label} ... {time.monotonic() - start:.0f} s")
            stream.flush()
            shown.append(True)
            wait = 1.0

    thread = threading.Thread(target=draw, name="elcvx-progress", daemon=True)
    thread.start()
    _active.append(label)
    try:
        yield
    finally:
        _active.remove(label)
        done.set()
        thread.join()
        if shown:
            stream.write("\r\033[K")
            stream.flush()
