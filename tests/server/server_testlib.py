"""Drive ``rpc_test_server.py`` over real pipes, the way an editor would: as a process, or, for
the tests about the router's answers rather than the process, served in the test's event loop."""

from __future__ import annotations

import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import anyio
import anyio.abc

from e2e.inprocess import ServerTask
from linepipe import LinePipe, reap
from rpc_agent.server.transport import LineReader, LineWriter
from server import rpc_test_server

SERVER_SCRIPT = Path(__file__).with_name("rpc_test_server.py")

AUTO: Any = object()
"""Default request id for ``RpcServer.call``: the next number."""


class RpcServer(LinePipe):
    """The router's test server: every stdout line is the answer the test waits for."""

    def __init__(self, process: anyio.abc.Process, stderr_path: Path) -> None:
        super().__init__(process, stderr_path)
        self._next_id = 1000

    async def recv(self) -> Any:
        return await self.recv_message()

    async def call(self, method: str, params: Any = None, *, request_id: Any = AUTO) -> Any:
        """Send a request and return the next message (the caller expects it to be the answer)."""
        if request_id is AUTO:
            self._next_id += 1
            request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.recv()


@asynccontextmanager
async def running_server(tmp_path: Path) -> AsyncIterator[RpcServer]:
    stderr_path = tmp_path / "server-stderr.txt"
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            [sys.executable, str(SERVER_SCRIPT)], stderr=stderr, start_new_session=True
        )
    try:
        yield RpcServer(process, stderr_path)
    finally:
        await reap(process)


@asynccontextmanager
async def server_in_task(tmp_path: Path) -> AsyncIterator[RpcServer]:
    """``rpc_test_server.main`` in a task, its stdin and stdout one socket pair (as in
    ``tests/e2e/inprocess.py``). What needs the process stays with ``running_server``: the end of
    stdin, signals, stderr, writes to fd 1. On the way out the server is cancelled, as the process
    would be killed."""
    ours, theirs = socket.socketpair()
    signal_send, signal_receive = anyio.create_memory_object_stream[int](1)

    def open_stdio() -> tuple[LineReader, LineWriter]:
        return LineReader(theirs.fileno()), LineWriter(theirs.fileno())

    with mock.patch.object(rpc_test_server, "open_stdio", open_stdio):
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()
            task = ServerTask(await anyio.abc.SocketStream.from_socket(ours), signal_send, scope)

            async def run() -> None:
                try:
                    with scope:
                        await rpc_test_server.main()
                finally:
                    theirs.close()
                    task.finished(0)

            group.start_soon(run)
            try:
                yield RpcServer(task, tmp_path / "server-stderr.txt")
            finally:
                scope.cancel()
                with anyio.CancelScope(shield=True):
                    await task.wait()
                    await task.aclose()
                signal_send.close()
                signal_receive.close()


def ids_and_codes(batch: list[dict[str, Any]]) -> list[tuple[Any, int | None]]:
    """(id, error code or None) of each response in a batch answer, sorted for comparison."""
    pairs = [(item["id"], item["error"]["code"] if "error" in item else None) for item in batch]
    return sorted(pairs, key=repr)


PING = {"jsonrpc": "2.0", "method": "ping"}


def ping(request_id: Any) -> dict[str, Any]:
    return {**PING, "id": request_id}


async def assert_still_serving(server: RpcServer) -> None:
    answer = await server.call("ping", request_id="still-alive")
    assert answer == {"jsonrpc": "2.0", "result": {"pong": True}, "id": "still-alive"}
