"""The same server the subprocess tests start, run inside the test's event loop.

Spawning ``python -m rpc_agent`` costs a fresh interpreter and every import for each server, and
most e2e tests are about the agent and its sessions, not about the process. For those, the
command line goes through the real ``rpc_agent.cli.main`` (same flags, same settings files, same
start-up checks) and the resulting config is served by the real ``rpc_agent.server.app.serve``;
only its ends are swapped: stdin and stdout are one socket pair owned by the test, the signal receiver
is a stream the test writes to, and the exit code is ``serve``'s return value. The client on the
other end is the ordinary :class:`RpcAgentClient`, so a test reads the same whether its server is
a process or not.

What stays in a subprocess (``tests/e2e`` modules without the ``in_process`` mark): anything
about the process itself (EOF, signals, malformed bytes on real pipes, exit codes of failed
starts), locks between processes, the environment tools inherit, and the Anthropic SDK over HTTP.
Raw-pipe tests whose bytes, not pipes, are the point get a :class:`RawTask`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from inprocess_cli import config_from_cli, log_to
from rpc_agent.io.background import Foreground
from rpc_agent.runtime import ServerConfig
from rpc_agent.server import app
from rpc_agent.server.transport import LineReader, LineWriter


class ServerTask(anyio.abc.Process):
    """``serve()`` running in a task, shaped like the process :class:`RpcAgentClient` expects."""

    def __init__(
        self, stdio: anyio.abc.SocketStream, signals: MemoryObjectSendStream[int], scope: anyio.CancelScope
    ) -> None:
        self._stdio = stdio
        self._signals = signals
        self._scope = scope
        self._returncode: int | None = None
        self.exited = anyio.Event()

    def finished(self, code: int) -> None:
        self._returncode = code
        self.exited.set()

    async def wait(self) -> int:
        await self.exited.wait()
        assert self._returncode is not None
        return self._returncode

    def send_signal(self, sig: int) -> None:
        if sig == signal.SIGKILL:
            self.kill()
            return
        with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._signals.send_nowait(sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self._scope.cancel()

    async def aclose(self) -> None:
        await self._stdio.aclose()

    @property
    def pid(self) -> int:
        return os.getpid()

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdio(self) -> anyio.abc.SocketStream:
        """The test's end of the socket that stands for both pipes."""
        return self._stdio

    @property
    def stdin(self) -> ByteSendStream:
        return self._stdio

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdio

    @property
    def stderr(self) -> None:
        return None


class _HalfClosingStdin(ByteSendStream):
    """The test's end of the socket as a pipe's write end: closing it is EOF for the server, and
    its answers to what came before can still be read."""

    def __init__(self, stdio: anyio.abc.SocketStream) -> None:
        self._stdio = stdio

    async def send(self, item: bytes) -> None:
        await self._stdio.send(item)

    async def aclose(self) -> None:
        await self._stdio.send_eof()


class RawTask(ServerTask):
    """A :class:`ServerTask` as raw-pipe tests drive a process: bytes in, lines out, and closing
    stdin is EOF for the server while its answers can still be read."""

    def __init__(
        self, stdio: anyio.abc.SocketStream, signals: MemoryObjectSendStream[int], scope: anyio.CancelScope
    ) -> None:
        super().__init__(stdio, signals, scope)
        self._stdin = _HalfClosingStdin(stdio)

    @property
    def stdin(self) -> ByteSendStream:
        return self._stdin


def config_from_argv(argv: list[str]) -> ServerConfig:
    """The config ``rpc-agent ARGV`` would serve, built by the real command line."""
    return config_from_cli(argv, app)


@dataclass(frozen=True)
class _Ends:
    """What one in-process server gets in place of its process's stdio and signals."""

    stdio: socket.socket
    signals: MemoryObjectReceiveStream[int]


_ENDS: ContextVar[_Ends] = ContextVar("inprocess_server_ends")
"""The ends of the server whose task is asking: ``serve`` and the tasks it starts inherit it, so
servers running side by side in one loop each get their own."""

_installed = 0
_saved: list[tuple[Any, str, Any]] = []
"""What the patches replaced, kept while any in-process server runs."""


def _open_stdio(
    *, protect_stdout: bool = True, foreground: Foreground | None = None
) -> tuple[LineReader, LineWriter]:
    fd = _ENDS.get().stdio.fileno()
    return LineReader(fd), LineWriter(fd, foreground=foreground)


@contextmanager
def _open_signal_receiver(*signals: int) -> Iterator[MemoryObjectReceiveStream[int]]:
    yield _ENDS.get().signals


@contextmanager
def _patched() -> Iterator[None]:
    """The server's ends swapped for the ones in ``_ENDS``, once for all servers running."""
    global _installed
    patches: list[tuple[Any, str, Any]] = [
        (app, "open_stdio", _open_stdio),
        (app, "_stdin_is_a_host", lambda: True),
        (anyio, "open_signal_receiver", _open_signal_receiver),
    ]
    if _installed == 0:
        _saved[:] = [(target, name, getattr(target, name)) for target, name, _ in patches]
        for target, name, value in patches:
            setattr(target, name, value)
    _installed += 1
    try:
        yield
    finally:
        _installed -= 1
        if _installed == 0:
            for target, name, value in _saved:
                setattr(target, name, value)
            _saved.clear()


def _discard_unread(end: socket.socket) -> None:
    """Drop what the server left unread, as a process's exit drops its stdin pipe: a socket
    closed with unread bytes resets the connection, and the test's end would read an error
    where a pipe reads EOF after the last answer."""
    end.setblocking(False)
    with contextlib.suppress(OSError):
        while end.recv(65536):
            pass


@asynccontextmanager
async def serve_in_task(
    argv: list[str], log: Path, *, kind: type[ServerTask] = ServerTask
) -> AsyncIterator[ServerTask]:
    """``rpc-agent ARGV`` served in a task; yields its process-shaped handle, a ``kind`` (a
    :class:`RawTask` for raw-pipe tests). Several may run at once in one event loop (each reads
    and writes its own socket and hears its own signals).

    The caller sets ``$RPC_AGENT_HOME`` (the process's environment) before calling."""
    config = config_from_argv(argv)
    # One connected socket pair stands for both pipes: the server reads and writes its end's
    # descriptor exactly as it does stdin and stdout; closing the test's end is EOF.
    ours, theirs = socket.socketpair()
    signal_send, signal_receive = anyio.create_memory_object_stream[int](16)
    ends = _Ends(theirs, signal_receive)
    with _patched():
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()
            task = kind(await anyio.abc.SocketStream.from_socket(ours), signal_send, scope)

            async def run() -> None:
                code = -signal.SIGKILL
                _ENDS.set(ends)
                try:
                    with log_to(log, only=lambda: _ENDS.get(None) in (None, ends)), scope:
                        code = await app.serve(config)
                finally:
                    _discard_unread(theirs)
                    theirs.close()
                    task.finished(code)

            group.start_soon(run)
            try:
                yield task
            finally:
                with anyio.CancelScope(shield=True):
                    await task.wait()
                    await task.aclose()
                ours.close()
                signal_send.close()
                signal_receive.close()
