"""A server process driven over its real pipes, line by line, the way an editor drives it.

Both the router's test server (tests/server) and the real ``rpc-agent`` (tests/e2e) are driven
through this one class; what each suite adds is how it reads answers among the notifications.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import orjson

RECV_TIMEOUT = 30.0
"""A hang guard only: no test asserts how fast anything is."""


async def reap(process: anyio.abc.Process) -> None:
    """Kill the server if it still runs and wait for it, even while the test is being cancelled:
    no test leaves a process behind, whichever way it ended."""
    if process.returncode is None:
        process.kill()
    with anyio.CancelScope(shield=True):
        await process.aclose()


class LinePipe:
    def __init__(self, process: anyio.abc.Process, stderr_path: Path | None = None) -> None:
        self.process = process
        self.stderr_path = stderr_path
        self.lines: list[bytes] = []
        """Every line read from stdout so far, as received (without the LF)."""
        self._buffer = b""
        self._eof = False

    @property
    def raw_lines(self) -> list[bytes]:
        return self.lines

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
        self.lines.append(line)
        return line

    async def recv_message(self) -> Any:
        """The next stdout line, which must be one JSON-RPC message (or batch) as JSON."""
        line = await self.recv_line()
        assert line is not None, "the server closed stdout"
        assert not line.endswith(b"\r"), line
        message = orjson.loads(line)
        for item in message if isinstance(message, list) else [message]:
            assert isinstance(item, dict), line
            assert item.get("jsonrpc") == "2.0", line
        return message

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

    async def close_and_wait(self) -> int:
        """Close stdin, read to the end of stdout, and return the exit code."""
        await self.close_stdin()
        with anyio.fail_after(RECV_TIMEOUT):
            while await self.recv_line() is not None:
                pass
            return await self.process.wait()

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def stderr(self) -> str:
        assert self.stderr_path is not None
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")
