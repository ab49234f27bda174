"""The one ordered write chain of a session file, with group commit.

The queueing, batching and waking are those of ``rpc_agent.io.Coalescer`` (the design stdout
uses too): appends queue their line in call order, one batch at a time is written with one
``write`` and one ``fdatasync`` in a worker thread, and the waiters of its lines wake after the
fsync. So lines land in append order, no append is acknowledged before its fsync, and 64
concurrent appenders share a handful of fsyncs instead of paying for 64. The first failure is
latched as a PersistenceError naming the file: raised to the waiters of the failed batch and to
every later call, and nothing after it is written.

Before each batch the chain checks that the file it appends to is still the session's file:
the open descriptor and the path name the same device and inode, and the size is what the
chain left there (one ``fstat`` and one ``stat`` per batch). A file that was replaced,
truncated, grown by another writer or removed latches an error instead of taking lines that
nobody would ever read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from rpc_agent.errors import PersistenceError, SessionFileChangedError
from rpc_agent.io import Coalescer
from rpc_agent.regular_files import open_regular
from rpc_agent.store.files import fsync_dir


class WriteChain:
    def __init__(self, path: Path, *, on_open: Callable[[int], None] | None = None) -> None:
        self.path = path
        self._fd: int | None = None
        self._on_open = on_open
        """Called with the descriptor once the file is open (the lock follows the file)."""
        self._identity: tuple[int, int] | None = None
        """Device and inode of the session's file, once known."""
        self._size: int | None = None
        """Bytes the file holds as far as this chain knows (what was read, plus what it wrote)."""
        self._must_be_new = False
        self._lines: Coalescer[bytes] = Coalescer(self._write_lines, latch=self._persistence_error)
        self.fsyncs = 0
        """How many fsyncs ran (exposed for benchmarks and tests of group commit)."""

    def _persistence_error(self, cause: Exception) -> Exception:
        return PersistenceError(self.path, cause)

    @property
    def error(self) -> PersistenceError | None:
        return self._lines.error  # type: ignore[return-value]

    def check(self) -> None:
        self._lines.check()

    def enqueue(self, data: bytes) -> int:
        """Queue bytes (whole lines) for the file; returns the ticket to wait on."""
        return self._lines.put(data)

    @property
    def has_pending(self) -> bool:
        return self._lines.has_pending

    def wait(self, ticket: int | None = None) -> Coroutine[Any, Any, None]:
        """Return once the line with ``ticket`` (default: everything queued) is fsynced.

        The coalescer's own coroutine, not one wrapped in another: every append awaits this.
        """
        return self._lines.wait(ticket)

    def expect_file(self) -> None:
        """Remember the file now at the path as the session's (or that there is none yet).

        The store calls it after it read, repaired or wrote the file: from then on only this
        chain changes it, and the first append checks that it is still that file.
        """
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self._identity, self._size, self._must_be_new = None, None, True
            return
        self._identity, self._size, self._must_be_new = (info.st_dev, info.st_ino), info.st_size, False

    def _open(self) -> int:
        if self._fd is None:
            created = not self.path.exists()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_regular(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                if created:
                    fsync_dir(self.path.parent)
                info = os.fstat(fd)
                if self._identity is None:
                    if self._must_be_new and info.st_size:
                        raise SessionFileChangedError(self.path, "appeared with content")
                    self._identity, self._size = (info.st_dev, info.st_ino), info.st_size
                if self._on_open is not None:
                    self._on_open(fd)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    def _verify(self, fd: int) -> None:
        """Raise SessionFileChangedError unless ``fd`` is still the file at the path, as left."""
        mine = os.fstat(fd)
        try:
            there = os.stat(self.path)
        except FileNotFoundError:
            raise SessionFileChangedError(self.path, "was removed") from None
        if (mine.st_dev, mine.st_ino) != self._identity or (there.st_dev, there.st_ino) != self._identity:
            raise SessionFileChangedError(self.path, "was replaced by another file")
        if self._size is not None and mine.st_size != self._size:
            what = "was truncated" if mine.st_size < self._size else "was appended to"
            raise SessionFileChangedError(self.path, f"{what} ({mine.st_size} bytes, expected {self._size})")

    def _write_lines(self, lines: list[bytes]) -> None:
        self._write(lines[0] if len(lines) == 1 else b"".join(lines))

    def _write(self, data: bytes) -> None:
        fd = self._open()
        self._verify(fd)
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            if self._size is not None:
                self._size += len(data) - len(view)
        os.fdatasync(fd)
        self.fsyncs += 1

    def flush_sync(self) -> None:
        """Write what is queued without an event loop (shutdown paths, synchronous callers)."""
        self._lines.flush_sync()

    def close(self) -> None:
        if self._fd is not None:
            # Forget the descriptor first: after a failed close(2) it is gone all the same, and
            # closing the number again could close a file somebody else opened meanwhile.
            fd, self._fd = self._fd, None
            os.close(fd)
