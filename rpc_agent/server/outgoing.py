"""Messages the server starts: notifications, and requests to the client whose answers come
back on the same input as the client's own requests."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
import orjson
from pydantic import BaseModel

from rpc_agent.protocol.jsonrpc import ErrorReply, Outgoing
from rpc_agent.quoting import quote
from rpc_agent.server.errors import INTERNAL_ERROR, INVALID_REQUEST, ConnectionClosedError, RpcError
from rpc_agent.server.ids import ID_TYPES
from rpc_agent.server.replies import LineSink, error_response

logger = logging.getLogger(__name__)

_NL = orjson.OPT_APPEND_NEWLINE

RequestParams = Mapping[str, Any] | Sequence[Any] | BaseModel
OnSent = Callable[[int], object]
"""Called with the id of a request once it is written (for a later ``$/cancelRequest``)."""


@dataclass(slots=True)
class _Waiter:
    event: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: BaseException | None = None


class ClientRequests:
    """The server's side of server-to-client calls: ids, waiting callers, and the answers."""

    def __init__(self, writer: LineSink) -> None:
        self._writer = writer
        self._pending: dict[int, _Waiter] = {}
        self._next_request_id = 0
        self._input_closed = False

    def notify(self, method: str, params: Mapping[str, Any] | BaseModel | None = None) -> None:
        """Send a notification (a message with no id); raises TypeError if params cannot be encoded."""
        message: Outgoing = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = _params_to_json(params)
        self._writer.write_line(orjson.dumps(message, option=_NL))

    async def request(
        self, method: str, params: RequestParams | None = None, *, on_sent: OnSent | None = None
    ) -> Any:
        """Send a request to the client and return its result (raises RpcError on an error answer).

        Raises :class:`ConnectionClosedError` when the client's input has ended before it answered.
        """
        if self._input_closed:
            raise ConnectionClosedError("the client closed its input; it cannot answer")
        self._next_request_id += 1
        request_id = self._next_request_id
        message: Outgoing = {"jsonrpc": "2.0", "id": request_id, "method": method}
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

    def input_closed(self) -> None:
        """The client's input ended: it can answer nothing more, so every waiting call fails."""
        self._input_closed = True
        error = ConnectionClosedError("the client closed its input before answering")
        for waiter in self._pending.values():
            if not waiter.event.is_set():
                waiter.error = error
                waiter.event.set()

    def accept_answer(self, message: Mapping[str, Any]) -> ErrorReply | None:
        """Hand a client's response (a message without a method) to the call waiting for it.

        Returns the error to answer when the message is not a usable response; an answer to no
        waiting call is logged and dropped.
        """
        request_id = message.get("id")
        usable_id = request_id if type(request_id) in ID_TYPES else None
        if "id" not in message or ("result" not in message and "error" not in message):
            return error_response(usable_id, RpcError(INVALID_REQUEST, "Invalid request: no method"))
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


def _params_to_json(params: RequestParams) -> Any:
    if isinstance(params, BaseModel):
        return params.model_dump(mode="json", by_alias=True, exclude_none=False)
    return params
