"""Bytes in, bytes out: LF-framed lines on a pipe, nothing about JSON-RPC.

Framing is strict: a line ends at LF (``b"\\n"``) and nowhere else; one trailing CR is dropped so
CRLF clients work. We work on bytes and never decode before splitting, so U+2028/U+2029, NEL or
form feeds inside a JSON string cannot cut a message in two (Node's readline does exactly that
to the reference agent's clients).

Reading happens in large chunks in a worker thread, one thread hop per chunk rather than per
line: a client that pipelines a thousand requests costs the event loop one wake-up. Writing
goes through one queue drained by one task, which hands everything queued to a single
``writev`` (``rpc_agent.io.Coalescer``, the design the session file uses too); lines are never
interleaved and pipelined responses share a syscall.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import sys
from collections.abc import AsyncIterator
from types import TracebackType
from typing import BinaryIO

import anyio
import anyio.abc
import anyio.to_thread

from rpc_agent.io import Coalescer
from rpc_agent.io.background import Foreground

logger = logging.getLogger(__name__)

CHUNK_SIZE = 1 << 16
"""Bytes asked for per read: a full default pipe buffer on Linux."""

_ESCAPE_WINDOW = 1 << 20
"""Bytes of a big piece looked at (and escaped) at a time, see ``_escaped``."""

_LS = "\u2028".encode()
_PS = "\u2029".encode()


class LineReader:
    """Async iterator over the complete lines of a byte source, a chunk's worth at a time.

    ``async for lines in reader`` yields non-empty lists of lines (``bytes`` without the LF and
    without one trailing CR, possibly empty) and stops at EOF; an unterminated last line is
    delivered at EOF too. ``source`` is a file descriptor or a binary file (stdin by default).

    On a pollable descriptor (POSIX pipes, ttys, files) the blocking read waits in ``poll`` on
    the source and on a private wake-up pipe: cancelling a read wakes the worker thread and lets
    it finish, so a cancelled server does not hang at interpreter exit in a thread still stuck
    in ``read`` (anyio's worker threads are not daemons). A cancelled reader is closed, and a
    closed reader is at EOF.
    """

    def __init__(self, source: int | BinaryIO | None = None, *, chunk_size: int = CHUNK_SIZE) -> None:
        if source is None:
            source = sys.stdin.buffer
        self._file: BinaryIO | None = None
        self._fd: int | None = None
        if isinstance(source, int):
            self._fd = source
        else:
            try:
                self._fd = source.fileno()
            except (OSError, AttributeError, ValueError):
                self._file = source
        self._chunk_size = chunk_size
        self._partial: list[bytes] = []
        self._eof = False
        self._closed = False
        self._reading = False
        self._wake_r: int | None = None
        self._wake_w: int | None = None
        self._poll: select.poll | None = None
        if self._fd is not None and hasattr(select, "poll"):
            self._wake_r, self._wake_w = os.pipe()
            self._poll = select.poll()
            self._poll.register(self._fd, select.POLLIN)
            self._poll.register(self._wake_r, select.POLLIN)

    def __aiter__(self) -> AsyncIterator[list[bytes]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[list[bytes]]:
        while True:
            lines = await self.read_lines()
            if not lines:
                return
            yield lines

    async def read_lines(self) -> list[bytes]:
        """The complete lines of the next chunk(s); ``[]`` means EOF."""
        while not self._eof:
            if self._closed:
                self._eof = True
                if not self._reading:  # no worker thread left that could still use the pipe
                    self._close_wake_pipe()
                break
            self._reading = True
            try:
                chunk = await anyio.to_thread.run_sync(self._read_chunk, abandon_on_cancel=True)
                self._reading = False
            except BaseException:
                # Cancelled (or the read failed): the thread may still be blocked; wake it and
                # close this reader, since a second thread reading the same source would race
                # with the abandoned one for the bytes.
                self._close(reading=True)
                raise
            if not chunk:
                self._eof = True
                self._close(reading=False)
                if self._partial:
                    last = b"".join(self._partial)
                    self._partial = []
                    return [last[:-1] if last.endswith(b"\r") else last]
                return []
            lines = chunk.split(b"\n")
            if len(lines) == 1:
                # No LF in this chunk: keep collecting (a list, so a multi-megabyte line costs one join).
                self._partial.append(chunk)
                continue
            if self._partial:
                self._partial.append(lines[0])
                lines[0] = b"".join(self._partial)
                self._partial = []
            tail = lines.pop()
            if tail:
                self._partial.append(tail)
            for i, line in enumerate(lines):
                if line.endswith(b"\r"):
                    lines[i] = line[:-1]
            return lines
        return []

    def _read_chunk(self) -> bytes:
        """Worker thread: block until bytes (or EOF) arrive; ``b""`` at EOF or when woken to stop."""
        if self._file is not None:
            read1 = getattr(self._file, "read1", None)
            chunk: bytes = read1(self._chunk_size) if read1 is not None else self._file.read(self._chunk_size)
            return chunk
        assert self._fd is not None
        poll, wake_r = self._poll, self._wake_r
        while True:
            if poll is not None:
                events = dict(poll.poll())
                if wake_r in events:
                    # close() asked us to stop; we own the wake-up pipe from here on.
                    self._close_wake_pipe()
                    return b""
            try:
                return os.read(self._fd, self._chunk_size)
            except BlockingIOError:  # someone set O_NONBLOCK on the descriptor
                if poll is None:
                    raise
                continue

    def _close(self, *, reading: bool) -> None:
        if self._closed:
            return
        self._closed = True
        if self._wake_w is None:
            return
        if reading:
            # A worker thread may be in poll(): wake it; it closes the pipe itself.
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"x")
        else:
            self._close_wake_pipe()

    def _close_wake_pipe(self) -> None:
        for attr in ("_wake_r", "_wake_w"):
            fd = getattr(self, attr)
            if fd is not None:
                setattr(self, attr, None)
                with contextlib.suppress(OSError):
                    os.close(fd)

    def close(self) -> None:
        """Stop reading: a pending or later read returns what it has, then EOF.

        Safe to call at any time, from the event loop thread; it does not close the source.
        """
        self._close(reading=self._reading)


class LineWriter:
    """Writes JSON lines to a byte sink, whole and in order, coalescing what is queued.

    ``write_line`` is synchronous and never blocks: it queues one complete line (ending in LF).
    A single drain task, started by ``async with LineWriter(...)``, takes everything queued at
    once and writes it with one ``writev`` (a file: ``write`` + ``flush``) in a worker thread. Leaving the ``async with``
    block writes whatever is still queued.

    U+2028 and U+2029 are written as the JSON escapes ``\\u2028``/``\\u2029`` (the same string
    to any JSON parser), so clients that read lines with a Unicode-aware reader such as Node's
    readline do not split a response in two. Only JSON may go through this writer for that reason.

    If the sink breaks (the client closed its end) the error is logged once and later lines are
    dropped; the server carries on until its input ends.
    """

    def __init__(
        self,
        sink: int | BinaryIO | None = None,
        *,
        close_timeout: float = 10.0,
        foreground: Foreground | None = None,
    ) -> None:
        if sink is None:
            sink = sys.stdout.buffer
        self._sink = sink
        self.close_timeout = close_timeout
        """How long leaving ``async with`` waits for queued lines to be written."""
        self._lines: Coalescer[bytes] = Coalescer(self._write_blocking, latch=self._broke, shield=False)
        self._stopped = anyio.Event()
        self._scope = anyio.CancelScope(shield=True)
        self._task_group: anyio.abc.TaskGroup | None = None
        self.writes = 0
        """How many ``write`` calls reached the sink (exposed for tests and benchmarks)."""
        self.foreground = foreground if foreground is not None else Foreground()
        """Each line counts as foreground work until it is written (``rpc_agent.io.background``)."""

    @property
    def broken(self) -> BaseException | None:
        """The error that broke the sink, if it broke."""
        return self._lines.error

    def write_line(self, line: bytes) -> None:
        """Queue one JSON line; it must end with ``b"\\n"`` and contain no other LF."""
        if self._lines.error is not None:
            return
        self.foreground.begin()
        self._lines.put(line)

    def write_parts(self, parts: list[bytes]) -> None:
        """Queue one JSON line given as pieces (the last ends with ``b"\\n"``), never joined:
        the pieces of a huge response are written one after the other, so the writer thread
        holds the GIL for one piece at a time instead of copying the whole line."""
        if self._lines.error is not None:
            return
        self.foreground.begin(len(parts))
        for part in parts:  # consecutive on the queue: no other line can come between them
            self._lines.put(part)

    async def flush(self) -> None:
        """Wait until everything queued so far has been handed to the sink (or the sink broke)."""
        with contextlib.suppress(Exception):
            await self._lines.wait()

    async def __aenter__(self) -> LineWriter:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._run, name="rpc-agent line writer")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        task_group = self._task_group
        assert task_group is not None
        self._task_group = None
        self._lines.close()
        # Flush even when we are leaving because of a cancellation (SIGTERM, the owner giving
        # up): shielded, but bounded, since a client that stopped reading would block us forever.
        # The writer task itself is shielded, so it keeps writing while its owner is cancelled.
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.close_timeout):
            await self._stopped.wait()
        self._scope.cancel()
        await task_group.__aexit__(None, None, None)
        return None

    async def _run(self) -> None:
        try:
            with self._scope:
                await self._lines.run()
        finally:
            self._stopped.set()

    def _broke(self, error: Exception) -> Exception:
        logger.error("stdout is broken (%s); dropping further output", error)
        return error

    def _write_blocking(self, lines: list[bytes]) -> None:
        try:
            pieces = [piece for line in lines for piece in _escaped(line)]
            sink = self._sink
            self.writes += 1
            if isinstance(sink, int):
                _write_all(sink, pieces)
            else:
                for piece in pieces:
                    sink.write(piece)
                sink.flush()
        finally:
            self.foreground.end(len(lines))  # foreground until written


def _escaped(data: bytes) -> list[bytes | memoryview]:
    """``data`` with U+2028 and U+2029 written as JSON escapes, as one or more pieces.

    0xE2 starts both (and other characters, such as curly quotes): one ``memchr`` clears most
    pieces. A huge piece that holds the byte is looked at a megabyte at a time: searching or
    escaping 75 MB in one call would hold the GIL, and so the event loop, for a tenth of a
    second. A megabyte without either goes out as a view of the piece, one with them as an
    escaped copy. Cuts fall before a UTF-8 lead byte, so no character is split between two
    pieces.
    """
    if _LS[0] not in data:
        return [data]
    view = memoryview(data)
    pieces: list[bytes | memoryview] = []
    start, size = 0, len(data)
    while start < size:
        end = min(start + _ESCAPE_WINDOW, size)
        while end < size and 0x80 <= data[end] < 0xC0:
            end -= 1
        if data.find(_LS, start, end) < 0 and data.find(_PS, start, end) < 0:
            pieces.append(view[start:end])
        else:
            pieces.append(bytes(view[start:end]).replace(_LS, b"\\u2028").replace(_PS, b"\\u2029"))
        start = end
    return pieces


_IOV_MAX = 1024
"""Buffers per ``writev``: the POSIX minimum of IOV_MAX, what Linux allows."""


def _write_all(fd: int, pieces: list[bytes | memoryview]) -> None:
    """Every piece in order, in as few system calls as the pipe takes.

    ``writev`` lets the GIL go for all of a batch at once: written piece by piece, a 31 MB
    response would take the GIL back after every piece, each time waiting up to a switch
    interval for a thread that builds a tree in the background.
    """
    views = [memoryview(piece) for piece in pieces if piece]
    first = 0
    while first < len(views):
        try:
            written = os.writev(fd, views[first : first + _IOV_MAX])
        except BlockingIOError:
            # A descriptor left non-blocking by whoever opened the pipe: wait until the
            # reader makes room, as a blocking write would.
            select.select([], [fd], [])
            continue
        while written:
            size = views[first].nbytes
            if written < size:
                views[first] = views[first][written:]
                break
            written -= size
            first += 1


def open_stdio(
    *, protect_stdout: bool = True, foreground: Foreground | None = None
) -> tuple[LineReader, LineWriter]:
    """The server's reader (stdin) and writer (stdout).

    With ``protect_stdout`` the protocol gets a private duplicate of descriptor 1, and
    descriptor 1 itself (plus ``sys.stdout``) is pointed at stderr: a stray ``print``, a C
    library or a child process that inherits stdout then writes to stderr instead of corrupting
    the JSON stream.
    """
    reader = LineReader(sys.stdin.buffer)
    if not protect_stdout:
        return reader, LineWriter(sys.stdout.buffer, foreground=foreground)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    protocol_fd = os.dup(1)  # not inheritable by child processes
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return reader, LineWriter(protocol_fd, foreground=foreground)
