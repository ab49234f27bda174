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
inline handler may return a ``Deferred`` (``server/deferred.py``): made at once, answered once
its wait (an fsync) is over, by one task that serves all such answers in order.

The response objects are built here, as the two dict shapes the spec gives, and not with
jsonrpcserver: importing it (its ``__init__`` loads jsonschema, http.server and oslash) costs
more start-up than the server's whole budget from spawn to the ``initialize`` response, and its
front end (``dispatch``) answers a batch with one bad item by a single error, does not check
param types and cannot route client responses. The README gives the measurements.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections import deque
from collections.abc import AsyncIterable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import anyio
import anyio.abc
import anyio.lowlevel
import orjson
from pydantic import BaseModel, ValidationError

from rpc_agent.quoting import bound, quote, shorten

from .deferred import Deferred, DeferredAnswer
from .errors import (
    CANCELLED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ConnectionClosedError,
    RpcError,
)

logger = logging.getLogger(__name__)

JsonObject = dict[str, Any]
ErrorMapper = Callable[[BaseException], RpcError | None]

_NL = orjson.OPT_APPEND_NEWLINE
_ID_TYPES = frozenset({str, int, float, type(None), orjson.Fragment})  # bool is its own type: not an id
_ID_NUMBER = re.compile(rb'"id"\s*:\s*(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)')
"""An ``"id"`` member with a number value, in raw JSON (the number's exact text in group 1)."""
_ERROR_TEXT_LIMIT = 4096
"""Characters of any one string in an error answer: a net under the sites that quote input."""
_SLICE_ITEMS = 512
"""Items of a result's list encoded at a time when the list is longer: between two slices the
loop answers other requests, so a 100,000-entry ``get_entries`` never holds up ``get_state``."""


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


class LineSink(Protocol):
    """Where the router puts its output: one complete JSON line (ending in LF) per call.

    A sink may also offer ``write_parts(parts)``: one line given as consecutive pieces (the
    last ending in LF), so that a huge response is never joined into one buffer; the router
    joins the pieces itself for a sink without it.
    """

    def write_line(self, line: bytes) -> None: ...


# --- the method table -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One method: its handler and the models a protocol generator publishes for it."""

    name: str
    handler: Callable[[Any], Any]
    params: type[BaseModel] | None
    result: type[BaseModel] | None
    inline: bool
    description: str
    positional: tuple[str, ...] = field(default=(), repr=False)
    """Keys that positional params (a JSON array) map to, in order: the params model's fields."""

    def parse_params(self, raw: Any) -> BaseModel | None:
        """Validated params (``raw`` is the request's params member, or absent); RpcError(-32602)."""
        model = self.params
        if model is None:
            if raw is _MISSING or raw == {} or raw == []:
                return None
            if isinstance(raw, dict | list):
                raise RpcError(INVALID_PARAMS, f"Invalid params: {self.name} takes no params")
            raise RpcError(INVALID_PARAMS, _params_type_message(raw))
        if raw is _MISSING:
            raw = {}
        elif type(raw) is list:
            if len(raw) > len(self.positional):
                raise RpcError(
                    INVALID_PARAMS,
                    f"Invalid params: {self.name} takes at most {len(self.positional)} positional params "
                    f"({', '.join(self.positional)}), got {len(raw)}",
                )
            raw = dict(zip(self.positional, raw, strict=False))
        elif type(raw) is not dict:
            raise RpcError(INVALID_PARAMS, _params_type_message(raw))
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            count = exc.error_count()
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params for {self.name}: {count} validation error{'s' if count != 1 else ''}",
                bound(exc.errors(include_url=False)),
            ) from exc

    async def invoke(self, raw: Any) -> Any:
        """Validate ``raw`` params, run the handler, and return the result in wire shape: the
        same path a request takes, for fronts that reach the table another way (ACP's
        extension methods). Raises RpcError for bad params; the handler's own errors pass."""
        value = self.handler(self.parse_params(raw))
        if inspect.isawaitable(value):
            value = await value
        return _dump_result(self.name, value)


_JSON_KINDS = {str: "a string", int: "a number", float: "a number", bool: "a boolean", type(None): "null"}


def _params_type_message(raw: Any) -> str:
    kind = _JSON_KINDS.get(type(raw), type(raw).__name__)
    return f"Invalid params: params must be an object or an array, not {kind}"


class MethodRegistry:
    """The methods a router serves, in registration order.

    A handler takes the validated params model (``None`` when the method declares
    ``params=None``; an absent ``params`` member is validated as ``{}``) and returns a pydantic
    model (or ``None``, answered as ``{}``). Inline handlers are plain functions that must not
    block or wait; the others are async and each call runs in its own task.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, MethodSpec] = {}

    def add(
        self,
        name: str,
        handler: Callable[[Any], Any],
        *,
        params: type[BaseModel] | None,
        result: type[BaseModel] | None,
        inline: bool = False,
        description: str = "",
    ) -> MethodSpec:
        if name in self._by_name:
            raise ValueError(f"method {name!r} is already registered")
        if inline and inspect.iscoroutinefunction(handler):
            raise TypeError(f"inline method {name!r} needs a plain function, got a coroutine function")
        positional: tuple[str, ...] = ()
        if params is not None:
            positional = tuple(info.alias or key for key, info in params.model_fields.items())
        spec = MethodSpec(name, handler, params, result, inline, description, positional)
        self._by_name[name] = spec
        return spec

    @property
    def methods(self) -> list[MethodSpec]:
        """Every method, in registration order (what the protocol generator documents)."""
        return list(self._by_name.values())

    def get(self, name: str) -> MethodSpec | None:
        return self._by_name.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self._by_name)


# --- outcomes -> response objects ------------------------------------------------------------


_RAW_PIECE_BYTES = 1 << 20
"""Raw JSON this long is handed to the writer as it is, not copied into the response."""
_big_raw: dict[int, tuple[orjson.Fragment, bytes]] = {}
"""The bytes behind the big RawJson values not yet sent, by the fragment's id (a few at most)."""
_BIG_RAW_KEPT = 2


def RawJson(data: bytes | str) -> orjson.Fragment:
    """JSON that is already encoded, anywhere in a result: written into the response as it is.

    A handler that holds stored JSON (a session's message lines) returns it wrapped in RawJson
    instead of parsing it only to encode it again; the bytes must be one valid JSON value.

    An ``orjson.Fragment`` does not give its bytes back, and copying 75 MB into a response
    holds the GIL for a tenth of a second: for a big one the router keeps the bytes aside
    (the same object, not a copy) and writes them between the response's other pieces.
    """
    fragment = orjson.Fragment(data)
    if type(data) is bytes and len(data) > _RAW_PIECE_BYTES:
        while len(_big_raw) >= _BIG_RAW_KEPT:  # never sent (a batch item, a cancelled request)
            _big_raw.pop(next(iter(_big_raw)))
        _big_raw[id(fragment)] = (fragment, data)
    return fragment


def _raw_bytes(value: Any) -> bytes | None:
    """The bytes of a big RawJson value, taken out of the side table; None for anything else."""
    if type(value) is not orjson.Fragment:
        return None
    kept = _big_raw.get(id(value))
    if kept is None or kept[0] is not value:
        return None
    del _big_raw[id(value)]
    return kept[1]


def _success_response(request_id: Any, payload: Any) -> JsonObject:
    return {"jsonrpc": "2.0", "result": payload, "id": request_id}


def _error_response(request_id: Any, error: RpcError) -> JsonObject:
    body: JsonObject = {"code": error.code, "message": shorten(error.message, _ERROR_TEXT_LIMIT)}
    if error.data is not None:
        body["data"] = bound(error.data, _ERROR_TEXT_LIMIT)
    return {"jsonrpc": "2.0", "error": body, "id": request_id}


def _exact_ids(line: bytes, message: Any) -> None:
    """Give float ids back their exact JSON text, in place.

    orjson reads integers wider than 64 bits and every fraction as a float, which would come
    back as ``1.2345678901234568e+29`` or ``1.1`` for ``1.10``. JSON-RPC asks for the id to be
    echoed as sent, so such ids are read again from the line with the standard parser, which
    hands over every number's text: the id becomes an ``orjson.Fragment`` written back verbatim.
    Only lines with a float id pay for that, and a single message whose line holds one ``"id"``
    member only for a search of its bytes (a second parse of a huge line would hold up the loop).
    """
    items = message if type(message) is list else [message]
    if not any(type(item) is dict and type(item.get("id")) is float for item in items):
        return
    if type(message) is dict:
        found = _ID_NUMBER.findall(line)
        if len(found) == 1 and float(found[0]) == message["id"]:
            message["id"] = orjson.Fragment(found[0])
            return
    try:
        exact = json.loads(line, parse_float=orjson.Fragment, parse_int=orjson.Fragment)
    except (ValueError, RecursionError):
        return
    exact_items = exact if type(exact) is list else [exact]
    if len(exact_items) != len(items):
        return
    for item, exact_item in zip(items, exact_items, strict=True):
        if type(item) is dict and type(item.get("id")) is float and type(exact_item) is dict:
            item["id"] = exact_item.get("id")


def _dump_result(method: str, value: Any) -> Any:
    if isinstance(value, BaseModel):
        # warnings=False: results built with ``protocol.base.trusted`` hold the store's plain
        # dicts where the model declares submodels; they are already in wire shape.
        return value.model_dump(mode="json", by_alias=True, exclude_none=False, warnings=False)
    if value is None:
        return {}
    if isinstance(value, dict | orjson.Fragment):
        # A hot handler (get_state) may return its result already in wire shape; the
        # registered result model still documents it.
        return value
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()  # no "never awaited" warning on top of the real error
        raise TypeError(f"inline handler of {method} returned an awaitable; register it without inline=True")
    raise TypeError(f"handler of {method} returned {type(value).__name__}, not a pydantic model or a dict")


def _encode(reply: JsonObject) -> bytes:
    """One response object as JSON (no newline); never raises."""
    try:
        return orjson.dumps(reply)
    except TypeError as exc:  # orjson.JSONEncodeError
        problem = exc
    if "error" in reply:
        try:  # error data may hold exceptions and the like (pydantic's ctx): send their str
            return orjson.dumps(reply, default=str)
        except TypeError as exc:
            problem = exc
    logger.error("cannot encode the response to id %s: %s", quote(reply.get("id")), problem)
    fallback = RpcError(
        INTERNAL_ERROR, f"Internal error: the response could not be encoded as JSON: {problem}"
    )
    return orjson.dumps(_error_response(reply.get("id"), fallback))


async def _encode_in_slices(request_id: Any, payload: Any) -> list[bytes] | None:
    """A success response as pieces of one line, its long lists encoded a slice at a time with
    a checkpoint between slices; None when the result has no long list (or cannot be encoded
    this way: the caller's one-shot path then reports the problem).

    Encoding a big result at once (tens of megabytes of stored message bytes) holds the loop,
    and the GIL, for a tenth of a second or more; in slices the reading loop answers the
    requests that arrive meanwhile, and their answers go out before this one.
    """
    if type(payload) is not dict or not any(
        (type(value) is list and len(value) > _SLICE_ITEMS) or id(value) in _big_raw
        for value in payload.values()
    ):
        return None
    try:
        parts = [b'{"jsonrpc":"2.0","result":{']
        for index, (key, value) in enumerate(payload.items()):
            head = orjson.dumps(key) + b":"
            parts.append(b"," + head if index else head)
            raw = _raw_bytes(value)
            if raw is not None:
                parts.append(raw)
            elif type(value) is not list or len(value) <= _SLICE_ITEMS:
                parts.append(orjson.dumps(value))
                continue
            for start in range(0, len(value), _SLICE_ITEMS):
                await anyio.lowlevel.checkpoint()
                piece = orjson.dumps(value[start : start + _SLICE_ITEMS])
                opening = b"[" if start == 0 else b","
                closing = b"]" if start + _SLICE_ITEMS >= len(value) else b""
                parts.append(opening + piece[1:-1] + closing)
        parts.append(b'},"id":' + orjson.dumps(request_id) + b"}\n")
    except TypeError:  # orjson.JSONEncodeError
        return None
    return parts


# --- the router ------------------------------------------------------------------------------


@dataclass(slots=True)
class _InFlight:
    request_id: Any
    method: str
    scope: anyio.CancelScope
    reason: str = ""


@dataclass(slots=True)
class _Waiter:
    event: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: BaseException | None = None


class _Batch:
    """Collects the answers of one batch and writes them as one array line once all are in."""

    __slots__ = ("collecting", "outstanding", "replies", "router")

    def __init__(self, router: Router, size: int) -> None:
        self.router = router
        self.replies: list[JsonObject | None] = [None] * size
        self.outstanding = 0
        self.collecting = True

    def deliver_to(self, index: int) -> Callable[[JsonObject], None]:
        self.outstanding += 1

        def deliver(reply: JsonObject) -> None:
            self.replies[index] = reply
            self.outstanding -= 1
            self.maybe_finish()

        return deliver

    def maybe_finish(self) -> None:
        if self.collecting or self.outstanding:
            return
        replies = [r for r in self.replies if r is not None]
        if replies:
            self.router._write_raw(b"[" + b",".join(map(_encode, replies)) + b"]\n")


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
    ) -> None:
        self.registry = registry
        self._methods = registry._by_name
        self._writer = writer
        self._error_mapper = error_mapper
        self._task_group: anyio.abc.TaskGroup | None = None
        self._in_flight: dict[int, _InFlight] = {}
        self._tokens = 0
        self._pending: dict[int, _Waiter] = {}
        self._next_request_id = 0
        self._input_closed = False
        self._idle: anyio.Event | None = None
        """Set when the last running request ends (made by ``wait_idle`` when it must wait)."""
        self._deferred: deque[DeferredAnswer] = deque()
        """Answers waiting for their ``Deferred`` (in arrival order), and whether a task waits."""
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
                    self._input_closed = True
                    self._fail_pending(ConnectionClosedError("the client closed its input before answering"))
                if on_eof is not None:
                    on_eof()
        finally:
            self._task_group = None

    @property
    def in_flight(self) -> list[tuple[Any, str]]:
        """(request id, method) of every request running in its own task (notifications: id None)."""
        return [(entry.request_id, entry.method) for entry in self._in_flight.values()]

    async def wait_idle(self) -> None:
        """Return once no request is running (at once when none is)."""
        while self._in_flight:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    def cancel(self, request_id: Any, reason: str = "cancelled by the client") -> bool:
        """Cancel the running request(s) with this id; True if there was one."""
        found = False
        for entry in list(self._in_flight.values()):
            if entry.request_id == request_id and type(entry.request_id) is type(request_id):
                entry.reason = reason
                entry.scope.cancel()
                found = True
        return found

    def cancel_all(self, reason: str = "the server is shutting down") -> int:
        """Cancel every running request (each is answered with ``CANCELLED``); returns how many."""
        entries = list(self._in_flight.values())
        for entry in entries:
            entry.reason = reason
            entry.scope.cancel()
        return len(entries)

    # --- server to client ----------------------------------------------------------------------

    def notify(self, method: str, params: Mapping[str, Any] | BaseModel | None = None) -> None:
        """Send a notification (a message with no id); raises TypeError if params cannot be encoded."""
        message: JsonObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = _params_to_json(params)
        self._writer.write_line(orjson.dumps(message, option=_NL))

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | Sequence[Any] | BaseModel | None = None,
        *,
        on_sent: Callable[[int], object] | None = None,
    ) -> Any:
        """Send a request to the client and return its result (raises RpcError on an error answer).

        Raises :class:`ConnectionClosedError` when the client's input has ended before it answered.
        """
        if self._input_closed:
            raise ConnectionClosedError("the client closed its input; it cannot answer")
        self._next_request_id += 1
        request_id = self._next_request_id
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = _params_to_json(params)
        line = orjson.dumps(message, option=_NL)
        waiter = _Waiter()
        self._pending[request_id] = waiter
        try:
            self._writer.write_line(line)
            if on_sent is not None:  # the id, for a later $/cancelRequest
                on_sent(request_id)
            await waiter.event.wait()
        finally:
            self._pending.pop(request_id, None)
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    def _fail_pending(self, error: BaseException) -> None:
        for waiter in self._pending.values():
            if not waiter.event.is_set():
                waiter.error = error
                waiter.event.set()

    # --- classification ------------------------------------------------------------------------

    def _handle_line(self, line: bytes) -> None:
        if not line:
            return
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if line.strip():
                self._write(_error_response(None, RpcError(PARSE_ERROR, f"Parse error: {exc}")))
            return
        _exact_ids(line, message)
        try:
            if type(message) is dict:
                reply = self._handle_message(message, None, 0)
                if reply is not None:
                    self._write(reply)
            elif type(message) is list:
                self._handle_batch(message)
            else:
                self._write(
                    _error_response(
                        None, RpcError(INVALID_REQUEST, "Invalid request: expected an object or an array")
                    )
                )
        except Exception as exc:  # a bug in the router itself: answer if we can, keep serving
            logger.exception("unexpected failure handling a message")
            request_id = message.get("id") if type(message) is dict else None
            if type(request_id) not in _ID_TYPES:
                request_id = None
            self._write(
                _error_response(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {_describe(exc)}"))
            )

    def _handle_batch(self, items: list[Any]) -> None:
        if not items:
            self._write(_error_response(None, RpcError(INVALID_REQUEST, "Invalid request: empty batch")))
            return
        batch = _Batch(self, len(items))
        for index, item in enumerate(items):
            if type(item) is dict:
                batch.replies[index] = self._handle_message(item, batch, index)
            else:
                batch.replies[index] = _error_response(
                    None, RpcError(INVALID_REQUEST, "Invalid request: a batch item must be an object")
                )
        batch.collecting = False
        batch.maybe_finish()

    def _handle_message(self, message: JsonObject, batch: _Batch | None, index: int) -> JsonObject | None:
        """The immediate answer to one message, or None (notification, client response, or a task
        that answers later through the batch or the writer)."""
        if "method" not in message:
            return self._handle_client_response(message)
        if "id" in message:
            request_id = message["id"]
            if type(request_id) not in _ID_TYPES:
                return _error_response(
                    None, RpcError(INVALID_REQUEST, "Invalid request: id must be a string, a number or null")
                )
            is_request = True
        else:
            request_id = None
            is_request = False
        if message.get("jsonrpc") != "2.0":
            return _error_response(
                request_id, RpcError(INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"')
            )
        name = message["method"]
        if type(name) is not str:
            return _error_response(
                request_id, RpcError(INVALID_REQUEST, "Invalid request: method must be a string")
            )
        spec = self._methods.get(name)
        if spec is None:
            if not is_request:
                return None
            return _error_response(
                request_id, RpcError(METHOD_NOT_FOUND, f"Method not found: {shorten(name)}")
            )
        try:
            params = spec.parse_params(message.get("params", _MISSING))
        except RpcError as invalid:
            return _error_response(request_id, invalid) if is_request else None

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
                payload = _dump_result(name, outcome)
            except Exception as exc:
                failure = self._map_exception(exc, name)
                return _error_response(request_id, failure) if is_request else None
            return _success_response(request_id, payload) if is_request else None

        deliver: Callable[[JsonObject], None] | None = None
        if is_request:
            deliver = batch.deliver_to(index) if batch is not None else self._write
        self._spawn(spec, params, request_id, deliver)
        return None

    def _handle_client_response(self, message: JsonObject) -> JsonObject | None:
        request_id = message.get("id")
        usable_id = request_id if type(request_id) in _ID_TYPES else None
        if "id" not in message or ("result" not in message and "error" not in message):
            return _error_response(usable_id, RpcError(INVALID_REQUEST, "Invalid request: no method"))
        waiter = self._pending.get(cast(int, usable_id)) if usable_id is not None else None
        if waiter is None or waiter.event.is_set():
            logger.warning("ignoring a response to an unknown request id %s", quote(request_id))
            return None
        if "error" in message:
            error = message["error"]
            if type(error) is dict and type(error.get("code")) is int and type(error.get("message")) is str:
                waiter.error = RpcError(error["code"], error["message"], error.get("data"))
            else:
                waiter.error = RpcError(INTERNAL_ERROR, "the client answered with a malformed error", error)
        else:
            waiter.result = message["result"]
        waiter.event.set()
        return None

    # --- running handlers ----------------------------------------------------------------------

    def _spawn(
        self,
        spec: MethodSpec,
        params: BaseModel | None,
        request_id: Any,
        deliver: Callable[[JsonObject], None] | None,
    ) -> None:
        if self._task_group is None:
            raise RuntimeError("async methods need Router.serve() to be running")
        self._tokens += 1
        token = self._tokens
        entry = _InFlight(request_id if deliver is not None else None, spec.name, anyio.CancelScope())
        self._in_flight[token] = entry
        self._task_group.start_soon(
            self._run, spec, params, request_id, deliver, token, entry, name=spec.name
        )

    async def _run(
        self,
        spec: MethodSpec,
        params: BaseModel | None,
        request_id: Any,
        deliver: Callable[[JsonObject], None] | None,
        token: int,
        entry: _InFlight,
    ) -> None:
        reply: JsonObject | None = None
        parts: list[bytes] | None = None
        try:
            with entry.scope:
                outcome = spec.handler(params)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
                payload = _dump_result(spec.name, outcome)
                if deliver == self._write:  # a batch item is answered in the batch's one line
                    parts = await _encode_in_slices(request_id, payload)
                if parts is None:
                    reply = _success_response(request_id, payload)
        except anyio.get_cancelled_exc_class():
            # Cancelled from outside (serve() itself is being cancelled): answer, then go.
            if deliver is not None:
                deliver(
                    _error_response(request_id, _cancelled(spec.name, entry.reason or "the server stopped"))
                )
            raise
        except Exception as exc:
            error = self._map_exception(exc, spec.name)
            if deliver is not None:
                reply = _error_response(request_id, error)
        finally:
            self._in_flight.pop(token, None)
            if not self._in_flight and self._idle is not None:
                self._idle.set()
                self._idle = None
        if deliver is None:
            return
        if parts is not None and reply is None:
            self._write_parts(parts)
            return
        if reply is None:  # our own scope was cancelled: cancel() / cancel_all()
            reply = _error_response(request_id, _cancelled(spec.name, entry.reason))
        deliver(reply)

    def _defer(self, answer: DeferredAnswer) -> None:
        assert self._task_group is not None
        self._deferred.append(answer)
        if self._answering_deferred:
            return
        self._answering_deferred = True
        self._tokens += 1
        token = self._tokens
        entry = _InFlight(None, "(answers waiting for the disk)", anyio.CancelScope())
        self._in_flight[token] = entry
        self._task_group.start_soon(self._answer_deferred, token, entry)

    async def _answer_deferred(self, token: int, entry: _InFlight) -> None:
        """Answer the deferred requests in order, each once its ``ready()`` returned; those still
        waiting when this task is cancelled get ``CANCELLED`` (their changes stay made)."""
        queue = self._deferred
        try:
            with entry.scope:
                while queue:
                    deferred, method, request_id, deliver = queue[0]
                    try:
                        await deferred.ready()
                        reply = _success_response(request_id, _dump_result(method, deferred.result))
                    except Exception as exc:
                        reply = _error_response(request_id, self._map_exception(exc, method))
                    queue.popleft()
                    if deliver is not None:
                        deliver(reply)
        finally:
            self._answering_deferred = False
            while queue:
                _, method, request_id, deliver = queue.popleft()
                if deliver is not None:
                    deliver(
                        _error_response(request_id, _cancelled(method, entry.reason or "the server stopped"))
                    )
            self._in_flight.pop(token, None)
            if not self._in_flight and self._idle is not None:
                self._idle.set()
                self._idle = None

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
        return RpcError(INTERNAL_ERROR, f"Internal error in {method}: {_describe(exc)}")

    # --- output --------------------------------------------------------------------------------

    def _write(self, reply: JsonObject) -> None:
        try:
            line = orjson.dumps(reply, option=_NL)
        except TypeError:
            line = _encode(reply) + b"\n"
        self._writer.write_line(line)

    def _write_raw(self, line: bytes) -> None:
        self._writer.write_line(line)

    def _write_parts(self, parts: list[bytes]) -> None:
        write_parts = getattr(self._writer, "write_parts", None)
        if write_parts is not None:
            write_parts(parts)
        else:
            self._writer.write_line(b"".join(parts))


def _cancelled(method: str, reason: str) -> RpcError:
    return RpcError(CANCELLED, f"{method} was cancelled: {reason or 'cancelled'}")


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _params_to_json(params: Mapping[str, Any] | Sequence[Any] | BaseModel) -> Any:
    if isinstance(params, BaseModel):
        return params.model_dump(mode="json", by_alias=True, exclude_none=False)
    return params
