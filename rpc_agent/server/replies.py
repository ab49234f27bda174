"""Outcomes to response objects and their bytes: success and error shapes, results in wire
shape, and big results written in pieces.

The response objects are built here, as the two dict shapes the spec gives, and not with
jsonrpcserver: importing it (its ``__init__`` loads jsonschema, http.server and oslash) costs
more start-up than the server's whole budget from spawn to the ``initialize`` response. The
README gives the measurements.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

import anyio
import anyio.lowlevel
import orjson

from rpc_agent.methods.raw_json import big_raw, raw_pieces
from rpc_agent.protocol.jsonrpc import ErrorObject, ErrorReply, Reply, SuccessReply
from rpc_agent.quoting import bound, quote, shorten
from rpc_agent.server.errors import CANCELLED, INTERNAL_ERROR, RpcError

logger = logging.getLogger(__name__)

_ERROR_TEXT_LIMIT = 4096
"""Characters of any one string in an error answer: a net under the sites that quote input."""
_SLICE_ITEMS = 512
"""Items of a result's list encoded at a time when the list is longer: between two slices the
loop answers other requests, so a 100,000-entry ``get_entries`` never holds up ``get_state``."""


class LineSink(Protocol):
    """Where the router puts its output: one complete JSON line (ending in LF) per call.

    A sink may also offer ``write_parts(parts)``: one line given as consecutive pieces (the
    last ending in LF), so that a huge response is never joined into one buffer; the router
    joins the pieces itself for a sink without it.
    """

    def write_line(self, line: bytes) -> None: ...


def _joined(payload: Any) -> Any:
    """The payload with its big RawJson values whole again and out of the side table: for a
    response encoded at once (a batch item), which orjson writes from the fragments alone."""
    if not big_raw or type(payload) is not dict:
        return payload
    joined = dict(payload)
    for key, value in payload.items():
        pieces = raw_pieces(value)
        if pieces is not None:
            del big_raw[id(value)]
            joined[key] = value if len(pieces) == 1 else orjson.Fragment(b"".join(pieces))
    return joined


def success_response(request_id: Any, payload: Any) -> SuccessReply:
    return {"jsonrpc": "2.0", "result": _joined(payload), "id": request_id}


def error_response(request_id: Any, error: RpcError) -> ErrorReply:
    body: ErrorObject = {"code": error.code, "message": shorten(error.message, _ERROR_TEXT_LIMIT)}
    if error.data is not None:
        body["data"] = bound(error.data, _ERROR_TEXT_LIMIT)
    return {"jsonrpc": "2.0", "error": body, "id": request_id}


def encode_reply(reply: Reply) -> bytes:
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
    return orjson.dumps(error_response(reply.get("id"), fallback))


async def encode_in_slices(request_id: Any, payload: Any) -> list[bytes] | None:
    """A success response as pieces of one line, its long lists encoded a slice at a time with
    a checkpoint between slices; None when the result has no long list (or cannot be encoded
    this way: the caller's one-shot path then reports the problem).

    Encoding a big result at once (tens of megabytes of stored message bytes) holds the loop,
    and the GIL, for a tenth of a second or more; in slices the reading loop answers the
    requests that arrive meanwhile, and their answers go out before this one.
    """
    if type(payload) is not dict or not any(
        (type(value) is list and len(value) > _SLICE_ITEMS) or id(value) in big_raw
        for value in payload.values()
    ):
        return None
    try:
        parts = [b'{"jsonrpc":"2.0","result":{']
        for index, (key, value) in enumerate(payload.items()):
            head = orjson.dumps(key) + b":"
            parts.append(b"," + head if index else head)
            raw = raw_pieces(value)
            if raw is not None:
                parts.extend(raw)
                continue
            if type(value) is not list or len(value) <= _SLICE_ITEMS:
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
    for value in payload.values():  # sent: let go of the pieces
        if raw_pieces(value) is not None:
            del big_raw[id(value)]
    return parts


def cancelled_error(method: str, reason: str) -> RpcError:
    return RpcError(CANCELLED, f"{method} was cancelled: {reason or 'cancelled'}")


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
