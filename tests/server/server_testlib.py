"""Drive ``rpc_test_server.py`` over real pipes, the way an editor would."""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import orjson

SERVER_SCRIPT = Path(__file__).with_name("rpc_test_server.py")
RECV_TIMEOUT = 30.0
"""A hang guard only: no test asserts how fast anything is."""

AUTO: Any = object()
"""Default request id for ``RpcServer.call``: the next number."""


class RpcServer:
    """A running test server: send lines, receive parsed JSON lines, end it."""

    def __init__(self, process: anyio.abc.Process, stderr_path: Path) -> None:
        self.process = process
        self.stderr_path = stderr_path
        self.raw_lines: list[bytes] = []
        """Every line read from stdout so far, as received (without the LF)."""
        self._buffer = b""
        self._eof = False
        self._next_id = 1000

    async def send(self, message: Any) -> None:
        """Send one JSON value as one line."""
        await self.send_raw(orjson.dumps(message) + b"\n")

    async def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def recv_line(self) -> bytes | None:
        """The next stdout line (without LF), or None at EOF."""
        assert self.process.stdout is not None
        with anyio.fail_after(RECV_TIMEOUT):
            while b"\n" not in self._buffer:
                if self._eof:
                    if self._buffer:
                        raise AssertionError(f"unterminated output at EOF: {self._buffer!r}")
                    return None
                try:
                    self._buffer += await self.process.stdout.receive()
                except anyio.EndOfStream:
                    self._eof = True
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.raw_lines.append(line)
        return line

    async def recv(self) -> Any:
        """The next stdout line, which must be one JSON-RPC message (or batch) as JSON."""
        line = await self.recv_line()
        assert line is not None, "the server closed stdout"
        assert not line.endswith(b"\r"), line
        message = orjson.loads(line)
        for item in message if isinstance(message, list) else [message]:
            assert isinstance(item, dict), line
            assert item.get("jsonrpc") == "2.0", line
        return message

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

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def rest(self) -> list[Any]:
        """Every remaining message until the server closes stdout."""
        messages = []
        while (line := await self.recv_line()) is not None:
            messages.append(orjson.loads(line))
        return messages

    async def wait(self) -> int:
        with anyio.fail_after(RECV_TIMEOUT):
            return await self.process.wait()

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


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
