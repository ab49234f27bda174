"""The HTTP server: a real socket on 127.0.0.1 that the real SDK talks to, one thread a request.

A real server (chunked transfer, connections cut or left hanging) is what lets the tests see how
the SDK and the provider behave when a stream breaks, which a mocked transport would not show.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_anthropic.script import HttpError, JsonDict, Reply, ScriptItem
from fake_anthropic.sse import message_body, sse_events
from fake_anthropic.validate import validate_request

HANG_LIMIT = 60.0
"""Seconds a hanging reply waits for the client to go away before giving up."""


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
