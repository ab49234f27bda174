"""Newline-delimited JSON-RPC 2.0 over stdio for the ACP front, checked before the SDK sees it.

The SDK's own stdio transport hands every decoded line to its connection, which expects an
object: ``[]``, ``42`` or ``null`` end its receive loop, and a line that is not JSON is only
logged. Here every line gets the answer JSON-RPC 2.0 prescribes (``-32700`` with id null for a
parse error, ``-32600`` for anything that is not a request, notification or response), and only
well-formed messages reach the SDK. ACP has no batches: a batch gets one ``-32600`` per request
in it (an empty batch a single one), so no client waits for an answer that never comes.

The SDK accepts any object with ``send``/``receive``/``close`` as its transport, so this needs
none of its private modules. ``send`` also tells the agent when an answer went out, which is how
a notification about a new session is kept behind the answer that names it. ``$/cancel_request``
never reaches the SDK (which knows no such method): ``cancellation`` handles it, and other
``$/`` notifications, which JSON-RPC peers may ignore, are dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import IO, Any

import anyio.to_thread

from rpc_agent.acp.cancellation import Cancellations
from rpc_agent.fileio import write_all
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.errors import INVALID_REQUEST, PARSE_ERROR
from rpc_agent.protocol.jsonrpc import ErrorObject, ErrorReply

logger = logging.getLogger("rpc_agent.acp")

_READ_CHUNK = 1 << 16
_BATCH_MESSAGE = "Invalid Request: ACP does not support JSON-RPC batches"


def _is_stream(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _valid_id(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int | float) and not isinstance(value, bool))
    )


def _error(code: int, message: str, request_id: Any = None, data: Any = None) -> ErrorReply:
    error: ErrorObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def check_message(message: Any) -> ErrorReply | None:
    """The error answer for a decoded line that is not one JSON-RPC message, else None."""
    if not isinstance(message, dict):
        return _error(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    request_id = message.get("id")
    if not _valid_id(request_id):
        return _error(INVALID_REQUEST, "Invalid Request: id must be a string, a number or null")
    if message.get("jsonrpc") != "2.0":
        return _error(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', request_id)
    if "method" in message:
        if not isinstance(message["method"], str):
            return _error(INVALID_REQUEST, "Invalid Request: method must be a string", request_id)
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return _error(
                INVALID_REQUEST, "Invalid Request: params must be an object or an array", request_id
            )
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # an answer to one of our requests
    return _error(INVALID_REQUEST, "Invalid Request: neither a request nor a response", request_id)


def batch_answer(batch: list[Any]) -> ErrorReply | list[ErrorReply] | None:
    """What a batch line gets: errors for its requests (notifications in it get none)."""
    if not batch:
        return _error(INVALID_REQUEST, "Invalid Request: empty batch")
    answers: list[ErrorReply] = []
    for item in batch:
        if isinstance(item, dict) and "method" in item and "id" not in item:
            continue
        request_id = item.get("id") if isinstance(item, dict) else None
        answers.append(_error(INVALID_REQUEST, _BATCH_MESSAGE, request_id if _valid_id(request_id) else None))
    return answers or None


class StdioTransport:
    """The agent's side of the connection: stdin in, stdout out (pipes, ttys or plain files)."""

    def __init__(
        self,
        on_answer: Callable[[str], None] | None = None,
        *,
        stdin: IO[Any] | None = None,
        stdout: IO[Any] | None = None,
    ) -> None:
        self.on_answer = on_answer
        """Called with the session id an answer concerns, right after it was written."""
        self._stdin = sys.stdin if stdin is None else stdin
        self._stdout = sys.stdout if stdout is None else stdout
        """The process's own stdio unless other ends are given (tests serve over pipes of their own)."""
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._stdin_file = not _is_stream(self._stdin.fileno())
        self._stdout_file = not _is_stream(self._stdout.fileno())
        self._pending: bytearray = bytearray()
        self._scanned = 0
        """How much of ``_pending`` is known to hold no newline (a long line is scanned once)."""
        self._eof = False
        self._asked: dict[Any, str] = {}
        """Request id -> the session id its params name, until it is answered."""
        self._closed = False
        self.cancellations = Cancellations()
        """The requests handed to the SDK and not answered yet, and how to cancel them."""
        self.on_eof: Callable[[], Awaitable[None]] | None = None
        """Awaited when a pipe, socket or tty on stdin ends, before the SDK sees the end.

        The editor went away: every run must stop (and store its aborted turn) now. The SDK,
        once its input ends, closes its sender and cancels the handlers, so a prompt still
        storing its turn would answer into a closed sender and wait forever. A regular file on
        stdin is a script of requests: it runs to its end."""

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if not self._stdin_file:
            reader = asyncio.StreamReader(limit=_READ_CHUNK)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), self._stdin)
            self._reader = reader
        if not self._stdout_file:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, self._stdout
            )
            self._writer = asyncio.StreamWriter(transport, protocol, None, loop)

    # --- out ----------------------------------------------------------------------------------

    async def _write(self, payload: Any) -> None:
        # ASCII escapes: a lone surrogate in a string (from a client, say) still goes out.
        data = (json.dumps(payload, separators=(",", ":")) + "\n").encode("ascii")
        if self._writer is not None:
            self._writer.write(data)
            await self._writer.drain()
        else:  # a regular file never blocks for long
            write_all(self._stdout.fileno(), data)

    async def send(self, message: JsonDict) -> None:
        await self._write(message)
        if "method" not in message and "id" in message:
            self._answered(message)

    def _answered(self, message: Mapping[str, Any]) -> None:
        self.cancellations.answered(message["id"])
        session_id = self._asked.pop(message["id"], None)
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            session_id = result["sessionId"]
        if session_id is not None and self.on_answer is not None:
            self.on_answer(session_id)

    # --- in -----------------------------------------------------------------------------------

    async def _read_chunk(self) -> bytes:
        if self._reader is not None:
            return await self._reader.read(_READ_CHUNK)
        return await anyio.to_thread.run_sync(os.read, self._stdin.fileno(), _READ_CHUNK)

    async def _read_line(self) -> bytes | None:
        while True:
            end = self._pending.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._pending[:end])
                del self._pending[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._pending)
            if self._eof:
                if not self._pending:
                    return None
                line = bytes(self._pending)
                self._pending.clear()
                self._scanned = 0
                return line
            chunk = await self._read_chunk()
            if chunk:
                self._pending += chunk
            else:
                self._eof = True

    async def receive(self) -> JsonDict | None:
        while True:
            line = await self._read_line()
            if line is None:
                on_eof, self.on_eof = self.on_eof, None
                if on_eof is not None and not self._stdin_file:
                    await on_eof()
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                await self._write(_error(PARSE_ERROR, "Parse error"))
                continue
            if isinstance(message, list):
                answer = batch_answer(message)
                if answer is not None:
                    await self._write(answer)
                continue
            error = check_message(message)
            if error is not None:
                await self._write(error)
                continue
            method = message.get("method")
            if isinstance(method, str) and method.startswith("$/") and "id" not in message:
                if method == "$/cancel_request":
                    self.cancellations.cancel(message.get("params"))
                continue
            self.cancellations.received(message)
            if "method" in message and "id" in message:
                params = message.get("params")
                session_id = params.get("sessionId") if isinstance(params, dict) else None
                if isinstance(session_id, str):
                    self._asked[message["id"]] = session_id
            checked: JsonDict = message  # a JSON-RPC message of any method, as the SDK takes it
            return checked

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._writer is not None:
            self._writer.close()
