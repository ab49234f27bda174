"""The connection to one server process: strict LF framing, ids matched to answers, events
collected, and server-to-client requests answered by registered handlers.

Framing is strict: one JSON value per LF-terminated line, never split on U+2028/U+2029.
When the server exits, every pending call fails with ``ServerExitedError``.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Self, TypeVar

import anyio
import anyio.abc
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel

from rpc_agent_client._errors import RpcCallError, ServerExitedError

JsonDict = dict[str, Any]

_BIG_LINE = 1 << 20
"""From this size on, a line is parsed with the cyclic collector paused (see ``_parse``)."""


def _parse(line: bytes) -> Any:
    """One line's JSON. A big one (a session's entries: millions of objects) is parsed with
    the cyclic collector paused: the objects it makes hold no cycles, and the collections
    their number would set off, each walking every object the program holds, would make the
    parse take several times as long (bench/tree_speed.py parses as this does)."""
    if len(line) < _BIG_LINE or not gc.isenabled():
        return orjson.loads(line)
    gc.disable()
    try:
        return orjson.loads(line)
    finally:
        gc.enable()


ResultT = TypeVar("ResultT", bound=BaseModel)
Handler = Callable[[JsonDict], Awaitable[Any] | Any]
"""Answers one server-to-client request: takes its params, returns its result (sync or async)."""


class Connection:
    """What every client of the server needs below the typed methods; ``RpcAgentClient`` adds those."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, anyio.Event, list[Any]]] = {}
        send, receive = anyio.create_memory_object_stream[JsonDict](max_buffer_size=100_000)
        self._event_send: MemoryObjectSendStream[JsonDict] = send
        self._event_receive: MemoryObjectReceiveStream[JsonDict] = receive
        self.events_seen: list[JsonDict] = []
        """Every event received so far, in order (handy in tests)."""
        self._event_listeners: list[Callable[[JsonDict], None]] = []
        self.protocol_errors: list[bytes] = []
        """Lines on the server's stdout that were not JSON-RPC 2.0 messages (there should be none)."""
        self.unmatched: list[JsonDict] = []
        """Responses that answered no pending call: parse errors (id null), answers to ``send_raw``."""
        self._closed = False
        self._write_lock = anyio.Lock()
        self._handlers: dict[str, Handler] = {}
        self._answering: dict[Any, anyio.CancelScope] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self.cancelled_requests: list[Any] = []
        """Ids of server requests the server gave up on ($/cancelRequest); their handlers were cancelled."""

    # --- lifetime -----------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        *args: str,
        command: Sequence[str] | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        stderr: int | None = None,
    ) -> AsyncIterator[Self]:
        """Start ``rpc-agent`` (default: this Python's ``-m rpc_agent``) and connect to it."""
        argv = [*(command or [sys.executable, "-m", "rpc_agent"]), *args]
        full_env = {**os.environ, **(env or {})}
        process = await anyio.open_process(argv, cwd=cwd, env=full_env, stderr=stderr)
        async with cls.connect(process) as client:
            yield client

    @classmethod
    @asynccontextmanager
    async def connect(cls, process: anyio.abc.Process) -> AsyncIterator[Self]:
        """Talk to a server already started (or anything with a process's pipes and ``wait``).

        Reads its stdout for as long as the block runs; at the end, closes it as ``close`` does.
        """
        client = cls(process)
        try:
            async with anyio.create_task_group() as group:
                client._group = group
                group.start_soon(client._read_loop)
                try:
                    yield client
                finally:
                    await client.close()
                    group.cancel_scope.cancel()
        finally:
            # Both ends of the event stream are closed, also when the block raised (an unclosed
            # one warns when collected, in whatever code runs then).
            client._event_send.close()
            client._event_receive.close()

    async def close(self, timeout: float = 10, grace: float = 3) -> int | None:  # noqa: ASYNC109 (public API)
        """Close stdin and wait for the exit code.

        The server takes EOF as the host going away: it aborts whatever is running (the turn is
        stored as aborted), flushes the session and exits. One still running after ``timeout``
        seconds gets SIGTERM (the same abort), and SIGKILL ``grace`` seconds after that.
        """
        if not self._closed:
            self._closed = True
            if self.process.stdin is not None:
                with (
                    anyio.CancelScope(shield=True),
                    contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError),
                ):
                    await self.process.stdin.aclose()
        code: int | None = None
        with anyio.move_on_after(timeout, shield=True):
            code = await self.process.wait()
        if code is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            with anyio.move_on_after(grace, shield=True):
                code = await self.process.wait()
        if code is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with anyio.CancelScope(shield=True):
                code = await self.process.wait()
        return code

    async def _read_loop(self) -> None:
        assert self.process.stdout is not None
        partial: list[bytes] = []
        """The start of a line still arriving: a 75 MB answer comes in a thousand chunks, and
        adding each to one buffer (or searching all of it for the newline again) would copy
        and scan it a thousand times over."""
        try:
            async for chunk in self.process.stdout:
                start = 0
                while (newline := chunk.find(b"\n", start)) >= 0:
                    piece = chunk[start:newline]
                    start = newline + 1
                    if partial:
                        partial.append(piece)
                        piece = b"".join(partial)
                        partial.clear()
                    self._receive(piece)
                if start < len(chunk):
                    partial.append(chunk[start:])
            rest = b"".join(partial)
            if rest.strip():
                self.protocol_errors.append(rest)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            for method, done, box in list(self._pending.values()):
                box.append(ServerExitedError(f"{method}: the server exited before answering"))
                done.set()
            self._pending.clear()
            self._event_send.close()

    def _receive(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = _parse(line)
        except orjson.JSONDecodeError:
            # Not JSON: note it and keep reading; one bad line must not stop the client.
            self.protocol_errors.append(line)
            return
        self._dispatch(message, line)

    def _dispatch(self, message: Any, line: bytes) -> None:
        if isinstance(message, list) and message:
            for item in message:
                self._dispatch(item, line)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.protocol_errors.append(line)
            return
        if "method" in message and "id" in message:
            self._answer_server_request(message)
            return
        if "method" in message and "id" not in message:
            if message["method"] == "$/cancelRequest" and isinstance(message.get("params"), dict):
                request_id = message["params"].get("id")
                self.cancelled_requests.append(request_id)
                scope = self._answering.pop(request_id, None)
                if scope is not None:
                    scope.cancel()
                return
            if message["method"] == "event" and isinstance(message.get("params"), dict):
                event = message["params"]
                self.events_seen.append(event)
                for listener in list(self._event_listeners):
                    listener(event)
                with contextlib.suppress(anyio.WouldBlock):  # nobody reads events(): drop
                    self._event_send.send_nowait(event)
            return
        request_id = message.get("id")
        pending = self._pending.pop(request_id, None) if type(request_id) is int else None
        if pending is None:
            self.unmatched.append(message)
            return
        method, done, box = pending
        if "error" in message:
            error = message["error"] or {}
            box.append(
                RpcCallError(method, error.get("code", 0), error.get("message", ""), error.get("data"))
            )
        else:
            box.append(message.get("result"))
        done.set()

    # --- server-to-client requests ---------------------------------------------------

    def _answer_server_request(self, message: JsonDict) -> None:
        if self._group is None:
            return
        request_id = message.get("id")
        scope = anyio.CancelScope()
        self._answering[request_id] = scope
        self._group.start_soon(self._run_handler, message, scope)

    async def _run_handler(self, message: JsonDict, scope: anyio.CancelScope) -> None:
        """Answer through jsonrpcserver (``_serving``); a request the server cancelled gets
        no answer."""
        from rpc_agent_client._serving import answer

        reply: JsonDict | None = None
        with scope:
            reply = await answer(message, self._handlers)
        self._answering.pop(message.get("id"), None)
        if reply is not None and not scope.cancelled_caught:
            self._reply(reply)

    def _reply(self, reply: JsonDict) -> None:
        if self._group is None:
            return

        async def send() -> None:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await self.send_raw(orjson.dumps(reply, option=orjson.OPT_APPEND_NEWLINE))

        self._group.start_soon(send)

    # --- calls ------------------------------------------------------------------------

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (tests use it for malformed input)."""
        assert self.process.stdin is not None
        async with self._write_lock:
            await self.process.stdin.send(data)

    async def call(self, method: str, params: JsonDict | BaseModel | None = None) -> Any:
        """Call a method; returns the raw result or raises RpcCallError."""
        request_id = next(self._ids)
        done = anyio.Event()
        box: list[Any] = []
        self._pending[request_id] = (method, done, box)
        request: JsonDict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if isinstance(params, BaseModel):
            request["params"] = params.model_dump(mode="json", exclude_none=True)
        elif params is not None:
            request["params"] = params
        try:
            await self.send_raw(orjson.dumps(request, option=orjson.OPT_APPEND_NEWLINE))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._pending.pop(request_id, None)
            raise ServerExitedError(f"{method}: the server is not running") from exc
        await done.wait()
        outcome = box[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def _typed(self, model: type[ResultT], method: str, params: JsonDict | None = None) -> ResultT:
        return model.model_validate(await self.call(method, params))

    # --- events -----------------------------------------------------------------------

    def events(self) -> MemoryObjectReceiveStream[JsonDict]:
        """The event stream (each event once, shared by all readers)."""
        return self._event_receive

    async def wait_for_event(
        self, event_type: str, predicate: Callable[[JsonDict], bool] | None = None, *, after: int = 0
    ) -> JsonDict:
        """The first event of that type (seen at index >= ``after``), waiting if needed."""
        for event in self.events_seen[after:]:
            if event.get("type") == event_type and (predicate is None or predicate(event)):
                return event
        found = anyio.Event()
        box: list[JsonDict] = []

        def listener(event: JsonDict) -> None:
            if not box and event.get("type") == event_type and (predicate is None or predicate(event)):
                box.append(event)
                found.set()

        self._event_listeners.append(listener)
        try:
            await found.wait()
        finally:
            self._event_listeners.remove(listener)
        return box[0]
