"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1, scripted per test.

Point the real SDK at it with ``ANTHROPIC_BASE_URL=fake.base_url`` (any API key will do).
Each ``POST /v1/messages`` takes the next scripted reply from the queue:

- ``Reply([...blocks], stop_reason=..., usage=...)``: a message streamed as real SSE
  (``event:`` + ``data:`` lines, chunked transfer): message_start, a ping, then per block
  content_block_start / content_block_delta (text_delta, thinking_delta + signature_delta,
  input_json_delta chunks) / content_block_stop, then message_delta and message_stop.
  Knobs: ``delay`` (seconds between events), ``drop_after=n`` (the connection is cut after n
  events), ``error_after=n`` (an in-stream ``error`` event after n events), ``hang_after=n``
  (stop after n events and wait until the client goes away), ``truncate_after=n`` (end the
  body cleanly after n events, without message_stop). Events are counted from 0 and the
  ping after message_start counts (``ping=False`` leaves it out). A request without
  ``"stream": true`` gets the same message as one JSON body.
- ``HttpError(status, type, message, headers)``: an error response with a JSON error body.

Blocks: ``Text``, ``Thinking`` (with signature), ``RedactedThinking``, ``ToolUse``.

Every request is recorded (``fake.requests``: method, path, lower-cased headers, JSON body).
Unless ``strict=False``, a request that breaks the API's rules (roles, tool_use/tool_result
pairing, empty text, thinking budget, cache breakpoints...) is answered with a 400
invalid_request_error whose message starts with "fake_anthropic:", and recorded with
``rejected`` set: stricter than the real API in one way, consecutive messages of the same
role are rejected too. With no reply left in the queue the answer is a 400 as well.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JsonDict = dict[str, Any]

HANG_LIMIT = 60.0
"""Seconds a hanging reply waits for the client to go away before giving up."""


# --- the script ---------------------------------------------------------------------------


def _split(text: str, size: int) -> list[str]:
    if not text:
        return []
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass
class Text:
    text: str
    chunks: list[str] | None = None
    """The text_delta pieces; by default the text cut into the reply's chunk_size."""


@dataclass
class Thinking:
    thinking: str
    signature: str = "sig-thinking"
    chunks: list[str] | None = None


@dataclass
class RedactedThinking:
    data: str


@dataclass
class ToolUse:
    id: str
    name: str
    input: JsonDict
    chunks: list[str] | None = None
    """The input_json_delta pieces; by default the JSON text cut into the reply's chunk_size."""


Block = Text | Thinking | RedactedThinking | ToolUse


@dataclass
class Reply:
    content: list[Block]
    stop_reason: str = "end_turn"
    usage: JsonDict = field(
        default_factory=lambda: {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
    )
    model: str | None = None
    chunk_size: int = 8
    delay: float = 0.0
    drop_after: int | None = None
    error_after: int | None = None
    error_type: str = "overloaded_error"
    error_message: str = "Overloaded"
    hang_after: int | None = None
    truncate_after: int | None = None
    ping: bool = True
    headers: dict[str, str] = field(default_factory=dict)


def tool_round(*blocks: Block, answer: str) -> list[Reply]:
    """A turn that calls tools (``blocks``: what precedes the calls, and the calls), then the
    final answer once their results are in."""
    return [Reply(list(blocks), stop_reason="tool_use"), Reply([Text(answer)])]


@dataclass
class HttpError:
    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


ScriptItem = Reply | HttpError


def sse_events(reply: Reply, model: str) -> list[tuple[str, JsonDict]]:
    """The (event name, data) sequence of a streamed reply, without error/drop effects."""
    usage = reply.usage
    start_usage = {
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": 1,
        "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
        "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
    }
    events: list[tuple[str, JsonDict]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
    ]
    if reply.ping:
        events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(reply.content):
        deltas: list[JsonDict] = []
        start: JsonDict
        if isinstance(block, Text):
            start = {"type": "text", "text": ""}
            for piece in block.chunks if block.chunks is not None else _split(block.text, reply.chunk_size):
                deltas.append({"type": "text_delta", "text": piece})
        elif isinstance(block, Thinking):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            chunks = block.chunks if block.chunks is not None else _split(block.thinking, reply.chunk_size)
            for piece in chunks:
                deltas.append({"type": "thinking_delta", "thinking": piece})
            deltas.append({"type": "signature_delta", "signature": block.signature})
        elif isinstance(block, RedactedThinking):
            start = {"type": "redacted_thinking", "data": block.data}
        else:
            start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            text = json.dumps(block.input)
            for piece in block.chunks if block.chunks is not None else _split(text, reply.chunk_size):
                deltas.append({"type": "input_json_delta", "partial_json": piece})
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        for delta in deltas:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta_usage = {"output_tokens": usage.get("output_tokens", 0)}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                "usage": delta_usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def message_body(reply: Reply, model: str) -> JsonDict:
    """The non-streaming JSON body of a reply."""
    content: list[JsonDict] = []
    for block in reply.content:
        if isinstance(block, Text):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, Thinking):
            content.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
        elif isinstance(block, RedactedThinking):
            content.append({"type": "redacted_thinking", "data": block.data})
        else:
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": dict(reply.usage),
    }


# --- request validation -------------------------------------------------------------------

_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def _count_cache_control(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_count_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    return 0


def _check_text(text: Any, where: str) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return f"{where}: text content blocks must contain non-whitespace text"
    return None


def validate_request(body: Any) -> str | None:
    """What the real API would reject in this body (plus same-role neighbours), or None."""
    if not isinstance(body, dict):
        return "body: expected a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: must be a positive integer"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                return f"system.{i}: expected a text block"
            if problem := _check_text(block.get("text"), f"system.{i}"):
                return problem
    elif system is not None and not isinstance(system, str):
        return "system: expected a string or a list of text blocks"
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if budget >= max_tokens:
            return "`max_tokens` must be greater than `thinking.budget_tokens`"
    tools = body.get("tools")
    if tools is not None:
        names: set[str] = set()
        for i, tool in enumerate(tools):
            name = tool.get("name")
            if not isinstance(name, str) or not _TOOL_NAME.match(name):
                return f"tools.{i}.name: invalid tool name"
            if name in names:
                return f"tools: tool names must be unique ({name})"
            names.add(name)
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                return f"tools.{i}.input_schema.type: Field required (must be 'object')"
    if _count_cache_control(body) > 4:
        return "A maximum of 4 blocks with cache_control may be provided"

    if messages[0].get("role") != "user":
        return "messages.0.role: the first message must use the user role"
    previous_role = None
    previous_tool_ids: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: must be user or assistant"
        if role == previous_role:
            return f"messages.{i}: consecutive {role} messages (fake_anthropic is strict here)"
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list) and content:
            blocks = content
        else:
            return f"messages.{i}.content: must be a non-empty string or list"
        answered: list[str] = []
        tool_ids: list[str] = []
        seen_other = False
        for j, block in enumerate(blocks):
            where = f"messages.{i}.content.{j}"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                if problem := _check_text(block.get("text"), where):
                    return problem
                seen_other = True
            elif role == "user" and kind == "image":
                source = block.get("source") or {}
                if source.get("media_type") not in ("image/jpeg", "image/png", "image/gif", "image/webp"):
                    return f"{where}.source.media_type: unsupported image type"
                seen_other = True
            elif role == "user" and kind == "tool_result":
                if seen_other:
                    return f"{where}: tool_result blocks must come before any other content"
                tool_use_id = block.get("tool_use_id")
                if tool_use_id not in previous_tool_ids:
                    return (
                        f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: {tool_use_id}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the "
                        "previous message."
                    )
                if tool_use_id in answered:
                    return f"{where}: duplicate tool_result for {tool_use_id}"
                answered.append(tool_use_id)
                inner_blocks = block.get("content")
                if isinstance(inner_blocks, str):
                    inner_blocks = [{"type": "text", "text": inner_blocks}]
                for k, inner in enumerate(inner_blocks or []):
                    if inner.get("type") == "text" and (
                        problem := _check_text(inner.get("text"), f"{where}.{k}")
                    ):
                        return problem
            elif role == "assistant" and kind == "thinking":
                if not isinstance(block.get("signature"), str) or not block["signature"]:
                    return f"{where}.thinking.signature: Field required"
            elif role == "assistant" and kind == "redacted_thinking":
                if not isinstance(block.get("data"), str) or not block["data"]:
                    return f"{where}.redacted_thinking.data: Field required"
            elif role == "assistant" and kind == "tool_use":
                tool_id = block.get("id")
                if not isinstance(tool_id, str) or not _TOOL_ID.match(tool_id):
                    return f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                if tool_id in tool_ids:
                    return f"{where}: `tool_use` ids must be unique"
                if not isinstance(block.get("input"), dict):
                    return f"{where}.input: Input should be a valid dictionary"
                tool_ids.append(tool_id)
            else:
                return f"{where}.type: unexpected block type {kind!r} in a {role} message"
        if role == "user":
            missing = [tool_id for tool_id in previous_tool_ids if tool_id not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
        previous_role = role
        previous_tool_ids = tool_ids if role == "assistant" else []
    if previous_tool_ids:
        return "the last assistant message has `tool_use` blocks without a following `tool_result` message"
    return None


# --- the server ---------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    rejected: str | None = None
    disconnected: threading.Event = field(default_factory=threading.Event)
    """Set when the client went away before the response was complete."""
    completed: threading.Event = field(default_factory=threading.Event)
    """Set when the response was written to the end (or cut on purpose)."""
    events_sent: int = 0


class _Disconnected(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # plumbing ------------------------------------------------------------------------------

    def _send_json(self, status: int, body: JsonDict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(
        self, status: int, kind: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}
        self._send_json(status, body, headers)

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError as exc:
            raise _Disconnected from exc

    def _client_gone(self, wait: float) -> bool:
        """Wait up to ``wait`` seconds; True as soon as the client has closed the connection."""
        deadline = time.monotonic() + wait
        while True:
            remaining = deadline - time.monotonic()
            readable, _, _ = select.select([self.connection], [], [], max(0.0, min(remaining, 0.05)))
            if readable:
                try:
                    data = self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    return True
                if not data:
                    return True
            if self.server.fake.closing.is_set() or remaining <= 0:
                return False

    # requests ------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._send_error(404, "not_found_error", f"fake_anthropic: no route {self.path}")

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        record = RecordedRequest(
            method="POST",
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
        )
        fake._record(record)
        try:
            self._answer(fake, record)
        except _Disconnected:
            record.disconnected.set()
            self.close_connection = True
        finally:
            record.completed.set()

    def _answer(self, fake: FakeAnthropic, record: RecordedRequest) -> None:
        if self.path.split("?")[0] != "/v1/messages":
            self._send_error(404, "not_found_error", f"fake_anthropic: no route {self.path}")
            return
        if fake.strict and (problem := validate_request(record.body)):
            record.rejected = problem
            self._send_error(400, "invalid_request_error", f"fake_anthropic: {problem}")
            return
        reply = fake._next_reply()
        if reply is None:
            record.rejected = "no scripted reply left"
            self._send_error(400, "invalid_request_error", "fake_anthropic: no scripted reply left")
            return
        if isinstance(reply, HttpError):
            self._send_error(reply.status, reply.type, reply.message, reply.headers)
            return
        model = reply.model or str(record.body.get("model") or "claude-fake")
        if not record.body.get("stream"):
            self._send_json(200, message_body(reply, model), reply.headers)
            return
        self._stream(reply, model, record)

    def _stream(self, reply: Reply, model: str, record: RecordedRequest) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_fake")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.flush()
        except OSError as exc:
            raise _Disconnected from exc
        for sent, (name, data) in enumerate(sse_events(reply, model)):
            if reply.error_after is not None and sent == reply.error_after:
                error = {"type": "error", "error": {"type": reply.error_type, "message": reply.error_message}}
                self._chunk(f"event: error\ndata: {json.dumps(error)}\n\n".encode())
                record.events_sent += 1
                break
            if reply.drop_after is not None and sent == reply.drop_after:
                # Cut the connection in the middle of the chunked body.
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if reply.truncate_after is not None and sent == reply.truncate_after:
                break  # end the body cleanly, without the rest of the message
            if reply.hang_after is not None and sent == reply.hang_after:
                self.close_connection = True
                if self._client_gone(HANG_LIMIT):
                    raise _Disconnected
                return
            if reply.delay and sent and self._client_gone(reply.delay):
                raise _Disconnected
            self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            record.events_sent += 1
        self._chunk(b"")  # zero-length chunk: end of body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeAnthropic

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away is part of the tests

    def process_request(self, request: Any, client_address: Any) -> None:
        self.fake._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.fake._connections.discard(request)
        super().shutdown_request(request)


class FakeAnthropic:
    """The server; use as a context manager (or ``start()`` / ``stop()``)."""

    def __init__(self, *, strict: bool = True) -> None:
        self.strict = strict
        self.requests: list[RecordedRequest] = []
        self.closing = threading.Event()
        self._replies: deque[ScriptItem] = deque()
        self._lock = threading.Lock()
        self._connections: set[Any] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the fake server is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: ScriptItem) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def _next_reply(self) -> ScriptItem | None:
        with self._lock:
            return self._replies.popleft() if self._replies else None

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(record)

    @property
    def bodies(self) -> list[Any]:
        return [record.body for record in self.requests]

    def start(self) -> FakeAnthropic:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for connection in list(self._connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_fake_anthropic(*, strict: bool = True) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(strict=strict) as fake:
        yield fake


_ids = itertools.count(1)


def tool_id() -> str:
    """A fresh tool_use id in the API's format."""
    return f"toolu_fake{next(_ids):04d}"
