"""Opening a log file: gzip detected from its first bytes, a progress bar fed by the bytes read, and
text checked to be UTF-8 as it streams past (an error names the line of the first bad byte).
"""

from __future__ import annotations

import codecs
import gzip
import io as _stdio
import os

from ..errors import InvalidInputError
from ..engines.progress import Progress, progress_enabled


_GZIP_MAGIC = b"\x1f\x8b"


class _NotUtf8(InvalidInputError):
    """A text log with bytes that are not UTF-8; ``where`` names the first and its line."""

    def __init__(self, path: str, what: str, where: str):
        super().__init__(f"cannot read {path} as {what}: it is not UTF-8 text ({where})")
        self.where = where


class _CountingReader(_stdio.RawIOBase):
    """A raw binary stream that reports the bytes read from the file underneath it."""

    def __init__(self, raw, progress: Progress):
        self._raw = raw
        self._progress = progress
        self.count = 0

    def readable(self):
        return True

    def readinto(self, b):
        n = self._raw.readinto(b)
        if n:
            self.count += n
            self._progress.update(self.count)
        return n

    def close(self):
        self._raw.close()
        super().close()


class _Utf8Checked(_stdio.RawIOBase):
    """A binary stream passed through unchanged, raising :class:`_NotUtf8` at its first byte that
    is not UTF-8 text: not UTF-8, or NUL (valid UTF-8, but binary data: no text log holds it).

    Text readers meet such bytes badly: pyarrow's CSV reader, handed a row that is not UTF-8,
    prints a traceback it cannot raise and quotes the raw bytes in its error; json reports a
    codec error. Checking the bytes as they stream past (one decode pass) names the line instead.
    """

    def __init__(self, raw, path: str, what: str, decompressed: bool):
        self._raw = raw
        self._where = (path, what, decompressed)
        self._offset = 0  # bytes read
        self._pending = b""  # the start of a character cut by the last read

    def readable(self):
        return True

    def readinto(self, b):
        # At most 256 kB at a time: decoding a piece that stays in the cache is several times
        # faster (the buffered stream above keeps reading until it has what it was asked for).
        n = self._raw.readinto(memoryview(b)[:1 << 18])
        data = memoryview(b)[:n]
        if self._pending:
            data = self._pending + bytes(data)
        start = self._offset - len(self._pending)
        try:
            text, used = codecs.utf_8_decode(data, "strict", not n)
        except UnicodeDecodeError as exc:
            self._fail(start + exc.start, data[exc.start])
        nul = text.find("\0")
        if nul >= 0:
            self._fail(start + len(text[:nul].encode()), 0)
        self._pending = bytes(data[used:])
        self._offset += n
        return n

    def _fail(self, offset: int, byte: int):
        path, what, decompressed = self._where
        # The line is counted only now, reading the file again up to the byte: counting line
        # breaks on every read would cost as much as the check itself.
        line, left = 1, offset
        with _Opened(path, progress=False) as f:
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                line += chunk.count(b"\n")
                left -= len(chunk)
        of = " of the decompressed data" if decompressed else ""
        raise _NotUtf8(path, what, f"line {line} has the byte 0x{byte:02x}, at byte offset "
                                   f"{offset}{of}")

    def close(self):
        self._raw.close()
        super().close()


def _check_path(path) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise InvalidInputError(f"path must be a file name, got {type(path).__name__}") from None
    if not os.path.exists(path):
        raise InvalidInputError(f"cannot read {path}: no such file")
    if os.path.isdir(path):
        raise InvalidInputError(f"cannot read {path}: it is a directory")
    return path


def _head(path: str, n: int = 4) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _is_gzip(path: str) -> bool:
    return _head(path, 2) == _GZIP_MAGIC


class _Opened:
    """``with _Opened(path, progress) as f``: a binary stream of the (decompressed) file.

    ``text``: the format's name (``"CSV"``), for a text format; the stream then raises
    :class:`_NotUtf8` at the first byte that is not UTF-8.
    """

    def __init__(self, path: str, progress=None, label: str | None = None, text: str | None = None):
        self.path = path
        self.progress = progress
        self.label = label or f"elcvx: reading {os.path.basename(path)}"
        self.text = text

    def __enter__(self):
        try:
            raw = open(self.path, "rb", buffering=0)
        except OSError as exc:
            raise InvalidInputError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        size = os.fstat(raw.fileno()).st_size
        self.bar = Progress(self.label, size, progress_enabled(self.progress, size))
        counted = _CountingReader(raw, self.bar)
        self._closers = [counted]
        stream = _stdio.BufferedReader(counted, buffer_size=1 << 20)
        gzipped = stream.peek(2)[:2] == _GZIP_MAGIC
        if gzipped:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")
        if self.text is not None:
            stream = _stdio.BufferedReader(_Utf8Checked(stream, self.path, self.text, gzipped),
                                           buffer_size=1 << 20)
        self._closers.append(stream)
        return stream

    def __exit__(self, *exc):
        self.bar.close()
        for c in reversed(self._closers):
            try:
                c.close()
            except Exception:  # noqa: BLE001 - closing must not mask the real error
                pass
        return False


def _first_line(path: str, what: str) -> str:
    """The first non-blank line of a (possibly gzipped) text file, '' if none; ``what``: the
    format's name for an error (:class:`_NotUtf8`) about bytes that are not UTF-8."""
    try:
        with _Opened(path, progress=False, text=what) as f:
            for i, raw in enumerate(f):
                line = raw.strip()
                if line:
                    return line.decode("utf-8")
                if i > 1000:
                    break
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from None
    return ""
