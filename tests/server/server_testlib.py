"""Drive ``rpc_test_server.py`` over real pipes, the way an editor would."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from linepipe import LinePipe

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
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()


def ids_and_codes(batch: list[dict[str, Any]]) -> list[tuple[Any, int | None]]:
    """(id, error code or None) of each response in a batch answer, sorted for comparison."""
    pairs = [(item["id"], item["error"]["code"] if "error" in item else None) for item in batch]
    return sorted(pairs, key=repr)
