"""The one ordered write chain of a session file, with group commit.

Appends put their line on a queue in call order (on the event loop, so order is the order of
the calls). Whoever awaits durability first becomes the leader: it takes everything queued,
writes it with one ``write`` and one ``fdatasync`` in a worker thread, and wakes every waiter
whose line was in that batch. Waiters that arrive meanwhile join the next batch. So lines land
in append order, no append is acknowledged before its fsync, and 64 concurrent appenders share
a handful of fsyncs instead of paying for 64.

The first failure is latched: it is raised to the waiters of the failed batch and to every
later call, with the file path, and nothing after it is written.

Before each batch the chain checks that the file it appends to is still the session's file:
the open descriptor and the path name the same device and inode, and the size is what the
chain left there (one ``fstat`` and one ``stat`` per batch). A file that was replaced,
truncated, grown by another writer or removed latches an error instead of taking lines that
nobody would ever read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread

from rpc_agent.errors import PersistenceError, SessionFileChangedError

from .files import fsync_dir, open_regular


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
        self._pending: list[bytes] = []
        self._queued = 0
        self._durable = 0
        self._inflight_upto = 0
        self._inflight_done: anyio.Event | None = None
        """Set when the batch being written ends; its lines' waiters sleep on it."""
        self._next_done: anyio.Event | None = None
        """The event of the next batch: waiters of lines queued behind the one in flight."""
        self._heir: anyio.Event | None = None
        """Wakes the one waiter that leads the next batch (everyone else sleeps until done)."""
        self._error: PersistenceError | None = None
        self.fsyncs = 0
        """How many fsyncs ran (exposed for benchmarks and tests of group commit)."""

    @property
    def error(self) -> PersistenceError | None:
        return self._error

    def check(self) -> None:
        if self._error is not None:
            raise self._error

    def enqueue(self, data: bytes) -> int:
        """Queue bytes (whole lines) for the file; returns the ticket to wait on."""
        self.check()
        self._pending.append(data)
        self._queued += 1
        return self._queued

    @property
    def has_pending(self) -> bool:
        return self._durable < self._queued

    async def wait(self, ticket: int | None = None) -> None:
        """Return once the line with ``ticket`` (default: everything queued) is fsynced.

        Group commit with one wake-up per waiter: a waiter whose line is in the batch being
        written sleeps until that batch ends; the first waiter of a line queued behind it
        becomes the heir and leads the next batch (everything queued by then), the others
        sleep until that next batch ends.
        """
        target = self._queued if ticket is None else ticket
        while self._durable < target:
            self.check()
            if self._inflight_done is None:
                await self._lead()
            elif target <= self._inflight_upto:
                await self._inflight_done.wait()
            elif self._heir is None:
                heir = self._heir = anyio.Event()
                try:
                    await heir.wait()
                except BaseException:
                    # Cancelled before (or just as) its turn came: let a sleeper take the turn.
                    if self._heir is heir:
                        self._heir = None
                    self._wake_next()
                    raise
            else:
                if self._next_done is None:
                    self._next_done = anyio.Event()
                await self._next_done.wait()

    async def _lead(self) -> None:
        batch, upto = self._pending, self._queued
        self._pending = []
        done, self._next_done = self._next_done or anyio.Event(), None
        self._inflight_upto, self._inflight_done = upto, done
        outcome: list[Exception | None] = []
        try:
            # Shielded: once the lines are taken off the queue they are written and accounted
            # for, even when the leader is cancelled (also right at this await, before the
            # worker thread starts: without the shield that would drop the batch).
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._write_batch, b"".join(batch), outcome)
        finally:
            if outcome and outcome[0] is None:
                self._durable = upto
            elif self._error is None:
                error = outcome[0] if outcome else RuntimeError("batch not written")
                self._error = PersistenceError(self.path, error)  # type: ignore[arg-type]
            self._inflight_done = None
            done.set()
            heir, self._heir = self._heir, None
            if heir is not None:
                heir.set()
            if self._error is not None:
                self._wake_next()

    def _wake_next(self) -> None:
        """Wake the sleepers of the next batch; they look again (one of them will lead)."""
        sleepers, self._next_done = self._next_done, None
        if sleepers is not None:
            sleepers.set()

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

    def _write_batch(self, data: bytes, outcome: list[Exception | None]) -> None:
        try:
            self._write(data)
        except Exception as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

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
        self.check()
        if self._inflight_done is not None:
            raise RuntimeError("flush_sync while an async flush is running; await wait() instead")
        if not self._pending:
            return
        batch, upto = self._pending, self._queued
        self._pending = []
        try:
            self._write(b"".join(batch))
        except Exception as exc:
            self._error = PersistenceError(self.path, exc)
            raise self._error from exc
        self._durable = upto

    def close(self) -> None:
        if self._fd is not None:
            # Forget the descriptor first: after a failed close(2) it is gone all the same, and
            # closing the number again could close a file somebody else opened meanwhile.
            fd, self._fd = self._fd, None
            os.close(fd)

    def reset_file(self) -> None:
        """Forget the open descriptor after the file was replaced by an atomic rewrite."""
        self.close()
        self.expect_file()
