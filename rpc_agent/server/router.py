"""JSON-RPC 2.0 over lines: classify, validate, dispatch, answer.

The router sits between the transport (lines of bytes) and the method handlers (typed pydantic
params in, pydantic result out) and owns everything the spec says about messages:

* a line that is not JSON gets ``-32700`` with id null, and the server keeps going;
* an object is a request (id), a notification (no id: never answered, even on error), a
  response to one of our own server-to-client requests (id + result/error, no method), or an
  invalid request (``-32600``, with its id when that id was usable);
* a batch is answered item by item in one array line; notifications get no entry, an
  all-notification batch gets no line, an empty batch gets a single ``-32600``;
* every error answer to a request carries that request's id.

Methods marked ``inline`` are plain functions that never block: they run right in the reading
loop, so a pipelined burst of ``get_state`` costs no task switches. Every other request runs in
its own task, so a long ``prompt`` never holds up ``abort``, ``get_state`` or ``steer`` sent
after it, and can be cancelled (its client then gets a ``CANCELLED`` error, not silence). An
inline handler may return a ``Deferred`` (``methods/deferred.py``): made at once, answered once
its wait (an fsync) is over, by one task that serves all such answers in order.

jsonrpcserver's front end (``dispatch``) is not used: it answers a batch with one bad item by a
single error, does not check param types and cannot route client responses. The parts below
the router: ``registry`` (the method table and params), ``replies`` (response objects and their
bytes), ``ids`` (exact id echoing), ``batch``, ``inflight`` (running requests and cancel) and
``outgoing`` (server-to-client requests).
"""

from __future__ import annotations

import inspect
import logging
from collections import deque
from collections.abc import AsyncIterable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import orjson
from pydantic import BaseModel

from rpc_agent.io.background import Foreground
from rpc_agent.methods.deferred import Deferred, DeferredAnswer
from rpc_agent.methods.registry import MISSING, MethodRegistry, MethodSpec, dump_result
from rpc_agent.methods.request_id import CURRENT_REQUEST_ID
from rpc_agent.protocol.jsonrpc import Reply
from rpc_agent.quoting import shorten
from rpc_agent.server.batch import Batch
from rpc_agent.server.errors import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from rpc_agent.server.ids import ID_TYPES, restore_exact_ids
from rpc_agent.server.inflight import InFlight, InFlightRequests
from rpc_agent.server.outgoing import ClientRequests, OnSent, RequestParams
from rpc_agent.server.replies import (
    LineSink,
    cancelled_error,
    describe,
    encode_in_slices,
    encode_reply,
    error_response,
    success_response,
)

logger = logging.getLogger(__name__)

ErrorMapper = Callable[[BaseException], RpcError | None]

_NL = orjson.OPT_APPEND_NEWLINE


class Router:
    """Serves a :class:`MethodRegistry` over lines from a reader, answering through ``writer``.

    ``error_mapper`` turns exceptions raised by handlers into RpcErrors (domain errors to their
    codes); whatever it returns None for becomes ``-32603`` with the traceback on stderr.
    """

    def __init__(
        self,
        registry: MethodRegistry,
        writer: LineSink,
        error_mapper: ErrorMapper | None = None,
        foreground: Foreground | None = None,
    ) -> None:
        self.registry = registry
        self._methods = registry._by_name
        self._writer = writer
        self._error_mapper = error_mapper
        self._task_group: anyio.abc.TaskGroup | None = None
        self._in_flight = InFlightRequests(foreground)
        self._outgoing = ClientRequests(writer)
        self._deferred: deque[DeferredAnswer] = deque()
        """Answers waiting for their ``Deferred`` (in arrival order)."""
        self._answering_deferred = False

    # --- serving ------------------------------------------------------------------------------

    async def serve(
        self, reader: AsyncIterable[list[bytes]], *, on_eof: Callable[[], object] | None = None
    ) -> None:
        """Answer every line until the reader ends, then wait for the requests still running.

        At EOF, server-to-client requests still waiting for an answer fail with
        :class:`ConnectionClosedError` and ``on_eof`` is called (pass ``router.cancel_all`` or
        an abort to stop the work instead of finishing it). Cancelling ``serve`` cancels the
        running requests too (each gets a ``CANCELLED`` error); ``cancel_all`` cancels them
        without stopping.
        """
        if self._task_group is not None:
            raise RuntimeError("this router is already serving")
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                try:
                    async for lines in reader:
                        for line in lines:
                            self._handle_line(line)
                finally:
                    self._outgoing.input_closed()
                if on_eof is not None:
                    on_eof()
        finally:
            self._task_group = None

    @property
    def in_flight(self) -> list[tuple[Any, str]]:
        """(request id, method) of every request running in its own task (notifications: id None)."""
        return self._in_flight.listing()

    async def wait_idle(self) -> None:
        """Return once no request is running (at once when none is)."""
        await self._in_flight.wait_idle()

    def cancel(self, request_id: Any, reason: str = "cancelled by the client") -> bool:
        """Cancel the running request(s) with this id; True if there was one."""
        return self._in_flight.cancel(request_id, reason)

    def cancel_all(self, reason: str = "the server is shutting down") -> int:
        """Cancel every running request (each is answered with ``CANCELLED``); returns how many."""
        return self._in_flight.cancel_all(reason)

    # --- server to client ----------------------------------------------------------------------

    def notify(self, method: str, params: Mapping[str, Any] | BaseModel | None = None) -> None:
        """Send a notification (see :meth:`ClientRequests.notify`)."""
        self._outgoing.notify(method, params)

    async def request(
        self, method: str, params: RequestParams | None = None, *, on_sent: OnSent | None = None
    ) -> Any:
        """Ask the client and wait for its answer (see :meth:`ClientRequests.request`)."""
        return await self._outgoing.request(method, params, on_sent=on_sent)

    # --- classification ------------------------------------------------------------------------

    def _handle_line(self, line: bytes) -> None:
        if not line:
            return
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if line.strip():
                self._write(error_response(None, RpcError(PARSE_ERROR, f"Parse error: {exc}")))
            return
        restore_exact_ids(line, message)
        try:
            if type(message) is dict:
                reply = self._handle_message(message, None, 0)
                if reply is not None:
                    self._write(reply)
            elif type(message) is list:
                self._handle_batch(message)
            else:
                self._write(
                    error_response(
                        None, RpcError(INVALID_REQUEST, "Invalid request: expected an object or an array")
                    )
                )
        except Exception as exc:  # a bug in the router itself: answer if we can, keep serving
            logger.exception("unexpected failure handling a message")
            request_id = message.get("id") if type(message) is dict else None
            if type(request_id) not in ID_TYPES:
                request_id = None
            self._write(
                error_response(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {describe(exc)}"))
            )

    def _handle_batch(self, items: list[Any]) -> None:
        if not items:
            self._write(error_response(None, RpcError(INVALID_REQUEST, "Invalid request: empty batch")))
            return
        batch = Batch(self._writer.write_line, len(items))
        for index, item in enumerate(items):
            if type(item) is dict:
                batch.replies[index] = self._handle_message(item, batch, index)
            else:
                batch.replies[index] = error_response(
                    None, RpcError(INVALID_REQUEST, "Invalid request: a batch item must be an object")
                )
        batch.collecting = False
        batch.maybe_finish()

    def _handle_message(self, message: Mapping[str, Any], batch: Batch | None, index: int) -> Reply | None:
        """The immediate answer to one message, or None (notification, client response, or a task
        that answers later through the batch or the writer)."""
        if "method" not in message:
            return self._outgoing.accept_answer(message)
        if "id" in message:
            request_id = message["id"]
            if type(request_id) not in ID_TYPES:
                return error_response(
                    None, RpcError(INVALID_REQUEST, "Invalid request: id must be a string, a number or null")
                )
            is_request = True
        else:
            request_id = None
            is_request = False
        if message.get("jsonrpc") != "2.0":
            return error_response(
                request_id, RpcError(INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"')
            )
        name = message["method"]
        if type(name) is not str:
            return error_response(
                request_id, RpcError(INVALID_REQUEST, "Invalid request: method must be a string")
            )
        spec = self._methods.get(name)
        if spec is None:
            if not is_request:
                return None
            return error_response(
                request_id, RpcError(METHOD_NOT_FOUND, f"Method not found: {shorten(name)}")
            )
        try:
            params = spec.parse_params(message.get("params", MISSING))
        except RpcError as invalid:
            return error_response(request_id, invalid) if is_request else None

        if spec.inline:
            try:
                outcome = spec.handler(params)
                if type(outcome) is Deferred:
                    if self._task_group is None:
                        raise RuntimeError("deferred answers need Router.serve() to be running")
                    to = (
                        (batch.deliver_to(index) if batch is not None else self._write)
                        if is_request
                        else None
                    )
                    self._defer((outcome, name, request_id, to))
                    return None
                payload = dump_result(name, outcome)
            except Exception as exc:
                failure = self._map_exception(exc, name)
                return error_response(request_id, failure) if is_request else None
            return success_response(request_id, payload) if is_request else None

        deliver: Callable[[Reply], None] | None = None
        if is_request:
            deliver = batch.deliver_to(index) if batch is not None else self._write
        self._spawn(spec, params, request_id, deliver)
        return None

    # --- running handlers ----------------------------------------------------------------------

    def _spawn(
        self,
        spec: MethodSpec,
        params: BaseModel | None,
        request_id: Any,
        deliver: Callable[[Reply], None] | None,
    ) -> None:
        if self._task_group is None:
            raise RuntimeError("async methods need Router.serve() to be running")
        if spec.accepted is not None:
            spec.accepted(params)
        token, entry = self._in_flight.start(request_id if deliver is not None else None, spec.name)
        self._task_group.start_soon(
            self._run, spec, params, request_id, deliver, token, entry, name=spec.name
        )

    async def _run(
        self,
        spec: MethodSpec,
        params: BaseModel | None,
        request_id: Any,
        deliver: Callable[[Reply], None] | None,
        token: int,
        entry: InFlight,
    ) -> None:
        reply: Reply | None = None
        parts: list[bytes] | None = None
        CURRENT_REQUEST_ID.set(request_id)  # this task's own context: no reset needed
        try:
            with entry.scope:
                outcome = spec.handler(params)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
                payload = dump_result(spec.name, outcome)
                if deliver == self._write:  # a batch item is answered in the batch's one line
                    parts = await encode_in_slices(request_id, payload)
                if parts is None:
                    reply = success_response(request_id, payload)
        except anyio.get_cancelled_exc_class():
            # Cancelled from outside (serve() itself is being cancelled): answer, then go.
            if deliver is not None:
                deliver(
                    error_response(
                        request_id, cancelled_error(spec.name, entry.reason or "the server stopped")
                    )
                )
            raise
        except Exception as exc:
            error = self._map_exception(exc, spec.name)
            if deliver is not None:
                reply = error_response(request_id, error)
        finally:
            self._in_flight.finish(token)
        if deliver is None:
            return
        if parts is not None and reply is None:
            self._write_parts(parts)
            return
        if reply is None:  # our own scope was cancelled: cancel() / cancel_all()
            reply = error_response(request_id, cancelled_error(spec.name, entry.reason))
        deliver(reply)

    def _defer(self, answer: DeferredAnswer) -> None:
        assert self._task_group is not None
        self._deferred.append(answer)
        if self._answering_deferred:
            return
        self._answering_deferred = True
        token, entry = self._in_flight.start(None, "(answers waiting for the disk)")
        self._task_group.start_soon(self._answer_deferred, token, entry)

    async def _answer_deferred(self, token: int, entry: InFlight) -> None:
        """Answer the deferred requests in order, each once its ``ready()`` returned; those still
        waiting when this task is cancelled get ``CANCELLED`` (their changes stay made)."""
        queue = self._deferred
        try:
            with entry.scope:
                while queue:
                    deferred, method, request_id, deliver = queue[0]
                    reply: Reply
                    try:
                        await deferred.ready()
                        reply = success_response(request_id, dump_result(method, deferred.result))
                    except Exception as exc:
                        reply = error_response(request_id, self._map_exception(exc, method))
                    queue.popleft()
                    if deliver is not None:
                        deliver(reply)
        finally:
            self._answering_deferred = False
            while queue:
                _, method, request_id, deliver = queue.popleft()
                if deliver is not None:
                    reason = entry.reason or "the server stopped"
                    deliver(error_response(request_id, cancelled_error(method, reason)))
            self._in_flight.finish(token)

    def _map_exception(self, exc: Exception, method: str) -> RpcError:
        if isinstance(exc, RpcError):
            return exc
        if self._error_mapper is not None:
            try:
                mapped = self._error_mapper(exc)
            except Exception:
                logger.exception("the error mapper failed on %r", exc)
                mapped = None
            if mapped is not None:
                return mapped
        logger.error("internal error in %s", method, exc_info=exc)
        return RpcError(INTERNAL_ERROR, f"Internal error in {method}: {describe(exc)}")

    # --- output --------------------------------------------------------------------------------

    def _write(self, reply: Reply) -> None:
        try:
            line = orjson.dumps(reply, option=_NL)
        except TypeError:
            line = encode_reply(reply) + b"\n"
        self._writer.write_line(line)

    def _write_parts(self, parts: list[bytes]) -> None:
        write_parts = getattr(self._writer, "write_parts", None)
        if write_parts is not None:
            write_parts(parts)
        else:
            self._writer.write_line(b"".join(parts))
