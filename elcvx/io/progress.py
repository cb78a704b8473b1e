"""The progress bar drawn on stderr while a large log is read."""

from __future__ import annotations

import sys
import time


#: A progress bar is drawn on stderr for files larger than this (when stderr is a terminal).
PROGRESS_BYTES = 50 * 2**20


class Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, label: str, total: int, enabled: bool, stream=None, unit: str = "MB"):
        self.label = label
        self.unit = unit
        self.total = max(int(total), 1)
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self._last = 0.0
        self._shown = False

    def update(self, done: int, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
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
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        return bool(tty and size > PROGRESS_BYTES)
    return bool(progress)
